"""The report a reviewer can trust (issue 16), on the situation a new user met.

Two models (a generate-mode one with many invalid subjective answers, a choice-mode one),
a family only objective items have, separated cells (one model always agrees under one
family), and thin data for the correlations. Each point of the issue is checked in the
HTML and Markdown reports and in the tables.
"""

from __future__ import annotations

import re
from html import unescape

import numpy as np
import pandas as pd
import pytest

from analyses.synthetic import synthetic_table
from robustness.analysis.pipeline import analyze
from robustness.core.names import FAMILY_ORDER
from robustness.report import figures, headline, write_report


def reviewer_table() -> pd.DataFrame:
    t = synthetic_table(models=["gen", "choice"], n_items=8, n_variants=3, seed=5, invalid_rate=0.0)
    t["mode"] = np.where(t["model"] == "gen", "generate", "choice")
    # subjective items have no option-order variant at all
    t = t[~((t["dataset_type"] == "subjective") & (t["category"] == "option_order"))]
    t = t.reset_index(drop=True)
    # the generate model: 65% of subjective rows invalid ("B. Agree" read as ambiguous)
    rng = np.random.default_rng(0)
    bad = ((t["model"] == "gen") & (t["dataset_type"] == "subjective")).to_numpy() & (
        rng.random(len(t)) < 0.65
    )
    t.loc[bad, ["answer", "label"]] = None
    t.loc[bad, "valid"] = False
    t.loc[bad, "invalid_reason"] = "ambiguous"
    t.loc[bad, "correct"] = None
    # separation: the choice model never changes its answer under framing
    sep = ((t["model"] == "choice") & (t["category"] == "framing")).to_numpy()
    first = t[sep].groupby(["dataset", "item_id"])["answer"].transform("first")
    t.loc[sep, "answer"] = first.to_numpy()
    t.loc[sep, "valid"] = True
    t.loc[sep, "invalid_reason"] = None
    gold = t.loc[sep, "gold"]
    t.loc[sep, "correct"] = np.where(gold.isna(), None, t.loc[sep, "answer"] == gold)
    return t


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    out = tmp_path_factory.mktemp("review")
    result = analyze(reviewer_table(), out, n_boot=200, quiet=True, families=list(FAMILY_ORDER))
    paths = write_report(result, out, {})
    return out, result, paths["html"].read_text(), paths["md"].read_text()


def test_headline_is_like_for_like_per_model_with_intervals(reviewed):
    _, result, html, md = reviewed
    h = headline(result)
    assert [m.model for m in h.models] == ["choice", "gen"]
    assert "option_order" not in h.families and h.only["objective"] == ["option_order"]
    for m in h.models:
        assert m.objective_ci[0] < m.objective < m.objective_ci[1]
        assert m.n_objective == 16 and m.n_subjective > 0
    per_model = result.agreement_by_model_type_category
    for model, g in per_model.groupby("model"):
        items = result.agreement_items
        mine = items[
            (items["model"] == model) & items["c_i"].notna() & items["category"].isin(h.families)
        ]
        expect = mine.loc[mine["dataset_type"] == "objective", "c_i"].mean()
        assert g.set_index("category").at["all", "objective"] == pytest.approx(expect)
    for text in (html, md):
        assert "only objective items have: option" in text.replace("\\_", "_")
        assert "choice: mean agreement objective" in text


def test_per_model_tables_count_items(reviewed):
    out, _result, _, _ = reviewed
    t2 = pd.read_csv(out / "tables" / "agreement_by_model_type_category.csv")
    assert set(t2["model"]) == {"gen", "choice"}
    assert (t2["n_items_objective"] <= 16).all()  # items, not model-by-item sets
    pooled = pd.read_csv(out / "tables" / "agreement_by_type_category.csv")
    assert set(pooled["model"]) == {"pooled"}
    by_model = pd.read_csv(out / "tables" / "contrasts_by_model.csv")
    assert set(by_model["model"]) == {"gen", "choice"}


def test_invalid_answers_in_plain_view(reviewed):
    out, result, html, _md = reviewed
    rates = pd.read_csv(out / "tables" / "invalid_rates.csv")
    gen = rates[(rates["model"] == "gen") & (rates["category"] == "all")].set_index("dataset_type")
    assert gen.at["subjective", "invalid_rate"] > 0.5 and gen.at["objective", "invalid_rate"] == 0
    assert gen.at["subjective", "ambiguous"] == gen.at["subjective", "n_invalid"]
    assert any("gen" in w for w in result.invalid_warnings)
    assert "warning: model 'gen'" in unescape(html)
    sens = pd.read_csv(out / "tables" / "contrasts_invalid_as_disagreement.csv")
    assert len(sens) == len(FAMILY_ORDER)


def test_every_family_appears_with_a_value_or_a_reason(reviewed):
    out, _, html, md = reviewed
    c = pd.read_csv(out / "tables" / "contrasts.csv", keep_default_na=False)
    assert c["category"].tolist() == list(FAMILY_ORDER)
    row = c.set_index("category").loc["option_order"]
    assert row["reason"] == "only objective items have this family"
    missing = c[c["difference"] == ""]
    assert (missing["reason"] != "").all()
    for text in (html, md):
        assert "Flip rates against the original prompt" in text
        assert "POSIX" in text


def test_thin_cells_are_not_computed_and_warnings_become_notes(reviewed, capsys):
    out, _result, _, _ = reviewed
    conf = pd.read_csv(out / "tables" / "confidence_sensitivity.csv")
    assert set(conf["model"]) == {"gen", "choice"}
    assert (conf["n_items"] >= 10).all() or conf["note"].str.startswith("not computed").any()
    small = synthetic_table(models=1, n_items=2, n_variants=2, seed=1)
    res = analyze(small, out / "small", n_boot=50, quiet=True)
    conf = res.confidence_sensitivity
    assert conf["r"].isna().all() and conf["note"].str.startswith("not computed: 8 items").all()
    assert "RuntimeWarning" not in capsys.readouterr().err


def md_tables(md: str) -> list[tuple[list[str], list[list[str]]]]:
    """(header, rows) of every Markdown table, cells unescaped of backslashes and entities."""
    out, lines = [], md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---") and i > 0:
            head = [
                unescape(c.strip().replace("\\", "")) for c in lines[i - 1].strip("|").split("|")
            ]
            rows = []
            for row in lines[i + 1 :]:
                if not row.startswith("|"):
                    break
                rows.append(
                    [unescape(c.strip().replace("\\", "")) for c in row.strip("|").split("|")]
                )
            out.append((head, rows))
    return out


def test_numbers_are_printed_as_a_paper_prints_them(reviewed):
    _, _, _, md = reviewed
    p_cells = dof_cells = 0
    for head, rows in md_tables(md):
        for j, name in enumerate(head):
            for row in rows:
                value = row[j] if j < len(row) else "-"
                if name.startswith("p_") and value != "-":
                    p_cells += 1
                    assert value != "0.000" and (
                        value.startswith("<") or "e-" in value or float(value) >= 0.001
                    ), (name, value)
                if name.startswith("df_denom") and value != "-":  # HTZ's may be fractional
                    assert re.fullmatch(r"\d+(\.\d)?", value), (name, value)
                elif name.split("_")[0] in ("dof", "df") and value != "-":
                    dof_cells += 1
                    assert value.isdigit(), (name, value)
    assert p_cells > 20 and dof_cells > 5


def test_figures_have_no_clipped_text_and_integer_format_ticks(reviewed):
    _, result, _, _ = reviewed
    tabs = result.named_tables()
    drawn = [
        figures.agreement_heatmap(tabs["agreement_items"]),
        figures.type_by_category(tabs["agreement_by_model_type_category"]),
        figures.dataset_by_category(tabs["agreement_by_dataset_category"]),
        figures.pss_distribution(tabs["pss_items"]),
        figures.format_accuracy_plot(tabs["format_accuracy"]),
    ]
    for fig in drawn:
        assert figures.clipped_text(fig) == []
    ticks = drawn[4].axes[0].get_xticks()
    assert np.allclose(ticks, np.round(ticks))


def test_each_model_is_compared_on_its_own_shared_families(tmp_path):
    """Review findings: a model lacking a family on one type lists its own families; a model
    with no comparison says so; the pooled 'all' row uses the families every model has."""
    t = synthetic_table(models=2, n_items=6, n_variants=3, seed=1, invalid_rate=0.0)
    drop = (
        (t["model"] == "model_1")
        & (t["dataset_type"] == "subjective")
        & (t["category"] == "option_order")
        & (t["variant_id"] != "option_order/0")
    ).to_numpy()
    t.loc[drop, ["answer", "correct"]] = None
    t.loc[drop, "valid"] = False
    t.loc[drop, "invalid_reason"] = "no_label"
    res = analyze(t, tmp_path / "a", n_boot=50, quiet=True)
    h = headline(res)
    lines = {m.model: m for m in h.models}
    assert "option_order" not in lines["model_1"].families
    assert "option_order" in lines["model_2"].families
    assert "option_order" not in h.families  # the families every model has
    text = "\n".join(h.lines())
    assert "over 8 shared families (" in text  # model_2 has more: it names its own list
    pooled = res.agreement_by_type_category.set_index("category")
    per = res.agreement_items
    both = per[per["category"].isin(h.families) & per["c_i"].notna()]
    expect = both.loc[both["dataset_type"] == "subjective", "c_i"].mean()
    assert pooled.at["all", "subjective"] == pytest.approx(expect)
    gone = t.copy()
    gone.loc[gone["model"] == "model_2", ["answer", "correct"]] = None
    gone.loc[gone["model"] == "model_2", "valid"] = False
    gone.loc[gone["model"] == "model_2", "invalid_reason"] = "no_label"
    res = analyze(gone, tmp_path / "b", n_boot=50, quiet=True)
    assert "model_2: no like-for-like comparison" in "\n".join(headline(res).lines())


def test_items_are_dataset_and_id_and_missing_values_print_as_a_dash(tmp_path):
    t = synthetic_table(models=1, n_items=12, n_variants=2, seed=2)
    t["item_id"] = t["item_id"].str.replace(r"^.*-", "q", regex=True)  # ids repeat
    res = analyze(t, tmp_path, n_boot=50, quiet=True, min_items=20)
    c = res.contrasts.set_index("category")
    # 24 items per type, 12 ids repeated in two datasets: counts above 12 are by item
    assert (c["n_items_objective"] > 20).all() and (c["n_items_subjective"] > 20).all()
    assert (res.flip_summary["n_items"] > 20).all()
    from robustness.analysis.number_text import fmt, fmt_p

    assert fmt(pd.NA) == "-" and fmt_p(pd.NA) == "-" and fmt_p(0.0) == "< 1e-300"
    paths = write_report(res, tmp_path, {})
    assert "&lt;NA&gt;" not in paths["html"].read_text()
    assert "<NA>" not in (tmp_path / "tables" / "fragile_items.tex").read_text()


def test_latex_cells_that_start_with_a_bracket_are_guarded():
    from robustness.report.render import to_latex

    tex = to_latex(pd.DataFrame({"model": ["[1cm] x", "*y"], "p_value": [0.0004, 0.5]}))
    assert r"{}[1cm] x & \textless{} 0.001 \\" in tex and r"{}*y & 0.500 \\" in tex
