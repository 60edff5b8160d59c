"""Reading and writing the long table: Parquet with the toolkit's metadata, CSV for R users.

Every write goes to a temporary file beside the target and is renamed into place, so a process
killed while writing leaves the previous table (or none); every read is validated
(:func:`robustness.core.table.checks.validate`) and a file that cannot be read is one
:class:`~robustness.core.errors.TableError` naming it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from robustness.core.errors import TableError
from robustness.core.table.checks import checked_or_validate, validate
from robustness.core.table.schema import ANALYSIS_COLUMNS, COLUMNS, METADATA_KEY
from robustness.core.table.values import where
from robustness.core.text_safety import shown

__all__ = ["read_metadata", "read_table", "write_csv", "write_parquet"]


def write_parquet(df: pd.DataFrame, path: str | Path, metadata: Mapping[str, Any]) -> Path:
    """Write a validated table to Parquet with ``metadata`` (version, study config) attached.

    The file is written beside ``path`` under a temporary name and renamed into place, so a
    process killed while writing leaves the previous table (or none), never half of one; a
    table that cannot be written raises :class:`TableError` and leaves no temporary file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    t = checked_or_validate(df, required=[c for c in ANALYSIS_COLUMNS])  # once per table
    tmp = path.with_name(path.name + ".tmp")
    try:
        table = pa.Table.from_pandas(t, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[METADATA_KEY] = json.dumps(metadata, sort_keys=True, default=str).encode()
        table = table.replace_schema_metadata(meta)
        pq.write_table(table, tmp)
        _replace(tmp, path)
    except (pa.ArrowException, UnicodeError, ValueError, TypeError, RecursionError) as exc:
        tmp.unlink(missing_ok=True)
        raise TableError(f"{path}: the table cannot be written ({_unwritable(t, exc)}).") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _replace(tmp: Path, path: Path) -> None:
    """Flush ``tmp`` to disk and rename it over ``path`` (atomic within one folder)."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _unwritable(t: pd.DataFrame, exc: BaseException) -> str:
    """Name the first cell that cannot be stored as UTF-8 text, else the writer's reason."""
    for column in t.columns:
        values = t[column]
        if values.dtype != object:
            continue
        for pos, value in enumerate(values.to_numpy(dtype=object)):
            if isinstance(value, str):
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    return (
                        f"column {column!r}, {where(t, pos)}: {shown(value)} holds a lone "
                        "surrogate, which is not a character"
                    )
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The toolkit metadata of a Parquet table (empty for a table made elsewhere)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(METADATA_KEY)
    return json.loads(raw) if raw else {}


def write_csv(df: pd.DataFrame, path: str | Path) -> Path:
    """CSV copy for R users: lists and objects become JSON strings."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = df.copy()
    if "option_probs" in out.columns:
        out["option_probs"] = out["option_probs"].map(
            lambda v: None if v is None else json.dumps([float(x) for x in v])
        )
    tmp = path.with_name(path.name + ".tmp")
    try:
        out.to_csv(tmp, index=False)
        _replace(tmp, path)
    except UnicodeError as exc:
        tmp.unlink(missing_ok=True)
        raise TableError(
            f"{path}: the table cannot be written ({_unwritable(out, exc)})."
        ) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def read_table(path: str | Path, required: Iterable[str] | None = ANALYSIS_COLUMNS) -> pd.DataFrame:
    """Read a Parquet or CSV long table, normalise its dtypes and validate it."""
    path = Path(path)
    if not path.exists():
        raise TableError(f"{path}: no such table file.")
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            df = pd.read_parquet(path)
        elif suffix in (".csv", ".tsv"):
            # Text columns stay text ("001", "NA", "None" are answers a model may give);
            # only an empty cell is missing.
            text = {c: str for c, col in COLUMNS.items() if col.kind in ("str", "json", "probs")}
            df = pd.read_csv(
                path,
                sep="\t" if suffix == ".tsv" else ",",
                dtype=text,
                keep_default_na=False,
                na_values=[""],
            )
        else:
            raise TableError(
                f"{path}: a table must be .parquet or .csv, not {suffix or 'no suffix'!r}."
            )
    except TableError:
        raise
    except Exception as exc:  # pyarrow / parser errors
        lines = str(exc).strip().splitlines()
        reason = lines[0][:200] if lines else type(exc).__name__
        raise TableError(f"{path}: cannot be read as a table ({reason}).") from None
    try:
        return validate(df, required)
    except TableError as exc:
        raise TableError(f"{path}: {exc}") from None
