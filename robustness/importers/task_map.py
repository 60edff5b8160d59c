"""The task map shared by the importers: which dataset, category and variant each task is.

A map is a TOML file with one table per task::

    [tasks.mmlu_tmpl_b]
    dataset = "mmlu"
    dataset_type = "objective"
    category = "formatting"
    variant = 0

Without a map every task is its own dataset (objective), category ``original``, variant 0.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from robustness.core.errors import StudyError
from robustness.core.names import DATASET_TYPES

__all__ = ["TaskPlace", "place_of", "read_task_map"]

_KEYS = ("dataset", "dataset_type", "category", "variant")


@dataclass(frozen=True)
class TaskPlace:
    """Where one task's rows go in the long table."""

    dataset: str
    dataset_type: str
    category: str
    variant: int

    @property
    def variant_id(self) -> str:
        """The stable variant id, ``category/variant``."""
        return f"{self.category}/{self.variant}"


def read_task_map(path: str | Path) -> dict[str, TaskPlace]:
    """Read a task map file; every error names the file, the task and the field.

    Parameters
    ----------
    path
        The TOML file.

    Returns
    -------
    dict
        Task name -> :class:`TaskPlace`.
    """
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StudyError(f"{path}: the task map cannot be read ({exc.strerror}).") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise StudyError(f"{path}: not a TOML file ({exc}).") from None
    tasks = raw.get("tasks")
    if not isinstance(tasks, dict) or not tasks:
        raise StudyError(f"{path}: a task map needs [tasks.NAME] tables; none found.")
    out = {}
    for name, entry in tasks.items():
        where = f"{path}, [tasks.{name}]"
        if not isinstance(entry, dict):
            raise StudyError(f"{where}: must be a table with keys {', '.join(_KEYS)}.")
        unknown = sorted(set(entry) - set(_KEYS))
        if unknown:
            raise StudyError(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(_KEYS)}).")
        dataset = entry.get("dataset", name)
        dataset_type = entry.get("dataset_type", "objective")
        category = entry.get("category", "original")
        variant = entry.get("variant", 0)
        for field, value in (("dataset", dataset), ("category", category)):
            if not isinstance(value, str) or not value.strip():
                raise StudyError(f"{where}, field {field!r}: {value!r} is not a non-empty string.")
        if dataset_type not in DATASET_TYPES:
            raise StudyError(
                f"{where}, field 'dataset_type': {dataset_type!r} is not one of "
                f"{', '.join(sorted(DATASET_TYPES))}."
            )
        if not isinstance(variant, int) or isinstance(variant, bool) or variant < 0:
            raise StudyError(f"{where}, field 'variant': {variant!r} is not an integer >= 0.")
        out[str(name)] = TaskPlace(str(dataset), str(dataset_type), str(category), variant)
    return out


def place_of(task: str, task_map: dict[str, TaskPlace] | None, source: str) -> TaskPlace:
    """The place of ``task``: from the map, or the default when there is no map.

    Parameters
    ----------
    task
        The task name in the log.
    task_map
        The map read by :func:`read_task_map`, or None.
    source
        The file the task came from, named in the error when the map lacks it.

    Returns
    -------
    TaskPlace
        Raises :class:`StudyError` when a map is given and has no entry for ``task``.
    """
    if task_map is None:
        return TaskPlace(task, "objective", "original", 0)
    if task not in task_map:
        raise StudyError(
            f"{source}: task {task!r} has no [tasks.{task}] entry in the task map "
            f"(mapped: {', '.join(sorted(task_map)[:5])})."
        )
    return task_map[task]
