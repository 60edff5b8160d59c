"""Small-sample cluster-robust covariances and reference distributions for the binomial GEE.

The plain sandwich V_R = B^{-1} (sum_i u_i u_i') B^{-1} of :mod:`analyses.gee.solver`
is biased downward when there are few clusters: each cluster's residuals are
shrunk towards zero by its own leverage.  This module gives, as array-level
functions on the aggregated cells of :class:`analyses.gee.solver.Cells` (a row-level
data set is a set of cells with one row each, :func:`row_cells`):

Notation: cluster i has bread contribution B_i = D_i' V_i^{-1} D_i and score
u_i = D_i' V_i^{-1} (y_i - mu_i), B = sum_i B_i, D_i = A_i X_i, A_i = diag(mu (1 - mu)),
V_i = A_i^{1/2} R_i(alpha) A_i^{1/2} (phi cancels from every formula below).

``bias_reduced`` -- Mancl & DeRouen (2001), eq. (7)
    V_MD = B^{-1} [sum_i D_i' V_i^{-1} (I - H_ii)^{-1} e_i e_i' (I - H_ii)^{-T} V_i^{-1} D_i] B^{-1}
    with H_ii = D_i B^{-1} D_i' V_i^{-1}, for any working correlation (statsmodels'
    ``GEE.fit(cov_type="bias_reduced")``).  By the push-through identity and
    Woodbury's formula, D_i' V_i^{-1} (I - H_ii)^{-1} e_i = B (B - B_i)^{-1} u_i, so

        V_MD = sum_i (B - B_i)^{-1} u_i u_i' (B - B_i)^{-1},                       (1)

    a leave-one-cluster-out form that needs only p x p matrices per cluster.
``cr2`` -- Bell & McCaffrey (2002); Pustejovsky & Tipton (2018), eq. (5)-(6)
    For the independence working model, as clubSandwich's ``vcovCR(glm, type = "CR2")``
    computes it (target Phi_i = A_i, weights W_i = A_i^{-1}, inverse-variance case):
    with Theta_i = A_i^{1/2}, G_i = Theta_i (I - H_ii) A_i Theta_i' and the adjustment
    M_i = Theta_i' G_i^{-1/2} Theta_i,

        V_CR2 = B^{-1} [sum_i X_i' M_i e_i e_i' M_i X_i] B^{-1}.                      (2)

    Rows of a cluster that share a design row (a cell) share mu, so G_i acts on the
    span of the cell indicators through the k_i x k_i matrix
    Gamma_i = diag(a) (I - Q_i B^{-1} Q_i') diag(a), Q_i = diag(sqrt(n a)) X_i (one row
    per cell), and X_i' M_i e_i = Q_i' Gamma_i^{-1/2} (sqrt(a / n) * (y - mu)-sums): exact.
``F`` reference -- F(q, G - p)
    F = W / q against F(q, G - p), G clusters, p coefficients (clubSandwich's
    ``"Naive-Fp"``; Fay & Graubard 2001 argue for G - p denominator df).
``HTZ`` -- Pustejovsky & Tipton (2018), section 3.2, eq. (14)-(16)
    The Wald statistic Q = (Cb)' (C V_CR2 C')^{-1} (Cb) is referred to Hotelling's T^2
    with eta degrees of freedom matched to the working-model moments of C V_CR2 C':
    with Omega = E(C V_CR2 C') under the working model and the q x q blocks
    P_jk = Omega^{-1/2} [delta_jk C M E_j Phi_j E_j' M C' - C M E_j D_j M D_k' E_k' M C']
    Omega^{-1/2} (M = B^{-1}, E_j = X_j' M_j),

        eta = q (q + 1) / sum_{s,t} sum_{j,k} (P_jk[s,t] P_jk[t,s] + P_jk[s,s] P_jk[t,t]),
        F = (eta - q + 1) / (eta q) Q  ~  F(q, eta - q + 1).

References
----------
Mancl, L. A. & DeRouen, T. A. (2001). A covariance estimator for GEE with improved
small-sample properties. Biometrics 57(1), 126-134.
Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear
regression with multi-stage samples. Survey Methodology 28(2), 169-181.
Pustejovsky, J. E. & Tipton, E. (2018). Small-sample methods for cluster-robust
variance estimation and hypothesis testing in fixed effects models. Journal of
Business & Economic Statistics 36(4), 672-683.
Fay, M. P. & Graubard, B. I. (2001). Small-sample adjustments for Wald-type tests using
sandwich estimators. Biometrics 57(4), 1198-1206.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import expit

from analyses.gee.solver import Cells, row_cells
from analyses.gee.wald import RANK_TOL, wald_test
from robustness.core.errors import AnalysisError

__all__ = [
    "COV_TYPES",
    "TESTS",
    "CR2Parts",
    "ClusterParts",
    "SmallSampleTest",
    "cluster_parts",
    "cr2_parts",
    "f_test",
    "htz_test",
    "mancl_derouen_cov",
    "row_cells",
    "sandwich_cov",
]

COV_TYPES = ("robust", "bias_reduced", "cr2")
TESTS = ("chi2", "F", "HTZ")

#: The default covariance and reference distribution of every fit, chosen by measured size
#: (``bench/gee_size.py``, README "Size"): closest to 0.05 at 12 items per dataset on the
#: worse of ``dataset_type`` and ``dataset_type:category`` (0.072 and 0.072 against the plain
#: sandwich's 0.096 and 0.139); ``cov_type="robust", test="chi2"`` is geepack + car.


class CorrectionUndefined(AnalysisError):
    """A small-sample covariance that does not exist for this design (see the message)."""


DEFAULT_COV_TYPE = "bias_reduced"
DEFAULT_TEST = "F"
_EIG_TOL = 1e-12  # clubSandwich's matrix_power: eigenvalues at or below it count as zero


@dataclass(frozen=True)
class ClusterParts:
    """Per-cluster pieces of the sandwich: ``bread`` B, ``bread_i`` (C x p x p), ``score_i``."""

    bread: np.ndarray
    bread_i: np.ndarray
    score_i: np.ndarray

    @property
    def n_clusters(self) -> int:
        """Number of clusters G."""
        return int(self.score_i.shape[0])


def _cell_state(cells: Cells, params: np.ndarray):
    mu = np.clip(expit(cells.x @ np.asarray(params, float)), 1e-15, 1 - 1e-15)
    mu_c = mu[cells.row]
    a_c = mu_c * (1 - mu_c)
    return mu_c, a_c, cells.x[cells.row], cells.ysum - cells.n * mu_c


def cluster_parts(
    cells: Cells, params: np.ndarray, alpha: float = 0.0, corstr: str = "exchangeable"
) -> ClusterParts:
    """B_i = D_i' V_i^{-1} D_i and u_i = D_i' V_i^{-1} (y_i - mu_i) per cluster, at b and alpha.

    Parameters
    ----------
    cells
        The aggregated data (clusters 0..G-1).
    params
        Coefficients b (p).
    alpha
        Exchangeable correlation (ignored for independence).
    corstr
        ``'exchangeable'`` or ``'independence'``.

    Returns
    -------
    ClusterParts
        ``bread`` (sum of B_i), ``bread_i`` and ``score_i``.

    Notes
    -----
    With s = sqrt(a), R_i^{-1} = c1 (I - c2_i 1 1'), c1 = 1 / (1 - alpha),
    c2_i = alpha / (1 - alpha + n_i alpha), g_i = sum_j s_ij x_ij and
    e_i = sum_j (y_ij - mu_ij) / s_ij:
    B_i = c1 (sum_j a_ij x_ij x_ij' - c2_i g_i g_i'),
    u_i = c1 (sum_j (y_ij - mu_ij) x_ij - c2_i e_i g_i) (Liang & Zeger 1986).
    """
    alpha = float(alpha) if corstr == "exchangeable" else 0.0
    n_clusters = int(cells.n_clusters)
    _, a_c, x_c, res_c = _cell_state(cells, params)
    s_c = np.sqrt(a_c)
    cl = cells.cluster
    p = x_c.shape[1]
    n_cl = np.bincount(cl, weights=cells.n, minlength=n_clusters)
    c1 = 1.0 / (1.0 - alpha)
    c2 = alpha / (1.0 - alpha + n_cl * alpha)
    g = np.zeros((n_clusters, p))
    np.add.at(g, cl, (cells.n * s_c)[:, None] * x_c)
    h = np.zeros((n_clusters, p))
    np.add.at(h, cl, res_c[:, None] * x_c)
    e = np.bincount(cl, weights=res_c / s_c, minlength=n_clusters)
    xax = np.zeros((n_clusters, p, p))
    np.add.at(xax, cl, (cells.n * a_c)[:, None, None] * x_c[:, :, None] * x_c[:, None, :])
    bread_i = c1 * (xax - c2[:, None, None] * g[:, :, None] * g[:, None, :])
    score_i = c1 * (h - (c2 * e)[:, None] * g)
    return ClusterParts(bread_i.sum(axis=0), bread_i, score_i)


def sandwich_cov(parts: ClusterParts) -> np.ndarray:
    """The plain sandwich B^{-1} (sum_i u_i u_i') B^{-1} (geepack's ``std.err = "san.se"``).

    Parameters
    ----------
    parts
        :func:`cluster_parts`.

    Returns
    -------
    numpy.ndarray
        p x p covariance.
    """
    binv = np.linalg.inv(parts.bread)
    out = binv @ (parts.score_i.T @ parts.score_i) @ binv
    return (out + out.T) / 2


def mancl_derouen_cov(parts: ClusterParts) -> np.ndarray:
    """Mancl & DeRouen's bias-reduced sandwich, eq. (1) of the module docstring.

    Parameters
    ----------
    parts
        :func:`cluster_parts` of the fit (any working correlation).

    Returns
    -------
    numpy.ndarray
        p x p covariance sum_i (B - B_i)^{-1} u_i u_i' (B - B_i)^{-1}.

    Raises
    ------
    AnalysisError
        When B - B_i is singular: cluster i alone identifies a coefficient, so
        I - H_ii is singular and the correction does not exist.

    References
    ----------
    Mancl & DeRouen (2001), eq. (7); statsmodels ``GEE.fit(cov_type="bias_reduced")``.
    """
    loo = parts.bread[None, :, :] - parts.bread_i
    try:
        adjusted = np.linalg.solve(loo, parts.score_i[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        bad = [i for i in range(parts.n_clusters) if np.linalg.matrix_rank(loo[i]) < loo.shape[1]]
        raise CorrectionUndefined(
            "the bias-reduced (Mancl-DeRouen) covariance does not exist: without cluster(s) "
            f"{bad[:5]} a coefficient is not identified (I - H_ii is singular)."
        ) from None
    out = adjusted.T @ adjusted
    return (out + out.T) / 2


@dataclass(frozen=True)
class CR2Parts:
    """CR2 pieces: ``cov`` (eq. 2), ``bread_inv`` M, per cluster the adjusted score
    E_j e_j (``score_adj``, G x p), E_j Phi_j E_j' (``e_phi_e``) and E_j D_j (``e_d``)."""

    cov: np.ndarray
    bread_inv: np.ndarray
    score_adj: np.ndarray
    e_phi_e: np.ndarray
    e_d: np.ndarray


def _inv_sqrt_psd(m: np.ndarray) -> np.ndarray:
    vals, vecs = np.linalg.eigh((m + m.T) / 2)
    keep = vals > _EIG_TOL
    powered = np.zeros_like(vals)
    powered[keep] = vals[keep] ** -0.5
    return (vecs * powered) @ vecs.T


def cr2_parts(cells: Cells, params: np.ndarray) -> CR2Parts:
    """Bell-McCaffrey CR2 covariance of an independence binomial-logit fit, eq. (2).

    Parameters
    ----------
    cells
        The aggregated data (clusters 0..G-1).
    params
        Coefficients b of the independence fit.

    Returns
    -------
    CR2Parts
        The covariance and the per-cluster pieces the HTZ test needs.

    Notes
    -----
    Per cluster, on its k cells: Q = diag(sqrt(n a)) X, F = Gamma^{-1/2} with
    Gamma = diag(a) (I - Q M Q') diag(a) (eigenvalues at or below 1e-12 set to zero,
    as clubSandwich's ``matrix_power``), E e = Q' F (sqrt(a / n) r), E Phi E' =
    Q' F diag(a^2) F Q and E D = Q' F diag(a) Q, r the cell sums of y - mu.

    References
    ----------
    Bell & McCaffrey (2002); Pustejovsky & Tipton (2018), eq. (5)-(6); clubSandwich
    ``vcovCR(glm_fit, cluster, type = "CR2")``.
    """
    _, a_c, x_c, res_c = _cell_state(cells, params)
    parts = cluster_parts(cells, params, corstr="independence")
    m = np.linalg.inv(parts.bread)
    n_clusters, p = parts.n_clusters, m.shape[0]
    bounds = np.r_[0, np.cumsum(np.bincount(cells.cluster, minlength=n_clusters))]
    if np.any(np.diff(cells.cluster) < 0):
        raise AnalysisError("cells must be sorted by cluster for the CR2 covariance.")
    score_adj = np.zeros((n_clusters, p))
    e_phi_e = np.zeros((n_clusters, p, p))
    e_d = np.zeros((n_clusters, p, p))
    for j in range(n_clusters):
        sl = slice(bounds[j], bounds[j + 1])
        n, a = cells.n[sl], a_c[sl]
        q_mat = np.sqrt(n * a)[:, None] * x_c[sl]
        gamma = a[:, None] * (np.eye(len(a)) - q_mat @ m @ q_mat.T) * a[None, :]
        qf = q_mat.T @ _inv_sqrt_psd(gamma)  # p x k
        score_adj[j] = qf @ (np.sqrt(a / n) * res_c[sl])
        e_phi_e[j] = (qf * a**2) @ qf.T
        e_d[j] = (qf * a) @ q_mat
    cov = m @ (score_adj.T @ score_adj) @ m
    return CR2Parts((cov + cov.T) / 2, m, score_adj, e_phi_e, e_d)


@dataclass(frozen=True)
class SmallSampleTest:
    """A Wald test with its reference distribution.

    ``chi2`` is the Wald statistic Q on ``dof`` = q directions (of ``n_constraints``
    rows of L); ``statistic`` is the F statistic (Q / q, or delta Q / q for HTZ) on
    (q, ``df_denom``); ``p_value`` its upper tail.
    """

    chi2: float
    statistic: float
    dof: int
    n_constraints: int
    df_denom: float
    p_value: float


def f_test(
    beta: np.ndarray, cov: np.ndarray, hypothesis: np.ndarray, n_clusters: int
) -> SmallSampleTest:
    """Wald test of L b = 0 referred to F(q, G - p).

    Parameters
    ----------
    beta, cov
        Coefficients (p) and a covariance (p x p).
    hypothesis
        L, k x p.
    n_clusters
        G.

    Returns
    -------
    SmallSampleTest
        F = W / q on (q, G - p), q = rank(L V L') (:func:`analyses.gee.wald.wald_test`);
        NaN p-value when G <= p (then NaN denominator df too) or q = 0.

    References
    ----------
    Fay & Graubard (2001); clubSandwich ``Wald_test(..., test = "Naive-Fp")``.
    """
    w = wald_test(beta, cov, hypothesis)
    df2 = float(n_clusters - len(beta))
    if w.dof == 0 or df2 <= 0:
        df2 = df2 if df2 > 0 else float("nan")
        return SmallSampleTest(w.chi2, float("nan"), w.dof, w.n_constraints, df2, float("nan"))
    fstat = w.chi2 / w.dof
    p = float(stats.f.sf(fstat, w.dof, df2))
    return SmallSampleTest(w.chi2, fstat, w.dof, w.n_constraints, df2, p)


def _full_rank_rows(hypothesis: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Rows spanning the directions of L V L' above RANK_TOL (as analyses.gee.wald keeps them)."""
    s = hypothesis @ cov @ hypothesis.T
    d = np.sqrt(np.clip(np.diag(s), 0, None))
    ok = d > 0
    if not ok.any():
        return hypothesis[:0]
    corr = s[np.ix_(ok, ok)] / np.outer(d[ok], d[ok])
    vals, vecs = np.linalg.eigh((corr + corr.T) / 2)
    keep = vals > RANK_TOL * max(vals.max(), 1.0)
    if keep.all():
        return hypothesis[ok]
    return vecs[:, keep].T @ (hypothesis[ok] / d[ok][:, None])


def htz_test(beta: np.ndarray, cr2: CR2Parts, hypothesis: np.ndarray) -> SmallSampleTest:
    """Pustejovsky & Tipton's HTZ test of L b = 0 with the CR2 covariance.

    Parameters
    ----------
    beta
        Coefficients (p) of the independence fit.
    cr2
        :func:`cr2_parts` of that fit.
    hypothesis
        L (here C), k x p; reduced to the rank of L V L' when that is deficient.

    Returns
    -------
    SmallSampleTest
        ``chi2`` Q, ``statistic`` delta Q / q, ``df_num`` q, ``df_denom`` eta - q + 1,
        ``p_value`` (NaN when eta - q + 1 <= 0 or q = 0).

    Notes
    -----
    eta from eq. (16) of the module docstring, computed without the G x G x q x q
    array: with g_j = Omega^{-1/2} C M E_j Phi_j E_j' M C' Omega^{-1/2}, h_j =
    Omega^{-1/2} C M E_j D_j L_M (L_M L_M' = M) and T[s,u,t,v] = sum_j h_j[s,u] h_j[t,v],
    the sum over j, k expands into sums over j of g and h h' and two contractions of T.

    References
    ----------
    Pustejovsky & Tipton (2018), section 3.2; clubSandwich ``Wald_test(..., test = "HTZ")``.
    """
    given = np.atleast_2d(np.asarray(hypothesis, float))
    c = _full_rank_rows(given, cr2.cov)
    q, k = c.shape[0], given.shape[0]
    if q == 0:
        return SmallSampleTest(0.0, float("nan"), 0, k, float("nan"), float("nan"))
    cb = c @ beta
    big_q = float(cb @ np.linalg.solve(c @ cr2.cov @ c.T, cb))
    cm = c @ cr2.bread_inv  # q x p
    l_m = np.linalg.cholesky(cr2.bread_inv)
    gg = np.einsum("sa,jab,tb->jst", cm, cr2.e_phi_e, cm)
    hh_raw = np.einsum("sa,jab,bu->jsu", cm, cr2.e_d, l_m)
    omega = gg.sum(axis=0) - np.einsum("jsu,jtu->st", hh_raw, hh_raw)
    root = _inv_sqrt_psd(omega)
    g = np.einsum("sa,jab,tb->jst", root, gg, root)
    h = np.einsum("sa,jau->jsu", root, hh_raw)
    hh = np.einsum("jsu,jtu->jst", h, h)
    t = np.einsum("jsu,jtv->sutv", h, h)
    cross = np.einsum("jst,jts->st", g, g) - 2 * np.einsum("jst,jst->st", g, hh)
    cross += np.einsum("sutv,tusv->st", t, t)
    dg, dh = np.einsum("jss->js", g), np.einsum("jss->js", hh)
    square = np.einsum("js,jt->st", dg, dg) - np.einsum("js,jt->st", dg, dh)
    square += -np.einsum("js,jt->st", dh, dg) + np.einsum("sutv,sutv->st", t, t)
    eta = q * (q + 1) / float(np.sum(cross + square))
    delta = max((eta - q + 1) / eta, 0.0)
    fstat = delta * big_q / q
    df2 = eta - q + 1
    p = float(stats.f.sf(fstat, q, df2)) if df2 > 0 else float("nan")
    return SmallSampleTest(big_q, fstat, q, k, df2, p)
