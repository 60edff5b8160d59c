"""Binomial GEE of agreement (or any 0/1 outcome): the fit, step by step.

:func:`gee` fits ``agree ~ model + dataset_type * category + model:category``
(or any formula) by GEE with logit link, exchangeable (or independence) working
correlation and robust sandwich covariance, in named steps:

1. :func:`analyses.gee.long_table.fitted_rows` -- the rows and the response;
2. :func:`analyses.gee.factors.drop_flat_terms` -- terms of a one-valued variable are dropped;
3. :func:`analyses.gee.separation.check_separation` -- cells with a constant response are
   found and named; when there are any, the whole model is fitted by the bias-reduced (Firth-type)
   estimating equation, so every cell keeps a finite estimate;
4. :func:`analyses.gee.design.build_model_design` -- the treatment-coded design of the
   distinct rows, aliased columns dropped by R's rule;
5. :func:`analyses.gee.solver.aggregate_cells` -- the rows summed into (cluster, design row) cells;
6. :func:`analyses.gee.solver.solve_gee` -- the estimating equations;
7. :func:`analyses.gee.design.sum_coded` -- the same fit in sum-to-zero coding, for Type III.

The equations are in :mod:`analyses.gee.solver`.  Without separation the fit is
geepack's ``geeglm(family = binomial, corstr = "exchangeable")`` (checked against
geepack + car in the tests); with it, the independence fit is brglm2's
``glm(..., method = "brglmFit")``.

References
----------
Liang, K.-Y. & Zeger, S. L. (1986). Biometrika 73(1), 13-22.
Firth, D. (1993). Biometrika 80(1), 27-38.
Halekoh, U., Hojsgaard, S. & Yan, J. (2006). The R package geepack for generalized
estimating equations. Journal of Statistical Software 15(2).
Kamal et al. (2026), Table 3 (the GEE of agreement and its Wald tests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analyses._counts import PromptSets
from analyses._data import load
from analyses.gee.covariance import COV_TYPES, covariance
from analyses.gee.design import build_model_design, sum_coded
from analyses.gee.factors import drop_flat_terms, factor_levels, is_factor
from analyses.gee.formula import Formula, parse_formula
from analyses.gee.long_table import CLUSTERS, DEFAULT_FORMULA, columns_of, fitted_rows
from analyses.gee.result import GEEResult
from analyses.gee.separation import COLUMNS as SEPARATION_COLUMNS
from analyses.gee.separation import check_separation
from analyses.gee.solver import CORSTRS, aggregate_cells, solve_gee, solver_notes
from robustness.core.errors import AnalysisError
from robustness.core.table import TableError

__all__ = ["gee", "gee_loaded"]


def gee(
    df: pd.DataFrame,
    formula: str | None = None,
    cluster: str = "item",
    *,
    levels: Mapping[str, Sequence[object]] | None = None,
    corstr: str = "exchangeable",
    cov_type: str = "robust",
    bias_reduction: bool | str = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
) -> GEEResult:
    """Binomial GEE of agreement (or another 0/1 outcome) with Wald chi-square tests.

    Parameters
    ----------
    df
        Long table.
    formula
        R-style formula (default :data:`DEFAULT_FORMULA`; the paper's Table 3 is
        ``agree ~ model + dataset * category + model:category``).  The response is
        a 0/1 column of the table, or one of ``agree`` (row's answer equals its
        prompt set's majority), ``correct`` (answer equals gold) and ``flip``
        (answer differs from the original prompt's), computed when the table has no
        such column.
    cluster
        ``'item'`` (dataset + item_id; the default, as items are shared across
        models) or ``'model_item'``.
    levels
        Level order per factor (the first is the reference of treatment coding);
        by default sorted.
    corstr
        Working correlation, ``'exchangeable'`` or ``'independence'``.
    cov_type
        The covariance step, a key of :data:`analyses.gee.covariance.COV_TYPES`
        (``'robust'``: the sandwich, as geepack).
    bias_reduction
        ``'auto'`` solves the bias-reduced equation when a cell is separated,
        ``True`` always, ``False`` never (a separated cell is then an error).
    tol, max_iter
        Convergence: the largest coefficient change below ``tol``.

    Returns
    -------
    GEEResult
        ``.wald(2)``, ``.wald(3)``, ``.coefficients()``, ``.marginal_means()``,
        ``.contrasts()``, ``.notes``, ``.separation``.

    Notes
    -----
    Solves sum_i D_i' V_i^{-1} (y_i - mu_i) = 0 (plus Firth's adjustment
    (1/2) tr(B^{-1} dB/db_r) when bias-reduced); see :mod:`analyses.gee.solver`.

    References
    ----------
    Liang & Zeger (1986); Firth (1993); Halekoh et al. (2006); Kamal et al. (2026).

    Examples
    --------
    Coefficients and robust standard errors equal statsmodels' GEE:

    >>> import numpy as np, statsmodels.api as sm, statsmodels.formula.api as smf
    >>> from analyses import agreement_rows
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=2, n_items=15, seed=4)
    >>> fit = gee(t, "agree ~ model + category", tol=1e-12)
    >>> r = agreement_rows(t)
    >>> d = r[(r.category != "original") & r.valid & r.agree.notna()].copy()
    >>> d = d.assign(agree=d.agree.astype(float), g=d.dataset + "/" + d.item_id)
    >>> d = d.sort_values("g", kind="stable")
    >>> sm_fit = smf.gee("agree ~ model + category", "g", d.astype({"model": object,
    ...     "category": object}), family=sm.families.Binomial(),
    ...     cov_struct=sm.cov_struct.Exchangeable()).fit(ctol=1e-13, ddof_scale=0)
    >>> bool(np.allclose(fit.params, sm_fit.params, rtol=1e-7))
    True
    >>> bool(np.allclose(fit.bse, sm_fit.bse, rtol=1e-7))
    True
    """
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"a long table must be a pandas DataFrame, not {type(df).__name__}.")
    f = parse_formula(DEFAULT_FORMULA if formula is None else formula)
    t = load(df, optional=("gold", "correct", *columns_of(f, df.columns)))
    return gee_loaded(
        t,
        f,
        cluster,
        levels=levels,
        corstr=corstr,
        cov_type=cov_type,
        bias_reduction=bias_reduction,
        tol=tol,
        max_iter=max_iter,
    )


def gee_loaded(
    t: pd.DataFrame,
    formula: str | Formula | None = None,
    cluster: str = "item",
    *,
    ps: PromptSets | None = None,
    levels: Mapping[str, Sequence[object]] | None = None,
    corstr: str = "exchangeable",
    cov_type: str = "robust",
    bias_reduction: bool | str = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
) -> GEEResult:
    """:func:`gee` on a table already checked by ``load`` that keeps the formula's columns.

    The internal twin of :func:`gee` (the pipeline loads and groups the table once): its
    statistics, Notes, References and examples are those of :func:`gee`.

    Parameters
    ----------
    t
        A table checked by ``analyses._data.load`` that keeps the formula's columns.
    formula
        As :func:`gee`, or the formula already parsed (it is parsed once per fit).
    cluster, levels, corstr, cov_type, bias_reduction, tol, max_iter
        As :func:`gee`.
    ps
        The table's prompt sets, when already built (they give ``agree``).

    Returns
    -------
    GEEResult
        As :func:`gee`.
    """
    f = formula if isinstance(formula, Formula) else parse_formula(formula or DEFAULT_FORMULA)
    text = f.text
    if cluster not in CLUSTERS:
        raise AnalysisError(f"cluster must be 'item' or 'model_item', not {cluster!r}.")
    if cov_type not in COV_TYPES:
        raise AnalysisError(
            f"cov_type must be one of {', '.join(map(repr, COV_TYPES))}, not {cov_type!r}."
        )
    if corstr not in CORSTRS:
        raise AnalysisError(f"corstr must be one of {', '.join(CORSTRS)}, not {corstr!r}.")
    rows = fitted_rows(t, f, ps)
    data, y, notes = rows.data, rows.y, list(rows.notes)
    factors = [v for v in f.variables if is_factor(data, v)]
    terms, dropped, flat_notes = drop_flat_terms(data, factors, list(f.terms))
    notes += flat_notes
    separation, reduce, sep_notes = check_separation(
        y, data, factors, terms, f.response, bias_reduction
    )
    notes += sep_notes
    fit_formula = Formula(f.text, f.response, f.variables, tuple(terms))
    user_levels = dict(levels or {})
    lev = {v: factor_levels(data[v], user_levels.get(v), v) for v in factors}
    design = build_model_design(fit_formula, data, lev)
    if design.aliased:
        notes.append(
            f"{len(design.aliased)} design column(s) are not estimable from the fitted rows "
            f"and were dropped (aliased): {', '.join(design.aliased)}."
        )
    cells, cluster_sizes = aggregate_cells(data, y, design, CLUSTERS[cluster])
    raw = solve_gee(cells, corstr=corstr, bias_reduction=reduce, tol=tol, max_iter=max_iter)
    notes += solver_notes(raw)
    cov = covariance(cov_type, raw, cells)
    b_sum, v_sum, term_of_sum = sum_coded(fit_formula, design, lev, raw.params, cov)
    names = design.names
    grid = design.grid.assign(
        n=np.bincount(design.row_of, minlength=len(design.grid)),
        y_sum=np.bincount(design.row_of, weights=y, minlength=len(design.grid)),
    )
    result = GEEResult(
        formula=text,
        response=f.response,
        cluster=cluster,
        terms=terms,
        params=pd.Series(raw.params, index=names),
        cov=pd.DataFrame(cov, index=names, columns=names),
        params_sum=b_sum,
        cov_sum=v_sum,
        cov_naive=pd.DataFrame(raw.cov_naive, index=names, columns=names),
        alpha=raw.alpha,
        scale=raw.scale,
        n_obs=len(data),
        n_clusters=cells.n_clusters,
        max_cluster_size=int(cluster_sizes.max()),
        iterations=raw.iterations,
        converged=raw.converged,
        notes=notes,
        separation=separation.reindex(columns=SEPARATION_COLUMNS),
        dropped_terms=dropped,
        aliased=design.aliased,
        levels=lev,
        grid=grid,
        corstr=corstr,
        cov_type=cov_type,
        bias_reduced=raw.bias_reduced,
        full_names=design.full_names,
        null_basis=design.null_basis,
        _term_of=design.term_of,
        _term_of_sum=term_of_sum,
    )
    for kind in (2, 3):
        result.notes += [n for n in result.wald(kind).attrs["notes"] if n not in result.notes]
    return result
