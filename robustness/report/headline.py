"""The headline: like-for-like objective vs subjective numbers, per model, with intervals.

Every number compares the same families on both sides (the families both dataset types
have; those one type lacks are named), model by model, with the item-bootstrap 95 %
interval of the per-model Table 2 (:func:`analyses.type_comparison.type_table`), the number
of items per type, the least stable family, the two Wald tests of the interaction and,
when a model's invalid answers differ between the types, a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from robustness.analysis.number_text import fmt, fmt_dof, fmt_p

if TYPE_CHECKING:
    from robustness.analysis.result import AnalysisResult

__all__ = ["Headline", "ModelLine", "headline"]


#: A headline Wald test: chi-square, df, p-value, and F with its denominator df (NaN when
#: the reference is chi-square).
WaldLine = tuple[float, int, float, float, float]


@dataclass(frozen=True)
class ModelLine:
    """One model's like-for-like comparison."""

    model: str
    objective: float
    objective_ci: tuple[float, float]
    subjective: float
    subjective_ci: tuple[float, float]
    gap_ci: tuple[float, float]
    n_objective: int
    n_subjective: int
    families: tuple[str, ...] = ()

    @property
    def gap(self) -> float:
        return self.objective - self.subjective

    def text(self, families: list[str]) -> str:
        def ci(pair: tuple[float, float]) -> str:
            return f"[{fmt(pair[0])}, {fmt(pair[1])}]"

        return (
            f"{self.model}: mean agreement objective {fmt(self.objective)} {ci(self.objective_ci)} "
            f"vs subjective {fmt(self.subjective)} {ci(self.subjective_ci)}, gap "
            f"{fmt(self.gap)} {ci(self.gap_ci)} over {len(self.families)} shared families"
            + ("" if list(self.families) == list(families) else f" ({', '.join(self.families)})")
            + f"; {self.n_objective} objective and {self.n_subjective} subjective items"
        )


@dataclass(frozen=True)
class Headline:
    """The numbers a reader sees first (see the module docstring)."""

    models: list[ModelLine]
    families: list[str]
    only: dict[str, list[str]]
    least_stable: str
    least_stable_agreement: float
    interaction: WaldLine | None
    dataset_interaction: WaldLine | None
    warnings: list[str] = field(default_factory=list)
    main_effect: WaldLine | None = None
    guessing: list[str] = field(default_factory=list)
    undefined: list[str] = field(default_factory=list)
    without: list[str] = field(default_factory=list)
    thin: list[str] = field(default_factory=list)
    budget: str = ""

    @property
    def objective(self) -> float:
        """Mean of the models' objective agreement (like for like)."""
        return float(np.mean([m.objective for m in self.models])) if self.models else np.nan

    @property
    def subjective(self) -> float:
        return float(np.mean([m.subjective for m in self.models])) if self.models else np.nan

    def lines(self) -> list[str]:
        if np.isnan(self.least_stable_agreement):
            return [
                "agreement is not defined on this table: no prompt set has two valid "
                "answers (more variants per family, or fewer invalid outputs, are needed)"
            ]
        out = [self.budget] if self.budget else []
        out += [f"warning: {w}" for w in self.warnings]
        out += [f"warning: {g}" for g in self.guessing]
        if self.models:
            out.append(
                f"like for like: each model's comparison averages the families both dataset "
                f"types have for that model ({len(self.families)} for every model: "
                f"{', '.join(self.families) or 'none'}; a model with others lists them), "
                "with 95% item-bootstrap intervals"
            )
        out += [m.text(self.families) for m in self.models]
        out += [
            f"{name}: no like-for-like comparison (no family has a defined agreement on both "
            "dataset types for this model; see Invalid answers and the flip rates)"
            for name in self.without
        ]
        if not self.models:
            out.append(
                "no family has a defined agreement on both dataset types: there is no "
                "like-for-like objective vs subjective comparison"
            )
        for kind, cats in self.only.items():
            if cats:
                out.append(f"only {kind} items have: {', '.join(cats)} (not in the comparison)")
        if self.undefined:
            out.append(
                f"no prompt set with two valid answers (agreement undefined, see the flip "
                f"rates): {', '.join(self.undefined)}"
            )
        out.append(
            f"least stable family: {self.least_stable} (mean agreement "
            f"{self.least_stable_agreement:.3f}, all models and items)"
        )
        for label, test in (
            ("dataset_type main effect (type model)", self.main_effect),
            ("dataset_type x category (type model)", self.interaction),
            ("dataset x category (dataset model, Kamal et al. Table 3)", self.dataset_interaction),
        ):
            if test is None:
                out.append(f"{label} Wald chi-square: not estimable on this table")
            else:
                chi2, dof, p, f_stat, df_denom = test
                thin = any(label.startswith(t.split()[0]) for t in self.thin)
                stat = (
                    f"Wald test (type II): chi-square {chi2:.2f} on {fmt_dof(dof)} df, "
                    f"F {f_stat:.2f} on ({fmt_dof(dof)}, {fmt_dof(df_denom)}) df, "
                    if np.isfinite(f_stat)
                    else f"Wald chi-square (type II): {chi2:.2f} on {fmt_dof(dof)} df, "
                )
                out.append(
                    f"{label} {stat}"
                    f"p {fmt_p(p) if fmt_p(p).startswith('<') else '= ' + fmt_p(p)}"
                    + (
                        " (thin data: the robust covariance has rank below the number of "
                        "coefficients, see the notes)"
                        if thin
                        else ""
                    )
                )
        return out


def _wald_term(w: pd.DataFrame | None, term: str) -> WaldLine | None:
    if w is None or w.empty or term not in set(w["term"]):
        return None
    r = w.set_index("term").loc[term]
    chi2 = float(r["chi2"])
    dof = r["dof"] if "dof" in r.index else r["df"]
    if not np.isfinite(chi2) or chi2 < 0 or not np.isfinite(float(dof)) or float(dof) < 1:
        return None
    f_stat = float(r["F"]) if "F" in r.index and pd.notna(r["F"]) else float("nan")
    df_denom = float(r["df_denom"]) if "df_denom" in r.index else float("nan")
    return chi2, int(dof), float(r["p_value"]), f_stat, df_denom


def guessing_lines(chance: pd.DataFrame, labels: pd.DataFrame) -> list[str]:
    """One sentence per model whose original-prompt accuracy is at or below chance somewhere."""
    out = []
    for model, g in chance[chance["verdict"] != "above chance"].groupby("model", sort=True):
        where = "; ".join(
            f"{r.dataset} {fmt(r.accuracy)} [{fmt(r.ci_low)}, {fmt(r.ci_high)}] vs chance "
            f"{fmt(r.chance)} ({r.verdict})"
            for r in g.itertuples()
        )
        mine = labels[labels["model"] == model]
        habit = ", ".join(
            f"{r.label!s} on {r.n_label} of {r.n_items} {r.dataset_type} items"
            for r in mine.itertuples()
        )
        out.append(
            f"model {model!s} is at or below chance under the original prompt ({where}, "
            "exact 95% intervals): its agreement measures label or position bias, not "
            "stability of belief" + (f"; it answers {habit}" if habit else "")
        )
    return out


def headline(result: AnalysisResult) -> Headline:
    """The like-for-like headline of an :class:`robustness.analysis.pipeline.AnalysisResult`."""
    per_model = result.agreement_by_model_type_category
    rows = per_model[per_model["category"] == "all"]
    scope = per_model[per_model["scope"] == "both types"]
    own = {str(m): tuple(sorted(g["category"])) for m, g in scope.groupby("model")}
    models = [
        ModelLine(
            str(r.model),
            float(r.objective),
            (float(r.objective_ci_low), float(r.objective_ci_high)),
            float(r.subjective),
            (float(r.subjective_ci_low), float(r.subjective_ci_high)),
            (float(r.gap_ci_low), float(r.gap_ci_high)),
            int(r.n_items_objective),
            int(r.n_items_subjective),
            own.get(str(r.model), ()),
        )
        for r in rows.itertuples()
        if np.isfinite(r.objective) and np.isfinite(r.subjective)
    ]
    items = result.agreement_items
    pert = items[(items["category"] != "original") & items["c_i"].notna()]
    by_cat = pert.groupby("category")["c_i"].mean()
    asked = [c for c in items["category"].unique() if c != "original"]
    defined = set(by_cat.index)
    worst = str(by_cat.idxmin()) if len(by_cat) else "-"
    return Headline(
        models=models,
        families=list(result.shared_families),
        only=dict(result.families_only),
        least_stable=worst,
        least_stable_agreement=float(by_cat.min()) if len(by_cat) else float("nan"),
        main_effect=_wald_term(result.wald_type2, "dataset_type"),
        budget=result.budget_headline,
        guessing=guessing_lines(result.accuracy_vs_chance, result.label_concentration),
        interaction=_wald_term(result.wald_type2, "dataset_type:category"),
        dataset_interaction=_wald_term(result.wald_dataset_type2, "dataset:category"),
        thin=[
            label
            for label, fit in (
                ("type model", result.fit),
                ("dataset model", result.dataset_fit),
            )
            if fit is not None and len(fit.params) >= fit.n_clusters
        ],
        warnings=[
            f"{w}: the comparison of the types may reflect the answer parser, not the prompts "
            "(see Invalid answers and the sensitivity analysis)"
            for w in result.invalid_warnings
        ],
        undefined=sorted(c for c in asked if c not in defined),
        without=[
            str(m)
            for m in sorted(items["model"].astype(str).unique())
            if m not in {x.model for x in models}
        ],
    )
