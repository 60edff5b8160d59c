"""Estimated marginal means of a fitted GEE and objective - subjective contrasts, as emmeans.

Reference grid: every combination of the levels of the model's factors (whether
or not it occurs in the data) and, as emmeans' default ``cov.keep = "2"`` does, of
the values of each numeric covariate with at most two values (a 0/1 indicator or a
1/2 code enters at both values, not at its mean); every other numeric covariate at
its mean over the fitted rows (``cov_reduce`` changes that: a function such as
``numpy.median``, or a value per column).  Covariates are reduced as columns, before
the formula's transformations (``I(age^2)`` at mean(age)^2, as emmeans), and x_k is
the design row of grid row k.  The marginal mean of a cell of ``by``
(e.g. dataset type x category) averages the linear predictor with equal weight
over the K grid rows of that cell -- the other factors' levels (a nested factor, such as dataset
within dataset type, only over the levels inside its nesting level) -- and
back-transforms it:

    eta = (1 / K) sum_k x_k' b = xbar' b,      m = expit(eta),
    se(eta) = sqrt(xbar' V xbar),              se(m) = m (1 - m) se(eta),

with V the robust covariance; the interval expit(eta -+ z se(eta)) is built on
the link scale.  This is ``summary(emmeans(fit, ~ dataset_type * category,
type = "response"))`` for a ``geeglm`` fit (asymptotic, df = Inf).  A mean whose
xbar is not estimable (has a component in the null space of the full design, as
emmeans' ``estimability`` check finds) is left out of the table, with a note in
``attrs['notes']``.

The objective - subjective contrasts built on these means are in
:mod:`analyses.gee.type_contrasts`.

References
----------
Searle, S. R., Speed, F. M. & Milliken, G. A. (1980). Population marginal means in
the linear model. The American Statistician 34(4), 216-221.
Lenth, R. V. (2024). emmeans: Estimated Marginal Means, aka Least-Squares Means.
R package; vignettes "basics" and "transformations" (regrid).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from analyses.gee.design import build_design
from analyses.gee.formula import Formula, evaluate_variables, parse_formula
from robustness.core.errors import AnalysisError

__all__ = [
    "MeansModel",
    "ReferenceGrid",
    "averaged_cells",
    "is_estimable",
    "marginal_means",
    "reference_grid",
]


class MeansModel(Protocol):
    """What marginal means need of a fit (:class:`analyses.gee.GEEResult` has it).

    The formula and its fitted terms, the factor levels, the grid of distinct fitted
    rows (with counts ``n`` and response sums ``y_sum``), the coefficients, their
    covariance and the null space of the full design.  A protocol, so that this module
    does not import the result type that calls it.
    """

    formula: str
    terms: list[tuple[str, ...]]
    levels: dict[str, list[object]]
    grid: pd.DataFrame
    params: pd.Series
    cov: pd.DataFrame
    null_basis: np.ndarray
    model_formula: Formula | None
    covariates: dict[str, np.ndarray]


_ESTIMABLE_TOL = 1e-8


@dataclass(frozen=True)
class ReferenceGrid:
    """The full reference grid: its rows, their design rows (kept columns) and estimability.

    ``levels`` holds the grid's dimensions in order: each factor's levels and each
    covariate kept at its values (emmeans' ``cov.keep``).
    """

    rows: pd.DataFrame
    x: np.ndarray
    x_full: np.ndarray
    levels: dict[str, list[object]]


def reference_grid(
    fit: MeansModel,
    cov_keep: int = 2,
    cov_reduce: Callable[[np.ndarray], float] | Mapping[str, float] | None = None,
) -> ReferenceGrid:
    """Every combination of the model's factor levels, covariates at their mean.

    Parameters
    ----------
    fit
        A fitted :class:`~analyses.gee.GEEResult` (any :class:`MeansModel`).

    Returns
    -------
    ReferenceGrid
        ``rows`` (one per combination, first factor varying slowest), ``x`` (design
        rows over the fitted coefficients) and ``x_full`` (over all columns,
        aliased ones included, for the estimability check).

    Notes
    -----
    emmeans' ``ref_grid`` with ``cov.reduce = mean``.  A factor nested in another
    (each ``dataset`` has one ``dataset_type``) keeps only its observed pairs with
    it, as emmeans' automatic nesting detection does.

    References
    ----------
    Lenth (2024), emmeans vignette "basics".

    Examples
    --------
    Two models x two types x two categories: 8 rows, as ``expand.grid`` of the levels.

    >>> from analyses import gee
    >>> from analyses.gee.emmeans import reference_grid
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=2, n_items=6, categories=("paraphrase", "formatting"),
    ...                     n_variants=3, seed=0)
    >>> grid = reference_grid(gee(t))
    >>> len(grid.rows), list(grid.rows.columns), grid.x.shape[0]
    (8, ['model', 'dataset_type', 'category'], 8)
    >>> grid.rows.iloc[0].tolist()
    ['model_1', 'objective', 'formatting']
    """
    f = fit.model_formula or parse_formula(fit.formula).with_terms(fit.terms)
    factors = [v for v in f.variables if v in fit.levels]
    covariates = _covariates(fit, f)
    kept: dict[str, list[object]] = {}
    for c, vals in covariates.items():
        lev = _kept_levels(vals, cov_keep)
        if lev is not None:
            kept[c] = list(lev)
    dims: dict[str, list[object]] = {**{v: list(fit.levels[v]) for v in factors}, **kept}
    rows = pd.DataFrame(list(itertools.product(*dims.values())), columns=list(dims))
    for inner, outer in _nesting(fit, factors):
        seen = set(map(tuple, fit.grid[[inner, outer]].drop_duplicates().to_numpy()))
        pairs = zip(rows[inner], rows[outer], strict=True)
        rows = rows[[pair in seen for pair in pairs]].reset_index(drop=True)
    for c, vals in covariates.items():
        if c not in kept:
            rows[c] = _reduced(c, vals, cov_reduce)
    rows = evaluate_variables(f, rows)
    x_full, names, _ = build_design(f, rows, fit.levels, "treatment")
    pos = {n: k for k, n in enumerate(names)}
    x = x_full[:, [pos[n] for n in fit.params.index]]
    return ReferenceGrid(rows, x, x_full, dims)


def _covariates(fit: MeansModel, f: Formula) -> dict[str, np.ndarray]:
    """Each numeric column the model reads -> its fitted values (from the grid if needed)."""
    if fit.covariates:
        return dict(fit.covariates)
    weights = fit.grid["n"].to_numpy(dtype=int)
    out = {}
    for v in f.variables:
        if v not in fit.levels:
            out[v] = np.repeat(fit.grid[v].to_numpy(dtype=float), weights)
    return out


def _kept_levels(values: np.ndarray, cov_keep: int) -> list[float] | None:
    """emmeans' ``cov.keep``: a covariate with at most ``cov_keep`` values is kept as levels."""
    distinct = np.unique(values[np.isfinite(values)])
    return [float(v) for v in distinct] if 0 < distinct.size <= cov_keep else None


def _reduced(
    column: str,
    values: np.ndarray,
    cov_reduce: Callable[[np.ndarray], float] | Mapping[str, float] | None,
) -> float:
    """emmeans' ``cov.reduce``: the mean by default, a function, or a value per column."""
    if cov_reduce is None:
        return float(np.mean(values))
    if isinstance(cov_reduce, Mapping):
        return float(cov_reduce[column]) if column in cov_reduce else float(np.mean(values))
    return float(cov_reduce(values))


def _nesting(fit: MeansModel, factors: Sequence[str]) -> list[tuple[str, str]]:
    """Pairs (inner, outer): each level of inner occurs with one level of outer only."""
    out = []
    for inner in factors:
        for outer in factors:
            n_in, n_out = len(fit.levels[inner]), len(fit.levels[outer])
            if inner == outer or n_out < 2 or n_in <= n_out:
                continue
            if (fit.grid.groupby(inner)[outer].nunique() == 1).all():
                out.append((inner, outer))
    return out


def _check_by(fit: MeansModel, by: Sequence[str], grid: ReferenceGrid) -> list[str]:
    """``by`` as grid dimensions: a factor, a covariate kept at its values, or the column
    of a ``C(x)`` / ``factor(x)`` factor (``x`` names ``C(x)``, as emmeans names it)."""
    f = fit.model_formula
    alias = {}
    if f is not None:
        alias = {f.spec(v).columns[0]: v for v in fit.levels if f.spec(v).kind == "factor"}
    out = [b if b in grid.levels else alias.get(b, b) for b in by]
    missing = [b for b in out if b not in grid.levels]
    if missing:
        raise AnalysisError(
            f"marginal means by {missing!r}: not a factor of the model {fit.formula!r} "
            f"(its factors and two-valued covariates: {list(grid.levels)})."
        )
    return out


def averaged_cells(fit: MeansModel, by: Sequence[str], grid: ReferenceGrid | None = None):
    """The reference grid's rows averaged per cell of ``by`` (emmeans' equal weights).

    Parameters
    ----------
    fit
        The fitted model.
    by
        The factors that name a cell.
    grid
        The reference grid (:func:`reference_grid` of ``fit`` when None).

    Returns
    -------
    list of tuple
        Per cell, in the factors' level order: the key (one level per factor), xbar over
        the kept columns, xbar over the full columns, the number K of grid rows, and those
        rows (kept and full columns).
    """
    grid = reference_grid(fit) if grid is None else grid
    out = []
    for key, idx in grid.rows.groupby(list(by), sort=False).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        xs = grid.x[idx]
        xf = grid.x_full[idx]
        out.append((key, xs.mean(axis=0), xf.mean(axis=0), len(idx), xs, xf))
    order = {v: {lev: k for k, lev in enumerate(grid.levels[v])} for v in by}
    out.sort(key=lambda r: tuple(order[v][k] for v, k in zip(by, r[0], strict=True)))
    return out


def is_estimable(fit: MeansModel, x_full: np.ndarray) -> bool:
    """Whether the linear function ``x_full`` of the full coefficients is estimable.

    Parameters
    ----------
    fit
        The fitted model (its ``null_basis``: a basis of the null space of the full design).
    x_full
        One row over the full columns.

    Returns
    -------
    bool
        True when ||x N||^2 <= 1e-8 max(||x||^2, 1), N the null basis: x lies in the row
        space of the design (the test of R's ``estimability::is.estble``, whose scale is
        ||x||^2 alone).
    """
    if fit.null_basis.size == 0:
        return True
    scale = float(np.sum(x_full * x_full))
    return float(np.sum((x_full @ fit.null_basis) ** 2)) <= _ESTIMABLE_TOL * max(scale, 1.0)


def marginal_means(
    fit: MeansModel,
    by: Sequence[str] = ("dataset_type", "category"),
    level: float = 0.95,
    scale: str = "link",
    cov_keep: int = 2,
    cov_reduce: Callable[[np.ndarray], float] | Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Estimated marginal probability per cell of ``by``, as emmeans computes it.

    Parameters
    ----------
    fit
        A fitted :class:`~analyses.gee.GEEResult` (any :class:`MeansModel`).
    by
        Factors of the model to tabulate by; the others are averaged over.
    level
        Confidence level.
    scale
        ``'link'`` (emmeans' default: average the logits, then back-transform) or
        ``'response'`` (average the probabilities of the grid rows, emmeans'
        ``emmeans(regrid(ref_grid(fit)), ...)``; the interval is then m -+ z se).
    cov_keep
        A numeric covariate with at most this many distinct values is a grid dimension
        (emmeans' ``cov.keep``; default 2, emmeans' default); 0 reduces every covariate.
    cov_reduce
        How the other covariates are reduced (emmeans' ``cov.reduce``): None for the
        mean over the fitted rows, a function of the values, or a value per column.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``estimate`` (back-transformed mean), ``se`` (delta
        method, robust covariance), ``ci_low``, ``ci_high`` (link-scale interval
        back-transformed), ``observed`` (raw mean of the response in the fitted rows),
        ``n_rows`` (fitted rows) and ``n_averaged`` (reference-grid rows averaged).
        ``attrs['notes']`` names the cells left out as not estimable.

    Notes
    -----
    m = expit(xbar' b), se = m (1 - m) sqrt(xbar' V xbar), xbar the mean design row
    of the cell's reference-grid rows (module docstring).  With ``scale='response'``,
    m = (1/K) sum_k expit(x_k' b) and grad m = (1/K) sum_k mu_k (1 - mu_k) x_k.  The
    two differ most when a cell is near 0 or 1 (e.g. a separated cell): the logit
    average is pulled towards the extreme cell.

    References
    ----------
    Searle, Speed & Milliken (1980); Lenth (2024).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.special import expit
    >>> from analyses import gee
    >>> from analyses.synthetic import synthetic_table
    >>> fit = gee(synthetic_table(models=2, n_items=15, seed=4), "agree ~ model + category")
    >>> mm = marginal_means(fit, by=["category"]).set_index("category")
    >>> b = fit.params
    >>> eta = b["(Intercept)"] + b["modelmodel_2"] / 2      # the reference category
    >>> bool(np.isclose(mm.loc[fit.levels["category"][0], "estimate"], expit(eta)))
    True
    """
    grid = reference_grid(fit, cov_keep, cov_reduce)
    by = _check_by(fit, by, grid)
    if scale not in ("link", "response"):
        raise AnalysisError(f"scale must be 'link' or 'response', not {scale!r}.")
    v = fit.cov.to_numpy()
    beta = fit.params.to_numpy()
    q = stats.norm.ppf(0.5 + level / 2)
    counts = pd.DataFrame(columns=["n_rows", "y_sum"])
    if set(by) <= set(fit.grid.columns):
        counts = fit.grid.groupby(by, sort=False).agg(n_rows=("n", "sum"), y_sum=("y_sum", "sum"))
    out, notes = [], []
    for key, xbar, xbar_full, k, xs, xs_full in averaged_cells(fit, by, grid):
        label = ", ".join(f"{b}={val}" for b, val in zip(by, key, strict=True))
        rows = [xbar_full] if scale == "link" else list(xs_full)
        if not all(is_estimable(fit, r) for r in rows):
            notes.append(f"marginal mean of {label} is not estimable (aliased design); left out.")
            continue
        if scale == "link":
            eta = float(xbar @ beta)
            se_eta = float(np.sqrt(max(xbar @ v @ xbar, 0.0)))
            m, se = float(expit(eta)), float(expit(eta) * (1 - expit(eta)) * se_eta)
            lo, hi = float(expit(eta - q * se_eta)), float(expit(eta + q * se_eta))
        else:
            mu = expit(xs @ beta)
            g = ((mu * (1 - mu))[:, None] * xs).mean(axis=0)
            m, se = float(mu.mean()), float(np.sqrt(max(g @ v @ g, 0.0)))
            lo, hi = m - q * se, m + q * se
        c = counts.loc[key if len(key) > 1 else key[0]] if key in _keys(counts) else None
        out.append(
            {
                **dict(zip(by, key, strict=True)),
                "estimate": m,
                "se": se,
                "ci_low": lo,
                "ci_high": hi,
                "observed": float(c["y_sum"] / c["n_rows"]) if c is not None else np.nan,
                "n_rows": int(c["n_rows"]) if c is not None else 0,
                "n_averaged": k,
            }
        )
    cols = [*by, "estimate", "se", "ci_low", "ci_high", "observed", "n_rows", "n_averaged"]
    table = pd.DataFrame(out, columns=cols)
    table.attrs["notes"] = notes
    return table


def _keys(counts: pd.DataFrame) -> set[tuple]:
    return {k if isinstance(k, tuple) else (k,) for k in counts.index}
