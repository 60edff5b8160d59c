"""Binomial GEE of agreement with Wald tests, marginal means and contrasts: the model.

:func:`gee` fits ``agree ~ model + dataset_type * category + model:category``
(or any formula) by GEE with logit link, exchangeable (or independence) working
correlation and robust sandwich covariance, in named steps:

1. :func:`analyses.gee_rows.fitted_rows` -- the rows and the response;
2. :func:`analyses.gee_steps.drop_flat_terms` -- terms of a one-valued variable are dropped;
3. :func:`analyses.gee_steps.check_separation` -- cells with a constant response are
   found and named; when there are any, the whole model is fitted by the bias-reduced (Firth-type)
   estimating equation, so every cell keeps a finite estimate;
4. :func:`analyses.gee_steps.build_model_design` -- the treatment-coded design of the distinct rows,
   aliased columns dropped by R's rule;
5. :func:`analyses.gee_steps.aggregate_cells` -- the rows summed into (cluster, design row) cells;
6. :func:`analyses.gee_solver.solve_gee` -- the estimating equations;
7. :func:`analyses.gee_steps.sum_coded` -- the same fit in sum-to-zero coding, for Type III.

The equations are in :mod:`analyses.gee_solver`.  Without separation the fit is
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
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from analyses.formula import Formula, parse_formula
from analyses.gee_rows import DEFAULT_FORMULA, fitted_rows, formula_columns
from analyses.gee_solver import CORSTRS, solve_gee
from analyses.gee_steps import (
    CLUSTERS,
    aggregate_cells,
    build_model_design,
    check_separation,
    drop_flat_terms,
    factor_levels,
    is_factor,
    solver_notes,
    sum_coded,
)
from analyses.prompt_sets import PromptSets
from analyses.separation import COLUMNS as SEPARATION_COLUMNS
from analyses.table_input import load
from analyses.wald import wald_type2, wald_type3
from robustness.core.errors import AnalysisError
from robustness.core.table import TableError

__all__ = ["CLUSTERS", "DEFAULT_FORMULA", "GEEResult", "formula_columns", "gee", "gee_loaded"]


@dataclass
class GEEResult:
    """A fitted binomial GEE with its Wald tests, marginal means and notes.

    Attributes
    ----------
    params, bse, cov
        Coefficients, robust standard errors and robust (sandwich) covariance
        (treatment coding, R's names; aliased columns left out).
    params_sum, cov_sum
        The same fit in sum-to-zero coding (used for Type III).
    alpha, scale
        Exchangeable correlation (0 for independence) and dispersion estimates.
    bias_reduced
        Whether the bias-reduced equation was solved (there were separated cells).
    notes
        Sentences about what was excluded, dropped, withheld or adjusted, and why.
    separation
        Cells whose response is constant (columns ``term, cell, n_rows, value``);
        they stay in the fit.
    grid
        The distinct combinations of the model's variables in the fitted rows, with
        their row count ``n`` and response sum ``y_sum``.
    """

    formula: str
    response: str
    cluster: str
    terms: list[tuple[str, ...]]
    params: pd.Series
    cov: pd.DataFrame
    params_sum: pd.Series
    cov_sum: pd.DataFrame
    cov_naive: pd.DataFrame
    alpha: float
    scale: float
    n_obs: int
    n_clusters: int
    max_cluster_size: int
    iterations: int
    converged: bool
    notes: list[str]
    separation: pd.DataFrame
    dropped_terms: list[str]
    aliased: list[str]
    levels: dict[str, list[object]]
    grid: pd.DataFrame = field(repr=False)
    corstr: str = "exchangeable"
    bias_reduced: bool = False
    full_names: tuple[str, ...] = field(default=(), repr=False)
    null_basis: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)), repr=False)
    _term_of: np.ndarray = field(default_factory=lambda: np.zeros(0, int), repr=False)
    _term_of_sum: np.ndarray = field(default_factory=lambda: np.zeros(0, int), repr=False)

    @property
    def bse(self) -> pd.Series:
        """Robust standard errors."""
        return pd.Series(np.sqrt(np.diag(self.cov.to_numpy())), index=self.params.index)

    @property
    def term_labels(self) -> list[str]:
        """Term labels as R writes them (``'model:category'``)."""
        return [":".join(t) for t in self.terms]

    def coefficients(self, coding: str = "treatment", level: float = 0.95) -> pd.DataFrame:
        """Coefficients with robust SE, z, p-value and confidence interval.

        Parameters
        ----------
        coding
            ``'treatment'`` (R's default contrasts) or ``'sum'``.
        level
            Confidence level of the interval.

        Returns
        -------
        pandas.DataFrame
            ``coefficient, term, estimate, robust_se, z, p_value, ci_low, ci_high``.

        Notes
        -----
        z = b / se, p = 2 (1 - Phi(|z|)), interval b +- z_{(1+level)/2} se.
        """
        if coding == "treatment":
            b, v, term_of = self.params, self.cov, self._term_of
        elif coding == "sum":
            b, v, term_of = self.params_sum, self.cov_sum, self._term_of_sum
        else:
            raise AnalysisError(f"coding must be 'treatment' or 'sum', not {coding!r}.")
        se = np.sqrt(np.diag(v.to_numpy()))
        z = b.to_numpy() / se
        q = stats.norm.ppf(0.5 + level / 2)
        labels = ["(Intercept)", *self.term_labels]
        return pd.DataFrame(
            {
                "coefficient": b.index,
                "term": [labels[k + 1] for k in term_of],
                "estimate": b.to_numpy(),
                "robust_se": se,
                "z": z,
                "p_value": 2 * stats.norm.sf(np.abs(z)),
                "ci_low": b.to_numpy() - q * se,
                "ci_high": b.to_numpy() + q * se,
            }
        )

    def wald(self, type: int = 2) -> pd.DataFrame:
        """Wald chi-square per term, joint over its columns: ``term, dof, chi2, p_value``.

        ``type=2``: the term's columns after its higher-order relatives', treatment
        coding; ``type=3``: the term's columns in sum-to-zero coding, intercept
        included.  Equal to ``car::Anova(geeglm_fit, type = 2 or 3, test.statistic =
        "Wald")`` on a full-rank design; rank-deficient cases as in
        :mod:`analyses.wald` (``attrs['notes']`` names withheld terms).
        """
        if type in (2, "2", "II"):
            return wald_type2(
                self.params.to_numpy(), self.cov.to_numpy(), self._term_of, self.terms
            )
        if type in (3, "3", "III"):
            return wald_type3(
                self.params_sum.to_numpy(),
                self.cov_sum.to_numpy(),
                self._term_of_sum,
                self.term_labels,
            )
        raise AnalysisError(f"type must be 2 or 3, not {type!r}.")

    def marginal_means(
        self,
        by: Sequence[str] = ("dataset_type", "category"),
        level: float = 0.95,
        scale: str = "link",
    ) -> pd.DataFrame:
        """Estimated marginal mean per cell of ``by``, as emmeans; see :mod:`analyses.marginal`."""
        from analyses.marginal import marginal_means

        return marginal_means(self, by=by, level=level, scale=scale)

    def contrasts(self, level: float = 0.95) -> pd.DataFrame:
        """Objective - subjective contrasts, Holm-adjusted; see :mod:`analyses.marginal`."""
        from analyses.marginal import type_contrasts

        return type_contrasts(self, level=level)


def gee(
    df: pd.DataFrame,
    formula: str | None = None,
    cluster: str = "item",
    *,
    levels: Mapping[str, Sequence[object]] | None = None,
    corstr: str = "exchangeable",
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
    (1/2) tr(B^{-1} dB/db_r) when bias-reduced); see :mod:`analyses.gee_solver`.

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
    t = load(df, optional=("gold", "correct", *formula_columns(df.columns, formula)))
    return gee_loaded(
        t,
        formula,
        cluster,
        levels=levels,
        corstr=corstr,
        bias_reduction=bias_reduction,
        tol=tol,
        max_iter=max_iter,
    )


def gee_loaded(
    t: pd.DataFrame,
    formula: str | None = None,
    cluster: str = "item",
    *,
    ps: PromptSets | None = None,
    levels: Mapping[str, Sequence[object]] | None = None,
    corstr: str = "exchangeable",
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
        A table checked by ``analyses.table_input.load`` that keeps the formula's columns.
    formula, cluster, levels, corstr, bias_reduction, tol, max_iter
        As :func:`gee`.
    ps
        The table's prompt sets, when already built (they give ``agree``).

    Returns
    -------
    GEEResult
        As :func:`gee`.
    """
    text = DEFAULT_FORMULA if formula is None else formula
    f = parse_formula(text)
    if cluster not in CLUSTERS:
        raise AnalysisError(f"cluster must be 'item' or 'model_item', not {cluster!r}.")
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
    cells, cluster_sizes = aggregate_cells(data, y, design, cluster)
    raw = solve_gee(cells, corstr=corstr, bias_reduction=reduce, tol=tol, max_iter=max_iter)
    notes += solver_notes(raw)
    b_sum, v_sum, term_of_sum = sum_coded(fit_formula, design, lev, raw)
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
        cov=pd.DataFrame(raw.cov_robust, index=names, columns=names),
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
        bias_reduced=raw.bias_reduced,
        full_names=design.full_names,
        null_basis=design.null_basis,
        _term_of=design.term_of,
        _term_of_sum=term_of_sum,
    )
    for kind in (2, 3):
        result.notes += [n for n in result.wald(kind).attrs["notes"] if n not in result.notes]
    return result
