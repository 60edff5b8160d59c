"""analyses.gee.small_sample against statsmodels (bias_reduced) and R's clubSandwich (CR2, HTZ).

Data: geepack's ``ohio`` and ``respiratory`` (tests/fixtures/datasets/, exported from R by
``tests/r/export_datasets.R``) and the toolkit's fitted rows
(tests/fixtures/analyses/small_sample_rows.csv, from gee_table.csv).  clubSandwich's numbers
are stored in tests/fixtures/analyses/r_small_sample.csv so the comparison runs without R;
the live rerun is marked ``r`` and skipped with the reason when R or clubSandwich is absent.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from analyses import agreement_rows
from analyses.gee import gee
from analyses.gee.small_sample import (
    cluster_parts,
    cr2_parts,
    f_test,
    htz_test,
    mancl_derouen_cov,
    row_cells,
    sandwich_cov,
)
from analyses.gee.solver import solve_gee
from robustness.core.errors import AnalysisError
from robustness.core.table import read_table

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
REFERENCE = FIXTURES / "analyses" / "r_small_sample.csv"
SCRIPT = HERE / "r" / "small_sample_reference.R"
TABLE = FIXTURES / "analyses" / "gee_table.csv"
TYPE_MODEL = "agree ~ model + dataset_type * category + model:category"
RTOL = 1e-8
CONSTRAINTS = {  # the regular expressions of the R script's constrain_zero()
    "age": "^age$",
    "smoke": "^smoke$",
    "all": "age|smoke",
    "treat": "^treat",
    "center": "^center",
    "sex_age": "^sex|^age",
    "visit": "^visit",
}


def _data(label: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(y, X, cluster, names) as R's glm builds them."""
    if label == "ohio":
        d = pd.read_csv(FIXTURES / "datasets" / "ohio.csv")
        x = np.c_[np.ones(len(d)), d.age, d.smoke, d.age * d.smoke]
        return d.resp.to_numpy(), x, d.id.to_numpy(), ["(Intercept)", "age", "smoke", "age:smoke"]
    d = pd.read_csv(FIXTURES / "datasets" / "respiratory.csv")
    x = np.c_[
        np.ones(len(d)), d.center == 2, d.treat == "P", d.sex == "M", d.age, d.baseline, d.visit
    ].astype(float)
    names = ["(Intercept)", "center2", "treatP", "sexM", "age", "baseline", "visit"]
    cluster = (d.center.astype(str) + "-" + d.id.astype(str)).to_numpy()  # ids restart per centre
    return d.outcome.to_numpy(), x, cluster, names


def _reference(path: Path = REFERENCE) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False)


def _value(ref: pd.DataFrame, data: str, quantity: str, name: str) -> float:
    hit = ref[(ref.data == data) & (ref.quantity == quantity) & (ref.name == name)]
    assert len(hit) == 1, (data, quantity, name)
    return float(hit.value.iloc[0])


def _check_club_sandwich(ref: pd.DataFrame, label: str) -> None:
    y, x, cluster, names = _data(label)
    cells, _ = row_cells(x, y, cluster)
    fit = solve_gee(cells, corstr="independence", tol=1e-13)
    r_coef = [_value(ref, label, "coef", n) for n in names]
    np.testing.assert_allclose(fit.params, r_coef, rtol=RTOL)
    cr2 = cr2_parts(cells, fit.params)
    r_cov = np.array([[_value(ref, label, "cr2", f"{a}|{b}") for b in names] for a in names])
    np.testing.assert_allclose(cr2.cov, r_cov, rtol=RTOL, atol=0)
    tested = ref[(ref.data == label) & (ref.quantity == "HTZ_F")].name
    assert len(tested) >= 3
    for cn in tested:
        idx = [i for i, n in enumerate(names) if re.search(CONSTRAINTS[cn], n)]
        hyp = np.eye(len(names))[idx]
        htz = htz_test(fit.params, cr2, hyp)
        naive = f_test(fit.params, cr2.cov, hyp, cells.n_clusters)
        for test, mine in (("HTZ", htz), ("Naive-Fp", naive)):
            got = [mine.statistic, mine.dof, mine.df_denom, mine.p_value]
            want = [_value(ref, label, f"{test}_{q}", cn) for q in ("F", "df_num", "df_denom", "p")]
            np.testing.assert_allclose(got, want, rtol=RTOL, err_msg=f"{label} {cn} {test}")


@pytest.mark.parametrize("label", ["ohio", "respiratory"])
def test_cr2_and_htz_match_stored_club_sandwich(label):
    _check_club_sandwich(_reference(), label)


def _toolkit_fit(**kwargs):
    return gee(read_table(TABLE), TYPE_MODEL, tol=1e-12, **kwargs)


def _check_toolkit(ref: pd.DataFrame) -> None:
    fit = _toolkit_fit(corstr="independence", cov_type="cr2", test="HTZ")
    names = list(fit.params.index)
    r_coef = [_value(ref, "toolkit", "coef", n) for n in names]
    np.testing.assert_allclose(fit.params, r_coef, rtol=RTOL)
    r_cov = np.array([[_value(ref, "toolkit", "cr2", f"{a}|{b}") for b in names] for a in names])
    np.testing.assert_allclose(fit.cov.to_numpy(), r_cov, rtol=RTOL, atol=1e-15)
    for test, ref_test in (("HTZ", "HTZ"), ("F", "Naive-Fp")):
        # dataset_type:category is the top term: Type II is the plain constraint there; the
        # main effect dataset_type is R's constrain_zero of its one column, i.e. Type III in
        # treatment coding, which the array-level test covers below.
        w = fit.wald(2, test=test).set_index("term").loc["dataset_type:category"]
        want = [
            _value(ref, "toolkit", f"{ref_test}_{q}", "dataset_type:category")
            for q in ("F", "df_denom", "p")
        ]
        np.testing.assert_allclose([w.F, w.df_denom, w.p_value], want, rtol=RTOL, err_msg=test)
    j = names.index("dataset_typesubjective")
    from analyses.gee.inference import tester_for

    tester = tester_for("HTZ", fit.params.to_numpy(), fit.n_clusters, fit._cr2)
    assert tester is not None
    one = tester(fit.params.to_numpy(), fit.cov.to_numpy(), np.eye(len(names))[[j]])
    want = [_value(ref, "toolkit", f"HTZ_{q}", "dataset_type") for q in ("F", "df_denom", "p")]
    np.testing.assert_allclose([one.statistic, one.df_denom, one.p_value], want, rtol=RTOL)


def test_toolkit_cr2_and_htz_match_stored_club_sandwich():
    _check_toolkit(_reference())


def _statsmodels_bias_reduced(y, x, cluster, corstr):
    struct = (
        sm.cov_struct.Exchangeable() if corstr == "exchangeable" else sm.cov_struct.Independence()
    )
    model = sm.GEE(y, x, groups=cluster, family=sm.families.Binomial(), cov_struct=struct)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model.fit(cov_type="bias_reduced", ctol=1e-13, maxiter=200, ddof_scale=0)
    alpha = float(np.atleast_1d(model.cov_struct.dep_params)[0]) if corstr == "exchangeable" else 0
    return res, alpha


@pytest.mark.parametrize("corstr", ["independence", "exchangeable"])
@pytest.mark.parametrize("label", ["ohio", "respiratory"])
def test_mancl_derouen_equals_statsmodels_bias_reduced(label, corstr):
    y, x, cluster, _ = _data(label)
    cells, order = row_cells(x, y, cluster)
    res, alpha = _statsmodels_bias_reduced(y[order], x[order], cluster[order], corstr)
    parts = cluster_parts(cells, res.params, alpha, corstr)
    np.testing.assert_allclose(mancl_derouen_cov(parts), res.cov_params(), rtol=RTOL)
    np.testing.assert_allclose(sandwich_cov(parts), res.cov_robust, rtol=RTOL)
    # the correction inflates: V_MD - V_R is positive semidefinite here
    assert np.linalg.eigvalsh(mancl_derouen_cov(parts) - sandwich_cov(parts)).min() > -1e-12


@pytest.mark.parametrize("corstr", ["independence", "exchangeable"])
def test_toolkit_fit_bias_reduced_equals_statsmodels(corstr):
    fit = _toolkit_fit(corstr=corstr, cov_type="bias_reduced")
    rows = agreement_rows(read_table(TABLE))
    d = rows[(rows.category != "original") & rows.valid & rows.agree.notna()].copy()
    d = d.assign(g=d.dataset + "/" + d.item_id).sort_values("g", kind="stable")
    x = np.column_stack([np.ones(len(d))] + [_column(d, name) for name in fit.params.index[1:]])
    res, alpha = _statsmodels_bias_reduced(
        d.agree.astype(float).to_numpy(), x, d.g.to_numpy(), corstr
    )
    np.testing.assert_allclose(fit.params, res.params, rtol=1e-7)
    # covariance at statsmodels' own estimate: the formula, free of the solvers' tolerance
    cells, _ = row_cells(x, d.agree.astype(float).to_numpy(), d.g.to_numpy())
    parts = cluster_parts(cells, res.params, alpha, corstr)
    np.testing.assert_allclose(mancl_derouen_cov(parts), res.cov_params(), rtol=RTOL)
    # and the fit's aggregated-cell covariance at its own estimate, to the solvers' agreement
    np.testing.assert_allclose(fit.cov.to_numpy(), res.cov_params(), rtol=1e-6)
    np.testing.assert_allclose(fit.cov_plain.to_numpy(), res.cov_robust, rtol=1e-6)


def _column(d: pd.DataFrame, name: str) -> np.ndarray:
    """A treatment-coded column by R's name (``modelmodel_2:categoryframing``)."""
    out = np.ones(len(d))
    for part in name.split(":"):
        var = next(v for v in ("dataset_type", "model", "category") if part.startswith(v))
        out = out * (d[var].astype(str).to_numpy() == part[len(var) :])
    return out


def test_cells_and_rows_give_the_same_cr2():
    # the cell aggregation is exact: CR2 of the fit equals CR2 on its rows one by one
    fit = _toolkit_fit(corstr="independence", cov_type="cr2")
    rows = agreement_rows(read_table(TABLE))
    d = rows[(rows.category != "original") & rows.valid & rows.agree.notna()]
    x = np.column_stack([np.ones(len(d))] + [_column(d, n) for n in fit.params.index[1:]])
    cells, _ = row_cells(
        x, d.agree.astype(float).to_numpy(), (d.dataset + "/" + d.item_id).to_numpy()
    )
    np.testing.assert_allclose(cr2_parts(cells, fit.params.to_numpy()).cov, fit.cov, rtol=RTOL)


def test_plain_sandwich_is_unchanged_by_default():
    plain = _toolkit_fit()
    explicit = _toolkit_fit(cov_type="robust", test="chi2")
    assert plain.cov_type == "robust" and plain.test == "chi2"
    np.testing.assert_array_equal(plain.cov.to_numpy(), explicit.cov.to_numpy())
    assert list(plain.wald(2).columns) == ["term", "dof", "chi2", "p_value"]
    assert "plain sandwich" in plain.wald(2).attrs["inference"]


def test_f_reference_and_inference_note():
    fit = _toolkit_fit(cov_type="bias_reduced", test="F")
    w = fit.wald(3).set_index("term")
    df2 = fit.n_clusters - len(fit.params)
    assert (w.df_denom == df2).all()
    np.testing.assert_allclose(w.F, w.chi2 / w.dof, rtol=1e-12)
    assert "Mancl" in w.attrs["inference"] and f"G - p = {df2}" in w.attrs["inference"]
    # F(q, G - p) is more conservative than chi2(q) on the same statistic
    assert (w.p_value >= fit.wald(3, test="chi2").set_index("term").p_value - 1e-15).all()
    assert "Mancl" in fit.contrasts().attrs["inference"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(cov_type="cr2"), "corstr='independence'"),
        (dict(corstr="independence", cov_type="robust", test="HTZ"), "needs cov_type='cr2'"),
        (dict(cov_type="hc3"), "cov_type must be one of"),
        (dict(test="t"), "test must be one of"),
    ],
)
def test_impossible_combinations_are_clear_errors(kwargs, message):
    with pytest.raises(AnalysisError, match=re.escape(message)):
        _toolkit_fit(**kwargs)


def _r_status() -> str | None:
    if shutil.which("Rscript") is None:
        return "Rscript is not installed (make sysdeps installs r-base-core and clubSandwich)"
    probe = subprocess.run(
        ["Rscript", "-e", "library(clubSandwich); library(geepack)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0:
        return (
            "R is installed but clubSandwich or geepack is missing "
            "(apt-get install r-cran-clubsandwich)"
        )
    return None


@pytest.mark.r
def test_live_club_sandwich_matches(tmp_path):
    reason = _r_status()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "ref.csv"
    run = subprocess.run(
        ["Rscript", str(SCRIPT), str(FIXTURES), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    live = _reference(out)
    for label in ("ohio", "respiratory"):
        _check_club_sandwich(live, label)
    _check_toolkit(live)
    committed = _reference()
    merged = live.merge(committed, on=["data", "quantity", "name"], suffixes=("_live", ""))
    assert len(merged) == len(committed) == len(live)
    np.testing.assert_allclose(merged.value_live, merged.value, rtol=1e-9)


def test_power_takes_the_covariance_and_reference():
    from analyses.power.effects import Design, assumed_effects
    from analyses.power.simulation import power

    eff = assumed_effects(0.75, 0.0, 0.2, ["framing", "paraphrase"])
    kw = dict(design=Design(6), sims=3, seed=1)
    plain = power(eff, [6], **kw).set_index("term")
    corrected = power(eff, [6], cov_type="bias_reduced", test="F", **kw).set_index("term")
    assert list(plain.index) == list(corrected.index)
    assert corrected.power.between(0, 1).all() and (corrected.n_sims == 3).all()
    with pytest.raises(AnalysisError, match="needs cov_type='cr2'"):
        power(eff, [6], test="HTZ", **kw)


def test_coefficient_p_values_follow_the_reference():
    fit = _toolkit_fit(cov_type="bias_reduced", test="F")
    tab = fit.coefficients()
    df2 = fit.n_clusters - len(fit.params)
    from scipy import stats

    np.testing.assert_allclose(tab.p_value, 2 * stats.t.sf(np.abs(tab.z), df2), rtol=1e-12)
    assert "Mancl" in tab.attrs["inference"]
    htz = _toolkit_fit(corstr="independence", cov_type="cr2", test="HTZ")
    one = htz.coefficients().set_index("coefficient").loc["dataset_typesubjective"]
    ref = _reference()
    # q = 1: HTZ is a t test on its df; clubSandwich's p-value for the same constraint
    assert one.p_value == pytest.approx(_value(ref, "toolkit", "HTZ_p", "dataset_type"), rel=RTOL)
    assert len(htz.coefficients(coding="sum")) == len(htz.params_sum)


def test_the_analyses_default_is_the_measured_choice_and_gee_stays_geepack():
    """analyze's models use the bias-reduced sandwich with F (README "Size"); an.gee's own
    default stays the plain sandwich with chi-square, geepack + car."""
    from analyses.gee.paper_models import fit_models
    from analyses.prompt_sets import prompt_sets
    from analyses.synthetic import synthetic_table
    from analyses.table_input import load

    t = load(synthetic_table(models=1, n_items=12, n_variants=3, seed=3))
    type_model, _ = fit_models(t, prompt_sets(t))
    assert (type_model.fit.cov_type, type_model.fit.test) == ("bias_reduced", "F")
    assert "Mancl" in type_model.fit.inference
    assert list(type_model.tables["wald_type2"].columns[-2:]) == ["F", "df_denom"]
    plain = gee(t)
    assert (plain.cov_type, plain.test) == ("robust", "chi2")
