"""Statistics over the long table: agreement, PSS, POSIX, spread, GEE and tests.

The names below load on first use (PEP 562): ``import analyses.wald`` loads no GEE, no
statsmodels and no model code.

One function per statistic, a long table (pandas DataFrame) in and a DataFrame
(or a small result object) out; each docstring cites its equation.  Rows with
``valid == False`` are excluded everywhere and counted; category ``original``
is the reference prompt, not a perturbation category.

>>> import analyses as an
>>> table = an.synthetic_table(models=2, n_items=10, seed=0)
>>> fit = an.gee(table)      # agree ~ model + dataset_type * category + model:category
>>> fit.wald(type=2).columns.tolist()
['term', 'df', 'chi2', 'p_value']
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "AnalysisResult": "analyses.pipeline",
    "DEFAULT_FORMULA": "analyses.gee",
    "GEEResult": "analyses.gee",
    "PosixResult": "analyses.posix",
    "ThompsonResult": "analyses.spread",
    "accuracy": "analyses.accuracy",
    "accuracy_drop": "analyses.accuracy",
    "agreement_rows": "analyses.agreement",
    "agreement_table": "analyses.agreement",
    "analyze": "analyses.pipeline",
    "analyze_path": "analyses.pipeline",
    "bootstrap_agreement": "analyses.bootstrap",
    "bootstrap_items": "analyses.bootstrap",
    "cochran_q": "analyses.paired",
    "find_separation": "analyses.separation",
    "flip_rate": "analyses.agreement",
    "format_accuracy": "analyses.spread",
    "format_spread": "analyses.spread",
    "gee": "analyses.gee",
    "item_agreement": "analyses.agreement",
    "marginal_means": "analyses.marginal",
    "mcnemar": "analyses.paired",
    "posix": "analyses.posix",
    "posix_from_runner": "analyses.posix",
    "posix_table": "analyses.posix",
    "pss": "analyses.pss",
    "pss_items": "analyses.pss",
    "summarize_agreement": "analyses.agreement",
    "summarize_pss": "analyses.pss",
    "synthetic_table": "analyses.synthetic",
    "thompson_search": "analyses.spread",
    "type_contrasts": "analyses.marginal",
    "wald_type2": "analyses.wald",
    "wald_type3": "analyses.wald",
}

__all__ = [
    "DEFAULT_FORMULA",
    "AnalysisResult",
    "GEEResult",
    "PosixResult",
    "ThompsonResult",
    "accuracy",
    "accuracy_drop",
    "agreement_rows",
    "agreement_table",
    "analyze",
    "analyze_path",
    "bootstrap_agreement",
    "bootstrap_items",
    "cochran_q",
    "find_separation",
    "flip_rate",
    "format_accuracy",
    "format_spread",
    "gee",
    "item_agreement",
    "marginal_means",
    "mcnemar",
    "posix",
    "posix_from_runner",
    "posix_table",
    "pss",
    "pss_items",
    "summarize_agreement",
    "summarize_pss",
    "synthetic_table",
    "thompson_search",
    "type_contrasts",
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
    from analyses.gee import DEFAULT_FORMULA, GEEResult, gee
    from analyses.marginal import marginal_means, type_contrasts
    from analyses.paired import cochran_q, mcnemar
    from analyses.pipeline import AnalysisResult, analyze, analyze_path
    from analyses.posix import PosixResult, posix, posix_from_runner, posix_table
    from analyses.pss import pss, pss_items, summarize_pss
    from analyses.separation import find_separation
    from analyses.spread import ThompsonResult, format_accuracy, format_spread, thompson_search
    from analyses.synthetic import synthetic_table
    from analyses.wald import wald_type2, wald_type3


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'analyses' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Package(types.ModuleType):
    """This package's module type: a submodule never hides the function it is named after.

    Importing ``analyses.gee`` (the module) binds it as the package attribute ``gee``; the
    public name is the function ``gee`` it defines (likewise ``accuracy``, ``posix``, ``pss``),
    as when this file imported them eagerly.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
