"""``robustness import lm-eval`` and ``robustness import inspect``: other tools' logs in."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from robustness.core.text_safety import for_console
from robustness.importers.rows import write_imported
from robustness.importers.task_map import read_task_map


def import_lm_eval_command(
    directory: str, out: str, task_map: str | None, console: Console | None = None
) -> Path:
    """Read an lm-eval ``--log_samples`` folder and write the long table to ``out``."""
    from robustness.importers.lm_eval import import_lm_eval

    places = read_task_map(task_map) if task_map else None
    table = import_lm_eval(directory, places)
    meta = {"source": "lm-eval", "logs": str(directory), "task_map": task_map}
    path = write_imported(table, out, meta)
    _summary(console or Console(), table, path)
    return path


def import_inspect_command(
    logs: Sequence[str], out: str, task_map: str | None, console: Console | None = None
) -> Path:
    """Read inspect_ai eval logs and write the long table to ``out``."""
    from robustness.importers.inspect_log import import_inspect

    places = read_task_map(task_map) if task_map else None
    table = import_inspect(logs, places)
    meta = {"source": "inspect_ai", "logs": [str(x) for x in logs], "task_map": task_map}
    path = write_imported(table, out, meta)
    _summary(console or Console(), table, path)
    return path


def _summary(console: Console, table: object, path: Path) -> None:
    import pandas as pd

    assert isinstance(table, pd.DataFrame)
    console.print(
        f"wrote {len(table)} rows ({table['model'].nunique()} models, "
        f"{table['dataset'].nunique()} datasets, {table['variant_id'].nunique()} prompts) "
        f"to {for_console(path, None)}"
    )
