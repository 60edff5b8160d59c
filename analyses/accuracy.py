"""Accuracy per category and its drop against the original prompt (objective items).

    accuracy(c) = (1 / n_c) sum_{rows r of category c} 1[answer_r = gold_r]
    drop(c)     = accuracy(original) - accuracy(c)

per model and dataset; a positive drop means the perturbation hurts.  An invalid
(unparseable) answer counts as wrong by default (``invalid='wrong'``), as in
FormatSpread (Sclar et al. 2024) and ProSA (Zhuo et al. 2024); ``invalid='drop'``
leaves invalid rows out of the denominator instead.  Either way ``n_invalid``
counts them and ``valid_rate`` is the share of rows that parsed.

:func:`check_invalid` and :func:`correct_outcome` are plumbing shared with the other
modules that score correctness (spread, ranking, PSS): they carry Parameters and Returns,
and the formula is the one above.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses.prompt_sets import PromptSets
from analyses.table_input import REFERENCE, correct_column, load
from robustness.core.errors import StudyError, TableError

__all__ = ["INVALID_RULES", "accuracy", "accuracy_drop", "check_invalid", "correct_outcome"]

#: How an invalid answer is scored: counted as wrong, or left out.
INVALID_RULES = ("wrong", "drop")

COLUMNS = ["accuracy", "n", "n_invalid", "valid_rate", "invalid"]


def check_invalid(invalid: str) -> None:
    """Refuse an ``invalid`` rule other than ``'wrong'`` or ``'drop'``.

    Parameters
    ----------
    invalid
        The rule a caller was given.

    Returns
    -------
    None
        Raises :class:`~robustness.core.errors.StudyError` naming the value when it is not one
        of :data:`INVALID_RULES`.
    """
    if invalid not in INVALID_RULES:
        raise StudyError(f"invalid must be 'wrong' or 'drop', not {invalid!r}.")


def correct_outcome(t: pd.DataFrame, invalid: str = "wrong") -> tuple[np.ndarray, np.ndarray]:
    """Correctness per row under the ``invalid`` rule, and which rows are invalid and scorable.

    A row has a gold answer when its ``gold`` is set or, in a table with only a
    ``correct`` column, when its item is objective.

    Parameters
    ----------
    t
        A table checked by ``analyses.table_input.load`` with ``gold`` or ``correct``.
    invalid
        ``'wrong'`` (an invalid answer scores 0) or ``'drop'`` (it is not scored).

    Returns
    -------
    (y, invalid_rows)
        ``y``: float array per row, 1.0 (correct), 0.0 (wrong) or NaN (not scored: no
        gold, or invalid under ``'drop'``); ``invalid_rows``: boolean array marking the
        invalid rows of items that have a gold answer (counted as ``n_invalid``).
    """
    check_invalid(invalid)
    y = correct_column(t)
    if y is None:
        raise TableError("correctness needs a 'correct' or a 'gold' column; the table has neither.")
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    if "gold" in t.columns:
        has_gold = t["gold"].notna().to_numpy()
    else:
        has_gold = (t["dataset_type"] == "objective").to_numpy() | ~np.isnan(y)
    bad = has_gold & ~valid
    if invalid == "wrong":
        y = y.copy()
        y[bad] = 0.0
    return y, bad


def accuracy(
    df: pd.DataFrame,
    by: Sequence[str] = ("model", "dataset", "category"),
    invalid: str = "wrong",
) -> pd.DataFrame:
    """Accuracy of items with a gold answer, per ``by`` group.

    Parameters
    ----------
    df
        Long table with ``gold`` (or ``correct``).
    by
        Grouping columns.
    invalid
        ``'wrong'`` (default): an invalid answer counts as wrong; ``'drop'``: it is
        left out of the denominator.

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, then ``accuracy``, ``n`` (rows in the denominator),
        ``n_invalid`` (invalid rows of the group, whichever rule), ``valid_rate``
        (share of the group's rows that parsed) and ``invalid`` (the rule used).

    Notes
    -----
    accuracy = sum_r 1[answer_r = gold_r] / n, with n every row of the group
    (``'wrong'``) or its valid rows (``'drop'``).

    References
    ----------
    Sclar, M., Choi, Y., Tsvetkov, Y., Suhr, A. (2024). Quantifying language models'
    sensitivity to spurious features in prompt design. ICLR 2024.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import accuracy
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": ["a", "b", "c"], "category": "original", "variant_id": "o/0",
    ...     "answer": [1, 0, None], "gold": 1, "valid": [True, True, False]})
    >>> r = accuracy(t).iloc[0]
    >>> float(r["accuracy"]), int(r["n"]), int(r["n_invalid"])
    (0.3333333333333333, 3, 1)
    >>> r = accuracy(t, invalid="drop").iloc[0]
    >>> float(r["accuracy"]), int(r["n"]), int(r["n_invalid"])
    (0.5, 2, 1)
    """
    t = load(df, optional=("gold", "correct", *[c for c in by if c in df.columns]))
    return _accuracy(t, by, invalid)


def _accuracy(
    ps: PromptSets | pd.DataFrame,
    by: Sequence[str] = ("model", "dataset", "category"),
    invalid: str = "wrong",
) -> pd.DataFrame:
    """:func:`accuracy` on prompt sets (or a table) already checked by ``load``."""
    t = ps.table if isinstance(ps, PromptSets) else ps
    for c in by:
        if c not in t.columns:
            raise TableError(f"accuracy: the table has no column {c!r}.")
    y, bad = correct_outcome(t, invalid)
    has_gold = ~np.isnan(y) | bad
    frame = t.loc[has_gold, list(by)].astype(object)
    frame["_y"] = y[has_gold]
    frame["_inv"] = bad[has_gold]
    out = (
        frame.groupby(list(by), sort=True)
        .agg(
            accuracy=("_y", "mean"),
            n=("_y", "count"),
            n_invalid=("_inv", "sum"),
            rows=("_inv", "size"),
        )
        .reset_index()
    )
    out["n"] = out["n"].astype(np.int64)
    out["n_invalid"] = out["n_invalid"].astype(np.int64)
    out["valid_rate"] = 1 - out["n_invalid"] / out["rows"]
    out["invalid"] = invalid
    return out[[*by, *COLUMNS]]


def accuracy_drop(df: pd.DataFrame, invalid: str = "wrong") -> pd.DataFrame:
    """Accuracy per (model, dataset, category) and its drop from the original prompt.

    Parameters
    ----------
    df
        Long table with ``gold`` (or ``correct``) and ``original`` rows.
    invalid
        As in :func:`accuracy`.

    Returns
    -------
    pandas.DataFrame
        ``model, dataset, category, accuracy, n, n_invalid, valid_rate, invalid,
        accuracy_original, drop``; the ``original`` rows themselves are not repeated.

    Notes
    -----
    drop(c) = accuracy(original) - accuracy(c), per model and dataset.

    References
    ----------
    Zhuo, J. et al. (2024). ProSA: Assessing and understanding the prompt
    sensitivity of LLMs. Findings of EMNLP 2024.

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
    t = load(df, optional=("gold", "correct"))
    return _accuracy_drop(t, invalid)


def _accuracy_drop(ps: PromptSets | pd.DataFrame, invalid: str = "wrong") -> pd.DataFrame:
    """:func:`accuracy_drop` on prompt sets (or a table) already checked by ``load``."""
    acc = _accuracy(ps, ("model", "dataset", "category"), invalid)
    orig = acc[acc["category"] == REFERENCE][["model", "dataset", "accuracy"]]
    out = acc[acc["category"] != REFERENCE].merge(
        orig.rename(columns={"accuracy": "accuracy_original"}), on=["model", "dataset"], how="left"
    )
    out["drop"] = out["accuracy_original"] - out["accuracy"]
    return out.reset_index(drop=True)
