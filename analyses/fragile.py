"""The (model, item) pairs with the lowest mean C_i, with every variant's answer.

So a reader can look at what moved (Kamal et al. eq. 1 for C_i).

References
----------
Kamal et al. (2026), eq. 1 and Figure 1.
"""

from __future__ import annotations

import pandas as pd

from analyses.table_input import REFERENCE

__all__ = ["FRAGILE_COLUMNS", "fragile_items"]

FRAGILE_COLUMNS = (
    "category",
    "variant_id",
    "label",
    "answer",
    "invalid_reason",
    "raw_output",
    "prompt",
)


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
