"""Benchmark of ``robustness power``: 200 simulations of the demo's design (issue 15).

Run: ``.venv/bin/python bench/power.py`` (options: ``--sims``, ``--workers``).

The demo's design: 2 objective + 2 subjective datasets of 12 items (48 items), the eight
families with 2 variants each, 1 model, so 768 rows per simulated table.  Effects: subjective
agreement 0.75, objective 0.85 (gap 0.10), item-level correlation 0.2.  Measured side by
side in one run:

one fit
    simulating one table and fitting the study's GEE with its Wald tests and contrasts (the
    unit of work), averaged over 10, as the loop runs it (the process's objects frozen out
    of the garbage collector, which statsmodels' Holm correction calls) and unfrozen;
serial
    ``analyses.power(..., sims=200, workers=1)``;
parallel
    the same with ``workers`` processes (spawned; the process start-up is included);

and the ratios serial / (200 x one fit) (the overhead of the loop) and serial / parallel.
The issue's target is that the 200-simulation run finishes within 5 minutes on the
project's 2-core machine.  Nothing is asserted: this prints numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    from analyses.power.effects import Design, assumed_effects, calibrate_sigma
    from analyses.power.simulation import _decide, _Job, _run_chunk, power

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=200)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    effects = assumed_effects(0.75, 0.10, 0.2)
    design = Design(items_per_dataset=12, variants_per_family=2, models=1)
    sigma = calibrate_sigma(effects)
    job = _Job(effects, design, sigma, 0, tuple(range(10)), None, 0.05, 2, "holm")
    _decide(job, 0)  # warm up
    t0 = time.perf_counter()
    for s in range(10):
        _decide(job, s)
    bare = (time.perf_counter() - t0) / 10
    t0 = time.perf_counter()
    _run_chunk(job)
    one = (time.perf_counter() - t0) / 10
    t0 = time.perf_counter()
    serial = power(effects, [12], design, sims=args.sims, workers=1)
    t_serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    parallel = power(effects, [12], design, sims=args.sims, workers=args.workers)
    t_par = time.perf_counter() - t0
    same = serial.equals(parallel)
    met = "met" if max(t_serial, t_par) < 300 else "missed"
    print(f"design: 48 items (2 + 2 datasets x 12), 8 families x 2 variants; sigma {sigma:.3f}")
    print(f"one simulated table + GEE + Wald + contrasts: {one:.3f} s ({bare:.3f} s unfrozen)")
    loop = t_serial / (args.sims * one)
    print(f"serial   {args.sims} simulations: {t_serial:7.1f} s ({loop:.2f} x the fits alone)")
    ratio = t_serial / t_par
    print(
        f"parallel {args.sims} simulations: {t_par:7.1f} s, {args.workers} processes ({ratio:.2f}x)"
    )
    print(f"serial and parallel tables identical: {same}; target (< 300 s): {met}")
    print(serial[["term", "power", "mc_se"]].to_string(index=False))


if __name__ == "__main__":
    main()
