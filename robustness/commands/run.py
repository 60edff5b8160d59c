"""``robustness run``: a study file in, the long table out, with a progress bar per model."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from robustness.run import run_study
from robustness.study import load_study


class RateColumn(TextColumn):
    """Prompts per second of a task."""

    def __init__(self) -> None:
        super().__init__("")

    def render(self, task):  # type: ignore[no-untyped-def]
        speed = task.finished_speed or task.speed
        return "      -  prompts/s" if speed is None else f"{speed:7.1f} prompts/s"


def progress_bars(console: Console) -> tuple[Progress, Any]:
    """A rich Progress and the ``progress(model, done, total)`` callback that drives it."""
    bars = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    tasks: dict[str, TaskID] = {}

    def update(model: str, done: int, total: int) -> None:
        if model not in tasks:
            tasks[model] = bars.add_task(escape(model), total=total)
        bars.update(tasks[model], completed=done, total=total)

    return bars, update


def summarise(
    console: Console, table: pd.DataFrame, meta: dict[str, Any], path: Path, seconds: float
) -> None:
    valid = table["valid"].mean() if len(table) else float("nan")
    console.print(
        f"[bold]{len(table)}[/] rows ({meta['n_items']} items x "
        f"{meta['n_variants'] // max(1, meta['n_items'])} variants x "
        f"{table['model'].nunique()} models), {valid:.1%} valid, in {seconds:.1f} s"
    )
    for name, entry in meta.get("models", {}).items():
        cache = entry.get("cache", {})
        line = (
            f"  {escape(name)}: dtype {entry.get('runner', {}).get('dtype', '?')}, batch "
            f"{entry.get('runner', {}).get('batch_size', '?')}, cache hits "
            f"{cache.get('hits', 0)}, model calls {cache.get('model_calls', 0)}"
        )
        floor = entry.get("noise_floor")
        if floor:
            line += (
                f"; noise floor: {floor['flips']}/{floor['k']} answers flip from batching "
                f"and precision alone (max |dp| {floor['max_abs_prob_diff']:.2e})"
            )
        console.print(line)
    console.print(f"table: {escape(str(path))}")


def run_command(
    study: str,
    resume: bool,
    limit: int | None,
    noise_floor: int,
    csv: bool,
    ray: str | None = None,
    workers: int = 2,
) -> pd.DataFrame:
    config = load_study(study)
    console = Console()
    bars, update = progress_bars(console)
    start = time.perf_counter()
    with bars:
        table, meta = run_study(
            config,
            limit=limit,
            resume=resume,
            noise_floor=noise_floor,
            progress=update,
            csv=csv,
            ray=ray,
            workers=workers,
        )
    summarise(console, table, meta, config.table_path, time.perf_counter() - start)
    return table
