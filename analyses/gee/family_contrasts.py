"""Objective - subjective contrasts with one row per family, pooled and per model.

The GEE's contrasts (:meth:`analyses.gee.GEEResult.contrasts`) exist only for the
categories the fit could estimate for both dataset types. A reader must see every
family, so :func:`contrast_rows` lists each one: with its contrast, or with the reason
it has none (no variants in the table, one dataset type only, single answers only,
too few items, or not estimable in the fit). :func:`contrasts_by_model` fits the type
comparison ``agree ~ dataset_type * category`` to each model on its own, so that no
contrast averages objective items over two models against subjective items of one.

References
----------
Kamal et al. (2026), eq. 1 and Table 3.
Liang, K.-Y. & Zeger, S. L. (1986). Longitudinal data analysis using generalized linear
models. Biometrika 73(1), 13-22.
Searle, S. R., Speed, F. M. & Milliken, G. A. (1980). Population marginal means in the
linear model: an alternative to least squares means. The American Statistician 34(4),
216-221.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
Journal of Statistics 6(2), 65-70.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses.agreement import items_frame
from analyses.gee.fit import gee_loaded_or_plain
from analyses.gee.small_sample import DEFAULT_COV_TYPE, DEFAULT_TEST
from analyses.gee.type_contrasts import CONTRAST_COLUMNS as FIT_COLUMNS
from analyses.prompt_sets import PromptSets, for_model, prompt_sets
from analyses.table_input import REFERENCE
from robustness.core.errors import RobustnessError

__all__ = ["CONTRAST_COLUMNS", "contrast_rows", "contrasts_by_model"]

#: The fit's contrast columns (:data:`analyses.gee.type_contrasts.CONTRAST_COLUMNS`), the
#: item counts behind them, and the reason a family has no value.
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

    Notes
    -----
    The contrast of category c is d_c = p_obj,c - p_subj,c, the difference of marginal
    means on the probability scale (Searle, Speed & Milliken 1980) with its delta-method
    standard error, z = d_c / se and two-sided p (see
    :meth:`analyses.gee.GEEResult.contrasts`).  Holm (1979) over the m reported p-values
    sorted p_(1) <= ... <= p_(m): p_holm,(k) = max_{j <= k} min(1, (m - j + 1) p_(j)).

    References
    ----------
    Searle, Speed & Milliken (1980); Holm (1979): see the module.

    Examples
    --------
    Two families with a contrast and one without; Holm by hand on p = 0.01, 0.04:
    min(1, 2 x 0.01) = 0.02 and max(0.02, 1 x 0.04) = 0.04.

    >>> import pandas as pd
    >>> from analyses import contrast_rows
    >>> fit = pd.DataFrame({"category": ["paraphrase", "formatting"],
    ...     "objective": [0.9, 0.8], "subjective": [0.7, 0.75], "difference": [0.2, 0.05],
    ...     "se": [0.05, 0.02], "z": [4.0, 2.5], "p_value": [0.01, 0.04],
    ...     "ci_low": [0.1, 0.01], "ci_high": [0.3, 0.09]})
    >>> items = pd.DataFrame({"dataset": "d", "item_id": ["a", "b", "c", "d"] * 2,
    ...     "dataset_type": ["objective", "objective", "subjective", "subjective"] * 2,
    ...     "category": ["paraphrase"] * 4 + ["formatting"] * 4, "c_i": 0.8})
    >>> out = contrast_rows(fit, items, ["paraphrase", "formatting", "framing"], min_items=2)
    >>> out[["category", "p_holm"]].round(4).values.tolist()[:2]
    [['paraphrase', 0.02], ['formatting', 0.04]]
    >>> out.loc[2, "reason"]
    'no variants in the table'
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
    whole: PromptSets | None = None,
    cov_type: str = DEFAULT_COV_TYPE,
    test: str = DEFAULT_TEST,
) -> tuple[pd.DataFrame, list[str]]:
    """Objective - subjective contrasts per category, each model fitted on its own.

    Fits ``agree ~ dataset_type * category`` (binomial GEE, exchangeable, robust; see
    :func:`analyses.gee.gee`) to each model's rows and lists every family as in
    :func:`contrast_rows` (Holm within each model).

    Parameters
    ----------
    t
        A validated long table.
    families
        The families to list, in order (as :func:`contrast_rows`).
    cluster
        ``'item'`` or ``'model_item'`` (the same within one model).
    min_items
        A contrast with fewer items than this on either side is withheld.
    whole
        The prompt sets of ``t`` when the caller has them (each model's are cut from them
        instead of grouping its rows again).
    cov_type, test
        As :func:`analyses.gee.paper_models.fit_models` (the same defaults).

    Returns
    -------
    (DataFrame, notes)
        ``model`` followed by :data:`CONTRAST_COLUMNS` (``category, objective,
        subjective, difference, se, z, p_value, p_holm, ci_low, ci_high,
        n_items_objective, n_items_subjective, reason``), one row per model and family;
        notes name a model whose fit failed and why.

    Notes
    -----
    Per model m: logit P(agree_ij = 1) = beta_0 + dataset_type + category + dataset_type:
    category, binomial GEE with exchangeable working correlation and robust covariance
    (Liang & Zeger 1986), clusters = items; d_c = p_obj,c - p_subj,c on the response scale
    with its delta-method se, Holm (1979) over the model's families.

    References
    ----------
    Liang & Zeger (1986); Searle, Speed & Milliken (1980); Holm (1979): see the module.

    Examples
    --------
    The contrast against statsmodels' GEE of the same rows (no separated cell here, so the
    fit is the plain GEE): the predicted agreement of each type in the category.

    >>> import warnings
    >>> import pandas as pd
    >>> import statsmodels.api as sm, statsmodels.formula.api as smf
    >>> from analyses import agreement_rows, contrasts_by_model
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=1, n_items=10, categories=("paraphrase", "formatting"),
    ...                     n_variants=4, seed=3)
    >>> c, notes = contrasts_by_model(t, ["paraphrase", "formatting"], min_items=1)
    >>> r = c.set_index("category").loc["paraphrase"]
    >>> rows = agreement_rows(t).query("category != 'original' and agree.notna()")
    >>> rows = rows.assign(agree=rows["agree"].astype(float),
    ...                    clu=rows["dataset"] + "/" + rows["item_id"]).sort_values("clu")
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ref = smf.gee("agree ~ dataset_type * category", groups="clu", data=rows,
    ...                   family=sm.families.Binomial(),
    ...                   cov_struct=sm.cov_struct.Exchangeable()).fit(ddof_scale=0)
    >>> p = ref.predict(pd.DataFrame({"dataset_type": ["objective", "subjective"],
    ...                               "category": "paraphrase"}))
    >>> round(float(r["objective"]), 4), round(float(p[0]), 4)
    (0.9237, 0.9237)
    >>> round(float(r["difference"]), 4), round(float(p[0] - p[1]), 4)
    (0.1402, 0.1402)
    """
    frames: list[pd.DataFrame] = []
    notes: list[str] = []
    for model, rows in t.groupby("model", sort=True):
        rows = rows.reset_index(drop=True)
        ps = prompt_sets(rows) if whole is None else for_model(whole, model)
        items = items_frame(ps)
        try:
            formula = "agree ~ dataset_type * category"
            fit, fallback = gee_loaded_or_plain(
                rows, formula, cluster, ps=ps, cov_type=cov_type, test=test
            )
            notes.extend(f"model {model!r}: {n}" for n in fallback)
            c = fit.contrasts()
        except (RobustnessError, ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
            notes.append(f"per-model contrasts of {model!r}: the fit failed ({exc}).")
            c = pd.DataFrame(columns=CONTRAST_COLUMNS)
        frames.append(contrast_rows(c, items, families, min_items=min_items).assign(model=model))
    if not frames:
        return pd.DataFrame(columns=["model", *CONTRAST_COLUMNS]), notes
    out = pd.concat(frames, ignore_index=True)
    return out[["model", *CONTRAST_COLUMNS]], notes
