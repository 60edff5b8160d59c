"""Objective - subjective contrasts of estimated marginal means per category, as emmeans.

For each level c of ``by`` (the perturbation category): d_c = m(objective, c) -
m(subjective, c), the difference of the back-transformed marginal means of
:mod:`analyses.gee.emmeans`, with se from the gradient
m_o (1 - m_o) xbar_o - m_s (1 - m_s) xbar_s (V the fit's ``cov_type`` covariance);
z = d / se, two-sided p-values under the fit's reference (normal for ``test='chi2'``;
t(G - p) for ``'F'``; t with the HTZ df of the gradient for ``'HTZ'``), the normal
interval d -+ z se, and Holm's step-down adjustment over the categories:
``summary(pairs(regrid(emmeans(fit, ~ dataset_type | category))), by = NULL,
adjust = "holm")``.

References
----------
Lenth, R. V. (2024). emmeans: Estimated Marginal Means, aka Least-Squares Means.
R package; vignette "transformations" (regrid).
Holm, S. (1979). A simple sequentially rejective multiple test procedure.
Scandinavian Journal of Statistics 6(2), 65-70.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit
from statsmodels.stats.multitest import multipletests

from analyses.gee.emmeans import MeansModel, averaged_cells, is_estimable

__all__ = ["CONTRAST_COLUMNS", "type_contrasts"]

CONTRAST_COLUMNS = [
    "category",
    "objective",
    "subjective",
    "difference",
    "se",
    "z",
    "p_value",
    "p_holm",
    "ci_low",
    "ci_high",
]


def _p(fit: MeansModel, z: float, direction: np.ndarray) -> float:
    """The contrast's p-value under the fit's reference (:mod:`analyses.gee.inference`)."""
    from analyses.gee.inference import one_direction_p

    test = getattr(fit, "test", "chi2")
    cr2, beta = getattr(fit, "_cr2", None), fit.params.to_numpy()
    return one_direction_p(test, z, direction, int(getattr(fit, "n_clusters", 0)), cr2, beta)


def type_contrasts(fit: MeansModel, level: float = 0.95, by: str = "category") -> pd.DataFrame:
    """Objective - subjective difference of marginal means per ``by`` level, Holm-adjusted.

    Parameters
    ----------
    fit
        A fitted :class:`~analyses.gee.GEEResult` whose model has ``dataset_type``.
    level
        Confidence level of the (unadjusted) interval.
    by
        The factor the contrasts are made within.

    Returns
    -------
    pandas.DataFrame
        ``category, objective, subjective, difference, se, z, p_value, p_holm,
        ci_low, ci_high``.  Empty when ``dataset_type`` is not a factor of the
        model with two levels; a category whose mean is not estimable for a type is
        left out.

    Notes
    -----
    d = expit(eta_o) - expit(eta_s), grad d = m_o (1 - m_o) xbar_o - m_s (1 - m_s)
    xbar_s, se = sqrt(grad' V grad), p_holm by Holm's step-down rule.

    References
    ----------
    Lenth (2024), emmeans vignette "transformations" (``regrid``); Holm (1979).

    Examples
    --------
    >>> from analyses import gee
    >>> from analyses.synthetic import synthetic_table
    >>> c = gee(synthetic_table(models=2, n_items=15, seed=4)).contrasts()
    >>> mm = gee(synthetic_table(models=2, n_items=15, seed=4)).marginal_means()
    >>> mm = mm.set_index(["dataset_type", "category"])["estimate"]
    >>> r = c.iloc[0]
    >>> bool(abs(r.difference - (mm[("objective", r.category)]
    ...                          - mm[("subjective", r.category)])) < 1e-12)
    True
    """
    cols = [by if c == "category" else c for c in CONTRAST_COLUMNS]
    empty = pd.DataFrame(columns=cols)
    types = fit.levels.get("dataset_type", [])
    if by not in fit.levels or not {"objective", "subjective"} <= set(types):
        return empty
    est = {}
    for key, xbar, xbar_full, *_ in averaged_cells(fit, ("dataset_type", by)):
        if is_estimable(fit, xbar_full):
            m = float(expit(xbar @ fit.params.to_numpy()))
            est[key] = (m, m * (1 - m) * xbar)
    v = fit.cov.to_numpy()
    q = stats.norm.ppf(0.5 + level / 2)
    out = []
    for lev in fit.levels[by]:
        a, b = ("objective", lev), ("subjective", lev)
        if a not in est or b not in est:
            continue
        d = est[a][0] - est[b][0]
        g = est[a][1] - est[b][1]
        se = float(np.sqrt(max(g @ v @ g, 0.0)))
        z = d / se if se > 0 else np.nan
        out.append(
            {
                by: lev,
                "objective": est[a][0],
                "subjective": est[b][0],
                "difference": d,
                "se": se,
                "z": z,
                "p_value": _p(fit, z, g) if se > 0 else np.nan,
                "ci_low": d - q * se,
                "ci_high": d + q * se,
            }
        )
    if not out:
        return empty
    res = pd.DataFrame(out)
    p = res["p_value"].to_numpy(dtype=float)
    holm = np.full(p.size, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        holm[ok] = multipletests(p[ok], method="holm")[1]
    res["p_holm"] = holm
    table = res[cols]
    table.attrs["inference"] = str(getattr(fit, "inference", ""))
    return table
