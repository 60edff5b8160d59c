"""The reference distributions of :mod:`analyses.gee.small_sample` in the GEE fit.

Plumbing between :func:`analyses.gee.gee` and the array-level functions: which test a
``test`` names, the checks of its combination with ``cov_type`` (whose covariances are
the steps of :mod:`analyses.gee.covariance`), and the sentence that states both beside
every p-value.  The formulas
and references are in :mod:`analyses.gee.small_sample`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats

from analyses.gee.design import ModelDesign, build_design, independent_columns
from analyses.gee.formula import Formula
from analyses.gee.small_sample import (
    COV_TYPES,
    TESTS,
    CR2Parts,
    SmallSampleTest,
    f_test,
    htz_test,
)
from analyses.gee.wald import Tester
from robustness.core.errors import AnalysisError

__all__ = [
    "check_inference",
    "describe_inference",
    "one_direction_p",
    "sum_coding_map",
    "tester_for",
]

_COV_WORDS = {
    "robust": "plain sandwich covariance (geepack's)",
    "bias_reduced": "bias-reduced sandwich covariance (Mancl & DeRouen 2001)",
    "cr2": "CR2 sandwich covariance (Bell & McCaffrey 2002)",
}


def check_inference(cov_type: str, test: str, corstr: str) -> None:
    """Raise :class:`AnalysisError` for an unknown or impossible (cov_type, test, corstr).

    Parameters
    ----------
    cov_type, test, corstr
        As :func:`analyses.gee.gee`.

    Returns
    -------
    None
        CR2 needs the independence working model; HTZ needs CR2.
    """
    if cov_type not in COV_TYPES:
        raise AnalysisError(f"cov_type must be one of {', '.join(COV_TYPES)}, not {cov_type!r}.")
    if test not in TESTS:
        raise AnalysisError(f"test must be one of {', '.join(TESTS)}, not {test!r}.")
    if cov_type == "cr2" and corstr != "independence":
        raise AnalysisError(
            f"cov_type='cr2' is defined for corstr='independence', not {corstr!r}; "
            "use cov_type='bias_reduced' with an exchangeable working correlation."
        )
    if test == "HTZ" and cov_type != "cr2":
        raise AnalysisError(f"test='HTZ' needs cov_type='cr2', not {cov_type!r}.")


def sum_coding_map(
    f: Formula, design: ModelDesign, levels: Mapping[str, Sequence[object]]
) -> np.ndarray:
    """A with b_sum = A b (X_sum A = X), as :func:`analyses.gee.design.sum_coded` builds it.

    Parameters
    ----------
    f, design, levels
        The fit's formula, treatment-coded design and levels.

    Returns
    -------
    numpy.ndarray
        p x p map from treatment to sum-to-zero coefficients.
    """
    xs_full, _, _ = build_design(f, design.grid, levels, "sum")
    keep = independent_columns(xs_full)
    a_map, *_ = np.linalg.lstsq(xs_full[:, keep], design.x, rcond=None)
    return np.asarray(a_map)


def tester_for(
    test: str,
    beta: np.ndarray,
    n_clusters: int,
    cr2: CR2Parts | None,
    sum_map: np.ndarray | None = None,
) -> Tester | None:
    """The ``(b, V, L) -> test`` callable of :mod:`analyses.gee.wald` for a reference ``test``.

    Parameters
    ----------
    test
        ``'chi2'`` (None: :func:`analyses.gee.wald.wald_test`), ``'F'`` or ``'HTZ'``.
    beta
        Treatment-coded coefficients (HTZ works in their coordinates).
    n_clusters
        G.
    cr2
        The CR2 pieces (HTZ).
    sum_map
        A with b_sum = A b, when the hypotheses come in sum-to-zero coordinates
        (Type III): L_sum b_sum = (L_sum A) b.

    Returns
    -------
    callable or None
        The tester.
    """
    if test == "chi2":
        return None
    if test == "F":

        def f_tester(b: np.ndarray, v: np.ndarray, hyp: np.ndarray) -> SmallSampleTest:
            return f_test(b, v, hyp, n_clusters)

        return f_tester
    if cr2 is None:
        raise AnalysisError("test='HTZ' needs the CR2 pieces of the fit (cov_type='cr2').")

    def htz_tester(b: np.ndarray, v: np.ndarray, hyp: np.ndarray) -> SmallSampleTest:
        return htz_test(beta, cr2, hyp if sum_map is None else hyp @ sum_map)

    return htz_tester


def describe_inference(cov_type: str, test: str, n_clusters: int, n_params: int) -> str:
    """The sentence that states how a p-value was made.

    Parameters
    ----------
    cov_type, test
        As :func:`analyses.gee.gee`.
    n_clusters, n_params
        G and p (the F reference's denominator df is G - p).

    Returns
    -------
    str
        For example ``'plain sandwich covariance (geepack's), chi-square reference'``.
    """
    ref = {
        "chi2": "chi-square reference (normal for one coefficient)",
        "F": f"F(q, G - p = {n_clusters - n_params}) reference (t for one coefficient)",
        "HTZ": "HTZ reference (Pustejovsky & Tipton 2018: Hotelling T^2, estimated df)",
    }[test]
    return f"{_COV_WORDS[cov_type]}, {ref}"


def one_direction_p(
    test: str,
    z: float,
    direction: np.ndarray,
    n_clusters: int,
    cr2: CR2Parts | None = None,
    beta: np.ndarray | None = None,
) -> float:
    """Two-sided p-value of z = estimate / se along one direction g of the coefficients.

    Parameters
    ----------
    test
        ``'chi2'`` (normal), ``'F'`` (t with G - p df) or ``'HTZ'`` (t with the HTZ df of
        the constraint g'b, Pustejovsky & Tipton 2018; for q = 1 HTZ is a t test).
    z
        The statistic (a delta-method z for a nonlinear contrast, g its gradient).
    direction
        g (p).
    n_clusters
        G.
    cr2, beta
        The CR2 pieces and coefficients (HTZ).

    Returns
    -------
    float
        The p-value (NaN when z is not finite or the df is not positive).
    """
    if not np.isfinite(z):
        return float("nan")
    if test == "chi2":
        return float(2 * stats.norm.sf(abs(z)))
    if test == "F":
        df: float = float(n_clusters - direction.size)
    else:
        if cr2 is None or beta is None:
            raise AnalysisError("test='HTZ' needs the CR2 pieces of the fit (cov_type='cr2').")
        df = htz_test(beta, cr2, direction[None, :]).df_denom
    return float(2 * stats.t.sf(abs(z), df)) if df > 0 else float("nan")
