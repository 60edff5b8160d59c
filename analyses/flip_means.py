"""Mean flip rate against the original prompt per model x dataset type x category.

The measure that stays defined where a prompt set has one answer.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["flip_summary"]


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
