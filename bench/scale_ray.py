"""Benchmark of Ray scale-out: a local Ray run with ``--workers`` workers against the
single-process run, on the same variants, side by side in one process.

Run: ``.venv/bin/python bench/scale_ray.py [--model embedded] [--items 24] [--workers 2]
[--batch-size 8] [--shard-size 0] [--mode choice] [--threads N] [--rounds 2]``.

Both paths answer the same variants (the first ``--items`` bundled demo items, original plus
option-order, label-substitution and formatting variants) with the same model, each into a
fresh cache, so everything is computed:

- ``single``: ``robustness.run`` in this process, torch on every core (``--threads``, default
  all of them);
- ``ray``: ``rb.run`` with ``executor=Ray(...)`` on a local Ray with ``--workers`` workers of one
  core and one torch thread each.

Printed for each: wall time and prompts/s end to end (single: loading the model and answering;
ray: starting the workers, each loading the model, and answering; starting Ray itself is shown
apart, since a session pays it once), and the steady rate between the first and the last
finished batch or shard, which leaves start-up out. The ratios are ray / single. Answers of the
two runs are compared too (they may differ only within the noise floor, since thread counts and
batch composition differ). The two paths run in alternating order for ``--rounds`` rounds,
each into a fresh cache, and each path's best round is reported (other processes on a shared
CPU only ever add time). Timings are printed, never asserted.

What to expect on a small machine: the single process already uses every core through torch's
threads, so two one-thread workers add no compute, only the second model load, process start-up
and shipping prompts and results. The honest expectation on two cores is a steady ratio near 1x
and an end-to-end ratio below 1x; Ray pays off with more cores than one process can use well,
or with several machines or GPUs.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robustness.runners import apply_thread_defaults  # noqa: E402

apply_thread_defaults()  # OMP_WAIT_POLICY=PASSIVE before torch, unless set

FAMILIES = ["option_order", "label_substitution", "formatting"]


class Clock:
    """A progress callback that records when each batch or shard finished."""

    def __init__(self) -> None:
        self.marks: list[tuple[float, int]] = []

    def __call__(self, model: str, done: int, total: int) -> None:
        self.marks.append((time.perf_counter(), done))

    def steady_rate(self) -> float:
        """Prompts/s between the first and the last finished batch (start-up excluded)."""
        if len(self.marks) < 2:
            return float("nan")
        (t0, d0), (t1, d1) = self.marks[0], self.marks[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embedded", help="embedded or a model folder")
    parser.add_argument("--items", type=int, default=24, help="demo items (0: all 116)")
    parser.add_argument("--n-variants", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--shard-size", type=int, default=0, help="0: automatic")
    parser.add_argument("--mode", default="choice", choices=["choice", "cloze", "generate"])
    parser.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="torch threads of the single process",
    )
    parser.add_argument(
        "--rounds", type=int, default=2, help="alternating rounds; each path's best is reported"
    )
    args = parser.parse_args()

    import importlib.util

    if importlib.util.find_spec("ray") is None:
        print("SKIP: ray is not installed: pip install 'robustness[ray]'.")
        return
    import ray

    import robustness as rb
    from robustness.executors import Ray
    from robustness.runners.ray import init_ray

    items = rb.demo_items()
    items = items[: args.items] if args.items else items
    variants = rb.perturb(items, families=FAMILIES, n=args.n_variants, seed=0)
    n = len(variants)

    def model(threads: int) -> Any:
        return rb.model(
            args.model,
            name="m",
            mode=args.mode,
            batch_size=args.batch_size,
            max_new_tokens=8,
            options={"threads": threads},
        )

    if args.model == "embedded":  # convert the GGUF once, outside every clock
        from robustness.runners.embedded import ensure_converted

        ensure_converted()
    print(
        f"{n} variants of {len(items)} items, model {args.model}, mode {args.mode}, "
        f"batch {args.batch_size}, {os.cpu_count()} cores"
    )

    started = time.perf_counter()
    init_ray(workers=args.workers)
    init_s = time.perf_counter() - started
    best: dict[str, tuple[float, float]] = {}
    tables: dict[str, Any] = {}
    info: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            order = ["single", "ray"] if r % 2 == 0 else ["ray", "single"]
            for path in order:
                clock = Clock()
                cache = Path(tmp) / f"{path}-{r}.sqlite"
                started = time.perf_counter()
                if path == "single":
                    tables[path] = rb.run(
                        variants, [model(args.threads)], cache=cache, progress=clock
                    )
                else:
                    tables[path] = rb.run(
                        variants,
                        [model(1)],
                        cache=cache,
                        progress=clock,
                        info=info,
                        executor=Ray(workers=args.workers, shard_size=args.shard_size or None),
                    )
                wall = time.perf_counter() - started
                print(f"  round {r + 1} {path}: {wall:.1f} s")
                if path not in best or wall < best[path][0]:
                    best[path] = (wall, clock.steady_rate())
    ray.shutdown()

    single, table = tables["single"], tables["ray"]
    agree = float(
        (single["answer"].astype("Int64") == table["answer"].astype("Int64")).fillna(False).mean()
    )
    stats = info["m"]["ray"]
    layouts = {
        "single": f"1 process x {args.threads} threads",
        "ray": f"{args.workers} workers x 1 thread",
    }
    print(
        f"Ray start-up (once per session): {init_s:.1f} s; shards per run: {stats['shards']}, "
        f"workers started: {stats['actors_started']}; best of {args.rounds} rounds:"
    )
    print(f"{'path':<8}{'layout':<26}{'wall s':>8}{'prompts/s':>11}{'steady/s':>10}")
    for path in ("single", "ray"):
        wall, steady = best[path]
        print(f"{path:<8}{layouts[path]:<26}{wall:>8.1f}{n / wall:>11.2f}{steady:>10.2f}")
    print(
        f"ratio ray/single: end to end {best['single'][0] / best['ray'][0]:.2f}x, "
        f"steady {best['ray'][1] / best['single'][1]:.2f}x; answers agree on {agree:.1%} "
        "of variants"
    )


if __name__ == "__main__":
    main()
