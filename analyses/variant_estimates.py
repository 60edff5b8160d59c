"""Every variant's performance from a sparse (budgeted) table: PromptEval's model.

A budgeted run (``robustness run --budget``) asks a fraction of the (variant, item) cells; the
table simply lacks the others. :func:`estimate_variants` fits a Rasch-type model to the asked
cells, predicts the unasked ones and returns each variant's estimated performance over all
items and the distribution of that performance over variants (its quantiles), with intervals
from a bootstrap over items. It works on any long table with holes (ours or one made
elsewhere); on a full table it gives the observed means with intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from analyses.variant_model import PRIOR_GRID, Prior, VariantData, choose_prior, fit_logit
from robustness.core.errors import AnalysisError
from robustness.core.table import ANALYSIS_COLUMNS, validate

__all__ = [
    "PER_VARIANT_COLUMNS",
    "QUANTILES",
    "QUANTILE_COLUMNS",
    "VariantEstimates",
    "estimate_variants",
    "outcome_cells",
]

REFERENCE = "original"
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
PER_VARIANT_COLUMNS = [
    "model",
    "dataset_type",
    "category",
    "variant_id",
    "n_observed",
    "estimate",
    "ci_low",
    "ci_high",
    "observed_mean",
    "theta",
]
ITEM_COLUMNS = ["model", "dataset_type", "dataset", "item_id", "n_observed", "beta"]
QUANTILE_COLUMNS = ["model", "dataset_type", "q", "estimate", "ci_low", "ci_high", "observed"]
FIT_COLUMNS = [
    "model",
    "dataset_type",
    "n_variants",
    "n_items",
    "n_observed",
    "n_grid",
    "n_features",
    "prior_variant_sd",
    "prior_item_sd",
    "prior_feature_sd",
]


@dataclass(frozen=True)
class VariantEstimates:
    """What :func:`estimate_variants` returns.

    ``per_variant``: one row per model x dataset type x variant (:data:`PER_VARIANT_COLUMNS`;
    ``observed_mean`` is the naive mean over the asked cells); ``quantiles``: one row per model
    x dataset type x q (:data:`QUANTILE_COLUMNS`; ``observed`` is the naive quantile of the
    observed means); ``items``: each item's fitted difficulty (:data:`ITEM_COLUMNS`; ``theta``
    in ``per_variant`` is each variant's fitted ability, both on the logit scale); ``fits``:
    per model x dataset type the grid, the counts and the prior scales chosen; ``budget``: the
    run's design when the table carries it, else None.
    """

    per_variant: pd.DataFrame
    quantiles: pd.DataFrame
    fits: pd.DataFrame
    items: pd.DataFrame
    budget: dict[str, Any] | None = None


def outcome_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The binary outcome of every asked cell: correctness or agreement with the original.

    Parameters
    ----------
    table
        A long table (the analysis columns, and ``correct`` or ``gold`` for objective rows).

    Returns
    -------
    pandas.DataFrame
        ``model, dataset_type, dataset, item_id, category, variant_id, params, y``. Objective
        items: ``y`` = correct (an invalid answer counts as wrong). Subjective items: ``y`` = the
        answer equals the original prompt's answer (an invalid answer counts as a change); the
        original rows themselves and items whose original answer is invalid or missing are left
        out.
    """
    if not isinstance(table, pd.DataFrame):
        raise AnalysisError(
            f"estimate_variants needs a long table (a DataFrame), not {type(table).__name__}."
        )
    extra = [c for c in ("correct", "gold", "params") if c in table.columns]
    t = validate(table[[*ANALYSIS_COLUMNS, *extra]], list(ANALYSIS_COLUMNS))
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    y = np.full(len(t), np.nan)
    objective = (t["dataset_type"] == "objective").to_numpy()
    if objective.any():
        y[objective] = _correct(t)[objective] & valid[objective]
    keep = objective.copy()
    subjective = ~objective
    if subjective.any():
        keys = ["model", "dataset", "item_id"]
        ref = t.loc[(t["category"] == REFERENCE).to_numpy() & valid & subjective, [*keys, "answer"]]
        merged = t[keys].merge(ref.rename(columns={"answer": "_ref"}), on=keys, how="left")
        ref_answer = merged["_ref"].to_numpy(dtype=float, na_value=np.nan)
        answer = t["answer"].to_numpy(dtype=float, na_value=np.nan)
        asked = subjective & (t["category"] != REFERENCE).to_numpy() & ~np.isnan(ref_answer)
        y[asked] = (valid[asked] & (answer[asked] == ref_answer[asked])).astype(float)
        keep |= asked
    out = t.loc[keep, ["model", "dataset_type", "dataset", "item_id", "category", "variant_id"]]
    out = out.assign(params=t.loc[keep, "params"] if "params" in t.columns else None)
    return out.assign(y=y[keep]).reset_index(drop=True)


def _correct(t: pd.DataFrame) -> np.ndarray:
    """Correct per row (a missing value is wrong), from ``correct`` or ``answer == gold``."""
    if "correct" in t.columns:
        return t["correct"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    if "gold" in t.columns:
        gold = t["gold"].to_numpy(dtype=float, na_value=np.nan)
        return t["answer"].to_numpy(dtype=float, na_value=np.nan) == gold
    raise AnalysisError("estimate_variants: objective rows need a 'correct' or 'gold' column.")


def _percentile(draws: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    tail = (1 - level) / 2
    return np.quantile(draws, tail, axis=0), np.quantile(draws, 1 - tail, axis=0)


def _abilities(data: VariantData, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(theta_v = mu + z_v' gamma + u_v, beta_i) under ``coef``."""
    nz = data.z.shape[1]
    mu, gamma = coef[0], coef[1 : 1 + nz]
    u = coef[1 + nz : 1 + nz + data.n_variants]
    return mu + data.z @ gamma + u, coef[1 + nz + data.n_variants :]


def _grid(data: VariantData, coef: np.ndarray) -> np.ndarray:
    """P(Y_vi = 1) for every variant x item under ``coef``."""
    theta, beta = _abilities(data, coef)
    return np.asarray(expit(theta[:, None] - beta[None, :]))


def _resample_items(data: VariantData, rng: np.random.Generator) -> np.ndarray:
    """Item multiplicities of one bootstrap sample, drawn within each dataset."""
    m = np.zeros(data.n_items)
    for dataset in pd.unique(data.item_dataset):
        idx = np.flatnonzero(data.item_dataset == dataset)
        np.add.at(m, rng.choice(idx, size=len(idx), replace=True), 1.0)
    return m


def _one_group(
    data: VariantData,
    chosen: np.ndarray,
    qs: np.ndarray,
    prior: Prior,
    n_boot: int,
    n_draws: int,
    level: float,
    rng: np.random.Generator,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Point estimates and bootstrap intervals of one (model, dataset type): per variant,
    per quantile, per item."""
    x = data.design(data.v, data.i)
    precision = data.precision(prior)
    coef = fit_logit(x, data.y, precision)
    observed = np.zeros((data.n_variants, data.n_items), dtype=bool)
    observed[data.v, data.i] = True
    y_grid = np.zeros_like(observed, dtype=float)
    y_grid[data.v, data.i] = data.y
    p = _grid(data, coef)
    theta, beta = _abilities(data, coef)
    estimate = np.where(observed, y_grid, p).mean(axis=1)
    n_obs = observed.sum(axis=1)
    naive = np.bincount(data.v, weights=data.y, minlength=data.n_variants) / np.maximum(n_obs, 1)
    imputed = [np.where(observed, y_grid, rng.random(p.shape) < p) for _ in range(n_draws)]
    draws = np.array([np.quantile(s.mean(axis=1)[chosen], qs) for s in imputed])
    boot_v = np.empty((n_boot, data.n_variants))
    boot_q = np.empty((n_boot, len(qs)))
    for b in range(n_boot):
        m = _resample_items(data, rng)
        coef_b = fit_logit(x, data.y, precision, weights=m[data.i], start=coef)
        p_b = _grid(data, coef_b)
        s_b = np.where(observed, y_grid, rng.random(p_b.shape) < p_b)
        boot_v[b] = s_b @ m / m.sum()
        boot_q[b] = np.quantile(boot_v[b, chosen], qs)
    v_low, v_high = _percentile(boot_v, level) if n_boot else (np.nan * estimate,) * 2
    q_est = draws.mean(axis=0)
    q_low, q_high = (np.full(len(qs), np.nan),) * 2
    if n_boot:  # the basic bootstrap interval (Davison & Hinkley 1997, eq. 5.6)
        b_low, b_high = _percentile(boot_q, level)
        q_low, q_high = np.clip(2 * q_est - b_high, 0, 1), np.clip(2 * q_est - b_low, 0, 1)
    per_variant = {
        "n_observed": n_obs,
        "estimate": estimate,
        "ci_low": v_low,
        "ci_high": v_high,
        "observed_mean": naive,
        "theta": theta,
    }
    quantiles = {
        "estimate": q_est,
        "ci_low": q_low,
        "ci_high": q_high,
        "observed": np.quantile(naive[chosen], qs),
    }
    items = {"n_observed": observed.sum(axis=0), "beta": beta}
    return per_variant, quantiles, items


def estimate_variants(
    table: pd.DataFrame,
    *,
    categories: Sequence[str] | None = None,
    quantiles: Sequence[float] = QUANTILES,
    n_boot: int = 200,
    n_draws: int = 50,
    level: float = 0.95,
    seed: int = 0,
    covariates: bool = True,
    prior: Prior | None = None,
) -> VariantEstimates:
    """Per-variant performance and its quantiles over variants, from a table with holes.

    Parameters
    ----------
    table
        A long table; unasked (variant, item) cells are simply absent. Its ``attrs["budget"]``
        (a budgeted run's design) is passed through.
    categories
        The categories whose variants are reported and whose distribution the quantiles
        describe (default: all). The model is fitted to every cell either way.
    quantiles
        The quantiles of the distribution over variants.
    n_boot
        Bootstrap samples of items (0: no intervals).
    n_draws
        Imputations of the unasked cells behind each quantile's point estimate.
    level
        Coverage of the percentile intervals.
    seed
        Seeds the cross-validation folds, the imputations and the bootstrap.
    covariates
        Use the variants' ``params`` as covariates (False: the plain Rasch model).
    prior
        Fixed prior scales; None chooses them from :data:`~analyses.variant_model.PRIOR_GRID`
        by 5-fold cross-validated log loss on the asked cells.

    Returns
    -------
    VariantEstimates
        ``per_variant`` (model, dataset_type, category, variant_id, n_observed, estimate,
        ci_low, ci_high, observed_mean, theta), ``quantiles`` (model, dataset_type, q,
        estimate, ci_low, ci_high, observed), ``items`` (model, dataset_type, dataset,
        item_id, n_observed, beta), ``fits`` and ``budget``.

    Notes
    -----
    PromptEval (Polo et al., 2024, sec. 3) models the correctness of prompt template ``v`` on
    example ``i`` as a Rasch model with covariates,

        P(Y_vi = 1) = sigma(theta_v - beta_i),   theta_v = mu + z_v' gamma + u_v,

    fitted to the observed cells by L2-regularised logistic regression, and estimates the
    template's score over all ``I`` examples by keeping what was observed and predicting the
    rest,

        S_v = (1 / I) sum_i [ Y_vi if (v, i) was asked, else sigma(theta_v - beta_i) ],

    and the q-quantile of performance over templates as the q-quantile of the ``S_v``.

    Here ``z_v`` are the variant's covariates from its ``params``
    (:func:`analyses.variant_model.param_features`: each field of a format as a factor, the
    family and its scalar parameters otherwise); a variant whose parameters differ between
    items (e.g. ``option_order/3`` is another order on each item) gets their mean over its asked
    cells. The penalty is a Gaussian prior per block (``u_v``, ``beta_i``, ``gamma``; the
    intercept is free), its scales chosen by cross-validation (``prior=None``).

    Where we differ from the paper: (1) subjective items have no correct answer; their outcome
    is agreement with the original prompt's answer (1 - the flip), and their original prompt is
    not a variant. Objective and subjective items are fitted and reported apart
    (``dataset_type``). (2) A quantile's point estimate is the mean over ``n_draws``
    imputations (unasked cells drawn from Bernoulli(p_vi)) of the quantile of the imputed
    scores: the expected full-grid quantile, since the full grid's per-variant scores carry
    their items' binary noise, which the plug-in quantile of the smooth S_v would shrink away.
    (3) Intervals: a bootstrap over items (within datasets), refitting the model on each sample
    and drawing the unasked cells from the refitted probabilities, so an interval carries the
    binary noise of the cells that were not asked; a variant's bootstrap score is the
    multiplicity-weighted mean over items. Per-variant intervals are percentile intervals
    (Efron & Tibshirani 1993, ch. 13); quantile intervals are basic bootstrap intervals
    (2 q_hat - upper, 2 q_hat - lower; Davison & Hinkley 1997, eq. 5.6), because a quantile's
    bootstrap distribution sits to one side of its estimate under the shrinkage (measured in
    ``bench/budget.py --simulate``, 10 seeds: percentile intervals covered 58% and 72% of seeds
    at 5% and 10% budgets, basic ones 82% and 96%). These intervals are ours, not the paper's.
    (4) The prior scales are chosen by cross-validated log loss over a small grid.

    References
    ----------
    Polo, F. M., Xu, R., Weber, L., Silva, M., Bhardwaj, O., Choshen, L., de Oliveira, A. F. M.,
    Sun, Y. & Yurochkin, M. (2024). Efficient multi-prompt evaluation of LLMs. NeurIPS 2024;
    arXiv:2405.17202.
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application.
    Cambridge University Press.

    Examples
    --------
    >>> import numpy as np
    >>> from analyses.variant_synthetic import rasch_formats, rasch_table
    >>> rng = np.random.default_rng(0)
    >>> formats = rasch_formats(6, rng)
    >>> table = rasch_table(formats.theta, rng.normal(0, 1, 30), rng, levels=formats.levels)
    >>> est = estimate_variants(table.sample(frac=0.5, random_state=0), n_boot=5)
    >>> est.quantiles["q"].tolist()
    [0.05, 0.25, 0.5, 0.75, 0.95]
    """
    _check_arguments(quantiles, n_boot, n_draws, level)
    cells = outcome_cells(table)
    qs = np.asarray(quantiles, dtype=float)
    n_columns = cells[["category", "variant_id"]].drop_duplicates().shape[0]
    if n_columns < 2:
        raise AnalysisError(
            f"estimate_variants needs at least two variants to compare; the table has "
            f"{n_columns} (besides the subjective items' originals)."
        )
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x50455356]))
    rows_v, rows_q, rows_f, rows_i = [], [], [], []
    for (model, dtype), group in cells.groupby(["model", "dataset_type"], sort=True):
        data = VariantData.from_cells(group, covariates=covariates)
        if data.n_variants < 2:
            raise AnalysisError(
                f"estimate_variants: model {model!r}, {dtype} items have one variant "
                f"({data.variants.iloc[0, 0]}/{data.variants.iloc[0, 1]}); estimates need two."
            )
        chosen = np.ones(data.n_variants, dtype=bool)
        if categories is not None:
            chosen = data.variants["category"].isin(list(categories)).to_numpy()
            if not chosen.any():
                continue
        used = prior if prior is not None else choose_prior(data, PRIOR_GRID, rng)
        pv, pq, pi = _one_group(data, chosen, qs, used, n_boot, n_draws, level, rng)
        rows_i.append(data.items.assign(model=model, dataset_type=dtype, **pi))
        frame = data.variants.assign(model=model, dataset_type=dtype, **pv)
        rows_v.append(frame.loc[chosen])
        rows_q.append(pd.DataFrame({"model": model, "dataset_type": dtype, "q": qs, **pq}))
        rows_f.append(_fit_row(model, dtype, data, used))
    if not rows_v:
        raise AnalysisError(f"estimate_variants: no variant of the categories {categories!r}.")
    return VariantEstimates(
        per_variant=pd.concat(rows_v, ignore_index=True)[PER_VARIANT_COLUMNS],
        quantiles=pd.concat(rows_q, ignore_index=True)[QUANTILE_COLUMNS],
        fits=pd.DataFrame(rows_f, columns=FIT_COLUMNS),
        items=pd.concat(rows_i, ignore_index=True)[ITEM_COLUMNS],
        budget=table.attrs.get("budget") if isinstance(table.attrs.get("budget"), dict) else None,
    )


def _fit_row(model: str, dtype: str, data: VariantData, prior: Prior) -> dict[str, Any]:
    return {
        "model": model,
        "dataset_type": dtype,
        "n_variants": data.n_variants,
        "n_items": data.n_items,
        "n_observed": len(data.y),
        "n_grid": data.n_variants * data.n_items,
        "n_features": data.z.shape[1],
        "prior_variant_sd": prior.variant,
        "prior_item_sd": prior.item,
        "prior_feature_sd": prior.feature,
    }


def _check_arguments(quantiles: Sequence[float], n_boot: int, n_draws: int, level: float) -> None:
    qs = np.asarray(quantiles, dtype=float)
    if qs.ndim != 1 or not len(qs) or np.any(~np.isfinite(qs)) or np.any((qs < 0) | (qs > 1)):
        raise AnalysisError(f"estimate_variants: quantiles must lie in [0, 1], got {quantiles!r}.")
    for name, value, low in (("n_boot", n_boot, 0), ("n_draws", n_draws, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise AnalysisError(
                f"estimate_variants: {name} must be a whole number >= {low}, got {value!r}."
            )
    if not 0 < level < 1:
        raise AnalysisError(f"estimate_variants: level must lie in (0, 1), got {level!r}.")
