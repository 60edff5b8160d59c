"""What a reviewer asks of the report (issue 24, "The report", points 1-6).

Each test fails on the report as it was before: no main effect in the headline, no word on a
model at chance, no floor of C_i, a note blaming fewer clusters than coefficients, Table 2
with its intervals in separate columns, PSS intervals outside [0, 1], and a paper comparison
without intervals, design or comparability.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import analyses as an
from analyses.synthetic import synthetic_table
from robustness.analysis.pipeline import analyze
from robustness.report import headline, write_report
from robustness.report.document import floor_text, table2
from robustness.report.figures import wilson
from robustness.report.headline import guessing_lines
from robustness.report.paper import NOT_STORED, compare, design


@pytest.fixture(scope="module")
def one_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("one")
    table = synthetic_table(models=1, n_items=12, seed=2)
    return table, analyze(table, out, n_boot=100, quiet=True), out


def test_the_headline_gives_the_type_main_effect_before_the_interactions(one_model):
    _, result, _ = one_model
    lines = headline(result).lines()
    row = result.wald_type2.set_index("term").loc["dataset_type"]
    (main,) = [i for i, x in enumerate(lines) if x.startswith("dataset_type main effect")]
    (inter,) = [i for i, x in enumerate(lines) if x.startswith("dataset_type x category")]
    assert main < inter
    assert f"{row['chi2']:.2f} on {int(row['dof'])} df" in lines[main]


@pytest.mark.parametrize(("k", "n"), [(0, 10), (1, 12), (2, 24), (12, 24), (30, 30), (7, 51)])
def test_the_exact_interval_is_scipys(k, n):
    from analyses.chance import clopper_pearson

    lo, hi = clopper_pearson(k, n)
    ref = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert lo == pytest.approx(ref.low, abs=1e-12) and hi == pytest.approx(ref.high, abs=1e-12)


def _always_b(n_items: int, gold: list[int], k: int = 4) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": "m",
            "dataset": "facts",
            "dataset_type": "objective",
            "item_id": [f"q{i}" for i in range(n_items)],
            "category": "original",
            "variant_id": "original/0",
            "answer": 1,
            "label": "B",
            "valid": True,
            "gold": gold,
            "n_options": k,
        }
    )


def test_accuracy_vs_chance_names_a_model_that_is_guessing():
    t = _always_b(12, [1] + [0] * 11)
    r = an.accuracy_vs_chance(t).iloc[0]
    assert (r["n_items"], r["n_correct"]) == (12, 1)
    assert r["chance"] == 0.25 and r["verdict"] == "at chance"
    assert r["p_value"] == pytest.approx(stats.binomtest(1, 12, 0.25).pvalue)
    (line,) = guessing_lines(an.accuracy_vs_chance(t), an.label_concentration(t))
    assert "label or position bias, not stability of belief" in line
    assert "B on 12 of 12 objective items" in line
    good = an.accuracy_vs_chance(_always_b(12, [1] * 12)).iloc[0]
    assert good["verdict"] == "above chance"
    assert guessing_lines(an.accuracy_vs_chance(_always_b(12, [1] * 12)), pd.DataFrame()) == []


def test_the_method_states_the_floor_of_c_i(one_model):
    _, result, _ = one_model
    text = floor_text(result.agreement_items)
    sets = result.agreement_items.query("category != 'original' and c_i.notna()")
    n = int(sets["n_valid"].max())
    assert f"floor {1 / n:.3f}" in text
    assert (sets["c_i"] >= 1 / sets["n_valid"] - 1e-12).all()  # the floor holds


def test_covariance_rank_says_what_is_true():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(48, 32))
    scores[:, [5, 9]] = 0.0  # two coefficients no cluster gives a score to
    v = pd.DataFrame(scores.T @ scores, index=[f"b{j}" for j in range(32)])
    v.columns = v.index
    r = an.covariance_rank(v, n_clusters=48).iloc[0]
    assert r["rank"] == np.linalg.matrix_rank(scores) == 30
    assert r["null_coefficients"] == "b5; b9"
    assert "fewer clusters" not in r["reason"] and "48 clusters for 32" in r["reason"]
    few = an.covariance_rank(v.iloc[:20, :20] * 0 + np.eye(20), n_clusters=10).iloc[0]
    assert few["rank"] == 20 and few["reason"] == ""


def test_table2_has_intervals_in_one_cell_and_counts_once(one_model):
    _, result, _ = one_model
    shown, said = table2(result.agreement_by_model_type_category)
    raw = result.agreement_by_model_type_category.iloc[0]
    assert "model" not in shown.columns  # one model
    assert not any(c.startswith("n_items") or c.endswith("ci_low") for c in shown.columns)
    assert re.fullmatch(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", shown["objective"].iloc[0])
    assert shown["objective"].iloc[0].startswith(f"{raw['objective']:.3f} [")
    assert f"{int(raw['n_items_objective'])} objective" in said


def test_no_pooled_table_with_one_model(one_model):
    _, result, out = one_model
    md = write_report(result, out, {})["md"].read_text()
    assert "models pooled" not in md


def test_the_pss_interval_is_wilsons_and_stays_in_0_1():
    from statsmodels.stats.proportion import proportion_confint

    for k, n in [(0, 12), (12, 12), (3, 20), (1, 2)]:
        lo, hi = wilson(np.array([k / n]), np.array([n]))
        ref = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert lo[0] == pytest.approx(ref[0], abs=2e-3) and hi[0] == pytest.approx(ref[1], abs=2e-3)
        assert 0 <= lo[0] <= k / n <= hi[0] <= 1


def test_compare_gives_intervals_design_and_comparability(one_model):
    _, result, _ = one_model
    paper, frame = compare(result)
    values = frame.dropna(subset=["run_ci_low"])
    assert len(values) and (values["run_ci_low"] <= values["run"] + 1e-12).all()
    assert (values["run"] <= values["run_ci_high"] + 1e-12).all()
    wald = frame[frame["figure"].str.contains("Wald")]
    assert wald["comparable"].str.startswith("not comparable").all()
    plan = design(result, paper)
    assert set(plan["paper"]) == {NOT_STORED}  # the stored source has no design: nothing made up
    assert "models" in set(plan["what"]) and plan.set_index("what").loc["models", "run"] == "1"


CHECK = """<script>
window.addEventListener('load', () => {
  const out = document.createElement('pre');
  out.id = 'width-check';
  out.textContent = JSON.stringify([document.documentElement.scrollWidth, window.innerWidth]);
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.chromium
def test_the_report_reads_at_1400_px_without_sideways_scrolling(one_model, tmp_path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("Chromium is not installed (make sysdeps installs Debian's chromium as root)")
    _, result, out = one_model
    html = write_report(result, out, {})["html"]
    probe = tmp_path / "probe.html"
    probe.write_text(html.read_text().replace("</body>", CHECK + "</body>"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    done = subprocess.run(
        [
            exe,
            *flags,
            f"--user-data-dir={tmp_path / 'p'}",
            "--window-size=1400,3000",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r'<pre id="width-check">(.*?)</pre>', done.stdout)
    assert found, done.stdout[-500:]
    scroll, inner = json.loads(found.group(1))
    assert inner == 1400 and scroll <= inner, (scroll, inner)
