"""A budgeted (sparse) table in the analyses: how sparse, what is withheld, what replaces it.

A budgeted run (``robustness run --budget``) writes an ordinary long table without the cells
it did not ask, and its design in the table's metadata (``budget``). These helpers let the
analyses say so: :func:`grid_counts` counts asked cells against the grid, :func:`budget_of`
gives the fraction, :func:`require_full_grid` stops a statistic that needs every (variant,
item) cell (Kendall's W across variants, FormatSpread's search over a table) with the reason,
and :func:`budget_sections` gives the tables and sentences a report shows instead: the design,
PromptEval's per-variant estimates and quantiles (:func:`analyses.estimate_variants`) and the
statistics withheld.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from robustness.core.errors import AnalysisError

__all__ = [
    "FULL_GRID_STATISTICS",
    "budget_of",
    "budget_sections",
    "grid_counts",
    "require_full_grid",
    "withheld_reason",
]

#: Statistics that need every (variant, item) cell, withheld on a sparse table.
FULL_GRID_STATISTICS = (
    "Kendall's W across variants",
    "FormatSpread's search (best and worst format)",
    "multi-prompt summaries (max, CPS, quantiles and worst case over prompts)",
)
#: A table from elsewhere with fewer of its grid's cells than this counts as sparse (a full run
#: lacks cells only where a family ran out of distinct variants for an item).
SPARSE_SHARE = 0.5


def grid_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Asked cells against the grid, per model.

    Parameters
    ----------
    table
        A long table (``model, dataset, item_id, category, variant_id``).

    Returns
    -------
    pandas.DataFrame
        ``model, n_asked, n_grid, share``: the grid of a model is, per (dataset, category),
        the dataset's items (any row names them; a budgeted run asks every original) x the
        variant ids seen in that category.

    Notes
    -----
    n_grid = sum over (dataset d, category c) of |items of d| x |variant ids of (d, c)|;
    share = n_asked / n_grid.

    References
    ----------
    Polo et al. (2024), arXiv:2405.17202: the (template, example) grid a budget samples.

    Examples
    --------
    >>> from analyses.synthetic import synthetic_table
    >>> grid_counts(synthetic_table(models=1, n_items=2, n_variants=2, seed=0))["share"].tolist()
    [1.0]
    """
    rows = []
    for model, t in table.groupby("model", sort=True):
        asked = len(t[["dataset", "item_id", "category", "variant_id"]].drop_duplicates())
        items = t.groupby("dataset")["item_id"].nunique()
        variants = t.groupby(["dataset", "category"])["variant_id"].nunique()
        grid = int(sum(items[d] * n for (d, _), n in variants.items()))
        rows.append({"model": model, "n_asked": asked, "n_grid": grid, "share": asked / grid})
    return pd.DataFrame(rows, columns=["model", "n_asked", "n_grid", "share"])


def budget_of(table: pd.DataFrame, meta: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The budgeted design of ``table``.

    Parameters
    ----------
    table, meta
        As :func:`withheld_reason`.

    Returns
    -------
    dict or None
        ``meta["budget"]`` or ``table.attrs["budget"]`` when its fraction is below 1; for a
        table made elsewhere with under half its grid, a design measured from the table
        (``fraction, n_asked, n_grid, measured``); None for a full table.
    """
    for source in ((meta or {}).get("budget"), table.attrs.get("budget")):
        if isinstance(source, Mapping) and float(source.get("fraction", 1)) < 1:
            return dict(source)
    counts = grid_counts(table)
    if len(counts) and float(counts["share"].min()) < SPARSE_SHARE:
        return {
            "fraction": float(counts["n_asked"].sum() / counts["n_grid"].sum()),
            "n_asked": int(counts["n_asked"].max()),
            "n_grid": int(counts["n_grid"].max()),
            "measured": True,
        }
    return None


def withheld_reason(table: pd.DataFrame, meta: Mapping[str, Any] | None = None) -> str | None:
    """Why full-grid statistics are withheld on ``table`` (None: they are not).

    Parameters
    ----------
    table
        A long table; its ``attrs["budget"]`` is read when present.
    meta
        The table file's metadata (``robustness.core.table.read_metadata``), if at hand.

    Returns
    -------
    str or None
        One sentence: how sparse the table is and why the statistic is withheld.

    Notes
    -----
    Sparse: a budgeted run's design with fraction < 1, or under :data:`SPARSE_SHARE` of the
    grid asked (:func:`grid_counts`).

    References
    ----------
    Polo et al. (2024), arXiv:2405.17202.

    Examples
    --------
    >>> from analyses.synthetic import synthetic_table
    >>> withheld_reason(synthetic_table(models=1, n_items=2, n_variants=2, seed=0)) is None
    True
    """
    design = budget_of(table, meta)
    if design is None:
        return None
    how = "measured from the table" if design.get("measured") else "a budgeted run"
    return (
        f"the table is sparse ({how}: {design['fraction']:.1%} of the grid, "
        f"{design['n_asked']:,} of {design['n_grid']:,} cells asked); it needs every variant on "
        "every item, so it is withheld (per-variant performance and spread come from "
        "analyses.estimate_variants instead)"
    )


def require_full_grid(
    table: pd.DataFrame, statistic: str, meta: Mapping[str, Any] | None = None
) -> None:
    """Raise :class:`AnalysisError` naming ``statistic`` when ``table`` is sparse.

    Parameters
    ----------
    table, meta
        As :func:`withheld_reason`.
    statistic
        The statistic's name, for the message.

    Returns
    -------
    None
        Returns only when the table is full.

    Notes
    -----
    Kendall's W across variants and FormatSpread's search rank variants on the same items;
    on holes they would compare variants on different items.

    References
    ----------
    Kendall & Babington Smith (1939); Sclar et al. (2024); Polo et al. (2024).

    Examples
    --------
    >>> from analyses.synthetic import synthetic_table
    >>> require_full_grid(synthetic_table(models=1, n_items=2, n_variants=2, seed=0), "W")
    """
    reason = withheld_reason(table, meta)
    if reason is not None:
        raise AnalysisError(f"{statistic}: {reason}.")


def budget_sections(
    table: pd.DataFrame,
    meta: Mapping[str, Any] | None = None,
    *,
    n_boot: int = 200,
    seed: int = 0,
) -> dict[str, Any] | None:
    """What a report of a budgeted table shows instead of the full-grid statistics.

    Parameters
    ----------
    table, meta
        As :func:`withheld_reason`.
    n_boot, seed
        As :func:`analyses.estimate_variants`.

    Returns
    -------
    dict or None
        None for a full table. Otherwise ``headline`` and ``method`` (sentences), and the
        tables ``budget_design`` (``model, n_asked, n_grid, share``), ``variant_estimates``
        and ``variant_quantiles`` (:func:`analyses.estimate_variants`) and ``withheld``
        (``statistic, reason``).

    Notes
    -----
    The estimates are :func:`analyses.estimate_variants` (PromptEval's model, its equations
    there); C_i and the GEE stay on the asked cells.

    References
    ----------
    Polo et al. (2024), arXiv:2405.17202.

    Examples
    --------
    >>> from analyses.synthetic import synthetic_table
    >>> budget_sections(synthetic_table(models=1, n_items=2, n_variants=2, seed=0)) is None
    True
    """
    from analyses.variant_estimates import estimate_variants

    design = budget_of(table, meta)
    if design is None:
        return None
    estimates = estimate_variants(table, n_boot=n_boot, seed=seed)
    reason = withheld_reason(table, meta) or ""
    fraction = float(design["fraction"])
    headline = (
        f"Budgeted study: {fraction:.0%} of the prompt grid was asked "
        f"({design['n_asked']:,} of {design['n_grid']:,} prompts per model)."
    )
    method = (
        f"The study was budgeted at {fraction:g} of the (variant, item) grid: every item's "
        "original prompt and a seeded, stratified sample of the other cells in which every "
        "variant was asked at least once (robustness.budget). Agreement (C_i) and the GEE "
        "models use the asked cells only, with their counts shown. Per-variant performance "
        "and its spread over variants are estimated with PromptEval's model (Polo et al., "
        "2024): a Rasch model with the variants' parameters as covariates, fitted to the asked "
        "cells, predicting the others; intervals from a bootstrap over items. "
        f"Withheld: {', '.join(FULL_GRID_STATISTICS)}, because {reason}."
    )
    return {
        "headline": headline,
        "method": method,
        "budget_design": grid_counts(table),
        "variant_estimates": estimates.per_variant,
        "variant_quantiles": estimates.quantiles,
        "withheld": pd.DataFrame(
            {"statistic": list(FULL_GRID_STATISTICS), "reason": reason},
            columns=["statistic", "reason"],
        ),
    }
