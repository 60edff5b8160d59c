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

References
----------
Liang, K.-Y. & Zeger, S. L. (1986). Longitudinal data analysis using generalized linear
models. Biometrika 73(1), 13-22.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from analyses.gee.solver import Cells, SolverFit
from robustness.core.errors import AnalysisError

__all__ = ["COV_TYPES", "CovarianceStep", "covariance", "sandwich"]

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


COV_TYPES: dict[str, CovarianceStep] = {"robust": sandwich}


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
