"""Statistics over the long table: agreement, PSS, POSIX, spread, GEE and tests.

One function per statistic, a long table (pandas DataFrame) in and a DataFrame
(or a small result object) out; each docstring cites its equation.  Rows with
``valid == False`` are excluded everywhere and counted; category ``original``
is the reference prompt, not a perturbation category.
"""

from analyses.agreement import (
    agreement_rows,
    agreement_table,
    flip_rate,
    item_agreement,
    summarize_agreement,
)
from analyses.gee import DEFAULT_FORMULA, GEEResult, gee
from analyses.marginal import marginal_means, type_contrasts
from analyses.pss import pss, pss_items, summarize_pss
from analyses.separation import find_separation
from analyses.synthetic import synthetic_table

__all__ = [
    "DEFAULT_FORMULA",
    "GEEResult",
    "agreement_rows",
    "agreement_table",
    "find_separation",
    "flip_rate",
    "gee",
    "item_agreement",
    "marginal_means",
    "pss",
    "pss_items",
    "summarize_agreement",
    "summarize_pss",
    "synthetic_table",
    "type_contrasts",
]
