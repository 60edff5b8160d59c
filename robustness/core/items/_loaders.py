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

from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from robustness.core.errors import ItemError
from robustness.core.items._files import check_record, parse_json_cells, records
from robustness.core.items._item import MAX_OPTIONS, Item, ItemFieldError
from robustness.core.text_safety import shown

ColumnMapping = Mapping[str, "str | Sequence[str]"]

ITEM_FIELDS = ("item_id", "dataset", "dataset_type", "question", "options", "answer", "scale")
_REQUIRED = ("question", "options")
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
        for number, (location, record) in enumerate(records(path, split), start=1):
            where = f"{path}, {location}"
            check_record(record, where)
            if text_cells:
                record = parse_json_cells(record, mapping or {}, where)
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
