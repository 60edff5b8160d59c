"""The file paraphraser: question paraphrases written by the user, one per row of a file.

The file is read by the item loaders' own readers (``robustness.core.items``), so it takes the
same formats with the same rules and messages: JSONL, JSON (a list of objects), CSV, TSV and
Parquet, UTF-8 with or without a byte-order mark, a bad record named by file and line (or item,
or row).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from perturbations.paraphrase.rewrite import ParaphraseFileError, Rewrite
from robustness.core.errors import ItemError
from robustness.core.items import Item
from robustness.core.items._files import _csv, _json, _jsonl, _parquet
from robustness.core.prompts import PromptSpec

__all__ = ["FileParaphraser"]

#: Columns every row needs.
REQUIRED = ("item_id", "paraphrase")


def _cell(value: Any, field: str, where: str) -> str:
    if value is None:
        raise ParaphraseFileError(f"{where}, field {field!r}: is empty.")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ParaphraseFileError(f"{where}, field {field!r}: expected text, got {value!r}.")
    text = str(value).strip()
    if not text:
        raise ParaphraseFileError(f"{where}, field {field!r}: is empty.")
    return text


class FileParaphraser:
    """Question paraphrases written by the user, one per row of a JSONL, JSON, CSV, TSV or
    Parquet file.

    Columns: ``item_id``, ``paraphrase`` and, optionally, ``dataset`` (a row without a
    dataset applies to the item with that id in every dataset).  Rows are used in file
    order.  A file that cannot be used stops with one sentence naming the file and line.
    """

    name = "file"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._rows: dict[tuple[str | None, str], list[tuple[int, str, str]]] = {}
        for order, (location, record) in enumerate(self._records()):
            where = f"{self.path}, {location}"
            for field in REQUIRED:
                if field not in record:
                    raise ParaphraseFileError(f"{where}: missing field {field!r}.")
            item_id = _cell(record.get("item_id"), "item_id", where)
            text = _cell(record.get("paraphrase"), "paraphrase", where)
            dataset = record.get("dataset")
            dataset = None if dataset in (None, "") else _cell(dataset, "dataset", where)
            self._rows.setdefault((dataset, item_id), []).append((order, location, text))
        if not self._rows:
            raise ParaphraseFileError(f"{self.path}: holds no paraphrases.")

    def _records(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(location, record) of every non-blank row, through the item loaders' readers."""
        if not self.path.is_file():
            raise ParaphraseFileError(f"{self.path}: no such paraphrase file.")
        suffix = self.path.suffix.lower()
        readers = {
            ".jsonl": _jsonl,
            ".ndjson": _jsonl,
            ".json": _json,
            ".parquet": _parquet,
            ".pq": _parquet,
        }
        try:
            if suffix in (".csv", ".tsv"):
                yield from self._csv("\t" if suffix == ".tsv" else ",")
            elif suffix in readers:
                yield from readers[suffix](self.path)
            else:
                raise ParaphraseFileError(
                    f"{self.path}: unknown paraphrase file type {suffix or '(none)'!r}; "
                    "use .jsonl, .json, .csv, .tsv or .parquet."
                )
        except ItemError as err:
            raise ParaphraseFileError(str(err)) from None

    def _csv(self, delimiter: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for n, (location, record) in enumerate(_csv(self.path, delimiter)):
            if n == 0:
                header = list(record)
                for field in REQUIRED:
                    if field not in header:
                        raise ParaphraseFileError(
                            f"{self.path}, line 1: the header has no column {field!r} "
                            f"(it has {', '.join(repr(h) for h in header) or 'none'})."
                        )
            if all(v is None for v in record.values()):
                continue
            yield location, record

    def paraphrases_of(self, item: Item) -> list[tuple[str, str]]:
        """(location such as ``"line 3"``, paraphrase) for ``item``, in file order."""
        rows = self._rows.get((item.dataset, item.item_id), []) + self._rows.get(
            (None, item.item_id), []
        )
        return [(location, text) for _, location, text in sorted(rows)]

    def paraphrase(
        self, item: Item, spec: PromptSpec, n: int, rng: np.random.Generator
    ) -> list[Rewrite]:
        out = [
            Rewrite(question=text, how=f"file/{location}")
            for location, text in self.paraphrases_of(item)
            if text != spec.question.strip()
        ]
        return out[: max(0, n)]
