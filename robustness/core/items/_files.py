"""Item files as plain records: JSONL, JSON, CSV/TSV, Parquet and ``datasets`` folders.

:func:`records` yields ``(location, record)`` pairs (location such as ``"line 7"``) from any
supported file; every way a file can be unreadable (bytes that are not UTF-8, invalid JSON,
JSON nested past Python's recursion limit or with numbers past its 4,300-digit limit, a CSV
cell past the csv module's size limit, a corrupt Parquet or Arrow file, a missing Arrow file,
an unreadable path) is one :class:`~robustness.core.errors.ItemError` naming the file and the line.
:func:`robustness.core.items.load_items` turns the records into items.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from robustness.core.errors import ItemError
from robustness.core.text_safety import shown

__all__ = ["MAX_DEPTH", "Record", "check_record", "parse_json_cells", "records"]

Record = tuple[str, dict[str, Any]]  # (location such as "line 7", record)
#: Deepest nesting of lists and objects accepted in a record (items are flat; ``meta`` may
#: nest a little). Deeper values would exhaust the recursion of every later JSON writer.
MAX_DEPTH = 32


def records(path: Path, split: str | None) -> Iterator[Record]:
    """Every record of the item file or ``datasets`` folder ``path``, in file order.

    Parameters
    ----------
    path
        A ``.jsonl``/``.ndjson``, ``.json``, ``.csv``/``.tsv``, ``.parquet``/``.pq`` file or a
        folder written by ``save_to_disk``.
    split
        For a saved ``DatasetDict``: the split to read (None: every split).

    Returns
    -------
    Iterator of (location, record)
        Location as a message names it (``"line 7"``, ``"row 3"``); the record as read, CSV
        cells as text (see :func:`parse_json_cells`).
    """
    try:
        yield from _records_of(path, split)
    except OSError as exc:
        raise ItemError(f"{path}: cannot be read ({exc.strerror or exc}).") from None


def _records_of(path: Path, split: str | None) -> Iterator[Record]:
    if path.is_dir():
        yield from _hf_folder(path, split)
        return
    if not path.exists():
        raise ItemError(f"{path}: no such file or folder.")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        yield from _jsonl(path)
    elif suffix == ".json":
        yield from _json(path)
    elif suffix in (".csv", ".tsv"):
        yield from _csv(path, "\t" if suffix == ".tsv" else ",")
    elif suffix in (".parquet", ".pq"):
        yield from _parquet(path)
    else:
        raise ItemError(
            f"{path}: unknown item file type {suffix or '(none)'!r}; use .jsonl, .json, .csv, "
            ".tsv, .parquet or a datasets folder."
        )


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ItemError(
            f"{path}, line {line}: byte 0x{data[exc.start]:02x} at column {column} is not "
            "valid UTF-8; save the file as UTF-8."
        ) from None


def _loads(text: str, where: str, whole_file: bool = False) -> Any:
    """``json.loads`` with every way it fails as one ItemError naming ``where``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = f", line {exc.lineno}" if whole_file else ""
        raise ItemError(f"{where}{line}: not valid JSON ({exc.msg}).") from None
    except RecursionError:
        raise ItemError(
            f"{where}: the JSON nests lists or objects too deeply (at most {MAX_DEPTH} levels)."
        ) from None
    except ValueError:  # integers past Python's digit limit (4,300 digits)
        raise ItemError(
            f"{where}: a number has more digits than can be read (at most 4,300)."
        ) from None


def _jsonl(path: Path) -> Iterator[Record]:
    # JSON Lines ends records at "\n" only: U+2028, U+0085 and other Unicode line breaks are
    # ordinary characters inside a JSON string (str.splitlines would split on them).
    for n, line in enumerate(_decode(path).split("\n"), start=1):
        if not line.strip():
            continue
        record = _loads(line, f"{path}, line {n}")
        if not isinstance(record, dict):
            raise ItemError(
                f"{path}, line {n}: expected a JSON object, got {type(record).__name__}."
            )
        yield f"line {n}", record


def _json(path: Path) -> Iterator[Record]:
    data = _loads(_decode(path), str(path), whole_file=True)
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = data["items"]
    if not isinstance(data, list):
        raise ItemError(f"{path}: expected a JSON list of item objects.")
    for n, record in enumerate(data):
        if not isinstance(record, dict):
            raise ItemError(
                f"{path}, item {n}: expected a JSON object, got {type(record).__name__}."
            )
        yield f"item {n}", record


def _csv(path: Path, delimiter: str) -> Iterator[Record]:
    reader = csv.DictReader(io.StringIO(_decode(path), newline=""), delimiter=delimiter)
    if reader.fieldnames is None:
        raise ItemError(f"{path}, line 1: the file is empty; a header row is needed.")
    last = 1  # the header's line; a record starts on the line after the previous one ended
    while True:
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # a field past the csv module's size limit, a stray NUL ...
            kind = "TSV" if delimiter == "\t" else "CSV"
            raise ItemError(
                f"{path}, line {last + 1}: cannot be read as {kind} ({exc}); a cell may hold "
                f"at most {csv.field_size_limit():,} characters."
            ) from None
        line = f"line {last + 1}"
        last = reader.line_num
        if None in record:
            raise ItemError(f"{path}, {line}: the row has more cells than the header.")
        yield line, {k: (None if v == "" else v) for k, v in record.items()}


def parse_json_cells(
    record: dict[str, Any], mapping: Mapping[str, str | Sequence[str]], where: str
) -> dict[str, Any]:
    """In a CSV record, the ``options`` and ``meta`` cells may hold JSON (a list of option
    texts, an object); every other cell is text as written, even one that looks like JSON."""
    source = mapping.get("options", "options")
    names = [source, "meta"] if isinstance(source, str) else ["meta"]
    out = dict(record)
    for name in names:
        value = out.get(name)
        if isinstance(value, str) and value.strip()[:1] in "[{":
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError:
                continue
            except (RecursionError, ValueError):
                raise ItemError(
                    f"{where}, field {name!r}: the JSON in the cell cannot be read (nested too "
                    "deeply or a number too long)."
                ) from None
            out[name] = parsed
            check_record({name: parsed}, where)
    return out


def check_record(record: Mapping[str, Any], where: str) -> None:
    """Refuse values nested deeper than :data:`MAX_DEPTH`; linear in the record's size."""
    stack: list[tuple[Any, int, str]] = [(v, 1, k) for k, v in record.items()]
    while stack:
        value, depth, key = stack.pop()
        if isinstance(value, Mapping | list | tuple):
            if depth > MAX_DEPTH:
                raise ItemError(
                    f"{where}, field {shown(key)}: lists or objects nested more than "
                    f"{MAX_DEPTH} levels deep."
                )
            children = value.values() if isinstance(value, Mapping) else value
            stack.extend((child, depth + 1, key) for child in children)


def _parquet(path: Path) -> Iterator[Record]:
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises many types on a corrupt file
        raise ItemError(f"{path}: cannot be read as Parquet ({_first_line(exc)}).") from None
    for n, record in enumerate(rows):
        yield f"row {n}", record


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ItemError(f"{path}: is missing from the datasets folder.") from None
    except (ValueError, RecursionError) as exc:
        raise ItemError(f"{path}: not valid JSON ({_first_line(exc)}).") from None


def _hf_folder(path: Path, split: str | None) -> Iterator[Record]:
    """A folder written by ``Dataset.save_to_disk`` or ``DatasetDict.save_to_disk``."""
    dict_file = path / "dataset_dict.json"
    if dict_file.exists():
        data = _json_file(dict_file)
        splits = data.get("splits") if isinstance(data, dict) else None
        if not isinstance(splits, list) or not all(isinstance(s, str) for s in splits):
            raise ItemError(f"{dict_file}: 'splits' must be a list of split names.")
        if split is not None:
            if split not in splits:
                raise ItemError(f"{path}: no split {split!r}; it has {', '.join(splits)}.")
            splits = [split]
        for name in splits:
            for location, record in _hf_folder(path / name, None):
                record.setdefault("split", name)
                yield f"split {name!r}, {location}", record
        return
    state = path / "state.json"
    if not state.exists():
        raise ItemError(
            f"{path}: a folder must be written by datasets' save_to_disk (no state.json or "
            "dataset_dict.json inside)."
        )
    import pyarrow as pa

    data = _json_file(state)
    entries = data.get("_data_files") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(
        isinstance(f, dict) and isinstance(f.get("filename"), str) for f in entries
    ):
        raise ItemError(f"{state}: '_data_files' must list the folder's Arrow files.")
    n = 0
    for entry in entries:
        name = entry["filename"]
        file = path / name
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ItemError(f"{state}: data file {shown(name)} is outside the folder.")
        try:
            with pa.memory_map(str(file)) as source:
                rows = pa.ipc.open_stream(source).read_all().to_pylist()
        except FileNotFoundError:
            raise ItemError(f"{file}: the Arrow file named in {state.name} is missing.") from None
        except Exception as exc:  # pyarrow errors on a corrupt file
            raise ItemError(f"{file}: cannot be read as Arrow ({_first_line(exc)}).") from None
        for record in rows:
            yield f"row {n}", record
            n += 1
