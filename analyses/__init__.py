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
from analyses.gee import DEFAULT_FORMULA, GEEResult, gee
from analyses.marginal import marginal_means, type_contrasts
from analyses.paired import mcnemar
from analyses.pipeline import AnalysisResult, analyze, analyze_path
from analyses.posix import PosixResult, posix, posix_from_runner, posix_table
from analyses.power import power, solve_items
from analyses.power_model import Design, Effects, assumed_effects, effects_from_pilot
from analyses.pss import pss, pss_items, summarize_pss
from analyses.ranking import kendall_w, model_ranks, ranking_tables, spread_resolution
from analyses.separation import find_separation
from analyses.spread import format_accuracy, format_spread
from analyses.synthetic import synthetic_table
from analyses.thompson import ThompsonResult, thompson_search
from analyses.wald import wald_type2, wald_type3

__all__ = [
    "DEFAULT_FORMULA",
    "AnalysisResult",
    "Design",
    "Effects",
    "GEEResult",
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
    "effects_from_pilot",
    "find_separation",
    "flip_rate",
    "format_accuracy",
    "format_spread",
    "gee",
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
    "solve_items",
    "spread_resolution",
    "summarize_agreement",
    "summarize_pss",
    "synthetic_table",
    "thompson_search",
    "type_contrasts",
    "wald_type2",
    "wald_type3",
]
