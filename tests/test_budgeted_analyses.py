"""Analyses on a budgeted table (issue 28): sparse detected, full-grid statistics withheld with
the reason, the estimates and sentences a report shows instead."""

from __future__ import annotations

import numpy as np
import pytest

import analyses as an
from analyses.synthetic import synthetic_table
from robustness.core.errors import AnalysisError


@pytest.fixture(scope="module")
def full():
    return synthetic_table(models=2, n_items=8, n_variants=3, seed=0)


def sparse_of(table, share=0.2, seed=0):
    rng = np.random.default_rng(seed)
    keep = (table["category"] == "original").to_numpy() | (rng.random(len(table)) < share)
    return table.loc[keep].reset_index(drop=True)


def test_a_full_table_is_not_budgeted_and_nothing_is_withheld(full):
    assert an.withheld_reason(full) is None
    an.require_full_grid(full, "Kendall's W")
    counts = an.grid_counts(full)
    assert (counts["share"] == 1).all() and (counts["n_asked"] == counts["n_grid"]).all()
    concordance = an.ranking_tables(full, n_perm=20)["ranking_concordance"]
    assert not concordance["reason"].fillna("").str.startswith("withheld").any()


def test_a_sparse_table_from_elsewhere_is_measured_and_kendall_w_is_withheld(full):
    sparse = sparse_of(full, share=0.1)
    counts = an.grid_counts(sparse)
    assert (counts["share"] < 0.5).all()
    reason = an.withheld_reason(sparse)
    assert reason is not None and "measured from the table" in reason
    with pytest.raises(AnalysisError, match=r"^Kendall's W: the table is sparse"):
        an.require_full_grid(sparse, "Kendall's W")
    concordance = an.ranking_tables(sparse, n_perm=20)["ranking_concordance"]
    assert concordance["w"].isna().all()
    assert concordance["reason"].str.startswith("withheld: the table is sparse").all()


def test_the_design_in_the_metadata_decides(full):
    design = {"fraction": 0.3, "n_asked": 123, "n_grid": 410, "seed": 0}
    reason = an.withheld_reason(full, {"budget": design})
    assert reason is not None and "a budgeted run: 30.0% of the grid, 123 of 410" in reason
    tagged = full.copy()
    tagged.attrs["budget"] = design
    assert an.withheld_reason(tagged) == reason
    assert an.withheld_reason(full, {"budget": {**design, "fraction": 1.0}}) is None


def test_budget_sections_give_the_headline_method_and_estimates(full):
    sparse = sparse_of(full, share=0.35, seed=1)
    sections = an.budget_sections(
        sparse, {"budget": {"fraction": 0.35, "n_asked": 9, "n_grid": 9}}, n_boot=5
    )
    assert sections["headline"].startswith("Budgeted study: 35% of the prompt grid")
    assert (
        "budgeted at 0.35" in sections["method"] and "Withheld: Kendall's W" in sections["method"]
    )
    assert {"variant_estimates", "variant_quantiles", "budget_design", "withheld"} <= set(sections)
    pv = sections["variant_estimates"]
    assert set(pv["model"]) == set(full["model"]) and pv["estimate"].between(0, 1).all()
    assert an.budget_sections(full) is None


def test_analyze_on_a_budgeted_parquet_says_so_and_writes_the_estimates(full, tmp_path):
    """Through the file, as the CLI reads it: the design comes from the Parquet metadata."""
    from robustness.analysis.pipeline import analyze_path
    from robustness.core.table import write_parquet
    from robustness.report import write_report

    sparse = sparse_of(full, share=0.35, seed=1)
    design = {"fraction": 0.35, "n_asked": 40, "n_grid": 114, "seed": 0}
    path = write_parquet(sparse, tmp_path / "table.parquet", {"budget": design})
    result = analyze_path(path, tmp_path / "out")
    assert result.budget_headline.startswith("Budgeted study: 35% of the prompt grid")
    assert result.variant_estimates is not None and len(result.variant_estimates)
    assert (tmp_path / "out" / "tables" / "variant_quantiles.csv").exists()
    assert "Kendall's W across variants" in set(result.withheld["statistic"])
    md = write_report(result, tmp_path / "out", {})["md"].read_text()
    head = md.split("## ", 2)[1]
    assert "Budgeted study: 35%" in head
    assert "The study was budgeted at 0.35" in md


def test_analyze_on_a_full_table_has_no_budget_fields(full, tmp_path):
    from robustness.analysis.pipeline import analyze

    result = analyze(full, tmp_path, n_boot=20, quiet=True)
    assert result.budget_headline == "" and result.variant_estimates is None
    assert not (tmp_path / "tables" / "variant_estimates.csv").exists()


def test_the_analyze_command_reads_the_budget_and_the_report_shows_the_estimates(full, tmp_path):
    import io

    from rich.console import Console

    from robustness.commands.analyze import analyze_table
    from robustness.core.table import write_parquet

    sparse = sparse_of(full, share=0.35, seed=1)
    design = {"fraction": 0.6, "n_asked": 40, "n_grid": 114, "seed": 0}  # above the guess
    path = write_parquet(sparse, tmp_path / "table.parquet", {"budget": design})
    console = Console(file=io.StringIO(), width=120)
    result, paths = analyze_table(path, tmp_path / "out", console=console, n_boot=20)
    assert result.budget_headline.startswith("Budgeted study: 60% of the prompt grid")
    assert result.multi_prompt is None
    md = paths["md"].read_text()
    assert "Variant estimates" in md and "Withheld on a budgeted table" in md


def test_the_budget_sentence_is_said_once_in_the_console_and_the_report(full, tmp_path):
    """The headline keeps it; the notes do not repeat it (report.md, report.html, console)."""
    import io
    import json

    from rich.console import Console

    from robustness.commands.analyze import analyze_table
    from robustness.core.table import write_parquet

    sparse = sparse_of(full, share=0.35, seed=1)
    design = {"fraction": 0.6, "n_asked": 40, "n_grid": 114, "seed": 0}
    path = write_parquet(sparse, tmp_path / "table.parquet", {"budget": design})
    buf = io.StringIO()
    result, paths = analyze_table(
        path, tmp_path / "out", console=Console(file=buf, width=400), n_boot=20
    )
    sentence = "Budgeted study: 60% of the prompt grid"
    assert result.budget_headline.startswith(sentence)
    assert sentence not in " ".join(result.notes)
    md = paths["md"].read_text()
    assert md.count(sentence) == 1 and sentence in md.split("## ", 2)[1]  # in the headline
    assert paths["html"].read_text().count(sentence) == 1
    assert buf.getvalue().count(sentence) == 1
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["budget_headline"] == result.budget_headline
