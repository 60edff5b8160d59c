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

if TYPE_CHECKING:  # the public names, each once: read by lazy_exports, seen by type checkers
    from analyses.accuracy import accuracy, accuracy_drop
    from analyses.agreement import (
        agreement_rows,
        agreement_table,
        flip_rate,
        item_agreement,
        summarize_agreement,
    )
    from analyses.bootstrap import bootstrap_agreement, bootstrap_items
    from analyses.budgeted import budget_sections, grid_counts, require_full_grid, withheld_reason
    from analyses.chance import accuracy_vs_chance, label_concentration
    from analyses.cochran import cochran_q
    from analyses.concordance import kendall_w
    from analyses.confidence import confidence_sensitivity
    from analyses.dataset_agreement import dataset_means
    from analyses.flip_means import flip_summary
    from analyses.fragile import fragile_items
    from analyses.gee import (
        DATASET_FORMULA,
        DEFAULT_FORMULA,
        TYPE_FORMULA,
        GEEResult,
        ModelFit,
        contrast_rows,
        contrasts_by_model,
        covariance_rank,
        find_separation,
        fit_models,
        gee,
        marginal_means,
        type_contrasts,
        wald_type2,
        wald_type3,
    )
    from analyses.multi_prompt import multi_prompt
    from analyses.paired import mcnemar
    from analyses.posix import PosixResult, posix, posix_from_runner, posix_table
    from analyses.power import (
        Design,
        Effects,
        SolveResult,
        assumed_effects,
        effects_from_pilot,
        power,
        solve_items,
    )
    from analyses.pss import pss, pss_items, summarize_pss
    from analyses.ranking import model_ranks, ranking_tables, spread_resolution
    from analyses.spread import format_accuracy, format_spread
    from analyses.synthetic import synthetic_table
    from analyses.thompson import ThompsonResult, thompson_search
    from analyses.type_comparison import (
        invalid_as_disagreement,
        invalid_gaps,
        invalid_rates,
        shared_families,
        type_table,
    )
    from analyses.variant_estimates import VariantEstimates, estimate_variants

    # orchestration, resolved on first use only (robustness/analysis/; tests/test_layers.py)
    from robustness.analysis.pipeline import analyze, analyze_path
    from robustness.analysis.result import AnalysisResult


lazy_exports(__name__)
