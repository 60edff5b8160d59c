"""Binomial GEE (logit link, exchangeable working correlation, robust covariance).

Model (Liang & Zeger 1986): for cluster i with n_i rows, E[y_ij] = mu_ij =
expit(x_ij' b), Var(y_ij) = phi a_ij with a = mu (1 - mu), and working
covariance V_i = phi A_i^{1/2} R_i(alpha) A_i^{1/2} with the exchangeable
R_i = (1 - alpha) I + alpha 1 1'.  b solves

    sum_i D_i' V_i^{-1} (y_i - mu_i) = 0,          D_i = A_i X_i,

alpha and phi are the moment estimates on Pearson residuals r = (y - mu) / sqrt(a),

    phi   = sum r^2 / N
    alpha = [sum_i sum_{j<k} r_ij r_ik / phi] / sum_i n_i (n_i - 1) / 2,

and the robust (sandwich) covariance is B^{-1} M B^{-1} with B = sum_i D_i' V_i^{-1} D_i
and M = sum_i D_i' V_i^{-1} (y_i - mu_i)(y_i - mu_i)' V_i^{-1} D_i.  These are
geepack's ``geeglm(family = binomial, corstr = "exchangeable")`` estimates and
statsmodels' ``GEE(..., Exchangeable(), ddof_scale=0)``; the R reference test
checks coefficients, robust SEs, alpha and the Wald tests against geepack + car.

How it is computed
------------------
R^{-1} = (1 / (1 - alpha)) (I - c_i 1 1') with c_i = alpha / (1 - alpha + n_i alpha)
(Sherman-Morrison), so with X~ = A^{1/2} X every sum above reduces to sums of
A x x' over rows and to cluster totals g_i = sum_j a_ij^{1/2} x_ij,
e_i = sum_j r_ij.  mu depends on a row only through its design row, and a
long table has few distinct design rows (models x types x categories), so the
data are aggregated once into (cluster, distinct design row) cells with their
counts and sums of y.  This is exact -- no approximation, the same estimating
equations -- and makes an iteration cost O(cells x p + clusters x p^2)
instead of O(rows x p^2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats
from scipy.special import expit

from analyses._counts import MIN_SET, PromptSets, prompt_sets
from analyses._data import REFERENCE, codes, correct_column, load
from analyses.design import build_design, independent_columns
from analyses.formula import Formula, parse_formula
from analyses.separation import COLUMNS as SEPARATION_COLUMNS
from analyses.separation import find_separation
from analyses.wald import wald_type2, wald_type3
from robustness.table import TableError

DEFAULT_FORMULA = "agree ~ model + dataset_type * category + model:category"
CLUSTERS = {"item": ("dataset", "item_id"), "model_item": ("model", "dataset", "item_id")}
_FACTOR_COLUMNS = {
    "model",
    "dataset",
    "dataset_type",
    "item_id",
    "category",
    "variant_id",
    "study",
    "mode",
    "scale",
    "label",
    "invalid_reason",
}
_COMPUTED = ("agree", "correct", "flip")


# ----------------------------------------------------------------------------- the solver


@dataclass(frozen=True)
class ExchangeableFit:
    """Raw output of :func:`fit_exchangeable`."""

    params: np.ndarray
    cov_robust: np.ndarray
    cov_naive: np.ndarray
    alpha: float
    scale: float
    iterations: int
    converged: bool
    max_step: float
    not_positive_definite: bool = False


def _irls_start(x: np.ndarray, n: np.ndarray, ys: np.ndarray, iters: int = 50) -> np.ndarray:
    """Binomial GLM (independence) on grouped rows: the usual start for GEE."""
    p_hat = np.clip((ys + 0.5) / (n + 1.0), 1e-6, 1 - 1e-6)
    eta = np.log(p_hat / (1 - p_hat))
    beta = np.linalg.lstsq(x, eta, rcond=None)[0]
    for _ in range(iters):
        mu = np.clip(expit(x @ beta), 1e-12, 1 - 1e-12)
        w = n * mu * (1 - mu)
        z = x @ beta + (ys - n * mu) / w
        xtw = x.T * w
        new = np.linalg.solve(xtw @ x, xtw @ z)
        if np.max(np.abs(new - beta)) < 1e-12:
            return new
        beta = new
    return beta


def fit_exchangeable(
    x: np.ndarray,
    cell_cluster: np.ndarray,
    cell_row: np.ndarray,
    cell_n: np.ndarray,
    cell_ysum: np.ndarray,
    cell_y2sum: np.ndarray,
    n_clusters: int,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
    ddof_scale: int = 0,
    start: np.ndarray | None = None,
) -> ExchangeableFit:
    """Solve the exchangeable binomial-logit GEE on aggregated cells.

    Parameters
    ----------
    x
        Distinct design rows (U x p, full column rank).
    cell_cluster, cell_row
        For each (cluster, design row) cell: its cluster (0..C-1) and design row
        (0..U-1); cells must be sorted by cluster.
    cell_n, cell_ysum, cell_y2sum
        Rows, sum of y and sum of y^2 in each cell.
    tol
        Convergence when the largest change of a coefficient is below ``tol``.
    ddof_scale
        phi = sum r^2 / (N - ddof_scale); 0 matches geepack.
    """
    U = x.shape[0]
    C = int(n_clusters)
    n_row = np.bincount(cell_row, weights=cell_n, minlength=U)
    ys_row = np.bincount(cell_row, weights=cell_ysum, minlength=U)
    n_cl = np.bincount(cell_cluster, weights=cell_n, minlength=C)
    n_obs = float(n_cl.sum())
    pairs_total = float(np.sum(n_cl * (n_cl - 1)) / 2.0)
    indptr = np.r_[0, np.cumsum(np.bincount(cell_cluster, minlength=C))]

    def by_cluster(values: np.ndarray) -> sp.csr_matrix:
        return sp.csr_matrix((values, cell_row, indptr), shape=(C, U))

    beta = _irls_start(x, n_row, ys_row) if start is None else np.asarray(start, float).copy()

    def state(b: np.ndarray):
        mu = np.clip(expit(x @ b), 1e-15, 1 - 1e-15)
        a = mu * (1 - mu)
        s = np.sqrt(a)
        mu_c, a_c, s_c = mu[cell_row], a[cell_row], s[cell_row]
        res_c = cell_ysum - cell_n * mu_c  # sum of (y - mu)
        ssr_c = (cell_y2sum - 2 * mu_c * cell_ysum + cell_n * mu_c * mu_c) / a_c  # sum r^2
        e_cl = np.bincount(cell_cluster, weights=res_c / s_c, minlength=C)
        ssr_cl = np.bincount(cell_cluster, weights=ssr_c, minlength=C)
        phi = ssr_cl.sum() / (n_obs - ddof_scale)
        alpha = (np.sum(e_cl * e_cl - ssr_cl) / 2.0 / phi) / pairs_total if pairs_total else 0.0
        denom = 1 - alpha + n_cl * alpha
        if alpha >= 1 or np.any(denom == 0):
            raise FloatingPointError(
                f"the exchangeable correlation estimate alpha = {alpha:.4g} makes the working "
                "correlation of a cluster singular; try cluster='model_item'."
            )
        c1 = 1.0 / (1.0 - alpha)
        c2 = alpha / denom
        g = by_cluster(cell_n * s_c) @ x  # C x p: sum of a^{1/2} x per cluster
        h = by_cluster(res_c) @ x  # C x p: sum of (y - mu) x per cluster
        bmat = c1 * ((x.T * (n_row * a)) @ x - (g.T * c2) @ g)
        u = c1 * (h - g * (c2 * e_cl)[:, None])  # per-cluster score contributions
        return bmat, u, alpha, phi

    converged = False
    it = 0
    step = np.inf
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        bmat, u, alpha, phi = state(beta)
        delta = np.linalg.solve(bmat, u.sum(axis=0))
        beta = beta + delta
        step = float(np.max(np.abs(delta))) if delta.size else 0.0
        if not np.isfinite(step):
            break
        if step < tol:
            converged = True
            break
    bmat, u, alpha, phi = state(beta)
    binv = np.linalg.inv(bmat)
    meat = u.T @ u
    robust = binv @ meat @ binv
    robust = (robust + robust.T) / 2
    not_pd = bool(np.any(1 - alpha + n_cl * alpha <= 0))
    return ExchangeableFit(
        beta, robust, binv * phi, float(alpha), float(phi), it, converged, step, not_pd
    )


# ----------------------------------------------------------------------------- the model


@dataclass
class GEEResult:
    """A fitted binomial GEE with its Wald tests, marginal means and notes.

    Attributes
    ----------
    params, bse
        Coefficients and robust standard errors (treatment coding, R's names).
    cov
        Robust (sandwich) covariance, a DataFrame indexed by coefficient name.
    params_sum, cov_sum
        The same fit in sum-to-zero coding (used for Type III).
    alpha, scale
        Exchangeable correlation and dispersion estimates.
    notes
        Sentences about what was excluded or dropped and why.
    separation
        Separated cells set aside before the fit (columns ``term, cell, n_rows, value``).
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
    grid_x: np.ndarray = field(repr=False)
    _term_of: np.ndarray = field(repr=False)
    _term_of_sum: np.ndarray = field(repr=False)

    @property
    def bse(self) -> pd.Series:
        """Robust standard errors."""
        return pd.Series(np.sqrt(np.diag(self.cov.to_numpy())), index=self.params.index)

    @property
    def term_labels(self) -> list[str]:
        return [":".join(t) for t in self.terms]

    def coefficients(self, coding: str = "treatment", level: float = 0.95) -> pd.DataFrame:
        """Coefficients with robust SE, z, p-value and confidence interval.

        ``coding`` is ``'treatment'`` (R's default contrasts) or ``'sum'``.
        """
        if coding == "treatment":
            b, v, term_of = self.params, self.cov, self._term_of
        elif coding == "sum":
            b, v, term_of = self.params_sum, self.cov_sum, self._term_of_sum
        else:
            raise ValueError(f"coding must be 'treatment' or 'sum', not {coding!r}.")
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
        """Wald chi-square per term, joint over its columns: ``term, df, chi2, p_value``.

        ``type=2``: W(term + higher-order relatives) - W(relatives), treatment coding.
        ``type=3``: W(term's columns) in sum-to-zero coding, intercept included.
        Equal to ``car::Anova(geeglm_fit, type = 2 or 3, test.statistic = "Wald")``.
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
        raise ValueError(f"type must be 2 or 3, not {type!r}.")

    def marginal_means(
        self, by: Sequence[str] = ("dataset_type", "category"), level: float = 0.95
    ) -> pd.DataFrame:
        """Marginal mean of the outcome per cell of ``by``; see :mod:`analyses.marginal`."""
        from analyses.marginal import marginal_means

        return marginal_means(self, by=by, level=level)

    def contrasts(self, level: float = 0.95) -> pd.DataFrame:
        """Objective - subjective contrasts, Holm-adjusted; see :mod:`analyses.marginal`."""
        from analyses.marginal import type_contrasts

        return type_contrasts(self, level=level)


def _response(
    t: pd.DataFrame, response: str, user_columns: set[str], ps: PromptSets | None = None
) -> np.ndarray:
    if response in user_columns:
        col = t[response]
        values = pd.to_numeric(
            col.astype("Float64") if col.dtype == "boolean" else col, errors="coerce"
        ).to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isnan(values) & ~np.isin(values, (0.0, 1.0))
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise TableError(
                f"column {response!r}, row {pos}: {col.iloc[pos]!r} is not 0/1 "
                "(a binomial GEE needs a binary response)."
            )
        return values
    ps = ps or prompt_sets(t)
    if response == "agree":
        return ps.agree
    if response == "flip":
        orig = ps.original[ps.group]
        out = (ps.answer != orig).astype(float)
        out[~ps.valid | (orig < 0)] = np.nan
        return out
    corr = correct_column(t)
    if corr is None:
        raise TableError("response 'correct' needs a 'correct' or a 'gold' column in the table.")
    return corr


def _is_factor(t: pd.DataFrame, var: str) -> bool:
    if var in _FACTOR_COLUMNS:
        return True
    col = t[var]
    return not (pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col))


def _levels_of(values: pd.Series, given: Sequence[object] | None, var: str) -> list[object]:
    present = list(pd.unique(values))
    if given is None:
        return sorted(present, key=lambda v: (str(type(v)), v))
    missing = [v for v in present if v not in list(given)]
    if missing:
        raise ValueError(f"levels for {var!r} lack the value(s) {missing!r} found in the table.")
    return [v for v in given if v in present]


def gee(
    df: pd.DataFrame,
    formula: str | None = None,
    cluster: str = "item",
    *,
    levels: Mapping[str, Sequence[object]] | None = None,
    drop_separated: bool = True,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> GEEResult:
    """Binomial GEE of agreement (or another 0/1 outcome) with Wald chi-square tests.

    Fits ``formula`` (default ``agree ~ model + dataset_type * category +
    model:category``) by GEE with logit link, exchangeable working correlation
    and robust sandwich covariance (Liang & Zeger 1986; the module docstring
    gives the equations), on the valid rows of every perturbation category
    (``original`` is the reference prompt, not a category here).

    Parameters
    ----------
    df
        Long table.
    formula
        R-style formula.  The response is a 0/1 column of the table, or one of
        ``agree`` (row's answer equals its prompt set's majority, see
        :mod:`analyses.agreement`), ``correct`` (answer equals gold) and
        ``flip`` (answer differs from the original prompt's), computed when the
        table has no such column.
    cluster
        ``'item'`` (dataset + item_id; the default, as items are shared across
        models and their instability is shared) or ``'model_item'``.
    levels
        Level order per factor (the first is the reference of treatment coding);
        by default sorted.
    drop_separated
        Set aside cells whose outcome is all 0 or all 1 (see
        :mod:`analyses.separation`) and fit without them; otherwise raise.
    tol, max_iter
        Convergence: the largest coefficient change below ``tol``.

    Returns
    -------
    GEEResult
        ``.wald(2)``, ``.wald(3)``, ``.coefficients()``, ``.marginal_means()``,
        ``.contrasts()``, ``.notes``, ``.separation``.

    Examples
    --------
    >>> from analyses import gee
    >>> from analyses.synthetic import synthetic_table
    >>> fit = gee(synthetic_table(models=2, n_items=15, seed=4))
    >>> fit.wald(type=2)["term"].tolist()
    ['model', 'dataset_type', 'category', 'dataset_type:category', 'model:category']
    >>> bool(fit.converged)
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
        drop_separated=drop_separated,
        tol=tol,
        max_iter=max_iter,
    )


def formula_columns(columns: Sequence[str], formula: str | None = None) -> list[str]:
    """Table columns a formula uses (its response when it is a column, and its variables).

    Raises :class:`TableError` naming a variable the table lacks, or a response
    that is neither a column nor one of the computed outcomes.
    """
    text = DEFAULT_FORMULA if formula is None else formula
    f = parse_formula(text)
    cols = list(columns)
    missing = [v for v in f.variables if v not in cols]
    if missing:
        raise TableError(
            f"formula {text!r} names column(s) {', '.join(map(repr, missing))} that the table "
            f"lacks; it has {', '.join(map(repr, cols))}."
        )
    if f.response not in cols and f.response not in _COMPUTED:
        raise TableError(
            f"formula {text!r}: the response {f.response!r} is not a column of the "
            f"table and not one of {', '.join(_COMPUTED)} (computed)."
        )
    return [c for c in (f.response, *f.variables) if c in cols]


def gee_loaded(
    t: pd.DataFrame,
    formula: str | None = None,
    cluster: str = "item",
    *,
    ps: PromptSets | None = None,
    levels: Mapping[str, Sequence[object]] | None = None,
    drop_separated: bool = True,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> GEEResult:
    """:func:`gee` on a table already checked by ``load`` that keeps the formula's columns."""
    text = DEFAULT_FORMULA if formula is None else formula
    f = parse_formula(text)
    if cluster not in CLUSTERS:
        raise ValueError(f"cluster must be 'item' or 'model_item', not {cluster!r}.")
    user_columns = set(formula_columns(t.columns, text))
    y_all = _response(t, f.response, user_columns, ps)
    notes: list[str] = []

    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    perturbed = (t["category"] != REFERENCE).to_numpy()
    var_missing = np.zeros(len(t), dtype=bool)
    for v in f.variables:
        var_missing |= t[v].isna().to_numpy()
    n_invalid = int((perturbed & ~valid).sum())
    use = perturbed & valid & ~np.isnan(y_all) & ~var_missing
    if n_invalid:
        notes.append(f"{n_invalid} invalid rows (valid == False) were excluded.")
    n_orig = int((~perturbed).sum())
    if n_orig:
        notes.append(
            f"{n_orig} rows of category 'original' (the reference prompt) are not "
            "part of the model."
        )
    single = np.zeros(len(t), dtype=bool)
    if f.response == "agree" and f.response not in user_columns:
        sets = ps or prompt_sets(t)
        single = perturbed & valid & (sets.maj.n[sets.group] < MIN_SET)
        if single.any():
            notes.append(
                f"{int(single.sum())} rows are the only valid answer of their prompt "
                "set, where agreement is undefined; they were excluded (see the flip "
                "rate for those categories)."
            )
    n_other = int((perturbed & valid & ~use & ~single).sum())
    if n_other:
        notes.append(
            f"{n_other} valid rows without a value of the response or of a formula "
            "variable were excluded."
        )
    if not use.any():
        raise TableError("no valid rows of a perturbation category are left to model.")

    data = t.loc[use].reset_index(drop=True)
    y = y_all[use]
    factors = [v for v in f.variables if _is_factor(data, v)]
    user_levels = dict(levels or {})
    terms = list(f.terms)
    dropped_terms: list[str] = []
    separation = pd.DataFrame(columns=SEPARATION_COLUMNS)
    keep = np.ones(len(data), dtype=bool)
    for _ in range(len(terms) + 2):
        sub = data.loc[keep, factors]
        flat = [v for v in factors if sub[v].nunique() < 2]
        gone = [t_ for t_ in terms if any(v in flat for v in t_)]
        if gone:
            for t_ in gone:
                terms.remove(t_)
                dropped_terms.append(":".join(t_))
            for v in flat:
                vals = pd.unique(sub[v])
                notes.append(
                    f"{v!r} takes the single value {vals[0]!r} in the fitted rows, so "
                    f"the term(s) {', '.join(':'.join(g) for g in gone if v in g)} "
                    "cannot vary and were dropped."
                )
        ysub = y[keep]
        if ysub.min() == ysub.max():
            raise TableError(
                f"the response {f.response!r} is {int(ysub[0])} on every fitted row; "
                "there is nothing to model."
            )
        k2, cells = find_separation(ysub, sub, terms)
        if cells.empty:
            break
        if not drop_separated:
            first = cells.iloc[0]
            raise TableError(
                f"separation: in cell {first['cell']} of term {first['term']!r} the response "
                f"is always {first['value']} ({first['n_rows']} rows); refit with "
                "drop_separated=True to set such cells aside."
            )
        separation = pd.concat([separation, cells], ignore_index=True)
        idx = np.flatnonzero(keep)
        keep[idx[~k2]] = False
    if not separation.empty:
        n_sep = int(len(data) - keep.sum())
        listed = "; ".join(f"{r.term} [{r.cell}] all {r.value}" for r in separation.itertuples())
        notes.append(
            f"separation: {len(separation)} cell(s) with a constant response were set "
            f"aside with their {n_sep} rows before the fit: {listed}."
        )
    data = data.loc[keep].reset_index(drop=True)
    y = y[keep]
    fit_formula = Formula(f.text, f.response, f.variables, tuple(terms))
    lev = {v: _levels_of(data[v], user_levels.get(v), v) for v in factors}

    # Distinct design rows (with dataset_type and category kept for the marginal means).
    grid_vars = list(dict.fromkeys([*f.variables, "dataset_type", "category"]))
    row_u, grid = codes(data, grid_vars)
    x_full, names, term_of = build_design(fit_formula, grid, lev, "treatment")
    keep_cols = independent_columns(x_full)
    aliased = [n for n, k in zip(names, keep_cols, strict=True) if not k]
    if aliased:
        notes.append(
            f"{len(aliased)} design column(s) are not estimable from the fitted rows "
            f"and were dropped (aliased): {', '.join(aliased)}."
        )
    x = x_full[:, keep_cols]
    kept_names = [n for n, k in zip(names, keep_cols, strict=True) if k]
    kept_terms = np.asarray(term_of)[keep_cols]

    cl_code, cl_keys = codes(data, list(CLUSTERS[cluster]))
    n_u = len(grid)
    cell, cell_inv = np.unique(cl_code * n_u + row_u, return_inverse=True)
    cell_inv = cell_inv.ravel()
    cell_n = np.bincount(cell_inv, minlength=cell.size).astype(float)
    cell_ys = np.bincount(cell_inv, weights=y, minlength=cell.size)
    cell_y2 = np.bincount(cell_inv, weights=y * y, minlength=cell.size)
    raw = fit_exchangeable(
        x,
        cell // n_u,
        cell % n_u,
        cell_n,
        cell_ys,
        cell_y2,
        len(cl_keys),
        tol=tol,
        max_iter=max_iter,
    )
    if not raw.converged:
        notes.append(
            f"the GEE did not converge in {raw.iterations} iterations (last step "
            f"{raw.max_step:.3g}); treat its numbers with care."
        )

    if raw.not_positive_definite:
        size = int(np.ceil(1 - 1 / raw.alpha))  # 1 - a + n a <= 0 from this n on (a < 0)
        notes.append(
            f"alpha = {raw.alpha:.4g} is so negative that the exchangeable working "
            f"correlation is not positive definite for clusters of {size} or more "
            "rows; as geepack does, the fit goes on (the robust covariance stays "
            "valid), but consider cluster='model_item'."
        )
    # The same fit in sum-to-zero coding: the column spaces agree, so b_sum = A b.
    xs_full, names_s, term_of_s = build_design(fit_formula, grid, lev, "sum")
    keep_s = independent_columns(xs_full)
    xs = xs_full[:, keep_s]
    a_map, *_ = np.linalg.lstsq(xs, x, rcond=None)
    b_sum = a_map @ raw.params
    v_sum = a_map @ raw.cov_robust @ a_map.T
    names_s = [n for n, k in zip(names_s, keep_s, strict=True) if k]

    n_cl = np.bincount(cl_code)
    grid = grid.assign(
        n=np.bincount(row_u, minlength=n_u), y_sum=np.bincount(row_u, weights=y, minlength=n_u)
    )
    return GEEResult(
        formula=text,
        response=f.response,
        cluster=cluster,
        terms=terms,
        params=pd.Series(raw.params, index=kept_names),
        cov=pd.DataFrame(raw.cov_robust, index=kept_names, columns=kept_names),
        params_sum=pd.Series(b_sum, index=names_s),
        cov_sum=pd.DataFrame(v_sum, index=names_s, columns=names_s),
        cov_naive=pd.DataFrame(raw.cov_naive, index=kept_names, columns=kept_names),
        alpha=raw.alpha,
        scale=raw.scale,
        n_obs=len(data),
        n_clusters=len(cl_keys),
        max_cluster_size=int(n_cl.max()),
        iterations=raw.iterations,
        converged=raw.converged,
        notes=notes,
        separation=separation,
        dropped_terms=dropped_terms,
        aliased=aliased,
        levels=lev,
        grid=grid,
        grid_x=x,
        _term_of=kept_terms,
        _term_of_sum=np.asarray(term_of_s)[keep_s],
    )
