"""Kill safety of a whole run (issue 17): SIGKILL in the middle of the cache commits, of the
Parquet table and of its CSV copy, then resume: the table is complete, equal to an
uninterrupted run's, and no temporary file is left. bench/kill_safety.py kills at 10 points."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from robustness.core.table import read_table

HERE = Path(__file__).resolve().parent
COLS = ["model", "item_id", "category", "variant_id", "answer", "prompt_sha", "option_probs"]
STUDY = """[study]
name = "k"
families = ["option_order", "framing"]
n_variants = 2
items_per_dataset = 3
[output]
table = "out/k.parquet"
[[models]]
name = "fake"
"""


def make_study(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "study.toml"
    path.write_text(STUDY)
    return path


def child(study: Path, stall: str, sleep: float = 0.02) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, str(HERE / "helpers" / "kill_child.py"), str(study), stall, str(sleep)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(HERE.parent),
    )


def kill_when(proc: subprocess.Popen[str], marker: str, skip: int = 0) -> None:
    """SIGKILL ``proc`` once it has printed ``marker`` ``skip + 1`` times."""
    assert proc.stdout is not None
    seen = 0
    for line in proc.stdout:
        if line.startswith(marker):
            if seen == skip:
                break
            seen += 1
        assert not line.startswith("done"), "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL


def finish(study: Path) -> None:
    proc = child(study, "none", 0.0)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0 and out.rstrip().endswith("done")


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    key = ["model", "item_id", "variant_id"]
    a = a[COLS].sort_values(key).reset_index(drop=True)
    b = b[COLS].sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> pd.DataFrame:
    study = make_study(tmp_path_factory.mktemp("clean"))
    finish(study)
    return read_table(study.parent / "out" / "k.parquet")


def test_kill_mid_cache_then_mid_table_then_mid_csv(tmp_path, reference):
    study = make_study(tmp_path)
    out = tmp_path / "out"
    table, csv = out / "k.parquet", out / "k.csv"

    # 1. in the middle of the model calls: no table yet, the cache holds whole batches
    kill_when(child(study, "none"), "batch", skip=4)
    assert not table.exists()
    # 2. in the middle of writing the Parquet table of the resumed run
    kill_when(child(study, "parquet"), "writing")
    assert not table.exists()  # half a file under the temporary name only
    assert (out / "k.parquet.tmp").exists()
    finish(study)
    same(read_table(table), reference)
    assert not list(out.glob("*.tmp"))
    # 3. a rerun killed while rewriting the table: the previous table stays whole
    kill_when(child(study, "parquet"), "writing")
    same(read_table(table), reference)
    # 4. killed while writing the CSV copy: the Parquet table is whole, the CSV old or absent
    kill_when(child(study, "csv"), "writing")
    same(read_table(table), reference)
    assert not csv.exists() or len(read_table(csv)) == len(reference)
    finish(study)
    same(read_table(csv), reference)
    assert not list(out.glob("*.tmp"))
