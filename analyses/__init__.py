"""Statistics over the long table: agreement, PSS, POSIX, spread, GEE and tests.

One function per statistic, a long table (pandas DataFrame) in and a DataFrame
(or a small result object) out; each docstring cites its equation.  Rows with
``valid == False`` are counted everywhere; agreement leaves them out, while
accuracy, format spread, McNemar and PSS correctness score them as wrong unless
``invalid='drop'``.  Category ``original`` is the reference prompt, not a
perturbation category.

>>> import analyses as an
>>> table = an.synthetic_table(models=2, n_items=10, seed=0)
>>> fit = an.gee(table)      # agree ~ model + dataset_type * category + model:category
>>> fit.wald(type=2).columns.tolist()
['term', 'dof', 'chi2', 'p_value']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robustness.core.lazy import lazy_exports

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "power": "analyses.power",
    "solve_items": "analyses.power",
    "Design": "analyses.power_model",
    "Effects": "analyses.power_model",
    "assumed_effects": "analyses.power_model",
    "effects_from_pilot": "analyses.power_model",
    "kendall_w": "analyses.concordance",
    "model_ranks": "analyses.ranking",
    "ranking_tables": "analyses.ranking",
    "spread_resolution": "analyses.ranking",
    "AnalysisResult": "analyses.pipeline",
    "DATASET_FORMULA": "analyses.models",
    "DEFAULT_FORMULA": "analyses.gee",
    "GEEResult": "analyses.gee",
    "ModelFit": "analyses.models",
    "PosixResult": "analyses.posix",
    "TYPE_FORMULA": "analyses.models",
    "ThompsonResult": "analyses.thompson",
    "accuracy": "analyses.accuracy",
    "accuracy_drop": "analyses.accuracy",
    "agreement_rows": "analyses.agreement",
    "agreement_table": "analyses.agreement",
    "analyze": "analyses.pipeline",
    "analyze_path": "analyses.pipeline",
    "bootstrap_agreement": "analyses.bootstrap",
    "bootstrap_items": "analyses.bootstrap",
    "cochran_q": "analyses.cochran",
    "confidence_sensitivity": "analyses.summaries",
    "contrast_rows": "analyses.contrasts",
    "contrasts_by_model": "analyses.contrasts",
    "dataset_means": "analyses.summaries",
    "find_separation": "analyses.separation",
    "fit_models": "analyses.models",
    "flip_rate": "analyses.agreement",
    "flip_summary": "analyses.summaries",
    "format_accuracy": "analyses.spread",
    "format_spread": "analyses.spread",
    "fragile_items": "analyses.summaries",
    "gee": "analyses.gee",
    "invalid_as_disagreement": "analyses.comparison",
    "invalid_gaps": "analyses.comparison",
    "invalid_rates": "analyses.comparison",
    "item_agreement": "analyses.agreement",
    "marginal_means": "analyses.marginal",
    "mcnemar": "analyses.paired",
    "posix": "analyses.posix",
    "posix_from_runner": "analyses.posix",
    "posix_table": "analyses.posix",
    "pss": "analyses.pss",
    "pss_items": "analyses.pss",
    "shared_families": "analyses.comparison",
    "summarize_agreement": "analyses.agreement",
    "summarize_pss": "analyses.pss",
    "synthetic_table": "analyses.synthetic",
    "thompson_search": "analyses.thompson",
    "type_contrasts": "analyses.marginal",
    "type_table": "analyses.comparison",
    "wald_type2": "analyses.wald",
    "wald_type3": "analyses.wald",
}

__all__ = [
    "DATASET_FORMULA",
    "DEFAULT_FORMULA",
    "TYPE_FORMULA",
    "AnalysisResult",
    "Design",
    "Effects",
    "GEEResult",
    "ModelFit",
    "PosixResult",
    "ThompsonResult",
    "accuracy",
    "accuracy_drop",
    "agreement_rows",
    "agreement_table",
    "analyze",
    "analyze_path",
    "assumed_effects",
    "bootstrap_agreement",
    "bootstrap_items",
    "cochran_q",
    "confidence_sensitivity",
    "contrast_rows",
    "contrasts_by_model",
    "dataset_means",
    "effects_from_pilot",
    "find_separation",
    "fit_models",
    "flip_rate",
    "flip_summary",
    "format_accuracy",
    "format_spread",
    "fragile_items",
    "gee",
    "invalid_as_disagreement",
    "invalid_gaps",
    "invalid_rates",
    "item_agreement",
    "kendall_w",
    "marginal_means",
    "mcnemar",
    "model_ranks",
    "posix",
    "posix_from_runner",
    "posix_table",
    "power",
    "pss",
    "pss_items",
    "ranking_tables",
    "shared_families",
    "solve_items",
    "spread_resolution",
    "summarize_agreement",
    "summarize_pss",
    "synthetic_table",
    "thompson_search",
    "type_contrasts",
    "type_table",
    "wald_type2",
    "wald_type3",
]

if TYPE_CHECKING:  # the names as type checkers and editors see them
    from analyses.accuracy import accuracy, accuracy_drop
    from analyses.agreement import (
        agreement_rows,
        agreement_table,
        flip_rate,
        item_agreement,
        summarize_agreement,
    )
    from analyses.bootstrap import bootstrap_agreement, bootstrap_items
    from analyses.cochran import cochran_q
    from analyses.comparison import (
        invalid_as_disagreement,
        invalid_gaps,
        invalid_rates,
        shared_families,
        type_table,
    )
    from analyses.concordance import kendall_w
    from analyses.contrasts import contrast_rows, contrasts_by_model
    from analyses.gee import DEFAULT_FORMULA, GEEResult, gee
    from analyses.marginal import marginal_means, type_contrasts
    from analyses.models import DATASET_FORMULA, TYPE_FORMULA, ModelFit, fit_models
    from analyses.paired import mcnemar
    from analyses.pipeline import AnalysisResult, analyze, analyze_path
    from analyses.posix import PosixResult, posix, posix_from_runner, posix_table
    from analyses.power import power, solve_items
    from analyses.power_model import Design, Effects, assumed_effects, effects_from_pilot
    from analyses.pss import pss, pss_items, summarize_pss
    from analyses.ranking import model_ranks, ranking_tables, spread_resolution
    from analyses.separation import find_separation
    from analyses.spread import format_accuracy, format_spread
    from analyses.summaries import (
        confidence_sensitivity,
        dataset_means,
        flip_summary,
        fragile_items,
    )
    from analyses.synthetic import synthetic_table
    from analyses.thompson import ThompsonResult, thompson_search
    from analyses.wald import wald_type2, wald_type3


lazy_exports(__name__, _EXPORTS)
