"""Cells of a binary outcome that are all 0 or all 1 (quasi-complete separation).

A logit model with a parameter for a cell in which the outcome never varies
has no finite estimate: the coefficient runs off to +-infinity and, in GEE,
the sandwich collapses to standard errors near 0 while the fit still reports
convergence.  Neither geepack nor statsmodels says so.  Before a fit, every
cell of every factor term of the formula (a level of ``model``; a
``model x category`` combination; ...) is checked; the rows of separated cells
are set aside and the check repeats until no cell is separated (setting rows
aside can separate a coarser cell).  The cells are reported by name.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses._data import codes

COLUMNS = ["term", "cell", "n_rows", "value"]


def find_separation(
    y: np.ndarray,
    factors: pd.DataFrame,
    terms: Sequence[Sequence[str]],
) -> tuple[np.ndarray, pd.DataFrame]:
    """Rows to keep and the separated cells.

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
        ``keep`` is a boolean mask over rows; ``cells`` has columns
        ``term, cell, n_rows, value`` (``value`` is the constant outcome, 0 or 1).

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
