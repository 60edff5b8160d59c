"""``robustness power``: the power of a planned study's tests, by simulation.

A thin shell over :func:`analyses.power.power` and :func:`analyses.power.solve_items`:
effects from a pilot table (``--pilot``) or from assumptions (``--base``, ``--gap``,
``--correlation``), a planned design, and ``DIR/power.csv``, ``DIR/power_curve.png`` and
``DIR/power.json`` out.  A progress bar is shown when the console is a terminal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.markup import escape

from robustness.core.errors import StudyError
from robustness.core.text_safety import for_console

__all__ = ["parse_ints", "run_power"]


def parse_ints(text: str, name: str) -> list[int]:
    """``'20,40,80'`` -> [20, 40, 80], or one clear error naming the option."""
    try:
        values = [int(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise StudyError(f"{name} must be comma-separated integers, not {text!r}.") from None
    if not values:
        raise StudyError(f"{name} is empty.")
    return values


def _effects(
    pilot: str | None,
    gap: float | None,
    base: float | None,
    correlation: float | None,
    families: str,
) -> Any:
    from analyses.power_model import assumed_effects, effects_from_pilot
    from robustness.core.names import FAMILY_ORDER

    if pilot is not None:
        from robustness.core.table import read_table

        effects = effects_from_pilot(read_table(pilot), gap=gap)
        if correlation is not None:
            note = f"item-level correlation set to {float(correlation):g} by --correlation"
            effects = effects.with_correlation(float(correlation), note)
        return effects
    if base is None or gap is None or correlation is None:
        raise StudyError(
            "give --pilot TABLE, or all of --base, --gap and --correlation (assumed effects)."
        )
    cats = list(FAMILY_ORDER) if families == "all" else [f.strip() for f in families.split(",")]
    return assumed_effects(base, gap, correlation, [c for c in cats if c])


def _mapper(ray: str | None) -> Any:
    if ray is None:
        return None
    try:
        from ray.util.multiprocessing import Pool
    except ImportError:
        raise StudyError("--ray needs Ray installed (pip install 'ray[default]').") from None
    return Pool(ray_address=None if ray == "local" else ray).imap


def run_power(
    out: str | Path,
    *,
    pilot: str | None = None,
    items: Sequence[int] = (20, 40, 80),
    sims: int = 200,
    gap: float | None = None,
    base: float | None = None,
    correlation: float | None = None,
    families: str = "all",
    variants: int = 2,
    models: int = 1,
    datasets: Sequence[int] = (2, 2),
    alpha: float = 0.05,
    seed: int = 0,
    workers: int | None = None,
    solve: str | None = None,
    target: float = 0.8,
    terms: Sequence[str] = ("dataset_type",),
    ray: str | None = None,
    console: Console | None = None,
    cov_type: str = "robust",
    test: str = "chi2",
) -> pd.DataFrame:
    """Estimate power (or solve for items), write the CSV, figure and JSON; return the table."""
    from analyses.power import power, solve_items
    from analyses.power_model import Design
    from robustness.report.figures import save
    from robustness.report.figures_ranking import power_curve

    console = console or Console()
    if solve not in (None, "items"):
        raise StudyError(f"--solve can only be 'items', not {solve!r}.")
    effects = _effects(pilot, gap, base, correlation, families)
    if list(terms) == ["all"]:
        from analyses.power import power_terms

        terms = power_terms(effects)
    n_obj, n_subj = (int(d) for d in datasets)
    design = Design(int(items[0]), int(variants), int(models), (n_obj, n_subj))
    workers = workers or os.cpu_count() or 1
    kwargs: dict[str, Any] = dict(
        sims=sims,
        alpha=alpha,
        seed=seed,
        workers=workers,
        mapper=_mapper(ray),
        cov_type=cov_type,
        test=test,
    )
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    info: dict[str, Any] = {
        "effects": effects.agreement.to_dict("records"),
        "correlation": effects.correlation,
        "source": effects.source,
        "design": {
            "variants_per_family": design.variants_per_family,
            "models": design.models,
            "datasets_per_type": list(design.datasets_per_type),
        },
        "sims": sims,
        "alpha": alpha,
        "cov_type": cov_type,
        "test": test,
        "seed": seed,
        "notes": list(effects.notes),
    }
    with _progress(console) as tick:
        if solve == "items":
            res = solve_items(
                effects, target, list(terms), design, start=min(items), progress=tick, **kwargs
            )
            table = res.table
            info["solve"] = {"items": res.items, "target": target, "terms": res.terms}
        else:
            total = sims * len(items)
            tick(0, total)
            table = power(effects, items, design, progress=tick, **kwargs)
    info["sigma"] = table.attrs.get("sigma")
    table.to_csv(folder / "power.csv", index=False)
    save(power_curve(table, alpha=alpha), folder / "power_curve.png")
    (folder / "power.json").write_text(json.dumps(info, indent=2, default=str))
    _print(console, table, info, folder)
    return table


class _progress:
    """A rich progress bar when the console is a terminal; a no-op otherwise."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self):
        if self.console.is_terminal:
            from rich.progress import Progress

            self.bar = Progress(console=self.console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("simulations", total=None)

        def tick(done: int, total: int | None = None) -> None:
            if self.bar is None:
                return
            if total is not None:
                self.bar.update(self.task, total=total)
            self.bar.advance(self.task, done)

        return tick

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def _print(console: Console, table: pd.DataFrame, info: dict[str, Any], folder: Path) -> None:
    from rich.table import Table

    wide = table.pivot(index="items_per_dataset", columns="term", values="power")
    contrasts = [c for c in wide.columns if str(c).startswith("contrast:")]
    walds = [c for c in dict.fromkeys(table["term"]) if c not in contrasts]
    t = Table(
        title=f"Power at alpha = {info['alpha']:g} ({info['sims']} simulations each; "
        f"covariance {info.get('cov_type', 'robust')}, reference {info.get('test', 'chi2')})"
    )
    t.add_column("items per dataset", justify="right")
    for term in walds:
        t.add_column(for_console(term), justify="right")
    if contrasts:
        t.add_column(f"{len(contrasts)} contrasts (min - max)", justify="right")
    for n, row in wide.iterrows():
        cells = [f"{row[w]:.2f}" for w in walds]
        if contrasts:
            c = row[contrasts]
            cells.append(f"{c.min():.2f} - {c.max():.2f}")
        t.add_row(str(n), *cells)
    console.print(t)
    for note in info["notes"]:
        console.print(f"note: {for_console(note)}")
    if "solve" in info:
        s = info["solve"]
        what = ", ".join(s["terms"])
        console.print(
            f"smallest items per dataset with power >= {s['target']:g} for {for_console(what)}: "
            + (str(s["items"]) if s["items"] is not None else "not reached")
        )
    console.print(f"written: {escape(str(folder / 'power.csv'))} and power_curve.png")
