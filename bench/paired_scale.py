"""Cost of McNemar over every pair of models, and of Cochran's Q per model.

Issue 17: pairwise McNemar grew with the square of the number of models (150
models took 53 s).  ``analyses.mcnemar`` now computes every pair together with
matrix operations.  This script builds a table with ``--models`` models and
times, side by side in one run, (a) all pairs at once (the public call, table
checking included), (b) one call per pair on prompt sets built once, as the
pipeline used to loop, on a sample of ``--sample`` pairs extrapolated to all
pairs, and (c) Cochran's Q per model x dataset type.  It prints the times and
the ratio (b) / (a).

    PYTHONPATH=. python bench/paired_scale.py [--models 150] [--items 50]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from analyses import cochran_q, mcnemar
from analyses.paired import _mcnemar
from analyses.prompt_sets import prompt_sets
from analyses.table_input import load


def table(n_models: int, n_items: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cats = [("original", 1), ("framing", 3), ("paraphrase", 3), ("option_order", 3)]
    prompts = [
        (f"q{i}", c, f"{c}/{v}") for i in range(n_items) for c, nv in cats for v in range(nv)
    ]
    item, cat, var = (np.array(x, dtype=object) for x in zip(*prompts, strict=True))
    skill = rng.normal(0, 1, n_models)
    ease = rng.normal(0, 1.5, n_items)
    item_idx = np.array([int(s[1:]) for s in item])
    frames = []
    for m in range(n_models):
        p = 1 / (1 + np.exp(-(skill[m] + ease[item_idx])))
        correct = rng.random(len(prompts)) < p
        valid = rng.random(len(prompts)) > 0.02
        answer = pd.array(np.where(correct, 0, rng.integers(1, 4, len(prompts))), dtype="Int64")
        answer[~valid] = pd.NA
        frames.append(
            pd.DataFrame(
                {
                    "model": f"m{m:03d}",
                    "dataset": "d",
                    "dataset_type": "objective",
                    "item_id": item,
                    "category": cat,
                    "variant_id": var,
                    "answer": answer,
                    "gold": 0,
                    "valid": valid,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=150)
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--sample", type=int, default=30)
    args = ap.parse_args()
    t = table(args.models, args.items)
    n_pairs = args.models * (args.models - 1) // 2
    t0 = time.perf_counter()
    every = mcnemar(t)
    t_all = time.perf_counter() - t0
    assert len(every) == n_pairs
    rng = np.random.default_rng(1)
    models = sorted(t["model"].unique())
    ps = prompt_sets(load(t, optional=("gold",)))
    t0 = time.perf_counter()
    for _ in range(args.sample):
        a, b = rng.choice(len(models), 2, replace=False)
        _mcnemar(ps, models[min(a, b)], models[max(a, b)])
    t_one = (time.perf_counter() - t0) / args.sample
    t0 = time.perf_counter()
    cochran_q(t)
    t_cochran = time.perf_counter() - t0
    print(
        f"{len(t)} rows, {args.models} models, {n_pairs} pairs: all pairs at once {t_all:.2f} s; "
        f"one call per pair {t_one * 1000:.1f} ms, x {n_pairs} = {t_one * n_pairs:.0f} s "
        f"(ratio {t_one * n_pairs / t_all:.0f}); Cochran's Q per model x type {t_cochran:.2f} s"
    )


if __name__ == "__main__":
    main()
