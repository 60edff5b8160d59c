"""The base install (no extras) analyses and validates a table without torch.

A fresh virtual environment gets ``pip install <repo>`` with no extras, from the package
registries, and runs ``robustness validate`` and ``robustness analyze`` on a synthetic table
written to Parquet here. torch and transformers must not be importable there.

The other tests run the same commands in this environment with the model packages hidden
(an import of torch, transformers ... fails as if they were not installed). The fresh
environment is ``slow`` (``make test`` only); the CLI runs with the models hidden stay in
``make test-fast``, its one check that perturb, validate and analyze need no torch.
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


_HIDE_MODEL_PACKAGES = """
import sys

class Hide:
    names = {"torch", "transformers", "accelerate", "safetensors", "gguf", "vllm", "ray"}

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Hide())
from robustness.cli import main
sys.argv = ["robustness", *sys.argv[1:]]
main()
"""


def _cli_without_models(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _HIDE_MODEL_PACKAGES, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_perturb_validate_and_analyze_run_with_torch_hidden(tmp_path):
    table = tmp_path / "table.parquet"
    an.synthetic_table(models=2, n_items=8, seed=0).to_parquet(table)
    done = _cli_without_models(tmp_path, "validate", str(table))
    assert done.returncode == 0, done.stderr
    assert "valid long table" in done.stdout
    structural = "option_order,label_substitution,spelling_noise,formatting,framing"
    variants = tmp_path / "variants.jsonl"
    done = _cli_without_models(
        tmp_path, "perturb", "--families", structural, "--n", "1", "--out", str(variants)
    )
    assert done.returncode == 0, done.stderr
    assert len(variants.read_text().splitlines()) > 100
    done = _cli_without_models(tmp_path, "analyze", str(table), "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "report.html").exists()


def test_the_encoder_families_say_which_extra_is_missing(tmp_path):
    out = tmp_path / "variants.jsonl"
    done = _cli_without_models(
        tmp_path, "perturb", "--families", "lexical_substitution", "--n", "1", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr  # its own lexicon: no encoder by default
    assert "lexical_substitution" in out.read_text()
    done = _cli_without_models(
        tmp_path, "perturb", "--families", "paraphrase", "--n", "1", "--out", str(out)
    )
    assert done.returncode == 2
    assert "pip install 'robustness[models]'" in done.stderr
    assert "Traceback" not in done.stderr
