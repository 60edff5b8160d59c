"""Cells of a binary outcome that are all 0 or all 1 (quasi-complete separation).

A logit model with a parameter for a cell in which the outcome never varies
has no finite estimate: the coefficient runs off to +-infinity and, in GEE,
the sandwich collapses to standard errors near 0 while the fit still reports
convergence.  Neither geepack nor statsmodels says so.  Before a fit, every
cell of every factor term of the formula (a level of ``model``; a
``model x category`` combination; ...) is checked, and the check repeats on the
rows of the cells not yet found (a coarser cell can be separated once a finer
one is accounted for).  The cells are reported by name; :func:`analyses.gee.gee`
keeps them in the model and solves the bias-reduced equation of
:mod:`analyses.gee.solver` instead (Firth 1993), so that every estimate is finite.

References
----------
Albert, A. & Anderson, J. A. (1984). On the existence of maximum likelihood
estimates in logistic regression models. Biometrika 71(1), 1-10.
Firth, D. (1993). Bias reduction of maximum likelihood estimates. Biometrika 80(1), 27-38.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analyses.table_input import codes
from robustness.core.errors import AnalysisError
from robustness.core.table import TableError

if TYPE_CHECKING:
    from analyses.gee.design import ModelDesign

__all__ = ["COLUMNS", "check_separation", "find_separation", "with_linear_separation"]

COLUMNS = ["term", "cell", "n_rows", "value"]


def find_separation(
    y: np.ndarray,
    factors: pd.DataFrame,
    terms: Sequence[Sequence[str]],
) -> tuple[np.ndarray, pd.DataFrame]:
    """The separated cells of a binary outcome, and the rows outside them.

    Parameters
    ----------
    y
        Binary outcome (0/1) per row.
    factors
        The factor columns of the formula for the same rows.
    terms
        Terms of the formula (tuples of variable names); terms with a variable
        that is not a column of ``factors`` (numeric covariates) are skipped.

    Returns
    -------
    (keep, cells)
        ``keep`` is a boolean mask over rows, False on the rows of separated cells;
        ``cells`` has columns ``term, cell, n_rows, value`` (``value`` is the
        constant outcome, 0 or 1).

    Notes
    -----
    A cell g of a term is separated when sum_{j in g} y_j is 0 or n_g
    (quasi-complete separation along that cell's indicator).

    References
    ----------
    Albert & Anderson (1984).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> f = pd.DataFrame({"model": list("aaaabbbb"), "category": list("xyxyxyxy")})
    >>> y = np.array([1, 0, 0, 1, 1, 1, 1, 1])          # model b always agrees
    >>> keep, cells = find_separation(y, f, [("model",), ("category",)])
    >>> cells.values.tolist(), keep.tolist()
    ([['model', 'model=b', 4, 1]], [True, True, True, True, False, False, False, False])
    """
    y = np.asarray(y, dtype=float)
    keep = np.ones(y.size, dtype=bool)
    found: list[dict[str, object]] = []
    seen: set[tuple[str, str]] = set()
    usable = [tuple(t) for t in terms if all(v in factors.columns for v in t)]
    while True:
        new = False
        idx = np.flatnonzero(keep)
        if idx.size == 0:
            break
        for term in usable:
            code, keys = codes(factors.iloc[idx], list(term))
            n = np.bincount(code, minlength=len(keys))
            s = np.bincount(code, weights=y[idx], minlength=len(keys))
            sep = np.flatnonzero((s == 0) | (s == n))
            if sep.size == 0:
                continue
            label = ":".join(term)
            for g in sep:
                cell = ", ".join(f"{v}={keys[v].iloc[g]}" for v in term)
                if (label, cell) in seen:
                    continue
                seen.add((label, cell))
                found.append(
                    {"term": label, "cell": cell, "n_rows": int(n[g]), "value": int(s[g] > 0)}
                )
            drop = np.isin(code, sep)
            keep[idx[drop]] = False
            new = True
            break  # recompute on the reduced rows before looking at the next term
        if not new:
            break
    return keep, pd.DataFrame(found, columns=COLUMNS)


def check_separation(
    y: np.ndarray,
    data: pd.DataFrame,
    factors: Sequence[str],
    terms: Sequence[tuple[str, ...]],
    response: str,
    bias_reduction: bool | str = "auto",
) -> tuple[pd.DataFrame, bool, list[str]]:
    """Find the separated cells and decide whether to solve the bias-reduced equation.

    Parameters
    ----------
    y
        The 0/1 response of the fitted rows.
    data
        The fitted rows.
    factors, terms
        The model's factors and terms.
    response
        The response's name (for the error).
    bias_reduction
        ``'auto'``, True or False (see Notes).

    Returns
    -------
    (cells, reduce, notes)
        The separated cells (``term, cell, n_rows, value``), whether the fit is
        bias-reduced, and a note naming the cells.

    Notes
    -----
    ``bias_reduction='auto'`` reduces bias exactly when a cell is separated; ``True``
    always; ``False`` never, and a separated cell is then an error (its coefficient
    would run to infinity).
    """
    if y.min() == y.max():
        raise TableError(
            f"the response {response!r} is {int(y[0])} on every fitted row; "
            "there is nothing to model."
        )
    _, cells = find_separation(y, data[list(factors)], terms)
    notes: list[str] = []
    if not cells.empty:
        if bias_reduction is False:
            first = cells.iloc[0]
            raise TableError(
                f"separation: in cell {first['cell']} of term {first['term']!r} the response "
                f"is always {first['value']} ({first['n_rows']} rows); refit with "
                "bias_reduction='auto' to keep such cells by a bias-reduced fit."
            )
        listed = "; ".join(f"{r.term} [{r.cell}] all {r.value}" for r in cells.itertuples())
        notes.append(
            f"separation: {len(cells)} cell(s) with a constant response: {listed}. They stay "
            "in the model: the whole model is fitted by the bias-reduced (Firth-type, "
            "Jeffreys-prior) estimating equation, which keeps every estimate finite."
        )
    reduce = bias_reduction is True or (bias_reduction == "auto" and not cells.empty)
    if bias_reduction not in (True, False, "auto"):
        raise AnalysisError(
            f"bias_reduction must be 'auto', True or False, not {bias_reduction!r}."
        )
    return cells.reset_index(drop=True), reduce, notes


def linear_separation(
    x: np.ndarray, n: np.ndarray, ysum: np.ndarray, names: Sequence[str]
) -> pd.DataFrame:
    """A linear combination of the design columns that separates the outcome, if any.

    Parameters
    ----------
    x
        The distinct design rows (U x p, full column rank).
    n, ysum
        Rows and sum of the 0/1 outcome per design row.
    names
        The design columns' names.

    Returns
    -------
    pandas.DataFrame
        Empty when no combination separates; otherwise one row (``term, cell, n_rows,
        value``): ``term`` the columns involved, ``cell`` the combination d' x (d scaled
        to a largest entry of 1), ``n_rows`` the rows with d' x != 0 and ``value`` their
        outcome (1, 0, or -1 when both signs occur).

    Notes
    -----
    The linear program of Konis (2007), as R's ``detectseparation`` solves it:
    maximise sum_i s_i x_i' d subject to s_i x_i' d >= 0 for every row i (s_i = 2 y_i - 1)
    and -1 <= d_j <= 1.  Rows with both outcomes force x_u' d = 0.  The optimum is 0
    unless the data are (quasi-)completely separated; any d with a positive value
    then has an infinite maximum-likelihood estimate along it (Albert & Anderson 1984).

    References
    ----------
    Albert & Anderson (1984); Konis, K. (2007). Linear programming algorithms for
    detecting separated data in binary logistic regression models. DPhil thesis,
    University of Oxford.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 0.0], [1.0, 1.0]])         # intercept, a 0/1 column
    >>> linear_separation(x, np.array([5.0, 3.0]), np.array([2.0, 3.0]), ["(Intercept)", "nv"])
    ... # doctest: +NORMALIZE_WHITESPACE
      term    cell  n_rows  value
    0   nv  1 * nv       3      1
    """
    from scipy.optimize import linprog

    ones, zeros = ysum, n - ysum
    both = (ones > 0) & (zeros > 0)
    s = np.where(ones > 0, 1.0, -1.0)
    pure = ~both
    a_ub = -(s[pure, None] * x[pure])  # s x' d >= 0
    weight = np.where(pure, n, 0.0)
    c = -(weight * s) @ x  # maximise sum over pure rows of n s x' d
    res = linprog(
        c,
        A_ub=a_ub if a_ub.size else None,
        b_ub=np.zeros(a_ub.shape[0]) if a_ub.size else None,
        A_eq=x[both] if both.any() else None,
        b_eq=np.zeros(int(both.sum())) if both.any() else None,
        bounds=[(-1.0, 1.0)] * x.shape[1],
        method="highs",
    )
    scale = float(np.sum(n) * max(np.abs(x).max(), 1.0))
    if res.status != 0 or -res.fun <= 1e-9 * scale:
        return pd.DataFrame(columns=COLUMNS)
    d = np.asarray(res.x)
    d = np.where(np.abs(d) > 1e-7 * np.abs(d).max(), d, 0.0) / np.abs(d).max()
    eta = x @ d
    hit = np.abs(eta) > 1e-7 * max(float(np.abs(eta).max()), 1.0)
    used = [nm for nm, v in zip(names, d, strict=True) if v != 0]
    cell = " + ".join(f"{v:.4g} * {nm}" for nm, v in zip(names, d, strict=True) if v != 0)
    outcomes = set(np.where(eta[hit] > 0, 1, 0).tolist()) if hit.any() else set()
    value = outcomes.pop() if len(outcomes) == 1 else -1
    row = {"term": ":".join(used), "cell": cell, "n_rows": int(n[hit].sum()), "value": value}
    return pd.DataFrame([row], columns=COLUMNS)


def with_linear_separation(
    design: ModelDesign, y: np.ndarray, cells: pd.DataFrame, bias_reduction: bool | str
) -> tuple[pd.DataFrame, list[str]]:
    """Add a separating linear combination (when no factor cell explains it) to ``cells``.

    Parameters
    ----------
    design
        The model's design of distinct rows (:func:`analyses.gee.design.build_model_design`).
    y
        The 0/1 response per row.
    cells
        The separated factor cells :func:`check_separation` found (empty when none).
    bias_reduction
        ``True`` (bias-reduced whatever), ``False`` (an error on separation) or ``'auto'``.

    Returns
    -------
    (DataFrame, list of str)
        ``cells`` unchanged when it has rows, when ``bias_reduction is True`` or when no
        combination separates the response; else the combination found by
        :func:`linear_separation` (:data:`COLUMNS`), with the note saying the whole model
        is fitted bias-reduced.
    """
    if not cells.empty or bias_reduction is True:
        return cells, []
    n = np.bincount(design.row_of, minlength=len(design.grid)).astype(float)
    ys = np.bincount(design.row_of, weights=y, minlength=len(design.grid))
    found = linear_separation(design.x, n, ys, design.names)
    if found.empty:
        return cells, []
    r = found.iloc[0]
    if bias_reduction is False:
        raise TableError(
            f"separation: the combination {r['cell']} separates the response ({r['n_rows']} "
            "rows); refit with bias_reduction='auto' to keep it by a bias-reduced fit."
        )
    note = (
        f"separation: the combination {r['cell']} of the design columns separates the "
        f"response ({r['n_rows']} rows; found by the linear program of R's "
        "detectseparation), so the plain estimate is infinite: the whole model is fitted by "
        "the bias-reduced (Firth-type) estimating equation, which keeps every estimate finite."
    )
    return found, [note]
