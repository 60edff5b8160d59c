"""Simulated-bandit check of ``analyses.thompson_search`` (FormatSpread's search).

50 formats, 1,000 examples, batches of 10; each format's outcomes come from a
logit-normal format effect and example difficulties shared by all formats.  For
budgets of 5 % and 10 % of the full sweep (50,000 evaluations) and 200 seeds,
prints how often the format found is within 2 accuracy points of the true best
(worst), how far the in-search accuracy is from the truth, and the calls spent.

    python bench/thompson_bandit.py [--seeds 200]
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from analyses.thompson import thompson_search

K, N, BATCH = 50, 1000, 10


def world(seed: int) -> np.ndarray:
    """K formats x N examples of 0/1 outcomes."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.4, 0.6, K)
    difficulty = rng.normal(0.0, 2.0, N)
    prob = 1 / (1 + np.exp(-(skill[:, None] - difficulty[None, :])))
    return rng.random((K, N)) < prob


def one(seed: int, fraction: float, choose: str) -> dict[str, float]:
    truth = world(seed)
    acc = truth.mean(axis=1)
    res = thompson_search(
        lambda f, idx: truth[f, idx],
        list(range(K)),
        budget=int(fraction * K * N),
        batch=BATCH,
        n_examples=N,
        seed=seed,
        choose=choose,
    )
    b, w = res.best_format, res.worst_format
    assert res.best_accuracy == acc[b] and res.worst_accuracy == acc[w]
    return {
        "best_ok": acc.max() - acc[b] <= 0.02,
        "worst_ok": acc[w] - acc.min() <= 0.02,
        "best_bias": res.search_best_accuracy - acc[b],
        "worst_bias": res.search_worst_accuracy - acc[w],
        "spread_bias": res.search_spread - res.spread,
        "spread_err": res.spread - (acc.max() - acc.min()),
        "calls": res.calls,
        "search_calls": res.search_calls,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    n = ap.parse_args().seeds
    for choose, fraction in itertools.product(("observed", "posterior"), (0.05, 0.10)):
        rows = [one(s, fraction, choose) for s in range(n)]
        col = {k: np.array([r[k] for r in rows], dtype=float) for k in rows[0]}
        both = (col["best_ok"] * col["worst_ok"]).mean()
        print(
            f"choose={choose}, budget {fraction:.0%} ({int(fraction * K * N)} evaluations), "
            f"{n} seeds: best within 2 points {col['best_ok'].mean():.1%}, "
            f"worst {col['worst_ok'].mean():.1%}, "
            f"both {both:.1%}; in-search bias best {col['best_bias'].mean():+.4f}, "
            f"worst {col['worst_bias'].mean():+.4f}, spread {col['spread_bias'].mean():+.4f}; "
            f"re-evaluated spread - true spread {col['spread_err'].mean():+.4f}; "
            f"calls {col['calls'].mean():.0f} (search {col['search_calls'].mean():.0f})"
        )


if __name__ == "__main__":
    main()
