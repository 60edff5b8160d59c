"""Wald chi-square tests per model term, Type II and Type III, as ``car::Anova`` computes them.

For a set S of coefficients, W(S) = b_S' V_SS^{-1} b_S with V the (robust)
covariance; it is chi-square with |S| degrees of freedom under b_S = 0.

Type III
    W(columns of the term), with sum-to-zero coding (``contr.sum``) so that a
    main effect is tested averaged over the levels of the factors it interacts
    with.  The intercept is tested too, as car does.
Type II
    W(term + R) - W(R), with R the columns of the terms that contain the term
    (its higher-order relatives: for ``category`` in ``model + dataset_type *
    category + model:category`` these are ``dataset_type:category`` and
    ``model:category``).  This equals car's test of the term's columns made
    V-orthogonal to its relatives, because W over a union of V-orthogonal
    hypothesis blocks is the sum of the blocks' W.  df = the term's column count.

Only non-aliased columns enter (car's ``not.aliased``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

COLUMNS = ["term", "df", "chi2", "p_value"]


def wald_statistic(beta: np.ndarray, cov: np.ndarray, index: Sequence[int]) -> float:
    """W = b' V^{-1} b over the coefficients ``index`` (a pseudo-inverse if V is singular)."""
    idx = np.asarray(index, dtype=np.int64)
    if idx.size == 0:
        return 0.0
    b = beta[idx]
    v = cov[np.ix_(idx, idx)]
    try:
        sol = np.linalg.solve(v, b)
    except np.linalg.LinAlgError:
        sol = np.linalg.pinv(v) @ b
    return float(b @ sol)


def _row(label: str, df: int, chi2: float) -> dict[str, object]:
    p = float(stats.chi2.sf(chi2, df)) if df > 0 else float("nan")
    return {"term": label, "df": int(df), "chi2": float(chi2) if df > 0 else np.nan, "p_value": p}


def wald_type3(
    beta: np.ndarray,
    cov: np.ndarray,
    term_of: Sequence[int],
    labels: Sequence[str],
    intercept: bool = True,
) -> pd.DataFrame:
    """Type III Wald chi-square per term (use sum-coded coefficients).

    ``term_of[j]`` is the term index of coefficient j (-1: intercept);
    ``labels`` names the terms.
    """
    term_of = np.asarray(term_of)
    rows = []
    if intercept and (term_of == -1).any():
        idx = np.flatnonzero(term_of == -1)
        rows.append(_row("(Intercept)", idx.size, wald_statistic(beta, cov, idx)))
    for k, label in enumerate(labels):
        idx = np.flatnonzero(term_of == k)
        rows.append(_row(label, idx.size, wald_statistic(beta, cov, idx)))
    return pd.DataFrame(rows, columns=COLUMNS)


def wald_type2(
    beta: np.ndarray,
    cov: np.ndarray,
    term_of: Sequence[int],
    terms: Sequence[Sequence[str]],
) -> pd.DataFrame:
    """Type II Wald chi-square per term: W(term and relatives) - W(relatives)."""
    term_of = np.asarray(term_of)
    sets = [frozenset(t) for t in terms]
    rows = []
    for k, term in enumerate(sets):
        own = np.flatnonzero(term_of == k)
        rel = [j for j, other in enumerate(sets) if j != k and term < other]
        rel_idx = np.flatnonzero(np.isin(term_of, rel))
        both = np.concatenate([rel_idx, own])
        chi2 = wald_statistic(beta, cov, both) - wald_statistic(beta, cov, rel_idx)
        rows.append(_row(":".join(terms[k]), own.size, chi2))
    return pd.DataFrame(rows, columns=COLUMNS)
