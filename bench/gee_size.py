"""Size of the GEE's Wald tests under a true null: the plain sandwich against each correction.

The tables are those of ``robustness power --base 0.75 --gap 0 --correlation 0.2``
(:func:`analyses.power.effects.simulate_table`, the same seeds as :func:`analyses.power.power`:
simulation s of a design is seeded by ``SeedSequence(seed, spawn_key=(s, ...))``), so every
correction is measured on the same simulated tables.  Each table is fitted three times
(exchangeable + plain sandwich, exchangeable + Mancl-DeRouen, independence + CR2) and
every test is read at alpha = 0.05:

- ``dataset_type`` and ``dataset_type:category``: Type II Wald tests;
- ``contrasts``: the objective - subjective contrast of each family, unadjusted, averaged
  over the families (its Monte Carlo SE from the per-simulation average).

Prints a markdown table (size and Monte Carlo SE sqrt(P (1 - P) / S)) and the machine
load.  Usage::

    nice -n 10 .venv/bin/python bench/gee_size.py --sims 1000 --items 12,24,40 --workers 2
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from multiprocessing import Pool

import numpy as np
import pandas as pd

# (label, corstr, cov_type, test); the fits are shared by the rows with the same (corstr, cov)
METHODS = [
    ("plain sandwich, chi2", "exchangeable", "robust", "chi2"),
    ("plain sandwich, F(q, G-p)", "exchangeable", "robust", "F"),
    ("Mancl-DeRouen, chi2", "exchangeable", "bias_reduced", "chi2"),
    ("Mancl-DeRouen, F(q, G-p)", "exchangeable", "bias_reduced", "F"),
    ("CR2 (independence), F(q, G-p)", "independence", "cr2", "F"),
    ("CR2 (independence), HTZ", "independence", "cr2", "HTZ"),
]
TERMS = ["dataset_type", "dataset_type:category", "contrasts"]
FORMULA = "agree ~ model + dataset_type * category + model:category"
ALPHA = 0.05


def _one(args: tuple[int, int, int, float]) -> np.ndarray:
    """Rejections (methods x terms; NaN = failed) for simulation ``sim`` of ``items``."""
    from analyses.gee import formula_columns, gee_loaded
    from analyses.power.effects import Design, assumed_effects, simulate_table
    from analyses.table_input import load
    from robustness.core.names import FAMILY_ORDER

    items, sim, seed, sigma = args
    effects = assumed_effects(0.75, 0.0, 0.2, list(FAMILY_ORDER))
    raw = simulate_table(effects, Design(items), seed, sim, sigma)
    table = load(raw, optional=("gold", "correct", *formula_columns(raw.columns, FORMULA)))
    out = np.full((len(METHODS), len(TERMS)), np.nan)
    fits: dict[tuple[str, str], object] = {}
    for k, (_, corstr, cov_type, test) in enumerate(METHODS):
        key = (corstr, cov_type)
        try:
            if key not in fits:
                fits[key] = gee_loaded(table, FORMULA, corstr=corstr, cov_type=cov_type, test=test)
            fit = fits[key]
            fit.test = test  # type: ignore[attr-defined]  # same fit, another reference
            wald = fit.wald(2, test=test).set_index("term")["p_value"]  # type: ignore[attr-defined]
            con = fit.contrasts()["p_value"].to_numpy(dtype=float)  # type: ignore[attr-defined]
        except Exception:  # a failed fit counts as failed, as in power()
            continue
        for j, term in enumerate(TERMS[:2]):
            p = wald.get(term, np.nan)
            out[k, j] = float(p < ALPHA) if np.isfinite(p) else np.nan
        ok = np.isfinite(con)
        out[k, 2] = float(np.mean(con[ok] < ALPHA)) if ok.any() else np.nan
    return out


def _freeze() -> None:
    # statsmodels' Holm correction calls gc.collect(), which walks every object of the
    # process: freeze the imports out of the collector, as analyses.power does per chunk.
    import analyses.gee  # noqa: F401 - imported before freezing

    gc.freeze()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--items", default="12,24,40")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", default="")
    args = parser.parse_args(argv)
    from analyses.power.effects import assumed_effects, calibrate_sigma
    from robustness.core.names import FAMILY_ORDER

    sigma = calibrate_sigma(assumed_effects(0.75, 0.0, 0.2, list(FAMILY_ORDER)))
    rows = []
    start = time.time()
    for items in [int(n) for n in args.items.split(",")]:
        jobs = [(items, s, args.seed, sigma) for s in range(args.sims)]
        with Pool(args.workers, initializer=_freeze) as pool:
            res = np.array(pool.map(_one, jobs, chunksize=max(1, args.sims // (8 * args.workers))))
        for k, (label, *_) in enumerate(METHODS):
            for j, term in enumerate(TERMS):
                v = res[:, k, j]
                v = v[np.isfinite(v)]
                size = float(v.mean()) if v.size else np.nan
                se = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else np.nan
                rows.append(
                    dict(
                        items=items,
                        method=label,
                        term=term,
                        size=size,
                        mc_se=se,
                        n_sims=int(v.size),
                        n_failed=int(args.sims - v.size),
                    )
                )
        print(
            f"items {items}: {time.time() - start:.0f} s, load {os.getloadavg()}", file=sys.stderr
        )
        if args.csv:
            pd.DataFrame(rows).to_csv(args.csv, index=False)
    table = pd.DataFrame(rows)
    if args.csv:
        table.to_csv(args.csv, index=False)
    cell = table.assign(
        v=[f"{s:.3f} ({e:.3f})" for s, e in zip(table["size"], table.mc_se, strict=True)]
    )
    wide = cell.pivot_table(
        index=["items", "method"], columns="term", values="v", aggfunc="first", sort=False
    )[TERMS]
    print(
        f"Size at alpha {ALPHA} ({args.sims} simulations per design, seed {args.seed}; "
        "Monte Carlo SE in brackets)\n"
    )
    print("| items per dataset | covariance, reference | " + " | ".join(TERMS) + " |")
    print("|---|---|" + "---|" * len(TERMS))
    for (items, method), r in wide.iterrows():
        print(f"| {items} | {method} | " + " | ".join(r[t] for t in TERMS) + " |")
    failed = table.groupby("method", sort=False).n_failed.max()
    print(f"\nmost failed fits per design: {failed.to_dict()}")
    print(f"load average at the end: {os.getloadavg()}; {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
