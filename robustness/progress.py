"""A progress bar for the Python API: shown when the output is interactive, silent otherwise.

``rb.run`` (and other long calls) take a ``progress(name, done, total)`` callback; when the
caller gives none, :func:`auto_progress` provides one that draws a rich bar per name on a
terminal or in Jupyter, and nothing at all when the output is a file, a pipe or a CI log. The
CLI passes its own callback: on a terminal the same :func:`progress_bars` with a rate column,
otherwise plain progress lines every 30 s or 5% (:class:`LineProgress`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

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

__all__ = [
    "LineProgress",
    "ProgressCallback",
    "RateColumn",
    "auto_progress",
    "interactive",
    "progress_bars",
]

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


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


@dataclass
class LineProgress:
    """The ``progress(name, done, total)`` callback for output that is not a terminal.

    Prints one plain line per name (``model: done/total prompts, rate prompts/s, about T
    left``) when ``interval`` seconds have passed since its last line, when another
    ``step`` of the total is done, and when the name finishes; a log or a pipe then shows
    the run moving.  ``clock`` (seconds, monotonic) is injectable for tests.
    """

    console: Console
    unit: str = "prompts"
    interval: float = 30.0
    step: float = 0.05
    clock: Callable[[], float] = time.monotonic
    _state: dict[str, tuple[float, int, float, int]] = field(default_factory=dict)

    def __call__(self, name: str, done: int, total: int) -> None:
        now = self.clock()
        if name not in self._state:  # (start time, done at start, last line's time and done)
            self._state[name] = (now, done, now, done)
            return
        start, done0, last_t, last_done = self._state[name]
        every = max(1, int(self.step * total)) if total else 1
        finished = total > 0 and done >= total and last_done < total
        if not (finished or now - last_t >= self.interval or done - last_done >= every):
            return
        self._state[name] = (start, done0, now, done)
        elapsed = now - start
        rate = (done - done0) / elapsed if elapsed > 0 else float("nan")
        left = (
            f"about {_duration((total - done) / rate)} left"
            if rate == rate and rate > 0 and done < total
            else ("done" if done >= total else "time left unknown")
        )
        self.console.print(
            f"{for_terminal(name, 60)}: {done:,}/{total:,} {self.unit}, "
            f"{rate:.1f} {self.unit}/s, {left}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
