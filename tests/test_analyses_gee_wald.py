"""Wald tests on a rank-deficient design, against statsmodels' ``wald_test``.

The design of the issue: 16 items, two models, and no subjective rows for three
categories, so three ``dataset_type:category`` columns are aliased; with 16 clusters
and 21 coefficients the robust covariance is singular (rank <= 16).  The old code gave
a Type II chi-square of about 3e15 for ``category`` here (the issue saw -6.9e13).
statsmodels fits the reduced design (aliased columns left out) and tests the same
hypotheses; where L V L' is singular it is given the directions actually tested.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from analyses import gee
from analyses.gee.design import build_design, build_model_design, independent_columns
from analyses.gee.formula import Formula, parse_formula
from analyses.gee.long_table import fitted_rows
from analyses.gee.wald import _pinv_psd, type2_hypothesis, wald_test
from analyses.synthetic import synthetic_table
from analyses.table_input import codes, load

GONE = ["option_order", "label_substitution", "framing"]


@pytest.fixture(scope="module")
def aliased():
    t = synthetic_table(models=2, n_items=4, n_variants=3, seed=21, with_probs=False)
    t = t[~((t.dataset_type == "subjective") & t.category.isin(GONE))].reset_index(drop=True)
    return t, gee(t, tol=1e-12)


@pytest.fixture(scope="module")
def statsmodels_fit(aliased):
    import statsmodels.api as sm

    t, fit = aliased
    f = parse_formula(fit.formula)
    rows = fitted_rows(load(t), f)
    design = build_model_design(f, rows.data, fit.levels)
    assert design.names == list(fit.params.index)
    cl, _ = codes(rows.data, ["dataset", "item_id"])
    order = np.argsort(cl, kind="stable")
    model = sm.GEE(
        rows.y[order],
        design.x[design.row_of][order],
        groups=cl[order],
        family=sm.families.Binomial(),
        cov_struct=sm.cov_struct.Exchangeable(),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model.fit(ctol=1e-13, maxiter=200, ddof_scale=0)
    # b_sum = A b: the map from the treatment to the sum-coded coefficients
    ff = Formula(f.text, f.response, f.variables, tuple(fit.terms))
    xs, _, _ = build_design(ff, design.grid, fit.levels, "sum")
    a_map = np.linalg.lstsq(xs[:, independent_columns(xs)], design.x, rcond=None)[0]
    return res, a_map


def _statsmodels_chi2(res, L):
    """statsmodels' Wald statistic on the directions of L that L V L' spans."""
    v = res.cov_params()
    s = L @ v @ L.T
    g = _pinv_psd(s)
    d = np.sqrt(np.diag(s))
    live = d > 0
    corr = s[np.ix_(live, live)] / np.outer(d[live], d[live])
    lam, q = np.linalg.eigh(corr)
    rows = (q[:, lam > 1e-9].T / d[live]) @ L[live]
    out = res.wald_test(rows, scalar=True)
    assert np.trace(g @ s) == pytest.approx(rows.shape[0])
    return float(np.squeeze(out.statistic)), rows.shape[0]


def test_the_design_is_aliased_and_the_covariance_singular(aliased, statsmodels_fit):
    _, fit = aliased
    res, _ = statsmodels_fit
    assert len(fit.aliased) == 3 and all("dataset_typesubjective:" in n for n in fit.aliased)
    assert fit.n_clusters == 16 and len(fit.params) == 21
    assert np.linalg.matrix_rank(fit.cov.to_numpy()) <= 16
    np.testing.assert_allclose(fit.params.to_numpy(), res.params, rtol=1e-7)
    np.testing.assert_allclose(fit.cov.to_numpy(), res.cov_params(), rtol=1e-6, atol=1e-12)


def test_type2_equals_statsmodels_on_the_tested_directions(aliased, statsmodels_fit):
    _, fit = aliased
    res, _ = statsmodels_fit
    w2 = fit.wald(2).set_index("term")
    assert (w2.chi2 >= 0).all() and np.isfinite(w2.chi2).all()
    term_of = fit._term_of
    sets = [frozenset(t) for t in fit.terms]
    for k, term in enumerate(fit.terms):
        own = np.flatnonzero(term_of == k)
        rel = [j for j, other in enumerate(sets) if j != k and sets[k] < other]
        L = type2_hypothesis(res.cov_params(), own, np.flatnonzero(np.isin(term_of, rel)))
        chi2, dof = _statsmodels_chi2(res, L)
        row = w2.loc[":".join(term)]
        assert row.dof == dof <= own.size
        assert row.chi2 == pytest.approx(chi2, rel=1e-6)
    # category's 7 columns span only 4 directions once its relatives are accounted for
    assert w2.loc["category", "dof"] < 7
    assert any("'category' on" in n and "directions" in n for n in fit.notes)


def test_type3_equals_statsmodels_on_the_tested_directions(aliased, statsmodels_fit):
    _, fit = aliased
    res, a_map = statsmodels_fit
    w3 = fit.wald(3).set_index("term")
    assert (w3.chi2 >= 0).all() and np.isfinite(w3.chi2).all()
    labels = ["(Intercept)", *fit.term_labels]
    for k, label in zip(range(-1, len(fit.terms)), labels, strict=True):
        idx = np.flatnonzero(fit._term_of_sum == k)
        chi2, dof = _statsmodels_chi2(res, a_map[idx])  # L_sum A b = L_sum b_sum
        assert w3.loc[label, "dof"] == dof
        assert w3.loc[label, "chi2"] == pytest.approx(chi2, rel=1e-6)


def test_type2_difference_construction_holds_when_v_is_positive_definite():
    # On a design with enough clusters the projection equals W(term + R) - W(R).
    fit = gee(synthetic_table(models=2, n_items=10, n_variants=3, seed=2, with_probs=False))
    b, v = fit.params.to_numpy(), fit.cov.to_numpy()
    assert np.linalg.matrix_rank(v) == v.shape[0]

    def w(i):
        return b[i] @ np.linalg.solve(v[np.ix_(i, i)], b[i])

    term_of = fit._term_of
    own = np.flatnonzero(term_of == fit.term_labels.index("category"))
    rel = np.flatnonzero(np.isin(term_of, [3, 4]))  # dataset_type:category, model:category
    diff = w(np.r_[rel, own]) - w(rel)
    assert fit.wald(2).set_index("term").loc["category", "chi2"] == pytest.approx(diff, rel=1e-8)


def test_an_untestable_term_is_withheld_with_a_note():
    from analyses.gee.wald import wald_type3

    beta = np.array([1.0, 0.5, 2.0])
    cov = np.diag([0.1, 0.0, 0.2])  # the 'a' column has zero variance
    t = wald_type3(beta, cov, [-1, 0, 1], ["a", "b"])
    assert t.term.tolist() == ["(Intercept)", "b"]
    assert any("'a' withheld" in n for n in t.attrs["notes"])
    assert wald_test(beta, cov, np.eye(3)[[1]]).dof == 0


def test_a_fully_aliased_term_is_withheld_not_nan():
    # dataset determines dataset_type: after dataset, dataset_type has no estimable column.
    t = synthetic_table(models=2, n_items=5, n_variants=3, seed=8, with_probs=False)
    fit = gee(t, "agree ~ model + dataset + dataset_type + category")
    assert fit.aliased == ["dataset_typesubjective"]
    for kind in (2, 3):
        w = fit.wald(kind)
        assert "dataset_type" not in set(w.term)
        assert np.isfinite(w.chi2).all() and (w.chi2 >= 0).all() and (w.dof > 0).all()
    assert any("'dataset_type' withheld" in n and "aliased" in n for n in fit.notes)
