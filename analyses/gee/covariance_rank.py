"""Why a GEE's robust covariance is singular: its rank, and the coefficients it cannot see.

The sandwich V = B^{-1} M B^{-1} with M = sum_c U_c U_c' (U_c: cluster c's score) has the
rank of M, at most min(p, number of clusters). With more clusters than coefficients it can
still be singular: a coefficient whose every cluster score is zero (the column of a cell
whose responses are all equal, where the fitted mean sits on the response and y - mu = 0,
or a column constant within clusters whose scores cancel) adds no direction. A Wald test
then runs on the directions V spans (:mod:`analyses.gee.wald`); :func:`covariance_rank` says how
many there are and which coefficients carry the missing ones, so a note can say what is true
instead of guessing at the cause.

References
----------
Liang, K.-Y. & Zeger, S. L. (1986). Longitudinal data analysis using generalized linear
models. Biometrika 73(1), 13-22.
Rao, C. R. & Mitra, S. K. (1971). Generalized Inverse of Matrices and its Applications.
Wiley.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyses.gee.wald import RANK_TOL

__all__ = ["RANK_COLUMNS", "covariance_rank"]

RANK_COLUMNS = ["n_coefficients", "n_clusters", "rank", "null_coefficients", "reason"]

#: A coefficient takes part in a null direction when its loading there is at least this.
LOADING = 0.3


def covariance_rank(cov: pd.DataFrame | np.ndarray, n_clusters: int) -> pd.DataFrame:
    """The rank of a robust covariance and the coefficients in the directions it lacks.

    Parameters
    ----------
    cov
        The robust covariance of the fitted coefficients (``GEEResult.cov``), p x p.
    n_clusters
        Clusters of the fit.

    Returns
    -------
    DataFrame
        One row: ``n_coefficients`` (p), ``n_clusters``, ``rank`` (the directions V spans),
        ``null_coefficients`` (the names, ``; ``-joined, of the coefficients with zero
        variance or a loading of at least 0.3 on a direction V lacks) and ``reason``: why
        the rank is below p, ``'fewer clusters than coefficients'`` only when that is so.

    Notes
    -----
    rank = #{eigenvalues of D^{-1/2} V D^{-1/2} above RANK_TOL} over the coefficients with
    d_j = V_jj > 1e-14 max_j V_jj (D = diag(d)); the others have zero variance and count as
    null. This is the rank the Wald tests use (:mod:`analyses.gee.wald`; Rao & Mitra 1971).

    References
    ----------
    Liang & Zeger (1986); Rao & Mitra (1971): see the module.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> names = ["a", "b", "c"]
    >>> v = pd.DataFrame(np.diag([1.0, 2.0, 0.0]), index=names, columns=names)
    >>> r = covariance_rank(v, n_clusters=10).iloc[0]
    >>> int(r["rank"]), r["null_coefficients"]
    (2, 'c')
    """
    names = list(cov.columns) if isinstance(cov, pd.DataFrame) else list(range(len(cov)))
    v = np.asarray(cov, dtype=float)
    p = v.shape[0]
    d = np.diag(v).copy()
    top = float(d.max()) if p else 0.0
    live = d > 1e-14 * top if top > 0 else np.zeros(p, dtype=bool)
    null = set(np.flatnonzero(~live).tolist())
    rank = 0
    if live.any():
        r = 1.0 / np.sqrt(d[live])
        corr = v[np.ix_(live, live)] * r[:, None] * r[None, :]
        lam, q = np.linalg.eigh(corr)
        rank = int((lam > RANK_TOL).sum())
        idx = np.flatnonzero(live)
        for k in np.flatnonzero(lam <= RANK_TOL):
            null.update(idx[np.abs(q[:, k]) >= LOADING].tolist())
    if rank == p:
        reason = ""
    elif n_clusters < p:
        reason = f"fewer clusters ({n_clusters}) than coefficients ({p})"
    else:
        reason = (
            f"{n_clusters} clusters for {p} coefficients, but {p - rank} direction(s) get no "
            "score from any cluster (cells whose responses are all equal, or columns whose "
            "scores cancel within every cluster)"
        )
    shown = "; ".join(str(names[j]) for j in sorted(null))
    return pd.DataFrame([[p, n_clusters, rank, shown, reason]], columns=RANK_COLUMNS)
