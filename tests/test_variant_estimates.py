"""estimate_variants (issue 28): the penalised fit against statsmodels, recovery of known theta
and beta, estimates from a sparse table, the outcomes, and bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import analyses as an
from analyses.variant_estimates import outcome_cells
from analyses.variant_model import Prior, VariantData, fit_logit, param_features
from analyses.variant_synthetic import rasch_formats, rasch_table
from robustness.core.errors import AnalysisError


def test_the_penalised_fit_matches_statsmodels_ridge_glm():
    import statsmodels.api as sm

    rng = np.random.default_rng(0)
    f = rasch_formats(6, rng)
    table = rasch_table(f.theta, rng.normal(0, 1, 25), rng, levels=f.levels)
    data = VariantData.from_cells(outcome_cells(table))
    x = data.design(data.v, data.i)
    precision = data.precision(Prior(variant=0.7, item=1.3, feature=0.9))
    ours = fit_logit(x, data.y, precision)
    # statsmodels minimises -loglik / n + sum_k alpha_k b_k^2 / 2 (L1_wt = 0: ridge)
    ref = sm.GLM(data.y, x.toarray(), family=sm.families.Binomial()).fit_regularized(
        alpha=precision / len(data.y), L1_wt=0.0, maxiter=2000, cnvrg_tol=1e-12
    )

    def objective(b):
        eta = x @ b
        return -np.sum(data.y * eta - np.logaddexp(0, eta)) + 0.5 * precision @ (b * b)

    # statsmodels' coordinate descent stops a little short along the flat shift between the
    # intercept and the item and variant effects: ours is as low or lower, and close to it
    assert objective(ours) <= objective(ref.params) + 1e-9
    np.testing.assert_allclose(ours, ref.params, atol=2e-3)
    np.testing.assert_allclose(x @ ours, x @ ref.params, atol=2e-3)


def test_known_theta_and_beta_are_recovered_within_their_standard_errors():
    rng = np.random.default_rng(11)
    theta = rng.normal(0.3, 0.8, 30)
    beta = rng.normal(0.0, 1.5, 200)
    table = rasch_table(theta, beta, rng)
    est = an.estimate_variants(
        table, n_boot=0, n_draws=1, covariates=False, prior=Prior(variant=20, item=20)
    )
    fitted_theta = est.per_variant.set_index("variant_id")["theta"]
    fitted_beta = est.items.set_index("item_id")["beta"]
    t_hat = np.array([fitted_theta["original" if v == 0 else f"formatting/{v}"] for v in range(30)])
    b_hat = np.array([fitted_beta[f"i{i:04d}"] for i in range(200)])
    # theta - beta is identified up to a common shift: compare centred on the true mean
    shift = np.mean(t_hat - theta)
    p = expit(theta[:, None] - beta[None, :])
    se_theta = 1 / np.sqrt((p * (1 - p)).sum(axis=1))  # Fisher information of theta_v
    se_beta = 1 / np.sqrt((p * (1 - p)).sum(axis=0))
    z_theta = (t_hat - shift - theta) / se_theta
    z_beta = (b_hat - shift - beta) / se_beta
    # mean squared z about 1 when the estimates are right; 2 allows for the vague prior's pull
    # and the asymptotic SEs (30 and 200 terms: chi2/df above 2 has p < 1e-3 and < 1e-12)
    assert np.mean(z_theta**2) < 2.0 and np.mean(z_beta**2) < 2.0
    assert np.corrcoef(t_hat, theta)[0, 1] > 0.95


def _sparse(seed, share=0.12, n_variants=41, n_items=120):
    rng = np.random.default_rng(seed)
    f = rasch_formats(n_variants, rng)
    beta = rng.normal(-0.3, 1.5, n_items)
    asked = rng.random((n_variants, n_items)) < share
    asked[0] = True  # the original of every item
    asked[np.arange(n_variants), rng.integers(0, n_items, n_variants)] = True
    full = rasch_table(f.theta, beta, np.random.default_rng(seed + 1), levels=f.levels)
    sparse = rasch_table(f.theta, beta, np.random.default_rng(seed + 1), asked, levels=f.levels)
    return full, sparse


def test_a_sparse_table_is_estimated_better_than_by_its_observed_means():
    ours, naive, covered = [], [], []
    for seed in range(3):
        full, sparse = _sparse(seed)
        truth = full.groupby("variant_id")["correct"].mean()
        est = an.estimate_variants(sparse, n_boot=40, seed=seed)
        pv = est.per_variant.set_index("variant_id")
        t = truth[pv.index]
        ours.append((pv["estimate"] - t).abs().mean())
        naive.append((pv["observed_mean"] - t).abs().mean())
        covered.append(((pv["ci_low"] <= t) & (t <= pv["ci_high"])).mean())
        assert est.fits["n_observed"].iloc[0] == len(sparse)
        assert est.fits["n_grid"].iloc[0] == 41 * 120
    assert np.mean(ours) < 0.8 * np.mean(naive)
    assert np.mean(covered) > 0.85


def test_a_full_table_gives_its_observed_means():
    full, _ = _sparse(5, n_variants=8, n_items=30)
    est = an.estimate_variants(full, n_boot=0)
    pv = est.per_variant
    np.testing.assert_allclose(pv["estimate"], pv["observed_mean"])
    truth = full.groupby("variant_id")["correct"].mean()
    np.testing.assert_allclose(pv["estimate"], truth[pv["variant_id"]].to_numpy())
    q = est.quantiles["estimate"].to_numpy()  # no unasked cell: every imputation is the data
    np.testing.assert_allclose(q, np.quantile(truth, an_quantiles()))
    columns = ["model", "dataset_type", "q", "estimate", "ci_low", "ci_high"]
    assert list(est.quantiles.columns[:6]) == columns


def an_quantiles():
    from analyses.variant_estimates import QUANTILES

    return QUANTILES


def test_the_same_seed_gives_the_same_estimates():
    _, sparse = _sparse(2, n_variants=10, n_items=40, share=0.3)
    a = an.estimate_variants(sparse, n_boot=10, seed=4)
    b = an.estimate_variants(sparse, n_boot=10, seed=4)
    pd.testing.assert_frame_equal(a.per_variant, b.per_variant)
    pd.testing.assert_frame_equal(a.quantiles, b.quantiles)


def _subjective():
    rows = []
    for item, (orig, answers) in {"s1": (2, [2, 1, None]), "s2": (None, [0, 0, 0])}.items():
        for v, answer in enumerate([orig, *answers]):
            rows.append(
                {
                    "model": "m",
                    "dataset": "pct",
                    "dataset_type": "subjective",
                    "item_id": item,
                    "category": "original" if v == 0 else "framing",
                    "variant_id": "original" if v == 0 else f"framing/{v}",
                    "answer": answer,
                    "valid": answer is not None,
                }
            )
    return pd.DataFrame(rows).astype({"answer": "Int64"})


def test_subjective_outcomes_are_agreement_with_the_original_answer():
    cells = outcome_cells(_subjective())
    # s2 has no valid original answer: left out; s1: same, changed, invalid (a change)
    assert list(cells["item_id"]) == ["s1"] * 3
    assert list(cells["y"]) == [1.0, 0.0, 0.0]
    assert "original" not in set(cells["category"])


def test_covariates_of_formats_and_other_families():
    fmt = param_features("formatting", {"format_index": 7, "format": {"casing": "upper"}})
    assert fmt == {"family=formatting": 1.0, "format.casing=upper": 1.0}
    framing = param_features("framing", {"style": "role", "wording": 2})
    assert framing == {"family=framing": 1.0, "framing.style=role": 1.0, "framing.wording=2": 1.0}
    noise = param_features("spelling_noise", {"rate": 0.1, "edits": [[1, "swap"]]})
    assert noise == {"family=spelling_noise": 1.0, "spelling_noise.rate=0.1": 1.0}
    assert param_features("original", {}) == {}


def test_one_variant_is_one_clear_error():
    full, _ = _sparse(1, n_variants=3, n_items=10)
    only = full[full["variant_id"] == "original"]
    with pytest.raises(AnalysisError, match="at least two variants to compare; the table has 1"):
        an.estimate_variants(only)
    with pytest.raises(AnalysisError, match="n_boot must be a whole number"):
        an.estimate_variants(full, n_boot=-1)
    with pytest.raises(AnalysisError, match="quantiles must lie in"):
        an.estimate_variants(full, quantiles=[1.5])
    with pytest.raises(AnalysisError, match="needs a long table"):
        an.estimate_variants([1, 2])
