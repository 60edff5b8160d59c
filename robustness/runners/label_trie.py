"""The label trie: how the probability of each answer label is read from next-token
distributions, shared by the hf and vllm backends.

Choice scoring (``score_options``)
----------------------------------
A label's probability is the probability that the model's next tokens spell it, with or without
a leading space: both spellings are tokenised and their probabilities are **summed**. The two
spellings are different token sequences, hence disjoint events, and the normaliser reads " B" and
"B" as the same answer, so their sum is the probability of that answer; taking the max would
under-count a model that splits its mass between the two forms (common after "Answer:"), and
would make the result depend on how the prompt's last whitespace was tokenised.

Labels whose token sequences share a prefix are resolved exactly, with extra forward passes only
where needed. All spellings of all labels go into one token trie. A spelling stops at its
shortest prefix that belongs to its label alone (usually the first token: "A", " B", ...), and
takes that prefix's probability. When spellings share a first token (the space token before
digits, the UTF-8 lead byte of some Greek letters, "(" in "(A)"), the distribution after the
shared prefix is needed: the prompt is extended by that prefix and run once more, reading the
distributions after every prefix in the same pass (the first-token distribution is read from the
same pass too, so no pass is wasted). When one label is a prefix of another ("1" and "10" spelt
"1" "0"; "i" and "ii" in a tokenizer without "ii"), the shorter label gets P(prefix) times the
probability of *not* continuing along any longer label, so every label is a disjoint event and
"1" is not credited with the mass of "10". A continuation that is no label's counts as the end of
the label (nothing in a next-token distribution can tell "1" then end from "1" then "2").
Label sets without shared prefixes (A-D, a-d, most roman numerals and Greek letters in SmolLM2's
vocabulary) cost exactly one forward pass per prompt.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from robustness.core.errors import ModelError

__all__ = ["LabelPlan", "build_label_plan", "combine_plan"]


@dataclass(frozen=True)
class LabelPlan:
    """How to score one label set: extra prompt extensions to run and how to combine them.

    ``passes[p]`` is a token path appended to the prompt for forward pass ``p`` (``()`` for the
    plain prompt); ``reads[p]`` lists ``(depth, node, tokens)``: read the log-probabilities of
    ``tokens`` after ``node`` = ``passes[p][:depth]``. ``terminals`` are ``(label, path)`` whose
    full path probability goes to the label; ``exclusive`` are ``(label, node, children)``
    where the label gets P(node) times 1 - sum of P(child | node).
    """

    passes: tuple[tuple[int, ...], ...]
    reads: tuple[tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...], ...]
    terminals: tuple[tuple[int, tuple[int, ...]], ...]
    exclusive: tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...]
    n_labels: int


def build_label_plan(labels: Sequence[str], encode: Any) -> LabelPlan:
    """Build the trie plan for ``labels`` (already stripped and distinct).

    Parameters
    ----------
    labels : sequence of str
        The displayed labels, stripped and distinct.
    encode : callable
        ``encode(text)`` returns token ids without special tokens.

    Returns
    -------
    LabelPlan
        The forward passes to run and how to combine what they read (see the module docstring
        for the rules).
    """
    spellings: list[tuple[int, tuple[int, ...]]] = []
    for index, label in enumerate(labels):
        seen: set[tuple[int, ...]] = set()
        for text in (label, " " + label):
            ids = tuple(encode(text))
            if not ids:
                raise ModelError(f"label {label!r} tokenises to nothing.")
            if ids not in seen:
                seen.add(ids)
                spellings.append((index, ids))

    owners: dict[tuple[int, ...], set[int]] = defaultdict(set)
    for index, ids in spellings:
        for depth in range(len(ids) + 1):
            owners[ids[:depth]].add(index)
    marked: dict[tuple[int, ...], int] = {}
    for index, ids in spellings:
        if marked.setdefault(ids, index) != index:
            raise ModelError(
                f"labels {labels[marked[ids]]!r} and {labels[index]!r} tokenise "
                "identically, so they cannot be told apart."
            )

    terminals: set[tuple[int, tuple[int, ...]]] = set()
    exclusive: dict[tuple[int, ...], int] = {}
    for index, ids in spellings:
        for depth in range(1, len(ids) + 1):
            if owners[ids[:depth]] == {index}:
                terminals.add((index, ids[:depth]))
                break
        else:
            exclusive[ids] = index

    needed: dict[tuple[int, ...], set[int]] = defaultdict(set)
    for _, path in terminals:
        for depth in range(len(path)):
            needed[path[:depth]].add(path[depth])
    children: dict[tuple[int, ...], tuple[int, ...]] = {}
    for node in exclusive:
        for depth in range(len(node)):
            needed[node[:depth]].add(node[depth])
        kids = sorted(
            {
                ids[len(node)]
                for _, ids in spellings
                if len(ids) > len(node) and ids[: len(node)] == node
            }
        )
        children[node] = tuple(kids)
        needed[node].update(kids)

    nodes = sorted(needed, key=lambda n: (len(n), n))
    maximal = [n for n in nodes if not any(len(o) > len(n) and o[: len(n)] == n for o in nodes)]
    passes = tuple(sorted(maximal, key=lambda n: (len(n), n)))
    reads: list[list[tuple[int, tuple[int, ...], tuple[int, ...]]]] = [[] for _ in passes]
    for node in nodes:
        source = next(p for p, path in enumerate(passes) if path[: len(node)] == node)
        reads[source].append((len(node), node, tuple(sorted(needed[node]))))
    return LabelPlan(
        passes=passes,
        reads=tuple(tuple(r) for r in reads),
        terminals=tuple(sorted(terminals)),
        exclusive=tuple((index, node, children[node]) for node, index in sorted(exclusive.items())),
        n_labels=len(labels),
    )


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in values))


def combine_plan(
    plan: LabelPlan, logp: dict[tuple[tuple[int, ...], int], float]
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Turn the read log-probabilities into label probabilities.

    Parameters
    ----------
    plan : LabelPlan
        The plan the log-probabilities were read for.
    logp : dict
        ``logp[(node, token)]`` is log P(token | prompt + node) for every read of the plan.

    Returns
    -------
    tuple
        ``(probs, label_logprobs)``: the label probabilities renormalised over the labels, and
        the raw log P(label | prompt), where a label's probability is the sum over its terminal
        paths plus, for a label that is a prefix of another, P(node) (1 - sum_c P(c | node)).
    """

    def path_logp(path: tuple[int, ...]) -> float:
        return sum(logp[(path[:d], path[d])] for d in range(len(path)))

    terms: list[list[float]] = [[] for _ in range(plan.n_labels)]
    for index, path in plan.terminals:
        terms[index].append(path_logp(path))
    for index, node, kids in plan.exclusive:
        continued = sum(math.exp(logp[(node, kid)]) for kid in kids)
        rest = math.log1p(-continued) if continued < 1.0 else -math.inf
        terms[index].append(path_logp(node) + rest)
    label_lp = tuple(_logsumexp(t) for t in terms)
    total = _logsumexp(label_lp)
    if total == -math.inf:
        probs = tuple(math.nan for _ in label_lp)
    else:
        probs = tuple(math.exp(lp - total) for lp in label_lp)
    return probs, label_lp
