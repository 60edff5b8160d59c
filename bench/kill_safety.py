"""Kill safety measured: SIGKILL a real run at 10 seeded random points, resume each time.

Run: ``.venv/bin/python bench/kill_safety.py`` (options: ``--points``, ``--seed``).

The run is a whole study (items, variants, the SQLite cache, the Parquet table and its CSV copy)
with a deterministic fake runner in place of a model (``tests/helpers/kill_child.py``), so a point
costs seconds. Each point is one of: a random moment during the model calls (after a random number
of stored batches, plus a random delay inside the next batch), the middle of writing the Parquet
table, or the middle of writing the CSV copy; all points share one cache and one output folder, as
repeated crashes of one study would. After each kill the study is run again to completion, and the
point counts as resumed when the table equals an uninterrupted run's (same rows, same answers, no
duplicate), the CSV copy reads back equal, the cache passes SQLite's integrity check, and no
temporary file is left. Prints one line per point and the count.
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from test_kill_safety import child, finish, make_study, same  # noqa: E402

from robustness.core.table import read_table  # noqa: E402


def kill_at(study: Path, kind: str, rng: np.random.Generator, total: int) -> str:
    """Start a run and kill it at a point of ``kind``; return what the point was."""
    if kind == "calls":
        after = int(rng.integers(0, max(1, total - 1)))
        delay = float(rng.uniform(0.0, 0.02))
        proc = child(study, "none", 0.02)
        assert proc.stdout is not None
        seen = 0
        for line in proc.stdout:
            if line.startswith("batch"):
                if seen >= after:
                    break
                seen += 1
            if line.startswith("done"):
                return "finished before the kill"
        time.sleep(delay)
        what = f"model calls, after {seen + 1} progress reports + {delay * 1000:.0f} ms"
    else:
        proc = child(study, kind, 0.0)
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("writing"):
                break
        what = f"writing the {kind} table"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return what


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        clean = make_study(Path(tmp) / "clean")
        finish(clean)
        reference = read_table(clean.parent / "out" / "k.parquet")
        total = len(reference) // 2
        study = make_study(Path(tmp) / "killed")
        out = study.parent / "out"
        kinds = rng.choice(["calls", "calls", "parquet", "csv"], size=args.points)
        kinds[:3] = ["calls", "parquet", "csv"]  # every kind at least once
        resumed = 0
        for i, kind in enumerate(kinds):
            if kind == "calls":  # start the model calls afresh so a kill lands among them
                for name in ("k.cache.sqlite", "k.cache.sqlite-wal", "k.cache.sqlite-shm"):
                    (out / name).unlink(missing_ok=True)
            what = kill_at(study, str(kind), rng, total)
            finish(study)
            problems = []
            try:
                same(read_table(out / "k.parquet"), reference)
                same(read_table(out / "k.csv"), reference)
            except AssertionError as exc:
                problems.append(f"table differs ({str(exc).splitlines()[0]})")
            conn = sqlite3.connect(out / "k.cache.sqlite")
            if conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
                problems.append("cache integrity check failed")
            conn.close()
            if list(out.glob("*.tmp")):
                problems.append("temporary file left")
            ok = not problems
            resumed += ok
            print(
                f"point {i + 1:2d}: killed during {what}: "
                + ("resumed" if ok else "; ".join(problems))
            )
        print(f"resumed cleanly {resumed} of {len(kinds)} times")


if __name__ == "__main__":
    main()
