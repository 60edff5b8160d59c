"""Rows of an imported log -> the long table, and its atomic write (shared by the importers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from robustness.core.errors import StudyError
from robustness.core.table import validate, write_csv, write_parquet

__all__ = ["ROW_COLUMNS", "rows_frame", "write_imported"]

#: The columns an importer writes, in order (``logliks`` is an extra the schema keeps).
ROW_COLUMNS = (
    "study",
    "model",
    "dataset",
    "dataset_type",
    "item_id",
    "category",
    "variant_id",
    "params",
    "prompt_sha",
    "shots",
    "mode",
    "raw_output",
    "label",
    "answer",
    "valid",
    "invalid_reason",
    "gold",
    "correct",
    "option_probs",
    "confidence",
    "latency_ms",
    "seed",
    "scale",
    "n_options",
    "prompt",
    "logliks",
)


def rows_frame(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    """The validated long table of ``rows`` (one mapping per row).

    Parameters
    ----------
    rows
        One mapping per row with (at least) ``columns``.
    columns
        The columns, in order.

    Returns
    -------
    pandas.DataFrame
        The table as :func:`robustness.core.table.validate` normalises it.
    """
    if not rows:
        raise StudyError("the logs hold no samples; there is nothing to import.")
    frame = pd.DataFrame.from_records(list(rows), columns=list(columns))
    for column in ("confidence", "latency_ms"):
        frame[column] = pd.to_numeric(frame[column]).astype("float64")
    for column in ("answer", "gold", "n_options", "shots", "seed"):
        frame[column] = pd.array(frame[column], dtype="Int64")
    frame["correct"] = pd.array(frame["correct"], dtype="boolean")
    return validate(frame)


def write_imported(table: pd.DataFrame, out: str | Path, metadata: Mapping[str, Any]) -> Path:
    """Write ``table`` to ``out`` (.parquet or .csv) in one rename, nothing half-written.

    Parameters
    ----------
    table
        The imported long table.
    out
        The target file; its suffix picks the format.
    metadata
        What the Parquet file records about the import (source, versions).

    Returns
    -------
    pathlib.Path
        The written file.
    """
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return write_parquet(table, path, metadata)
    if suffix == ".csv":
        return write_csv(table, path)
    raise StudyError(
        f"{path}: the output must end in .parquet or .csv, not {suffix or 'nothing'!r}."
    )
