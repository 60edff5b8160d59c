"""Summary tables the report shows beside the models: flips, datasets, confidence, fragile items.

- :func:`flip_summary`: mean flip rate against the original prompt per model x dataset
  type x category (the measure that stays defined where a prompt set has one answer);
- :func:`dataset_means`: mean C_i per model x dataset x category (Kamal et al., Figure 1);
- :func:`confidence_sensitivity`: Pearson's r between an item's mean decoding confidence
  (ProSA eq. 3) and its sensitivity S_i (ProSA eq. 1), per model, with n and p, withheld
  below a minimum number of items;
- :func:`fragile_items`: the (model, item) pairs with the lowest mean C_i, with every
  variant's answer, so a reader can look at what moved.

References
----------
Kamal et al. (2026), eq. 1 and Figure 1.
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

from analyses._data import REFERENCE

__all__ = ["confidence_sensitivity", "dataset_means", "flip_summary", "fragile_items"]

#: Fewest items for Pearson's r whatever ``min_items`` says: with two points r is +-1 and
#: its test has no degree of freedom.
PEARSON_MIN = 3

FRAGILE_COLUMNS = (
    "category",
    "variant_id",
    "label",
    "answer",
    "invalid_reason",
    "raw_output",
    "prompt",
)


def flip_summary(flips: pd.DataFrame) -> pd.DataFrame:
    """Mean flip rate per model x dataset type x category (from ``analyses.flip_rate``).

    Parameters
    ----------
    flips
        :func:`analyses.flip_rate` output (one row per prompt set); rows with a missing
        ``flip_rate`` are left out.

    Returns
    -------
    DataFrame
        ``model, dataset_type, category``; ``flip_rate`` (the mean over items of the share
        of valid variants answering other than the original prompt); ``n_items`` (items,
        i.e. distinct (dataset, item_id), behind the mean); ``n_variants`` (valid variants
        summed over them).

    Notes
    -----
    flip rate of a cell = (1 / |I|) sum_{i in I} f_i, f_i = n_flipped_i / n_valid_i: every
    item weighs the same, whatever its number of valid variants.  The flip rate stays
    defined for a one-variant set, where C_i (Kamal et al. 2026, eq. 1) is not.

    References
    ----------
    Kamal et al. (2026), eq. 1 (the agreement it complements).

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import flip_summary
    >>> flips = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": ["a", "b", "c"], "category": "paraphrase",
    ...     "n_valid": [4, 2, 1], "flip_rate": [0.25, 0.5, None]})
    >>> r = flip_summary(flips).iloc[0]
    >>> float(r["flip_rate"]), int(r["n_items"]), int(r["n_variants"]), (0.25 + 0.5) / 2
    (0.375, 2, 6, 0.375)
    """
    x = flips[flips["flip_rate"].notna()]
    cols = ["model", "dataset_type", "category", "flip_rate", "n_items", "n_variants"]
    if x.empty:
        return pd.DataFrame(columns=cols)
    x = x.assign(_item=x["dataset"].astype(str) + "\x1f" + x["item_id"].astype(str))
    out = (
        x.groupby(["model", "dataset_type", "category"], sort=True)
        .agg(
            flip_rate=("flip_rate", "mean"),
            n_items=("_item", "nunique"),
            n_variants=("n_valid", "sum"),
        )
        .reset_index()
    )
    return out[cols]


def dataset_means(items: pd.DataFrame) -> pd.DataFrame:
    """Mean C_i (Kamal et al. eq. 1) per model x dataset x category, with item counts.

    Parameters
    ----------
    items
        :func:`analyses.item_agreement` output; ``original`` and sets without a C_i are
        left out.

    Returns
    -------
    DataFrame
        ``model, dataset, dataset_type, category``; ``c_i`` (mean C_i over the cell's
        prompt sets); ``sd`` (their standard deviation, ddof 1; NaN for one set);
        ``n_items`` (distinct items).

    Notes
    -----
    c_i of a cell = (1 / |I|) sum_{i in I} C_i, C_i = max_y n_i(y) / N_i (Kamal et al.
    2026, eq. 1); the cells of their Figure 1.

    References
    ----------
    Kamal et al. (2026), eq. 1 and Figure 1.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from analyses import dataset_means
    >>> items = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "subjective",
    ...     "item_id": ["a", "b", "c"], "category": "paraphrase", "c_i": [1.0, 0.6, 0.5]})
    >>> r = dataset_means(items).iloc[0]
    >>> round(float(r["c_i"]), 4), round(float(r["sd"]), 4), int(r["n_items"])
    (0.7, 0.2646, 3)
    >>> round(float(np.mean([1.0, 0.6, 0.5])), 4), round(float(np.std([1.0, 0.6, 0.5], ddof=1)), 4)
    (0.7, 0.2646)
    """
    x = items[(items["category"] != REFERENCE) & items["c_i"].notna()]
    cols = ["model", "dataset", "dataset_type", "category", "c_i", "sd", "n_items"]
    if x.empty:
        return pd.DataFrame(columns=cols)
    out = (
        x.groupby(["model", "dataset", "category"], sort=True)
        .agg(
            dataset_type=("dataset_type", "first"),
            c_i=("c_i", "mean"),
            sd=("c_i", "std"),
            n_items=("item_id", "nunique"),
        )
        .reset_index()
    )
    return out[cols]


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


def fragile_items(t: pd.DataFrame, items: pd.DataFrame, n: int = 5) -> pd.DataFrame:
    """The ``n`` (model, item) pairs with the lowest mean C_i, with every variant's answer.

    Parameters
    ----------
    t
        The long table the items came from (its rows are listed).
    items
        :func:`analyses.item_agreement` output of ``t``.
    n
        How many (model, item) pairs to list.

    Returns
    -------
    DataFrame
        One row per table row of the listed pairs: ``rank`` (1 the least stable),
        ``model, dataset, item_id, dataset_type``, ``mean_c_i`` (the pair's mean C_i over
        its perturbation categories) and the columns of :data:`FRAGILE_COLUMNS` the
        table has (``category, variant_id, label, answer, invalid_reason, raw_output,
        prompt``).

    Notes
    -----
    mean_c_i of (model, item) = (1 / |K|) sum_{k in K} C_ik over the perturbation
    categories K with a defined C_i (Kamal et al. 2026, eq. 1); pairs are ordered by it,
    ties broken by model, dataset and item id.

    References
    ----------
    Kamal et al. (2026), eq. 1.

    Examples
    --------
    >>> from analyses import fragile_items, item_agreement
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=1, n_items=4, seed=5)
    >>> items = item_agreement(t)
    >>> f = fragile_items(t, items, n=1)
    >>> key = f.loc[0, ["dataset", "item_id"]].tolist()
    >>> hand = items[(items["dataset"] == key[0]) & (items["item_id"] == key[1])
    ...              & (items["category"] != "original")]["c_i"].mean()
    >>> round(float(f.loc[0, "mean_c_i"]), 6) == round(float(hand), 6)
    True
    >>> bool(hand <= items.query("category != 'original'").groupby(
    ...     ["dataset", "item_id"])["c_i"].mean().min() + 1e-12)
    True
    """
    x = items[(items["category"] != REFERENCE) & items["c_i"].notna()]
    keep = [c for c in FRAGILE_COLUMNS if c in t.columns]
    head = ["rank", "model", "dataset", "item_id", "dataset_type", "mean_c_i"]
    if x.empty:
        return pd.DataFrame(columns=[*head, *keep])
    means = (
        x.groupby(["model", "dataset", "item_id", "dataset_type"])["c_i"]
        .mean()
        .reset_index()
        .sort_values(["c_i", "model", "dataset", "item_id"])
        .head(n)
    )
    frames = []
    for rank, r in enumerate(means.itertuples(index=False), start=1):
        rows = t[
            (t["model"] == r.model) & (t["dataset"] == r.dataset) & (t["item_id"] == r.item_id)
        ]
        frame = rows[keep].reset_index(drop=True)
        if "answer" in frame.columns:
            frame["answer"] = frame["answer"].astype("Int64")
        for col, value in zip(
            head,
            (rank, r.model, r.dataset, r.item_id, r.dataset_type, float(r.c_i)),
            strict=True,
        ):
            frame.insert(head.index(col), col, value)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
