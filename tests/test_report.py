"""The report: files, escaping of untrusted text, LaTeX/Markdown tables, and a real browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analyses.synthetic import synthetic_table
from robustness.analysis.pipeline import analyze
from robustness.report import headline, to_latex, to_markdown, write_report

EVIL = "<script>alert('x')</script> & $x_1$ | 100%\x1b[2J\x1b]0;title\x07"
FIGURES = (
    "dataset_by_category",
    "type_by_category",
    "agreement_heatmap",
    "pss_distribution",
    "format_accuracy",
    "confidence_vs_pss",
    "model_ranks",  # two models: the bump chart of rankings across variants (issue 15)
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    table = synthetic_table(models=2, n_items=10, seed=1)
    table["prompt"] = "Question: " + EVIL + "\nA. yes\nB. no\nAnswer:"
    table.loc[table["item_id"] == table["item_id"].iloc[0], "raw_output"] = EVIL
    result = analyze(table, out, n_boot=100, quiet=True, families=["framing"])
    meta = {
        "study": {
            "name": "unit <b>test</b>",
            "families": ["framing"],
            "n_variants": 5,
            "seed": 0,
            "shots": 0,
            "models": [
                {
                    "name": "model_1",
                    "backend": "hf",
                    "model": "embedded",
                    "mode": "choice",
                    "dtype": "float32",
                    "batch_size": 8,
                }
            ],
        },
        "models": {
            "model_1": {
                "runner": {"dtype": "float32", "batch_size": 8},
                "chat": True,
                "noise_floor": {"flips": 1, "k": 16, "max_abs_prob_diff": 0.002},
            }
        },
    }
    paths = write_report(result, out, meta, compare="kamal2026")
    return out, paths, result


def test_every_part_is_written(report):
    out, paths, _ = report
    for name in FIGURES:
        assert paths[name].exists() and paths[name].stat().st_size > 5000
    for name in (
        "agreement_by_type_category",
        "wald_type2",
        "wald_type3",
        "marginal_means",
        "contrasts",
        "separation",
        "pss",
        "agreement_items",
    ):
        assert (out / "tables" / f"{name}.csv").exists()
        assert (out / "tables" / f"{name}.tex").read_text().startswith(r"\begin{table}")
    html = paths["html"].read_text()
    assert html.count("data:image/png;base64,") == len(FIGURES) and "src='figures/" not in html
    md = paths["md"].read_text()
    assert md.count("](figures/") == len(FIGURES) and "## Most fragile items" in md
    for name in ("wald", "wald_dataset", "paper_comparison"):
        assert (out / "tables" / f"{name}.tex").exists()


def test_method_section_comes_from_the_study_config(report):
    html = report[1]["html"].read_text()
    assert "Model model_1: backend hf, model embedded, mode choice, dtype float32" in html
    assert "Noise floor: 1 of 16 sampled prompts changed answer" in html
    assert "unit &lt;b&gt;test&lt;/b&gt;" in html


def test_untrusted_text_is_escaped_everywhere(report):
    out, paths, _ = report
    html = paths["html"].read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(" in html
    md = paths["md"].read_text()
    assert "<script>" not in md
    tex = (out / "tables" / "agreement_items.tex").read_text()
    assert "\\_" in tex  # dataset names such as mc_science
    for text in (html, md, tex, (out / "tables" / "fragile_items.tex").read_text()):
        assert "\x1b" not in text and "\x07" not in text  # terminal escapes stripped


def test_headline_numbers_match_the_tables(report):
    _, _, result = report
    h = headline(result)
    per_model = result.agreement_by_model_type_category
    all_rows = per_model[per_model["category"] == "all"].set_index("model")
    assert [m.model for m in h.models] == list(all_rows.index)
    for m in h.models:
        assert m.objective == pytest.approx(all_rows.at[m.model, "objective"])
        assert m.objective_ci[0] <= m.objective <= m.objective_ci[1]
    items = result.agreement_items
    pert = items[(items["category"] != "original") & items["c_i"].notna()]
    one = pert[pert["model"] == h.models[0].model]
    assert h.models[0].subjective == pytest.approx(
        one.loc[one.dataset_type == "subjective", "c_i"].mean()
    )
    w2 = result.wald_type2.set_index("term")
    assert h.interaction[0] == pytest.approx(w2.loc["dataset_type:category", "chi2"])
    assert h.least_stable == pert.groupby("category")["c_i"].mean().idxmin()
    text = "\n".join(h.lines())
    assert "model_1: mean agreement objective" in text and "shared families" in text


def test_latex_and_markdown_writers_escape():
    df = pd.DataFrame({"term": ["a_b & c", "50%"], "chi2": [1.23456, np.nan]})
    tex = to_latex(df, caption="Wald $\\chi^2$")
    assert r"a\_b \& c & 1.235 \\" in tex and r"50\% & - \\" in tex and r"\toprule" in tex
    assert r"\caption{Wald \$\textbackslash{}chi\textasciicircum{}2\$}" in tex
    md = to_markdown(
        pd.DataFrame(
            {"x": ["a|b"], "y": ["<img src=x onerror=alert(1)>"], "z": ["[x](javascript:y)"]}
        )
    )
    row = r"| a\|b | &lt;img src=x onerror=alert(1)\> | \[x\](javascript:y) |"
    assert md.splitlines()[2] == row


CHECK = """<script>
window.addEventListener('load', () => {
  const imgs = [...document.images];
  const out = document.createElement('pre');
  out.id = 'image-check';
  out.textContent = JSON.stringify(imgs.map(i => [i.complete, i.naturalWidth]));
  document.body.appendChild(out);
});
</script>"""


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("Chromium is not installed (make test installs Debian's chromium as root)")
    return exe


def browser(exe: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        f"--user-data-dir={profile}",
    ]
    return subprocess.run([exe, *flags, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.chromium
def test_report_renders_in_headless_chromium_with_every_image(report, tmp_path):
    exe = chromium()
    html = report[1]["html"]
    probe = tmp_path / "probe.html"
    probe.write_text(html.read_text().replace("</body>", CHECK + "</body>"))
    dom = browser(
        exe, tmp_path / "p1", "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()
    ).stdout
    found = re.search(r'<pre id="image-check">(.*?)</pre>', dom)
    assert found, dom[-500:]
    states = json.loads(found.group(1).replace("&quot;", '"'))
    assert len(states) == len(FIGURES) and all(ok and width > 100 for ok, width in states), states
    shot = tmp_path / "shot.png"
    browser(exe, tmp_path / "p2", "--window-size=1200,12000", f"--screenshot={shot}", html.as_uri())
    from matplotlib.image import imread

    pixels = imread(shot)[..., :3]
    assert pixels.shape[0] >= 10000 and pixels.shape[1] >= 1100
    non_white = (pixels.mean(axis=2) < 0.95).mean()
    colourful = (pixels.std(axis=2) > 0.1).mean()
    assert non_white > 0.05 and colourful > 0.01, (non_white, colourful)


def test_a_table_without_any_agreement_still_gets_a_report(tmp_path):
    """One variant per family: every prompt set has a single answer, so nothing is defined."""
    table = synthetic_table(models=1, n_items=4, n_variants=1, seed=3)
    result = analyze(table, tmp_path, n_boot=50, quiet=True)
    paths = write_report(result, tmp_path, {})
    md = paths["md"].read_text()
    assert "agreement is not defined on this table" in md
    assert r"Figure 'type\_by\_category' is not drawn: no prompt set has two valid answers" in md
    assert paths["html"].exists() and "agreement_heatmap" not in paths
