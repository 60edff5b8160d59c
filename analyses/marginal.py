"""Estimated marginal means of a fitted GEE and objective - subjective contrasts.

Marginal mean of a cell (by default a dataset type x category) is the model's
predicted probability averaged with equal weight over the other factors of the
formula (for the default formula: over the models) -- emmeans' reference grid,
averaged on the probability scale:

    m = (1 / K) sum_k expit(x_k' b),     grad m = (1 / K) sum_k mu_k (1 - mu_k) x_k,

with x_k the design rows of the K factor combinations present in the fitted
rows of that cell (numeric covariates at their mean).  Its standard error is
the delta method's sqrt(grad' V grad) with V the robust covariance.  The 95 %
interval is built on the logit scale, logit(m) +- z se / (m (1 - m)), and
transformed back, so that it stays inside (0, 1).  When separation or aliasing
removed some combinations of a cell, the mean is over those left (column
``n_averaged`` says how many).

Contrasts: for each category, d = m(objective) - m(subjective) with se from
grad d = grad m_obj - grad m_subj, z = d / se, two-sided normal p-values, and
Holm's step-down adjustment over the categories tested.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit
from statsmodels.stats.multitest import multipletests

from analyses.design import build_design
from analyses.formula import Formula, parse_formula

if TYPE_CHECKING:
    from analyses.gee import GEEResult


def _cells(fit: GEEResult, by: Sequence[str]):
    f = parse_formula(fit.formula)
    formula = Formula(f.text, f.response, f.variables, tuple(fit.terms))
    by = list(by)
    grid = fit.grid
    missing = [b for b in by if b not in grid.columns]
    if missing:
        raise ValueError(
            f"marginal means by {missing!r}: not a factor of the fitted grid "
            f"(available: {[c for c in grid.columns if c not in ('n', 'y_sum')]})."
        )
    factors = list(fit.levels)
    numeric = [v for v in f.variables if v not in fit.levels]
    pred = grid.copy()
    for v in numeric:
        pred[v] = float(np.average(pred[v].to_numpy(dtype=float), weights=pred["n"]))
    cols = list(dict.fromkeys([*by, *factors]))
    combos = pred.drop_duplicates(cols)[[*cols, *numeric]].reset_index(drop=True)
    x_all, names, _ = build_design(formula, combos, fit.levels, "treatment")
    pos = {n: k for k, n in enumerate(names)}
    x = x_all[:, [pos[n] for n in fit.params.index]]
    counts = grid.groupby(by, sort=True).agg(n_rows=("n", "sum"), y_sum=("y_sum", "sum"))
    return combos, x, counts


def _estimates(fit: GEEResult, by: Sequence[str]):
    combos, x, counts = _cells(fit, by)
    beta = fit.params.to_numpy()
    mu = expit(x @ beta)
    rows, grads = [], []
    for key, idx in combos.groupby(list(by), sort=True).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        m = float(mu[idx].mean())
        grad = ((mu[idx] * (1 - mu[idx]))[:, None] * x[idx]).mean(axis=0)
        rows.append((key, m, len(idx)))
        grads.append(grad)
    return rows, np.array(grads), counts


def marginal_means(
    fit: GEEResult, by: Sequence[str] = ("dataset_type", "category"), level: float = 0.95
) -> pd.DataFrame:
    """Estimated marginal probability per cell of ``by`` with delta-method intervals.

    Columns: the ``by`` columns, ``estimate``, ``se`` (delta method, robust
    covariance), ``ci_low``, ``ci_high`` (logit-scale interval transformed back),
    ``observed`` (raw mean of the response in the fitted rows), ``n_rows`` and
    ``n_averaged`` (factor combinations averaged over).

    Examples
    --------
    >>> from analyses import gee
    >>> from analyses.synthetic import synthetic_table
    >>> mm = gee(synthetic_table(models=2, n_items=15, seed=4)).marginal_means()
    >>> bool(((mm["ci_low"] < mm["estimate"]) & (mm["estimate"] < mm["ci_high"])).all())
    True
    """
    rows, grads, counts = _estimates(fit, by)
    v = fit.cov.to_numpy()
    q = stats.norm.ppf(0.5 + level / 2)
    out = []
    for (key, m, k), g in zip(rows, grads, strict=True):
        se = float(np.sqrt(g @ v @ g))
        half = q * se / (m * (1 - m))
        lo, hi = expit(np.log(m / (1 - m)) - half), expit(np.log(m / (1 - m)) + half)
        c = counts.loc[key if len(key) > 1 else key[0]]
        out.append(
            {
                **dict(zip(by, key, strict=True)),
                "estimate": m,
                "se": se,
                "ci_low": lo,
                "ci_high": hi,
                "observed": c["y_sum"] / c["n_rows"],
                "n_rows": int(c["n_rows"]),
                "n_averaged": k,
            }
        )
    return pd.DataFrame(out)


def type_contrasts(fit: GEEResult, level: float = 0.95, by: str = "category") -> pd.DataFrame:
    """Objective - subjective difference of marginal means per ``by`` level, Holm-adjusted.

    Columns: ``category, objective, subjective, difference, se, z, p_value,
    p_holm, ci_low, ci_high`` (the interval is unadjusted, difference +- z se).
    Categories present for only one dataset type are left out; the table is
    empty when no term of the fitted model contains ``dataset_type``.

    Examples
    --------
    >>> from analyses import gee
    >>> from analyses.synthetic import synthetic_table
    >>> c = gee(synthetic_table(models=2, n_items=15, seed=4)).contrasts()
    >>> bool((c["p_holm"] >= c["p_value"]).all())
    True
    """
    in_model = any("dataset_type" in term for term in fit.terms)
    if not in_model or fit.grid["dataset_type"].nunique() < 2:
        return pd.DataFrame(
            columns=[
                by,
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
        )
    rows, grads, _ = _estimates(fit, ("dataset_type", by))
    index = {key: k for k, (key, _, _) in enumerate(rows)}
    est = {key: m for key, m, _ in rows}
    v = fit.cov.to_numpy()
    q = stats.norm.ppf(0.5 + level / 2)
    out = []
    for lev in sorted({key[1] for key in index}, key=str):
        a, b = ("objective", lev), ("subjective", lev)
        if a not in index or b not in index:
            continue
        g = grads[index[a]] - grads[index[b]]
        d = est[a] - est[b]
        se = float(np.sqrt(g @ v @ g))
        z = d / se if se > 0 else np.nan
        out.append(
            {
                by: lev,
                "objective": est[a],
                "subjective": est[b],
                "difference": d,
                "se": se,
                "z": z,
                "p_value": float(2 * stats.norm.sf(abs(z))),
                "ci_low": d - q * se,
                "ci_high": d + q * se,
            }
        )
    res = pd.DataFrame(out)
    if res.empty:
        return pd.DataFrame(
            columns=[
                by,
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
        )
    p = res["p_value"].to_numpy(dtype=float)
    holm = np.full(p.size, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        holm[ok] = multipletests(p[ok], method="holm")[1]
    res.insert(7, "p_holm", holm)
    return res
