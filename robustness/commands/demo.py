"""``robustness demo``: a complete study on the bundled items with the embedded model, offline.

The default is sized to finish well inside 10 minutes on a 2-core CPU: 12
items of each of the four bundled datasets (48 items, half objective and half
subjective), two variants of each of the eight families, and the embedded
SmolLM2-135M-Instruct in ``choice`` mode.  ``--per-dataset 0`` uses every
bundled item.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console

from robustness.commands.run import summarise
from robustness.core.items import demo_items, per_dataset
from robustness.core.names import FAMILY_ORDER
from robustness.core.text_safety import for_console
from robustness.progress import progress_bars
from robustness.study import ModelConfig, StudyConfig


def demo_config(out: Path, mode: str, n_variants: int, seed: int) -> StudyConfig:
    return StudyConfig(
        name="demo",
        seed=seed,
        families=FAMILY_ORDER,
        n_variants=n_variants,
        models=(ModelConfig(name="smollm2-135m", mode=mode, batch_size=16, max_new_tokens=12),),
        table=str(out / "demo.parquet"),
        cache=str(out / "demo.cache.sqlite"),
    )


def run_demo(out: str, mode: str, n_per_dataset: int, n_variants: int, seed: int) -> None:
    from robustness.analysis.pipeline import analyze
    from robustness.report import headline, write_report
    from robustness.run import run_study

    console = Console()
    start = time.perf_counter()
    folder = Path(out).resolve()
    config = demo_config(folder, mode, n_variants, seed)
    items = per_dataset(demo_items(), n_per_dataset)
    console.print(
        f"[bold]robustness demo[/]: {len(items)} bundled items x 8 families x "
        f"{n_variants} variants, SmolLM2-135M-Instruct ({mode} mode) on the CPU"
    )
    bars, update = progress_bars(console, unit="prompts")
    with bars:
        table, meta = run_study(
            config, items=items, progress=update, noise_floor=16 if mode == "choice" else 0
        )
    summarise(console, table, meta, config.table_path, time.perf_counter() - start)
    result = analyze(table, folder, console=console, families=list(FAMILY_ORDER))
    paths = write_report(result, folder, meta)
    console.rule("headline")
    for line in headline(result).lines():
        console.print(for_console(line, None))
    console.print(f"report: {for_console(paths['html'], None)} (and report.md, figures/, tables/)")
    console.print(f"done in {time.perf_counter() - start:.0f} s")
