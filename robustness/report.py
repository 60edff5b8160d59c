"""The report: ``report.html`` (self-contained, figures embedded) and ``report.md``.

:func:`write_report` takes the long table, the :class:`analyses.pipeline.AnalysisResult`
and the table's metadata (the study configuration, when the table is ours) and
writes, under the output folder:

- ``report.html``: opens offline, every figure embedded as a PNG data URI;
- ``report.md`` with the figures linked from ``figures/``;
- ``figures/*.png``;
- ``tables/*.csv`` (written by the analyses) and a LaTeX (booktabs) copy of each.

Every string that comes from items, prompts or model outputs is escaped for the
format it is written in (HTML, Markdown, LaTeX).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from robustness import figures
from robustness.figures import category_order

FRAGILE_ITEMS = 5

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


# ----------------------------------------------------------------------------- formatting


def _cell(value: Any, digits: int = 3) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return "-"
    if isinstance(value, float | np.floating):
        if abs(value) < 1e-4 and value != 0:
            return f"{value:.1e}"
        return f"{value:.{digits}f}"
    return str(value)


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def to_latex(df: pd.DataFrame, caption: str = "") -> str:
    """A booktabs table; every cell is escaped for LaTeX."""
    cols = list(df.columns)
    align = "".join("r" if pd.api.types.is_numeric_dtype(df[c]) else "l" for c in cols)
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(r"\caption{" + latex_escape(caption) + "}")
    lines += [
        r"\begin{tabular}{" + align + "}",
        r"\toprule",
        " & ".join(latex_escape(str(c)) for c in cols) + r" \\",
        r"\midrule",
    ]
    for row in df.itertuples(index=False):
        lines.append(" & ".join(latex_escape(_cell(v)) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def md_escape(text: str) -> str:
    """Text for Markdown: the characters that make markup or HTML are backslash-escaped and
    line breaks become spaces, so table cells and headings from data stay plain text."""
    text = text.replace("\r", " ").replace("\n", " ")
    return "".join("\\" + ch if ch in "\\`*_[]<>|!#&" else ch for ch in text)


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table; every cell is escaped (:func:`md_escape`)."""

    def esc(v: Any) -> str:
        return md_escape(_cell(v))

    head = "| " + " | ".join(esc(c) for c in df.columns) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(esc(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body]) + "\n"


def to_html(df: pd.DataFrame) -> str:
    """An HTML table; every cell is escaped."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = []
    for row in df.itertuples(index=False):
        cells = "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row)
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


# ----------------------------------------------------------------------------- content


@dataclass(frozen=True)
class Headline:
    """The three numbers the demo prints."""

    objective: float
    subjective: float
    least_stable: str
    least_stable_agreement: float
    interaction_chi2: float | None
    interaction_df: int | None
    interaction_p: float | None

    def lines(self) -> list[str]:
        if np.isnan(self.least_stable_agreement):
            return [
                "agreement is not defined on this table: no prompt set has two valid "
                "answers (more variants per family, or fewer invalid outputs, are needed)"
            ]
        out = [
            f"mean agreement: objective {_cell(self.objective)} vs subjective "
            f"{_cell(self.subjective)}",
            f"least stable family: {self.least_stable} (mean agreement "
            f"{self.least_stable_agreement:.3f})",
        ]
        if self.interaction_chi2 is not None:
            out.append(
                f"dataset_type x category Wald chi-square (type II): "
                f"{self.interaction_chi2:.2f} on {self.interaction_df} df, "
                f"p = {self.interaction_p:.3g}"
            )
        else:
            out.append("dataset_type x category Wald chi-square: not estimable on this table")
        return out


def headline(result: Any) -> Headline:
    """Objective vs subjective agreement, the least stable family, the interaction test."""
    items = result.tables["agreement_items"]
    pert = items[(items["category"] != "original") & items["c_i"].notna()]
    by_type = pert.groupby("dataset_type")["c_i"].mean()
    by_cat = pert.groupby("category")["c_i"].mean()
    worst = str(by_cat.idxmin()) if len(by_cat) else "-"
    w2 = result.tables.get("wald_type2")
    chi2 = dof = p = None
    if w2 is not None and "dataset_type:category" in set(w2["term"]):
        r = w2.set_index("term").loc["dataset_type:category"]
        chi2, dof, p = float(r["chi2"]), int(r["dof"]), float(r["p_value"])
    return Headline(
        float(by_type.get("objective", np.nan)),
        float(by_type.get("subjective", np.nan)),
        worst,
        float(by_cat.min()) if len(by_cat) else float("nan"),
        chi2,
        dof,
        p,
    )


def method_text(table: pd.DataFrame, meta: Mapping[str, Any]) -> list[str]:
    """Sentences describing how the table was made (from the study config when present)."""
    study = meta.get("study") or {}
    datasets = table.groupby(["dataset", "dataset_type"])["item_id"].nunique().reset_index()
    parts = ", ".join(
        f"{r.dataset} ({r.dataset_type}, {r.item_id} items)" for r in datasets.itertuples()
    )
    cats = category_order([c for c in table["category"].unique() if c != "original"])
    out = [f"Items: {parts}."]
    if study:
        out.append(
            f"Perturbation families: {', '.join(study.get('families', cats))}; up to "
            f"{study.get('n_variants')} variants per family and item, plus the original "
            f"prompt; seed {study.get('seed')}; {study.get('shots', 0)} few-shot "
            "exemplars."
        )
        for m in study.get("models", []):
            entry = (meta.get("models") or {}).get(m["name"], {})
            runner = entry.get("runner", {})
            line = (
                f"Model {m['name']}: backend {m['backend']}, model {m['model']}, mode "
                f"{m['mode']}, dtype {runner.get('dtype', m.get('dtype'))}, batch size "
                f"{runner.get('batch_size', m.get('batch_size'))}"
                + (", chat template applied" if entry.get("chat") else "")
                + "."
            )
            floor = entry.get("noise_floor")
            if floor:
                line += (
                    f" Noise floor: {floor['flips']} of {floor['k']} sampled prompts changed "
                    f"answer between one-at-a-time and batched scoring (max probability "
                    f"difference {floor['max_abs_prob_diff']:.1e}); sensitivity below "
                    "this level is numerics, not prompts."
                )
            out.append(line)
    else:
        out.append(
            f"Perturbation categories in the table: {', '.join(cats)}; models: "
            f"{', '.join(map(str, table['model'].unique()))} (the table carries no study "
            "configuration: it was made by another tool)."
        )
    out.append(
        "Agreement C_i = max_y n_i(y) / N_i over the valid variants of one item and "
        "category (Kamal et al. 2026, eq. 1); PSS after ProSA (Zhuo et al. 2024, eq. 1-2); "
        "GEE: binomial, logit link, exchangeable working correlation, robust sandwich "
        "covariance, Wald chi-square tests of Type II and III."
    )
    return out


def fragile_items(
    table: pd.DataFrame, items_frame: pd.DataFrame, n: int = FRAGILE_ITEMS
) -> list[tuple[pd.Series, pd.DataFrame]]:
    """The ``n`` (model, item) pairs with the lowest mean C_i over perturbation categories."""
    x = items_frame[(items_frame["category"] != "original") & items_frame["c_i"].notna()]
    means = (
        x.groupby(["model", "dataset", "item_id", "dataset_type"])["c_i"]
        .mean()
        .reset_index()
        .sort_values(["c_i", "model", "dataset", "item_id"])
        .head(n)
    )
    out = []
    for r in means.itertuples(index=False):
        rows = table[
            (table["model"] == r.model)
            & (table["dataset"] == r.dataset)
            & (table["item_id"] == r.item_id)
        ]
        cols = [
            c
            for c in (
                "category",
                "variant_id",
                "label",
                "answer",
                "invalid_reason",
                "raw_output",
                "prompt",
            )
            if c in rows.columns
        ]
        out.append((pd.Series(r._asdict()), rows[cols].reset_index(drop=True)))
    return out


def type_cells(result: Any, seed: int = 0, n_boot: int = 1000) -> pd.DataFrame:
    """Mean C_i per model x dataset type x category with item-bootstrap 95% intervals."""
    from analyses.bootstrap import bootstrap_items

    items = result.tables["agreement_items"]
    frames = []
    for model, g in items.groupby("model", sort=False):
        cells = bootstrap_items(g, by=("dataset_type", "category"), n_boot=n_boot, seed=seed)
        cells = cells[cells["dataset_type"].isin(["objective", "subjective"])]
        frames.append(cells.assign(model=model))
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------- writing


def _figures(
    table: pd.DataFrame, result: Any, folder: Path, skipped: list[str]
) -> dict[str, tuple[Path, str]]:
    """Draw every figure the table has data for; say in ``skipped`` why any other is missing."""
    from analyses.pss import pss_items
    from analyses.spread import format_accuracy

    made: dict[str, tuple[Path, str]] = {}

    def draw(name: str, data: pd.DataFrame, plot: Any, caption: str, why: str) -> None:
        if len(data):
            made[name] = (figures.save(plot(data), folder / f"{name}.png"), caption)
        else:
            skipped.append(f"Figure '{name}' is not drawn: {why}.")

    items = result.tables["agreement_items"]
    defined = items[items["c_i"].notna() & (items["category"] != "original")]
    no_sets = "no prompt set has two valid answers"
    draw(
        "agreement_heatmap",
        defined,
        figures.agreement_heatmap,
        "Mean agreement C_i by model and perturbation category.",
        no_sets,
    )
    draw(
        "type_by_category",
        type_cells(result) if len(defined) else defined,
        figures.type_by_category,
        "Objective vs subjective mean agreement by category, 95% item-bootstrap intervals, "
        "one panel per model.",
        no_sets,
    )
    s_items = pss_items(table)
    pairs = s_items[
        (s_items["score"] == "answer")
        & s_items["s_i"].notna()
        & ~s_items["category"].isin(["original", "all"])
    ]
    draw(
        "pss_distribution",
        pairs,
        lambda _: figures.pss_distribution(s_items),
        "Distribution of per-item prompt sensitivity S_i (share of discordant variant pairs) "
        "by category.",
        "no prompt set has two valid answers",
    )
    obj = table[
        (table["dataset_type"] == "objective") & table["category"].isin(["original", "formatting"])
    ]
    acc = (
        format_accuracy(obj, by=("model",), format_col="variant_id")
        if len(obj) and obj["gold"].notna().any()
        else obj.iloc[0:0]
    )
    draw(
        "format_accuracy",
        acc,
        figures.format_accuracy_plot,
        "Accuracy of objective items under each prompt format (original and formatting variants).",
        "no objective item with a gold answer was asked in several formats",
    )
    points = table.iloc[0:0]
    if "confidence" in table.columns and table["confidence"].notna().any():
        conf = (
            table[table["valid"]]
            .groupby(["model", "dataset", "item_id"])["confidence"]
            .mean()
            .reset_index()
        )
        s_all = s_items[(s_items["category"] == "all") & (s_items["score"] == "answer")]
        points = s_all.merge(conf, on=["model", "dataset", "item_id"]).dropna(
            subset=["confidence", "s_i"]
        )
    draw(
        "confidence_vs_pss",
        points,
        figures.confidence_vs_pss,
        "Mean decoding confidence of an item's prompts against its sensitivity S_i (all "
        "variants pooled).",
        "the table has no decoding confidence (choice mode records it)",
    )
    return made


def _report_tables(result: Any) -> dict[str, tuple[str, pd.DataFrame]]:
    t: dict[str, tuple[str, pd.DataFrame]] = {}
    t["agreement_by_type_category"] = (
        "Table 2 analogue: mean agreement C_i by dataset type and category, with the gap",
        result.tables["agreement_by_type_category"],
    )
    w2, w3 = result.tables.get("wald_type2"), result.tables.get("wald_type3")
    if w2 is not None and len(w2):
        wald = w2.merge(w3, on="term", how="outer", suffixes=("_II", "_III"))
        t["wald"] = ("Table 3 analogue: Wald chi-square tests of the GEE, Type II and III", wald)
    for name, caption in (
        ("marginal_means", "Estimated marginal agreement (delta-method 95% CI)"),
        ("contrasts", "Objective - subjective contrasts per category (Holm)"),
        ("pss", "PSS (ProSA) per model, dataset, category and score"),
        ("separation", "Cells with constant agreement, kept by a bias-reduced fit"),
    ):
        frame = result.tables.get(name)
        if frame is not None:
            t[name] = (caption, frame)
    return t


def write_report(
    table: pd.DataFrame, result: Any, out_dir: str | Path, meta: Mapping[str, Any] | None = None
) -> dict[str, Path]:
    """Write report.html, report.md, figures/ and LaTeX tables; return their paths."""
    out = Path(out_dir)
    meta = meta or {}
    skipped: list[str] = []
    figs = _figures(table, result, out / "figures", skipped)
    tabs = _report_tables(result)
    tex_dir = out / "tables"
    tex_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in result.tables.items():
        (tex_dir / f"{name}.tex").write_text(to_latex(frame), encoding="utf-8")
    if "wald" in tabs:
        tabs["wald"][1].to_csv(tex_dir / "wald.csv", index=False)
        (tex_dir / "wald.tex").write_text(
            to_latex(tabs["wald"][1], tabs["wald"][0]), encoding="utf-8"
        )
    head = headline(result)
    fragile = fragile_items(table, result.tables["agreement_items"])
    title = f"Prompt robustness report: {(meta.get('study') or {}).get('name', 'long table')}"
    notes = [*result.notes, *skipped]
    paths = {
        "html": _write_html(
            out / "report.html", title, table, meta, result, head, figs, tabs, fragile, notes
        ),
        "md": _write_md(
            out / "report.md", title, table, meta, result, head, figs, tabs, fragile, notes
        ),
    }
    paths.update({k: p for k, (p, _) in figs.items()})
    return paths


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222}table{border-collapse:collapse;margin:0.6em 0 1.4em;font-size:0.88em}
td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:right;vertical-align:top}
th{border-bottom:2px solid #444}td:first-child,th:first-child{text-align:left}
figure{margin:1.2em 0}figure img{max-width:100%}figcaption{font-size:0.9em;color:#555}
pre{white-space:pre-wrap;text-align:left;font-size:0.85em;margin:0}.note{color:#8a5a00}
details summary{cursor:pointer;color:#1f4e79}"""


def _write_html(
    path: Path,
    title: str,
    table: pd.DataFrame,
    meta: Mapping[str, Any],
    result: Any,
    head: Headline,
    figs: Mapping[str, tuple[Path, str]],
    tabs: Mapping[str, tuple[str, pd.DataFrame]],
    fragile: Sequence[tuple[pd.Series, pd.DataFrame]],
    notes: Sequence[str],
) -> Path:
    e = html.escape
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{e(title)}"
        f"</title><style>{_CSS}</style></head><body><h1>{e(title)}</h1>"
    ]
    parts.append(
        "<h2>Headline</h2><ul>" + "".join(f"<li>{e(s)}</li>" for s in head.lines()) + "</ul>"
    )
    parts.append("<h2>Method</h2>" + "".join(f"<p>{e(s)}</p>" for s in method_text(table, meta)))
    parts.append(
        f"<p>{result.n_rows} rows, {result.n_invalid} invalid rows excluded from "
        f"agreement and the models. GEE formula: <code>{e(result.formula)}</code>, "
        f"clusters: {e(result.cluster)}.</p>"
    )
    parts.append("<h2>Figures</h2>")
    for fig_path, caption in figs.values():
        data = base64.b64encode(fig_path.read_bytes()).decode("ascii")
        parts.append(
            f"<figure><img alt='{e(caption)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{e(caption)}</figcaption></figure>"
        )
    parts.append("<h2>Tables</h2>")
    for caption, frame in tabs.values():
        parts.append(f"<h3>{e(caption)}</h3>" + (to_html(frame) if len(frame) else "<p>(none)</p>"))
    if notes:
        parts.append(
            "<h2>Notes</h2><ul>" + "".join(f"<li class='note'>{e(n)}</li>" for n in notes) + "</ul>"
        )
    parts.append(
        "<h2>Most fragile items</h2><p>The items with the lowest mean agreement over "
        "perturbation categories, with every variant's answer.</p>"
    )
    for info, rows in fragile:
        parts.append(
            f"<h3>{e(str(info['dataset']))} / {e(str(info['item_id']))} "
            f"({e(str(info['model']))}, mean C_i {info['c_i']:.2f})</h3>"
        )
        body = []
        for r in rows.itertuples(index=False):
            d = r._asdict()
            prompt = d.pop("prompt", None)
            cells = "".join(f"<td>{e(_cell(v))}</td>" for v in d.values())
            shown = (
                f"<details><summary>prompt</summary><pre>{e(str(prompt))}</pre></details>"
                if prompt
                else "-"
            )
            body.append(f"<tr>{cells}<td>{shown}</td></tr>")
        heads = "".join(f"<th>{e(c)}</th>" for c in rows.columns if c != "prompt")
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
    table: pd.DataFrame,
    meta: Mapping[str, Any],
    result: Any,
    head: Headline,
    figs: Mapping[str, tuple[Path, str]],
    tabs: Mapping[str, tuple[str, pd.DataFrame]],
    fragile: Sequence[tuple[pd.Series, pd.DataFrame]],
    notes: Sequence[str],
) -> Path:
    esc = md_escape
    lines = [f"# {esc(title)}", "", "## Headline", ""]
    lines += [f"- {esc(s)}" for s in head.lines()] + ["", "## Method", ""]
    lines += [esc(s) + "\n" for s in method_text(table, meta)]
    lines += ["## Figures", ""]
    for fig_path, caption in figs.values():
        lines += [f"![{esc(caption)}](figures/{fig_path.name})", "", f"*{esc(caption)}*", ""]
    lines += ["## Tables", ""]
    for caption, frame in tabs.values():
        lines += [f"### {esc(caption)}", "", to_markdown(frame) if len(frame) else "(none)", ""]
    if notes:
        lines += ["## Notes", ""] + [f"- {esc(n)}" for n in notes] + [""]
    lines += ["## Most fragile items", ""]
    for info, rows in fragile:
        lines += [
            f"### {esc(str(info['dataset']))} / {esc(str(info['item_id']))} "
            f"({esc(str(info['model']))}, mean C_i {info['c_i']:.2f})",
            "",
        ]
        lines.append(
            to_markdown(
                rows.drop(columns=[c for c in ("prompt", "raw_output") if c in rows.columns])
            )
        )
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
