"""The base install (no extras) analyses and validates a table without torch.

A fresh virtual environment gets ``pip install <repo>`` with no extras, from the package
registries, and runs ``robustness validate`` and ``robustness analyze`` on a synthetic table
written to Parquet here. torch and transformers must not be importable there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import analyses as an

REPO = Path(__file__).resolve().parents[1]


def _run(args: list[str], cwd: Path, timeout: int = 1200) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"{' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done


@pytest.mark.slow
def test_the_base_install_validates_and_analyses_without_torch(tmp_path):
    # a copy of the sources, so that the build writes nothing into the checkout
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for pkg in ("robustness", "perturbations", "analyses"):
        shutil.copytree(REPO / pkg, source / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", str(source)], tmp_path)

    missing = _run(
        [
            str(python),
            "-c",
            "import importlib.util as u; "
            "print([m for m in ('torch', 'transformers') if u.find_spec(m)])",
        ],
        tmp_path,
    )
    assert missing.stdout.strip() == "[]"

    table = tmp_path / "table.parquet"
    an.synthetic_table(models=2, n_items=12, seed=0).to_parquet(table)
    robustness = venv / "bin" / "robustness"
    checked = _run([str(robustness), "validate", str(table)], tmp_path)
    assert "valid long table" in checked.stdout
    out = tmp_path / "out"
    _run([str(robustness), "analyze", str(table), "-o", str(out)], tmp_path)
    assert (out / "report.html").stat().st_size > 0
    assert (out / "report.md").stat().st_size > 0
    assert any((out / "tables").glob("*.csv"))
