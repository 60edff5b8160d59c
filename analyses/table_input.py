"""Input checking and grouping shared by the analyses (private).

Every public analysis reads a long table through :func:`load`, which validates
only the columns that analysis uses with :func:`robustness.core.table.validate`
(so a missing or malformed column stops with one sentence naming it), refuses
tables that mix several studies, and checks that each item has one dataset type.
Grouping works on integer codes so that a million rows stay fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from robustness.core.table import ANALYSIS_COLUMNS, REPEAT_COLUMNS, TableError, validate
from robustness.core.table.checked import is_checked, mark

REFERENCE = "original"
ITEM_KEYS = ("model", "dataset", "item_id")
GROUP_KEYS = ("model", "dataset", "item_id", "category")


def load(
    df: pd.DataFrame,
    extra: Iterable[str] = (),
    optional: Iterable[str] = (),
) -> pd.DataFrame:
    """Validate the columns an analysis needs and return them normalised.

    ``extra`` columns are required on top of :data:`ANALYSIS_COLUMNS`;
    ``optional`` ones are kept (and checked) when present, as are ``study`` and the
    :data:`~robustness.core.table.REPEAT_COLUMNS`. A table that
    :func:`robustness.core.table.validate` returned (``read_table``, ``write_parquet``'s
    input) and that has not changed since is not checked again: its columns are taken as
    they are (:mod:`robustness.core.table.checked`).
    """
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"a long table must be a pandas DataFrame, not {type(df).__name__}.")
    required = list(dict.fromkeys([*ANALYSIS_COLUMNS, *extra]))
    keep = list(dict.fromkeys([*required, *optional]))
    for name in ("study", *REPEAT_COLUMNS):  # what validate needs to check the originals
        if name in df.columns and name not in keep:
            keep.append(name)
    if any(c not in df.columns for c in required):
        validate(df.head(0), required)  # raises, naming the missing columns and those present
    columns = [c for c in keep if c in df.columns]
    # a table validated when read or written has its columns checked already
    t = mark(df[columns]) if is_checked(df) else validate(df[columns], required)
    if "study" in t.columns:
        studies = pd.unique(t["study"])
        if len(studies) > 1:
            shown = ", ".join(repr(s) for s in studies[:3]) + (", ..." if len(studies) > 3 else "")
            raise TableError(
                f"column 'study' holds {len(studies)} studies ({shown}); "
                "analyse one study at a time (filter the table on 'study')."
            )
    # one dataset_type per dataset (hence per item) is checked by validate
    return t


def codes(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Integer group codes for the rows of ``frame`` over ``columns``.

    Returns ``(code per row, keys)`` where ``keys`` has one row per group, sorted by
    the columns' values, and ``keys.iloc[code]`` is the row's group.
    """
    if len(frame) == 0:
        return np.zeros(0, dtype=np.int64), pd.DataFrame({c: [] for c in columns})
    combined = np.zeros(len(frame), dtype=np.int64)
    uniques = []
    for col in columns:
        code, uniq = pd.factorize(frame[col], sort=True)
        if (code < 0).any():
            raise TableError(f"column {col!r} has missing values where a group key is needed.")
        combined = combined * len(uniq) + code
        uniques.append((col, uniq, len(uniq)))
    # Products of level counts stay far below 2**63 for any realistic table.
    group_vals, inverse = np.unique(combined, return_inverse=True)
    keys = {}
    rest = group_vals
    for col, uniq, n in reversed(uniques):
        keys[col] = np.asarray(uniq, dtype=object)[rest % n]
        rest = rest // n
    key_frame = pd.DataFrame({c: keys[c] for c in columns})
    return inverse.astype(np.int64).ravel(), key_frame


def answers(t: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(valid mask, answer with -1 where invalid) as plain numpy arrays."""
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    ans = t["answer"].to_numpy(dtype=np.int64, na_value=-1)
    return valid, ans


def correct_column(t: pd.DataFrame) -> np.ndarray | None:
    """Correctness per row as float (1, 0, NaN), from ``correct`` or from ``answer == gold``.

    ``None`` when the table has neither ``correct`` nor ``gold``.
    """
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    if "correct" in t.columns:
        out = t["correct"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    elif "gold" in t.columns:
        gold = t["gold"].to_numpy(dtype=float, na_value=np.nan)
        ans = t["answer"].to_numpy(dtype=float, na_value=np.nan)
        out = np.where(np.isnan(gold) | np.isnan(ans), np.nan, (gold == ans).astype(float))
    else:
        return None
    out = out.copy()
    out[~valid] = np.nan
    return out


def n_options(t: pd.DataFrame) -> tuple[np.ndarray, str]:
    """K (number of options) per row and where it came from.

    ``n_options`` when present; else the length of ``option_probs``; else, per
    dataset, the largest answer seen plus one (at least 2), which is a lower
    bound on K and is reported as such.
    """
    k = np.full(len(t), np.nan)
    source = []
    if "n_options" in t.columns:
        k = t["n_options"].to_numpy(dtype=float, na_value=np.nan)
        source.append("n_options")
    if np.isnan(k).any() and "option_probs" in t.columns:
        probs = t["option_probs"].to_numpy(dtype=object)
        miss = np.flatnonzero(np.isnan(k))
        lens = np.array([np.nan if probs[i] is None else len(probs[i]) for i in miss], dtype=float)
        k[miss] = lens
        source.append("len(option_probs)")
    if np.isnan(k).any():
        _, ans = answers(t)
        ds_code, ds_keys = codes(t, ["dataset"])
        top = np.full(len(ds_keys), 1, dtype=np.int64)
        np.maximum.at(top, ds_code, ans)
        k = np.where(np.isnan(k), np.maximum(top[ds_code] + 1, 2), k)
        source.append("largest answer + 1 per dataset (a lower bound)")
    return k, " then ".join(source)


def is_ordinal(t: pd.DataFrame) -> np.ndarray:
    """Per row: an ordinal scale? From ``scale``; where missing, subjective items are ordinal."""
    subjective = (t["dataset_type"] == "subjective").to_numpy()
    if "scale" not in t.columns:
        return subjective
    scale = t["scale"]
    return np.where(scale.isna().to_numpy(), subjective, (scale == "ordinal").to_numpy())


def nullable_int(values: np.ndarray, present: np.ndarray) -> pd.arrays.IntegerArray:
    """An Int64 array holding ``values`` where ``present`` and <NA> elsewhere."""
    filled = np.where(present, values, 0).astype(np.int64)
    return pd.arrays.IntegerArray(filled, ~np.asarray(present, dtype=bool))


def k_columns(df: pd.DataFrame) -> tuple[str, ...]:
    """Columns that give K: ``option_probs`` is read (slowly, row by row) only when needed."""
    if "n_options" in df.columns and df["n_options"].notna().all():
        return ("n_options",)
    return tuple(c for c in ("n_options", "option_probs") if c in df.columns)
