"""The GEE on data a statistician brings: R's ohio, respiratory and endometrial.

The frames are ``tests/fixtures/datasets/*.csv``, exported from R
(``tests/r/export_datasets.R``); R's numbers on them (geepack + car, emmeans, brglm2) are
``tests/fixtures/datasets/gee_datasets_reference.csv``, written by
``tests/r/gee_datasets.R``.  The comparison with the committed numbers always runs; the
live refit runs where Rscript with geepack, car, emmeans and brglm2 is installed and is
skipped with the reason otherwise.  No fake long-table column anywhere.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import analyses as an
from analyses.gee.formula import FormulaError
from robustness.core.table import TableError

HERE = Path(__file__).parent
DATA = HERE / "fixtures" / "datasets"
REFERENCE = DATA / "gee_datasets_reference.csv"
SCRIPT = HERE / "r" / "gee_datasets.R"
RTOL = 1e-8
RESP = "outcome ~ {center} + treat + sex + age + baseline"


def _frame(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}.csv")


def _fits() -> dict[str, an.GEEResult]:
    r = _frame("respiratory")
    return {
        "ohio": an.gee(_frame("ohio"), "resp ~ age * C(smoke)", cluster="id", tol=1e-12),
        "resp_factor": an.gee(
            r, RESP.format(center="factor(center)"), cluster=["center", "id"], tol=1e-12
        ),
        "resp_numeric": an.gee(
            r, RESP.format(center="center"), cluster=["center", "id"], tol=1e-12
        ),
        "endometrial": an.gee(
            _frame("endometrial"),
            "HG ~ NV + PI + EH",
            cluster=None,
            corstr="independence",
            tol=1e-12,
            max_iter=500,
        ),
    }


def _series(ref: pd.DataFrame, case: str, quantity: str) -> pd.Series:
    x = ref[(ref.case == case) & (ref.quantity == quantity)]
    assert len(x), f"reference lacks {quantity!r} for {case!r}"
    return pd.Series(
        x.value.astype(float).to_numpy(), index=x.name.fillna("").astype(str).to_numpy()
    )


def _rel(mine: np.ndarray, theirs: np.ndarray) -> float:
    mine, theirs = np.asarray(mine, float), np.asarray(theirs, float)
    assert mine.shape == theirs.shape
    return float(np.max(np.abs(mine - theirs) / np.maximum(np.abs(theirs), 1e-300)))


def compare(ref: pd.DataFrame) -> dict[str, float]:
    """Largest relative difference per case and quantity; asserts each is below RTOL."""
    fits, worst = _fits(), {}

    def check(case: str, quantity: str, mine: object) -> None:
        theirs = _series(ref, case, quantity)
        values = mine.to_numpy() if isinstance(mine, pd.Series) else np.atleast_1d(mine)
        worst[f"{case}.{quantity}"] = d = _rel(values, theirs.to_numpy())
        assert d < RTOL, f"{case} {quantity}: relative difference {d:.3g}"

    for case in ("ohio", "resp_factor", "resp_numeric"):
        fit = fits[case]
        assert list(fit.params.index) == [
            n.replace("factor(smoke)", "C(smoke)") for n in _series(ref, case, "coef").index
        ]
        check(case, "coef", fit.params)
        check(case, "se_robust", fit.bse_robust)
        check(case, "alpha", fit.alpha)
        check(case, "scale", fit.scale)
        for kind in (2, 3):
            w = fit.wald(kind)
            check(case, f"wald{kind}_chi2", w["chi2"])
            check(case, f"wald{kind}_df", w["dof"].astype(float))
    for case in ("resp_factor", "resp_numeric"):
        mm = fits[case].marginal_means(by=["treat"])
        check(case, "mm_treat_estimate", mm["estimate"])
        check(case, "mm_treat_se", mm["se"])
    mm = fits["resp_factor"].marginal_means(by=["treat", "baseline"])
    mm = mm.assign(key=mm.treat + "|" + mm.baseline.astype(int).astype(str)).set_index("key")
    order = _series(ref, "resp_factor", "mm_treat_baseline_estimate").index
    check("resp_factor", "mm_treat_baseline_estimate", mm.loc[order, "estimate"])
    check("resp_factor", "mm_treat_baseline_se", mm.loc[order, "se"])
    endo = fits["endometrial"]
    check("endometrial", "coef", endo.params)
    check("endometrial", "se_model", endo.bse_model)
    check("endometrial", "se_robust", endo.bse_robust)
    return worst


def test_matches_committed_r_numbers():
    worst = compare(pd.read_csv(REFERENCE, keep_default_na=False, na_values=[]))
    assert len(worst) == 3 * 8 + 2 * 2 + 2 + 3  # every quantity was compared


def _r_missing() -> str | None:
    if shutil.which("Rscript") is None:
        return "Rscript is not installed (make sysdeps installs R with geepack, emmeans, brglm2)"
    probe = subprocess.run(
        ["Rscript", "-e", "library(geepack); library(car); library(emmeans); library(brglm2)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return None if probe.returncode == 0 else f"an R package is missing: {probe.stderr[-300:]}"


@pytest.mark.r
def test_live_r_matches(tmp_path):
    reason = _r_missing()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "ref.csv"
    run = subprocess.run(
        ["Rscript", str(SCRIPT), str(DATA), str(out)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-2000:]
    compare(pd.read_csv(out, keep_default_na=False, na_values=[]))


def test_numeric_code_is_a_covariate_as_in_r_and_a_factor_when_asked():
    r = _frame("respiratory")
    numeric = an.gee(r, RESP.format(center="center"), cluster=["center", "id"])
    factor = an.gee(r, RESP.format(center="C(center)"), cluster=["center", "id"])
    assert numeric.params["(Intercept)"] == pytest.approx(-0.1034607, abs=1e-6)  # R, numeric
    assert factor.params["(Intercept)"] == pytest.approx(0.5460297, abs=1e-6)  # R, factor()
    assert "C(center)2" in factor.params.index and "center" in numeric.params.index


def test_clusters_are_taken_by_value_with_a_note_on_split_ones():
    r = _frame("respiratory")  # id restarts in each centre: id alone joins two patients
    by_id = an.gee(r, "outcome ~ treat", cluster="id")
    assert by_id.n_clusters == 56
    assert any("not contiguous" in n and "geepack" in n for n in by_id.notes)
    by_patient = an.gee(r, "outcome ~ treat", cluster=["center", "id"])
    assert by_patient.n_clusters == 111
    assert not any("contiguous" in n for n in by_patient.notes)
    shuffled = r.sample(frac=1.0, random_state=np.random.default_rng(0).integers(1 << 31))
    again = an.gee(shuffled, "outcome ~ treat", cluster=["center", "id"], tol=1e-12)
    np.testing.assert_allclose(
        again.params,
        an.gee(r, "outcome ~ treat", cluster=["center", "id"], tol=1e-12).params,
        rtol=1e-9,
    )


def test_generic_frame_keeps_rows_named_original():
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "y": rng.integers(0, 2, 120),
            "category": np.repeat(["original", "other"], 60),
            "id": np.repeat(np.arange(30), 4),
        }
    )
    fit = an.gee(df, "y ~ category", cluster="id")
    assert fit.n_obs == 120 and "categoryother" in fit.params.index
    assert fit.grid.set_index("category").loc["original", "n"] == 60


def test_separation_by_a_numeric_column_is_found_and_bias_reduced():
    e = _frame("endometrial")
    fit = an.gee(e, "HG ~ NV + PI + EH", cluster=None, corstr="independence")
    assert fit.bias_reduced and fit.converged
    assert fit.separation[["term", "n_rows", "value"]].values.tolist() == [["NV", 13, 1]]
    assert len(fit.wald(2)) == 3
    with pytest.raises(TableError, match="separates the response"):
        an.gee(e, "HG ~ NV + PI + EH", cluster=None, bias_reduction=False)


def test_separation_along_a_combination_no_single_column_shows():
    rng = np.random.default_rng(11)
    x1, x2 = rng.normal(size=200), rng.normal(size=200)
    df = pd.DataFrame(
        {"y": (x1 + x2 > 0).astype(int), "x1": x1, "x2": x2, "g": np.arange(200) // 4}
    )
    fit = an.gee(df, "y ~ x1 + x2", cluster="g")
    assert fit.bias_reduced
    assert {"x1", "x2"} <= set(fit.separation.term.iloc[0].split(":"))
    overlap = df.assign(y=rng.integers(0, 2, 200))
    assert not an.gee(overlap, "y ~ x1 + x2", cluster="g").bias_reduced


def test_an_unconverged_fit_publishes_no_test():
    fit = an.gee(_frame("ohio"), "resp ~ age * C(smoke)", cluster="id", max_iter=1)
    assert not fit.converged and "did not converge" in fit.withheld
    w = fit.wald(2)
    assert w.empty and "withheld" in w.attrs["notes"][0]
    assert fit.marginal_means(by=["smoke"]).empty
    assert any("withheld" in n for n in fit.notes)


def test_cov_keep_and_cov_reduce_follow_emmeans_options():
    r = _frame("respiratory")
    fit = an.gee(r, RESP.format(center="center"), cluster=["center", "id"])
    b = fit.params
    means = {c: float(r[c].mean()) for c in ("center", "age", "baseline")}
    reduced = fit.marginal_means(by=["treat"], cov_keep=0).set_index("treat")
    eta = b["(Intercept)"] + b["sexM"] * 0.5 + sum(b[c] * m for c, m in means.items())
    assert reduced.loc["A", "estimate"] == pytest.approx(expit(eta), rel=1e-12)
    fixed = fit.marginal_means(by=["treat"], cov_keep=0, cov_reduce={"age": 30.0, "center": 1.0})
    eta = (
        b["(Intercept)"]
        + b["sexM"] * 0.5
        + b["age"] * 30
        + b["center"]
        + b["baseline"] * means["baseline"]
    )
    assert fixed.set_index("treat").loc["A", "estimate"] == pytest.approx(expit(eta), rel=1e-12)


@pytest.mark.parametrize(
    "formula",
    ["outcome ~ treat + log(age) + os.system(1)", "outcome ~ treat + (age", "outcome ~ treat - 1"],
)
def test_formula_errors_quote_the_whole_formula(formula):
    with pytest.raises(FormulaError) as info:
        an.gee(_frame("respiratory"), formula, cluster="id")
    assert repr(formula) in str(info.value)


def test_a_non_binary_response_and_a_missing_cluster_are_one_clear_error():
    r = _frame("respiratory")
    with pytest.raises(TableError, match=r"column 'age', row 0: .* is not 0/1"):
        an.gee(
            r.rename(columns={"age": "a", "outcome": "age"}).assign(age=r.age),
            "age ~ treat",
            cluster="id",
        )
    with pytest.raises(TableError, match="no column 'patient'"):
        an.gee(r, "outcome ~ treat", cluster="patient")


def test_transformed_covariates_enter_as_r_computes_them():
    o = _frame("ohio")
    fit = an.gee(o, "resp ~ I(age^2) + C(smoke)", cluster="id", corstr="independence", tol=1e-12)
    by_hand = an.gee(
        o.assign(age2=o.age**2),
        "resp ~ age2 + C(smoke)",
        cluster="id",
        corstr="independence",
        tol=1e-12,
    )
    np.testing.assert_allclose(fit.params.to_numpy(), by_hand.params.to_numpy(), rtol=1e-12)
    assert list(fit.params.index) == ["(Intercept)", "I(age^2)", "C(smoke)1"]
