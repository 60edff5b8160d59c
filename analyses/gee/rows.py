"""The rows of any DataFrame a GEE fits, its 0/1 response and its clusters.

:func:`analyses.gee.gee` on a frame that is not a long table (its ``cluster`` names a
column, several columns, or None for one cluster per row) keeps every row that has a
value of the response, of every column the formula reads and of the cluster columns;
each reason a row is left out is counted in a note.  No column has a special meaning
here: a ``category`` column with the value ``original`` is data like any other (the
long table's rules are in :mod:`analyses.gee.long_table`).

Clusters are taken by value: rows with equal cluster values form one cluster wherever
they lie.  geepack instead groups *consecutive* rows with equal ``id`` (its data must be
sorted by cluster), so :func:`contiguity_note` says when a cluster's rows are not
contiguous, where the two readings differ.

These are steps of :func:`analyses.gee.gee`, outside the statistics convention (no
formula of their own): the model and its references are in :mod:`analyses.gee.fit`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analyses.gee.formula import Formula
from analyses.table_input import codes
from robustness.core.table import TableError

__all__ = ["ROW_CLUSTER", "FittedRows", "binary_response", "contiguity_note", "frame_rows"]

#: The cluster column made when ``cluster=None`` (each row its own cluster).
ROW_CLUSTER = "(row)"


@dataclass(frozen=True)
class FittedRows:
    """The fitted rows (``data``), their 0/1 response ``y`` and the notes on rows left out."""

    data: pd.DataFrame
    y: np.ndarray
    notes: list[str]


def binary_response(col: pd.Series, name: str) -> np.ndarray:
    """A 0/1 (or boolean) column as 0.0 / 1.0 / NaN; another value is one clear error.

    Parameters
    ----------
    col
        The response column.
    name
        Its name (for the error).

    Returns
    -------
    numpy.ndarray
        The values as floats, NaN where missing.
    """
    if pd.api.types.is_bool_dtype(col) or col.dtype == object:
        col = col.map(lambda v: float(v) if isinstance(v, bool | np.bool_) else v)
    values = pd.to_numeric(
        col.astype("Float64") if col.dtype == "boolean" else col, errors="coerce"
    ).to_numpy(dtype=float, na_value=np.nan)
    bad = (~np.isnan(values) & ~np.isin(values, (0.0, 1.0))) | (
        col.notna().to_numpy() & np.isnan(values)
    )
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise TableError(
            f"column {name!r}, row {pos}: {col.iloc[pos]!r} is not 0/1 "
            "(a binomial GEE needs a binary response)."
        )
    return values


def cluster_columns(df: pd.DataFrame, cluster: str | Sequence[str] | None) -> list[str]:
    """The cluster columns of a frame (checked), or ``[ROW_CLUSTER]`` for ``None``."""
    if cluster is None:
        return [ROW_CLUSTER]
    cols = [cluster] if isinstance(cluster, str) else list(cluster)
    missing = [c for c in cols if c not in df.columns]
    if missing or not cols:
        raise TableError(
            f"cluster {cluster!r}: the frame has no column {', '.join(map(repr, missing))}; "
            "name the column(s) whose values mark a cluster (or cluster=None for one per row)."
        )
    return cols


def frame_rows(df: pd.DataFrame, f: Formula, clusters: Sequence[str]) -> FittedRows:
    """Select the rows of any frame a GEE of ``f`` fits, with their response and notes.

    Parameters
    ----------
    df
        Any DataFrame with the response and the columns the formula reads.
    f
        The parsed formula.
    clusters
        The cluster columns (``[ROW_CLUSTER]``: one cluster per row).

    Returns
    -------
    FittedRows
        ``data`` (the rows kept, index reset, with the cluster column(s)), ``y`` and the
        notes (rows without a value of the response, a variable or the cluster).
    """
    needed = [f.response, *f.columns]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise TableError(
            f"formula {f.text!r} names column(s) {', '.join(map(repr, missing))} that the "
            f"frame lacks; it has {', '.join(map(repr, map(str, df.columns[:30])))}."
        )
    frame = df.assign(**{ROW_CLUSTER: np.arange(len(df))}) if ROW_CLUSTER in clusters else df
    y = binary_response(frame[f.response], f.response)
    keep = ~np.isnan(y)
    notes = []
    if (~keep).any():
        notes.append(f"{int((~keep).sum())} rows without a value of {f.response!r} were excluded.")
    gaps = frame[[*f.columns, *clusters]].isna().any(axis=1).to_numpy() & keep
    if gaps.any():
        notes.append(
            f"{int(gaps.sum())} rows without a value of a formula variable or of the cluster "
            "were excluded."
        )
    keep &= ~gaps
    if not keep.any():
        raise TableError(f"formula {f.text!r}: no row has every value the model needs.")
    data = frame.loc[keep, list(dict.fromkeys([*f.columns, *clusters]))].reset_index(drop=True)
    return FittedRows(data, y[keep], notes)


def contiguity_note(data: pd.DataFrame, clusters: Sequence[str]) -> list[str]:
    """A note when some cluster's rows are not consecutive (geepack would split it).

    Parameters
    ----------
    data
        The fitted rows, in the frame's order.
    clusters
        The cluster columns.

    Returns
    -------
    list of str
        Empty, or one sentence naming how many clusters are split and the first of them.
    """
    code, keys = codes(data, list(clusters))
    if code.size < 2:
        return []
    starts = np.r_[True, code[1:] != code[:-1]]
    runs = np.bincount(code[starts], minlength=len(keys))
    split = np.flatnonzero(runs > 1)
    if split.size == 0:
        return []
    first = ", ".join(f"{c}={keys[c].iloc[split[0]]!r}" for c in clusters)
    return [
        f"{split.size} of {len(keys)} clusters have rows that are not contiguous (first: "
        f"{first}); here a cluster is all rows with its value, while geepack's geeglm groups "
        "consecutive rows only: sort the frame by cluster to fit the same model in R."
    ]
