"""analyze / analyze_path: the files of section 7, their columns, notes and console output."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from analyses import agreement_rows
from analyses.synthetic import synthetic_table
from robustness.analysis.pipeline import analyze, analyze_path
from robustness.core.table import TableError, write_csv, write_parquet

REQUIRED = {
    "agreement_items": [
        "model",
        "dataset",
        "dataset_type",
        "item_id",
        "category",
        "n_valid",
        "c_i",
        "majority",
        "tie",
    ],
    "agreement_by_type_category": ["category", "objective", "subjective", "gap"],
    "pss": ["model", "dataset", "category", "score", "pss", "n_items"],
    "gee_coefficients": ["coefficient", "term", "estimate", "robust_se"],
    "wald_type2": ["term", "dof", "chi2", "p_value"],
    "wald_type3": ["term", "dof", "chi2", "p_value"],
    "marginal_means": ["dataset_type", "category", "estimate", "ci_low", "ci_high"],
    "contrasts": ["category", "difference", "p_value", "p_holm"],
    "separation": ["term", "cell", "n_rows", "value"],
}


@pytest.fixture(scope="module")
def table():
    return synthetic_table(models=2, n_items=8, n_variants=3, seed=21)


def test_writes_every_table_with_its_columns(table, tmp_path):
    res = analyze(table, tmp_path, n_boot=100, quiet=True)
    for name, cols in REQUIRED.items():
        path = tmp_path / "tables" / f"{name}.csv"
        assert path.exists(), name
        got = pd.read_csv(path)
        if name in ("agreement_items", "pss", "wald_type2", "wald_type3"):  # fixed by the issue
            assert list(got.columns[: len(cols)]) == cols, name
        else:
            assert set(cols) <= set(got.columns), name
    w2 = pd.read_csv(tmp_path / "tables" / "wald_type2.csv")
    assert w2.term.tolist() == [
        "model",
        "dataset_type",
        "category",
        "dataset_type:category",
        "model:category",
    ]
    assert pd.read_csv(tmp_path / "tables" / "separation.csv").empty
    assert set(pd.read_csv(tmp_path / "tables" / "pss.csv").score) == {
        "correctness",
        "answer",
        "ordinal",
    }
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["n_invalid"] == int((~table.valid).sum()) == res.n_invalid
    assert res.fit is not None and res.fit.converged
    assert list(res.named_tables()) == list(summary["tables"])  # a field per file, in order
    assert res.named_tables()["agreement_items"] is res.agreement_items
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.notes = []  # type: ignore[misc]


def test_path_reads_parquet_and_csv(table, tmp_path):
    pq = write_parquet(table, tmp_path / "t.parquet", {"study": "x"})
    # 'correct' is left out of the CSV: see test_csv_with_missing_booleans below.
    csv = write_csv(table.drop(columns="correct"), tmp_path / "t.csv")
    a = analyze_path(pq, tmp_path / "a")
    b = analyze_path(csv, tmp_path / "b", cluster="model_item")
    assert a.cluster == "item" and b.cluster == "model_item"
    pd.testing.assert_frame_equal(a.agreement_by_type_category, b.agreement_by_type_category)
    with pytest.raises(TableError, match="no such table"):
        analyze_path(tmp_path / "missing.parquet", tmp_path / "c")


def test_csv_with_missing_booleans(table, tmp_path):
    csv = write_csv(table, tmp_path / "t.csv")  # 'correct' is empty on subjective rows
    assert analyze_path(csv, tmp_path / "o").n_rows == len(table)


def test_separation_and_dropped_terms_are_reported(table, tmp_path):
    rows = agreement_rows(table[table.model == "model_1"])
    hit = (rows.category == "framing") & (rows.dataset_type == "subjective") & rows.valid
    rows.loc[hit, "agree"] = True
    res = analyze(rows, tmp_path, n_boot=50, quiet=True)
    sep = pd.read_csv(tmp_path / "tables" / "separation.csv")
    assert "dataset_type=subjective, category=framing" in sep.cell.tolist()
    assert any("separation" in n for n in res.notes)
    assert any("cannot vary" in n for n in res.notes)
    assert "model" not in pd.read_csv(tmp_path / "tables" / "wald_type2.csv").term.tolist()


def test_console_summary_escapes_user_text(table, tmp_path):
    t = table.copy()
    t.loc[t.category == "framing", "category"] = "[red]framing[/red]"
    t["variant_id"] = t["variant_id"].str.replace("framing", "[red]framing[/red]", regex=False)
    console = Console(record=True, width=200)
    analyze(t, tmp_path, n_boot=50, console=console)
    text = console.export_text()
    assert "[red]framing[/red]" in text
    assert "Wald" in text and "invalid" in text


def test_bad_input_is_one_clear_error(table, tmp_path):
    with pytest.raises(TableError, match="'answer'"):
        analyze(table.drop(columns="answer"), tmp_path, quiet=True)
    with pytest.raises(TableError, match="'shots_x'"):
        analyze(table, tmp_path, formula="agree ~ shots_x", quiet=True)
    with pytest.raises(ValueError, match="cluster"):
        analyze(table, tmp_path, cluster="model", quiet=True)


def test_gee_failure_is_a_note_not_a_crash(table, tmp_path):
    one_cat = table[table.category.isin(["original", "framing"])]
    res = analyze(one_cat, tmp_path, formula="agree ~ model", n_boot=20, quiet=True)
    assert res.fit is not None or any("could not be fitted" in n for n in res.notes)
    assert (tmp_path / "tables" / "wald_type2.csv").exists()


def test_cli_analyze(table, tmp_path):
    from typer.testing import CliRunner

    from robustness.cli import app

    pq = write_parquet(table, tmp_path / "t.parquet", {})
    run = CliRunner().invoke(app, ["analyze", str(pq), "--out", str(tmp_path / "o")])
    assert run.exit_code == 0, run.output
    assert (tmp_path / "o" / "tables" / "wald_type3.csv").exists()


def test_bad_arguments_are_analysis_errors_with_plain_values(tmp_path):
    import numpy as np

    from analyses.synthetic import synthetic_table
    from robustness.core.errors import AnalysisError

    table = synthetic_table(models=1, n_items=4, seed=0)
    with pytest.raises(AnalysisError, match=r"not 0\.$"):
        analyze(table, tmp_path, min_items=np.int64(0), quiet=True)
    with pytest.raises(AnalysisError, match=r"cluster must be 'item' or 'model_item', not 'x'"):
        analyze(table, tmp_path, cluster="x", quiet=True)


def test_prompt_sets_are_built_once_per_analyze(tmp_path, monkeypatch):
    """The table is grouped into prompt sets once; each model's sets are cut from those, and
    the sensitivity analysis recounts answers over the same grouping (issue 26)."""
    import analyses.prompt_sets as module

    calls = []
    real = module.codes

    def counting(frame, columns):
        calls.append(tuple(columns))
        return real(frame, columns)

    monkeypatch.setattr(module, "codes", counting)
    table = synthetic_table(models=2, n_items=6, seed=5, invalid_rate=0.1)
    analyze(table, tmp_path, n_boot=20, quiet=True)
    assert calls.count(("model", "dataset", "item_id", "category")) == 1, calls


def test_for_model_and_with_answers_equal_a_fresh_grouping():
    from analyses.prompt_sets import for_model, prompt_sets, with_answers
    from analyses.table_input import load
    from analyses.type_comparison import invalid_as_disagreement

    t = load(synthetic_table(models=3, n_items=5, seed=4, invalid_rate=0.2))
    whole = prompt_sets(t)
    for model in sorted(t["model"].unique()):
        cut = for_model(whole, model)
        fresh = prompt_sets(t[t["model"] == model].reset_index(drop=True))
        pd.testing.assert_frame_equal(cut.keys, fresh.keys)
        for name in ("group", "answer", "n_invalid", "original", "item_group", "agree"):
            assert np.array_equal(getattr(cut, name), getattr(fresh, name), equal_nan=True), name
    t2 = invalid_as_disagreement(t)
    again, fresh = with_answers(whole, t2), prompt_sets(t2)
    assert np.array_equal(again.agree, fresh.agree, equal_nan=True)
    assert np.array_equal(again.maj.majority, fresh.maj.majority)


def test_a_table_read_or_written_is_not_validated_again(tmp_path, monkeypatch):
    import robustness.core.table.checks as checks
    from robustness.core.table import read_table, validate

    table = synthetic_table(models=1, n_items=4, seed=1)
    path = write_parquet(validate(table), tmp_path / "t.parquet", {})
    loaded = read_table(path)
    seen = []
    real = checks.normalize
    monkeypatch.setattr(checks, "normalize", lambda df: seen.append(len(df)) or real(df))
    analyze(loaded, tmp_path / "out", n_boot=20, quiet=True)
    write_parquet(loaded, tmp_path / "again.parquet", {})
    assert seen == []  # neither analyze's load nor write_parquet checked it again
    changed = loaded.assign(answer=loaded["answer"])  # a new frame: checked again
    analyze(changed, tmp_path / "out2", n_boot=20, quiet=True)
    assert seen


def test_two_models_read_are_not_validated_again(tmp_path, monkeypatch):
    """The ranking tables (two models or more) reuse the checked rows and format accuracy."""
    import analyses.spread as spread
    import robustness.core.table.checks as checks
    from robustness.core.table import read_table

    table = synthetic_table(models=2, n_items=4, seed=2)
    loaded = read_table(write_parquet(table, tmp_path / "t.parquet", {}))
    seen, formats = [], []
    real, real_formats = checks.normalize, spread.format_accuracy
    monkeypatch.setattr(checks, "normalize", lambda df: seen.append(len(df)) or real(df))
    monkeypatch.setattr(
        spread, "format_accuracy", lambda *a, **k: formats.append(1) or real_formats(*a, **k)
    )
    res = analyze(loaded, tmp_path / "out", n_boot=20, quiet=True)
    assert seen == []
    assert len(formats) == 1
    assert len(res.spread_resolution) == 2


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("dataset_type", "objectiv", r"column 'dataset_type', row 0 \(.*\): 'objectiv' is not"),
        ("answer", -5, r"column 'answer', row 0"),
        ("model", None, r"column 'model', row 0"),
    ],
)
def test_a_value_written_in_place_after_reading_is_checked(tmp_path, column, value, message):
    from robustness.core.errors import TableError
    from robustness.core.table import read_table

    loaded = read_table(
        write_parquet(synthetic_table(models=1, n_items=3, seed=1), tmp_path / "t.parquet", {})
    )
    loaded.loc[0, column] = value
    with pytest.raises(TableError, match=message):
        analyze(loaded, tmp_path / "out", n_boot=20, quiet=True)
