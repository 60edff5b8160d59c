"""Design matrices from a formula, coded the way R's ``model.matrix`` codes them.

A factor in a term is coded by contrasts when the term without that factor is
also in the model (the intercept stands for the empty term), and by one
indicator per level otherwise; columns of an interaction run with the first
variable varying fastest.  ``coding='treatment'`` is R's ``contr.treatment``
(first level is the reference; columns named ``modelm2``), ``coding='sum'`` is
``contr.sum`` (the last level is minus the sum of the others; columns named
``model1``, ``model2`` ...).  Numeric variables enter as they are.

Only the distinct design rows are ever built: a long table has few of them
(models x dataset types x categories), and every GEE quantity is a weighted sum
over them (see :mod:`analyses.gee.fit`).  Aliased columns are found the way R's
pivoted QR finds them: a column is dropped when it lies in the span of the
columns before it.

References
----------
Chambers, J. M. & Hastie, T. J. (1992). Statistical Models in S, ch. 2 (model
matrices and contrasts); R's ``model.matrix`` and ``contr.treatment`` / ``contr.sum``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analyses.gee.formula import Formula
from analyses.table_input import codes
from robustness.core.errors import AnalysisError

__all__ = ["ModelDesign", "build_design", "build_model_design", "independent_columns", "sum_coded"]


def _coding_matrix(levels: Sequence[object], kind: str) -> tuple[np.ndarray, list[str]]:
    n = len(levels)
    if kind == "indicator":
        return np.eye(n), [str(v) for v in levels]
    if kind == "treatment":
        return np.eye(n)[:, 1:], [str(v) for v in levels[1:]]
    if kind == "sum":
        m = np.vstack([np.eye(n - 1), -np.ones((1, n - 1))])
        return m, [str(k + 1) for k in range(n - 1)]
    raise AnalysisError(f"unknown coding {kind!r}; use 'treatment' or 'sum'.")


def build_design(
    formula: Formula,
    rows: pd.DataFrame,
    levels: Mapping[str, Sequence[object]],
    coding: str = "treatment",
) -> tuple[np.ndarray, tuple[str, ...], tuple[int, ...]]:
    """The design matrix of ``rows`` (any values, usually the distinct ones).

    Parameters
    ----------
    formula
        The parsed formula.
    rows
        One row per observation (or per distinct combination) with the variables.
    levels
        The ordered levels of each factor; variables not in it are numeric.
    coding
        ``'treatment'`` or ``'sum'``.

    Returns
    -------
    (X, names, term_of)
        The n x p matrix, the column names as R writes them, and the term index of
        each column (-1 for the intercept).

    Notes
    -----
    An interaction column is the product of its variables' coded columns, the first
    variable varying fastest: x_{(j1, j2)} = c1_{j1} c2_{j2}.

    References
    ----------
    Chambers & Hastie (1992), ch. 2.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses.gee.formula import parse_formula
    >>> rows = pd.DataFrame({"a": ["p", "q"], "b": ["u", "v"]})
    >>> x, names, _ = build_design(parse_formula("y ~ a * b"), rows,
    ...                            {"a": ["p", "q"], "b": ["u", "v"]})
    >>> names, x.tolist()
    (('(Intercept)', 'aq', 'bv', 'aq:bv'), [[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    """
    term_sets = [frozenset(t) for t in formula.terms]
    present: set[frozenset[str]] = {frozenset()} | set(term_sets)
    n = len(rows)
    blocks = [np.ones((n, 1))]
    names = ["(Intercept)"]
    term_of = [-1]
    for ti, term in enumerate(formula.terms):
        cols = np.ones((n, 1))
        cnames = [""]
        for var in term:  # first variable varies fastest
            if var in levels:
                lev = list(levels[var])
                kind = coding if frozenset(term) - {var} in present else "indicator"
                mat, labels = _coding_matrix(lev, kind)
                index = pd.Index(lev)
                code = index.get_indexer(rows[var].to_numpy(dtype=object))
                if (code < 0).any():
                    bad = rows[var].to_numpy(dtype=object)[np.flatnonzero(code < 0)[0]]
                    raise AnalysisError(f"value {bad!r} of {var!r} is not among its levels.")
                block = mat[code]
                labels = [f"{var}{lab}" for lab in labels]
            else:
                block = rows[var].to_numpy(dtype=float)[:, None]
                labels = [var]
            # new column (j_var, j_prev) with the previous columns varying fastest
            cols = (cols[:, None, :] * block[:, :, None]).reshape(n, -1)
            cnames = [f"{p}:{lab}" if p else lab for lab in labels for p in cnames]
        blocks.append(cols)
        names.extend(cnames)
        term_of.extend([ti] * len(cnames))
    return np.hstack(blocks), tuple(names), tuple(term_of)


def independent_columns(x: np.ndarray, tol: float = 1e-7) -> np.ndarray:
    """Keep a column unless it lies in the span of the kept columns before it (R's rule).

    Parameters
    ----------
    x
        A design matrix (rows x columns).
    tol
        Relative tolerance of the residual norm.

    Returns
    -------
    numpy.ndarray
        Boolean mask over the columns: True for the kept (estimable) ones.

    Notes
    -----
    Gram-Schmidt with one re-orthogonalisation: column j is kept when the norm of its
    residual on the kept columns exceeds ``tol`` times its own norm.

    References
    ----------
    R's ``qr(x, LAPACK = FALSE)`` (LINPACK ``dqrdc2``, limited column pivoting).

    Examples
    --------
    >>> import numpy as np
    >>> independent_columns(np.array([[1.0, 1, 2], [1, 0, 1]])).tolist()
    [True, True, False]
    """
    p = x.shape[1]
    keep = np.zeros(p, dtype=bool)
    basis = np.zeros((x.shape[0], 0))
    for j in range(p):
        col = x[:, j]
        norm = np.linalg.norm(col)
        if norm == 0:
            continue
        resid = col - basis @ (basis.T @ col) if basis.shape[1] else col
        # re-orthogonalise once for accuracy
        if basis.shape[1]:
            resid = resid - basis @ (basis.T @ resid)
        rn = np.linalg.norm(resid)
        if rn > tol * norm:
            keep[j] = True
            basis = np.hstack([basis, (resid / rn)[:, None]])
    return keep


@dataclass(frozen=True)
class ModelDesign:
    """The design of the distinct rows: kept columns, names, terms, aliasing."""

    grid: pd.DataFrame
    row_of: np.ndarray
    x: np.ndarray
    names: list[str]
    term_of: np.ndarray
    full_names: tuple[str, ...]
    aliased: list[str]
    null_basis: np.ndarray


def _null_basis(x: np.ndarray, tol: float = 1e-8) -> np.ndarray:
    """Orthonormal basis of the null space of x (p x k): the non-estimable directions."""
    if x.size == 0:
        return np.zeros((x.shape[1], 0))
    _, s, vt = np.linalg.svd(x, full_matrices=True)
    rank = int(np.sum(s > tol * s.max())) if s.size else 0
    return vt[rank:].T


def build_model_design(
    f: Formula, data: pd.DataFrame, levels: Mapping[str, Sequence[object]]
) -> ModelDesign:
    """Treatment-coded design of the distinct rows of ``data`` over the formula's variables.

    Parameters
    ----------
    f
        The parsed formula (its terms as fitted).
    data
        The fitted rows.
    levels
        Factor -> levels (the first is the reference).

    Returns
    -------
    ModelDesign
        ``grid`` (distinct rows), ``row_of`` (each row's grid row), ``x`` (kept
        columns), their ``names`` and ``term_of``, all ``full_names``, the
        ``aliased`` names and the ``null_basis`` of the full design (used to check
        that a marginal mean is estimable).

    Notes
    -----
    A column is aliased when it lies in the span of the columns before it (R's
    pivoted-QR rule, :func:`independent_columns`).
    """
    row_of, grid = codes(data, list(f.variables))
    x_full, names, term_of = build_design(f, grid, levels, "treatment")
    keep = independent_columns(x_full)
    return ModelDesign(
        grid=grid,
        row_of=row_of,
        x=x_full[:, keep],
        names=[n for n, k in zip(names, keep, strict=True) if k],
        term_of=np.asarray(term_of)[keep],
        full_names=tuple(names),
        aliased=[n for n, k in zip(names, keep, strict=True) if not k],
        null_basis=_null_basis(x_full),
    )


def sum_coded(
    f: Formula,
    design: ModelDesign,
    levels: Mapping[str, Sequence[object]],
    params: np.ndarray,
    cov: np.ndarray,
) -> tuple[pd.Series, pd.DataFrame, np.ndarray]:
    """The same fit in sum-to-zero coding: b_sum = A b, V_sum = A V A' with X_sum A = X.

    Parameters
    ----------
    f, design, levels
        The formula, the treatment-coded design and the levels of the fit.
    params, cov
        The fit's coefficients and robust covariance (treatment coding).

    Returns
    -------
    (params_sum, cov_sum, term_of_sum)
        The sum-coded coefficients (Series by name), their robust covariance (DataFrame)
        and each coefficient's term index.

    Notes
    -----
    The two codings span the same column space, so A solves X_sum A = X exactly.
    """
    xs_full, names_s, term_of_s = build_design(f, design.grid, levels, "sum")
    keep = independent_columns(xs_full)
    a_map, *_ = np.linalg.lstsq(xs_full[:, keep], design.x, rcond=None)
    names = [n for n, k in zip(names_s, keep, strict=True) if k]
    return (
        pd.Series(a_map @ params, index=names),
        pd.DataFrame(a_map @ cov @ a_map.T, index=names, columns=names),
        np.asarray(term_of_s)[keep],
    )
