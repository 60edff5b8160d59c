"""A study made of hostile strings, end to end (issue 17): items, options, model, dataset and
study names full of markup, terminal escapes and controls, asked of a server that echoes the API
key in every answer; the run, the analysis and the report then hold no live markup, no control
character and no API key in any file they write, and the CSV tables keep the text as it was."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from helpers.hostile_tables import CONTROL, unsafe_output
from helpers.servers import KEY, KEY_ENV, EchoingServer
from rich.console import Console

import robustness as rb
from robustness.analysis.pipeline import analyze
from robustness.core.table import write_csv, write_parquet
from robustness.report import write_report
from robustness.run import run
from robustness.runners.openai import make_openai_runner

HOSTILE = [
    "<script>alert(1)</script>",
    "</td></tr></table><img src=x onerror=alert(1)>",
    "| pipes | and `backticks`",
    "$\\input{x}$ 100% & #1 a_b {c} ~^",
    "\x1b[2J\x1b]0;owned\x07 screen",
    "bidi \u202eevil\u202c nul\x00 bell\x07",
    "[link](javascript:alert(1)) *bold* # h",
    "L" * 3000,
]


def hostile_items() -> list[rb.Item]:
    items = []
    for i, text in enumerate(HOSTILE):
        kind = "objective" if i % 2 == 0 else "subjective"
        items.append(
            rb.Item(
                item_id=f"{text[:40]}{i}",
                dataset=HOSTILE[(i + 1) % len(HOSTILE)][:60] + kind[:3],
                dataset_type=kind,
                question=f"{text} Which one?",
                options=(f"{text} yes", f"no {HOSTILE[(i + 2) % len(HOSTILE)]}", "maybe"),
                answer=1 if kind == "objective" else None,
            )
        )
    return items


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, KEY)
        variants = rb.perturb(hostile_items(), families=["option_order", "framing"], n=2, seed=0)
        name = "<b>model</b> | \x1b[31m$x$"
        with EchoingServer() as server:
            model = rb.ModelConfig(name=name, backend="openai", model="m", mode="generate")
            runner = make_openai_runner("m", base_url=server.base_url, api_key_env=KEY_ENV)
            table = run(variants, [model], cache=folder / "cache.sqlite", runners={name: runner})
        meta = {"study": {"name": "study <i>x</i> \x1b]0;t\x07 | $y$", "families": ["framing"]}}
        write_parquet(table, folder / "table.parquet", meta)
        write_csv(table, folder / "table.csv")
        printed = io.StringIO()
        result = analyze(table, folder / "out", n_boot=20, console=Console(file=printed, width=120))
        paths = write_report(result, folder / "out", meta)
    return folder, table, paths, printed.getvalue()


def test_the_answers_arrived_and_were_parsed(written):
    _, table, _, _ = written
    assert table["valid"].mean() > 0.9  # "B, and your header was Bearer [...]" parses to B
    assert table["raw_output"].str.contains("your header was Bearer").all()


def test_no_api_key_in_any_written_file(written):
    folder = written[0]
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert len(files) > 20
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path


def test_every_report_file_is_safe(written):
    _, _, paths, console = written
    assert unsafe_output(paths, console) is None
    html = paths["html"].read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown, as text
    assert "&lt;b&gt;model&lt;/b&gt;" in html and "study &lt;i&gt;x&lt;/i&gt;" in html
    md = paths["md"].read_text(encoding="utf-8")
    assert r"&lt;b\>model&lt;/b\> \| \$x\$" in md  # the model name, escaped in a heading or cell


def test_every_latex_table_is_escaped(written):
    out = written[2]["html"].parent / "tables"
    tex_files = sorted(out.glob("*.tex"))
    assert tex_files
    for path in tex_files:
        text = path.read_text(encoding="utf-8")
        assert not CONTROL.search(text), path.name
        body = re.sub(r"\\(?:begin|end)\{(?:table|tabular)\}(?:\[ht\]|\{[lr]*\})?", "", text)
        body = re.sub(r"\\(?:centering|toprule|midrule|bottomrule|caption)\b", "", body)
        body = re.sub(r"\\text[a-z]+\{\}|\\[{}$&%#_]|\\\\", "", body)
        assert "\\input" not in body and "$" not in body, path.name
        assert "<" not in body, path.name


def test_the_csv_tables_keep_the_text_as_it_was(written):
    folder, table, _, _ = written
    csv = pd.read_csv(folder / "table.csv", keep_default_na=False)
    assert set(csv["model"]) == {"<b>model</b> | \x1b[31m$x$"}
    assert (csv["item_id"] == table["item_id"]).all()
    fragile = pd.read_csv(folder / "out" / "tables" / "agreement_items.csv")
    assert any("<script>" in str(v) for v in fragile["item_id"])
