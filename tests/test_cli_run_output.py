"""`robustness run` without a terminal, and stopping it: progress lines in a log, one line
at Ctrl-C, a model the Hub cannot deliver, and item files with no items."""

from __future__ import annotations

import io
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from test_run import cache_rows, study_file
from typer.testing import CliRunner

import robustness.commands.run as run_cmd
from robustness.cli import app
from robustness.core.cache import Cache
from robustness.core.errors import ModelError
from robustness.progress import LineProgress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def plain_console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=300, force_terminal=False), buf


def test_progress_lines_every_30_seconds_or_5_percent_with_rate_and_time_left():
    console, buf = plain_console()
    clock = Clock()
    lines = LineProgress(console, interval=30.0, clock=clock)
    lines("model-a", 0, 1000)  # the start: no line yet
    for done in range(1, 49):  # 4.8 % in 29 s: nothing
        clock.now = done * 29 / 48
        lines("model-a", done, 1000)
    assert buf.getvalue() == ""
    clock.now = 30.0  # 30 s have passed
    lines("model-a", 49, 1000)
    first = buf.getvalue().splitlines()
    assert first == [
        "model-a: 49/1,000 prompts, 1.6 prompts/s, about 9 min 42 s left"
    ]  # 951 / (49 / 30 s)
    clock.now = 31.0
    lines("model-a", 99, 1000)  # 5 % more (50 prompts) since the last line, at 1 s
    assert buf.getvalue().splitlines()[-1].startswith("model-a: 99/1,000 prompts, 3.2 prompts/s")
    clock.now = 40.0
    lines("model-a", 1000, 1000)
    assert buf.getvalue().splitlines()[-1] == "model-a: 1,000/1,000 prompts, 25.0 prompts/s, done"
    assert len(buf.getvalue().splitlines()) == 3


def test_run_off_a_terminal_prints_lines_not_bars(tmp_path, monkeypatch):
    study = tmp_path / "s.toml"
    study.write_text('[study]\nname = "s"\n[output]\ntable = "out/s.parquet"\n')
    clock = Clock()

    def fake_run_study(config, *, progress, **kw):
        for done in range(0, 101, 10):
            clock.now += 1
            progress("m", done, 100)
        raise KeyboardInterrupt  # stop here: the lines are what is tested

    monkeypatch.setattr(run_cmd, "run_study", fake_run_study)
    console, buf = plain_console()
    with pytest.raises(SystemExit):
        run_cmd.run_command(
            str(study), True, None, 0, False, console=console, progress_interval=30.0, clock=clock
        )
    out = buf.getvalue().splitlines()
    assert out[0].startswith("m: 10/100 prompts, 10.0 prompts/s, about 9 s left")
    assert out[-1] == "m: 100/100 prompts, 10.0 prompts/s, done"
    assert "\x1b" not in buf.getvalue()


def test_ctrl_c_is_one_line_with_the_cached_count_and_the_resume_command(
    tmp_path, monkeypatch, capsys
):
    study = tmp_path / "s.toml"
    study.write_text('[study]\nname = "s"\n[output]\ntable = "out/s.parquet"\n')

    def fake_run_study(config, **kw):
        with Cache(config.cache_path) as cache:
            cache.put_many([(f"k{i}", "score", {"v": i}, None) for i in range(7)])
        raise KeyboardInterrupt

    monkeypatch.setattr(run_cmd, "run_study", fake_run_study)
    console, _ = plain_console()
    with pytest.raises(SystemExit) as stop:
        run_cmd.run_command(str(study), False, 3, 4, True, console=console)
    assert stop.value.code == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert re.fullmatch(
        r"interrupted: 7 answers are safely cached in .*s\.cache\.sqlite; resume with: "
        rf"robustness run {re.escape(str(study))} --limit 3 --noise-floor 4 --csv",
        err[0],
    ), err[0]


def _interrupted(monkeypatch, args: list[str]) -> tuple[str, dict]:
    """Run ``robustness run ARGS`` through the CLI, stopped by Ctrl-C at once: the resume
    command it printed and the options the run itself was given."""
    seen: dict = {}

    def fake_run_study(config, *, progress, **kw):
        seen.update(kw)
        raise KeyboardInterrupt

    monkeypatch.setattr(run_cmd, "run_study", fake_run_study)
    result = CliRunner().invoke(app, ["run", *args])
    assert result.exit_code == 130, result.output
    line = result.stderr.strip().splitlines()[-1]
    return line.split("; resume with: ", 1)[1], seen


def test_the_resume_command_carries_every_run_option_the_user_gave(tmp_path, monkeypatch):
    study = tmp_path / "s.toml"
    study.write_text('[study]\nname = "s"\n[output]\ntable = "out/s.parquet"\n')
    given = ["--no-resume", "--limit", "3", "--noise-floor", "4", "--csv", "--ray", "local"]
    given += ["--workers", "3", "--max-error-rate", "0.2", "--budget", "0.5", "--keep-going"]
    again, first = _interrupted(monkeypatch, [str(study), *given])
    words = shlex.split(again)
    assert words[:3] == ["robustness", "run", str(study)]
    for flag in ("--max-error-rate", "--keep-going", "--budget", "--workers", "--csv"):
        assert words.count(flag) == 1, (flag, again)
    assert "--resume" not in words and "--no-resume" not in words  # resuming is the default
    # the printed command, run in turn, runs the same study (now resuming) and prints itself
    same, second = _interrupted(monkeypatch, words[2:])
    assert same == again
    assert second == {**first, "resume": True}


def test_the_resume_command_names_no_option_left_at_its_default(tmp_path, monkeypatch):
    study = tmp_path / "s.toml"
    study.write_text('[study]\nname = "s"\n[output]\ntable = "out/s.parquet"\n')
    again, _ = _interrupted(monkeypatch, [str(study), "--max-error-rate", "0.05"])
    assert again == shlex.join(["robustness", "run", str(study)])


@pytest.mark.slow  # a real run in a child process, interrupted (about 20 s of CPU)
def test_sigint_mid_run_ends_with_one_line_and_the_command_resumes(tmp_path, tiny_folder):
    exe = str(Path(sys.executable).with_name("robustness"))
    study = study_file(tmp_path, tiny_folder, models=[{"name": "c", "batch_size": 1}], n=3)
    cache = tmp_path / "out" / "t.cache.sqlite"
    proc = subprocess.Popen(
        [exe, "run", str(study), "--limit", "20"],  # long enough that SIGINT lands mid-run
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a test run started in the background inherits SIGINT ignored, and Python then keeps
        # ignoring it: the child gets the default disposition, as a run in a terminal has
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 180
    while cache_rows(cache) < 5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), err
    count = int(re.search(r"interrupted: ([\d,]+) answers", lines[0]).group(1).replace(",", ""))
    assert count == cache_rows(cache) >= 5
    command = lines[0].split("resume with: ", 1)[1]
    assert command == f"robustness run {study} --limit 20"


def test_a_model_the_hub_cannot_deliver_fails_fast_in_one_sentence(monkeypatch):
    from huggingface_hub import constants

    from robustness.runners.torch_setup import load_pretrained

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    start = time.monotonic()
    with pytest.raises(ModelError) as err:
        load_pretrained("nobody-here/not-a-cached-model", None, offline=False)
    assert time.monotonic() - start < 10
    text = str(err.value)
    assert "\n" not in text and text.count(". ") == 0 and text.endswith(".")
    assert "not in the local Hugging Face cache" in text and "cannot be reached" in text


def test_offline_a_model_not_in_the_cache_is_one_sentence(monkeypatch):
    from robustness.runners.torch_setup import load_pretrained

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    with pytest.raises(ModelError, match="not in the local Hugging Face cache") as err:
        load_pretrained("nobody-here/not-a-cached-model", None)
    assert time.monotonic() - start < 10 and "\n" not in str(err.value)


def test_an_empty_item_file_beside_a_real_one_is_an_error_naming_it(tmp_path, demo):
    import json

    real, empty = tmp_path / "real.jsonl", tmp_path / "empty.jsonl"
    item = demo[0]
    real.write_text(
        json.dumps(
            {
                "item_id": "q1",
                "dataset": "d",
                "dataset_type": "objective",
                "question": item.question,
                "options": list(item.options),
                "answer": item.answer,
            }
        )
        + "\n"
    )
    empty.write_text("")
    study = tmp_path / "s.toml"
    study.write_text(
        '[study]\nname = "s"\nitems = ["real.jsonl", "empty.jsonl"]\n'
        '[output]\ntable = "out/s.parquet"\n'
    )
    res = CliRunner().invoke(app, ["run", str(study)])
    assert res.exit_code != 0
    assert "empty.jsonl: the item file holds no items" in str(res.exception)
    res = CliRunner().invoke(app, ["perturb", str(empty)])
    assert res.exit_code != 0 and "empty.jsonl: the item file holds no items" in str(res.exception)
    res = CliRunner().invoke(app, ["perturb", str(real), str(empty)])
    assert res.exit_code != 0 and "empty.jsonl" in str(res.exception)
