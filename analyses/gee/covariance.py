"""The covariance step of a GEE fit, chosen by name (``cov_type``, as statsmodels names it).

After the solver (:func:`analyses.gee.solver.solve_gee`) has found b, the covariance of b
is one function of the solved fit and the aggregated cells.  :data:`COV_TYPES` maps each
name to its function; :func:`analyses.gee.gee` takes ``cov_type=`` and records it in the
result, so every test states the covariance it used.  A small-sample correction is one
more entry here: a function ``(fit, cells) -> p x p matrix`` that sees the bread, the
clusters' scores and the cells (design rows, counts, cluster codes).

``'robust'``
    The sandwich of Liang & Zeger (1986), B^{-1} (sum_i u_i u_i') B^{-1}, with B the
    model-based information (phi = 1) and u_i cluster i's term of the estimating
    equation: geepack's ``vbeta`` and statsmodels' ``cov_type="robust"``.
``'bias_reduced'``
    Mancl & DeRouen (2001): sum_i (B - B_i)^{-1} u_i u_i' (B - B_i)^{-1}, any working
    correlation; statsmodels' ``cov_type="bias_reduced"``
    (:func:`analyses.gee.small_sample.mancl_derouen_cov`).
``'cr2'``
    Bell & McCaffrey (2002), independence working model only; clubSandwich's
    ``vcovCR(glm_fit, cluster, type = "CR2")`` (:func:`analyses.gee.small_sample.cr2_parts`).

References
----------
Liang, K.-Y. & Zeger, S. L. (1986). Longitudinal data analysis using generalized linear
models. Biometrika 73(1), 13-22.
Mancl, L. A. & DeRouen, T. A. (2001). Biometrics 57(1), 126-134.
Bell, R. M. & McCaffrey, D. F. (2002). Survey Methodology 28(2), 169-181.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from analyses.gee.small_sample import cluster_parts, cr2_parts, mancl_derouen_cov
from analyses.gee.solver import Cells, SolverFit
from robustness.core.errors import AnalysisError

__all__ = ["COV_TYPES", "CovarianceStep", "bias_reduced", "covariance", "cr2", "sandwich"]

#: A covariance step: the solved fit and its cells -> the covariance of the coefficients.
CovarianceStep = Callable[[SolverFit, Cells], np.ndarray]


def sandwich(fit: SolverFit, cells: Cells) -> np.ndarray:
    """The robust (sandwich) covariance B^{-1} M B^{-1}, M = sum_i u_i u_i'.

    Parameters
    ----------
    fit
        The solver's fit (its ``bread`` B^{-1} and ``scores`` u_i).
    cells
        The aggregated cells (unused: the plain sandwich needs only the scores).

    Returns
    -------
    numpy.ndarray
        The p x p covariance, symmetrised.

    Notes
    -----
    V = B^{-1} (sum_i u_i u_i') B^{-1} (Liang & Zeger 1986, eq. 2 of section 3).

    References
    ----------
    Liang & Zeger (1986).
    """
    del cells
    v = fit.bread @ (fit.scores.T @ fit.scores) @ fit.bread
    return np.asarray((v + v.T) / 2, dtype=float)


def bias_reduced(fit: SolverFit, cells: Cells) -> np.ndarray:
    """Mancl & DeRouen's bias-reduced sandwich at the fit's b and alpha.

    Parameters
    ----------
    fit, cells
        The solver's fit and its cells (alpha = 0 is the independence model).

    Returns
    -------
    numpy.ndarray
        sum_i (B - B_i)^{-1} u_i u_i' (B - B_i)^{-1} (p x p).

    Notes
    -----
    Mancl & DeRouen (2001), eq. (7), in the leave-one-cluster-out form of
    :mod:`analyses.gee.small_sample`, eq. (1).

    References
    ----------
    Mancl & DeRouen (2001).
    """
    return mancl_derouen_cov(cluster_parts(cells, fit.params, fit.alpha, "exchangeable"))


def cr2(fit: SolverFit, cells: Cells) -> np.ndarray:
    """Bell & McCaffrey's CR2 covariance of an independence fit.

    Parameters
    ----------
    fit, cells
        The solver's (independence) fit and its cells.

    Returns
    -------
    numpy.ndarray
        B^{-1} [sum_i X_i' M_i e_i e_i' M_i X_i] B^{-1} (p x p).

    Notes
    -----
    :mod:`analyses.gee.small_sample`, eq. (2); Pustejovsky & Tipton (2018), eq. (5)-(6).

    References
    ----------
    Bell & McCaffrey (2002).
    """
    return cr2_parts(cells, fit.params).cov


COV_TYPES: dict[str, CovarianceStep] = {
    "robust": sandwich,
    "bias_reduced": bias_reduced,
    "cr2": cr2,
}


def covariance(cov_type: str, fit: SolverFit, cells: Cells) -> np.ndarray:
    """The covariance of the coefficients by the step named ``cov_type``.

    Parameters
    ----------
    cov_type
        A key of :data:`COV_TYPES`.
    fit, cells
        The solver's fit and its cells.

    Returns
    -------
    numpy.ndarray
        The p x p covariance.

    Notes
    -----
    See the module docstring for each step's formula.

    References
    ----------
    Liang & Zeger (1986).
    """
    step = COV_TYPES.get(cov_type)
    if step is None:
        raise AnalysisError(
            f"cov_type must be one of {', '.join(map(repr, COV_TYPES))}, not {cov_type!r}."
        )
    return step(fit, cells)
