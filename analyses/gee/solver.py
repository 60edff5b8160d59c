"""Solver of the binomial-logit GEE on aggregated cells, plain or bias-reduced.

Model (Liang & Zeger 1986): for cluster i with n_i rows, E[y_ij] = mu_ij =
expit(x_ij' b), Var(y_ij) = phi a_ij with a = mu (1 - mu), and working
covariance V_i = phi A_i^{1/2} R_i(alpha) A_i^{1/2}; R_i = (1 - alpha) I +
alpha 1 1' (exchangeable) or I (independence).  b solves

    U(b) = sum_i X_i' A_i^{1/2} R_i^{-1} A_i^{-1/2} (y_i - mu_i) = 0       (1)

(that is sum_i D_i' V_i^{-1} (y_i - mu_i) with D_i = A_i X_i; phi cancels),
alpha and phi are the moment estimates on Pearson residuals r = (y - mu) / sqrt(a),

    phi   = sum r^2 / (N - ddof_scale)
    alpha = [sum_i sum_{j<k} r_ij r_ik / phi] / sum_i n_i (n_i - 1) / 2,

and the robust (sandwich) covariance is B^{-1} M B^{-1} with
B = sum_i X_i' A_i^{1/2} R_i^{-1} A_i^{1/2} X_i and M = sum_i u_i u_i', u_i the
cluster's term of (1).  These are geepack's ``geeglm(family = binomial)`` and
statsmodels' ``GEE(..., ddof_scale=0)`` estimates.

Bias reduction (Firth 1993; Kosmidis & Firth 2009; for GEE Mondol & Rahman 2019)
replaces (1) by the adjusted equation

    U*(b) = U(b) + A(b) = 0,     A_r(b) = (1/2) tr(B(b)^{-1} dB(b)/db_r),           (2)

the score of the penalised objective with penalty (1/2) log det B -- Jeffreys'
prior of the working model.  For independence, B = X' W X is the binomial
Fisher information and (2) is Firth's logistic regression,
U* = sum_j x_j (y_j - mu_j + h_j (1/2 - mu_j)) with h the hat values: R's
``glm(..., method = "brglmFit", type = "AS_mean")`` (brglm2).  For the
exchangeable structure B is the model-based information of the working model
with phi = 1 (the binomial variance), alpha is the same moment estimate
recomputed from the current b at every iteration and held fixed when B is
differentiated.  Writing s = sqrt(a), g_i = sum_j s_ij x_ij and
R^{-1} = c1 (I - c2_i 1 1') with c1 = 1 / (1 - alpha),
c2_i = alpha / (1 - alpha + n_i alpha) (Sherman-Morrison),

    A(b) = (1/2) sum_ij (1 - 2 mu_ij) w_ij x_ij,
    w_ij = c1 [a_ij x_ij' B^{-1} x_ij - c2_i s_ij x_ij' B^{-1} g_i].

A solution of (2) is finite even when a cell of the design is separated (all 0
or all 1): the penalty goes to -infinity as any fitted probability goes to 0 or
1.  The sandwich keeps the bread B and the meat of the unadjusted u_i (A is
O(1) against U's O(N), so the first-order covariance is unchanged).

Every sum above reduces to sums over (cluster, distinct design row) cells, since mu
depends on a row only through its design row: exact, and an iteration costs
O(cells x p + clusters x p^2).

References
----------
Liang, K.-Y. & Zeger, S. L. (1986). Longitudinal data analysis using generalized
linear models. Biometrika 73(1), 13-22.
Firth, D. (1993). Bias reduction of maximum likelihood estimates. Biometrika 80(1), 27-38.
Kosmidis, I. & Firth, D. (2009). Bias reduction in exponential family nonlinear
models. Biometrika 96(4), 793-804.
Mondol, M. H. & Rahman, M. S. (2019). Bias-reduced and separation-proof GEE with
small or sparse longitudinal binary data. Statistics in Medicine 38(14), 2544-2560.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.special import expit

from analyses.gee.design import ModelDesign
from analyses.table_input import codes
from robustness.core.errors import AnalysisError

__all__ = [
    "CORSTRS",
    "Cells",
    "SolverFit",
    "aggregate_cells",
    "row_cells",
    "solve_gee",
    "solver_notes",
]

CORSTRS = ("exchangeable", "independence")


@dataclass(frozen=True)
class Cells:
    """A long table aggregated into (cluster, distinct design row) cells.

    ``x`` holds the U distinct design rows (U x p, full column rank); for each
    cell, ``cluster`` (0..C-1, sorted) and ``row`` (0..U-1) say where it lies,
    ``n``, ``ysum`` and ``y2sum`` hold its row count, sum of y and sum of y^2.
    """

    x: np.ndarray
    cluster: np.ndarray
    row: np.ndarray
    n: np.ndarray
    ysum: np.ndarray
    y2sum: np.ndarray
    n_clusters: int


@dataclass(frozen=True)
class SolverFit:
    """Raw output of :func:`solve_gee`: coefficients, covariances and the fit's state."""

    params: np.ndarray
    cov_robust: np.ndarray
    cov_naive: np.ndarray
    alpha: float
    scale: float
    iterations: int
    converged: bool
    max_step: float
    not_positive_definite: bool = False
    bias_reduced: bool = False
    #: B^{-1} (the bread, phi = 1) and the clusters' score contributions u_i (C x p), for
    #: the covariance step (:mod:`analyses.gee.covariance`).
    bread: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)), repr=False)
    scores: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)), repr=False)


def _start(x: np.ndarray, n: np.ndarray, ys: np.ndarray, iters: int = 50) -> np.ndarray:
    """Binomial GLM (independence) on grouped rows, from smoothed logits: the usual start."""
    p_hat = np.clip((ys + 0.5) / (n + 1.0), 1e-6, 1 - 1e-6)
    beta = np.linalg.lstsq(x, np.log(p_hat / (1 - p_hat)), rcond=None)[0]
    for _ in range(iters):
        mu = np.clip(expit(x @ beta), 1e-12, 1 - 1e-12)
        w = n * mu * (1 - mu)
        z = x @ beta + (ys - n * mu) / w
        xtw = x.T * w
        new = np.linalg.solve(xtw @ x, xtw @ z)
        if not np.all(np.isfinite(new)) or np.max(np.abs(new)) > 30:
            break  # separated: stay with the last finite start
        if np.max(np.abs(new - beta)) < 1e-12:
            return new
        beta = new
    return beta


def solve_gee(
    cells: Cells,
    *,
    corstr: str = "exchangeable",
    bias_reduction: bool = False,
    tol: float = 1e-10,
    max_iter: int = 100,
    ddof_scale: int = 0,
    start: np.ndarray | None = None,
) -> SolverFit:
    """Solve the binomial-logit GEE (1) or its bias-reduced form (2) by Fisher scoring.

    Parameters
    ----------
    cells
        The aggregated table (:class:`Cells`).
    corstr
        ``'exchangeable'`` or ``'independence'``.
    bias_reduction
        Solve the adjusted equation (2) instead of (1).
    tol, max_iter
        Convergence when the largest change of a coefficient is below ``tol``.
    ddof_scale
        phi = sum r^2 / (N - ddof_scale); 0 matches geepack.
    start
        Starting coefficients (default: the independence GLM from smoothed logits).

    Returns
    -------
    SolverFit
        ``params``, ``cov_robust`` (sandwich), ``cov_naive`` (phi B^{-1}), ``alpha``,
        ``scale`` (phi), ``iterations``, ``converged``, ``max_step``,
        ``not_positive_definite`` (alpha so negative that R is not positive definite
        for the largest cluster) and ``bias_reduced``.

    Notes
    -----
    The update is b <- b + B^{-1} U*(b) (quasi-Fisher scoring, as brglm2 and
    geepack step), with alpha and phi re-estimated from b before each step.
    The equations are in the module docstring.

    References
    ----------
    Liang & Zeger (1986); Firth (1993); Mondol & Rahman (2019): see the module.

    Examples
    --------
    Grouped logistic data, independence: the plain solution is statsmodels' GLM.

    >>> import numpy as np, statsmodels.api as sm
    >>> x = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> ys = np.array([3.0, 5.0, 8.0])
    >>> one = np.arange(3)
    >>> fit = solve_gee(Cells(x, one, one, np.full(3, 10.0), ys, ys, 3), corstr="independence")
    >>> glm = sm.GLM(np.c_[ys, 10 - ys], x, family=sm.families.Binomial()).fit()
    >>> bool(np.allclose(fit.params, glm.params, rtol=1e-10))
    True

    With a separated row (10 of 10), the bias-reduced estimate is finite; for a
    saturated logistic model Firth's estimate is the logit of (y + 1/2) / (n + 1).

    >>> two = np.arange(2)
    >>> sep = Cells(x[:2], two, two, np.full(2, 10.0), np.array([3.0, 10.0]),
    ...             np.array([3.0, 10.0]), 2)
    >>> br = solve_gee(sep, corstr="independence", bias_reduction=True)
    >>> p = np.array([3.5, 10.5]) / 11
    >>> bool(np.allclose(np.cumsum(br.params), np.log(p / (1 - p)), rtol=1e-10))
    True
    """
    if corstr not in CORSTRS:
        raise AnalysisError(f"corstr must be one of {', '.join(CORSTRS)}, not {corstr!r}.")
    x = cells.x
    U, C = x.shape[0], int(cells.n_clusters)
    cl, row, cn = cells.cluster, cells.row, cells.n
    n_row = np.bincount(row, weights=cn, minlength=U)
    ys_row = np.bincount(row, weights=cells.ysum, minlength=U)
    n_cl = np.bincount(cl, weights=cn, minlength=C)
    n_obs = float(n_cl.sum())
    pairs_total = float(np.sum(n_cl * (n_cl - 1)) / 2.0)
    indptr = np.r_[0, np.cumsum(np.bincount(cl, minlength=C))]
    exchangeable = corstr == "exchangeable"

    def by_cluster(values: np.ndarray) -> sp.csr_matrix:
        return sp.csr_matrix((values, row, indptr), shape=(C, U))

    beta = _start(x, n_row, ys_row) if start is None else np.asarray(start, float).copy()

    def state(b: np.ndarray):
        mu = np.clip(expit(x @ b), 1e-15, 1 - 1e-15)
        a = mu * (1 - mu)
        s = np.sqrt(a)
        mu_c, a_c, s_c = mu[row], a[row], s[row]
        res_c = cells.ysum - cn * mu_c  # sum of (y - mu)
        ssr_c = (cells.y2sum - 2 * mu_c * cells.ysum + cn * mu_c * mu_c) / a_c  # sum r^2
        e_cl = np.bincount(cl, weights=res_c / s_c, minlength=C)
        ssr_cl = np.bincount(cl, weights=ssr_c, minlength=C)
        phi = ssr_cl.sum() / (n_obs - ddof_scale)
        alpha = 0.0
        if exchangeable and pairs_total:
            alpha = (np.sum(e_cl * e_cl - ssr_cl) / 2.0 / phi) / pairs_total
        denom = 1 - alpha + n_cl * alpha
        if alpha >= 1 or np.any(denom == 0):
            raise FloatingPointError(
                f"the exchangeable correlation estimate alpha = {alpha:.4g} makes the working "
                "correlation of a cluster singular; try cluster='model_item'."
            )
        c1 = 1.0 / (1.0 - alpha)
        c2 = alpha / denom
        g = by_cluster(cn * s_c) @ x  # C x p: sum of a^{1/2} x per cluster
        h = by_cluster(res_c) @ x  # C x p: sum of (y - mu) x per cluster
        bmat = c1 * ((x.T * (n_row * a)) @ x - (g.T * c2) @ g)
        u = c1 * (h - g * (c2 * e_cl)[:, None])  # per-cluster score contributions
        adj = np.zeros(x.shape[1])
        if bias_reduction:
            binv = np.linalg.inv(bmat)
            q = np.einsum("uj,jk,uk->u", x, binv, x)  # x' B^-1 x per design row
            gb = g @ binv  # C x p
            xgb = np.einsum("cj,cj->c", x[row], gb[cl])  # x' B^-1 g_i per cell
            w_c = c1 * (a_c * q[row] - c2[cl] * s_c * xgb)
            per_row = np.bincount(row, weights=cn * (1 - 2 * mu_c) * w_c, minlength=U)
            adj = np.asarray(0.5 * (x.T @ per_row), dtype=np.float64)
        return bmat, u, adj, alpha, phi

    converged = False
    it = 0
    step = np.inf
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        bmat, u, adj, alpha, phi = state(beta)
        delta = np.linalg.solve(bmat, u.sum(axis=0) + adj)
        big = np.max(np.abs(delta)) if delta.size else 0.0
        if bias_reduction and big > 5:  # damp early steps from a poor start
            delta = delta * (5 / big)
        beta = beta + delta
        step = float(np.max(np.abs(delta))) if delta.size else 0.0
        if not np.isfinite(step):
            break
        if step < tol:
            converged = True
            break
    bmat, u, adj, alpha, phi = state(beta)
    binv = np.linalg.inv(bmat)
    robust = binv @ (u.T @ u) @ binv
    robust = (robust + robust.T) / 2
    not_pd = bool(np.any(1 - alpha + n_cl * alpha <= 0))
    return SolverFit(
        beta,
        robust,
        binv * phi,
        float(alpha),
        float(phi),
        it,
        converged,
        step,
        not_pd,
        bool(bias_reduction),
        bread=binv,
        scores=np.asarray(u),
    )


def aggregate_cells(
    data: pd.DataFrame, y: np.ndarray, design: ModelDesign, cluster: Sequence[str]
) -> tuple[Cells, np.ndarray]:
    """Sum the rows into (cluster, design row) cells; also return each cluster's size.

    Parameters
    ----------
    data
        The fitted rows (with the cluster columns).
    y
        Their 0/1 response.
    design
        :func:`build_model_design` of the rows.
    cluster
        The columns whose values name a row's cluster (rows with equal values are one
        cluster, wherever they lie in the table).

    Returns
    -------
    (Cells, numpy.ndarray)
        The cells (design, cluster and design-row codes, counts n, sums of y and y^2)
        and the number of rows of each cluster.

    Notes
    -----
    Exact: mu depends on a row only through its design row, so every sum of the
    estimating equations is a sum over cells of counts times per-row values.
    """
    cl_code, cl_keys = codes(data, list(cluster))
    n_u = len(design.grid)
    cell, inv = np.unique(cl_code * n_u + design.row_of, return_inverse=True)
    inv = inv.ravel()
    cells = Cells(
        x=design.x,
        cluster=cell // n_u,
        row=cell % n_u,
        n=np.bincount(inv, minlength=cell.size).astype(float),
        ysum=np.bincount(inv, weights=y, minlength=cell.size),
        y2sum=np.bincount(inv, weights=y * y, minlength=cell.size),
        n_clusters=len(cl_keys),
    )
    return cells, np.bincount(cl_code)


def row_cells(x: np.ndarray, y: np.ndarray, cluster: np.ndarray) -> tuple[Cells, np.ndarray]:
    """Row-level data as :class:`~analyses.gee.solver.Cells` (one cell per row, by cluster).

    Parameters
    ----------
    x
        Design matrix, N x p.
    y
        0/1 response, N.
    cluster
        Cluster labels, N (any hashable values; clusters are taken by value).

    Returns
    -------
    (Cells, numpy.ndarray)
        The cells sorted by cluster (stable) and the row order used.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    _, code = np.unique(np.asarray(cluster), return_inverse=True)
    order = np.argsort(code.ravel(), kind="stable")
    n_rows = len(order)
    cells = Cells(
        x=x[order],
        cluster=code.ravel()[order],
        row=np.arange(n_rows),
        n=np.ones(n_rows),
        ysum=y[order],
        y2sum=y[order] ** 2,
        n_clusters=int(code.max()) + 1 if n_rows else 0,
    )
    return cells, order


def solver_notes(raw: SolverFit) -> list[str]:
    """Sentences on a fit that did not converge or whose working correlation is not valid.

    Parameters
    ----------
    raw
        The solver's fit.

    Returns
    -------
    list of str
        A note when it did not converge, and one when alpha makes the exchangeable
        working correlation not positive definite (1 + (n - 1) alpha <= 0 for clusters of
        n >= 1 - 1 / alpha rows).
    """
    notes = []
    if not raw.converged:
        notes.append(
            f"the GEE did not converge in {raw.iterations} iterations (last step "
            f"{raw.max_step:.3g}); its Wald tests, marginal means and contrasts are withheld."
        )
    if raw.not_positive_definite:
        size = int(np.ceil(1 - 1 / raw.alpha))  # 1 - a + n a <= 0 from this n on (a < 0)
        notes.append(
            f"alpha = {raw.alpha:.4g} is so negative that the exchangeable working "
            f"correlation is not positive definite for clusters of {size} or more "
            "rows; as geepack does, the fit goes on (the robust covariance stays "
            "valid), but consider cluster='model_item'."
        )
    return notes
