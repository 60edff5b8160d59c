"""Budgeted runs: ask a seeded, stratified fraction of a study's (variant, item) cells.

A full study asks every variant of every item. A run with ``budget = b`` (``0 < b <= 1``) asks
at most ``floor(b * N)`` of the ``N`` prompts, chosen by :func:`budget_order`:

1. the original prompt of every item (the reference of flip rates, always asked);
2. one cell of every variant (``category, variant_id``), each on another item, items taken in
   a seeded order that alternates between datasets, so every variant is observed once;
3. the remaining cells, stratum by stratum (stratum = family x dataset): within a stratum of
   ``k`` variants and ``m`` items (both in seeded orders), step ``t`` asks variant ``t mod k``
   on item ``(t + floor(t / lcm(k, m))) mod m``, which visits every (variant, item) pair once
   and keeps every prefix balanced (each item once per ``m`` steps, each variant once per
   ``k``); the strata are merged by their fractional positions
   ``(position + u_s) / n_s`` (``u_s`` a seeded uniform), so every prefix of the order holds
   each stratum in proportion to its share of the grid.

The order depends only on the variants and the seed, and a budget takes a prefix of it: a
larger budget with the same seed asks a superset of a smaller one's cells (nested), so with
the cache a later run at a larger budget asks only the cells it adds. The design, the counts
per stratum and the smallest workable budget go into the table's metadata (``budget``).

This is the sampling side of PromptEval (Polo et al., 2024, arXiv 2405.17202, sec. 3 and their
balanced sampling of (template, example) pairs); the estimates are
:func:`analyses.estimate_variants`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from robustness.core.errors import StudyError
from robustness.core.variants import ORIGINAL, Variant

__all__ = ["budget_order", "check_budget", "minimum_cells", "order_cells", "select_budget"]

#: Stream of the study seed that orders the cells (``BUDG``): independent of perturbation seeds.
_STREAM = 0x42554447

Cell = tuple[str, str, str, str]  # dataset, item_id, category, variant_id


def check_budget(budget: Any, where: str = "budget") -> float:
    """``budget`` as a float in (0, 1], or one :class:`StudyError` naming ``where``."""
    ok = isinstance(budget, int | float) and not isinstance(budget, bool)
    if not ok or not math.isfinite(budget) or not 0 < budget <= 1:
        raise StudyError(
            f"{where} must be a fraction above 0 and at most 1 (1 asks every prompt), "
            f"got {budget!r}."
        )
    return float(budget)


def _cell(v: Variant) -> Cell:
    return (v.item.dataset, v.item.item_id, v.category, v.variant_id)


def _interleaved_items(cells: Sequence[Cell], rng: np.random.Generator) -> list[tuple[str, str]]:
    """Item keys in a seeded order that alternates between datasets."""
    by_dataset: dict[str, list[tuple[str, str]]] = {}
    for dataset, item_id, _, _ in cells:
        keys = by_dataset.setdefault(dataset, [])
        if not keys or keys[-1] != (dataset, item_id):
            keys.append((dataset, item_id))
    columns = []
    for dataset in sorted(by_dataset):
        keys = list(dict.fromkeys(by_dataset[dataset]))
        columns.append([keys[int(i)] for i in rng.permutation(len(keys))])
    out: list[tuple[str, str]] = []
    for r in range(max(len(c) for c in columns)):
        out.extend(c[r] for c in columns if r < len(c))
    return out


def _cover(cells: Sequence[Cell], present: set[Cell], rng: np.random.Generator) -> list[Cell]:
    """One cell per variant (category, variant_id), each on the next item of the cycle."""
    columns = sorted({(c[2], c[3]) for c in cells})
    items = _interleaved_items(cells, rng)
    out: list[Cell] = []
    at = 0
    for k in rng.permutation(len(columns)):
        category, variant_id = columns[int(k)]
        for step in range(len(items)):
            dataset, item_id = items[(at + step) % len(items)]
            cell = (dataset, item_id, category, variant_id)
            if cell in present:
                out.append(cell)
                at = (at + step + 1) % len(items)
                break
    return out


def _stratum_order(cells: Sequence[Cell], rng: np.random.Generator) -> list[Cell]:
    """A balanced cyclic order of one stratum's cells (see the module docstring)."""
    present = set(cells)
    columns = sorted({c[3] for c in cells})
    columns = [columns[int(i)] for i in rng.permutation(len(columns))]
    items = sorted({(c[0], c[1]) for c in cells})
    items = [items[int(i)] for i in rng.permutation(len(items))]
    category = cells[0][2]
    k, m = len(columns), len(items)
    span = math.lcm(k, m)
    out = []
    for t in range(k * m):
        dataset, item_id = items[(t + t // span) % m]
        cell = (dataset, item_id, category, columns[t % k])
        if cell in present:
            out.append(cell)
    return out


def budget_order(variants: Sequence[Variant], seed: int) -> list[Cell]:
    """Every cell of ``variants`` in the order budgets take them (originals first).

    Returns
    -------
    list of (dataset, item_id, category, variant_id)
        A budget of ``T`` cells asks the first ``T``: originals, then one cell per variant,
        then the strata merged in proportion (module docstring).
    """
    return order_cells([_cell(v) for v in variants], seed)


def order_cells(cells: Sequence[Cell], seed: int) -> list[Cell]:
    """:func:`budget_order` of plain (dataset, item_id, category, variant_id) cells (a
    table's rows: ``bench/budget.py`` subsamples a full grid with it)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), _STREAM]))
    cells = list(cells)
    if len(set(cells)) != len(cells):
        seen: set[Cell] = set()
        dup = next(c for c in cells if c in seen or seen.add(c))  # type: ignore[func-returns-value]
        raise StudyError(f"variant {dup[2]}/{dup[3]} of item {dup[1]!r} is listed twice.")
    originals = [c for c in cells if c[2] == ORIGINAL]
    rest = [c for c in cells if c[2] != ORIGINAL]
    cover = _cover(rest, set(rest), rng) if rest else []
    taken = set(cover)
    strata: dict[tuple[str, str], list[Cell]] = {}
    for c in rest:
        if c not in taken:
            strata.setdefault((c[2], c[0]), []).append(c)
    keyed: list[tuple[float, int, Cell]] = []
    for s, key in enumerate(sorted(strata)):
        order = _stratum_order(strata[key], rng)
        shift = float(rng.random())
        keyed.extend(((pos + shift) / len(order), s, c) for pos, c in enumerate(order))
    keyed.sort(key=lambda t: (t[0], t[1]))
    return originals + cover + [c for _, _, c in keyed]


def minimum_cells(variants: Sequence[Variant]) -> int:
    """Cells needed to ask every original and every variant once."""
    originals = sum(v.category == ORIGINAL for v in variants)
    columns = {(v.category, v.variant_id) for v in variants if v.category != ORIGINAL}
    return originals + len(columns)


def select_budget(
    variants: Sequence[Variant], budget: float, seed: int, where: str = "budget"
) -> tuple[list[Variant], dict[str, Any]]:
    """The variants a run at ``budget`` asks (in their given order) and the design record.

    Returns
    -------
    (list of Variant, dict)
        The asked variants; the design: ``fraction``, ``seed``, ``n_grid``, ``n_asked``,
        ``min_fraction``, ``scheme`` and ``strata`` (one dict per family x dataset:
        ``category, dataset, grid, asked``).
    """
    budget = check_budget(budget, where)
    n_grid = len(variants)
    need = minimum_cells(variants)
    if budget >= 1:
        chosen = list(variants)
    else:
        n_asked = math.floor(budget * n_grid + 1e-9)
        if n_asked < need:
            n_orig = sum(v.category == ORIGINAL for v in variants)
            raise StudyError(
                f"{where} {budget:g} asks {n_asked:,} of the {n_grid:,} prompts, fewer than the "
                f"{need:,} needed to ask every item's original prompt ({n_orig:,}) and every "
                f"variant once ({need - n_orig:,}); the smallest budget here is "
                f"{math.ceil(need / n_grid * 1e4) / 1e4:g}."
            )
        keep = set(budget_order(variants, seed)[:n_asked])
        chosen = [v for v in variants if _cell(v) in keep]
    strata: dict[tuple[str, str], list[int]] = {}
    asked = {_cell(v) for v in chosen}
    for v in variants:
        counts = strata.setdefault((v.category, v.item.dataset), [0, 0])
        counts[0] += 1
        counts[1] += _cell(v) in asked
    design = {
        "fraction": budget,
        "seed": int(seed),
        "n_grid": n_grid,
        "n_asked": len(chosen),
        "min_fraction": need / n_grid if n_grid else 1.0,
        "scheme": "originals + one cell per variant + cyclic strata (family x dataset)",
        "strata": [
            {"category": c, "dataset": d, "grid": g, "asked": a}
            for (c, d), (g, a) in sorted(strata.items())
        ],
    }
    return chosen, design
