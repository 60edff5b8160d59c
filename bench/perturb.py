"""Variants per second of each perturbation family on ../shared/data (one core).

Run: ``.venv/bin/python bench/perturb.py [--repeat 3]``.  Prints, per family, the
variants made, the best-of-``repeat`` seconds and variants/s, and the ratio to
the 5,000 variants/s target for the structural families.  The text families
(lexical substitution, paraphrase) are timed with their resources (WordNet, the
embedding model) already loaded, and their one-off load time is printed apart;
before every repeat the family is made anew and the embedding cache emptied, so
no repeat reads embeddings an earlier one computed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import robustness as rb
from perturbations.base import FAMILY_ORDER, REGISTRY, make_family
from perturbations.similarity import default_similarity

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TARGET = 5000.0
STRUCTURAL = {"option_order", "label_substitution", "formatting", "framing", "logical_equivalence"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--data", type=Path, default=SHARED)
    args = parser.parse_args()
    files = sorted(args.data.glob("*.jsonl"))
    if not files:
        print(f"no item files under {args.data}; the shared data folder is needed", file=sys.stderr)
        return 1
    items = rb.load_items(*files)
    print(f"{len(items)} items from {len(files)} files, n={args.n}, best of {args.repeat}")
    print(
        f"{'family':22s} {'variants':>9s} {'seconds':>9s} {'variants/s':>11s} {'vs 5000/s':>10s}"
        f" {'load s':>7s}"
    )
    for name in FAMILY_ORDER:
        if name not in REGISTRY:
            print(f"{name:22s} (not registered)")
            continue
        t0 = time.perf_counter()
        family = make_family(name)
        # one warm-up item loads lazy resources (WordNet, embedding model)
        rb.perturb(items[:1], families=[name], n=args.n, family_objects={name: family})
        load = time.perf_counter() - t0
        best, count = float("inf"), 0
        for _ in range(args.repeat):
            family = make_family(name)
            default_similarity().cache.clear()
            t = time.perf_counter()
            out = rb.perturb(items, families=[name], n=args.n, family_objects={name: family})
            best = min(best, time.perf_counter() - t)
            count = len(out) - len(items)  # without the originals
        rate = count / best
        ratio = f"{rate / TARGET:9.2f}x" if name in STRUCTURAL else "      n/a"
        print(f"{name:22s} {count:9d} {best:9.3f} {rate:11.0f} {ratio:>10s} {load:7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
