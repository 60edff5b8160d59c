"""Binomial GEE with Wald tests, marginal means and contrasts, on any DataFrame.

:func:`gee` fits a binary response by a formula and clusters; its result
(:class:`GEEResult`) gives coefficients, Type II / III Wald chi-square tests,
emmeans-style marginal means and objective - subjective contrasts.  The long
table's two models of every analysis (Kamal et al. 2026) are :func:`fit_models`.

Modules, by concept: ``fit`` (the fit, step by step) and ``result`` (its result
object); ``formula``, ``design`` and ``factors`` (R's formulas and model matrices);
``solver`` (the estimating equations); ``wald``; ``emmeans`` (marginal means),
``type_contrasts`` (objective - subjective per category) and ``family_contrasts``
(one row per perturbation family, pooled and per model); ``separation``;
``long_table`` (the long table's rows and responses) and ``paper_models``;
``covariance_rank`` (whether the sandwich covariance is of full rank).
Public names load on first use (:mod:`robustness.core.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robustness.core.lazy import lazy_exports

if TYPE_CHECKING:  # the public names, each once: read by lazy_exports, seen by type checkers
    from analyses.gee.covariance_rank import covariance_rank
    from analyses.gee.emmeans import marginal_means, reference_grid
    from analyses.gee.family_contrasts import contrast_rows, contrasts_by_model
    from analyses.gee.fit import gee, gee_loaded
    from analyses.gee.formula import Formula, FormulaError, parse_formula
    from analyses.gee.long_table import CLUSTERS, DEFAULT_FORMULA, formula_columns
    from analyses.gee.paper_models import DATASET_FORMULA, TYPE_FORMULA, ModelFit, fit_models
    from analyses.gee.result import GEEResult
    from analyses.gee.separation import find_separation
    from analyses.gee.type_contrasts import type_contrasts
    from analyses.gee.wald import wald_type2, wald_type3


lazy_exports(__name__)
