"""Wald chi-square tests per model term, Type II and Type III, as ``car::Anova`` defines them.

A term is tested by a linear hypothesis L b = 0 with the (robust) covariance V:

    W = (L b)' (L V L')^+ (L b),      dof = rank(L V L'),

where ^+ is the generalised inverse D^{-1/2} (D^{-1/2} S D^{-1/2})^+ D^{-1/2} of
S = L V L' (D = diag S, ^+ the Moore-Penrose inverse of the correlation matrix on
its eigenvalues above ``RANK_TOL``; the rest is numerical zero), and the rank is
the number of eigenvalues kept.
W is a sum of squares over those directions, so it is never negative; when
L V L' has full rank it is b_L' (L V L')^{-1} b_L, car's ``linearHypothesis``.

Type III
    L selects the term's columns, in sum-to-zero coding (``contr.sum``), so that a
    main effect is tested averaged over the levels of the factors it interacts
    with.  The intercept is tested too, as car does.
Type II
    The term's columns after the columns R of its higher-order relatives (the terms
    that contain it), made V-orthogonal to them: in the coordinates (term, R),
    L = [I, -V_TR V_RR^+], so that L V L' = V_TT - V_TR V_RR^+ V_RT (the Schur
    complement) and L b = b_T - V_TR V_RR^+ b_R.  This is car's construction (the
    conjugate complement of R in term + R) and equals the difference
    W(term + R) - W(R) whenever V is positive definite; unlike the difference it
    stays a non-negative quadratic form when V is singular or ill-conditioned.

Rank-deficient designs
    Aliased design columns (in the span of earlier ones, R's rule) are not in b: a
    term is tested on its estimable columns (car's ``not.aliased``).  The robust
    covariance has rank at most the number of clusters, so with fewer clusters than
    coefficients L V L' can be singular: the test is then made on the rank(L V L')
    directions it spans (dof reduced to that rank) and a note says so.  A term with
    no estimable column, or whose L V L' is zero, is withheld from the table with a
    note naming it and why: never a negative or NaN statistic.

References
----------
Fox, J. & Weisberg, S. (2019). An R Companion to Applied Regression, 3rd ed., ch. 5
(car::Anova, Type II and III tests).
Rao, C. R. & Mitra, S. K. (1971). Generalized Inverse of Matrices and its
Applications. Wiley (Wald statistics with a g-inverse).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["COLUMNS", "RANK_TOL", "WaldTest", "wald_test", "wald_type2", "wald_type3"]

COLUMNS = ["term", "dof", "chi2", "p_value"]
SMALL_SAMPLE_COLUMNS = ["F", "df_denom"]  # added after p_value when the reference is an F
RANK_TOL = 1e-9
Tester = Callable[[np.ndarray, np.ndarray, np.ndarray], Any]  # (b, V, L) -> a test result


@dataclass(frozen=True)
class WaldTest:
    """One Wald test: ``chi2`` on ``dof`` directions out of ``n_constraints``; ``p_value``."""

    chi2: float
    dof: int
    n_constraints: int
    p_value: float


def wald_test(beta: np.ndarray, cov: np.ndarray, hypothesis: np.ndarray) -> WaldTest:
    """Wald test of L b = 0 with a generalised inverse of L V L'.

    Parameters
    ----------
    beta, cov
        Coefficients (p) and their covariance (p x p).
    hypothesis
        L, k x p.

    Returns
    -------
    WaldTest
        ``chi2`` = (L b)' (L V L')^+ (L b) on ``dof`` = rank(L V L') degrees of
        freedom (0 and chi2 = 0 when the rank is 0), ``n_constraints`` = k, and the
        chi-square ``p_value`` (NaN when dof = 0).

    Notes
    -----
    With D = diag(L V L') and D^{-1/2} L V L' D^{-1/2} = Q diag(lambda) Q', the rank
    is the number of lambda above ``RANK_TOL`` and
    W = sum_k (q_k' D^{-1/2} L b)^2 / lambda_k over them.

    References
    ----------
    Rao & Mitra (1971); see the module docstring.

    Examples
    --------
    statsmodels' ``wald_test`` on the same full-rank hypothesis:

    >>> import numpy as np, statsmodels.api as sm
    >>> rng = np.random.default_rng(0)
    >>> x = sm.add_constant(rng.normal(size=(200, 3)))
    >>> y = x @ [1.0, 0.5, 0.0, -0.3] + rng.normal(size=200)
    >>> ols = sm.OLS(y, x).fit()
    >>> L = np.array([[0, 1.0, 0, 0], [0, 0, 1.0, 1.0]])
    >>> w = wald_test(ols.params, ols.cov_params(), L)
    >>> sm_w = ols.wald_test(L, use_f=False, scalar=True)
    >>> bool(np.isclose(w.chi2, sm_w.statistic, rtol=1e-10)), w.dof
    (True, 2)

    A singular covariance: the test is made on the one direction it spans.

    >>> wald_test(np.array([1.0, 1.0]), np.ones((2, 2)), np.eye(2)).dof
    1
    """
    L = np.atleast_2d(np.asarray(hypothesis, dtype=float))
    k = L.shape[0]
    if k == 0:
        return WaldTest(0.0, 0, 0, float("nan"))
    s = L @ cov @ L.T
    ginv = _pinv_psd(s)
    dof = round(float(np.trace(ginv @ s)))
    if dof == 0:
        return WaldTest(0.0, 0, k, float("nan"))
    lb = L @ beta
    chi2 = max(float(lb @ ginv @ lb), 0.0)
    return WaldTest(chi2, dof, k, float(stats.chi2.sf(chi2, dof)))


def _pinv_psd(v: np.ndarray) -> np.ndarray:
    """Generalised inverse D^{-1/2} (D^{-1/2} S D^{-1/2})^+ D^{-1/2} of a symmetric PSD S.

    D = diag(S); entries of D below 1e-14 max(D) count as zero variance, and the
    correlation matrix keeps its eigenvalues above ``RANK_TOL`` (it is scale-free,
    so the rank does not depend on the units of the columns).
    """
    if v.size == 0:
        return v
    v = (v + v.T) / 2
    d = np.diag(v).copy()
    top = float(d.max())
    live = d > 1e-14 * top if top > 0 else np.zeros(d.size, dtype=bool)
    out = np.zeros_like(v)
    if not live.any():
        return out
    r = 1.0 / np.sqrt(d[live])
    corr = v[np.ix_(live, live)] * r[:, None] * r[None, :]
    lam, q = np.linalg.eigh(corr)
    keep = lam > RANK_TOL
    inv = (q[:, keep] / lam[keep]) @ q[:, keep].T
    out[np.ix_(live, live)] = inv * r[:, None] * r[None, :]
    return out


def type2_hypothesis(cov: np.ndarray, own: np.ndarray, relatives: np.ndarray) -> np.ndarray:
    """L = [I, -V_TR V_RR^+] in full coordinates: the term's columns after its relatives'.

    ``own`` and ``relatives`` are column indices; the result is len(own) x p.
    """
    p = cov.shape[0]
    L = np.zeros((own.size, p))
    L[np.arange(own.size), own] = 1.0
    if relatives.size:
        v_tr = cov[np.ix_(own, relatives)]
        v_rr = cov[np.ix_(relatives, relatives)]
        L[:, relatives] = -v_tr @ _pinv_psd(v_rr)
    return L


def _table(rows: list[tuple[str, WaldTest | None, int]]) -> pd.DataFrame:
    """The Wald table over testable rows, with notes on the withheld and reduced ones."""
    out, notes = [], []
    for label, test, n_columns in rows:
        if test is None or test.dof == 0:
            why = (
                "all its design columns are aliased (not estimable from the fitted rows)"
                if n_columns == 0
                else "the robust covariance of its columns is zero (no direction to test)"
            )
            notes.append(f"Wald test of {label!r} withheld: {why}.")
            continue
        if test.dof < test.n_constraints:
            notes.append(
                f"Wald test of {label!r} on {test.dof} of its {test.n_constraints} estimable "
                "directions: the robust covariance is singular there (its rank is below the "
                "number of coefficients; covariance_rank says why), so dof is the rank tested."
            )
        row = {"term": label, "dof": test.dof, "chi2": test.chi2, "p_value": test.p_value}
        if hasattr(test, "df_denom"):  # an F reference (analyses.gee.small_sample)
            f_ref: Any = test
            row.update(F=f_ref.statistic, df_denom=f_ref.df_denom)
        out.append(row)
    small = any("F" in r for r in out)
    table = pd.DataFrame(out, columns=COLUMNS + (SMALL_SAMPLE_COLUMNS if small else []))
    table["dof"] = table["dof"].astype(int)
    table.attrs["notes"] = notes
    return table


def wald_type3(
    beta: np.ndarray,
    cov: np.ndarray,
    term_of: Sequence[int] | np.ndarray,
    labels: Sequence[str],
    intercept: bool = True,
    tester: Tester | None = None,
) -> pd.DataFrame:
    """Type III Wald chi-square per term (give sum-coded coefficients).

    Parameters
    ----------
    beta, cov
        Coefficients of the estimable columns and their covariance.
    term_of
        Term index of each coefficient (-1: the intercept).
    labels
        Term names, by term index.
    intercept
        Test the intercept as well (car does).
    tester
        ``(b, V, L) -> test`` (default :func:`wald_test`, chi-square); a small-sample
        reference from :mod:`analyses.gee.small_sample` adds the columns ``F, df_denom``.

    Returns
    -------
    pandas.DataFrame
        Columns ``term, dof, chi2, p_value``; ``attrs['notes']`` lists the withheld
        terms and the tests made on fewer directions than the term's columns.

    Notes
    -----
    W = b_T' (V_TT)^+ b_T over the term's columns T, dof = rank(V_TT).

    References
    ----------
    Fox & Weisberg (2019), ch. 5.

    Examples
    --------
    >>> import numpy as np
    >>> t = wald_type3(np.array([1.0, 2.0]), np.diag([1.0, 4.0]), [-1, 0], ["a"])
    >>> t.round(6).values.tolist()
    [['(Intercept)', 1, 1.0, 0.317311], ['a', 1, 1.0, 0.317311]]
    """
    term_of = np.asarray(term_of)
    p = term_of.size
    rows: list[tuple[str, WaldTest | None, int]] = []
    keys = ([(-1, "(Intercept)")] if intercept and (term_of == -1).any() else []) + list(
        enumerate(labels)
    )
    for k, label in keys:
        idx = np.flatnonzero(term_of == k)
        test = (tester or wald_test)(beta, cov, np.eye(p)[idx]) if idx.size else None
        rows.append((label, test, idx.size))
    return _table(rows)


def wald_type2(
    beta: np.ndarray,
    cov: np.ndarray,
    term_of: Sequence[int] | np.ndarray,
    terms: Sequence[Sequence[str]],
    tester: Tester | None = None,
) -> pd.DataFrame:
    """Type II Wald chi-square per term: its columns after those of its relatives.

    Parameters
    ----------
    beta, cov
        Coefficients of the estimable columns (treatment coding) and their covariance.
    term_of
        Term index of each coefficient (-1: the intercept).
    terms
        The terms, as tuples of variable names.
    tester
        As for :func:`wald_type3`.

    Returns
    -------
    pandas.DataFrame
        Columns ``term, dof, chi2, p_value``; ``attrs['notes']`` as for
        :func:`wald_type3`.

    Notes
    -----
    With T the term's columns and R its relatives' (terms containing it),
    W = (b_T - V_TR V_RR^+ b_R)' (V_TT - V_TR V_RR^+ V_RT)^+ (b_T - V_TR V_RR^+ b_R),
    which is W(T + R) - W(R) when V is positive definite.

    References
    ----------
    Fox & Weisberg (2019), ch. 5.

    Examples
    --------
    The difference construction on a positive definite V:

    >>> import numpy as np
    >>> b = np.array([0.5, 1.0, -2.0, 0.3])
    >>> v = np.diag([0.2, 0.5, 0.4, 0.3]) + 0.05
    >>> t = wald_type2(b, v, [-1, 0, 0, 1], [("a",), ("a", "b")]).set_index("term")
    >>> def w(i): return b[i] @ np.linalg.solve(v[np.ix_(i, i)], b[i])
    >>> bool(np.isclose(t.loc["a", "chi2"], w([1, 2, 3]) - w([3]), rtol=1e-12))
    True
    """
    term_of = np.asarray(term_of)
    sets = [frozenset(t) for t in terms]
    rows: list[tuple[str, WaldTest | None, int]] = []
    for k, term in enumerate(sets):
        own = np.flatnonzero(term_of == k)
        rel = [j for j, other in enumerate(sets) if j != k and term < other]
        rel_idx = np.flatnonzero(np.isin(term_of, rel))
        test = None
        if own.size:
            test = (tester or wald_test)(beta, cov, type2_hypothesis(cov, own, rel_idx))
        rows.append((":".join(terms[k]), test, own.size))
    return _table(rows)
