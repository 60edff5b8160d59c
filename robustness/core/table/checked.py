"""Which tables :func:`~robustness.core.table.validate` has passed, so none is checked twice.

A table goes from ``run`` to ``write_parquet``, from ``read_table`` to ``analyze``; each of them
validates its input. :func:`mark` records the table ``validate`` returned, with a fingerprint of
its shape, column names, dtypes and the memory each column's values live in; :func:`is_checked`
answers True for that same object while the fingerprint is unchanged. Assigning a column,
adding or dropping one, changing a dtype, adding or removing rows, or making a new frame (a
copy, a subset, a concatenation) changes the fingerprint or the object, and the table is
checked again.

A value written in place (``t.loc[3, "answer"] = 9``, ``t.at[...]``, ``fillna(inplace=True)``)
is seen too: :func:`mark` keeps a shallow copy of the table, which shares its values, so pandas'
copy-on-write (the default from pandas 3) gives the written column new memory rather than
change the copy's, and the fingerprint moves. The shallow copy costs no memory until a write.
What copy-on-write cannot see is a write into a column's array itself (``t["answer"].array[0]
= 9``, which pandas documents as a view): validate such a table again by hand (``validate(t)``).

The registry holds weak references to the tables: a table that is no longer used is
forgotten, with its shallow copy.
"""

from __future__ import annotations

import weakref

import numpy as np
import pandas as pd

__all__ = ["is_checked", "mark"]

_CHECKED: weakref.WeakValueDictionary[int, pd.DataFrame] = weakref.WeakValueDictionary()
_PRINTS: dict[int, tuple[object, ...]] = {}
#: A shallow copy per marked table: it shares the table's values, so an in-place write to the
#: table copies the written block first (copy-on-write) and its memory address changes.
_SHARERS: dict[int, pd.DataFrame] = {}


def _address(values: object) -> object:
    """Where a column's values live (the data pointer of its numpy buffers, else its id)."""
    parts = []
    for attr in ("_ndarray", "_data", "_mask"):
        inner = getattr(values, attr, None)
        if isinstance(inner, np.ndarray):
            parts.append(inner.__array_interface__["data"][0])
    if isinstance(values, np.ndarray):
        parts.append(values.__array_interface__["data"][0])
    return tuple(parts) if parts else id(getattr(values, "_pa_array", values))


def _fingerprint(df: pd.DataFrame) -> tuple[object, ...]:
    index = df.index
    plain = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
    return (
        df.shape,
        plain,
        tuple(df.columns),
        tuple(str(d) for d in df.dtypes),
        tuple(_address(df[c].array) for c in df.columns),
    )


def _forget(key: int) -> None:
    _PRINTS.pop(key, None)
    _SHARERS.pop(key, None)


def mark(df: pd.DataFrame) -> pd.DataFrame:
    """Record ``df`` as a table that passed validation; returns it unchanged."""
    key = id(df)
    if _CHECKED.get(key) is not df:
        _CHECKED[key] = df
        weakref.finalize(df, _forget, key)
    _SHARERS[key] = df.copy(deep=False)
    _PRINTS[key] = _fingerprint(df)
    return df


def is_checked(df: object) -> bool:
    """Whether ``df`` is a table :func:`mark` recorded and that has not changed since."""
    if not isinstance(df, pd.DataFrame):
        return False
    key = id(df)
    return _CHECKED.get(key) is df and _PRINTS.get(key) == _fingerprint(df)
