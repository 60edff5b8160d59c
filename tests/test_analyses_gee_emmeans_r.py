"""Marginal means and contrasts against R's emmeans, the bias-reduced fit against brglm2.

Data: the committed table ``tests/fixtures/analyses/gee_table.csv`` (3 models, 4
datasets, 12 items each).  Three cases, each with R's numbers committed as
``tests/fixtures/analyses/r_<case>.csv`` (written by ``tests/r/gee_emmeans_brglm.R``):

- ``emmeans_full``: geeglm + emmeans on the type model;
- ``emmeans_missing``: the same after model_3's objective paraphrase rows are removed
  (the reference grid still holds that combination: the full grid, not the rows present);
- ``brglm_separated``: model_2 made to agree on every formatting row (a separated
  model:category cell), fitted by the independence working model with bias reduction,
  against ``glm(..., method = "brglmFit", type = "AS_mean")``.

The comparison with the committed numbers always runs; the live refit runs where
Rscript with geepack, emmeans and brglm2 is installed and is skipped with the reason
otherwise.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analyses import agreement_rows, gee
from robustness.core.table import read_table

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "analyses"
TABLE = FIXTURES / "gee_table.csv"
SCRIPT = HERE / "r" / "gee_emmeans_brglm.R"
FORMULA = "agree ~ model + dataset_type * category + model:category"
CASES = {"emmeans_full": "emmeans", "emmeans_missing": "emmeans", "brglm_separated": "brglm"}


def case_rows(case: str) -> pd.DataFrame:
    """The agreement rows of the case (an ``agree`` column the GEE uses as it is)."""
    r = agreement_rows(read_table(TABLE))
    if case == "emmeans_missing":
        gone = (r.model == "model_3") & (r.dataset_type == "objective")
        r = r[~(gone & (r.category == "paraphrase"))]
    if case == "brglm_separated":
        hit = (r.model == "model_2") & (r.category == "formatting") & r.valid.astype(bool)
        r = r.copy()
        r.loc[hit & r.agree.notna(), "agree"] = True
    return r.reset_index(drop=True)


def r_input(rows: pd.DataFrame) -> pd.DataFrame:
    """The fitted rows as R reads them: 0/1 agree, factors, cluster_id, sorted by cluster."""
    d = rows[(rows.category != "original") & rows.valid.astype(bool) & rows.agree.notna()]
    d = d.assign(agree=d.agree.astype(int), cluster_id=d.dataset + "/" + d.item_id)
    d = d.sort_values("cluster_id", kind="stable")
    return d[["agree", "model", "dataset", "dataset_type", "category", "cluster_id"]]


def fit_case(case: str):
    rows = case_rows(case)
    if CASES[case] == "brglm":
        return gee(rows, FORMULA, corstr="independence", bias_reduction=True, tol=1e-13)
    return gee(rows, FORMULA, tol=1e-13)


def _series(ref: pd.DataFrame, quantity: str) -> pd.Series:
    x = ref[ref.quantity == quantity]
    assert len(x), f"reference lacks {quantity!r}"
    return pd.Series(x.value.astype(float).to_numpy(), index=x.name.astype(str).to_numpy())


def compare(case: str, ref: pd.DataFrame, rtol: float) -> float:
    """Assert agreement with R's numbers; return the largest relative difference."""
    fit = fit_case(case)
    worst = 0.0

    def check(mine: pd.Series, quantity: str) -> None:
        nonlocal worst
        theirs = _series(ref, quantity)
        assert set(mine.index) == set(theirs.index), quantity
        a = mine.reindex(theirs.index).to_numpy(dtype=float)
        b = theirs.to_numpy()
        worst = max(worst, float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0, err_msg=f"{case}: {quantity}")

    check(fit.params, "coef")
    if CASES[case] == "brglm":
        # brglm2's vcov is the model-based inverse information: B^{-1} with phi = 1
        v = fit.cov_naive / fit.scale
        flat = {f"{i}|{j}": v.loc[i, j] for i in v.index for j in v.columns}
        check(pd.Series(flat), "vcov")
        return worst
    mm = fit.marginal_means()
    key = mm.dataset_type.astype(str) + "|" + mm.category.astype(str)
    for col in ("estimate", "se", "ci_low", "ci_high"):
        check(pd.Series(mm[col].to_numpy(), index=key.to_numpy()), f"mm_{col}")
    mr = fit.marginal_means(scale="response")
    for col in ("estimate", "se", "ci_low"):
        check(pd.Series(mr[col].to_numpy(), index=key.to_numpy()), f"mmr_{col}")
    ct = fit.contrasts().set_index("category")
    for col in ("difference", "se", "z", "p_value", "ci_low", "ci_high", "p_holm"):
        check(ct[col], f"ct_{col}")
    return worst


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, dtype={"name": str})


def run_r(case: str, out: Path) -> pd.DataFrame:
    data = out.with_suffix(".data.csv")
    r_input(case_rows(case)).to_csv(data, index=False)
    run = subprocess.run(
        ["Rscript", str(SCRIPT), CASES[case], str(data), str(out), FORMULA],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    return _read(out)


def _r_status() -> str | None:
    if shutil.which("Rscript") is None:
        return "Rscript is not installed (make sysdeps installs R with emmeans and brglm2)"
    probe = subprocess.run(
        ["Rscript", "-e", "library(geepack); library(emmeans); library(brglm2)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0:
        return "R lacks geepack, emmeans or brglm2 (apt-get install r-cran-emmeans r-cran-brglm2)"
    return None


@pytest.mark.parametrize("case", list(CASES))
def test_matches_committed_r_reference(case):
    assert compare(case, _read(FIXTURES / f"r_{case}.csv"), rtol=1e-6) < 1e-6


def test_missing_rows_still_average_over_the_full_grid():
    full, missing = fit_case("emmeans_full"), fit_case("emmeans_missing")
    a = full.marginal_means().set_index(["dataset_type", "category"])
    b = missing.marginal_means().set_index(["dataset_type", "category"])
    cell = ("objective", "paraphrase")
    assert a.loc[cell, "n_averaged"] == b.loc[cell, "n_averaged"] == 3
    assert b.loc[cell, "n_rows"] < a.loc[cell, "n_rows"]
    # the model_3 row of the grid is predicted from the additive model, not left out
    assert np.isfinite(b.loc[cell, "estimate"])


@pytest.mark.r
@pytest.mark.parametrize("case", list(CASES))
def test_live_r_matches(case, tmp_path):
    reason = _r_status()
    if reason:
        pytest.skip(reason)
    live = run_r(case, tmp_path / f"{case}.csv")
    compare(case, live, rtol=1e-6)
    committed = _read(FIXTURES / f"r_{case}.csv")
    merged = live.merge(committed, on=["quantity", "name"], suffixes=("_live", ""))
    assert len(merged) == len(committed) == len(live)
    np.testing.assert_allclose(
        merged.value_live.astype(float), merged.value.astype(float), rtol=1e-9
    )
