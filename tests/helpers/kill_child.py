"""A study run in a child process that a parent kills with SIGKILL (tests and bench/kill_safety).

``python tests/helpers/kill_child.py STUDY STALL`` runs ``STUDY`` with a deterministic fake runner
(no model) and writes the Parquet table and its CSV copy. It prints ``batch`` after each stored
batch and, with ``STALL`` set to ``parquet`` or ``csv``, writes part of that file, prints
``writing`` and waits, so the parent can kill it in the middle of writing the table. ``STALL``
``none`` runs through and prints ``done``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

#: The tests folder, which holds the ``helpers`` package.
TESTS = Path(__file__).resolve().parents[1]


def _stall_parquet() -> None:
    import pyarrow.parquet as pq

    real = pq.write_table

    def partial(table: Any, where: Any, **kwargs: Any) -> None:
        real(table, where, **kwargs)
        data = Path(where).read_bytes()
        Path(where).write_bytes(data[: len(data) // 2])  # half a file, as a kill leaves it
        print("writing", flush=True)
        time.sleep(600)

    pq.write_table = partial


def _stall_csv() -> None:
    import pandas as pd

    real = pd.DataFrame.to_csv

    def partial(self: Any, path: Any = None, **kwargs: Any) -> Any:
        real(self, path, **kwargs)
        data = Path(path).read_bytes()
        Path(path).write_bytes(data[: len(data) // 2])
        print("writing", flush=True)
        time.sleep(600)

    pd.DataFrame.to_csv = partial


def main(study: str, stall: str, sleep: float = 0.02) -> None:
    sys.path.insert(0, str(TESTS))
    import robustness as rb
    from helpers.fake_runner import FakeRunner

    if stall == "parquet":
        _stall_parquet()
    elif stall == "csv":
        _stall_csv()
    config = rb.load_study(study)

    def progress(model: str, done: int, total: int) -> None:
        print(f"batch {done}/{total}", flush=True)

    runners = {m.name: FakeRunner(batch_size=2, sleep=sleep) for m in config.models}
    rb.run_study(config, runners=runners, progress=progress, csv=True)
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 0.02)
