"""Samples per minute of ``robustness import lm-eval`` on one core, against issue 27's 200,000.

Run: ``python bench/import_speed.py [--docs 20000] [--tasks 5] [--repeat 3]``. A seeded,
lm-eval-shaped ``--log_samples`` folder (``tests/helpers/lm_eval_logs.py``: multiple-choice
tasks of four choices, the 0.4.13 sample format) is written to a temporary folder, then
imported end to end (JSON reading, argmax and softmax, the table's validation) ``--repeat``
times. Time is CPU seconds of this process (``time.process_time``, the process pinned to one
core where the OS allows), so other work on a shared machine does not count; the best pass is
reported with the machine's load average. Writing the Parquet file is measured apart. Nothing is
asserted: the script prints the rate and its ratio to the target.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers.lm_eval_logs import write_logs  # noqa: E402

from robustness.importers.lm_eval import import_lm_eval  # noqa: E402
from robustness.importers.rows import write_imported  # noqa: E402

TARGET_PER_MINUTE = 200_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000, help="docs per task")
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "logs"
        tasks = {f"task_{k}": "multiple_choice" for k in range(args.tasks)}
        write_logs(folder, tasks, n_docs=args.docs, seed=0)
        n = args.docs * args.tasks
        size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
        print(f"{n} samples in {len(tasks)} files, {size:.0f} MiB; load {os.getloadavg()}")
        best = float("inf")
        for _ in range(args.repeat):
            start = time.process_time()
            table = import_lm_eval(folder)
            best = min(best, time.process_time() - start)
        rate = n / best * 60
        print(
            f"import: best {best:.2f} CPU s -> {rate:,.0f} samples/minute "
            f"({rate / TARGET_PER_MINUTE:.2f}x the 200,000 target)"
        )
        start = time.process_time()
        write_imported(table, Path(tmp) / "t.parquet", {"source": "bench"})
        print(f"parquet write: {time.process_time() - start:.2f} CPU s for {len(table)} rows")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
