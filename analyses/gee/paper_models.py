"""The two GEE models of every analysis: the type model and the paper's dataset model.

Kamal et al. (2026) fit two binomial GEE models of the per-row agreement flag
(a row agrees when its answer equals its prompt set's majority, eq. 1):

type model
    ``agree ~ model + dataset_type * category + model:category``: objective against
    subjective items, per perturbation category; its marginal means and the
    objective-minus-subjective contrasts per category come from it.
dataset model (the paper's Table 3)
    ``agree ~ model + dataset * category + model:category``: each dataset its own
    level. ``dataset`` nests ``dataset_type``, so this model asks whether the
    datasets differ in how the categories move them; the paper reports its
    dataset x category Wald chi-square (587.885 on their data).

:func:`fit_models` fits both on a validated table (the dataset model only when the
table has two or more datasets) and returns, per model, the fit, its tables and its
notes. A model that cannot be fitted is reported with the reason, never raised: the
rest of the analysis goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analyses.gee.fit import gee_loaded_or_plain
from analyses.gee.long_table import DEFAULT_FORMULA
from analyses.gee.result import GEEResult
from analyses.gee.separation import COLUMNS as SEPARATION_COLUMNS
from analyses.gee.small_sample import DEFAULT_COV_TYPE, DEFAULT_TEST
from analyses.gee.type_contrasts import CONTRAST_COLUMNS
from analyses.gee.wald import COLUMNS as WALD_COLUMNS
from analyses.prompt_sets import PromptSets
from robustness.core.errors import RobustnessError

__all__ = [
    "COEF_COLUMNS",
    "CONTRAST_COLUMNS",
    "DATASET_FORMULA",
    "MARGINAL_COLUMNS",
    "TYPE_FORMULA",
    "ModelFit",
    "fit_models",
]

TYPE_FORMULA = DEFAULT_FORMULA
DATASET_FORMULA = "agree ~ model + dataset * category + model:category"

COEF_COLUMNS = [
    "coefficient",
    "term",
    "estimate",
    "robust_se",
    "z",
    "p_value",
    "ci_low",
    "ci_high",
]
MARGINAL_COLUMNS = [
    "dataset_type",
    "category",
    "estimate",
    "se",
    "ci_low",
    "ci_high",
    "observed",
    "n_rows",
    "n_averaged",
]


@dataclass
class ModelFit:
    """One fitted (or unfittable) model of the analysis.

    ``name`` is ``"type"`` or ``"dataset"``; ``tables`` maps a file stem to its
    DataFrame (the type model's stems are ``gee_coefficients``, ``wald_type2``,
    ``wald_type3``, ``marginal_means``, ``contrasts`` and ``separation``; the dataset
    model's are ``gee_dataset_coefficients``, ``wald_dataset_type2``,
    ``wald_dataset_type3`` and ``separation_dataset``); ``fit`` is None when the model
    could not be fitted, with the reason in ``notes``.
    """

    name: str
    formula: str
    fit: GEEResult | None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(columns=columns)


def _fit(
    t: pd.DataFrame,
    ps: PromptSets,
    formula: str,
    cluster: str,
    label: str,
    inference: tuple[str, str] = (DEFAULT_COV_TYPE, DEFAULT_TEST),
) -> ModelFit:
    notes: list[str] = []
    try:
        fit, fallback = gee_loaded_or_plain(
            t, formula, cluster, ps=ps, cov_type=inference[0], test=inference[1]
        )
        notes.extend(f"{label}: {n}" for n in fallback)
    except (RobustnessError, ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
        notes.append(f"the {label} could not be fitted: {exc}")
        return ModelFit(label.split()[0], formula, None, notes=notes)
    notes.extend(f"{label}: {n}" for n in fit.notes if "invalid rows" not in n)
    notes.append(f"{label}: every p-value of its Wald tests and contrasts: {fit.inference}.")
    if len(fit.params) >= fit.n_clusters:
        notes.append(
            f"{label}: {len(fit.params)} coefficients but only {fit.n_clusters} clusters: the "
            "robust covariance has rank below the number of coefficients, so its Wald tests "
            "rest on thin data (more items, or fewer terms, are needed for reliable tests)."
        )
    return ModelFit(label.split()[0], formula, fit, notes=notes)


def _type_tables(m: ModelFit) -> dict[str, pd.DataFrame]:
    fit = m.fit
    if fit is None:
        return {
            "gee_coefficients": _empty(COEF_COLUMNS),
            "wald_type2": _empty(WALD_COLUMNS),
            "wald_type3": _empty(WALD_COLUMNS),
            "marginal_means": _empty(MARGINAL_COLUMNS),
            "contrasts": _empty(CONTRAST_COLUMNS),
            "separation": _empty(SEPARATION_COLUMNS),
        }
    by_type = {"dataset_type", "category"} <= set(fit.grid.columns)
    return {
        "gee_coefficients": fit.coefficients(),
        "wald_type2": fit.wald(2),
        "wald_type3": fit.wald(3),
        "marginal_means": fit.marginal_means() if by_type else _empty(MARGINAL_COLUMNS),
        "contrasts": fit.contrasts(),
        "separation": fit.separation.reindex(columns=SEPARATION_COLUMNS),
    }


def _dataset_tables(m: ModelFit) -> dict[str, pd.DataFrame]:
    fit = m.fit
    if fit is None:
        return {
            "gee_dataset_coefficients": _empty(COEF_COLUMNS),
            "wald_dataset_type2": _empty(WALD_COLUMNS),
            "wald_dataset_type3": _empty(WALD_COLUMNS),
            "separation_dataset": _empty(SEPARATION_COLUMNS),
        }
    return {
        "gee_dataset_coefficients": fit.coefficients(),
        "wald_dataset_type2": fit.wald(2),
        "wald_dataset_type3": fit.wald(3),
        "separation_dataset": fit.separation.reindex(columns=SEPARATION_COLUMNS),
    }


def fit_models(
    t: pd.DataFrame,
    ps: PromptSets,
    formula: str | None = None,
    cluster: str = "item",
    *,
    cov_type: str = DEFAULT_COV_TYPE,
    test: str = DEFAULT_TEST,
) -> tuple[ModelFit, ModelFit]:
    """Fit the type model (or ``formula``) and the dataset model (Kamal et al., Table 3).

    Parameters
    ----------
    t
        A table checked by ``analyses.table_input.load`` that keeps the formulas' columns.
    ps
        Its prompt sets (``analyses.prompt_sets.prompt_sets``).
    formula
        Replaces the type model's formula; the dataset model is always the paper's.
    cluster
        ``'item'`` or ``'model_item'``, for both models.
    cov_type, test
        The covariance and reference distribution of both models' p-values, as
        :func:`analyses.gee.gee`; by default the bias-reduced sandwich with F(q, G - p),
        chosen by measured size (README "Size"; ``cov_type='robust', test='chi2'`` is
        geepack + car).

    Returns
    -------
    (ModelFit, ModelFit)
        The type model and the dataset model, each with its tables and notes. The
        dataset model has ``fit = None`` and a note when the table holds fewer than two
        datasets (it would be the type model again) or cannot be fitted.

    Notes
    -----
    Both are binomial GEEs of the agreement flag with logit link, exchangeable working
    correlation within clusters and the robust (sandwich) covariance (Liang & Zeger
    1986; as geepack, Halekoh et al. 2006):

        type:    logit P(agree) = model + dataset_type * category + model:category
        dataset: logit P(agree) = model + dataset * category + model:category

    with Wald chi-square tests W = b' (L V L')^-1 b of each term (Type II and III),
    marginal means and objective - subjective contrasts of the type model.  Separated
    cells keep the fit finite through the bias-reduced estimating equation (Firth 1993).

    References
    ----------
    Kamal et al. (2026), Tables 3 and 4; Liang & Zeger (1986) for the GEE.
    Halekoh, U., Hojsgaard, S. & Yan, J. (2006). The R package geepack for generalized
    estimating equations. Journal of Statistical Software 15(2), 1-11.
    Firth, D. (1993). Bias reduction of maximum likelihood estimates. Biometrika 80(1),
    27-38.

    Examples
    --------
    The dataset model's interaction test against statsmodels' GEE of the same rows (one
    model, so the model terms drop out; no separated cell, so the plain GEE):

    >>> import warnings
    >>> import numpy as np
    >>> import statsmodels.api as sm, statsmodels.formula.api as smf
    >>> from analyses import agreement_rows, fit_models
    >>> from analyses.prompt_sets import prompt_sets
    >>> from analyses.table_input import load
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=1, n_items=10, categories=("paraphrase", "formatting"),
    ...                     n_variants=4, seed=1)
    >>> loaded = load(t)
    >>> type_model, dataset_model = fit_models(loaded, prompt_sets(loaded))
    >>> w = dataset_model.tables["wald_dataset_type2"].set_index("term").loc["dataset:category"]
    >>> rows = agreement_rows(t).query("category != 'original' and agree.notna()")
    >>> rows = rows.assign(agree=rows["agree"].astype(float),
    ...                    clu=rows["dataset"] + "/" + rows["item_id"]).sort_values("clu")
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ref = smf.gee("agree ~ dataset * category", groups="clu", data=rows,
    ...                   family=sm.families.Binomial(),
    ...                   cov_struct=sm.cov_struct.Exchangeable()).fit(ddof_scale=0)
    >>> inter = np.eye(len(ref.params))[[":" in n for n in ref.params.index]]
    >>> rw = ref.wald_test(inter, scalar=True, use_f=False)
    >>> round(float(w["chi2"]), 4), round(float(rw.statistic), 4), int(w["dof"])
    (3.2666, 3.2666, 3)
    """
    inference = (cov_type, test)
    type_model = _fit(t, ps, formula or TYPE_FORMULA, cluster, "type model", inference)
    type_model.tables = _type_tables(type_model)
    n_datasets = int(pd.unique(t["dataset"]).size)
    if n_datasets < 2:
        dataset_model = ModelFit(
            "dataset",
            DATASET_FORMULA,
            None,
            notes=[
                "the dataset model (Kamal et al., Table 3) needs two or more datasets; the "
                f"table has {n_datasets}, so it was not fitted."
            ],
        )
    else:
        dataset_model = _fit(t, ps, DATASET_FORMULA, cluster, "dataset model", inference)
    dataset_model.tables = _dataset_tables(dataset_model)
    return type_model, dataset_model
