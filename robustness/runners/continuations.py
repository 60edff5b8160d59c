"""Rows of the shared-prefix forwards, and continuation trees: a prompt and every response
scored under it packed into one row.

A :class:`Row` is a token sequence with the position id of every token, the token each one
follows (its parent) and the number of final positions whose next-token logits are read. A
plain row is causal: token ``i`` follows ``i - 1`` at position ``i``.

Continuation trees
------------------
``loglikelihood`` pairs that share a prompt (the options of a cloze question, every response
POSIX scores under one prompt variant) need the prompt's keys and values once and each
response's tokens once. :func:`pack_pairs` makes one row per distinct prompt: the prompt, then
the trie of its responses, each without its last token (which is only ever predicted, never an
input), laid out depth first. A response token follows the token before it in its own response
(the prompt's last token for the first) and sits at that token's position plus one, so with the
attention mask of :func:`ancestor_mask` every token sees exactly the positions and keys it would
see in the row ``prompt + response`` alone: the prompt and its own path of the trie, nothing of
its siblings. Responses that begin alike share the tokens they have in common.

Every token from the prompt's last one on is read (each predicts the next token of a response),
so a packed row's reads are its last ``keep = len(tokens) - len(prompt) + 1`` positions, as for a
plain row; :class:`PairRead` says which of them, and which token, score each pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_TAIL", "PairRead", "PairRows", "Row", "ancestor_mask", "pack_pairs"]

#: Most response tokens one packed row holds (see :func:`pack_pairs`).
MAX_TAIL = 256


@dataclass(frozen=True)
class Row:
    """One row: ``tokens``, each token's ``parent`` index (-1 for the first) and position id,
    and ``keep``, how many final positions are read. ``branch`` is the first index whose parent
    is not the token just before it (``len(tokens)`` for a causal row); every index before it
    is a plain causal prefix that a cache may share."""

    tokens: tuple[int, ...]
    parents: tuple[int, ...]
    positions: tuple[int, ...]
    keep: int
    branch: int

    @classmethod
    def causal(cls, tokens: Sequence[int], keep: int) -> Row:
        """A plain row: token ``i`` follows ``i - 1`` at position ``i``."""
        n = len(tokens)
        return cls(tuple(tokens), tuple(range(-1, n - 1)), tuple(range(n)), keep, n)

    @property
    def is_causal(self) -> bool:
        """Whether every token follows the one before it."""
        return self.branch == len(self.tokens)

    def __len__(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True)
class PairRead:
    """Where one (prompt, response) pair is read: its row, the indices of the row's tokens
    whose next-token logits predict the response's tokens, and those tokens."""

    row: int
    at: tuple[int, ...]
    targets: tuple[int, ...]


class PairRows:
    """The rows of a ``loglikelihood`` call and where each pair is read in a batch's logits.

    Parameters
    ----------
    prompts, responses : sequences of token-id sequences
        The pairs (every response non-empty).
    packed : bool
        One row per distinct prompt (:func:`pack_pairs`), or one causal row
        ``prompt + response[:-1]`` per pair.
    """

    def __init__(
        self, prompts: Sequence[Sequence[int]], responses: Sequence[Sequence[int]], packed: bool
    ) -> None:
        if packed:
            self.rows, self.reads = pack_pairs(prompts, responses)
        else:
            self.rows = [
                Row.causal([*p, *r[:-1]], len(r)) for p, r in zip(prompts, responses, strict=True)
            ]
            self.reads = [
                PairRead(j, tuple(range(len(p) - 1, len(p) + len(r) - 1)), tuple(r))
                for j, (p, r) in enumerate(zip(prompts, responses, strict=True))
            ]
        self.by_row: list[list[int]] = [[] for _ in self.rows]
        for j, read in enumerate(self.reads):
            self.by_row[read.row].append(j)

    def picks(self, batch: Sequence[int]) -> tuple[list[int], list[list[tuple[int, int]]]]:
        """The pairs a batch of rows answers, and for each the (position, token) entries to
        read in the batch's flattened logits (each row's last ``keep`` positions, in order)."""
        done: list[int] = []
        picks: list[list[tuple[int, int]]] = []
        start = 0
        for r in batch:
            row = self.rows[r]
            first = len(row) - row.keep  # the row's first read index
            for j in self.by_row[r]:
                read = self.reads[j]
                picks.append(
                    [(start + a - first, t) for a, t in zip(read.at, read.targets, strict=True)]
                )
                done.append(j)
            start += row.keep
        return done, picks


def pack_pairs(
    prompts: Sequence[Sequence[int]],
    responses: Sequence[Sequence[int]],
    max_tail: int = MAX_TAIL,
) -> tuple[list[Row], list[PairRead]]:
    """Pack (prompt, response) token pairs into one row per distinct prompt.

    Parameters
    ----------
    prompts, responses : sequences of token-id sequences
        Pair ``i`` is ``(prompts[i], responses[i])``; every prompt and response is non-empty.
    max_tail : int
        A row takes responses of its prompt while their tokens (less each last one) come to
        at most this many; the next response starts another row of the same prompt. Attention
        over a packed row is dense, so a very long tail would cost more than running the
        prompt's rows on a shared cache.

    Returns
    -------
    tuple
        The rows (in order of each row's first pair) and, for every pair, its
        :class:`PairRead`. A row with one response is a plain causal row.
    """
    open_row: dict[tuple[int, ...], int] = {}
    groups: list[list[int]] = []
    sizes: list[int] = []
    for i, (prompt, response) in enumerate(zip(prompts, responses, strict=True)):
        key, size = tuple(prompt), len(response) - 1
        g = open_row.get(key)
        if g is None or (sizes[g] + size > max_tail and groups[g]):
            g = open_row[key] = len(groups)
            groups.append([])
            sizes.append(0)
        groups[g].append(i)
        sizes[g] += size
    rows: list[Row] = []
    reads: list[PairRead | None] = [None for _ in prompts]
    for g, members in enumerate(groups):
        row, at = _pack_one(prompts[members[0]], [responses[i] for i in members])
        rows.append(row)
        for i, where in zip(members, at, strict=True):
            reads[i] = PairRead(g, where, tuple(responses[i]))
    return rows, [r for r in reads if r is not None]


def _pack_one(
    prompt: Sequence[int], responses: Sequence[Sequence[int]]
) -> tuple[Row, list[tuple[int, ...]]]:
    """The packed row of one prompt and the read indices of each of its responses."""
    # the trie of the responses without their last token; node 0 is the prompt's last token
    child: dict[tuple[int, int], int] = {}
    kids: list[list[tuple[int, int]]] = [[]]  # per node: (token, child node), first seen first
    paths: list[list[int]] = []
    for response in responses:
        node, path = 0, [0]
        for tok in response[:-1]:
            key = (node, int(tok))
            if key not in child:
                child[key] = len(kids)
                kids.append([])
                kids[node].append((int(tok), child[key]))
            node = child[key]
            path.append(node)
        paths.append(path)
    tokens = list(prompt)
    parents = list(range(-1, len(prompt) - 1))
    positions = list(range(len(prompt)))
    index = [len(prompt) - 1] + [0] * (len(kids) - 1)  # node -> token index in the row
    stack = [(tok, node, 0) for tok, node in reversed(kids[0])]
    while stack:  # depth first, children in first-seen order
        tok, node, parent = stack.pop()
        index[node] = len(tokens)
        tokens.append(tok)
        parents.append(index[parent])
        positions.append(positions[index[parent]] + 1)
        stack.extend((t, n, node) for t, n in reversed(kids[node]))
    at = [tuple(index[node] for node in path) for path in paths]
    branch = next((i for i in range(len(prompt), len(tokens)) if parents[i] != i - 1), len(tokens))
    keep = len(tokens) - len(prompt) + 1
    return Row(tuple(tokens), tuple(parents), tuple(positions), keep, branch), at


def ancestor_mask(row: Row, start: int) -> np.ndarray:
    """Which of the tokens ``row.tokens[start:]`` each of them attends to (itself included).

    Returns
    -------
    numpy.ndarray
        ``[n, n]`` booleans, ``n = len(row) - start``: entry ``(j, i)`` is True when token
        ``start + i`` is ``start + j`` or one of its ancestors. ``start`` must not exceed
        ``row.branch`` (everything before it is a causal prefix).
    """
    n = len(row) - start
    mask = np.tril(np.ones((n, n), dtype=bool))
    for j in range(row.branch - start, n):
        parent = row.parents[start + j] - start
        mask[j] = False
        if parent >= 0:
            mask[j, : parent + 1] = mask[parent, : parent + 1]
        mask[j, j] = True
    return mask
