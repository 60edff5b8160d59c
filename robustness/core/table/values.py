"""Values of the long table's columns: conversion of any cell to its column's kind.

Each ``coerce_*`` function turns one column of a table made anywhere (Parquet, CSV, a
DataFrame built by hand, mixed Python objects) into the column's canonical dtype, or raises
:class:`~robustness.core.errors.TableError` naming the column, the row and the value as a user
would write it. Cells that are lists, objects or nested values where a scalar belongs are named,
never converted by ``str``; every function is linear in the number of rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from robustness.core.errors import TableError
from robustness.core.text_safety import shown

__all__ = ["COERCE", "fail", "where"]

_TRUE = frozenset({"true", "1", "yes", "t"})
_FALSE = frozenset({"false", "0", "no", "f"})
#: Largest magnitude an integer column holds (Int64).
_INT_LIMIT = 2.0**63


def where(df: pd.DataFrame, pos: int) -> str:
    """Name a row for an error message: its position and, where present, its key."""
    parts = [f"row {pos}"]
    keys = [c for c in ("model", "item_id", "variant_id") if c in df.columns]
    if keys:
        parts.append("(" + ", ".join(f"{c}={shown(df[c].iloc[pos], 40)}" for c in keys) + ")")
    return " ".join(parts)


def fail(df: pd.DataFrame, column: str, mask: np.ndarray, what: str) -> None:
    bad = np.flatnonzero(mask)
    if bad.size:
        pos = int(bad[0])
        value = df[column].iloc[pos]
        more = f" ({bad.size - 1} more rows like it)" if bad.size > 1 else ""
        raise TableError(f"column {column!r}, {where(df, pos)}: {shown(value)} {what}{more}.")


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool | np.generic) or value is pd.NA


def _coerce_bool(series: pd.Series, column: str, df: pd.DataFrame) -> pd.Series:
    if pd.api.types.is_bool_dtype(series):
        return series.astype("boolean")
    out: list[Any] = []
    for value in series.to_numpy(dtype=object):
        if _missing(value):
            out.append(pd.NA)
        elif isinstance(value, bool | np.bool_):
            out.append(bool(value))
        elif isinstance(value, int | float | np.integer | np.floating) and value in (0, 1):
            out.append(bool(value == 1))  # 1.0 / 0.0 from CSV
        elif isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            out.append(value.strip().lower() in _TRUE)
        else:
            out.append(None)
    bad = np.array([v is None for v in out], dtype=bool)
    fail(df, column, bad, "is not a boolean")
    return pd.Series(pd.array(out, dtype="boolean"), index=series.index, name=column)


def _numeric(series: pd.Series, column: str, df: pd.DataFrame) -> pd.Series:
    """``series`` as float64: numbers and numeric text convert, anything else is named."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        return series.astype("float64")
    values = series.to_numpy(dtype=object)
    scalar = np.array([_is_scalar(v) or _missing(v) for v in values], dtype=bool)
    fail(df, column, ~scalar, "is not a number")
    flags = np.array([isinstance(v, bool | np.bool_) for v in values], dtype=bool)
    fail(df, column, flags, "is a boolean, not a number")
    huge = np.array([isinstance(v, int) and v.bit_length() > 1000 for v in values], dtype=bool)
    fail(df, column, huge, "is too large for a number")
    as_float = [float(v) if isinstance(v, int | np.integer) else v for v in values]
    try:
        numeric = pd.to_numeric(pd.Series(as_float, dtype=object), errors="coerce")
    except (OverflowError, ValueError):  # text too long for a number: convert one by one
        numeric = pd.Series([_to_float(v) for v in as_float], dtype="float64")
    numeric = numeric.astype("float64")
    numeric.index = series.index
    fail(df, column, (numeric.isna() & series.notna()).to_numpy(), "is not a number")
    return numeric


def _to_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("nan")


def _coerce_int(series: pd.Series, column: str, df: pd.DataFrame) -> pd.Series:
    if pd.api.types.is_integer_dtype(series):
        return series.astype("Int64")
    numeric = _numeric(series, column, df)
    fail(df, column, np.isinf(numeric.to_numpy()), "is not a finite number")
    fail(df, column, (numeric.abs() >= _INT_LIMIT).to_numpy(), "is too large for an integer")
    frac = numeric.notna() & (numeric != np.round(numeric))
    fail(df, column, frac.to_numpy(), "is not a whole number")
    return numeric.round().astype("Int64")


def _coerce_float(series: pd.Series, column: str, df: pd.DataFrame) -> pd.Series:
    numeric = _numeric(series, column, df)
    fail(df, column, np.isinf(numeric.to_numpy()), "is not a finite number")
    return numeric


def _parse_probs(value: Any) -> Any:
    if _missing(value):
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            # NumPy's spelling, as pandas' to_csv writes an array: "[0.1 0.9]".
            if not (text.startswith("[") and text.endswith("]")):
                raise
            value = text[1:-1].replace(",", " ").split()
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "fiu":
        return value.astype(float).tolist()  # as Parquet gives it back
    if isinstance(value, list) and all(type(v) is float for v in value):
        return value
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__iter__"):
        raise TypeError("not a list")
    out = []
    for v in value:
        if isinstance(v, bool) or not (_is_scalar(v) and not isinstance(v, np.bool_)):
            raise TypeError("an entry is not a number")
        out.append(float(v))
    return out


def _coerce_probs(series: pd.Series, column: str, df: pd.DataFrame) -> pd.Series:
    parsed: list[Any] = []
    for pos, value in enumerate(series.to_numpy(dtype=object)):
        try:
            parsed.append(_parse_probs(value))
        except (ValueError, TypeError, RecursionError):
            raise TableError(
                f"column {column!r}, {where(df, pos)}: {shown(value)} is not a list of "
                "probabilities."
            ) from None
    return pd.Series(parsed, index=series.index, name=column, dtype=object)


def _coerce_json(series: pd.Series, column: str, df: pd.DataFrame) -> pd.Series:
    out: list[Any] = []
    checked: set[str] = set()  # texts already parsed: parameters repeat across rows
    for pos, value in enumerate(series.to_numpy(dtype=object)):
        if isinstance(value, str) and value in checked:
            out.append(value)
            continue
        if _missing(value):
            out.append(None)
            continue
        try:
            if isinstance(value, Mapping):
                text = json.dumps(value, sort_keys=True, allow_nan=False)
            elif isinstance(value, str):
                text = value
                if not isinstance(json.loads(value), dict):
                    raise TypeError("not an object")
                checked.add(value)
            else:
                raise TypeError("not text")
        except (ValueError, TypeError, RecursionError):
            raise TableError(
                f"column {column!r}, {where(df, pos)}: {shown(value)} is not a JSON object."
            ) from None
        out.append(text)
    return pd.Series(out, index=series.index, name=column, dtype=object)


def _coerce_str(series: pd.Series, column: str, df: pd.DataFrame) -> pd.Series:
    values = series.astype(object)
    present = series.notna().to_numpy()
    if pd.api.types.infer_dtype(values[present], skipna=True) in ("string", "empty"):
        out = values.where(present, None)
        _check_utf8(out, column, df)
        return out
    raw = values.to_numpy(dtype=object)
    scalar = np.array([_is_scalar(v) or _missing(v) for v in raw], dtype=bool)
    fail(df, column, ~scalar, "is not text")
    out = [None if _missing(v) else v if isinstance(v, str) else shown(v, 10**6) for v in raw]
    result = pd.Series(out, index=series.index, name=column, dtype=object)
    _check_utf8(result, column, df)
    return result


def _check_utf8(values: pd.Series, column: str, df: pd.DataFrame) -> None:
    """Text must be storable as UTF-8: a lone surrogate (from a bad escape) is named."""
    if values.dtype != object:
        return  # pandas' own string dtypes cannot hold one
    texts = values.dropna().tolist()
    try:
        "".join(texts).encode("utf-8")  # one pass in C for the common, clean case
        return
    except UnicodeEncodeError:
        pass
    raw = values.to_numpy(dtype=object)
    bad = np.zeros(len(raw), dtype=bool)
    for pos, v in enumerate(raw):
        if isinstance(v, str) and not v.isascii():
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                bad[pos] = True
                break
    fail(df, column, bad, "holds a lone surrogate, which is not a character")


COERCE = {
    "bool": _coerce_bool,
    "int": _coerce_int,
    "float": _coerce_float,
    "probs": _coerce_probs,
    "json": _coerce_json,
    "str": _coerce_str,
}
