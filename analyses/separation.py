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
:mod:`analyses.gee_solver` instead (Firth 1993), so that every estimate is finite.

References
----------
Albert, A. & Anderson, J. A. (1984). On the existence of maximum likelihood
estimates in logistic regression models. Biometrika 71(1), 1-10.
Firth, D. (1993). Bias reduction of maximum likelihood estimates. Biometrika 80(1), 27-38.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses.table_input import codes

__all__ = ["COLUMNS", "find_separation"]

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
