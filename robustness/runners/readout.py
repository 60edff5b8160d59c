"""Reading the numbers each call returns out of a batch's logits (transformers backend).

Logits arrive float32 as ``[rows, keep, vocab]``, right aligned: a row whose reads need ``k``
final positions finds them in the last ``k`` columns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from robustness.runners.label_trie import LabelPlan

__all__ = ["read_label_passes", "read_responses"]

#: ``(prompt, node, token)`` -> log P(token | prompt + node)
Reads = dict[tuple[int, tuple[int, ...], int], float]


def read_label_passes(
    logits: torch.Tensor, passes: Sequence[tuple[int, LabelPlan, int]]
) -> tuple[Reads, dict[int, tuple[float, int]]]:
    """The log-probabilities a label plan reads, for rows that are passes of label plans.

    Parameters
    ----------
    logits : torch.Tensor
        ``[len(passes), keep, vocab]`` float32 logits.
    passes : sequence of (prompt, plan, pass)
        What each row is: pass ``pass`` of ``plan`` for prompt ``prompt``.

    Returns
    -------
    tuple
        The reads, and for every prompt whose plain pass (pass 0) is among the rows the largest
        next-token probability and its token (``(p, token)``, ProSA's confidence).
    """
    keep = logits.shape[1]
    logprobs = torch.log_softmax(logits, dim=-1)
    rows, cols, toks, keys, roots = [], [], [], [], []
    for r, (i, plan, p) in enumerate(passes):
        end = keep - (len(plan.passes[p]) + 1)
        for depth, node, tokens in plan.reads[p]:
            for tok in tokens:
                rows.append(r)
                cols.append(end + depth)
                toks.append(tok)
                keys.append((i, node, tok))
            if depth == 0 and p == 0:
                roots.append((r, end, i))
    values = logprobs[rows, cols, toks].tolist() if rows else []
    reads = dict(zip(keys, values, strict=True))
    tops: dict[int, tuple[float, int]] = {}
    if roots:
        root = logprobs[[r for r, _, _ in roots], [c for _, c, _ in roots]]
        best_lp, best_tok = root.max(dim=-1)
        for (_, _, i), lp, tok in zip(roots, best_lp.tolist(), best_tok.tolist(), strict=True):
            tops[i] = (math.exp(lp), int(tok))
    return reads, tops


def read_responses(logits: torch.Tensor, responses: Sequence[Sequence[int]]) -> list[float]:
    """Sum of log P(response token | everything before it) for each row.

    Parameters
    ----------
    logits : torch.Tensor
        ``[len(responses), keep, vocab]`` float32 logits of rows ``prompt + response[:-1]``.
    responses : sequence of token-id sequences
        Each row's response tokens (at most ``keep`` of them).

    Returns
    -------
    list of float
        ``sum_k log softmax(logits)[row, keep - n + k, response[k]]``, summed with ``math.fsum``
        in float64.
    """
    keep = logits.shape[1]
    norm = torch.logsumexp(logits, dim=-1)
    rows, cols, toks = [], [], []
    for r, response in enumerate(responses):
        for k, tok in enumerate(response):
            rows.append(r)
            cols.append(keep - len(response) + k)
            toks.append(tok)
    picked = (logits[rows, cols, toks] - norm[rows, cols]).double().tolist()
    out, offset = [], 0
    for response in responses:
        out.append(math.fsum(picked[offset : offset + len(response)]))
        offset += len(response)
    return out
