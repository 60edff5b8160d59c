"""A progress bar for the Python API: shown when the output is interactive, silent otherwise.

``rb.run`` (and other long calls) take a ``progress(name, done, total)`` callback; when the
caller gives none, :func:`auto_progress` provides one that draws a rich bar per name on a
terminal or in Jupyter, and nothing at all when the output is a file, a pipe or a CI log. The
CLI passes its own callback, drawn by the same :func:`progress_bars` with a rate column, shown
whatever the output is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from robustness.core.text_safety import for_terminal

__all__ = ["ProgressCallback", "RateColumn", "auto_progress", "interactive", "progress_bars"]

#: ``progress(name, done, total)``: called as work completes.
ProgressCallback = Callable[[str, int, int], None]


def interactive(console: Console) -> bool:
    """Whether ``console`` is a terminal a person watches (or a Jupyter notebook).

    Rich alone would say yes to a pipe when ``FORCE_COLOR`` is set (as in many CI logs); the
    stream itself must be a terminal too."""
    if console.is_jupyter:
        return True
    try:
        tty = bool(console.file.isatty())
    except (AttributeError, ValueError, OSError):
        tty = False
    return tty and bool(console.is_interactive)


@contextmanager
def auto_progress(
    given: ProgressCallback | None, console: Console | None = None
) -> Iterator[ProgressCallback | None]:
    """The callback to use: ``given`` when there is one; else a rich bar on ``console``
    (default: standard error) when it is interactive; else None (nothing is printed)."""
    if given is not None:
        yield given
        return
    console = console if console is not None else Console(stderr=True)
    if not interactive(console):
        yield None
        return
    bars, update = progress_bars(console)
    with bars:
        yield update


class RateColumn(ProgressColumn):
    """Completed steps per second of a task, e.g. ``   12.5 prompts/s``."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"      -  {self.unit}/s" if speed is None else f"{speed:7.1f} {self.unit}/s")


def progress_bars(console: Console, unit: str | None = None) -> tuple[Progress, ProgressCallback]:
    """A rich Progress on ``console`` and the ``progress(name, done, total)`` callback that
    drives it: one bar per name (shown as terminal-safe text), with a ``unit``/s rate column
    and an ETA label when ``unit`` is given. Draws only inside ``with progress:``."""
    rate = [RateColumn(unit), TextColumn("ETA")] if unit else []
    bars = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        *rate,
        TimeRemainingColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    tasks: dict[str, TaskID] = {}

    def update(name: str, done: int, total: int) -> None:
        if name not in tasks:
            tasks[name] = bars.add_task(escape(for_terminal(name, 60)), total=total)
        bars.update(tasks[name], completed=done, total=total)

    return bars, update
