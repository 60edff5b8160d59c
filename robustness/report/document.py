"""The report as a document: sections of paragraphs, tables and figures, built from the result.

:func:`build` turns an :class:`robustness.analysis.pipeline.AnalysisResult` (and the table's
metadata, and optionally a published study to compare with) into a list of
:class:`Section`; :mod:`robustness.report.write` renders the same list as HTML and as
Markdown, so both say the same thing. Nothing here reads the long table: every number
comes from the analysis result. The Method section's sentences are made in
:mod:`robustness.report.method`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from robustness.analysis.number_text import fmt
from robustness.report.method import floor_text as floor_text
from robustness.report.method import method_text

if TYPE_CHECKING:
    from robustness.analysis.result import AnalysisResult

__all__ = ["Block", "Section", "build", "method_text"]


@dataclass
class Block:
    """A paragraph (``text``), a bulleted list (``items``), a table or a figure (by name)."""

    text: str = ""
    items: list[str] = field(default_factory=list)
    table: pd.DataFrame | None = None
    caption: str = ""
    figure: str = ""
    note: bool = False


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)
    key: str = ""


def _interval(value: Any, low: Any, high: Any) -> str:
    if pd.isna(value):
        return "-"
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def table2(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Table 2 for reading: each estimate with its interval in one cell, counts said once.

    Returns the display table (``model`` only with several models; ``category, objective,
    subjective, gap``, each ``"0.804 [0.777, 0.830]"``; an item-count column only where the
    counts differ between rows) and a sentence with the counts.
    """
    if frame.empty:
        return frame, ""
    out = pd.DataFrame({"model": frame["model"], "category": frame["category"]})
    for side in ("objective", "subjective", "gap"):
        out[side] = [
            _interval(v, lo, hi)
            for v, lo, hi in zip(
                frame[side], frame[f"{side}_ci_low"], frame[f"{side}_ci_high"], strict=True
            )
        ]
    counts = frame[["n_items_objective", "n_items_subjective"]].drop_duplicates()
    if len(counts) == 1:
        n_obj, n_subj = (int(x) for x in counts.iloc[0])
        said = f"{n_obj} objective and {n_subj} subjective items in every row"
    else:
        out["items (obj / subj)"] = [
            f"{int(a)} / {int(b)}"
            for a, b in zip(frame["n_items_objective"], frame["n_items_subjective"], strict=True)
        ]
        said = "the items behind each row are in its last column"
    if frame["model"].nunique() == 1:
        out = out.drop(columns="model")
    return out.reset_index(drop=True), said


def table2_blocks(result: AnalysisResult) -> list[Block]:
    """Table 2 per model (one table), and the pooled one only when there are several models."""
    per_model, said = table2(result.agreement_by_model_type_category)
    blocks = [
        Block(
            table=per_model,
            caption="Mean agreement C_i by dataset type and category with 95% item-bootstrap "
            f"intervals; 'all' pools the families both types have; {said}",
        )
    ]
    if result.n_models > 1:
        pooled, said = table2(result.agreement_by_type_category)
        blocks.append(Block(table=pooled, caption=f"The same with the models pooled; {said}"))
    return blocks


def _table(frame: pd.DataFrame | None, caption: str, columns: list[str] | None = None) -> Block:
    if frame is None:
        frame = pd.DataFrame()
    if columns is not None:
        frame = frame[[c for c in columns if c in frame.columns]]
    return Block(table=frame, caption=caption)


def _wald_pair(w2: pd.DataFrame, w3: pd.DataFrame) -> pd.DataFrame:
    if w2 is None or not len(w2):
        return pd.DataFrame()
    return w2.merge(w3, on="term", how="outer", suffixes=("_II", "_III"))


def _budget_section(result: AnalysisResult) -> Section:
    """A budgeted table's estimates (analyses.budget_sections) and what it withholds."""
    return Section(
        "Variant estimates",
        [
            _table(
                result.variant_quantiles,
                "Accuracy over variants estimated from the asked cells (PromptEval's model, "
                "Polo et al. 2024): its quantiles per model, 95% item-bootstrap intervals; "
                "per variant in tables/variant_estimates.csv",
            ),
            _table(result.budget_design, "Asked cells against the full grid, per model"),
            _table(result.withheld, "Withheld on a budgeted table"),
        ],
        "variant_estimates",
    )


def _figure(figures: Mapping[str, tuple[Any, str]], name: str) -> list[Block]:
    """The figure ``name`` with its caption, or nothing when the report has no such figure."""
    return [Block(figure=name, caption=figures[name][1])] if name in figures else []


def _paper_section(paper: tuple[Any, pd.DataFrame, pd.DataFrame]) -> Section:
    """The published study beside the run: its figures and its design against the run's."""
    p, frame, plan = paper
    return Section(
        f"The paper beside the run: {p.title}",
        [
            Block(text=p.source),
            Block(
                table=frame,
                caption="Published figures and the run's (models pooled, with 95% "
                "item-bootstrap intervals, then each model); a figure is comparable "
                "only where the designs match (see the design table)",
            ),
            Block(
                table=plan,
                caption="The run's design beside the paper's: a mean C_i has the floor "
                "1/N_i, so a paper with another number of variants per family has "
                "another floor; a chi-square on other df is another test",
            ),
        ],
        "paper",
    )


def _agreement_section(result: AnalysisResult, figures: Mapping[str, tuple[Any, str]]) -> Section:
    """Table 2 and the agreement figures."""
    return Section(
        "Agreement (Table 2, like for like)",
        [
            *table2_blocks(result),
            *_figure(figures, "dataset_by_category"),
            *_figure(figures, "type_by_category"),
            *_figure(figures, "agreement_heatmap"),
        ],
        "agreement",
    )


def _chance_section(result: AnalysisResult) -> Section:
    """Accuracy under the original prompt beside chance, and the most frequent label."""
    return Section(
        "Accuracy under the original prompt beside chance",
        [
            _table(
                result.accuracy_vs_chance,
                "Accuracy of each model on each dataset's original prompts with its exact "
                "(Clopper-Pearson) 95% interval, beside chance (the mean of 1/K over the "
                "items); a model at or below chance is guessing, and its agreement "
                "measures a label or position preference, not the stability of a belief",
            ),
            _table(
                result.label_concentration,
                "The displayed label each model gives most often under the original "
                "prompt, and on how many items",
            ),
        ],
        "chance",
    )


def _models_section(result: AnalysisResult) -> Section:
    """The GEE Wald tests of both models, marginal means, contrasts and their diagnostics."""
    return Section(
        "Models: GEE Wald tests, marginal means and contrasts",
        [
            Block(
                table=_wald_pair(result.wald_type2, result.wald_type3),
                caption=f"Type model ({result.formula}): Wald chi-square, Type II and III",
            ),
            Block(
                table=_wald_pair(result.wald_dataset_type2, result.wald_dataset_type3),
                caption=f"Dataset model, Kamal et al. Table 3 ({result.dataset_formula}): "
                "Wald chi-square, Type II and III",
            ),
            _table(
                result.marginal_means,
                "Estimated marginal agreement, type model (delta-method 95% CI); "
                "n_averaged: the reference-grid cells averaged into each mean (one per "
                "level of the factors not shown, equal weights, as emmeans)",
            ),
            _table(
                result.contrasts,
                "Objective - subjective contrasts per family, type model (Holm); the "
                "reason where there is no value",
            ),
            _table(
                result.contrasts_by_model,
                "The same, each model fitted on its own (agree ~ dataset_type * category)",
            ),
            _table(result.separation, "Cells with constant agreement (separation)"),
            _table(
                result.covariance_rank,
                "Rank of each model's robust covariance: a Wald test is made on the "
                "directions it spans; the coefficients in the missing ones, and why",
            ),
        ],
        "models",
    )


def _rankings_section(result: AnalysisResult, figures: Mapping[str, tuple[Any, str]]) -> Section:
    """How the models' order changes across prompts (two or more models)."""
    return Section(
        "Model rankings across prompts",
        [
            *_figure(figures, "model_ranks"),
            _table(
                result.ranking_swaps,
                "Share of (variant, model pair) comparisons whose order differs from "
                "the reference: the original prompt's accuracy order (objective items) "
                "or the order by agreement with the original answer averaged over the "
                "category's variants (subjective items); swap = reversed, change = "
                "reversed or tied",
            ),
            _table(
                result.ranking_concordance,
                "Kendall's W of the model rankings across each category's variants "
                "(tie-corrected) with a permutation p-value",
            ),
            _table(
                result.spread_resolution,
                "Spread as the error bar (FormatSpread): accuracy under the original "
                "prompt and its spread over formats (original + formatting variants)",
            ),
            _table(
                result.spread_pairs,
                "Model pairs: unresolved when the original-prompt accuracy difference "
                "is smaller than either model's spread over formats",
            ),
        ],
        "rankings",
    )


def _invalid_section(result: AnalysisResult) -> Section:
    """Invalid answers per model, type and category, and the sensitivity analysis."""
    rates = result.invalid_rates
    return Section(
        "Invalid answers",
        [
            Block(
                items=list(result.invalid_warnings)
                or [
                    f"no model's invalid rate differs between the types by more than "
                    f"{result.invalid_margin:.0%}"
                ]
            ),
            Block(
                table=rates[rates["category"] == "all"] if len(rates) else rates,
                caption="Invalid answers per model and dataset type, by reason",
            ),
            _table(
                result.contrasts_invalid_as_disagreement,
                "Sensitivity analysis: objective - subjective contrasts with every "
                "invalid answer counted as disagreeing (type model, Holm)",
            ),
            Block(table=rates, caption="Invalid answers per model, type and category"),
        ],
        "invalid",
    )


def _flips_section(result: AnalysisResult) -> Section:
    """Flip rates against the original prompt."""
    return Section(
        "Flip rates against the original prompt",
        [
            _table(
                result.flip_summary,
                "Mean share of a category's valid variants that change the original "
                "prompt's answer, per model and dataset type (defined where agreement is "
                "not: a family with one variant per item)",
            )
        ],
        "flips",
    )


def _pss_section(result: AnalysisResult, figures: Mapping[str, tuple[Any, str]]) -> Section:
    """Prompt sensitivity (PSS, ProSA)."""
    return Section(
        "Prompt sensitivity (PSS, ProSA)",
        [
            *_figure(figures, "pss_distribution"),
            _table(result.pss, "PSS per model, dataset, category and score"),
        ],
        "pss",
    )


def _formats_section(result: AnalysisResult, figures: Mapping[str, tuple[Any, str]]) -> Section:
    """Formats, confidence against sensitivity, and the paired tests."""
    return Section(
        "Formats, confidence and paired tests",
        [
            *_figure(figures, "format_accuracy"),
            *_figure(figures, "confidence_vs_pss"),
            _table(
                result.confidence_sensitivity,
                "Confidence vs sensitivity per model: Pearson r with n and p "
                f"(not computed below {result.min_items} items)",
            ),
            _table(result.cochran, "Cochran's Q across categories per model and type"),
            _table(result.mcnemar, "McNemar between models"),
        ],
        "formats",
    )


def _multi_prompt_section(result: AnalysisResult) -> Section:
    """Accuracy over prompts (multi-prompt metrics)."""
    return Section(
        "Multi-prompt accuracy",
        [
            _table(
                result.multi_prompt,
                "Accuracy over prompts per model and dataset, each family (with the "
                "original) and all prompts: mean (AvgP) and max (MaxP), CPS = MaxP x "
                "(1 - (MaxP - AvgP)) (Mizrahi et al. 2024), quantiles over prompts "
                "(PromptEval, Polo et al. 2024), worst case = items correct under every "
                "prompt (HELM); 95% item-bootstrap intervals in tables/multi_prompt.csv",
                [
                    "model",
                    "dataset",
                    "scope",
                    "n_prompts",
                    "n_items",
                    "mean",
                    "max",
                    "min",
                    "cps",
                    "worst_case",
                    "q05",
                    "q50",
                    "q95",
                ],
            )
        ],
        "multi_prompt",
    )


def _posix_section() -> Section:
    """Why POSIX is not in this report, and how to compute it."""
    return Section(
        "POSIX",
        [
            Block(
                text="POSIX (Chatterjee et al. 2024) needs the log-likelihood of every "
                "response under every prompt of an item; this table holds none. "
                "Compute it with analyses.posix_from_runner on a model, or "
                "analyses.posix_table on stored pair scores."
            )
        ],
        "posix",
    )


def build(
    result: AnalysisResult,
    meta: Mapping[str, Any],
    head_lines: list[str],
    figures: Mapping[str, tuple[Any, str]],
    notes: list[str],
    paper: tuple[Any, pd.DataFrame, pd.DataFrame] | None = None,
) -> list[Section]:
    """Every section of the report, in reading order."""
    secs = [Section("Headline", [Block(items=head_lines)], "headline")]
    secs.append(Section("Method", [Block(text=s) for s in method_text(result, meta)], "method"))
    if paper is not None:
        secs.append(_paper_section(paper))
    secs.append(_agreement_section(result, figures))
    secs.append(_chance_section(result))
    secs.append(_models_section(result))
    if result.has_ranking:  # two or more models (issue 15)
        secs.append(_rankings_section(result, figures))
    secs.append(_invalid_section(result))
    secs.append(_flips_section(result))
    secs.append(_pss_section(result, figures))
    secs.append(_formats_section(result, figures))
    if result.variant_quantiles is not None:
        secs.append(_budget_section(result))
    if result.multi_prompt is not None:
        secs.append(_multi_prompt_section(result))
    secs.append(_posix_section())
    if notes:
        secs.append(Section("Notes", [Block(items=notes, note=True)], "notes"))
    return secs
