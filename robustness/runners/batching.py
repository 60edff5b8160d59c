"""Batching for the transformers backend: length-sorted batches under a padding cap, left
padding, and splitting a batch so its logits stay under a memory budget.

Rows sorted longest first put the largest batch (and any out-of-memory error) first. Left
padding keeps every row's last positions aligned, so the logits a call reads are always the last
``keep`` columns; explicit position ids (``cumsum(mask) - 1``) give a padded row exactly the
positions it would see alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["flatten_windows", "left_pad", "length_batches", "split_by_logits"]


def length_batches(lengths: Sequence[int], size: int, max_padding: float | None) -> list[list[int]]:
    """Indices grouped into batches of similar length, longest first (stable on ties).

    Parameters
    ----------
    lengths : sequence of int
        Token count of each row.
    size : int
        Most rows per batch.
    max_padding : float or None
        A row joins the current batch only while it is at least ``1 - max_padding`` times as
        long as the batch's longest row; None puts no cap on padding.

    Returns
    -------
    list of list of int
        Row indices per batch, longest rows first.
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    out: list[list[int]] = []
    current: list[int] = []
    for i in order:
        too_short = (
            max_padding is not None
            and current
            and lengths[i] < (1.0 - max_padding) * lengths[current[0]]
        )
        if current and (len(current) == size or too_short):
            out.append(current)
            current = []
        current.append(i)
    if current:
        out.append(current)
    return out


def left_pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``rows`` left padded with ``pad_id``: token ids and mask (1 real, 0 padding), both
    ``[len(rows), longest]`` long tensors on the CPU."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):
        ids[r, width - len(row) :] = torch.tensor(list(row), dtype=torch.long)
        mask[r, width - len(row) :] = 1
    return ids, mask


def split_by_logits(
    batch: Sequence[int], keeps: Sequence[int], vocab: int, max_bytes: int
) -> list[list[int]]:
    """Split a batch (sorted longest first) so its float32 logits, ``rows * keep * vocab * 4``
    bytes with ``keep`` the largest ``keeps[i]`` of a part, stay under ``max_bytes`` (a part
    holds at least one row)."""
    out: list[list[int]] = []
    current: list[int] = []
    for i in batch:
        trial = [*current, i]
        keep = max(keeps[j] for j in trial)
        if current and len(trial) * keep * vocab * 4 > max_bytes:
            out.append(current)
            current = [i]
        else:
            current = trial
    if current:
        out.append(current)
    return out


def flatten_windows(logits: torch.Tensor, keeps: Sequence[int]) -> torch.Tensor:
    """The last ``keeps[r]`` positions of each row of right-aligned ``[rows, keep, vocab]``
    logits, flattened in row order to ``[sum(keeps), vocab]`` (a view when every row keeps
    all ``keep`` positions)."""
    rows, keep, vocab = logits.shape
    if all(k == keep for k in keeps):
        return logits.reshape(rows * keep, vocab)
    index = torch.cat(
        [torch.arange(r * keep + keep - k, (r + 1) * keep) for r, k in enumerate(keeps)]
    )
    return logits.reshape(rows * keep, vocab).index_select(0, index.to(logits.device))
