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

References
----------
Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application.
Cambridge University Press (ch. 3, resampling hierarchical data).
Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data. Journal of the Royal
Statistical Society B 69(3), 369-390.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses.agreement import items_frame
from analyses.prompt_sets import prompt_sets
from analyses.table_input import REFERENCE, codes, load
from robustness.core.errors import AnalysisError


def bootstrap_items(
    items: pd.DataFrame,
    by: Sequence[str] = ("dataset_type", "category"),
    value: str = "c_i",
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> pd.DataFrame:
    """Stratified item bootstrap of the mean of ``value`` per ``by`` cell (item-level frame in).

    Parameters
    ----------
    items
        One row per prompt set with ``dataset``, ``item_id``, the ``by`` columns and
        ``value`` (e.g. :func:`analyses.item_agreement` output); rows whose ``value`` is
        missing are left out.
    by
        The columns that define a cell.
    value
        The column averaged.
    n_boot
        Bootstrap replicates.
    level
        Coverage of the percentile interval.
    seed
        Seed or :class:`numpy.random.Generator` of the resampling.

    Returns
    -------
    pandas.DataFrame
        One row per cell: the ``by`` columns; ``estimate`` (the mean of ``value`` over the
        cell's prompt sets); ``ci_low``, ``ci_high`` (the percentile interval at
        ``level``); ``se`` (standard deviation of the replicates, ddof 1); ``n_sets``
        (prompt sets in the cell); ``n_items`` (items with a set in the cell).  When
        ``by`` includes ``dataset_type`` and both types are present, extra rows with
        ``dataset_type == 'objective - subjective'`` hold the gap of every remaining cell
        (estimate, interval and se from the same replicates; the counts summed).

    Notes
    -----
    With w_bi the number of times item i is drawn in replicate b (items drawn with
    replacement within their dataset, each dataset keeping its number of items),
    S_ik the sum of ``value`` over item i's sets in cell k and N_ik their number,

        theta_bk = sum_i w_bi S_ik / sum_i w_bi N_ik,

    and the interval is [q_{(1 - level)/2}, q_{(1 + level)/2}] of theta_bk over b
    (percentile method, Efron & Tibshirani 1993, ch. 13).  Resampling whole items keeps
    the dependence of an item's prompt sets (cluster bootstrap: Davison & Hinkley 1997,
    ch. 3; Field & Welsh 2007).

    References
    ----------
    Efron & Tibshirani (1993), ch. 13; Davison & Hinkley (1997), ch. 3; Field & Welsh
    (2007): see the module.

    Examples
    --------
    With one dataset and one set per item this is the ordinary bootstrap of a mean; its
    standard error should be close to the ideal bootstrap value sqrt(sum (x - mean)^2) / n:

    >>> import numpy as np, pandas as pd
    >>> from analyses import bootstrap_items
    >>> x = np.random.default_rng(1).uniform(0.3, 1.0, 40)
    >>> items = pd.DataFrame({"dataset": "d", "item_id": range(40), "dataset_type": "objective",
    ...                       "category": "paraphrase", "c_i": x})
    >>> r = bootstrap_items(items, n_boot=4000, seed=0).iloc[0]
    >>> bool(np.isclose(r["estimate"], x.mean()))
    True
    >>> ideal = np.sqrt(((x - x.mean()) ** 2).sum()) / x.size
    >>> bool(abs(r["se"] - ideal) / ideal < 0.05), bool(r["ci_low"] < x.mean() < r["ci_high"])
    (True, True)
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

    Parameters
    ----------
    df
        Long table with at least ``model, dataset, dataset_type, item_id,
        category, variant_id, answer, valid``.
    by
        Columns of the prompt sets that define a cell.
    n_boot, level, seed
        As :func:`bootstrap_items`.

    Returns
    -------
    pandas.DataFrame
        :func:`bootstrap_items`'s columns (``by``, ``estimate``, ``ci_low``, ``ci_high``,
        ``se``, ``n_sets``, ``n_items``) for the mean C_i of each cell; category
        ``original`` is left out; with ``dataset_type`` in ``by``, extra rows
        ``dataset_type == 'objective - subjective'`` hold the gap with its interval.

    Notes
    -----
    C_i = max_y n_i(y) / N_i per prompt set (Kamal et al. 2026, eq. 1), then the
    stratified cluster bootstrap of :func:`bootstrap_items` over items: theta_bk =
    sum_i w_bi S_ik / sum_i w_bi N_ik, percentile interval (Efron & Tibshirani 1993,
    ch. 13).

    References
    ----------
    Kamal et al. (2026), eq. 1; Efron & Tibshirani (1993); Davison & Hinkley (1997);
    Field & Welsh (2007): see the module.

    Examples
    --------
    >>> from analyses import bootstrap_agreement
    >>> from analyses.synthetic import synthetic_table
    >>> b = bootstrap_agreement(synthetic_table(models=2, n_items=10, seed=1), n_boot=200)
    >>> bool(((b["ci_low"] <= b["estimate"]) & (b["estimate"] <= b["ci_high"])).all())
    True

    The estimate is the plain mean of C_i over the cell's prompt sets:

    >>> from analyses import item_agreement
    >>> t = synthetic_table(models=2, n_items=10, seed=1)
    >>> c = item_agreement(t).query("category == 'framing' and dataset_type == 'objective'")
    >>> e = b.query("category == 'framing' and dataset_type == 'objective'")["estimate"]
    >>> round(float(e.iloc[0]), 6) == round(float(c["c_i"].mean()), 6)
    True
    """
    items = items_frame(prompt_sets(load(df)))
    items = items[items["category"] != REFERENCE]
    return bootstrap_items(items, by=by, n_boot=n_boot, level=level, seed=seed)
