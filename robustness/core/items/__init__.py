"""Items: the questions a study asks, in canonical form, and the files they come from.

- :class:`Item` and its field checks (``_item.py``);
- :func:`load_items`, :func:`demo_items` and :func:`per_dataset` (``_loaders.py``): JSONL,
  JSON, CSV/TSV, Parquet and ``datasets`` folders, with an optional column mapping;
- :func:`records` (``_files.py``): any item file as ``(location, record)`` pairs, every way a
  file can be unreadable one :class:`~robustness.core.errors.ItemError` naming file and line.
"""

from __future__ import annotations

from robustness.core.items._files import MAX_DEPTH, Record, check_record, records
from robustness.core.items._item import (
    MAX_OPTIONS,
    MAX_TEXT_CHARS,
    Item,
    ItemFieldError,
    check_item_fields,
)
from robustness.core.items._loaders import ITEM_FIELDS, demo_items, load_items, per_dataset

__all__ = [
    "ITEM_FIELDS",
    "MAX_DEPTH",
    "MAX_OPTIONS",
    "MAX_TEXT_CHARS",
    "Item",
    "ItemFieldError",
    "Record",
    "check_item_fields",
    "check_record",
    "demo_items",
    "load_items",
    "per_dataset",
    "records",
]
