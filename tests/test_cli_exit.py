"""Honest exit codes (issue 17): a run whose model answered nothing, or too many error rows,
exits 1 after writing the table; --keep-going exits 0; bad arguments are one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers.fake_runner import FakeRunner
from typer.testing import CliRunner

import robustness  # noqa: F401  (loads robustness.run, which the fixture patches)
from robustness.cli import app
from robustness.commands.run import run_problems
from robustness.core.table import read_table

ROOT = Path(__file__).resolve().parent.parent


def study(tmp_path: Path, models: tuple[str, ...] = ("good", "bad")) -> Path:
    text = '[study]\nfamilies = ["option_order"]\nn_variants = 1\n[output]\ntable = "t.parquet"\n'
    text += "".join(f'[[models]]\nname = "{m}"\n' for m in models)
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


@pytest.fixture
def fake_models(monkeypatch):
    def open_runner(model):
        failing = 0 if model.name.startswith("bad") else None
        return FakeRunner(fail_after=failing, model_id=model.name)

    import robustness.executors

    monkeypatch.setattr(robustness.executors, "open_runner", open_runner)


def test_a_model_that_answered_nothing_fails_the_run_after_writing(tmp_path, fake_models):
    result = CliRunner().invoke(app, ["run", str(study(tmp_path)), "--limit", "2"])
    assert result.exit_code == 1, result.output
    table = read_table(tmp_path / "t.parquet")  # written all the same
    assert set(table["model"]) == {"good", "bad"}
    lines = [x for x in result.output.splitlines() if "failed:" in x]
    assert len(lines) == 2  # the model, and the error share; each named once
    assert "model 'bad' answered none of its" in lines[0] and "fake runner failure" in lines[0]
    assert "more than --max-error-rate 5.0%" in lines[1] and "fake runner" not in lines[1]


def test_keep_going_and_a_generous_error_rate(tmp_path, fake_models):
    path = study(tmp_path)
    result = CliRunner().invoke(app, ["run", str(path), "--limit", "2", "--keep-going"])
    assert result.exit_code == 0 and "failed:" in result.output
    ok = study(tmp_path, ("good",))
    result = CliRunner().invoke(app, ["run", str(ok), "--limit", "2"])
    assert result.exit_code == 0 and "failed:" not in result.output


def test_run_problems_counts_error_rows_only():
    t = pd.DataFrame(
        {
            "model": ["a"] * 10 + ["b"] * 10,
            "invalid_reason": [None] * 9 + ["error: timeout"] + ["refusal"] * 10,
        }
    )
    assert run_problems(t, 0.05) == []  # 1 error row in 20, refusals are answers
    (only,) = run_problems(t, 0.01)
    assert only.startswith("1 of 20 rows (5.0%) are model errors") and "'a': timeout" in only


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["perturb", "--n", "abc"], "error: Invalid value for '--n'"),
        (["run", "s.toml", "--max-error-rate", "2"], "error: Invalid value for '--max-error-rate'"),
        (["frobnicate"], "error: No such command 'frobnicate'."),
        (["validate"], "error: Missing argument"),
    ],
)
def test_bad_arguments_are_one_line(args, message):
    done = subprocess.run(
        [sys.executable, "-m", "robustness.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(message) and done.stderr.strip().count("\n") == 0
    assert "╭" not in done.stderr and "Traceback" not in done.stderr


def test_validate_warns_without_original_rows_and_prints_plain_values(tmp_path):
    from tests.test_table import table

    t = table()
    t[t["category"] != "original"].to_csv(tmp_path / "no_original.csv", index=False)
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "no_original.csv")])
    assert result.exit_code == 0
    assert "warning: the table has no 'original' rows" in result.output
    bad = t.assign(answer=[-7, 1, 1, 1])
    bad.to_csv(tmp_path / "neg.csv", index=False)
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "neg.csv")])
    assert "-7 is negative" in str(result.exception) and "np." not in str(result.exception)


def test_hostile_model_names_reach_the_terminal_stripped(tmp_path, fake_models):
    path = tmp_path / "s.toml"
    path.write_text(
        '[study]\nfamilies = ["framing"]\nn_variants = 1\n[output]\ntable = "t.parquet"\n'
        '[[models]]\nname = "bad\\u001b[2J\\u001b]0;owned\\u0007 model"\n'
    )
    result = CliRunner().invoke(app, ["run", str(path), "--limit", "1"])
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "model 'bad model' answered none" in result.output
