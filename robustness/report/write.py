"""Write the report: ``report.html`` (self-contained), ``report.md``, figures and LaTeX tables.

:func:`write_report` takes the :class:`robustness.analysis.pipeline.AnalysisResult` (never the long
table: every number, the fragile items' variants included, is in the result), the
table's metadata (the study configuration, when the table is ours) and optionally a
published study to compare with (``compare="kamal2026"``), and writes under the output
folder:

- ``report.html``: opens offline, every figure embedded as a PNG data URI;
- ``report.md`` with the figures linked from ``figures/``;
- ``figures/*.png``;
- a LaTeX (booktabs) copy of every table in ``tables/`` (the CSVs come from the analysis),
  plus ``wald.csv``/``wald.tex`` and ``wald_dataset.csv``/``.tex`` (Type II beside III)
  and, with ``compare``, ``paper_comparison.csv``/``.tex``.

Every string that comes from items, prompts, model outputs or names is stripped of
control characters and escaped for the format it is written in, by
:mod:`robustness.core.text_safety` only.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from robustness.core.text_safety import escape_html, escape_markdown, plain_text
from robustness.report import figures
from robustness.report.document import Block, Section, build
from robustness.report.headline import headline
from robustness.report.render import cell, to_html, to_latex, to_markdown

if TYPE_CHECKING:
    from robustness.analysis.result import AnalysisResult

__all__ = ["write_report"]

FRAGILE_SHOWN = ("category", "variant_id", "label", "answer", "invalid_reason", "raw_output")
#: Longest untrusted text in a paragraph, a list item, a heading or a prompt.
TEXT_CHARS = 2000


def _h(text: Any) -> str:
    return escape_html(text, TEXT_CHARS)


def _md(text: Any, *, block: bool = False) -> str:
    return escape_markdown(text, TEXT_CHARS, block=block)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222}table{border-collapse:collapse;margin:0.6em 0 1.4em;font-size:0.88em}
td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:right;vertical-align:top}
th{border-bottom:2px solid #444;overflow-wrap:anywhere}table{max-width:100%}
td{overflow-wrap:anywhere}td:first-child,th:first-child{text-align:left}
figure{margin:1.2em 0}figure img{max-width:100%}figcaption{font-size:0.9em;color:#555}
pre{white-space:pre-wrap;text-align:left;font-size:0.85em;margin:0}.note{color:#8a5a00}
details summary{cursor:pointer;color:#1f4e79}"""


def _figures(
    result: AnalysisResult, folder: Path, skipped: list[str]
) -> dict[str, tuple[Path, str]]:
    """Draw every figure the result has data for; say in ``skipped`` why any other is missing."""
    made: dict[str, tuple[Path, str]] = {}

    def draw(
        name: str, data: pd.DataFrame, plot: Callable[[Any], Any], caption: str, why: str
    ) -> None:
        if len(data):
            made[name] = (figures.save(plot(data), folder / f"{name}.png"), caption)
        else:
            skipped.append(f"Figure '{name}' is not drawn: {why}.")

    no_sets = "no prompt set has two valid answers"
    items = result.agreement_items
    defined = items[items["c_i"].notna() & (items["category"] != "original")]
    draw(
        "dataset_by_category",
        result.agreement_by_dataset_category,
        figures.dataset_by_category,
        "Mean agreement C_i by dataset and category, one panel per model (Kamal et al., Figure 1).",
        no_sets,
    )
    per_model = result.agreement_by_model_type_category
    draw(
        "type_by_category",
        per_model,
        figures.type_by_category,
        "Objective vs subjective mean agreement by category, 95% item-bootstrap intervals, "
        "one panel per model; 'all (shared)' pools the families both types have.",
        no_sets,
    )
    draw(
        "agreement_heatmap",
        defined,
        figures.agreement_heatmap,
        "Mean agreement C_i by model and perturbation category.",
        no_sets,
    )
    s_items = result.pss_items
    pairs = s_items[
        (s_items["score"] == "answer")
        & s_items["s_i"].notna()
        & ~s_items["category"].isin(["original", "all"])
    ]
    draw(
        "pss_distribution",
        pairs,
        lambda _: figures.pss_distribution(s_items),
        "Prompt sensitivity PSS (mean S_i, share of discordant variant pairs) by category "
        "and dataset type, Wilson 95% intervals (inside [0, 1]).",
        no_sets,
    )
    draw(
        "format_accuracy",
        result.format_accuracy,
        figures.format_accuracy_plot,
        "Accuracy of objective items under each prompt format (original and formatting variants).",
        "no objective item with a gold answer was asked in several formats",
    )
    conf = result.confidence_sensitivity
    draw(
        "confidence_vs_pss",
        result.confidence_items,
        lambda pts: figures.confidence_vs_pss(pts, conf),
        "Mean decoding confidence of an item's prompts against its sensitivity S_i (all "
        "variants pooled), one panel per model.",
        "the table has no decoding confidence (choice mode records it)",
    )
    if result.ranking_ranks is not None:  # two or more models (issue 15)
        from robustness.report.figures_ranking import bump_chart

        draw(
            "model_ranks",
            result.ranking_ranks,
            bump_chart,
            "Model ranks under the original prompt and every variant (bump chart): by accuracy "
            "on objective items, by agreement with the original answer on subjective items.",
            "no model was scored under any variant",
        )
    return made


def _fragile(result: AnalysisResult) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    frame = result.fragile_items
    if frame is None or frame.empty:
        return []
    out = []
    for _, g in frame.groupby("rank", sort=True):
        first = g.iloc[0]
        info = {k: first[k] for k in ("model", "dataset", "item_id", "dataset_type", "mean_c_i")}
        out.append(
            (
                info,
                g.drop(
                    columns=["rank", "model", "dataset", "item_id", "dataset_type", "mean_c_i"]
                ).reset_index(drop=True),
            )
        )
    return out


def _html_block(b: Block, figs: Mapping[str, tuple[Path, str]]) -> str:
    if b.figure:
        data = base64.b64encode(figs[b.figure][0].read_bytes()).decode("ascii")
        return (
            f"<figure><img alt='{_h(b.caption)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{_h(b.caption)}</figcaption></figure>"
        )
    if b.table is not None:
        body = to_html(b.table) if len(b.table) else "<p>(none)</p>"
        return f"<h3>{_h(b.caption)}</h3>{body}"
    if b.items:
        cls = " class='note'" if b.note else ""
        return "<ul>" + "".join(f"<li{cls}>{_h(s)}</li>" for s in b.items) + "</ul>"
    return f"<p>{_h(b.text)}</p>"


def _md_block(b: Block, figs: Mapping[str, tuple[Path, str]]) -> list[str]:
    if b.figure:
        cap = _md(b.caption)
        return [f"![{cap}](figures/{figs[b.figure][0].name})", "", f"*{cap}*", ""]
    if b.table is not None:
        return [
            f"### {_md(b.caption)}",
            "",
            to_markdown(b.table) if len(b.table) else "(none)",
            "",
        ]
    if b.items:
        return [f"- {_md(s, block=True)}" for s in b.items] + [""]
    return [_md(b.text, block=True), ""]


def _write_html(
    path: Path,
    title: str,
    sections: Sequence[Section],
    figs: Mapping[str, tuple[Path, str]],
    fragile: Sequence[tuple[dict[str, Any], pd.DataFrame]],
) -> Path:
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_h(title)}"
        f"</title><style>{_CSS}</style></head><body><h1>{_h(title)}</h1>"
    ]
    for sec in sections:
        parts.append(f"<h2 id='{_h(sec.key)}'>{_h(sec.title)}</h2>")
        parts.extend(_html_block(b, figs) for b in sec.blocks)
    parts.append(
        "<h2>Most fragile items</h2><p>The items with the lowest mean agreement over "
        "perturbation categories, with every variant's answer.</p>"
    )
    for info, rows in fragile:
        parts.append(
            f"<h3>{_h(info['dataset'])} / {_h(info['item_id'])} "
            f"({_h(info['model'])}, mean C_i {info['mean_c_i']:.2f})</h3>"
        )
        shown = [c for c in FRAGILE_SHOWN if c in rows.columns]
        body = []
        for r in rows.itertuples(index=False):
            d = r._asdict()
            cells = "".join(f"<td>{escape_html(cell(d[c]))}</td>" for c in shown)
            prompt = d.get("prompt")
            extra = (
                f"<details><summary>prompt</summary><pre>{_h(prompt)}</pre></details>"
                if isinstance(prompt, str) and prompt
                else "-"
            )
            body.append(f"<tr>{cells}<td>{extra}</td></tr>")
        heads = "".join(f"<th>{_h(c)}</th>" for c in shown)
        parts.append(
            f"<table><thead><tr>{heads}<th>prompt</th></tr></thead><tbody>"
            f"{''.join(body)}</tbody></table>"
        )
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _write_md(
    path: Path,
    title: str,
    sections: Sequence[Section],
    figs: Mapping[str, tuple[Path, str]],
    fragile: Sequence[tuple[dict[str, Any], pd.DataFrame]],
) -> Path:
    lines = [f"# {_md(title)}", ""]
    for sec in sections:
        lines += [f"## {_md(sec.title)}", ""]
        for b in sec.blocks:
            lines += _md_block(b, figs)
    lines += ["## Most fragile items", ""]
    for info, rows in fragile:
        lines += [
            f"### {_md(info['dataset'])} / {_md(info['item_id'])} "
            f"({_md(info['model'])}, mean C_i {info['mean_c_i']:.2f})",
            "",
        ]
        shown = [c for c in FRAGILE_SHOWN if c in rows.columns and c != "raw_output"]
        lines.append(to_markdown(rows[shown]))
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def write_report(
    result: AnalysisResult,
    out_dir: str | Path,
    meta: Mapping[str, Any] | None = None,
    *,
    compare: str | None = None,
) -> dict[str, Path]:
    """Write report.html, report.md, figures/ and LaTeX tables; return their paths.

    Parameters
    ----------
    result
        :func:`robustness.analysis.pipeline.analyze` output.
    out_dir
        The folder the analysis wrote ``tables/`` into.
    meta
        The table's metadata (``robustness.core.table.read_metadata``), or None.
    compare
        A published study's key (``"kamal2026"``): adds a section with its figures beside
        the run's and ``tables/paper_comparison.csv``.
    """
    out = Path(out_dir)
    meta = meta or {}
    skipped: list[str] = []
    figs = _figures(result, out / "figures", skipped)
    tex_dir = out / "tables"
    tex_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in result.named_tables().items():
        (tex_dir / f"{name}.tex").write_text(to_latex(frame), encoding="utf-8")
    for stem, w2, w3, caption in (
        (
            "wald",
            result.wald_type2,
            result.wald_type3,
            "Type model: Wald chi-square, Type II and III",
        ),
        (
            "wald_dataset",
            result.wald_dataset_type2,
            result.wald_dataset_type3,
            "Dataset model (Kamal et al. Table 3): Wald chi-square, Type II and III",
        ),
    ):
        if w2 is not None and len(w2):
            merged = w2.merge(w3, on="term", how="outer", suffixes=("_II", "_III"))
            merged.to_csv(tex_dir / f"{stem}.csv", index=False)
            (tex_dir / f"{stem}.tex").write_text(to_latex(merged, caption), encoding="utf-8")
    paper = None
    if compare:
        from robustness.report.paper import compare as compare_with
        from robustness.report.paper import design

        found = compare_with(result, compare)
        paper = (*found, design(result, found[0]))
        paper[1].to_csv(tex_dir / "paper_comparison.csv", index=False)
        paper[2].to_csv(tex_dir / "paper_design.csv", index=False)
        (tex_dir / "paper_comparison.tex").write_text(
            to_latex(paper[1], f"{paper[0].title} beside the run"), encoding="utf-8"
        )
    head = headline(result)
    notes = [*result.notes, *skipped]
    name = (meta.get("study") or {}).get("name", "long table")
    title = f"Prompt robustness report: {plain_text(name, 200, one_line=True)}"
    sections = build(result, meta, head.lines(), figs, notes, paper)
    fragile = _fragile(result)
    paths = {
        "html": _write_html(out / "report.html", title, sections, figs, fragile),
        "md": _write_md(out / "report.md", title, sections, figs, fragile),
    }
    paths.update({k: p for k, (p, _) in figs.items()})
    return paths
