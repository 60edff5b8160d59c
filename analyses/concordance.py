"""Kendall's W: do the variants of a category rank the models alike?

The rankings the variants of one perturbation category give the models are m rankings
(variants are the judges) of n objects (the models).  :func:`kendall_w` is Kendall's
coefficient of concordance of such rankings, corrected for ties, with Friedman's
chi-square and a permutation p-value; :func:`ranking_concordance` computes it per dataset
type and category from :func:`analyses.ranking.model_ranks` output.  Split from
:mod:`analyses.ranking` (which re-exports both names).

References
----------
Kendall, M. G. & Babington Smith, B. (1939). The problem of m rankings. Annals of
Mathematical Statistics 10(3), 275-287.
Kendall, M. G. (1948). Rank Correlation Methods. Charles Griffin, London.
Friedman, M. (1937). The use of ranks to avoid the assumption of normality implicit in the
analysis of variance. Journal of the American Statistical Association 32(200), 675-701.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from analyses.table_input import REFERENCE

__all__ = ["CONCORDANCE_COLUMNS", "kendall_w", "ranking_concordance"]

CONCORDANCE_COLUMNS = [
    "dataset_type",
    "category",
    "n_models",
    "n_variants",
    "w",
    "friedman_chi2",
    "p_perm",
    "n_perm",
    "reason",
]


def kendall_w(
    scores: np.ndarray, n_perm: int = 2000, rng: np.random.Generator | None = None
) -> tuple[float, float, float]:
    """Kendall's W of m rankings of n objects, tie-corrected, with a permutation p-value.

    Parameters
    ----------
    scores
        (m judges, n objects) scores; each judge ranks its row (higher score = rank 1,
        ties share the average rank).
    n_perm
        Permutations (0: no p-value).
    rng
        Generator of the permutations (default: seed 0).

    Returns
    -------
    (w, friedman_chi2, p_perm)
        Kendall's W in [0, 1], Friedman's chi-square m (n - 1) W, and the permutation
        p-value (NaN when ``n_perm`` is 0); all NaN when every judge ties every object
        (W undefined).

    Notes
    -----
    R_i = sum_j r_ij, S = sum_i (R_i - m (n + 1) / 2)^2,
    W = 12 S / (m^2 (n^3 - n) - m sum_j T_j), T_j = sum over tie groups of (t^3 - t)
    (Kendall & Babington Smith 1939; the tie correction of Kendall 1948, eq. 6.9);
    Friedman's chi2 = m (n - 1) W.  p_perm = (1 + #{W_b >= W}) / (1 + B), each judge's
    ranks permuted independently (the null of no agreement).

    References
    ----------
    Kendall & Babington Smith (1939); Kendall (1948); Friedman (1937): see the module.

    Examples
    --------
    Three judges in perfect agreement on three objects:

    >>> w, chi2, p = kendall_w([[3, 2, 1], [3, 2, 1], [3, 2, 1]], n_perm=0)
    >>> float(w), float(chi2)
    (1.0, 6.0)

    Against pingouin's Friedman test (its W is Kendall's, tie-corrected), with a tie:

    >>> import pandas as pd, pingouin as pg
    >>> x = [[0.9, 0.7, 0.5, 0.6], [0.8, 0.8, 0.4, 0.5], [0.7, 0.9, 0.6, 0.3]]
    >>> w, chi2, _ = kendall_w(x, n_perm=0)
    >>> long = pd.DataFrame(x).reset_index().melt(id_vars="index", var_name="model")
    >>> ref = pg.friedman(long, dv="value", within="model", subject="index")
    >>> round(float(w), 4), round(float(ref["W"].iloc[0]), 4)
    (0.8391, 0.8391)
    >>> round(float(chi2), 4), round(float(ref["Q"].iloc[0]), 4)
    (7.5517, 7.5517)
    """
    x = np.asarray(scores, dtype=float)
    m, n = x.shape
    r = np.vstack([rankdata(-row, method="average") for row in x])
    ties = 0.0
    for row in r:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts**3 - counts).sum())
    denom = m**2 * (n**3 - n) - m * ties
    if denom <= 0:
        return np.nan, np.nan, np.nan

    def w_of(ranks: np.ndarray) -> np.ndarray:
        sums = ranks.sum(axis=-2)
        s = ((sums - m * (n + 1) / 2) ** 2).sum(axis=-1)
        return 12 * s / denom

    w = float(w_of(r))
    if n_perm <= 0:
        return w, m * (n - 1) * w, np.nan
    rng = rng if rng is not None else np.random.default_rng(0)
    perm = rng.permuted(np.broadcast_to(r, (n_perm, m, n)), axis=2)
    p = (1 + int((w_of(perm) >= w - 1e-12).sum())) / (1 + n_perm)
    return w, m * (n - 1) * w, p


def ranking_concordance(ranks: pd.DataFrame, n_perm: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Kendall's W of the model rankings across each category's variants.

    Parameters
    ----------
    ranks
        :func:`model_ranks` output.
    n_perm, seed
        Permutations of the p-value and their seed (one generator per row, spawned in
        row order from ``numpy.random.SeedSequence(seed)``).

    Returns
    -------
    pandas.DataFrame
        One row per dataset type and perturbation category: ``dataset_type, category``;
        ``n_models`` (objects) and ``n_variants`` (judges: the variants where every model
        has a score; others are left out); ``w`` (Kendall's W); ``friedman_chi2``
        (m (n - 1) W); ``p_perm`` (permutation p-value); ``n_perm``; ``reason`` (why W is
        missing, where it is; empty otherwise).

    Notes
    -----
    For each cell, :func:`kendall_w` of the (variants x models) score matrix:
    W = 12 S / (m^2 (n^3 - n) - m sum_j T_j) with S the squared deviations of the models'
    rank sums from m (n + 1) / 2 (Kendall & Babington Smith 1939).

    References
    ----------
    Kendall & Babington Smith (1939); Kendall (1948); Friedman (1937): see the module.

    Examples
    --------
    Two variants that rank three models alike, by hand W = 1:

    >>> import pandas as pd
    >>> from analyses.concordance import ranking_concordance
    >>> ranks = pd.DataFrame({"dataset_type": "objective", "category": "formatting",
    ...     "variant_id": ["f/0"] * 3 + ["f/1"] * 3, "model": ["a", "b", "c"] * 2,
    ...     "score": [0.9, 0.6, 0.3, 0.8, 0.5, 0.4]})
    >>> r = ranking_concordance(ranks, n_perm=0).iloc[0]
    >>> float(r["w"]), float(r["friedman_chi2"]), int(r["n_variants"]), int(r["n_models"])
    (1.0, 4.0, 2, 3)
    """
    rows: list[dict[str, object]] = []
    cells = ranks[ranks["category"] != REFERENCE].groupby(["dataset_type", "category"], sort=True)
    seeds = np.random.SeedSequence(seed).spawn(max(1, cells.ngroups))
    for (dtype, cat), g in cells:
        rng = np.random.default_rng(seeds[len(rows)])
        wide = g.pivot_table(index="variant_id", columns="model", values="score").dropna()
        m, n = wide.shape
        w = chi2 = p = np.nan
        reason = ""
        if n < 2:
            reason = "fewer than two models"
        elif m < 2:
            reason = "fewer than two variants with every model scored"
        else:
            w, chi2, p = kendall_w(wide.to_numpy(float), n_perm, rng)
            if np.isnan(w):
                reason = "every variant ties every model"
        rows.append(
            {
                "dataset_type": dtype,
                "category": cat,
                "n_models": n,
                "n_variants": m,
                "w": w,
                "friedman_chi2": chi2,
                "p_perm": p,
                "n_perm": n_perm,
                "reason": reason,
            }
        )
    return pd.DataFrame(rows, columns=CONCORDANCE_COLUMNS)
