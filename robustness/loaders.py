"""Read items from JSONL, JSON, CSV, Parquet or a Hugging Face ``datasets`` folder.

Every source is turned into plain records, renamed through an optional column
mapping, and checked.  A bad record stops the load with one sentence naming the
file, the line (or row) and the field.  Fields the toolkit does not know are
kept in ``Item.meta``.

Items without an id get ``<file stem>-<record number>``.

Column mapping: ``{"question": "prompt", "options": "choices", "answer": "label"}``
renames source columns; ``"options"`` may also map to a list of columns
(``["A", "B", "C", "D"]``), whose empty trailing cells are dropped.  Answers may
be an index, a numeric string, a letter (``"B"``) or the gold option's text.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from robustness.errors import ItemError
from robustness.items import MAX_OPTIONS, Item, ItemFieldError
from robustness.text_safety import shown

Record = tuple[str, dict[str, Any]]  # (location such as "line 7", record)
ColumnMapping = Mapping[str, "str | Sequence[str]"]

ITEM_FIELDS = ("item_id", "dataset", "dataset_type", "question", "options", "answer", "scale")
_REQUIRED = ("question", "options")
#: Deepest nesting of lists and objects accepted in a record (items are flat; ``meta`` may
#: nest a little). Deeper values would exhaust the recursion of every later JSON writer.
MAX_DEPTH = 32
#: File types whose cells are text: their ``options`` and ``meta`` cells may hold JSON.
_TEXT_CELLS = (".csv", ".tsv")


def load_items(
    *paths: str | Path,
    mapping: ColumnMapping | None = None,
    dataset: str | None = None,
    dataset_type: str | None = None,
    split: str | None = None,
) -> list[Item]:
    """Load items from one or more files, in file order.

    Parameters
    ----------
    paths
        ``.jsonl``/``.ndjson``, ``.json`` (a list of objects), ``.csv``/``.tsv``,
        ``.parquet`` files, or folders written by ``datasets.Dataset.save_to_disk``.
    mapping
        Our field name -> the source's column name (see the module docstring).
    dataset, dataset_type
        Defaults for records that do not give them (the dataset defaults to the file stem).
    split
        For a saved ``DatasetDict``: the split to read (default: every split).

    Examples
    --------
    >>> import robustness as rb
    >>> items = rb.demo_items()
    >>> {i.dataset_type for i in items} == {"objective", "subjective"}
    True
    """
    _check_mapping(mapping)
    for name, value in (("dataset", dataset), ("dataset_type", dataset_type), ("split", split)):
        if value is not None and not isinstance(value, str):
            raise ItemError(f"load_items: {name} must be text, got {shown(value)}.")
    items: list[Item] = []
    seen: dict[tuple[str, str], str] = {}
    types: dict[str, tuple[str, str]] = {}  # dataset -> (dataset_type, where first seen)
    for raw_path in paths:
        path = Path(raw_path)
        text_cells = path.suffix.lower() in _TEXT_CELLS and not path.is_dir()
        for number, (location, record) in enumerate(_records(path, split), start=1):
            where = f"{path}, {location}"
            _check_record(record, where)
            if text_cells:
                record = _parse_json_cells(record, mapping or {}, where)
            item = _to_item(
                record,
                mapping or {},
                dataset or path.stem,
                dataset_type,
                where,
                default_id=f"{path.stem}-{number}",
            )
            if item.key in seen:
                raise ItemError(
                    f"{where}, field 'item_id': {shown(item.item_id)} of dataset "
                    f"{shown(item.dataset)} duplicates the item at {seen[item.key]}."
                )
            seen[item.key] = where
            kind, first = types.setdefault(item.dataset, (item.dataset_type, where))
            if kind != item.dataset_type:
                raise ItemError(
                    f"{where}, field 'dataset_type': dataset {shown(item.dataset)} is "
                    f"{item.dataset_type} here but {kind} at {first}; give the two sets of "
                    "items distinct dataset names."
                )
            items.append(item)
    return items


def _check_mapping(mapping: Any) -> None:
    if mapping is None:
        return
    if not isinstance(mapping, Mapping):
        raise ItemError(
            f"load_items: mapping must be a dict of field -> column, got {shown(mapping)}."
        )
    for field, column in mapping.items():
        if field not in ITEM_FIELDS:
            raise ItemError(
                f"load_items: mapping names the unknown field {shown(field)}; map "
                f"{', '.join(ITEM_FIELDS)}."
            )
        several = field == "options" and isinstance(column, list | tuple)
        if not isinstance(column, str) and not (
            several and all(isinstance(c, str) for c in column)
        ):
            raise ItemError(
                f"load_items: mapping {field!r} must name a column (options: a list of "
                f"columns), got {shown(column)}."
            )


def per_dataset(items: Sequence[Item], n: int) -> list[Item]:
    """At most ``n`` items of every dataset and dataset type, evenly spaced through it, in the
    original order.

    Strata are (dataset, dataset_type), so a source holding objective and subjective items
    contributes ``n`` of each.  Deterministic (no randomness): the same files give the same
    subset.  ``n <= 0`` keeps everything.
    """
    if n <= 0:
        return list(items)
    groups: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        groups.setdefault((item.dataset, item.dataset_type), []).append(item)
    keep: set[tuple[str, str]] = set()
    for group in groups.values():
        step = max(1.0, len(group) / n)
        keep.update(group[int(i * step)].key for i in range(min(n, len(group))))
    return [item for item in items if item.key in keep]


def demo_items() -> list[Item]:
    """The bundled demo items (objective multiple choice and subjective survey items)."""
    folder = resources.files("robustness") / "data"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".jsonl"))
    paths = []
    for name in names:
        with resources.as_file(folder / name) as p:
            paths.append(Path(p))
    return load_items(*paths)


# ----------------------------------------------------------------------------- sources


def _records(path: Path, split: str | None) -> Iterator[Record]:
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


def _parse_json_cells(record: dict[str, Any], mapping: ColumnMapping, where: str) -> dict[str, Any]:
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
            _check_record({name: parsed}, where)
    return out


def _check_record(record: Mapping[str, Any], where: str) -> None:
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


# ----------------------------------------------------------------------------- records


def _to_item(
    record: dict[str, Any],
    mapping: ColumnMapping,
    default_dataset: str,
    default_type: str | None,
    where: str,
    default_id: str,
) -> Item:
    fields, used = _apply_mapping(record, mapping, where)
    meta = {k: v for k, v in record.items() if k not in used and k != "meta"}
    if isinstance(record.get("meta"), Mapping):
        meta = {**record["meta"], **meta}
    for name in _REQUIRED:
        if fields.get(name) is None:
            raise ItemError(f"{where}, field {name!r}: is missing.")
    try:
        options, answer_labels = _options(fields["options"])
        dataset_type = fields.get("dataset_type") or default_type
        if dataset_type is None:
            raise ItemFieldError("dataset_type", "is missing (give it per item or as a default)")
        answer = _answer(fields.get("answer"), options, answer_labels)
        scale = fields.get("scale") or ("nominal" if dataset_type == "objective" else "ordinal")
        item_id = _scalar_text(fields.get("item_id"), "item_id")
        return Item(
            item_id=item_id if item_id is not None else default_id,
            dataset=_scalar_text(fields.get("dataset"), "dataset") or default_dataset,
            dataset_type=_word(dataset_type, "dataset_type"),
            question=fields["question"] if isinstance(fields["question"], str) else "",
            options=options,
            answer=answer,
            scale=_word(scale, "scale"),
            meta=meta,
        )
    except ItemFieldError as exc:
        raise ItemError(f"{where}, field {exc.field!r}: {exc.message}.") from None


def _apply_mapping(
    record: Mapping[str, Any], mapping: ColumnMapping, where: str
) -> tuple[dict[str, Any], set[str]]:
    fields: dict[str, Any] = {}
    used: set[str] = set()
    for name in ITEM_FIELDS:
        source = mapping.get(name, name)
        if isinstance(source, str):
            if source in record:
                fields[name] = record[source]
                used.add(source)
            elif name in mapping:
                raise ItemError(
                    f"{where}, field {name!r}: the mapped column {source!r} is missing "
                    f"(columns: {', '.join(map(repr, record))})."
                )
        else:  # options spread over several columns
            missing = [c for c in source if c not in record]
            if missing:
                raise ItemError(
                    f"{where}, field {name!r}: the mapped column(s) "
                    f"{', '.join(map(repr, missing))} are missing."
                )
            cells = [record[c] for c in source]
            while cells and (cells[-1] is None or str(cells[-1]).strip() == ""):
                cells.pop()
            fields[name] = cells
            used.update(source)
    return fields, used


def _scalar_text(value: Any, name: str) -> str | None:
    """A text or number cell as text (``None`` and NaN stay missing); anything else refused."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > 3000:
            raise ItemFieldError(name, f"is {shown(value)}, too long for a name")
        return str(value)
    if isinstance(value, float):
        return str(value)
    raise ItemFieldError(name, f"must be text or a number, got {shown(value)}")


def _word(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ItemFieldError(name, f"must be text, got {shown(value)}")
    return value


def _options(value: Any) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """Option texts, and the source's own labels when it gives them (``{"text", "label"}``)."""
    labels = None
    if isinstance(value, Mapping) and "text" in value:
        raw = value.get("label")
        if raw is not None and (isinstance(raw, str | bytes) or not isinstance(raw, Iterable)):
            raise ItemFieldError("options", f"'label' must be a list of labels, got {shown(raw)}")
        labels = tuple(_scalar_text(v, "options") or "" for v in raw or ()) or None
        value = value["text"]
    if isinstance(value, str):
        raise ItemFieldError("options", "must be a list of option texts, got a single string")
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise ItemFieldError("options", f"must be a list of option texts, got {shown(value)}")
    options = tuple(value)
    if len(options) > MAX_OPTIONS:
        raise ItemFieldError(
            "options",
            f"has {len(options)} options; at most {MAX_OPTIONS} (labels A-Z) are supported",
        )
    texts = []
    for i, option in enumerate(options):
        try:
            text = _scalar_text(option, "options")
        except ItemFieldError:
            raise ItemFieldError(
                "options", f"option {i} must be text or a number, got {shown(option)}"
            ) from None
        if text is None:
            raise ItemFieldError("options", f"option {i} is empty")
        texts.append(text)
    return tuple(texts), labels


def _answer(value: Any, options: Sequence[str], labels: Sequence[str] | None) -> int | None:
    """The gold index from an index, a numeric string, a letter, a source label or option text.

    A string that reads both as an index and as the text of a *different* option (options
    "2", "3", "5", "7" with answer "2") is refused as ambiguous rather than guessed.
    """
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ItemFieldError("answer", f"must be an option index, got {shown(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise ItemFieldError("answer", f"must be an option index, got {shown(value)}")
    text = value.strip()
    if labels and text in labels:
        return list(labels).index(text)
    as_text = [i for i, option in enumerate(options) if option.strip() == text]
    number = _integral(text)
    if number is not None:
        if as_text and as_text[0] != number:
            raise ItemFieldError(
                "answer",
                f"{shown(value)} is ambiguous: it is index {number} and also the text of "
                f"option {as_text[0]}; give the index as a number or map a column of option "
                "texts",
            )
        return number
    if len(text) == 1 and text.isalpha() and text.isascii():
        return ord(text.upper()) - ord("A")
    if as_text:
        return as_text[0]
    raise ItemFieldError(
        "answer", f"{shown(value)} is neither an index, a letter nor the text of an option"
    )


def _integral(text: str) -> int | None:
    """``"2"`` and ``"2.0"`` (as pandas writes integers with missing values) -> 2, else None."""
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() and text.lstrip("-")[:1].isdigit() else None
