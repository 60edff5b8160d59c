"""Mean C_i per model x dataset x category (Kamal et al., Figure 1), with item counts.

References
----------
Kamal et al. (2026), eq. 1 and Figure 1.
"""

from __future__ import annotations

import pandas as pd

from analyses.table_input import REFERENCE

__all__ = ["dataset_means"]


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
