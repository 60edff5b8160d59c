"""Reading the numbers each call returns out of a batch's logits (transformers backend).

Logits arrive float32 and flattened: for each row of a batch, in order, the logits of its last
``keep`` positions (``[sum of the rows' keeps, vocab]``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from robustness.runners.label_trie import LabelPlan

__all__ = ["read_label_passes", "read_targets"]

#: ``(prompt, node, token)`` -> log P(token | prompt + node)
Reads = dict[tuple[int, tuple[int, ...], int], float]


def read_label_passes(
    logits: torch.Tensor, passes: Sequence[tuple[int, LabelPlan, int]]
) -> tuple[Reads, dict[int, tuple[float, int]]]:
    """The log-probabilities a label plan reads, for rows that are passes of label plans.

    Parameters
    ----------
    logits : torch.Tensor
        Flattened float32 logits: row ``r`` holds ``len(plan.passes[p]) + 1`` positions.
    passes : sequence of (prompt, plan, pass)
        What each row is: pass ``pass`` of ``plan`` for prompt ``prompt``.

    Returns
    -------
    tuple
        The reads, and for every prompt whose plain pass (pass 0) is among the rows the largest
        next-token probability and its token (``(p, token)``, ProSA's confidence).
    """
    logprobs = torch.log_softmax(logits, dim=-1)
    at, toks, keys, roots = [], [], [], []
    start = 0
    for i, plan, p in passes:
        for depth, node, tokens in plan.reads[p]:
            for tok in tokens:
                at.append(start + depth)
                toks.append(tok)
                keys.append((i, node, tok))
            if depth == 0 and p == 0:
                roots.append((start, i))
        start += len(plan.passes[p]) + 1
    values = logprobs[at, toks].tolist() if at else []
    reads = dict(zip(keys, values, strict=True))
    tops: dict[int, tuple[float, int]] = {}
    if roots:
        best_lp, best_tok = logprobs[[r for r, _ in roots]].max(dim=-1)
        for (_, i), lp, tok in zip(roots, best_lp.tolist(), best_tok.tolist(), strict=True):
            tops[i] = (math.exp(lp), int(tok))
    return reads, tops


def read_targets(logits: torch.Tensor, picks: Sequence[Sequence[tuple[int, int]]]) -> list[float]:
    """Sum of the log-probabilities each entry picks out of flattened logits.

    Parameters
    ----------
    logits : torch.Tensor
        ``[positions, vocab]`` float32 logits.
    picks : sequence of sequences of (position, token)
        For each result, the positions and the token read at each.

    Returns
    -------
    list of float
        ``sum log softmax(logits)[position, token]`` per entry, summed with ``math.fsum`` in
        float64 (0.0 for an empty entry).
    """
    used = sorted({p for entry in picks for p, _ in entry})
    if not used:
        return [0.0 for _ in picks]
    row = {p: k for k, p in enumerate(used)}
    chosen = logits if len(used) == logits.shape[0] else logits[used]
    norm = torch.logsumexp(chosen, dim=-1)
    rows = [row[p] for entry in picks for p, _ in entry]
    toks = [t for entry in picks for _, t in entry]
    picked = (chosen[rows, toks] - norm[rows]).double().tolist()
    out, offset = [], 0
    for entry in picks:
        out.append(math.fsum(picked[offset : offset + len(entry)]))
        offset += len(entry)
    return out
