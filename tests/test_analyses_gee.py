"""GEE: formula and design as R builds them, the solver against statsmodels, Wald tests,
separation, dropped terms, marginal means and contrasts."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from analyses import agreement_rows, gee
from analyses.gee.design import build_design, independent_columns
from analyses.gee.formula import FormulaError, parse_formula
from analyses.gee.wald import wald_type2, wald_type3
from analyses.synthetic import synthetic_table
from robustness.core.table import TableError


@pytest.fixture(scope="module")
def small():
    return synthetic_table(models=3, n_items=10, n_variants=3, seed=77, with_probs=False)


@pytest.fixture(scope="module")
def small_fit(small):
    return gee(small, tol=1e-12)


# ----------------------------------------------------------------------------- formula


def test_formula_terms_in_r_order():
    f = parse_formula("agree ~ model + dataset_type * category + category:model")
    assert f.response == "agree"
    assert f.labels == [
        "model",
        "dataset_type",
        "category",
        "dataset_type:category",
        "model:category",
    ]
    assert parse_formula("y ~ (a + b):c").labels == ["a:c", "b:c"]
    assert parse_formula("y ~ a * b - a:b").labels == ["a", "b"]
    assert parse_formula("y ~ a*b*c").labels == ["a", "b", "c", "a:b", "a:c", "b:c", "a:b:c"]
    assert parse_formula("y ~ 1 + a").labels == ["a"]
    assert parse_formula("y ~ (a + b + c)^2").labels == ["a", "b", "c", "a:b", "a:c", "b:c"]
    assert parse_formula("y ~ a / b").labels == ["a", "a:b"]
    assert parse_formula("y ~ `x y` + C(z)").columns == ("x y", "z")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("agree model", "response ~ terms"),
        ("agree ~ model - 1", "intercept"),
        ("agree ~ 0 + model", "intercept"),
        ("agree ~ model + ", "missing"),
        ("agree ~ model $ 2", "'\\$'"),
        ("agree ~ os.system(1)", "only log"),
        ("agree ~ .", "'.' is not supported"),
        ("agree ~ a[0]", "Subscript is not allowed"),
        ("agree ~ (model + category", "parenthesis"),
        ("agree ~ agree + model", "also a term"),
    ],
)
def test_formula_errors_say_what(text, needle):
    with pytest.raises(FormulaError, match=needle):
        parse_formula(text)


# ----------------------------------------------------------------------------- design


def test_design_codes_like_model_matrix():
    rows = pd.DataFrame({"a": ["p", "q", "r", "p"], "b": ["u", "u", "v", "v"]})
    lev = {"a": ["p", "q", "r"], "b": ["u", "v"]}
    x, names, term_of = build_design(parse_formula("y ~ a * b"), rows, lev, "treatment")
    assert names == ("(Intercept)", "aq", "ar", "bv", "aq:bv", "ar:bv")
    expected = np.array(
        [[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 0, 0]],
        dtype=float,
    )
    np.testing.assert_array_equal(x, expected)
    assert term_of == (-1, 0, 0, 1, 2, 2)
    xs, names_s, _ = build_design(parse_formula("y ~ a * b"), rows, lev, "sum")
    assert names_s == ("(Intercept)", "a1", "a2", "b1", "a1:b1", "a2:b1")
    # level r of a is -1 on both a columns; v of b is -1
    np.testing.assert_array_equal(xs[2], [1, -1, -1, -1, 1, 1])


def test_design_uses_indicators_when_the_margin_is_absent():
    # R: y ~ a + a:b codes b by indicators inside a:b (b's margin is absent).
    rows = pd.DataFrame({"a": ["p", "q"], "b": ["u", "v"]})
    lev = {"a": ["p", "q"], "b": ["u", "v"]}
    _, names, _ = build_design(parse_formula("y ~ a + a:b"), rows, lev, "treatment")
    assert names == ("(Intercept)", "aq", "ap:bv", "aq:bv")


def test_independent_columns_drops_later_dependent_columns():
    x = np.array([[1, 1, 0, 1], [1, 0, 1, 1], [1, 1, 0, 1.0]])
    # col 2 = col0 - col1, col 3 = col0
    np.testing.assert_array_equal(independent_columns(x), [True, True, False, False])


# ----------------------------------------------------------------------------- solver


def _statsmodels_fit(table, cluster):
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    r = agreement_rows(table)
    d = r[(r.category != "original") & r.valid.astype(bool) & r.agree.notna()].copy()
    d["agree"] = d["agree"].astype(float)
    keys = ["dataset", "item_id"] if cluster == "item" else ["model", "dataset", "item_id"]
    d["clu"] = d[keys].astype(str).agg("/".join, axis=1)
    d = d.sort_values("clu", kind="stable")
    for c in ("model", "dataset_type", "category"):
        d[c] = d[c].astype(object)
    model = smf.gee(
        "agree ~ model + dataset_type * category + model:category",
        groups="clu",
        data=d,
        family=sm.families.Binomial(),
        cov_struct=sm.cov_struct.Exchangeable(),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model.fit(ctol=1e-13, maxiter=200, ddof_scale=0)
    return res, float(model.cov_struct.dep_params)


@pytest.mark.parametrize("cluster", ["item", "model_item"])
def test_gee_equals_statsmodels(small, cluster):
    fit = gee(small, cluster=cluster, tol=1e-12)
    res, alpha = _statsmodels_fit(small, cluster)
    np.testing.assert_allclose(fit.params.to_numpy(), res.params.to_numpy(), rtol=1e-8)
    np.testing.assert_allclose(fit.bse.to_numpy(), res.bse.to_numpy(), rtol=1e-8)
    assert fit.alpha == pytest.approx(alpha, rel=1e-8)
    assert fit.converged and fit.n_obs == int(res.nobs)


def test_sum_coding_is_the_same_fit(small_fit):
    # The intercept of sum coding is the mean of the cell logits over the full factorial grid.
    fit = small_fit
    grid = pd.DataFrame(
        [
            (m, t, c)
            for m in fit.levels["model"]
            for t in fit.levels["dataset_type"]
            for c in fit.levels["category"]
        ],
        columns=["model", "dataset_type", "category"],
    )
    x, names, _ = build_design(parse_formula(fit.formula), grid, fit.levels, "treatment")
    eta = x[:, [names.index(n) for n in fit.params.index]] @ fit.params.to_numpy()
    assert fit.params_sum["(Intercept)"] == pytest.approx(eta.mean(), rel=1e-10)


# ----------------------------------------------------------------------------- Wald


def test_wald_statistics_by_hand():
    beta = np.array([0.5, 1.0, -2.0, 0.3])
    cov = np.array(
        [[0.2, 0.01, 0, 0], [0.01, 0.5, 0.1, 0.05], [0, 0.1, 0.4, 0.02], [0, 0.05, 0.02, 0.3]]
    )
    term_of = [-1, 0, 0, 1]  # a (2 columns), a:b (1 column)
    w3 = wald_type3(beta, cov, term_of, ["a", "a:b"]).set_index("term")
    b, v = beta[1:3], cov[1:3, 1:3]
    assert w3.loc["a", "chi2"] == pytest.approx(b @ np.linalg.inv(v) @ b)
    assert w3.loc["(Intercept)", "chi2"] == pytest.approx(0.5**2 / 0.2)
    assert w3.loc["a:b", "dof"] == 1
    w2 = wald_type2(beta, cov, term_of, [("a",), ("a", "b")]).set_index("term")
    i = [1, 2, 3]
    full = beta[i] @ np.linalg.solve(cov[np.ix_(i, i)], beta[i])
    assert w2.loc["a", "chi2"] == pytest.approx(full - 0.3**2 / 0.3)
    assert w2.loc["a", "dof"] == 2
    # car's construction: test a's columns made V-orthogonal to a:b's (Georges Monette's
    # conjugate complement), written out independently.
    z = np.eye(4)[[3, 1, 2]].T  # relatives then the term
    xq, _ = np.linalg.qr(z.T @ cov @ np.eye(4)[[3]].T, mode="complete")
    hyp = (z @ xq[:, 1:]).T
    hb = hyp @ beta
    car = hb @ np.linalg.inv(hyp @ cov @ hyp.T) @ hb
    assert w2.loc["a", "chi2"] == pytest.approx(car, rel=1e-10)


def test_wald_tables_name_terms_as_the_formula(small_fit):
    w2, w3 = small_fit.wald(2), small_fit.wald(3)
    assert list(w2.columns) == ["term", "dof", "chi2", "p_value"]
    assert w2.term.tolist() == [
        "model",
        "dataset_type",
        "category",
        "dataset_type:category",
        "model:category",
    ]
    assert w3.term.tolist()[0] == "(Intercept)"
    assert w2.set_index("term").dof.to_dict() == {
        "model": 2,
        "dataset_type": 1,
        "category": 7,
        "dataset_type:category": 7,
        "model:category": 14,
    }
    # the highest-order terms have no relatives: Type II equals Type III there
    a, b = w2.set_index("term"), w3.set_index("term")
    assert a.loc["model:category", "chi2"] == pytest.approx(b.loc["model:category", "chi2"])


# ----------------------------------------------------------------------------- separation


def test_separated_cell_is_named_kept_and_the_fit_stays_finite(small):
    # Was: the cell's rows were set aside (model:category lost a column, dof 13).  Now the
    # cell stays and the model is fitted by the bias-reduced equation.
    r = agreement_rows(small)
    hit = (r.model == "model_2") & (r.category == "formatting") & r.valid.astype(bool)
    r.loc[hit, "agree"] = True
    fit = gee(r)
    sep = fit.separation
    assert sep[["term", "cell", "value"]].values.tolist() == [
        ["model:category", "model=model_2, category=formatting", 1]
    ]
    assert sep.n_rows.iloc[0] == int(hit.sum())
    assert any("separation" in n and "model_2" in n and "bias-reduced" in n for n in fit.notes)
    assert fit.bias_reduced and fit.converged
    assert fit.n_obs == int(
        (r.valid.astype(bool) & (r.category != "original") & r.agree.notna()).sum()
    )
    assert np.isfinite(fit.params).all() and np.isfinite(fit.bse).all()
    assert (fit.bse > 1e-3).all() and (fit.params.abs() < 10).all()
    assert fit.wald(2).set_index("term").loc["model:category", "dof"] == 14
    with pytest.raises(TableError, match="model=model_2, category=formatting"):
        gee(r, bias_reduction=False)


def test_terms_that_cannot_vary_are_dropped_with_a_note(small):
    one = small[small.model == "model_1"]
    fit = gee(one)
    assert fit.wald(2).term.tolist() == ["dataset_type", "category", "dataset_type:category"]
    assert set(fit.dropped_terms) == {"model", "model:category"}
    assert any("'model'" in n and "cannot vary" in n for n in fit.notes)


def test_invalid_and_original_rows_are_counted_in_notes(small):
    fit = gee(small)
    n_bad = int((~small.valid & (small.category != "original")).sum())
    assert any(n.startswith(f"{n_bad} invalid rows") for n in fit.notes)


# ----------------------------------------------------------------------------- responses


def test_other_responses_and_user_columns(small):
    fit = gee(small, "correct ~ category")
    obj = small[(small.dataset_type == "objective") & small.valid & (small.category != "original")]
    assert fit.n_obs == len(obj)
    flip = gee(small, "flip ~ dataset_type + category")
    assert flip.response == "flip" and flip.converged
    t = small.assign(my_flag=(np.arange(len(small)) % 3 == 0).astype(int))
    assert gee(t, "my_flag ~ category").n_obs > 0
    with pytest.raises(TableError, match="'nonexistent'"):
        gee(small, "agree ~ nonexistent")
    with pytest.raises(TableError, match="not 0/1"):
        gee(small.assign(bad=2.0), "bad ~ category")
    with pytest.raises(ValueError, match="model_item"):
        gee(small, cluster="dataset")


# ----------------------------------------------------------------------------- marginal means


def test_marginal_means_by_hand(small_fit):
    # emmeans: the linear predictor averaged over the models, then back-transformed.
    fit = small_fit
    mm = fit.marginal_means().set_index(["dataset_type", "category"])
    b = fit.params
    # objective x formatting is the reference cell: logit = intercept + model effect
    logits = [
        b["(Intercept)"],
        b["(Intercept)"] + b["modelmodel_2"],
        b["(Intercept)"] + b["modelmodel_3"],
    ]
    assert mm.loc[("objective", "formatting"), "estimate"] == pytest.approx(
        expit(np.mean(logits)), rel=1e-12
    )
    # delta method against a numeric gradient
    names = list(b.index)

    def m_of(beta):
        bb = pd.Series(beta, index=names)
        ls = [
            bb["(Intercept)"]
            + bb["dataset_typesubjective"]
            + bb["categoryframing"]
            + bb["dataset_typesubjective:categoryframing"]
            + add
            for add in (
                0.0,
                bb["modelmodel_2"] + bb["modelmodel_2:categoryframing"],
                bb["modelmodel_3"] + bb["modelmodel_3:categoryframing"],
            )
        ]
        return expit(np.mean(ls))

    beta = b.to_numpy()
    h = 1e-6
    grad = np.array(
        [(m_of(beta + h * e) - m_of(beta - h * e)) / (2 * h) for e in np.eye(beta.size)]
    )
    se = np.sqrt(grad @ fit.cov.to_numpy() @ grad)
    row = mm.loc[("subjective", "framing")]
    assert row.estimate == pytest.approx(m_of(beta), rel=1e-12)
    assert row.se == pytest.approx(se, rel=1e-6)
    assert row.ci_low < row.estimate < row.ci_high
    assert row.n_averaged == 3


def test_contrasts_holm_by_hand(small_fit):
    c = small_fit.contrasts()
    mm = small_fit.marginal_means().set_index(["dataset_type", "category"])
    first = c.iloc[0]
    assert first.difference == pytest.approx(
        mm.loc[("objective", first.category), "estimate"]
        - mm.loc[("subjective", first.category), "estimate"]
    )
    p = c.p_value.to_numpy()
    order = np.argsort(p)
    m = p.size
    adj = np.maximum.accumulate(np.minimum(1, (m - np.arange(m)) * p[order]))
    expected = np.empty(m)
    expected[order] = adj
    np.testing.assert_allclose(c.p_holm.to_numpy(), expected)
    assert len(c) == 8
