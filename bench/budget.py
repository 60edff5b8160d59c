"""Benchmark of budgeted runs (issue 28): estimates from a subsampled grid against the full grid.

Run: ``nice -n 10 .venv/bin/python bench/budget.py [--grid PATH] [--seeds 20] [--boot 100]``
after ``bench/budget_grid.py`` (the full grid of the embedded model in choice mode on MMLU and
ARC-Challenge items, cached). ``--simulate`` runs the same protocol on a grid drawn from a known
Rasch model with format factors (100 items, 40 formats and the original) instead.

The grid's complete items (those with every variant asked) are the full grid. For each budget
(5, 10, 20, 40%) and seed, the cells a budgeted run with that seed would ask
(:func:`robustness.budget.order_cells`: the same order ``robustness run --budget`` uses) are
kept and :func:`analyses.estimate_variants` estimates every variant of the formatting family
(the original prompt and the formats, with the formats' fields as covariates). Printed per
budget, the mean over seeds of:

- the mean absolute error of the per-variant accuracies against the full grid's, ours and the
  naive one (each variant's mean over its asked cells), and their ratio;
- the same for the five quantiles (5, 25, 50, 75, 95%) of accuracy over variants;
- the share of per-variant and of quantile intervals (95%, bootstrap over items) that cover the
  full-grid value;

and the issue's targets, met or not. A budget too small to ask every original and every
variant once is reported as such. The machine's load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GRID = ROOT / "bench" / ".cache" / "budget_grid-formatting.parquet"
BUDGETS = (0.05, 0.10, 0.20, 0.40)
FAMILY = ("original", "formatting")
KEYS = ["dataset", "item_id", "category", "variant_id"]


def complete_grid(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the items that have every variant of the table (one model)."""
    columns = table[["category", "variant_id"]].drop_duplicates()
    per_item = table.groupby(["dataset", "item_id"]).size()
    full = per_item[per_item == len(columns)].index
    keep = pd.MultiIndex.from_frame(table[["dataset", "item_id"]]).isin(full)
    return table.loc[keep].reset_index(drop=True)


def simulated_grid(seed: int = 0, n_items: int = 100, n_formats: int = 40) -> pd.DataFrame:
    """A full grid from a known Rasch model with six format fields (analyses.variant_synthetic)."""
    from analyses.variant_synthetic import rasch_formats, rasch_table

    rng = np.random.default_rng(seed)
    formats = rasch_formats(n_formats + 1, rng, field_sd=0.3, residual_sd=0.1, mean=-0.4)
    beta = rng.normal(0.0, 1.2, n_items)
    return rasch_table(formats.theta, beta, rng, levels=formats.levels, datasets=("mmlu", "arc"))


def truth_of(grid: pd.DataFrame, qs: np.ndarray) -> tuple[pd.Series, np.ndarray]:
    scored = grid.assign(y=grid["correct"].astype("boolean").fillna(False).astype(float))
    family = scored[scored["category"].isin(FAMILY)]
    per_variant = family.groupby("variant_id")["y"].mean()
    return per_variant, np.quantile(per_variant.to_numpy(), qs)


def one_run(
    grid: pd.DataFrame, order: list[tuple[str, str, str, str]], n_cells: int, boot: int, seed: int
) -> dict[str, float]:
    import analyses as an
    from analyses.variant_estimates import QUANTILES

    qs = np.asarray(QUANTILES)
    truth, truth_q = truth_of(grid, qs)
    keep = pd.MultiIndex.from_tuples(order[:n_cells], names=KEYS)
    sub = grid.loc[pd.MultiIndex.from_frame(grid[KEYS]).isin(keep)]
    est = an.estimate_variants(sub, categories=FAMILY, n_boot=boot, seed=seed)
    pv = est.per_variant.set_index("variant_id")
    t = truth[pv.index].to_numpy()
    q = est.quantiles
    return {
        "ours_v": float(np.mean(np.abs(pv["estimate"].to_numpy() - t))),
        "naive_v": float(np.mean(np.abs(pv["observed_mean"].to_numpy() - t))),
        "ours_q": float(np.mean(np.abs(q["estimate"].to_numpy() - truth_q))),
        "naive_q": float(np.mean(np.abs(q["observed"].to_numpy() - truth_q))),
        "cover_v": float(np.mean((pv["ci_low"].to_numpy() <= t) & (t <= pv["ci_high"].to_numpy()))),
        "cover_q": float(np.mean((q["ci_low"] <= truth_q) & (truth_q <= q["ci_high"]))),
    }


def bench(grid: pd.DataFrame, seeds: int, boot: int, budgets: tuple[float, ...]) -> list[dict]:
    from robustness.budget import order_cells

    cells = [tuple(r) for r in grid[KEYS].itertuples(index=False, name=None)]
    n_orig = int((grid["category"] == "original").sum())
    need = (
        n_orig
        + grid.loc[grid["category"] != "original", ["category", "variant_id"]]
        .drop_duplicates()
        .shape[0]
    )
    rows: list[dict[str, Any]] = []
    for budget in budgets:
        n_cells = int(np.floor(budget * len(cells) + 1e-9))
        if n_cells < need:
            print(
                f"budget {budget:.0%}: {n_cells} cells < the {need} needed (every original "
                "and every variant once): not run",
                flush=True,
            )
            continue
        started = time.perf_counter()
        runs = [one_run(grid, order_cells(cells, s), n_cells, boot, s) for s in range(seeds)]
        mean = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
        rows.append({"budget": budget, "cells": n_cells, **mean})
        print(
            f"budget {budget:.0%} ({n_cells} of {len(cells)} cells, {seeds} seeds, "
            f"{time.perf_counter() - started:.0f} s): per-variant MAE ours {mean['ours_v']:.4f} "
            f"naive {mean['naive_v']:.4f} (ratio {mean['ours_v'] / mean['naive_v']:.2f}); "
            f"quantile MAE ours {mean['ours_q']:.4f} naive {mean['naive_q']:.4f} (ratio "
            f"{mean['ours_q'] / mean['naive_q']:.2f}); coverage per-variant {mean['cover_v']:.1%}, "
            f"quantiles {mean['cover_q']:.1%}",
            flush=True,
        )
    return rows


def targets(rows: list[dict[str, Any]]) -> None:
    by = {r["budget"]: r for r in rows}

    def say(what: str, ok: bool | None) -> None:
        print(f"  {what}: {'not measured' if ok is None else 'met' if ok else 'NOT met'}")

    print("targets:")
    for budget, limit in ((0.10, 0.75), (0.05, 0.65)):
        r = by.get(budget)
        for kind in ("v", "q"):
            ok = None if r is None else r[f"ours_{kind}"] <= limit * r[f"naive_{kind}"]
            name = "per-variant" if kind == "v" else "quantile"
            say(f"{budget:.0%}: {name} MAE ours <= {limit} x naive", ok)
    r = by.get(0.20)
    say("20%: quantile MAE <= 0.02", None if r is None else r["ours_q"] <= 0.02)
    say(
        "coverage >= 90% (per-variant, every budget run)",
        None if not rows else all(r["cover_v"] >= 0.9 for r in rows),
    )
    say(
        "coverage >= 90% (quantiles, every budget run)",
        None if not rows else all(r["cover_q"] >= 0.9 for r in rows),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=Path, default=GRID)
    parser.add_argument("--simulate", action="store_true")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--boot", type=int, default=100)
    parser.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS))
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    print(f"load average before: {os.getloadavg()}", flush=True)
    if args.simulate:
        grid = simulated_grid()
        print("simulated grid: 100 items x (original + 40 formats), six format fields")
    else:
        from robustness.core.table import read_table

        raw = read_table(args.grid)
        grid = complete_grid(raw[raw["category"].isin(FAMILY)])
        n_items = grid[["dataset", "item_id"]].drop_duplicates().shape[0]
        n_var = grid[["category", "variant_id"]].drop_duplicates().shape[0]
        print(
            f"real grid {args.grid.name}: {n_items} complete items x {n_var} prompts "
            f"({len(grid)} cells; {grid['model'].iloc[0]}, {grid['mode'].iloc[0]} mode), "
            f"accuracy {grid['correct'].astype('boolean').fillna(False).mean():.3f}",
            flush=True,
        )
    budgets = tuple(float(b) for b in args.budgets.split(","))
    rows = bench(grid, args.seeds, args.boot, budgets)
    targets(rows)
    print(f"load average after: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
