"""``robustness import lm-eval`` on lm-eval-shaped folders: rows, map, CLI, and every bad input
the issue names (other version, unmapped task, doc without target, mixed models, truncated
line) as one sentence naming the file, line and field, with nothing written."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.lm_eval_logs import DATE, write_logs

from robustness.core.errors import StudyError
from robustness.core.table import read_table
from robustness.importers.lm_eval import import_lm_eval
from robustness.importers.task_map import read_task_map

TASKS = {"tmpl_a": "multiple_choice", "tmpl_b": "multiple_choice", "gen": "generate_until"}

MAP = """
[tasks.tmpl_a]
dataset = "mmlu"
dataset_type = "objective"
category = "original"
variant = 0
[tasks.tmpl_b]
dataset = "mmlu"
dataset_type = "objective"
category = "formatting"
variant = 0
[tasks.gen]
dataset = "mmlu"
category = "formatting"
variant = 1
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "robustness.cli", *args], capture_output=True, text=True
    )


def test_rows_without_a_map(tmp_path):
    picks = write_logs(tmp_path / "logs" / "org__model", TASKS, n_docs=6, seed=1)
    t = import_lm_eval(tmp_path / "logs")
    assert len(t) == 18
    assert sorted(t["dataset"].unique()) == sorted(TASKS)
    assert set(t["category"]) == {"original"} and set(t["variant_id"]) == {"original/0"}
    assert t["model"].unique().tolist() == ["org/model"]
    for task, chosen in picks.items():
        rows = t[t["dataset"] == task].sort_values("item_id", key=lambda s: s.astype(int))
        assert rows["answer"].tolist() == chosen
        assert rows["item_id"].tolist() == [str(i) for i in range(6)]
    mc = t[t["mode"] == "cloze"].iloc[0]
    logliks = json.loads(mc["logliks"])
    expect = [math.exp(x - max(logliks)) for x in logliks]
    assert list(mc["option_probs"]) == pytest.approx([e / sum(expect) for e in expect])
    assert mc["correct"] == (mc["answer"] == mc["gold"])
    gen = t[t["mode"] == "generate"]
    assert gen["valid"].all() and gen["label"].isin(list("ABCD")).all()


def test_map_places_tasks_and_the_cli_writes_a_valid_table(tmp_path):
    write_logs(tmp_path / "logs", TASKS, n_docs=4)
    (tmp_path / "map.toml").write_text(MAP)
    out = tmp_path / "table.parquet"
    done = _cli(
        "import",
        "lm-eval",
        str(tmp_path / "logs"),
        "--out",
        str(out),
        "--map",
        str(tmp_path / "map.toml"),
    )
    assert done.returncode == 0, done.stderr
    t = read_table(out)
    assert set(t["dataset"]) == {"mmlu"}
    assert sorted(t["variant_id"].unique()) == ["formatting/0", "formatting/1", "original/0"]
    assert _cli("validate", str(out)).returncode == 0


def test_two_tasks_on_one_place_are_refused(tmp_path):
    write_logs(tmp_path / "logs", TASKS, n_docs=2)
    (tmp_path / "map.toml").write_text(MAP.replace("variant = 1", "variant = 0"))
    with pytest.raises(StudyError, match="maps to the same dataset, category and variant"):
        import_lm_eval(tmp_path / "logs", read_task_map(tmp_path / "map.toml"))


def test_two_tasks_mapped_to_one_original_are_refused(tmp_path):
    write_logs(tmp_path / "logs", TASKS, n_docs=2)
    (tmp_path / "map.toml").write_text(
        MAP.replace('category = "formatting"', 'category = "original"')
    )
    with pytest.raises(
        StudyError,
        match=r"task 'tmpl_[ab]' maps dataset 'mmlu' to category 'original', "
        r"as task '(tmpl_[ab]|gen)' "
        "does; a dataset has one original prompt per model",
    ):
        import_lm_eval(tmp_path / "logs", read_task_map(tmp_path / "map.toml"))


def _refused(tmp_path: Path, pattern: str, task_map: str | None = None) -> None:
    out = tmp_path / "out.parquet"
    args = ["import", "lm-eval", str(tmp_path / "logs"), "--out", str(out)]
    if task_map is not None:
        (tmp_path / "map.toml").write_text(task_map)
        args += ["--map", str(tmp_path / "map.toml")]
    done = _cli(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    message = done.stderr.strip()
    assert message.count("\n") == 0 and "Traceback" not in message
    import re

    assert re.search(pattern, message), message
    assert not out.exists() and not list(tmp_path.glob("out.parquet*"))


def test_other_version_is_named(tmp_path):
    write_logs(tmp_path / "logs", TASKS, n_docs=2, version="0.3.0")
    _refused(tmp_path, r"results_.*\.json, field 'lm_eval_version': '0\.3\.0'")


def test_unmapped_task_is_named(tmp_path):
    write_logs(tmp_path / "logs", TASKS, n_docs=2)
    _refused(
        tmp_path,
        r"samples_gen_.*\.jsonl: task 'gen' has no \[tasks\.gen\]",
        MAP.split("[tasks.gen]")[0],
    )


def _edit_line(path: Path, number: int, edit) -> None:
    lines = path.read_text().splitlines()
    lines[number - 1] = edit(lines[number - 1])
    path.write_text("\n".join(lines) + "\n")


def test_doc_without_target_is_named(tmp_path):
    write_logs(tmp_path / "logs", TASKS, n_docs=3)
    samples = tmp_path / "logs" / f"samples_tmpl_b_{DATE}.jsonl"

    def drop_target(line: str) -> str:
        record = json.loads(line)
        del record["target"]
        return json.dumps(record)

    _edit_line(samples, 2, drop_target)
    _refused(tmp_path, r"samples_tmpl_b_.*\.jsonl, line 2, field 'target': missing")


def test_truncated_line_is_named(tmp_path):
    write_logs(tmp_path / "logs", TASKS, n_docs=3)
    samples = tmp_path / "logs" / f"samples_tmpl_a_{DATE}.jsonl"
    text = samples.read_text()
    samples.write_text(text[: len(text) - 40])  # the last line cut short, no newline
    _refused(tmp_path, r"samples_tmpl_a_.*\.jsonl, line 3: not a JSON object \(the line is trunc")


def test_mixed_models_in_one_folder_are_named(tmp_path):
    write_logs(tmp_path / "logs", {"tmpl_a": "multiple_choice"}, n_docs=2)
    write_logs(
        tmp_path / "logs",
        {"tmpl_b": "multiple_choice"},
        n_docs=2,
        model="other/m",
        date="2026-12-02T01-00-00.000001",
    )
    _refused(tmp_path, r"results_.*\.json, field 'model_name': 'other/m' differs from 'org/model'")


def test_two_models_in_their_own_folders_are_one_table(tmp_path):
    write_logs(tmp_path / "logs" / "a", {"tmpl_a": "multiple_choice"}, n_docs=2)
    write_logs(tmp_path / "logs" / "b", {"tmpl_a": "multiple_choice"}, n_docs=2, model="x/y")
    t = import_lm_eval(tmp_path / "logs")
    assert sorted(t["model"].unique()) == ["org/model", "x/y"]


def test_generation_doc_without_options_is_named(tmp_path):
    write_logs(tmp_path / "logs", {"gen": "generate_until"}, n_docs=2)
    samples = tmp_path / "logs" / f"samples_gen_{DATE}.jsonl"

    def drop_options(line: str) -> str:
        record = json.loads(line)
        del record["doc"]["options"]
        return json.dumps(record)

    _edit_line(samples, 1, drop_options)
    with pytest.raises(StudyError, match=r"line 1, field 'doc.options'"):
        import_lm_eval(tmp_path / "logs")


def test_bad_map_field_is_named(tmp_path):
    (tmp_path / "map.toml").write_text('[tasks.a]\ndataset_type = "subjectiv"\n')
    with pytest.raises(StudyError, match=r"\[tasks\.a\], field 'dataset_type': 'subjectiv'"):
        read_task_map(tmp_path / "map.toml")


def test_analyze_writes_multi_prompt_table_and_section(tmp_path):
    write_logs(tmp_path / "logs", TASKS, n_docs=12, seed=3)
    (tmp_path / "map.toml").write_text(MAP)
    table = tmp_path / "t.csv"
    done = _cli(
        "import", "lm-eval", str(tmp_path / "logs"), "--out", str(table),
        "--map", str(tmp_path / "map.toml"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = tmp_path / "analysis"
    done = _cli("analyze", str(table), "-o", str(out), "--min-items", "5")
    assert done.returncode == 0, done.stderr[-2000:]
    import pandas as pd

    mp = pd.read_csv(out / "tables" / "multi_prompt.csv")
    assert mp["scope"].tolist() == ["formatting", "all prompts"]
    assert mp["n_prompts"].tolist() == [3, 3]
    assert "## Multi-prompt accuracy" in (out / "report.md").read_text()
