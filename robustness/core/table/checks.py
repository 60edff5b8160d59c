"""Checking a long table against its schema: dtypes, values, keys, nesting.

:func:`validate` checks any table, also one made by another tool, and names the exact column,
row and value that is wrong; :func:`normalize` converts every known column to its canonical
dtype; :func:`table_warnings` says what a valid table lacks for some analyses.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from robustness.core.errors import TableError
from robustness.core.table.checked import is_checked, mark
from robustness.core.table.schema import (
    COLUMNS,
    DATASET_TYPES,
    KEY_COLUMNS,
    MODES,
    OPTIONAL_EXTRAS,
    REPEAT_COLUMNS,
    SCALES,
)
from robustness.core.table.values import COERCE, fail, where
from robustness.core.text_safety import shown

__all__ = ["MAX_DEPTH", "checked_or_validate", "normalize", "table_warnings", "validate"]


def normalize(df: pd.DataFrame) -> pd.DataFrame:
    """Return a copy of ``df`` with every known column in its canonical dtype.

    Values that cannot be converted raise :class:`TableError` naming the column
    and the row.  Unknown columns are kept as they are.
    """
    _check_columns(df)
    out = df.reset_index(drop=True).copy()
    for name, col in COLUMNS.items():
        if name in out.columns:
            out[name] = COERCE[col.kind](out[name], name, out)
    return out


def _check_columns(df: Any) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"a long table must be a pandas DataFrame, not {type(df).__name__}.")
    names = list(df.columns)
    odd = [c for c in names if not isinstance(c, str)]
    if odd:
        raise TableError(f"column name {shown(odd[0])} is not text; name every column.")
    twice = sorted({c for c in names if names.count(c) > 1}) if len(set(names)) < len(names) else []
    if twice:
        raise TableError(f"column {shown(twice[0])} appears {names.count(twice[0])} times.")


def validate(
    df: pd.DataFrame, required: Iterable[str] | None = None, *, normalized: bool = False
) -> pd.DataFrame:
    """Check a long table and return it normalised; raise :class:`TableError` on the first fault.

    Parameters
    ----------
    df
        The table, ours or one made by another tool.
    required
        Columns that must be present.  Defaults to every schema column except the
        optional extras; the analyses pass :data:`ANALYSIS_COLUMNS`.
    normalized
        Skip dtype coercion when ``df`` already came from :func:`normalize`.

    Examples
    --------
    >>> import pandas as pd
    >>> from robustness.core.table import validate, ANALYSIS_COLUMNS
    >>> t = pd.DataFrame({"model": ["m"], "dataset": ["d"], "dataset_type": ["objective"],
    ...     "item_id": ["q1"], "category": ["original"], "variant_id": ["original/0"],
    ...     "answer": [1], "valid": [True]})
    >>> len(validate(t, ANALYSIS_COLUMNS))
    1
    """
    _check_columns(df)
    need = (
        list(required) if required is not None else [c for c in COLUMNS if c not in OPTIONAL_EXTRAS]
    )
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise TableError(
            "the table is missing column(s) "
            + ", ".join(repr(c) for c in missing)
            + f"; it has {', '.join(map(repr, df.columns))}."
        )
    t = df.reset_index(drop=True) if normalized else normalize(df)

    for name, col in COLUMNS.items():
        if name in t.columns and not col.nullable:
            fail(t, name, t[name].isna().to_numpy(), "is missing where a value is required")
    for name in ("item_id", "category", "variant_id", "model", "dataset"):
        if name in t.columns:
            empty = t[name].astype("string").str.strip().eq("").fillna(False)
            fail(t, name, empty.to_numpy(dtype=bool), "is an empty string")

    _check_values(t, "dataset_type", DATASET_TYPES)
    if {"dataset", "dataset_type"} <= set(t.columns):
        kinds = t.groupby("dataset", sort=True)["dataset_type"].nunique()
        mixed = kinds[kinds > 1]
        if len(mixed):
            name = mixed.index[0]
            mine = (t["dataset"] == name).to_numpy()
            obj = np.flatnonzero(mine & (t["dataset_type"] == "objective").to_numpy())[0]
            subj = np.flatnonzero(mine & (t["dataset_type"] == "subjective").to_numpy())[0]
            raise TableError(
                f"column 'dataset_type': dataset {shown(name)} is objective in row {obj} but "
                f"subjective in row {subj}; one dataset has one type."
            )
    _check_values(t, "mode", MODES)
    _check_values(t, "scale", SCALES)

    if "answer" in t.columns:
        ans = t["answer"]
        fail(t, "answer", (ans < 0).fillna(False).to_numpy(dtype=bool), "is negative")
        if "n_options" in t.columns:
            over = (ans >= t["n_options"]).fillna(False).to_numpy(dtype=bool)
            fail(t, "answer", over, "is not below the row's n_options")
        if "valid" in t.columns:
            valid = t["valid"].fillna(False).to_numpy(dtype=bool)
            fail(t, "answer", valid & ans.isna().to_numpy(), "is missing on a row marked valid")
            fail(
                t,
                "answer",
                ~valid & ans.notna().to_numpy(),
                "is set on a row marked invalid (valid=False)",
            )
    if "n_options" in t.columns:
        fail(t, "n_options", (t["n_options"] < 2).fillna(False).to_numpy(dtype=bool), "is below 2")
    if "gold" in t.columns:
        fail(t, "gold", (t["gold"] < 0).fillna(False).to_numpy(dtype=bool), "is negative")
        if "dataset_type" in t.columns:
            subjective = (t["dataset_type"] == "subjective").to_numpy()
            fail(
                t, "gold", subjective & t["gold"].notna().to_numpy(), "is set on a subjective item"
            )
    if {"correct", "gold", "answer"} <= set(t.columns):
        both = t["gold"].notna() & t["answer"].notna() & t["correct"].notna()
        wrong = both & ((t["answer"] == t["gold"]) != t["correct"])
        fail(
            t, "correct", wrong.fillna(False).to_numpy(dtype=bool), "disagrees with answer == gold"
        )
    if "confidence" in t.columns:
        c = t["confidence"]
        fail(t, "confidence", ((c < 0) | (c > 1 + 1e-6)).to_numpy(), "is not a probability")
    if "option_probs" in t.columns:
        _check_probs(t)
    _check_nesting(t)
    _check_originals(t)

    keys = [c for c in KEY_COLUMNS if c in t.columns]
    dup = t.duplicated(subset=keys, keep=False).to_numpy() if keys else np.zeros(len(t), bool)
    if dup.any():
        rows = np.flatnonzero(dup)
        first = t.iloc[rows[0]]
        twin = rows[1:][(t.iloc[rows[1:]][keys] == first[keys]).all(axis=1).to_numpy()][0]
        raise TableError(
            f"rows {rows[0]} and {twin} share the key "
            + ", ".join(f"{k}={shown(first[k], 40)}" for k in keys)
            + f"; each model x item x category x variant must appear once ({rows.size} rows "
            "are duplicated)."
        )
    return mark(t)


def _check_originals(t: pd.DataFrame) -> None:
    """At most one ``original`` row per study, model, dataset and item (and repeat column).

    The original prompt is the one reference of flip rates, accuracy drops and POSIX; a second
    one (another ``variant_id``) is named with the rows of both.
    """
    keys = ["model", "dataset", "item_id"]
    if not set(keys) <= set(t.columns) or "category" not in t.columns:
        return
    keys = [c for c in ("study", *keys, *REPEAT_COLUMNS) if c in t.columns]
    orig = t.loc[(t["category"] == "original").fillna(False).to_numpy(dtype=bool), keys]
    twice = orig.duplicated(subset=keys, keep=False).to_numpy()
    if not twice.any():
        return
    dup = orig[twice]
    first = dup.iloc[0]
    group = dup.groupby(keys, dropna=False, sort=False).ngroup().to_numpy()
    rows = [int(r) for r in dup.index[group == group[0]]]  # positions: t has a plain index
    listed = (
        ", ".join(map(str, rows[:-1])) + f" and {rows[-1]}"
        if len(rows) <= 5
        else (", ".join(map(str, rows[:5])) + f" and {len(rows) - 5} more")
    )
    repeat = [c for c in REPEAT_COLUMNS if c in keys]
    raise TableError(
        f"column 'category': model {shown(first['model'], 60)}, dataset "
        f"{shown(first['dataset'], 60)}, item {shown(first['item_id'], 60)}"
        + "".join(f", {c} {shown(first[c], 40)}" for c in repeat)
        + f" has {len(rows)} original rows (rows {listed}); an item has one original prompt "
        "per model (repeated samples of it are another category, e.g. 'resample')."
    )


def _check_values(t: pd.DataFrame, column: str, allowed: frozenset[str]) -> None:
    if column in t.columns:
        bad = t[column].notna() & ~t[column].isin(allowed)
        fail(t, column, bad.to_numpy(), f"is not one of {sorted(allowed)}")


#: Deepest nesting of lists and objects accepted in a column the schema does not know
#: (deeper values exhaust Python's recursion and abort pyarrow's writer).
MAX_DEPTH = 32


def _check_nesting(t: pd.DataFrame) -> None:
    """Cells of unknown columns nested deeper than :data:`MAX_DEPTH` are named."""
    for column in t.columns:
        if column in COLUMNS or t[column].dtype != object:
            continue
        for pos, value in enumerate(t[column].to_numpy(dtype=object)):
            if not isinstance(value, list | tuple | dict | np.ndarray):
                continue
            stack = [(value, 1)]
            while stack:
                inner, depth = stack.pop()
                if depth > MAX_DEPTH:
                    raise TableError(
                        f"column {column!r}, {where(t, pos)}: lists or objects nested more "
                        f"than {MAX_DEPTH} levels deep."
                    )
                children = inner.values() if isinstance(inner, dict) else inner
                stack.extend(
                    (c, depth + 1)
                    for c in children
                    if isinstance(c, list | tuple | dict | np.ndarray)
                )


def _check_probs(t: pd.DataFrame) -> None:
    """Every probability vector: finite, non-negative, summing to 1, as long as n_options.

    Vectorised by vector length (one NumPy array per length), so the cost is a few passes
    over the column; the first faulty row is named.
    """
    probs = t["option_probs"].to_numpy(dtype=object)
    lengths = np.fromiter((-1 if p is None else len(p) for p in probs), dtype=np.int64)
    bad = np.zeros(len(probs), dtype=bool)
    for k in np.unique(lengths[lengths >= 0]):
        rows = np.flatnonzero(lengths == k)
        arr = np.array([probs[i] for i in rows], dtype=float).reshape(len(rows), int(k))
        with np.errstate(invalid="ignore"):
            ok = (
                np.isfinite(arr).all(axis=1)
                & (arr >= -1e-9).all(axis=1)
                & (np.abs(arr.sum(axis=1) - 1.0) <= 1e-4)
            )
        bad[rows] = ~ok if k >= 2 else True
    wrong_k = np.zeros(len(probs), dtype=bool)
    if "n_options" in t.columns:
        k_col = t["n_options"].to_numpy(dtype="float64", na_value=np.nan)
        wrong_k = (lengths >= 0) & ~np.isnan(k_col) & (lengths != k_col)
    first = np.flatnonzero(bad | wrong_k)
    if not first.size:
        return
    pos = int(first[0])
    if bad[pos]:
        raise TableError(
            f"column 'option_probs', {where(t, pos)}: {shown(list(probs[pos]))} is not a "
            "probability vector over two or more options."
        )
    raise TableError(
        f"column 'option_probs', {where(t, pos)}: has {lengths[pos]} entries but "
        f"n_options is {int(t['n_options'].iloc[pos])}."
    )


def table_warnings(t: pd.DataFrame) -> list[str]:
    """What a valid table lacks for some analyses, one sentence each (empty: nothing).

    A table without ``original`` rows has no reference for flip rates, accuracy drops and
    POSIX, which compare every variant with the unperturbed prompt.
    """
    out = []
    if "category" in t.columns and len(t):
        models = t.loc[t["category"] == "original", "model"] if "model" in t.columns else None
        if models is None or models.empty:
            out.append(
                "the table has no 'original' rows, so flip rates, accuracy drops and POSIX "
                "(which compare each variant with the unperturbed prompt) cannot be computed."
            )
        elif "model" in t.columns:
            lacking = sorted(set(t["model"].dropna()) - set(models.dropna()))
            if lacking:
                out.append(
                    f"model {shown(lacking[0])} has no 'original' rows"
                    + (f" (nor {len(lacking) - 1} more models)" if len(lacking) > 1 else "")
                    + "; its flip rates and POSIX cannot be computed."
                )
    return out


def checked_or_validate(df: pd.DataFrame, required: Iterable[str] | None = None) -> pd.DataFrame:
    """:func:`validate`, or ``df`` itself when validate returned it and it has not changed since.

    Parameters
    ----------
    df
        A long table.
    required
        Columns that must be present (as :func:`validate`); they are looked for either way.

    Returns
    -------
    DataFrame
        ``df`` unchanged when :func:`robustness.core.table.checked.is_checked` says it passed
        :func:`validate` already (a table the toolkit has just read or written), else
        ``validate(df, required)``.
    """
    if not is_checked(df):
        return validate(df, required)
    need = (
        list(required) if required is not None else [c for c in COLUMNS if c not in OPTIONAL_EXTRAS]
    )
    missing = [c for c in need if c not in df.columns]
    if missing:
        return validate(df, required)  # raises, naming the missing columns
    return df
