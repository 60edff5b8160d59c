"""The PromptEval-style model behind :func:`analyses.estimate_variants` (design and fit).

``VariantData`` holds one (model, dataset type)'s observed cells: a binary outcome per
(variant, item), the variants' covariates from their ``params`` and the items. ``fit_logit``
fits the L2-penalised (Gaussian-prior, MAP) logistic regression

    logit P(Y_vi = 1) = mu + z_v' gamma + u_v - beta_i

with scipy's L-BFGS-B on the exact penalised log-likelihood and its gradient (no optimiser of
our own); :func:`choose_prior` picks the prior scales by K-fold cross-validated log loss.
See :mod:`analyses.variant_estimates` for the model's statement and references.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import minimize
from scipy.special import expit

from robustness.core.errors import AnalysisError

__all__ = ["PRIOR_GRID", "Prior", "VariantData", "choose_prior", "fit_logit", "param_features"]


@dataclass(frozen=True)
class Prior:
    """Prior standard deviations (L2 penalty 1 / sd^2) of the three blocks of coefficients."""

    variant: float = 0.5  # u_v: a variant's departure from what its covariates predict
    item: float = 2.0  # beta_i: item difficulty
    feature: float = 1.0  # gamma: covariate effects


#: The cross-validated grid of (variant, item) prior scales; features keep 1.0.
PRIOR_GRID: tuple[Prior, ...] = tuple(
    Prior(variant=v, item=i) for v in (0.1, 0.3, 1.0, 3.0) for i in (1.0, 3.0)
)


def param_features(category: str, params: Mapping[str, Any]) -> dict[str, float]:
    """Covariates of one variant from its ``params``.

    Parameters
    ----------
    category
        The variant's family (``original`` has no covariates).
    params
        Its parameters, as the family wrote them.

    Returns
    -------
    dict
        Indicator name -> 1.0.

    Notes
    -----

    The family is one indicator. For ``formatting`` every field of ``params["format"]`` (the
    fields where the format differs from the original's) is a factor level
    (``format.casing=upper``); fields the variant keeps are the reference level. For the other
    families every scalar parameter is a factor level (``framing.style=role``) and every nested
    mapping's scalars too; lists (edits, orders, substitutions) and ``format_index`` (the
    variant's own name) give none. The original prompt has no covariates.
    """
    if category == "original":
        return {}
    out = {f"family={category}": 1.0}
    for key, value in params.items():
        if key == "format_index" or isinstance(value, list | tuple):
            continue
        if isinstance(value, Mapping):
            prefix = "format" if key == "format" else f"{category}.{key}"
            for sub, sub_value in value.items():
                if not isinstance(sub_value, list | tuple | Mapping):
                    out[f"{prefix}.{sub}={sub_value}"] = 1.0
        else:
            out[f"{category}.{key}={value}"] = 1.0
    return out


def _parse(params: Any) -> Mapping[str, Any]:
    if isinstance(params, Mapping):
        return params
    if params is None or (isinstance(params, float) and np.isnan(params)) or params == "":
        return {}
    try:
        parsed = json.loads(params)
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, Mapping) else {}


@dataclass(frozen=True)
class VariantData:
    """One (model, dataset type)'s observed cells, coded for the fit.

    ``variants`` (category, variant_id) and ``items`` (dataset, item_id) index the grid;
    ``v``, ``i`` and ``y`` are per observed cell; ``z`` is the (variants x features)
    covariate matrix (the mean of the variant's observed cells' indicators).
    """

    variants: pd.DataFrame
    items: pd.DataFrame
    v: np.ndarray
    i: np.ndarray
    y: np.ndarray
    z: np.ndarray
    feature_names: tuple[str, ...]
    item_dataset: np.ndarray

    @classmethod
    def from_cells(cls, cells: pd.DataFrame, covariates: bool = True) -> VariantData:
        """From rows with ``dataset, item_id, category, variant_id, params, y``."""
        v, variants = pd.factorize(pd.MultiIndex.from_frame(cells[["category", "variant_id"]]))
        i, items = pd.factorize(pd.MultiIndex.from_frame(cells[["dataset", "item_id"]]))
        order_v = np.argsort([f"{a}\0{b}" for a, b in variants])
        order_i = np.argsort([f"{a}\0{b}" for a, b in items])
        rank_v, rank_i = np.argsort(order_v), np.argsort(order_i)
        v, i = rank_v[v], rank_i[i]
        variants_frame = pd.DataFrame(list(variants[order_v]), columns=["category", "variant_id"])
        items_frame = pd.DataFrame(list(items[order_i]), columns=["dataset", "item_id"])
        feats: list[dict[str, float]] = [{} for _ in range(len(variants_frame))]
        counts = np.bincount(v, minlength=len(variants_frame))
        if covariates:
            params = cells["params"] if "params" in cells.columns else pd.Series([None] * len(v))
            for vv, cat, p in zip(v, cells["category"], params, strict=True):
                for name, x in param_features(cat, _parse(p)).items():
                    feats[vv][name] = feats[vv].get(name, 0.0) + x / counts[vv]
        names = tuple(sorted({n for f in feats for n in f}))
        where = {n: k for k, n in enumerate(names)}
        z = np.zeros((len(variants_frame), len(names)))
        for vv, f in enumerate(feats):
            for name, x in f.items():
                z[vv, where[name]] = x
        return cls(
            variants=variants_frame,
            items=items_frame,
            v=v.astype(np.int64),
            i=i.astype(np.int64),
            y=cells["y"].to_numpy(dtype=float),
            z=z,
            feature_names=names,
            item_dataset=items_frame["dataset"].to_numpy(dtype=object),
        )

    @property
    def n_variants(self) -> int:
        return len(self.variants)

    @property
    def n_items(self) -> int:
        return len(self.items)

    def design(self, v: np.ndarray, i: np.ndarray) -> sparse.csr_matrix:
        """Rows [1, z_v, e_v, -e_i] for cells (v, i): the linear predictor is X @ coef."""
        n = len(v)
        zs = sparse.csr_matrix(self.z)[v]
        ones = sparse.csr_matrix(np.ones((n, 1)))
        rows = np.arange(n)
        ev = sparse.csr_matrix((np.ones(n), (rows, v)), shape=(n, self.n_variants))
        ei = sparse.csr_matrix((-np.ones(n), (rows, i)), shape=(n, self.n_items))
        return sparse.hstack([ones, zs, ev, ei], format="csr")

    def precision(self, prior: Prior) -> np.ndarray:
        """The L2 penalty per coefficient: 0 for the intercept, 1 / sd^2 for each block."""
        return np.concatenate(
            [
                [0.0],
                np.full(self.z.shape[1], prior.feature**-2),
                np.full(self.n_variants, prior.variant**-2),
                np.full(self.n_items, prior.item**-2),
            ]
        )


def fit_logit(
    x: sparse.csr_matrix,
    y: np.ndarray,
    precision: np.ndarray,
    weights: np.ndarray | None = None,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Coefficients minimising -sum_r w_r log L_r + 1/2 sum_k precision_k b_k^2.

    Parameters
    ----------
    x
        Design matrix (cells x coefficients).
    y
        0/1 outcomes.
    precision
        The L2 penalty of each coefficient (1 / prior variance; 0: unpenalised).
    weights
        Frequency weights of the cells (default 1).
    start
        Starting coefficients (default 0).

    Returns
    -------
    numpy.ndarray
        The penalised maximum-likelihood (MAP) coefficients. The log-likelihood is the
        Bernoulli one with the logit link; scipy's L-BFGS-B with the exact gradient. Raises
        :class:`AnalysisError` when it does not converge.
    """
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    xt = x.T.tocsr()

    def objective(b: np.ndarray) -> tuple[float, np.ndarray]:
        eta = x @ b
        loglik = w * (y * eta - np.logaddexp(0.0, eta))
        value = -float(loglik.sum()) + 0.5 * float(precision @ (b * b))
        grad = -(xt @ (w * (y - expit(eta)))) + precision * b
        return value, grad

    b0 = np.zeros(x.shape[1]) if start is None else start
    res = minimize(
        objective,
        b0,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 5000, "gtol": 1e-7, "ftol": 1e-15},
    )
    grad = objective(res.x)[1]
    if not np.all(np.isfinite(res.x)) or np.max(np.abs(grad)) > 1e-2 * max(1.0, w.sum()) ** 0.5:
        raise AnalysisError(f"the variant model did not converge ({res.message}).")
    return np.asarray(res.x)


def choose_prior(
    data: VariantData,
    grid: Sequence[Prior],
    rng: np.random.Generator,
    folds: int = 5,
) -> Prior:
    """The prior of ``grid`` with the least K-fold cross-validated log loss on observed cells.

    Parameters
    ----------
    data
        The observed cells.
    grid
        Candidate priors.
    rng
        Draws the folds.
    folds
        K.

    Returns
    -------
    Prior
        The candidate with the least summed held-out log loss (the first on a tie).
    """
    if len(grid) == 1:
        return grid[0]
    fold = rng.permutation(len(data.y)) % folds
    x = data.design(data.v, data.i)
    losses = []
    for prior in grid:
        precision = data.precision(prior)
        loss = 0.0
        for k in range(folds):
            train, test = fold != k, fold == k
            coef = fit_logit(x[train], data.y[train], precision)
            p = np.clip(expit(x[test] @ coef), 1e-9, 1 - 1e-9)
            loss -= float(np.sum(data.y[test] * np.log(p) + (1 - data.y[test]) * np.log1p(-p)))
        losses.append(loss)
    return grid[int(np.argmin(losses))]
