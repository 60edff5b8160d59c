"""Accuracy per category and its drop against the original prompt (objective items).

    accuracy(c) = (1 / n_c) sum_{valid rows r of category c} 1[answer_r = gold_r]
    drop(c)     = accuracy(original) - accuracy(c)

per model and dataset; a positive drop means the perturbation hurts.  Invalid
rows are excluded (``n_invalid``) and ``valid_rate`` reports how many rows
parsed; ``accuracy_all`` counts invalid rows as wrong, for readers who prefer that.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses._data import REFERENCE, correct_column, load


def accuracy(
    df: pd.DataFrame, by: Sequence[str] = ("model", "dataset", "category")
) -> pd.DataFrame:
    """Accuracy over valid rows of items with gold, per ``by`` group.

    Columns: ``by``, ``accuracy``, ``n`` (valid rows scored), ``n_invalid``,
    ``valid_rate``, ``accuracy_all`` (invalid rows counted wrong).

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import accuracy
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": ["a", "b", "c"], "category": "original", "variant_id": "o/0",
    ...     "answer": [1, 0, None], "gold": 1, "valid": [True, True, False]})
    >>> accuracy(t)[["accuracy", "n", "n_invalid", "accuracy_all"]].values.tolist()
    [[0.5, 2.0, 1.0, 0.3333333333333333]]
    """
    t = load(df, optional=("gold", "correct", *[c for c in by if c in df.columns]))
    return accuracy_loaded(t, by)


def accuracy_loaded(
    t: pd.DataFrame, by: Sequence[str] = ("model", "dataset", "category")
) -> pd.DataFrame:
    """:func:`accuracy` on a table already checked by ``load`` (used by the pipeline)."""
    y = correct_column(t)
    if y is None:
        raise ValueError("accuracy needs a 'correct' or a 'gold' column.")
    for c in by:
        if c not in t.columns:
            raise ValueError(f"accuracy: the table has no column {c!r}.")
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    gold_known = ~np.isnan(y) | (~valid & (t["dataset_type"] == "objective").to_numpy())
    frame = t.loc[gold_known, list(by)].astype(object)
    frame["_y"] = y[gold_known]
    frame["_inv"] = ~valid[gold_known]
    g = frame.groupby(list(by), sort=True)
    out = g.agg(
        accuracy=("_y", "mean"),
        n=("_y", "count"),
        n_invalid=("_inv", "sum"),
        rows=("_inv", "size"),
        correct=("_y", "sum"),
    ).reset_index()
    out["valid_rate"] = 1 - out["n_invalid"] / out["rows"]
    out["accuracy_all"] = out["correct"] / out["rows"]
    return out[[*by, "accuracy", "n", "n_invalid", "valid_rate", "accuracy_all"]]


def accuracy_drop(df: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per (model, dataset, category) and its drop from the original prompt.

    Columns: ``model, dataset, category, accuracy, n, n_invalid, valid_rate,
    accuracy_all, accuracy_original, drop`` with ``drop = accuracy_original -
    accuracy``; the ``original`` rows themselves are not repeated.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import accuracy_drop
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": ["a", "b", "a", "b"], "category": ["original"] * 2 + ["framing"] * 2,
    ...     "variant_id": ["o/0", "o/0", "f/0", "f/0"], "answer": [1, 1, 1, 0], "gold": 1,
    ...     "valid": True})
    >>> float(accuracy_drop(t)["drop"].iloc[0])
    0.5
    """
    return drop_from(accuracy(df, by=("model", "dataset", "category")))


def drop_from(acc: pd.DataFrame) -> pd.DataFrame:
    """The drop columns from :func:`accuracy` output by (model, dataset, category)."""
    orig = acc[acc["category"] == REFERENCE][["model", "dataset", "accuracy"]]
    out = acc[acc["category"] != REFERENCE].merge(
        orig.rename(columns={"accuracy": "accuracy_original"}), on=["model", "dataset"], how="left"
    )
    out["drop"] = out["accuracy_original"] - out["accuracy"]
    return out.reset_index(drop=True)
