"""Accuracy on the original prompt beside chance: is a model answering, or guessing?

A model whose accuracy on the original prompt is within the binomial interval of chance
(1/K for an item with K options) is not answering the questions: whatever agreement its
answers show across prompts measures a preference for a label or a position, not the
stability of a belief. :func:`accuracy_vs_chance` gives the numbers that say so, per model
and dataset; :func:`label_concentration` how often the original prompt's answer is the
model's most frequent displayed label.

References
----------
Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated
in the case of the binomial. Biometrika 26(4), 404-413.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analyses.table_input import REFERENCE, correct_column, load, n_options

__all__ = ["CHANCE_COLUMNS", "accuracy_vs_chance", "clopper_pearson", "label_concentration"]

CHANCE_COLUMNS = [
    "model",
    "dataset",
    "n_items",
    "n_correct",
    "n_invalid",
    "accuracy",
    "ci_low",
    "ci_high",
    "chance",
    "p_value",
    "verdict",
]


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial proportion k / n.

    Parameters
    ----------
    k, n
        Successes and trials (0 <= k <= n, n >= 1).
    confidence
        Coverage of the interval.

    Returns
    -------
    (float, float)
        The lower and upper bound.

    Notes
    -----
    lower = B^{-1}(alpha/2; k, n - k + 1) (0 when k = 0), upper = B^{-1}(1 - alpha/2;
    k + 1, n - k) (1 when k = n), with B^{-1} the beta quantile and alpha = 1 - confidence
    (Clopper & Pearson 1934, eq. for the "central" interval).

    References
    ----------
    Clopper & Pearson (1934): see the module.

    Examples
    --------
    >>> lo, hi = clopper_pearson(1, 12)
    >>> round(lo, 4), round(hi, 4)
    (0.0021, 0.3848)
    """
    alpha = 1.0 - confidence
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def accuracy_vs_chance(
    table: pd.DataFrame, *, confidence: float = 0.95, invalid: str = "wrong"
) -> pd.DataFrame:
    """Accuracy under the original prompt per model and dataset, with chance beside it.

    Parameters
    ----------
    table
        A long table with ``gold`` or ``correct`` (objective items); K comes from
        ``n_options``, else from ``option_probs``, else the largest answer + 1 per dataset.
    confidence
        Coverage of the accuracy's interval.
    invalid
        ``'wrong'`` (default: an invalid answer is not a correct one) or ``'drop'``.

    Returns
    -------
    DataFrame
        One row per model x dataset with a gold answer: ``model, dataset``; ``n_items``
        (original-prompt rows scored), ``n_correct``, ``n_invalid``; ``accuracy`` and its
        Clopper-Pearson interval ``ci_low, ci_high``; ``chance`` (the mean of 1/K over the
        items); ``p_value`` (two-sided exact binomial test of accuracy = chance);
        ``verdict``: ``'below chance'`` (the interval lies under chance), ``'at chance'``
        (chance is inside the interval) or ``'above chance'``.

    Notes
    -----
    accuracy = n_correct / n_items; the interval is :func:`clopper_pearson`; chance =
    (1 / n) sum_i 1 / K_i, the expected accuracy of a model that picks an option uniformly at
    random. With K that differs between items the number correct under that model is
    Poisson-binomial; the binomial test at the mean chance is its usual approximation.

    References
    ----------
    Clopper & Pearson (1934): see the module.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": [f"q{i}" for i in range(12)], "category": "original",
    ...     "variant_id": "original/0", "answer": [1] * 12, "valid": True,
    ...     "gold": [1] + [0] * 11, "n_options": 4})
    >>> r = accuracy_vs_chance(t).iloc[0]
    >>> [round(float(r[c]), 4) for c in ("accuracy", "ci_low", "ci_high", "chance")]
    [0.0833, 0.0021, 0.3848, 0.25]
    >>> r["verdict"]
    'at chance'
    """
    if invalid not in ("wrong", "drop"):
        raise ValueError(f"invalid must be 'wrong' or 'drop', not {invalid!r}.")
    optional = [c for c in ("gold", "correct", "n_options", "option_probs") if c in table.columns]
    t = load(table, optional=optional)
    correct = correct_column(t)
    if correct is None:
        return pd.DataFrame(columns=CHANCE_COLUMNS)
    k, _ = n_options(t)
    has_gold = t["gold"].notna().to_numpy() if "gold" in t.columns else ~np.isnan(correct)
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    keep = (t["category"] == REFERENCE).to_numpy() & (t["dataset_type"] == "objective").to_numpy()
    keep &= has_gold | ~valid
    if invalid == "drop":
        keep &= valid
    frame = pd.DataFrame(
        {
            "model": t["model"].to_numpy(dtype=object)[keep],
            "dataset": t["dataset"].to_numpy(dtype=object)[keep],
            "correct": np.nan_to_num(correct[keep], nan=0.0),
            "invalid": (~valid)[keep],
            "chance": 1.0 / k[keep],
        }
    )
    rows = []
    for (model, dataset), g in frame.groupby(["model", "dataset"], sort=True):
        n, hits = len(g), int(g["correct"].sum())
        chance = float(g["chance"].mean())
        lo, hi = clopper_pearson(hits, n, confidence)
        p = float(stats.binomtest(hits, n, chance).pvalue)
        verdict = "below chance" if hi < chance else "at chance" if lo <= chance else "above chance"
        rows.append(
            [model, dataset, n, hits, int(g["invalid"].sum()), hits / n, lo, hi, chance, p, verdict]
        )
    return pd.DataFrame(rows, columns=CHANCE_COLUMNS)


def label_concentration(table: pd.DataFrame) -> pd.DataFrame:
    """How often the original prompt's answer is the model's most frequent displayed label.

    Parameters
    ----------
    table
        A long table with a ``label`` column (the displayed label the model gave).

    Returns
    -------
    DataFrame
        One row per model x dataset type: ``model, dataset_type, label`` (the most frequent
        valid label under the original prompt; ties to the first in sort order),
        ``n_label`` (items answered with it) and ``n_items`` (items with a valid original
        answer). Empty without a ``label`` column.

    Notes
    -----
    n_label = max_l #{items i : label_i = l} over the valid original-prompt rows: the count
    behind "answers B on 17 of 24 items", which, set beside 1/K, shows a position or label
    preference.

    References
    ----------
    Clopper & Pearson (1934): see the module (the interval that goes with it).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": ["a", "b", "c"], "category": "original", "variant_id": "original/0",
    ...     "answer": [1, 1, 0], "valid": True, "label": ["B", "B", "A"]})
    >>> label_concentration(t)[["label", "n_label", "n_items"]].values.tolist()
    [['B', 2, 3]]
    """
    cols = ["model", "dataset_type", "label", "n_label", "n_items"]
    if "label" not in table.columns:
        return pd.DataFrame(columns=cols)
    t = load(table, optional=["label"])
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    rows = t[(t["category"] == REFERENCE).to_numpy() & valid & t["label"].notna().to_numpy()]
    out = []
    for (model, kind), g in rows.groupby(["model", "dataset_type"], sort=True):
        counts = g["label"].astype(str).value_counts()
        top = sorted(counts[counts == counts.max()].index)[0]
        out.append([model, kind, top, int(counts[top]), len(g)])
    return pd.DataFrame(out, columns=cols)
