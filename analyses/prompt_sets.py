"""Prompt sets: answer counts per (model, item, category), the arithmetic under agreement and PSS.

A *prompt set* is the valid variants of one (model, dataset, item, category).
Agreement needs at least :data:`MIN_SET` valid answers: with one, C_i = 1 by
construction and says nothing, so such a set has no C_i and its row no ``agree``.
Everything here works on integer codes with numpy, so a million rows take a
fraction of a second: answers are counted per (group, answer) pair with one
``np.unique`` and the per-group statistics are segment reductions over those pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analyses.table_input import GROUP_KEYS, REFERENCE, answers, codes

#: The fewest valid answers a prompt set needs for agreement to be defined.
MIN_SET = 2


@dataclass(frozen=True)
class Pairs:
    """Distinct (group, answer) pairs with their counts, sorted by group then answer."""

    group: np.ndarray
    answer: np.ndarray
    count: np.ndarray
    n_groups: int

    def starts(self) -> np.ndarray:
        g = self.group
        return np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if g.size else np.zeros(0, int)


def count_pairs(group: np.ndarray, answer: np.ndarray, n_groups: int) -> Pairs:
    """Count the answers of each group (rows given already restricted to valid ones)."""
    if group.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return Pairs(z, z, z, n_groups)
    k = int(answer.max()) + 1
    uniq, cnt = np.unique(group * k + answer, return_counts=True)
    return Pairs(uniq // k, uniq % k, cnt.astype(np.int64), n_groups)


@dataclass(frozen=True)
class Majority:
    """Per group: N_i, the largest count, the number of modes and the majority answer."""

    n: np.ndarray
    top: np.ndarray
    n_modes: np.ndarray
    majority: np.ndarray  # -1 where the group has no valid answer
    smallest_mode: np.ndarray


def majority(pairs: Pairs, preferred: np.ndarray | None = None) -> Majority:
    """Modes of each group, with the tie rule of :func:`analyses.agreement.item_agreement`.

    ``preferred[g]`` (or -1) is the answer that wins a tie when it is among the
    modes; otherwise the smallest canonical index among the modes wins.
    """
    G = pairs.n_groups
    n = np.bincount(pairs.group, weights=pairs.count, minlength=G).astype(np.int64)
    top = np.zeros(G, dtype=np.int64)
    if pairs.group.size:
        st = pairs.starts()
        top[pairs.group[st]] = np.maximum.reduceat(pairs.count, st)
    is_mode = pairs.count == top[pairs.group]
    n_modes = np.bincount(pairs.group[is_mode], minlength=G).astype(np.int64)
    smallest = np.full(G, -1, dtype=np.int64)
    idx = np.flatnonzero(is_mode)
    if idx.size:
        mg = pairs.group[idx]
        first = idx[np.r_[True, mg[1:] != mg[:-1]]]
        smallest[pairs.group[first]] = pairs.answer[first]
    chosen = smallest.copy()
    if preferred is not None:
        hit = is_mode & (pairs.answer == preferred[pairs.group])
        has_pref = np.bincount(pairs.group[hit], minlength=G) > 0
        chosen = np.where(has_pref, preferred, smallest)
    return Majority(n, top, n_modes, chosen, smallest)


@dataclass(frozen=True)
class PromptSets:
    """The long table grouped into prompt sets, with majorities and per-row agreement."""

    table: pd.DataFrame  # validated
    group: np.ndarray  # group code per row
    keys: pd.DataFrame  # one row per group: model, dataset, item_id, category, dataset_type
    valid: np.ndarray
    answer: np.ndarray  # -1 where invalid
    pairs: Pairs
    maj: Majority
    n_invalid: np.ndarray
    original: np.ndarray  # per group: the original prompt's answer for its (model, item), or -1
    item_group: np.ndarray  # per group: code of its (model, dataset, item)

    @property
    def agree(self) -> np.ndarray:
        """Per row: 1.0 when the answer equals its group's majority, 0.0 if not; NaN when the
        row is invalid or its set has fewer than :data:`MIN_SET` valid answers."""
        out = (self.answer == self.maj.majority[self.group]).astype(float)
        out[~self.valid | (self.maj.n[self.group] < MIN_SET)] = np.nan
        return out


def prompt_sets(t: pd.DataFrame) -> PromptSets:
    """Group a validated table into prompt sets and resolve every majority."""
    group, keys = codes(t, GROUP_KEYS)
    G = len(keys)
    dtype_first = np.empty(G, dtype=object)
    dtype_first[group] = t["dataset_type"].to_numpy(dtype=object)
    keys = keys.assign(dataset_type=dtype_first)
    item_code, _ = codes(keys, ["model", "dataset", "item_id"])
    return _counted(t, group, keys, item_code)


def _counted(
    t: pd.DataFrame, group: np.ndarray, keys: pd.DataFrame, item_code: np.ndarray
) -> PromptSets:
    """The answer counts and majorities of prompt sets whose grouping is already known."""
    G = len(keys)
    valid, ans = answers(t)
    pairs = count_pairs(group[valid], ans[valid], G)
    # The original prompt's answer per (model, item): the majority of its 'original'
    # variants, ties to the smallest index (validate allows one original row per item, or
    # several told apart by an epoch/repeat column, whose majority is then the reference).
    first = majority(pairs)
    is_orig = (keys["category"] == REFERENCE).to_numpy()
    orig_item = np.full(item_code.max() + 1 if G else 0, -1, dtype=np.int64)
    orig_item[item_code[is_orig]] = first.majority[is_orig]
    original = orig_item[item_code] if G else np.zeros(0, dtype=np.int64)
    maj = majority(pairs, preferred=original)
    n_invalid = np.bincount(group[~valid], minlength=G).astype(np.int64)
    return PromptSets(t, group, keys, valid, ans, pairs, maj, n_invalid, original, item_code)


def with_answers(ps: PromptSets, t: pd.DataFrame) -> PromptSets:
    """The prompt sets of ``t``: ``ps.table``'s rows in its order with other answers or validity.

    The grouping of ``ps`` is kept (no regrouping); counts and majorities are recomputed.
    Equal to ``prompt_sets(t)`` (the sensitivity analysis that counts invalid answers as
    disagreeing votes uses it).
    """
    if len(t) != len(ps.table):
        raise ValueError(f"with_answers: {len(t)} rows, but the prompt sets have {len(ps.table)}.")
    return _counted(t, ps.group, ps.keys, ps.item_group)


def for_model(ps: PromptSets, model: object) -> PromptSets:
    """The prompt sets of one model, cut from those of the whole table (no regrouping).

    Equal to ``prompt_sets(t[t.model == model].reset_index(drop=True))``: groups are sorted
    by model first, so one model's groups (and items) are one run of codes.
    """
    mine = np.flatnonzero((ps.keys["model"] == model).to_numpy())
    if mine.size == 0:
        raise ValueError(f"for_model: no prompt set of model {model!r}.")
    lo, hi = int(mine[0]), int(mine[-1]) + 1
    rows = np.flatnonzero((ps.group >= lo) & (ps.group < hi))
    items = ps.item_group[lo:hi]
    return _counted(
        ps.table.iloc[rows].reset_index(drop=True),
        ps.group[rows] - lo,
        ps.keys.iloc[lo:hi].reset_index(drop=True),
        items - items.min(),
    )
