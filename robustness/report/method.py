"""The Method section's sentences: how the table was made and how it was analysed.

Every sentence comes from the analysis result and the table's metadata (the study
configuration when the table was made by this toolkit); :mod:`robustness.report.document`
puts them in the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from robustness.report.figures import category_order

if TYPE_CHECKING:
    from robustness.analysis.result import AnalysisResult

__all__ = ["floor_text", "method_text"]


def _models_line(m: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
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
    return line


def method_text(result: AnalysisResult, meta: Mapping[str, Any]) -> list[str]:
    """Sentences describing how the table was made (from the study config when present)."""
    study = meta.get("study") or {}
    items = result.agreement_items
    datasets = items.groupby(["dataset", "dataset_type"])["item_id"].nunique().reset_index()
    parts = ", ".join(
        f"{r.dataset} ({r.dataset_type}, {r.item_id} items)" for r in datasets.itertuples()
    )
    present = category_order([c for c in items["category"].unique() if c != "original"])
    out = [f"Items: {parts}."]
    if study:
        asked = list(study.get("families") or present)
        made = [f for f in asked if f in present]
        none = [f for f in asked if f not in present]
        out.append(
            f"Perturbation families that produced variants: {', '.join(made) or 'none'}"
            + (f"; asked for but with no variant on these items: {', '.join(none)}" if none else "")
            + f". Up to {study.get('n_variants')} variants per family and item, plus the "
            f"original prompt; seed {study.get('seed')}; {study.get('shots', 0)} few-shot "
            "exemplars"
            + (
                f"; one instruction for every item: \u201c{study['instruction']}\u201d"
                if study.get("instruction")
                else ""
            )
            + "."
        )
        for m in study.get("models", []):
            out.append(_models_line(m, (meta.get("models") or {}).get(m["name"], {})))
        out += (
            [f"Option order: {meta['option_order']['description']}."]
            if meta.get("option_order")
            else []
        )
    else:
        models = sorted(items["model"].astype(str).unique())
        out.append(
            f"Perturbation categories in the table: {', '.join(present)}; models: "
            f"{', '.join(models)} (the table carries no study configuration: it was made by "
            "another tool)."
        )
    inference = result.fit.inference if result.fit is not None else "no fit"
    out.append(
        "Agreement C_i = max_y n_i(y) / N_i over the valid variants of one item and "
        "category (Kamal et al. 2026, eq. 1); PSS after ProSA (Zhuo et al. 2024, eq. 1-2); "
        "GEE: binomial, logit link, exchangeable working correlation, clusters = items, "
        f"Wald tests of Type II and III with {inference} (the notes name each model's); "
        "two models: "
        f"the type model ({result.formula}) and the dataset model of Kamal et al.'s Table 3 "
        f"({result.dataset_formula})."
    )
    out.append(floor_text(items))
    if result.budget_method:
        out.append(result.budget_method)
    return out


def floor_text(items: pd.DataFrame) -> str:
    """The attainable minimum of C_i per category: 1/N_i with N_i valid variants."""
    sets = items[(items["category"] != "original") & items["c_i"].notna()]
    parts = []
    for cat in category_order(list(sets["category"].unique())):
        n = sets.loc[sets["category"] == cat, "n_valid"].astype(int)
        lo, hi = int(n.min()), int(n.max())
        span = f"N_i = {lo}" if lo == hi else f"N_i = {lo} to {hi}"
        parts.append(
            f"{cat} {span}, floor {1 / hi:.3f}" + ("" if lo == hi else f" to {1 / lo:.3f}")
        )
    return (
        "The floor of C_i: with N_i valid variants C_i >= 1/N_i (two variants give 0.5 or 1), "
        "so a mean C_i is read against its floor, not against 0: "
        + ("; ".join(parts) or "no prompt set has two valid answers")
        + "."
    )
