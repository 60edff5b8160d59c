"""The full grid that ``bench/budget.py`` subsamples: real items, the embedded model, choice mode.

Run: ``nice -n 10 .venv/bin/python bench/budget_grid.py [--per-dataset 50] [--formats 40]``.

Items: ``--per-dataset`` MMLU and ``--per-dataset`` ARC-Challenge items from ``../shared/data``
(evenly spaced, :func:`robustness.core.items.per_dataset`). Variants: the original prompt,
``--formats`` formatting variants (the same format for every item) and ``--n`` variants of each
other family (seed 0). Every prompt goes through the SQLite cache ``--cache``, stored batch by
batch, so a killed run resumes where it stopped and a repeated run asks the model nothing; the
formatting grid (original + formats) is written first to ``--out`` with ``-formatting`` in its
name, then the whole grid with ``-all`` (Parquet, the long table).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT.parent / "shared" / "data"
CACHE = ROOT / "bench" / ".cache" / "budget_grid.sqlite"
OUT = ROOT / "bench" / ".cache" / "budget_grid.parquet"
OTHER_FAMILIES = (
    "option_order",
    "label_substitution",
    "spelling_noise",
    "lexical_substitution",
    "paraphrase",
    "logical_equivalence",
    "framing",
)


def grid_variants(per_dataset: int, formats: int, n: int) -> tuple[list[Any], list[Any]]:
    """(the original and ``formats`` formatting variants of every item, ``n`` variants of each
    other family of every item)."""
    import robustness as rb
    from robustness.core.items import per_dataset as evenly

    items = evenly(rb.load_items(DATA / "mmlu.jsonl", DATA / "arc_challenge.jsonl"), per_dataset)
    with_formats = rb.perturb(items, families=["formatting"], n=formats, seed=0)
    others = rb.perturb(items, families=list(OTHER_FAMILIES), n=n, seed=0) if n else []
    return with_formats, [v for v in others if v.category != "original"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-dataset", type=int, default=50)
    parser.add_argument("--formats", type=int, default=40)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--chunk", type=int, default=10, help="items per chunk")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    for name in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(name, {"OMP_WAIT_POLICY": "PASSIVE"}.get(name, "1"))
    import pandas as pd

    import robustness as rb
    from robustness.core.table import write_parquet

    formats, others = grid_variants(args.per_dataset, args.formats, args.n)
    print(f"{len(formats)} original and formatting prompts, then {len(others)} others", flush=True)
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    last = [started]

    def progress(model: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] > 30 or done == total:
            last[0] = now
            print(f"{model}: {done}/{total} in {now - started:.0f} s", flush=True)

    # Formats first, ten items at a time, so a complete grid of the first k items and every
    # format exists at any time (bench/budget.py reads what is complete); then the other
    # families. Every chunk resumes from the cache.
    order = list(dict.fromkeys(v.item.key for v in formats))
    chunks = [order[k : k + args.chunk] for k in range(0, len(order), args.chunk)]
    done: list[pd.DataFrame] = []
    for part, variants in (("formatting", formats), ("all", others)):
        for keys in chunks if variants else []:
            wanted = set(keys)
            info: dict[str, Any] = {}
            done.append(
                rb.run(
                    [v for v in variants if v.item.key in wanted],
                    [rb.model("embedded", mode="choice")],
                    cache=args.cache,
                    study="budget-grid",
                    progress=progress,
                    info=info,
                )
            )
            out = args.out.with_name(f"{args.out.stem}-{part}.parquet")
            table = pd.concat(done, ignore_index=True)
            write_parquet(table, out, {"study": "budget-grid", "models": info})
            print(f"grid ({part}): {len(table)} rows -> {out} ({info})", flush=True)


if __name__ == "__main__":
    main()
