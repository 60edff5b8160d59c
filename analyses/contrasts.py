"""Objective - subjective contrasts with one row per family, pooled and per model.

The GEE's contrasts (:meth:`analyses.gee.GEEResult.contrasts`) exist only for the
categories the fit could estimate for both dataset types. A reader must see every
family, so :func:`contrast_rows` lists each one: with its contrast, or with the reason
it has none (no variants in the table, one dataset type only, single answers only,
too few items, or not estimable in the fit). :func:`contrasts_by_model` fits the type
comparison ``agree ~ dataset_type * category`` to each model on its own, so that no
contrast averages objective items over two models against subjective items of one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses._counts import prompt_sets
from analyses._data import REFERENCE
from analyses.agreement import items_frame
from analyses.gee import gee_loaded
from analyses.marginal import CONTRAST_COLUMNS as FIT_COLUMNS
from robustness.errors import RobustnessError

__all__ = ["CONTRAST_COLUMNS", "contrast_rows", "contrasts_by_model"]

#: The fit's contrast columns (:data:`analyses.marginal.CONTRAST_COLUMNS`), the item counts
#: behind them, and the reason a family has no value.
CONTRAST_COLUMNS = [
    *FIT_COLUMNS,
    "n_items_objective",
    "n_items_subjective",
    "reason",
]


def _item_key(frame: pd.DataFrame) -> pd.Series:
    """An item is (dataset, item_id): ids repeat across datasets."""
    return frame["dataset"].astype(str) + "\x1f" + frame["item_id"].astype(str)


def _why_not(category: str, items: pd.DataFrame, present: set[str], min_items: int) -> str:
    if category not in present:
        return "no variants in the table"
    x = items[items["category"] == category]
    have = sorted(set(x["dataset_type"]))
    if len(have) < 2:
        return f"only {have[0]} items have this family" if have else "no variants in the table"
    defined = x[x["c_i"].notna()]
    lacking = [t for t in ("objective", "subjective") if not (defined["dataset_type"] == t).any()]
    if lacking:
        return (
            f"no {lacking[0]} prompt set has two valid answers (agreement is undefined for a "
            "single answer; see the flip rate)"
        )
    counts = defined.assign(_item=_item_key(defined)).groupby("dataset_type")["_item"].nunique()
    thin = [f"{t} {int(counts.get(t, 0))}" for t in ("objective", "subjective")]
    if min(int(counts.get(t, 0)) for t in ("objective", "subjective")) < min_items:
        return f"too few items ({', '.join(thin)}; at least {min_items} per type)"
    return "not estimable in the GEE fit (separation or aliasing; see the notes)"


def contrast_rows(
    contrasts: pd.DataFrame,
    items: pd.DataFrame,
    families: Sequence[str],
    *,
    min_items: int = 10,
) -> pd.DataFrame:
    """One row per family: the fit's contrast, or the reason there is none.

    Parameters
    ----------
    contrasts
        :meth:`GEEResult.contrasts` output (may be empty).
    items
        ``analyses.item_agreement`` output for the same table.
    families
        The families to list (the study's, or the eight of the toolkit), in order;
        categories of the table not among them are appended.
    min_items
        A contrast with fewer items than this on either side is withheld (thin cell).

    Returns
    -------
    DataFrame
        :data:`CONTRAST_COLUMNS`: the contrast columns, ``n_items_objective`` and
        ``n_items_subjective`` (items with a defined C_i), and ``reason`` (empty where a
        value is reported). Holm's adjustment is recomputed over the rows reported.
    """
    pert = items[items["category"] != REFERENCE]
    present = set(pert["category"])
    order = list(dict.fromkeys([*families, *sorted(present)]))
    fit = contrasts.set_index("category") if len(contrasts) else pd.DataFrame()
    defined = pert[pert["c_i"].notna()]
    n_items = (
        defined.assign(_item=_item_key(defined))
        .groupby(["category", "dataset_type"])["_item"]
        .nunique()
    )
    rows = []
    for cat in order:
        n_obj = int(n_items.get((cat, "objective"), 0))
        n_subj = int(n_items.get((cat, "subjective"), 0))
        row: dict[str, object] = {c: np.nan for c in CONTRAST_COLUMNS}
        row.update(category=cat, n_items_objective=n_obj, n_items_subjective=n_subj, reason="")
        if cat in fit.index and min(n_obj, n_subj) >= min_items:
            for c in ("objective", "subjective", "difference", "se", "z", "p_value"):
                row[c] = float(fit.at[cat, c])
            row["ci_low"], row["ci_high"] = (
                float(fit.at[cat, "ci_low"]),
                float(fit.at[cat, "ci_high"]),
            )
        else:
            row["reason"] = _why_not(cat, pert, present, min_items)
        rows.append(row)
    out = pd.DataFrame(rows, columns=CONTRAST_COLUMNS)
    p = out["p_value"].to_numpy(dtype=float)
    ok = np.isfinite(p)
    if ok.any():
        from statsmodels.stats.multitest import multipletests

        holm = np.full(p.size, np.nan)
        holm[ok] = multipletests(p[ok], method="holm")[1]
        out["p_holm"] = holm
    return out


def contrasts_by_model(
    t: pd.DataFrame,
    families: Sequence[str],
    *,
    cluster: str = "item",
    min_items: int = 10,
) -> tuple[pd.DataFrame, list[str]]:
    """Objective - subjective contrasts per category, each model fitted on its own.

    Fits ``agree ~ dataset_type * category`` (binomial GEE, exchangeable, robust; see
    :func:`analyses.gee.gee`) to each model's rows and lists every family as in
    :func:`contrast_rows` (Holm within each model).

    Returns
    -------
    (DataFrame, notes)
        ``model`` followed by :data:`CONTRAST_COLUMNS`; notes name a model whose fit
        failed and why.
    """
    frames, notes = [], []
    for model, rows in t.groupby("model", sort=True):
        rows = rows.reset_index(drop=True)
        ps = prompt_sets(rows)
        items = items_frame(ps)
        try:
            fit = gee_loaded(rows, "agree ~ dataset_type * category", cluster, ps=ps)
            c = fit.contrasts()
        except (RobustnessError, ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
            notes.append(f"per-model contrasts of {model!r}: the fit failed ({exc}).")
            c = pd.DataFrame(columns=CONTRAST_COLUMNS)
        frames.append(contrast_rows(c, items, families, min_items=min_items).assign(model=model))
    if not frames:
        return pd.DataFrame(columns=["model", *CONTRAST_COLUMNS]), notes
    out = pd.concat(frames, ignore_index=True)
    return out[["model", *CONTRAST_COLUMNS]], notes
