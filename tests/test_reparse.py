"""Re-reading a table's generate-mode answers: `robustness.reparse` and `robustness reparse`.

A scripted runner answers every variant with a label followed by another option's text
("B. Agree" where B shows Disagree), with negated agreement, or with a plain label, so the
expected readings are known from the variant's own answer map (``Variant.to_canonical``),
independently of the parser's code.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import robustness as rb
from robustness.answers import answer_rows, rows_to_table
from robustness.cli import app
from robustness.core.answer_parser import PARSER_VERSION
from robustness.core.errors import StudyError, TableError
from robustness.core.table import read_metadata, read_table, validate, write_parquet
from robustness.reparse import reparse
from robustness.runners.base import Generation
from robustness.study import ModelConfig, study_from_dict

AGREE = rb.Item(
    "s1",
    "toy_survey",
    "subjective",
    "Cities should plant more trees.",
    ("Strongly disagree", "Disagree", "Agree", "Strongly agree"),
    scale="ordinal",
)
QUIZ = rb.Item(
    "q1", "toy", "objective", "Closest planet to the Sun?", ("Venus", "Mercury", "Mars"), answer=1
)


def _variants():
    return rb.perturb(
        [AGREE, QUIZ],
        families=("option_order", "label_substitution", "logical_equivalence"),
        n=4,
        seed=0,
    )


def _script(v) -> str:
    """The answer the scripted model gives to variant ``v`` (a pure function of the variant)."""
    labels, options = v.spec.labels, v.spec.options
    k = sum(map(ord, v.variant_id)) % 3
    if k == 0:  # the label of the first displayed option with the text of the last one
        return f"{labels[0]}. {options[-1]}"
    if k == 1:
        return "I don't agree." if v.item is AGREE else f"({labels[1]})"
    return f"The answer is {labels[-1]}."


class ScriptRunner:
    backend, model_id = "fake", "script"

    def __init__(self, vs):
        self.by_prompt = {v.prompt(): v for v in vs}

    def generate(self, prompts, max_new_tokens, *, on_batch=None):
        return [Generation(_script(self.by_prompt[p]), 4, 1.0) for p in prompts]


def _table(conflict: str = "ambiguous") -> tuple[pd.DataFrame, list]:
    vs = _variants()
    model = ModelConfig(name="m", mode="generate", conflict=conflict)
    rows = answer_rows(ScriptRunner(vs), vs, model, study="s", seed=0)
    return validate(rows_to_table(rows)), vs


def test_rows_keep_both_readings_and_the_parser_version():
    table, vs = _table()
    assert (table["parser_version"] == PARSER_VERSION).all()
    conflicts = 0
    for row, v in zip(table.itertuples(), vs, strict=True):
        display = json.loads(row.display)
        assert display["labels"] == list(v.spec.labels)
        assert display["canonical"] == [v.to_canonical(lab) for lab in v.spec.labels]
        if sum(map(ord, v.variant_id)) % 3 == 0:
            conflicts += 1
            assert not row.valid and row.invalid_reason == "ambiguous"
            assert row.label_answer == v.to_canonical(v.spec.labels[0])
            assert row.text_answer == v.to_canonical(v.spec.labels[-1])  # the text shown last
        else:
            assert pd.isna(row.label_answer) and pd.isna(row.text_answer)
    assert conflicts >= 5


@pytest.mark.parametrize("policy", ["label", "text"])
def test_reparse_with_a_policy_matches_a_run_with_that_policy(policy):
    table, _ = _table("ambiguous")
    result = reparse(table, conflict=policy)
    direct, _ = _table(policy)
    cols = ["answer", "valid", "invalid_reason", "label_answer", "text_answer"]
    pd.testing.assert_frame_equal(result.table[cols], direct[cols])
    side = "label_answer" if policy == "label" else "text_answer"
    has = table[side].notna()
    assert (result.table.loc[has, "answer"] == table.loc[has, side]).all()
    # every conflict row changed from ambiguous to valid, nothing else changed
    assert result.counts["changed"] == int(has.sum())
    assert set(result.changes["change"]) == {"ambiguous -> valid"}


def test_reparse_with_the_same_parser_changes_nothing():
    table, _ = _table()
    result = reparse(table)
    assert result.counts == {
        "rows": len(table),
        "reread": len(table),
        "changed": 0,
        "other_mode": 0,
        "model_error": 0,
        "no_display": 0,
    }
    assert result.changes.empty and result.summary.empty


def test_reparse_reports_what_an_older_parser_read_differently():
    table, _ = _table()
    old = table.copy()
    neg = old.index[old["raw_output"] == "I don't agree."]
    plain = old.index[old["raw_output"].str.startswith("The answer is")]
    assert len(neg) >= 2 and len(plain) >= 2
    # an older parser: negated agreement was no_label, one plain answer was read wrongly
    old.loc[neg, ["answer", "valid", "invalid_reason", "correct"]] = [None, False, "no_label", None]
    wrong = plain[0]
    old.loc[wrong, "answer"] = (int(table.loc[wrong, "answer"]) + 1) % int(
        table.loc[wrong, "n_options"]
    )
    old.loc[wrong, "correct"] = None if pd.isna(old.loc[wrong, "gold"]) else False
    old["parser_version"] = "1"
    result = reparse(validate(old))
    summary = dict(zip(result.summary["change"], result.summary["rows"], strict=True))
    assert summary == {"no_label -> valid": len(neg), "answer changed": 1}
    assert (result.changes["old_parser"] == "1").all()
    assert (result.table["parser_version"] == PARSER_VERSION).all()
    cols = ["answer", "valid", "invalid_reason", "correct"]
    pd.testing.assert_frame_equal(result.table[cols], table[cols])


def test_rows_that_are_not_reread_are_kept_and_counted():
    table, _ = _table()
    t = table.copy()
    t.loc[0, "mode"] = "choice"
    t.loc[1, ["raw_output", "invalid_reason", "valid", "answer", "correct"]] = [
        None,
        "error: timeout",
        False,
        None,
        None,
    ]
    t.loc[2, "display"] = None
    t.loc[2, ["answer", "valid"]] = [0, True]
    result = reparse(validate(t))
    assert (result.counts["other_mode"], result.counts["model_error"]) == (1, 1)
    assert result.counts["no_display"] == 1
    for i in (0, 1, 2):
        assert result.table.loc[i, "answer"] is t.loc[i, "answer"] or (
            result.table.loc[i, "answer"] == t.loc[i, "answer"]
        )
    assert result.table.loc[1, "invalid_reason"] == "error: timeout"


def test_a_broken_display_cell_and_a_bad_policy_are_one_clear_error():
    table, _ = _table()
    t = table.copy()
    t.loc[3, "display"] = json.dumps({"labels": ["A"], "options": []})
    with pytest.raises(TableError, match=r"column 'display', row 3"):
        reparse(t)
    with pytest.raises(TableError, match="conflict policy 'first'"):
        reparse(table, conflict="first")


def test_cli_reparse_writes_the_table_and_prints_the_changes(tmp_path):
    table, _ = _table()
    old = table.copy()
    conflicts = int(old["label_answer"].notna().sum())
    src = write_parquet(old, tmp_path / "t.parquet", {"study": {"name": "s"}})
    out = tmp_path / "t2.parquet"
    res = CliRunner().invoke(
        app, ["reparse", str(src), "--out", str(out), "--conflict", "text"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    assert f"{len(old)} of {len(old)} rows re-read" in res.output
    assert f"{conflicts} changed" in res.output and "ambiguous -> valid" in res.output
    new = read_table(out)
    assert (new["parser_version"] == PARSER_VERSION).all()
    assert int(new["valid"].sum()) == int(old["valid"].sum()) + conflicts
    meta = read_metadata(out)
    assert meta["study"] == {"name": "s"}
    assert meta["reparse"]["conflict"] == "text"
    csv = tmp_path / "t2.csv"
    res = CliRunner().invoke(app, ["reparse", str(src), "-o", str(csv)], catch_exceptions=False)
    assert res.exit_code == 0 and "0 changed" in res.output and csv.exists()


def test_study_conflict_key():
    base = {"models": [{"name": "a", "mode": "generate"}, {"name": "b", "conflict": "text"}]}
    study = study_from_dict({"study": {"conflict": "label"}, **base})
    assert [m.conflict for m in study.models] == ["label", "text"]
    assert [m.conflict for m in study_from_dict(base).models] == ["ambiguous", "text"]
    assert study.to_dict()["models"][0]["conflict"] == "label"
    with pytest.raises(StudyError, match="unknown conflict policy 'first'"):
        study_from_dict({"study": {"conflict": "first"}})
    with pytest.raises(StudyError, match="unknown key 'conflicts' in \\[study\\]; did you mean"):
        study_from_dict({"study": {"conflicts": "label"}})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["reparse", "missing.parquet", "-o", "out.parquet"], "no such table file."),
        (["reparse", "{src}", "-o", "out.json"], "must end in .parquet or .csv"),
        (["reparse", "{src}", "-o", "out.parquet", "--conflict", "first"], "conflict policy"),
    ],
)
def test_cli_mistakes_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys, args, message):
    from robustness.cli import main

    table, _ = _table()
    src = write_parquet(table, tmp_path / "t.parquet", {})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["robustness", *[a.format(src=src) for a in args]])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err


def test_parser_versions_sentence_for_a_report():
    from robustness.reparse import parser_versions

    table, _ = _table()
    n = len(table)
    assert (
        parser_versions(table)
        == f"generated answers read by answer parser {PARSER_VERSION} ({n:,} rows)"
    )
    mixed = table.copy()
    mixed.loc[: n // 2 - 1, "parser_version"] = None
    sentence = parser_versions(mixed)
    assert f"{PARSER_VERSION} ({n - n // 2:,} rows)" in sentence
    assert f"an unrecorded version ({n // 2:,} rows)" in sentence
    assert parser_versions(table.assign(mode="choice")) == ""


def test_a_table_without_display_is_rebuilt_from_its_study_file(tmp_path):
    """A table written before the display column existed stays usable: the study file makes
    the same variants again, so what each prompt showed is rebuilt (issue 11)."""
    from robustness.commands.reparse import displays_from_study
    from robustness.run import study_items, study_variants

    study = tmp_path / "s.toml"
    study.write_text(
        '[study]\nname = "s"\nitems_per_dataset = 1\n'
        'families = ["option_order", "label_substitution", "logical_equivalence"]\n'
        'n_variants = 3\n\n[[models]]\nname = "m"\nmode = "generate"\n'
    )
    config = rb.load_study(study)
    vs = study_variants(config, study_items(config))
    rows = answer_rows(ScriptRunner(vs), vs, config.models[0], study="s", seed=0)
    table = validate(rows_to_table(rows))
    old = table.drop(columns=["display"])
    old.loc[0, "prompt"] = "another prompt"  # a row whose prompt no longer matches stays bare
    rebuilt, filled = displays_from_study(old, study)
    assert filled == len(table) - 1
    assert rebuilt["display"].iloc[1:].tolist() == table["display"].iloc[1:].tolist()
    assert rebuilt["display"].iloc[0] is None
    result = reparse(rebuilt, conflict="label")
    assert result.counts["no_display"] == 1
    assert result.counts["changed"] == int(table["label_answer"].iloc[1:].notna().sum())
