"""analyses.gee against R's geepack + car.

The committed fixture ``tests/fixtures/analyses/gee_reference.csv`` holds R's
numbers for the committed table ``gee_table.csv`` -- the type model and the dataset
model (Kamal et al. 2026, Table 3) -- written by
``tests/r/gee_reference.R`` (which also derives the agreement flags itself, in
R).  The comparison with the fixture always runs; the live refit runs where
``Rscript`` with geepack and car is installed (``make sysdeps`` installs them)
and is skipped with the reason otherwise.
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
TABLE = HERE / "fixtures" / "analyses" / "gee_table.csv"
REFERENCE = HERE / "fixtures" / "analyses" / "gee_reference.csv"
SCRIPT = HERE / "r" / "gee_reference.R"
RTOL = 1e-8


def _read_reference(path: Path) -> pd.DataFrame:
    ref = pd.read_csv(path, keep_default_na=False, dtype={"name": str})
    ref["value"] = ref["value"].astype(float)
    return ref


FORMULAS = {
    "": "agree ~ model + dataset_type * category + model:category",
    "dataset_": "agree ~ model + dataset * category + model:category",  # Kamal et al. Table 3
}


def _compare(ref: pd.DataFrame, cluster: str, prefix: str = "") -> dict[str, float]:
    """Largest relative difference per quantity; asserts every one is below RTOL."""
    table = read_table(TABLE)
    fit = gee(table, FORMULAS[prefix], cluster=cluster, tol=1e-12)
    r = ref[ref.cluster == cluster]

    def get(q: str) -> pd.Series:
        q = q if q in ("n_obs", "n_agree") else prefix + q
        x = r[r.quantity == q]
        assert len(x), f"reference lacks {q!r} for cluster {cluster!r}"
        return pd.Series(x.value.to_numpy(), index=x.name.to_numpy())

    w2, w3 = fit.wald(2).set_index("term"), fit.wald(3).set_index("term")
    se_sum = pd.Series(np.sqrt(np.diag(fit.cov_sum.to_numpy())), index=fit.params_sum.index)
    pairs = {
        "coef_treatment": fit.params,
        "se_treatment": fit.bse,
        "coef_sum": fit.params_sum,
        "se_sum": se_sum,
        "alpha": pd.Series([fit.alpha], index=[""]),
        "scale": pd.Series([fit.scale], index=[""]),
        "wald2_chi2": w2.chi2,
        "wald3_chi2": w3.chi2,
    }
    worst = {}
    for q, mine in pairs.items():
        theirs = get(q)
        assert set(theirs.index) == set(mine.index), q
        mine = mine.reindex(theirs.index).to_numpy(dtype=float)
        rel = np.abs(mine - theirs.to_numpy()) / np.abs(theirs.to_numpy())
        worst[q] = float(rel.max())
        np.testing.assert_allclose(mine, theirs.to_numpy(), rtol=RTOL, atol=0, err_msg=q)
    np.testing.assert_array_equal(w2.dof.reindex(get("wald2_df").index), get("wald2_df"))
    np.testing.assert_array_equal(w3.dof.reindex(get("wald3_df").index), get("wald3_df"))
    assert fit.n_obs == int(get("n_obs").iloc[0])
    # R derived the agreement flags on its own: the number of agreeing rows must match.
    rows = agreement_rows(table)
    fitted = rows[rows.valid.astype(bool) & (rows.category != "original") & rows.agree.notna()]
    assert len(fitted) == fit.n_obs
    assert int(fitted.agree.astype(bool).sum()) == int(get("n_agree").iloc[0])
    return worst


@pytest.mark.parametrize("prefix", list(FORMULAS))
@pytest.mark.parametrize("cluster", ["item", "model_item"])
def test_matches_committed_geepack_reference(cluster, prefix):
    worst = _compare(_read_reference(REFERENCE), cluster, prefix)
    assert max(worst.values()) < RTOL


def test_dataset_model_is_fitted_with_dataset_nesting_dataset_type():
    # dataset determines dataset_type: adding dataset_type to the dataset model aliases one
    # dataset column (geeglm refuses such a design; here it is dropped with a note), and the
    # marginal means equal the dataset model's (the grid keeps only the nested pairs).
    table = read_table(TABLE)
    ds = gee(table, FORMULAS["dataset_"], tol=1e-12)
    both = gee(table, "agree ~ model + dataset_type + dataset * category + model:category")
    assert both.aliased == ["datasetsurvey_likert5"]
    assert any("aliased" in n for n in both.notes)
    np.testing.assert_allclose(
        ds.marginal_means(by=("dataset", "category")).estimate,
        both.marginal_means(by=("dataset", "category")).estimate,
        rtol=1e-7,
    )
    by_type = both.marginal_means().set_index(["dataset_type", "category"])
    assert (by_type.n_averaged == 6).all()  # 3 models x the 2 datasets of each type


def _r_status() -> str | None:
    if shutil.which("Rscript") is None:
        return "Rscript is not installed (make sysdeps installs r-base-core, geepack and car)"
    probe = subprocess.run(
        ["Rscript", "-e", "library(geepack); library(car)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0:
        return (
            "R is installed but geepack or car is missing (apt-get install r-cran-geepack "
            "r-cran-car)"
        )
    return None


@pytest.mark.r
def test_live_refit_with_r_matches(tmp_path):
    reason = _r_status()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "ref.csv"
    run = subprocess.run(
        ["Rscript", str(SCRIPT), str(TABLE), str(out)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    live = _read_reference(out)
    for cluster in ("item", "model_item"):
        for prefix in FORMULAS:
            _compare(live, cluster, prefix)
    # the committed fixture is what R writes today
    committed = _read_reference(REFERENCE)
    merged = live.merge(committed, on=["cluster", "quantity", "name"], suffixes=("_live", ""))
    assert len(merged) == len(committed) == len(live)
    np.testing.assert_allclose(merged.value_live, merged.value, rtol=1e-9)
