"""A study's item sources: the ``items`` of a study file, read and checked, and the items.

``[study] items`` (paths) and ``[[items]]`` tables (a path with a column mapping and defaults)
become :class:`ItemSource` entries when the study file is read (:mod:`robustness.study`);
:func:`load_study_items` reads every source and checks that item ids and dataset types agree
across files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from robustness.core.errors import StudyError
from robustness.core.items import ITEM_FIELDS, Item, demo_items, load_items
from robustness.core.names import DATASET_TYPES
from robustness.core.text_safety import shown
from robustness.study_checks import as_table, as_text, check_keys

if TYPE_CHECKING:
    from robustness.study import StudyConfig

__all__ = ["ItemSource", "item_sources", "load_study_items"]


@dataclass(frozen=True)
class ItemSource:
    """One item file and how to read it: the keys of :func:`robustness.load_items`."""

    path: str
    mapping: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    dataset: str | None = None
    dataset_type: str | None = None
    split: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.mapping:
            out["mapping"] = {
                k: v if isinstance(v, str) else list(v) for k, v in self.mapping.items()
            }
        out.update(
            {k: getattr(self, k) for k in ("dataset", "dataset_type", "split") if getattr(self, k)}
        )
        return out


_SOURCE_KEYS = tuple(ItemSource.__dataclass_fields__)


def item_sources(paths: Any, tables: Any, source: str) -> tuple[ItemSource, ...]:
    """``[study] items`` (a path or a list of paths) and ``[[items]]`` tables, in that order.

    ``[study] items`` may also hold tables, as :meth:`StudyConfig.to_dict` writes them, so a
    stored configuration reads back.
    """
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list) or not all(isinstance(p, str | Mapping) for p in paths):
        raise StudyError(
            f"{source}: [study] items must be a path or a list of paths, got {shown(paths)}."
        )
    if isinstance(tables, Mapping):
        tables = [tables]
    if not isinstance(tables, list):
        raise StudyError(f"{source}: [[items]] must be tables, got {shown(tables)}.")
    out = []
    labels = [f"[study] items #{i + 1}" for i in range(len(paths))]
    labels += [f"[[items]] #{i + 1}" for i in range(len(tables))]
    for label, raw in zip(labels, [*paths, *tables], strict=True):
        if isinstance(raw, str):
            out.append(ItemSource(raw))
            continue
        where = f"{source}: {label}"
        entry = as_table(raw, where)
        check_keys(label, entry, _SOURCE_KEYS, source)
        if "path" not in entry:
            raise StudyError(f"{where} needs a path.")
        path = as_text(entry["path"], f"{where} path")
        mapping: dict[str, str | tuple[str, ...]] = {}
        for key, column in as_table(entry.get("mapping", {}), f"{where} mapping").items():
            if key not in ITEM_FIELDS:
                raise StudyError(
                    f"{where} mapping: unknown field {shown(key)}; map {', '.join(ITEM_FIELDS)}."
                )
            if isinstance(column, list) and key == "options":
                if not column or not all(isinstance(c, str) for c in column):
                    raise StudyError(f"{where} mapping options must list column names.")
                mapping[key] = tuple(column)
            else:
                mapping[key] = as_text(column, f"{where} mapping {key}")
        dataset_type = entry.get("dataset_type")
        if dataset_type is not None:
            as_text(dataset_type, f"{where} dataset_type", DATASET_TYPES)
        for key in ("dataset", "split"):
            if entry.get(key) is not None:
                as_text(entry[key], f"{where} {key}")
        out.append(
            ItemSource(path, mapping, entry.get("dataset"), dataset_type, entry.get("split"))
        )
    return tuple(out)


def load_study_items(config: StudyConfig) -> list[Item]:
    """Every item of the study's sources, in order (the bundled demo items when it names none).

    Item ids must be unique within a dataset and a dataset has one type across all sources,
    as within one call of :func:`robustness.load_items`.
    """
    if not config.sources:
        return demo_items()
    items: list[Item] = []
    seen: dict[tuple[str, str], str] = {}
    kinds: dict[str, tuple[str, str]] = {}
    for src in config.sources:
        path = config.path(src.path)
        loaded = load_items(
            path,
            mapping=dict(src.mapping),
            dataset=src.dataset,
            dataset_type=src.dataset_type,
            split=src.split,
        )
        if not loaded:
            raise StudyError(
                f"{path}: the item file holds no items; remove it from the study's items "
                "or fill it."
            )
        for item in loaded:
            if item.key in seen and seen[item.key] != str(path):
                raise StudyError(
                    f"{path}: item {shown(item.item_id)} of dataset {shown(item.dataset)} is "
                    f"also in {seen[item.key]}; give the files distinct dataset names."
                )
            seen[item.key] = str(path)
            kind, first = kinds.setdefault(item.dataset, (item.dataset_type, str(path)))
            if kind != item.dataset_type:
                raise StudyError(
                    f"{path}: dataset {shown(item.dataset)} is {item.dataset_type} here but "
                    f"{kind} in {first}; give the two sets of items distinct dataset names."
                )
            items.append(item)
    return items
