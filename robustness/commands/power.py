"""``robustness power``: the power of a planned study's tests, by simulation.

A thin shell over :func:`analyses.power.power` and :func:`analyses.power.solve.solve_items`:
effects from a pilot table (``--pilot``) or from assumptions (``--base``, ``--gap``,
``--correlation``), a planned design, and ``DIR/power.csv``, ``DIR/power_curve.png`` and
``DIR/power.json`` out.  With a pilot, the planned design is the pilot's unless an option
overrides a part of it; the command prints the design it simulated and ``power.json``
records it with where each part came from.  A progress bar is shown when the console is a terminal.
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

from analyses.gee.small_sample import DEFAULT_COV_TYPE, DEFAULT_TEST
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


#: The planned design without a pilot, and the options that set each part of it.
DEFAULT_DESIGN = {"items": [20, 40, 80], "variants": 2, "models": 1, "datasets": [2, 2]}


def pilot_design(table: pd.DataFrame) -> dict[str, Any]:
    """The design of a pilot long table, in the options' terms.

    Returns
    -------
    dict
        ``items`` (a one-element list: the median number of items per dataset),
        ``variants`` (the median number of variants per item and perturbation category),
        ``models`` (distinct models) and ``datasets`` ([objective, subjective] distinct
        datasets; a type the pilot lacks counts as 1, as the simulation needs one).
    """
    per_item = table[table["category"] != "original"].drop_duplicates(
        ["dataset", "item_id", "category", "variant_id"]
    )
    variants = per_item.groupby(["dataset", "item_id", "category"]).size()
    items = table.groupby("dataset")["item_id"].nunique()
    types = table.drop_duplicates("dataset").groupby("dataset_type")["dataset"].size()
    return {
        "items": [max(2, round(float(items.median())))],
        "variants": max(1, round(float(variants.median()))) if len(variants) else 1,
        "models": max(1, int(table["model"].nunique())),
        "datasets": [max(1, int(types.get(t, 0))) for t in ("objective", "subjective")],
    }


def _planned(given: dict[str, Any], pilot: dict[str, Any] | None) -> tuple[dict, dict]:
    """Each part of the design: the option when given, else the pilot's, else the default;
    with where each came from ("option", "pilot" or "default")."""
    values, source = {}, {}
    for key, default in DEFAULT_DESIGN.items():
        if given.get(key) is not None:
            values[key], source[key] = given[key], "option"
        elif pilot is not None:
            values[key], source[key] = pilot[key], "pilot"
        else:
            values[key], source[key] = default, "default"
    return values, source


def design_line(values: dict[str, Any], source: dict[str, Any]) -> str:
    """One sentence: the design simulated and where each part came from."""
    items = ",".join(str(n) for n in values["items"])
    n_obj, n_subj = values["datasets"]
    return (
        f"design simulated: {items} items per dataset ({source['items']}), "
        f"{values['variants']} variants per family ({source['variants']}), "
        f"{values['models']} model(s) ({source['models']}), {n_obj} objective + {n_subj} "
        f"subjective datasets ({source['datasets']})"
    )


def _effects(
    table: pd.DataFrame | None,
    gap: float | None,
    base: float | None,
    correlation: float | None,
    families: str,
) -> Any:
    from analyses.power.effects import assumed_effects, effects_from_pilot
    from robustness.core.names import FAMILY_ORDER

    if table is not None:
        effects = effects_from_pilot(table, gap=gap)
        if correlation is not None:
            note = (
                f"item-level rho {float(correlation):g}, set by --correlation (the pilot's "
                f"estimate was {effects.correlation:.3f})"
            )
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
    items: Sequence[int] | None = None,
    sims: int = 200,
    gap: float | None = None,
    base: float | None = None,
    correlation: float | None = None,
    families: str = "all",
    variants: int | None = None,
    models: int | None = None,
    datasets: Sequence[int] | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    workers: int | None = None,
    solve: str | None = None,
    target: float = 0.8,
    terms: Sequence[str] = ("dataset_type",),
    ray: str | None = None,
    max_sims: int | None = None,
    console: Console | None = None,
    cov_type: str = DEFAULT_COV_TYPE,
    test: str = DEFAULT_TEST,
) -> pd.DataFrame:
    """Estimate power (or solve for items), write the CSV, figure and JSON; return the table.

    ``items``, ``variants``, ``models`` and ``datasets`` left at None take the pilot's
    design (:func:`pilot_design`) when there is a pilot, else :data:`DEFAULT_DESIGN`.
    """
    from analyses.power.effects import Design
    from analyses.power.simulation import power
    from analyses.power.solve import solve_items
    from robustness.report.figures import save
    from robustness.report.figures_ranking import power_curve

    console = console or Console()
    if solve not in (None, "items"):
        raise StudyError(f"--solve can only be 'items', not {solve!r}.")
    table_in = None
    if pilot is not None:
        from robustness.core.table import read_table

        table_in = read_table(pilot)
    effects = _effects(table_in, gap, base, correlation, families)
    if list(terms) == ["all"]:
        from analyses.power.simulation import power_terms

        terms = power_terms(effects)
    given = {"items": items, "variants": variants, "models": models, "datasets": datasets}
    planned, source = _planned(given, None if table_in is None else pilot_design(table_in))
    items = [int(n) for n in planned["items"]]
    n_obj, n_subj = (int(d) for d in planned["datasets"])
    design = Design(items[0], int(planned["variants"]), int(planned["models"]), (n_obj, n_subj))
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
    info = _run_info(effects, design, planned, source, sims, alpha, cov_type, test, seed)
    with _progress(console) as tick:
        if solve == "items":
            res = solve_items(
                effects,
                target,
                list(terms),
                design,
                start=min(items),
                max_sims=max_sims,
                progress=tick,
                **kwargs,
            )
            table = res.table
            info["solve"] = _solve_info(res, target)
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


def _run_info(
    effects: Any,
    design: Any,
    planned: dict[str, Any],
    source: dict[str, str],
    sims: int,
    alpha: float,
    cov_type: str,
    test: str,
    seed: int,
) -> dict[str, Any]:
    """What power.json records of the run: the effects, the design simulated and the options."""
    return {
        "effects": effects.agreement.to_dict("records"),
        "correlation": effects.correlation,
        "source": effects.source,
        "design": {
            "items_per_dataset": [int(n) for n in planned["items"]],
            "variants_per_family": design.variants_per_family,
            "models": design.models,
            "datasets_per_type": list(design.datasets_per_type),
            "from": source,
        },
        "design_line": design_line(planned, source),
        "sims": sims,
        "alpha": alpha,
        "cov_type": cov_type,
        "test": test,
        "seed": seed,
        "notes": list(effects.notes),
    }


def _solve_info(res: Any, target: float) -> dict[str, Any]:
    """What power.json records of ``--solve items``'s answer and its Monte Carlo uncertainty."""
    return {
        "items": res.items,
        "target": target,
        "terms": res.terms,
        "power": res.power_at,
        "mc_se": res.mc_se_at,
        "power_below": res.power_below,
        "mc_se_below": res.mc_se_below,
        "sims": res.sims,
        "clear": res.clear,
        "statement": res.statement,
    }


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
    if "design_line" in info:
        console.print(for_console(info["design_line"]))
    for note in info["notes"]:
        console.print(f"note: {for_console(note)}")
    if "solve" in info:
        s = info["solve"]
        what = ", ".join(s["terms"])
        console.print(
            f"smallest items per dataset with power >= {s['target']:g} for {for_console(what)}: "
            + for_console(s.get("statement") or ("not reached" if s["items"] is None else ""))
        )
    console.print(f"written: {escape(str(folder / 'power.csv'))} and power_curve.png")
