"""``robustness run``: a study file in, the long table out, with a progress bar per model.

On a terminal the progress is a bar per model; when the output is a file or a pipe it is a
plain line every 30 s or every 5 % (:class:`robustness.progress.LineProgress`).  Ctrl-C
ends with one line: how many answers are safely in the cache and the command that resumes.

After the table is written, :func:`run_problems` decides whether the run failed: a model that
answered none of its prompts (every row an ``error: ...`` row), or a share of error rows above
``--max-error-rate``. The summary names each failed model and why, once; the command exits 1.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.markup import escape

from robustness.core.text_safety import for_terminal
from robustness.progress import LineProgress, interactive, progress_bars
from robustness.run import run_study
from robustness.study import StudyConfig, load_study

MAX_ERROR_RATE = 0.05  # the default of --max-error-rate


def _error_rows(table: pd.DataFrame) -> pd.Series:
    if "invalid_reason" not in table.columns or not len(table):
        return pd.Series(False, index=table.index)
    reason = table["invalid_reason"].astype("string")
    return reason.str.startswith("error:").fillna(False).astype(bool)


def _reason(invalid_reason: str) -> str:
    return for_terminal(str(invalid_reason).removeprefix("error:").strip(), 300)


def run_problems(table: pd.DataFrame, max_error_rate: float = MAX_ERROR_RATE) -> list[str]:
    """Why a run failed, one sentence per failure (empty: it did not).

    A model fails when it answered none of its prompts (every row is an error row); the run
    fails when the share of error rows over all models exceeds ``max_error_rate``. Each
    sentence names the model and its first error message once, however many rows repeat it.
    """
    if not len(table):
        return []
    errors = _error_rows(table)
    out: list[str] = []
    failed: set[str] = set()
    for model, rows in errors.groupby(table["model"], sort=False):
        if rows.all():
            failed.add(model)
            out.append(
                f"model {for_terminal(model, 80)!r} answered none of its {len(rows)} prompts: "
                f"{_reason(table.loc[rows.index[0], 'invalid_reason'])}"
            )
    share = float(errors.mean())
    if share > max_error_rate:
        sentence = (
            f"{int(errors.sum())} of {len(table)} rows ({share:.1%}) are model errors, more "
            f"than --max-error-rate {max_error_rate:.1%}"
        )
        worst = table.loc[errors, "model"].value_counts().index[0]
        if worst not in failed:
            first = table.loc[errors & (table["model"] == worst), "invalid_reason"].iloc[0]
            sentence += f"; most from model {for_terminal(worst, 80)!r}: {_reason(first)}"
        out.append(sentence)
    return out


def summarise(
    console: Console,
    table: pd.DataFrame,
    meta: dict[str, Any],
    path: Path,
    seconds: float,
    problems: list[str] | None = None,
) -> None:
    valid = table["valid"].mean() if len(table) else float("nan")
    n_models = int(table["model"].nunique()) if len(table) else 0
    n_items, n_prompts = int(meta["n_items"]), int(meta["n_variants"])
    console.print(
        f"[bold]{len(table)}[/] rows = {n_prompts} prompts x {n_models} "
        f"model{'s' if n_models != 1 else ''} ({n_items} items: {n_items} original prompts and "
        f"{n_prompts - n_items} variants), {valid:.1%} valid, in {seconds:.1f} s"
    )
    design = meta.get("budget")
    if design:
        console.print(
            f"  budget {design['fraction']:g}: {design['n_asked']} of the {design['n_grid']} "
            f"prompts asked (seed {design['seed']}; every original and every variant at least once)"
        )
    for name, entry in meta.get("models", {}).items():
        cache = entry.get("cache", {})
        line = (
            f"  {escape(for_terminal(name, 80))}: dtype "
            f"{entry.get('runner', {}).get('dtype', '?')}, batch "
            f"{entry.get('runner', {}).get('batch_size', '?')}; "
            f"{cache.get('hits', 0)} prompts answered from the cache, "
            f"{cache.get('misses', 0)} by the model"
        )
        if cache.get("unreadable"):
            line += f", {cache['unreadable']} unreadable cache entries recomputed"
        floor = entry.get("noise_floor")
        if floor:
            line += (
                f"; noise floor: {floor['flips']}/{floor['k']} answers flip from batching "
                f"and precision alone (max |dp| {floor['max_abs_prob_diff']:.2e})"
            )
        console.print(line)
    console.print(f"table: {escape(for_terminal(path, None))}")
    for problem in problems or []:
        console.print(f"[bold red]failed:[/] {escape(problem)}")


def resume_command(
    study: str,
    limit: int | None,
    noise_floor: int,
    csv: bool,
    ray: str | None,
    workers: int,
    budget: float | None = None,
    *,
    max_error_rate: float = MAX_ERROR_RATE,
    keep_going: bool = False,
) -> str:
    """The shell command that resumes an interrupted run (resuming is the default).

    It repeats every run option the user gave that is not at its default, so the resumed run
    asks the same prompts and fails (or not) by the same rules; ``--resume`` is left out.
    """
    args = ["robustness", "run", study]
    if limit is not None:
        args += ["--limit", str(limit)]
    if noise_floor:
        args += ["--noise-floor", str(noise_floor)]
    if csv:
        args.append("--csv")
    if ray is not None:
        args += ["--ray", ray, "--workers", str(workers)]
    if budget is not None:
        args += ["--budget", str(budget)]
    if max_error_rate != MAX_ERROR_RATE:
        args += ["--max-error-rate", str(max_error_rate)]
    if keep_going:
        args.append("--keep-going")
    return shlex.join(args)


def cached_answers(config: StudyConfig) -> int:
    """How many answers the study's cache holds (0 when it cannot be read)."""
    from robustness.core.cache import Cache

    if not config.cache_path.exists():
        return 0
    try:
        with Cache(config.cache_path, timeout=5.0) as cache:
            return len(cache)
    except Exception:  # an interrupted write must not turn the last line into a traceback
        return 0


def run_command(
    study: str,
    resume: bool,
    limit: int | None,
    noise_floor: int,
    csv: bool,
    ray: str | None = None,
    workers: int = 2,
    *,
    max_error_rate: float = MAX_ERROR_RATE,
    console: Console | None = None,
    progress_interval: float = 30.0,
    clock: Callable[[], float] = time.monotonic,
    budget: float | None = None,
    keep_going: bool = False,
) -> list[str]:
    """Run the study, write its table, print the summary; return why the run failed (if it
    did, see :func:`run_problems`).  ``progress_interval`` and ``clock`` set the plain
    progress lines printed when ``console`` is not a terminal; ``keep_going`` (the caller
    decides the exit code) only goes into the resume command printed at Ctrl-C."""
    config = load_study(study)
    console = console or Console()
    update: Any
    if interactive(console):
        bars, update = progress_bars(console, unit="prompts")
        context: Any = bars
    else:
        update = LineProgress(console, interval=progress_interval, clock=clock)
        context = nullcontext()
    start = time.perf_counter()
    try:
        with context:
            table, meta = run_study(
                config,
                limit=limit,
                resume=resume,
                noise_floor=noise_floor,
                progress=update,
                csv=csv,
                ray=ray,
                workers=workers,
                budget=budget,
            )
    except KeyboardInterrupt:
        again = resume_command(
            study,
            limit,
            noise_floor,
            csv,
            ray,
            workers,
            budget,
            max_error_rate=max_error_rate,
            keep_going=keep_going,
        )
        print(
            f"interrupted: {cached_answers(config):,} answers are safely cached in "
            f"{for_terminal(config.cache_path, None)}; resume with: {for_terminal(again, None)}",
            file=sys.stderr,
        )
        raise SystemExit(130) from None
    problems = run_problems(table, max_error_rate)
    summarise(console, table, meta, config.table_path, time.perf_counter() - start, problems)
    return problems
