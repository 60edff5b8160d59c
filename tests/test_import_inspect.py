"""``robustness import inspect`` on a log that inspect_ai itself wrote in the test: its ``hf``
provider on the embedded SmolLM2 folder, the ``multiple_choice`` solver and ``choice`` scorer,
two epochs. The same log as ``.eval`` and (through inspect_ai's ``write_eval_log``) as
``.json`` gives the same table; epochs are repeated variants or refused; bad logs are one
sentence naming the file and field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="inspect_ai is the optional extra 'inspect'")

from robustness.core.answer_parser import parse_answer
from robustness.core.errors import StudyError
from robustness.importers.inspect_log import import_inspect
from robustness.importers.task_map import read_task_map

QUESTIONS = [
    ("q1", "What is 2 + 2?", ["3", "4", "5"], "B"),
    ("q2", "Which of these is a colour?", ["red", "dog", "run"], "A"),
    ("q3", "Which animal barks?", ["cat", "cow", "dog"], "C"),
]


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice

    from robustness.runners.embedded import ensure_converted

    root = tmp_path_factory.mktemp("inspect")
    samples = [Sample(input=q, choices=c, target=t, id=i) for i, q, c, t in QUESTIONS]
    task = Task(
        dataset=MemoryDataset(samples),
        solver=multiple_choice(),
        scorer=choice(),
        name="rb_original_0",
    )
    folder = str(ensure_converted().path)
    [log] = inspect_eval(
        task,
        model="hf/smollm2",
        model_args={"model_path": folder, "device": "cpu"},
        log_dir=str(root / "logs"),
        log_format="eval",
        max_tokens=12,
        display="none",
        epochs=2,
    )
    assert log.status == "success"
    eval_path = Path(log.location)
    json_path = root / "copy.json"
    write_eval_log(read_eval_log(str(eval_path)), str(json_path), format="json")
    return {"eval": eval_path, "json": json_path, "root": root}


pytestmark = pytest.mark.slow


def test_rows_from_a_real_log(logs):
    import pandas as pd

    t = import_inspect([logs["eval"]])
    assert len(t) == 6
    # one reference row per item: the first epoch; the second is a resample of it
    assert sorted(t["variant_id"].unique()) == ["original/0", "resample/0/epoch2"]
    assert (t.groupby("item_id")["category"].apply(lambda c: (c == "original").sum()) == 1).all()
    assert set(t["item_id"]) == {"q1", "q2", "q3"} and set(t["dataset"]) == {"rb_original_0"}
    golds = {i: "ABC".index(g) for i, _, _, g in QUESTIONS}
    assert t["gold"].tolist() == [golds[i] for i in t["item_id"]]
    from inspect_ai.log import read_eval_log

    expected = {}
    for s in read_eval_log(str(logs["eval"])).samples:
        scored = s.scores["choice"].answer
        if scored in ("A", "B", "C"):
            expected[(s.id, s.epoch)] = "ABC".index(scored)
        else:
            parsed = parse_answer(s.output.completion, ["A", "B", "C"], s.choices)
            expected[(s.id, s.epoch)] = parsed.position
    for row in t.itertuples():
        epoch = int(row.variant_id.rsplit("epoch", 1)[1]) if "epoch" in row.variant_id else 1
        want = expected[(row.item_id, epoch)]
        assert (None if row.answer is pd.NA else row.answer) == want, row
        assert row.valid == (want is not None)
        if row.valid:
            assert row.correct == (row.answer == row.gold)
    assert t["inspect_score"].isin(["C", "I"]).all()
    print(t[["item_id", "variant_id", "raw_output", "answer", "gold", "inspect_score"]])


def test_eval_and_json_give_the_same_table(logs):
    import pandas as pd

    a, b = import_inspect([logs["eval"]]), import_inspect([logs["json"]])
    pd.testing.assert_frame_equal(a, b)


def test_cli_writes_a_table_validate_accepts(logs):
    out = logs["root"] / "t.parquet"
    (logs["root"] / "map.toml").write_text(
        '[tasks.rb_original_0]\ndataset = "toy"\ncategory = "original"\nvariant = 0\n'
    )
    run = [sys.executable, "-m", "robustness.cli"]
    done = subprocess.run(
        [
            *run,
            "import",
            "inspect",
            str(logs["eval"]),
            "--out",
            str(out),
            "--map",
            str(logs["root"] / "map.toml"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert subprocess.run([*run, "validate", str(out)], capture_output=True).returncode == 0


def test_epochs_refused_when_asked(logs):
    with pytest.raises(StudyError, match=r"field 'eval\.config\.epochs': 2 epochs"):
        import_inspect([logs["eval"]], epochs=False)


def test_unmapped_task_is_named(logs, tmp_path):
    (tmp_path / "map.toml").write_text('[tasks.other]\ndataset = "x"\n')
    with pytest.raises(StudyError, match=r"\.eval: task 'rb_original_0' has no"):
        import_inspect([logs["eval"]], read_task_map(tmp_path / "map.toml"))


def test_other_log_version_and_garbage_are_named(logs, tmp_path):
    data = json.loads(logs["json"].read_text())
    data["version"] = 1
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    with pytest.raises(StudyError, match=r"old\.json(, field 'version'|: not an inspect)"):
        import_inspect([old])
    junk = tmp_path / "junk.json"
    junk.write_text('{"samples": [')
    with pytest.raises(StudyError, match=r"junk\.json: not an inspect_ai eval log"):
        import_inspect([junk])


def test_two_tasks_mapped_to_one_original_are_refused(logs, tmp_path):
    data = json.loads(logs["json"].read_text())
    data["eval"]["task"] = "rb_original_1"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    (tmp_path / "map.toml").write_text(
        '[tasks.rb_original_0]\ndataset = "d"\n[tasks.rb_original_1]\ndataset = "d"\nvariant = 1\n'
    )
    task_map = read_task_map(tmp_path / "map.toml")
    with pytest.raises(
        StudyError,
        match=r"other\.json: task 'rb_original_1' .* maps dataset 'd' "
        r"to category 'original', as .* does; a dataset has one original prompt",
    ):
        import_inspect([logs["json"], other], task_map)
    (tmp_path / "map.toml").write_text(
        '[tasks.rb_original_0]\ndataset = "d"\n[tasks.rb_original_1]\ndataset = "d"\n'
        'category = "formatting"\n'
    )
    table = import_inspect([logs["json"], other], read_task_map(tmp_path / "map.toml"))
    assert set(table["category"]) == {"original", "resample", "formatting"}
