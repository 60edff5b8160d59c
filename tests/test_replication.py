"""Replicating Kamal et al. (2026): the preset's shape, both models, the paper beside the run."""

from __future__ import annotations

import math
import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
from conftest import shared_paths

import robustness as rb
from analyses.synthetic import synthetic_table
from robustness.analysis.pipeline import analyze
from robustness.answers import answer_rows, rows_to_table
from robustness.report import write_report
from robustness.report.paper import load_paper
from robustness.run import study_items, study_variants
from robustness.runners.base import OptionScores

PRESET = Path(__file__).resolve().parents[1] / "examples" / "kamal2026.toml"


class PositionRunner:
    """A respondent that picks a displayed position by a fixed rule, as small models do:
    the first option, unless the prompt's length says otherwise. Its answers therefore
    move with the option order, on every scale."""

    backend, model_id = "fake", "position"

    def score_options(self, prompts, labels, *, on_batch=None):
        out = []
        for prompt, labs in zip(prompts, labels, strict=True):
            text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
            pos = (len(text) // 7) % 2
            probs = [0.2 / (len(labs) - 1)] * len(labs)
            probs[pos] = 0.8
            out.append(
                OptionScores(tuple(probs), tuple(math.log(p) for p in probs), 0.8, labs[pos], 1.0)
            )
        return out


@pytest.mark.shared_data
def test_the_preset_measures_option_order_on_subjective_items(tmp_path):
    shared_paths()
    config = rb.load_study(PRESET)
    assert config.instruction and config.n_variants == 5 and len(config.models) == 2
    assert {m.mode for m in config.models} == {"choice", "generate"}
    small = config.__class__(**{**config.__dict__, "items_per_dataset": 2, "n_variants": 3})
    items = study_items(small)
    assert {i.dataset for i in items} == {
        "mmlu",
        "arc_challenge",
        "culturalbench",
        "political_compass",
        "valuebench",
        "wvs",
    }
    variants = study_variants(small, items)
    assert all(
        v.spec.instruction == config.instruction for v in variants if v.category == "original"
    )
    rows = answer_rows(PositionRunner(), variants, small.models[0], study="kamal2026")
    table = rows_to_table(rows)
    res = analyze(table, tmp_path, n_boot=50, quiet=True, min_items=2)
    items_frame = res.agreement_items
    subj = items_frame[
        (items_frame["dataset_type"] == "subjective") & (items_frame["category"] == "option_order")
    ]
    assert len(subj) == 6 and (subj["n_valid"] >= 2).all() and subj["c_i"].notna().all()
    objective = items_frame[items_frame["dataset_type"] == "objective"]
    assert objective["dataset"].nunique() == 3  # MMLU, ARC-Challenge, CulturalBench
    contrasts = res.contrasts.set_index("category")
    assert "option_order" in contrasts.index
    row = contrasts.loc["option_order"]
    assert row["reason"] == "" and math.isfinite(row["difference"])

    assert len(res.wald_dataset_type2) > 0
    # 2 items per dataset: without a cluster the dataset model loses a coefficient, so the
    # bias-reduced sandwich does not exist and that model says it fell back
    assert any("does not exist" in n and "plain sandwich" in n for n in res.notes)
    # the paper's six datasets (Table 3): five directions.  Type III, because with 12
    # clusters the Type II test of 'dataset' is withheld (its robust covariance is zero).
    wald = res.wald_dataset_type3.set_index("term")
    assert wald.at["dataset", "dof"] == 5


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    table = synthetic_table(models=2, n_items=10, n_variants=3, seed=4)
    res = analyze(table, out, n_boot=100, quiet=True)
    paths = write_report(res, out, {}, compare="kamal2026")
    return out, res, paths


def test_both_models_are_in_every_analysis_of_several_datasets(compared):
    out, _res, paths = compared
    for name in ("wald_type2", "wald_type3", "wald_dataset_type2", "wald_dataset_type3"):
        frame = pd.read_csv(out / "tables" / f"{name}.csv")
        # the default inference, bias-reduced sandwich with F(q, G - p), adds F and its df
        # (a model with no fewer coefficients than clusters falls back to chi-square)
        cols = list(frame.columns)
        assert cols[:4] == ["term", "dof", "chi2", "p_value"] and cols[4:] in (
            [],
            ["F", "df_denom"],
        )
        assert len(frame)
    terms = pd.read_csv(out / "tables" / "wald_dataset_type2.csv")["term"].tolist()
    assert terms == ["model", "dataset", "category", "dataset:category", "model:category"]
    md = paths["md"].read_text()
    assert md.index("Type model") < md.index("Dataset model, Kamal et al. Table 3")
    one = analyze(
        synthetic_table(models=1, n_items=6, seed=2).query("dataset == 'mc_science'"),
        out / "one",
        n_boot=50,
        quiet=True,
    )
    assert one.dataset_fit is None and one.wald_dataset_type2.empty
    assert any("needs two or more datasets" in n for n in one.notes)


def test_every_published_figure_appears_once_beside_the_run(compared):
    out, res, paths = compared
    paper = load_paper("kamal2026")
    table = pd.read_csv(out / "tables" / "paper_comparison.csv")
    assert len(table) == len(paper.figures) == 12
    html = unescape(paths["html"].read_text())
    md = paths["md"].read_text().replace("\\", "")
    items = res.agreement_items
    pert = items[(items["category"] != "original") & items["c_i"].notna()]
    for fig in paper.figures:
        published = f"{fig['value']:.3f}"
        row = table[table["figure"] == fig["what"]]
        assert len(row) == 1
        run = row["run"].iloc[0]
        if fig["kind"] == "category_mean":
            expect = pert.loc[pert["category"] == fig["category"], "c_i"].mean()
            assert run == pytest.approx(expect)
        for text, cell in ((html, f"<td>{fig['what']}</td>"), (md, f"| {fig['what']} |")):
            lines = [ln for ln in re.split(r"\n|</tr>", text) if cell in ln]
            assert len(lines) == 1, (fig["what"], lines)
            assert published in lines[0] and f"{run:.3f}" in lines[0]
    w2 = res.wald_dataset_type2.set_index("term")
    chi2 = table.set_index("figure").loc[paper.figures[-1]["what"], "run"]
    assert chi2 == pytest.approx(w2.at["dataset:category", "chi2"])


def test_an_unknown_paper_is_one_clear_error():
    with pytest.raises(rb.RobustnessError, match="unknown study 'kamal2025'"):
        load_paper("kamal2025")
