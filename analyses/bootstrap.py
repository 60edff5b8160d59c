"""Cluster-bootstrap confidence intervals for mean agreement (resampling items).

Prompt sets of the same item are not independent (the same item is answered by
every model under every category, and items differ in how unstable they
are), so intervals for mean C_i resample whole items.  Items are drawn with
replacement within their dataset (a stratified cluster bootstrap: each
replicate keeps every dataset's number of items), every prompt set of a drawn
item comes along, and the statistic is recomputed:

    mean C_i of cell k in replicate b = sum_i w_bi S_ik / sum_i w_bi N_ik,

with w_bi the number of times item i was drawn, S_ik the sum of C_i over item
i's prompt sets in cell k and N_ik their number.  The interval is the
percentile interval of the replicates (Efron & Tibshirani 1993, ch. 13).  The
objective - subjective gap per category is bootstrapped from the same replicates.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses._counts import prompt_sets
from analyses._data import REFERENCE, codes, load
from analyses.agreement import items_frame
from robustness.errors import AnalysisError


def bootstrap_items(
    items: pd.DataFrame,
    by: Sequence[str] = ("dataset_type", "category"),
    value: str = "c_i",
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> pd.DataFrame:
    """Stratified item bootstrap of the mean of ``value`` per ``by`` cell (item-level frame in).

    ``items`` has one row per prompt set with ``dataset``, ``item_id``, the ``by``
    columns and ``value`` (e.g. :func:`analyses.item_agreement` output).  When
    ``by`` includes ``dataset_type`` and both types are present, rows with
    ``dataset_type == 'objective - subjective'`` give the bootstrapped gap per
    remaining cell.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    x = items[items[value].notna()].reset_index(drop=True)
    if x.empty:
        raise AnalysisError(f"no prompt set has a value of {value!r} to bootstrap.")
    item, item_keys = codes(x, ["dataset", "item_id"])
    cell, cell_keys = codes(x, list(by))
    n_items, n_cells = len(item_keys), len(cell_keys)
    sums = np.zeros((n_items, n_cells))
    counts = np.zeros((n_items, n_cells))
    np.add.at(sums, (item, cell), x[value].to_numpy(float))
    np.add.at(counts, (item, cell), 1.0)
    # multinomial draw counts per item, within each dataset
    weights = np.zeros((n_boot, n_items))
    strata = item_keys["dataset"].to_numpy(object)
    for ds in pd.unique(strata):
        members = np.flatnonzero(strata == ds)
        weights[:, members] = rng.multinomial(
            members.size, np.full(members.size, 1 / members.size), size=n_boot
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (weights @ sums) / (weights @ counts)  # n_boot x n_cells
        point = sums.sum(axis=0) / counts.sum(axis=0)
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    out = cell_keys.copy()
    out["estimate"] = point
    out["ci_low"] = np.nanquantile(reps, lo_q, axis=0)
    out["ci_high"] = np.nanquantile(reps, hi_q, axis=0)
    out["se"] = np.nanstd(reps, axis=0, ddof=1)
    out["n_sets"] = counts.sum(axis=0).astype(np.int64)
    out["n_items"] = (counts > 0).sum(axis=0).astype(np.int64)
    frames = [out]
    if "dataset_type" in by and set(cell_keys["dataset_type"]) >= {"objective", "subjective"}:
        rest = [b for b in by if b != "dataset_type"]
        index = {tuple(r): k for k, r in enumerate(cell_keys[list(by)].itertuples(index=False))}
        pos = list(by).index("dataset_type")
        gaps = []
        seen = sorted({tuple(v for j, v in enumerate(k) if j != pos) for k in index}, key=str)
        for other in seen:

            def full(t, other=other):
                vals = list(other)
                vals.insert(pos, t)
                return tuple(vals)

            a, b = index.get(full("objective")), index.get(full("subjective"))
            if a is None or b is None:
                continue
            d = reps[:, a] - reps[:, b]
            gaps.append(
                {
                    **dict(zip(rest, other, strict=True)),
                    "dataset_type": "objective - subjective",
                    "estimate": point[a] - point[b],
                    "ci_low": np.nanquantile(d, lo_q),
                    "ci_high": np.nanquantile(d, hi_q),
                    "se": np.nanstd(d, ddof=1),
                    "n_sets": int(out["n_sets"][a] + out["n_sets"][b]),
                    "n_items": int(out["n_items"][a] + out["n_items"][b]),
                }
            )
        if gaps:
            frames.append(pd.DataFrame(gaps)[out.columns])
    return pd.concat(frames, ignore_index=True)


def bootstrap_agreement(
    df: pd.DataFrame,
    by: Sequence[str] = ("dataset_type", "category"),
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> pd.DataFrame:
    """Mean agreement C_i (Kamal et al. eq. 1) per cell with cluster-bootstrap intervals.

    Resamples items within datasets (see the module docstring) ``n_boot`` times;
    percentile intervals at ``level``.  Category ``original`` is left out.
    Columns: ``by``, ``estimate``, ``ci_low``, ``ci_high``, ``se``, ``n_sets``,
    ``n_items``; with ``dataset_type`` in ``by``, extra rows
    ``dataset_type == 'objective - subjective'`` hold the gap with its interval.

    Examples
    --------
    >>> from analyses import bootstrap_agreement
    >>> from analyses.synthetic import synthetic_table
    >>> b = bootstrap_agreement(synthetic_table(models=2, n_items=10, seed=1), n_boot=200)
    >>> bool(((b["ci_low"] <= b["estimate"]) & (b["estimate"] <= b["ci_high"])).all())
    True
    """
    items = items_frame(prompt_sets(load(df)))
    items = items[items["category"] != REFERENCE]
    return bootstrap_items(items, by=by, n_boot=n_boot, level=level, seed=seed)
