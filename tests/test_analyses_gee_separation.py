"""Separated cells stay in the GEE: the bias-reduced (Firth-type) estimating equation.

The independence case is checked against brglm2 in ``test_analyses_gee_emmeans_r.py``;
here the exchangeable case is checked against the equation written out densely, per
cluster, with the adjustment (1/2) d log det B / d b taken by finite differences, and
the issue's example (one model never changes its answer under one family) is replayed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from analyses import agreement_rows, gee
from analyses.gee.design import build_model_design
from analyses.gee.formula import parse_formula
from analyses.gee.long_table import fitted_rows
from analyses.synthetic import synthetic_table
from analyses.table_input import codes, load


def _one_model_never_changes(seed: int = 5) -> pd.DataFrame:
    """Two models; under option_order model_2 always agrees, model_1 about half the time."""
    t = synthetic_table(models=2, n_items=12, n_variants=4, seed=seed, with_probs=False)
    r = agreement_rows(t)
    rng = np.random.default_rng(seed)
    ok = r.valid.astype(bool) & r.agree.notna()
    oo = ok & (r.category == "option_order")
    r.loc[oo & (r.model == "model_2"), "agree"] = True
    m1 = oo & (r.model == "model_1")
    r.loc[m1, "agree"] = rng.random(int(m1.sum())) < 0.5
    return r


@pytest.fixture(scope="module")
def separated():
    r = _one_model_never_changes()
    return r, gee(r, tol=1e-12)


def test_separated_cell_stays_with_a_finite_mean_near_its_observed_value(separated):
    # Before: the (model_2, option_order) cell was set aside, so its marginal mean did not
    # exist and the option_order mean came from model_1 alone (about 0.45 against an
    # observed 0.73 over both models).
    _, fit = separated
    assert fit.bias_reduced and fit.converged
    assert fit.separation.cell.tolist() == ["model=model_2, category=option_order"]
    cells = fit.marginal_means(by=("model", "category")).set_index(["model", "category"])
    sep = cells.loc[("model_2", "option_order")]
    assert sep.observed == 1.0 and sep.n_rows > 100
    assert 0.98 < sep.estimate < 1.0 and np.isfinite(sep.se) and sep.se > 0
    assert abs(sep.estimate - sep.observed) < 0.01
    # The family's mean averages over both models: on the response scale it sits near the
    # observed mean, far above model_1's alone.
    by_cat = fit.marginal_means(by=("category",), scale="response").set_index("category")
    oo = by_cat.loc["option_order"]
    alone = cells.loc[("model_1", "option_order"), "estimate"]
    assert oo.n_averaged == 4
    assert abs(oo.estimate - oo.observed) < 0.02
    assert oo.estimate > alone + 0.2
    # On the link scale (emmeans' default) it is expit of the mean of the four grid logits.
    link = fit.marginal_means(by=("category",)).set_index("category").loc["option_order"]
    b = fit.params
    base = b["(Intercept)"] + b["categoryoption_order"]
    logits = [
        base + typ + mod
        for typ in (
            0.0,
            b["dataset_typesubjective"] + b["dataset_typesubjective:categoryoption_order"],
        )
        for mod in (0.0, b["modelmodel_2"] + b["modelmodel_2:categoryoption_order"])
    ]
    assert link.estimate == pytest.approx(expit(np.mean(logits)), rel=1e-12)


def test_contrasts_compare_the_same_models_in_both_types(separated):
    _, fit = separated
    c = fit.contrasts().set_index("category")
    assert "option_order" in c.index
    assert np.isfinite(c.loc["option_order", ["difference", "se", "p_holm"]].astype(float)).all()


def _dense_adjusted_score(r: pd.DataFrame, fit) -> tuple[np.ndarray, np.ndarray]:
    """U(b) and (1/2) d log det B / d b at the fit, per cluster with dense matrices."""
    t = load(r, optional=("agree",))
    f = parse_formula(fit.formula)
    rows = fitted_rows(t, f)
    lev = fit.levels
    design = build_model_design(f, rows.data, lev)
    x = design.x[design.row_of]
    y = rows.y
    cl, _ = codes(rows.data, ["dataset", "item_id"])
    alpha = fit.alpha
    members = [np.flatnonzero(cl == c) for c in range(cl.max() + 1)]

    def b_and_u(beta):
        mu = expit(x @ beta)
        a = mu * (1 - mu)
        bm = np.zeros((beta.size, beta.size))
        u = np.zeros(beta.size)
        for idx in members:
            n = idx.size
            rinv = np.linalg.inv((1 - alpha) * np.eye(n) + alpha * np.ones((n, n)))
            s = np.sqrt(a[idx])
            xi = x[idx]
            bm += (xi * s[:, None]).T @ rinv @ (xi * s[:, None])
            u += (xi * s[:, None]).T @ rinv @ ((y[idx] - mu[idx]) / s)
        return bm, u

    beta = fit.params.to_numpy()
    _, u = b_and_u(beta)
    h = 1e-6
    adj = np.empty(beta.size)
    for k in range(beta.size):
        e = np.zeros(beta.size)
        e[k] = h
        plus = np.linalg.slogdet(b_and_u(beta + e)[0])[1]
        minus = np.linalg.slogdet(b_and_u(beta - e)[0])[1]
        adj[k] = 0.5 * (plus - minus) / (2 * h)
    return u, adj


def test_exchangeable_bias_reduction_solves_the_penalised_equation():
    # A small table (4 categories) keeps the dense per-cluster check quick.
    t = synthetic_table(
        models=2,
        n_items=6,
        n_variants=3,
        categories=("formatting", "paraphrase", "option_order", "spelling_noise"),
        seed=11,
        with_probs=False,
    )
    r = agreement_rows(t)
    hit = (r.model == "model_2") & (r.category == "paraphrase") & r.agree.notna()
    r.loc[hit, "agree"] = True
    fit = gee(r, "agree ~ model * category", tol=1e-13)
    assert fit.bias_reduced and fit.alpha != 0
    u, adj = _dense_adjusted_score(r, fit)
    # U alone is far from 0 (the unadjusted equation has no finite root) ...
    assert np.max(np.abs(u)) > 0.1
    # ... and U + A vanishes at the bias-reduced estimate.
    np.testing.assert_allclose(u + adj, 0, atol=1e-6)


def test_bias_reduction_can_be_asked_for_without_separation():
    t = synthetic_table(models=2, n_items=10, n_variants=3, seed=3, with_probs=False)
    plain = gee(t, "agree ~ model + category")
    br = gee(t, "agree ~ model + category", bias_reduction=True)
    assert not plain.bias_reduced and br.bias_reduced and plain.separation.empty
    # Firth shrinks towards 0: the estimates move, by little on a table without separation.
    diff = (br.params - plain.params).abs()
    assert 0 < diff.max() < 0.1
    with pytest.raises(ValueError, match="bias_reduction"):
        gee(t, "agree ~ model + category", bias_reduction="yes")
