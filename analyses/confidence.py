"""Pearson's r between an item's mean decoding confidence (ProSA eq. 3) and its S_i.

Per model, with n and p, withheld below a minimum number of items (ProSA eq. 1 for S_i).

References
----------
Zhuo, J. et al. (2024). ProSA: Assessing and understanding the prompt sensitivity of LLMs.
Findings of EMNLP 2024.
Pearson, K. (1895). Note on regression and inheritance in the case of two parents.
Proceedings of the Royal Society of London 58, 240-242.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["PEARSON_MIN", "confidence_sensitivity"]

#: Fewest items for Pearson's r whatever ``min_items`` says: with two points r is +-1 and
#: its test has no degree of freedom.
PEARSON_MIN = 3


def confidence_sensitivity(
    t: pd.DataFrame, pss_items: pd.DataFrame, *, min_items: int = 10
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pearson's r between mean confidence and S_i per model (ProSA's link), with n and p.

    Parameters
    ----------
    t
        The validated table (``confidence`` when the runs recorded it).
    pss_items
        ``analyses.pss_items`` output.
    min_items
        Fewer items than this (or than :data:`PEARSON_MIN`): r is not computed (``note``
        says so).

    Returns
    -------
    (tests, points)
        ``tests``: ``model, n_items, r, p_value, note``; ``points``: ``model, dataset,
        dataset_type, item_id, confidence, s_i`` (the items behind each r).

    Notes
    -----
    S_i is the share of discordant variant pairs over all of an item's variants (ProSA
    eq. 1 with Y the answer, category ``all``); confidence is the mean top next-token
    probability of the item's valid prompts (ProSA eq. 3). p is scipy's two-sided test of
    r = 0 (``scipy.stats.pearsonr``):

        r = sum_i (c_i - c)(s_i - s) / sqrt(sum_i (c_i - c)^2 sum_i (s_i - s)^2),
        t = r sqrt((n - 2) / (1 - r^2)) ~ Student t with n - 2 degrees of freedom.

    References
    ----------
    Zhuo et al. (2024), eq. 1 and 3; Pearson (1895): see the module.

    Examples
    --------
    r and p against pingouin's Pearson correlation of the same points:

    >>> import pingouin as pg
    >>> from analyses import confidence_sensitivity, pss_items
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=1, n_items=5, seed=4)
    >>> tests, points = confidence_sensitivity(t, pss_items(t))
    >>> ref = pg.corr(points["confidence"], points["s_i"])
    >>> r = tests.iloc[0]
    >>> int(r["n_items"]) == len(points) == 20
    True
    >>> round(float(r["r"]), 4) == round(float(ref["r"].iloc[0]), 4)
    True
    >>> round(float(r["p_value"]), 4) == round(float(ref["p_val"].iloc[0]), 4)
    True
    """
    cols = ["model", "n_items", "r", "p_value", "note"]
    pcols = ["model", "dataset", "dataset_type", "item_id", "confidence", "s_i"]
    if "confidence" not in t.columns or not t["confidence"].notna().any():
        return pd.DataFrame(columns=cols), pd.DataFrame(columns=pcols)
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    conf = (
        t[valid]
        .groupby(["model", "dataset", "item_id"], sort=True)["confidence"]
        .mean()
        .reset_index()
    )
    s_all = pss_items[(pss_items["category"] == "all") & (pss_items["score"] == "answer")]
    points = s_all.merge(conf, on=["model", "dataset", "item_id"]).dropna(
        subset=["confidence", "s_i"]
    )[pcols]
    rows = []
    for model, g in points.groupby("model", sort=True):
        n = len(g)
        row: dict[str, object] = {"model": model, "n_items": n, "r": np.nan, "p_value": np.nan}
        if n < max(min_items, PEARSON_MIN):
            need = max(min_items, PEARSON_MIN)
            row["note"] = f"not computed: {n} items (at least {need} needed)"
        elif g["confidence"].std() == 0 or g["s_i"].std() == 0:
            row["note"] = "not computed: confidence or S_i is constant"
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r, p = stats.pearsonr(g["confidence"], g["s_i"])
            row.update(r=float(r), p_value=float(p), note="")
        rows.append(row)
    return pd.DataFrame(rows, columns=cols), points.reset_index(drop=True)
