"""The long table: one row per model x item x category x variant.

The schema is the contract between the runners that write answers and the
analyses that read them, so it lives here and nowhere else.  ``validate``
checks any table, also one made by another tool, and names the exact column,
row and value that is wrong.  Parquet files carry the toolkit version and the
study configuration in their metadata; CSV is offered for R users.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from robustness import names
from robustness.errors import TableError as TableError  # re-exported: analyses import it here
from robustness.table_values import COERCE, fail, where
from robustness.text_safety import shown

METADATA_KEY = b"robustness"


@dataclass(frozen=True)
class Column:
    """One column of the long table: its kind, whether it may be missing, what it holds."""

    kind: str  # "str" | "int" | "float" | "bool" | "json" | "probs"
    nullable: bool
    doc: str


COLUMNS: dict[str, Column] = {
    "study": Column("str", False, "study name"),
    "model": Column("str", False, "model name as given in the study"),
    "dataset": Column("str", False, "dataset the item comes from"),
    "dataset_type": Column("str", False, "'objective' or 'subjective'"),
    "item_id": Column("str", False, "item identifier, unique within its dataset"),
    "category": Column("str", False, "perturbation family, or 'original'"),
    "variant_id": Column("str", False, "stable variant id such as 'option_order/3'"),
    "params": Column("json", True, "JSON object of the parameters that made the variant"),
    "prompt_sha": Column("str", True, "SHA-256 of the rendered prompt"),
    "shots": Column("int", True, "number of few-shot exemplars"),
    "mode": Column("str", True, "'choice', 'cloze' or 'generate'"),
    "raw_output": Column("str", True, "the model's raw output (generated text or scored label)"),
    "label": Column("str", True, "displayed label the output was parsed to"),
    "answer": Column("int", True, "canonical option index (0-based); missing when invalid"),
    "valid": Column("bool", False, "whether the output parsed to an answer"),
    "invalid_reason": Column("str", True, "empty | refusal | ambiguous | no_label | error: ..."),
    "gold": Column("int", True, "gold canonical index for objective items"),
    "correct": Column("bool", True, "answer == gold, for valid objective rows"),
    "option_probs": Column("probs", True, "label probabilities in canonical order"),
    "confidence": Column("float", True, "top next-token probability (ProSA eq. 3)"),
    "latency_ms": Column("float", True, "model time for the prompt in milliseconds"),
    "seed": Column("int", True, "study seed"),
    # Extras that the analyses use when present.
    "scale": Column("str", True, "'nominal' or 'ordinal'"),
    "n_options": Column("int", True, "number of options of the item (K)"),
    "prompt": Column("str", True, "the rendered prompt text, for reading fragile items"),
    # Generate mode: what `robustness reparse` needs, and which parser read the row.
    "display": Column("json", True, "JSON: displayed labels, options, canonical index of each"),
    "parser_version": Column("str", True, "answer-parser version that read raw_output"),
    "label_answer": Column("int", True, "answer under conflict='label' (label with other text)"),
    "text_answer": Column("int", True, "answer under conflict='text' (label with other text)"),
}

#: The columns every table must have for the analyses to run.
ANALYSIS_COLUMNS: tuple[str, ...] = (
    "model",
    "dataset",
    "dataset_type",
    "item_id",
    "category",
    "variant_id",
    "answer",
    "valid",
)

#: Columns our runs write that tables made elsewhere need not have.
OPTIONAL_EXTRAS: tuple[str, ...] = (
    "scale",
    "n_options",
    "prompt",
    "display",
    "parser_version",
    "label_answer",
    "text_answer",
)

#: The columns that identify a row; no two rows may share them.
KEY_COLUMNS: tuple[str, ...] = ("study", "model", "dataset", "item_id", "category", "variant_id")

DATASET_TYPES = frozenset(names.DATASET_TYPES)
MODES = frozenset(names.MODES)
SCALES = frozenset(names.SCALES)


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
    >>> from robustness.table import validate, ANALYSIS_COLUMNS
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
    return t


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


# ----------------------------------------------------------------------------- I/O


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
    t = validate(df, required=[c for c in ANALYSIS_COLUMNS])
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
