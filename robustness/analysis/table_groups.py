"""The groups of tables :func:`robustness.analysis.pipeline.analyze` builds, one function each.

Plumbing of the pipeline, split from :mod:`robustness.analysis.pipeline` so that it stays
one job: each
function calls the statistics of other modules (where the formulas, references and
checked examples are) and names their tables by file stem.  These functions carry
Parameters and Returns only; they are outside the statistics convention of the
package (no formula of their own).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses.accuracy import _accuracy_drop
from analyses.agreement import flips, items_frame
from analyses.bootstrap import bootstrap_items
from analyses.chance import accuracy_vs_chance, label_concentration
from analyses.cochran import _cochran_q
from analyses.confidence import confidence_sensitivity
from analyses.dataset_agreement import dataset_means
from analyses.flip_means import flip_summary
from analyses.gee.covariance_rank import RANK_COLUMNS, covariance_rank
from analyses.gee.family_contrasts import CONTRAST_COLUMNS, contrast_rows, contrasts_by_model
from analyses.gee.fit import gee_loaded_or_plain
from analyses.gee.paper_models import ModelFit, fit_models
from analyses.paired import _mcnemar
from analyses.prompt_sets import PromptSets, with_answers
from analyses.pss import _pss_items, summarize_pss
from analyses.table_input import REFERENCE, correct_column
from analyses.type_comparison import (
    common_families,
    invalid_as_disagreement,
    invalid_gaps,
    invalid_rates,
    shared_families,
    type_table,
)
from robustness.core.errors import RobustnessError
from robustness.core.table.checked import mark

__all__ = [
    "ACCURACY_COLUMNS",
    "AGREEMENT_ITEM_COLUMNS",
    "BOOTSTRAP_COLUMNS",
    "accuracy_tables",
    "agreement_tables",
    "descriptive_tables",
    "model_tables",
    "paired_tables",
    "rank_table",
    "sensitivity_contrasts",
]

AGREEMENT_ITEM_COLUMNS = [
    "model",
    "dataset",
    "dataset_type",
    "item_id",
    "category",
    "n_valid",
    "c_i",
    "majority",
    "tie",
    "n_modes",
    "n_invalid",
    "original_answer",
]
ACCURACY_COLUMNS = [
    "model",
    "dataset",
    "category",
    "accuracy",
    "n",
    "n_invalid",
    "valid_rate",
    "invalid",
    "accuracy_original",
    "drop",
]
BOOTSTRAP_COLUMNS = [
    "dataset_type",
    "category",
    "estimate",
    "ci_low",
    "ci_high",
    "se",
    "n_sets",
    "n_items",
]


def agreement_tables(
    t: pd.DataFrame, ps: PromptSets, n_boot: int, seed: int
) -> dict[str, pd.DataFrame]:
    """The agreement section: C_i per prompt set and its means with intervals.

    Parameters
    ----------
    t
        The validated table (unused beyond ``ps``; kept for a uniform signature).
    ps
        Its prompt sets.
    n_boot, seed
        Item-bootstrap replicates and their seed.

    Returns
    -------
    dict of str to DataFrame
        ``agreement_items`` (:data:`AGREEMENT_ITEM_COLUMNS`, as
        :func:`analyses.item_agreement`), ``agreement_by_model_type_category`` and
        ``agreement_by_type_category`` (:func:`analyses.type_table` per model and
        pooled), ``agreement_by_dataset_category`` (:func:`analyses.dataset_means`) and
        ``agreement_bootstrap`` (:func:`analyses.bootstrap_items` by type x category).
    """
    items = items_frame(ps)
    pert = items[items["category"] != REFERENCE]
    tables: dict[str, pd.DataFrame] = {"agreement_items": items[AGREEMENT_ITEM_COLUMNS]}
    tables["agreement_by_model_type_category"] = type_table(items, n_boot=n_boot, seed=seed)
    tables["agreement_by_type_category"] = type_table(
        items, by_model=False, n_boot=n_boot, seed=seed
    )
    tables["agreement_by_dataset_category"] = dataset_means(items)
    tables["agreement_bootstrap"] = (
        bootstrap_items(pert, n_boot=n_boot, seed=seed)
        if pert["c_i"].notna().any()
        else pd.DataFrame(columns=BOOTSTRAP_COLUMNS)
    )
    return tables


def accuracy_tables(t: pd.DataFrame, ps: PromptSets) -> dict[str, pd.DataFrame]:
    """The accuracy section (objective items with a gold answer; empty tables otherwise).

    Parameters
    ----------
    t
        The validated table.
    ps
        Its prompt sets.

    Returns
    -------
    dict of str to DataFrame
        ``accuracy`` (:data:`ACCURACY_COLUMNS`, as :func:`analyses.accuracy_drop`) and
        ``format_accuracy`` (:func:`analyses.format_accuracy` of the original prompt and
        the formatting variants, one format per ``variant_id``).
    """
    if correct_column(t) is None or not (t["dataset_type"] == "objective").any():
        return {
            "accuracy": pd.DataFrame(columns=ACCURACY_COLUMNS),
            "format_accuracy": pd.DataFrame(columns=["model", "format", "accuracy", "n"]),
        }
    from analyses.spread import format_accuracy

    # rows of a checked table are checked rows: marked, so format_accuracy does not check them
    obj = t[(t["dataset_type"] == "objective") & t["category"].isin([REFERENCE, "formatting"])]
    obj = mark(obj.reset_index(drop=True))
    return {
        "accuracy": _accuracy_drop(ps),
        "format_accuracy": format_accuracy(obj, by=("model",), format_col="variant_id"),
    }


def paired_tables(ps: PromptSets, has_accuracy: bool, min_items: int) -> dict[str, pd.DataFrame]:
    """The paired tests: Cochran's Q across categories and McNemar between models.

    Parameters
    ----------
    ps
        The table's prompt sets.
    has_accuracy
        McNemar compares correctness when True, the agreement flag otherwise.
    min_items
        Fewest items for a test.

    Returns
    -------
    dict of str to DataFrame
        ``cochran`` (:func:`analyses.cochran_q`) and ``mcnemar`` (:func:`analyses.mcnemar`).
    """
    outcome = "correct" if has_accuracy else "agree"
    return {
        "cochran": _cochran_q(ps, min_items=min_items),
        "mcnemar": _mcnemar(ps, outcome=outcome, min_items=min_items),
    }


def sensitivity_contrasts(
    ps: PromptSets, formula: str, cluster: str, families: Sequence[str], min_items: int
) -> tuple[pd.DataFrame, list[str]]:
    """The type comparison with invalid answers counted as disagreement.

    Parameters
    ----------
    ps
        The validated table's prompt sets (their grouping is reused).
    formula, cluster
        The type model's GEE formula and clusters.
    families, min_items
        As :func:`analyses.contrast_rows`.

    Returns
    -------
    (DataFrame, notes)
        :func:`analyses.contrast_rows` of the GEE fitted to
        :func:`analyses.invalid_as_disagreement` of ``ps.table`` (empty when every row is
        valid), and a note when that fit failed.
    """
    if ps.valid.all():
        return pd.DataFrame(columns=CONTRAST_COLUMNS), []
    t2 = invalid_as_disagreement(ps.table)
    ps2 = with_answers(ps, t2)
    try:
        c = gee_loaded_or_plain(t2, formula, cluster, ps=ps2)[0].contrasts()
    except (RobustnessError, ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
        return pd.DataFrame(columns=CONTRAST_COLUMNS), [
            f"sensitivity analysis (invalid answers as disagreement): the fit failed ({exc})."
        ]
    return contrast_rows(c, items_frame(ps2), families, min_items=min_items), []


def _separated(cells: pd.DataFrame) -> str:
    if cells is None or cells.empty:
        return ""
    named = "; ".join(str(c) for c in cells["cell"])
    return (
        f" The fit has {len(cells)} separated cell(s), whose responses are all equal and so "
        f"add no score: {named}."
    )


def rank_table(models: Sequence[ModelFit]) -> tuple[pd.DataFrame, list[str]]:
    """The rank of each fitted model's robust covariance, and a note where it is below p.

    Parameters
    ----------
    models
        The type and dataset model fits (an unfitted one is left out).

    Returns
    -------
    (DataFrame, notes)
        ``model`` (``type`` or ``dataset``) followed by :data:`analyses.gee.covariance_rank.
        RANK_COLUMNS`, one row per fitted model; one note per model whose covariance has
        rank below its number of coefficients, saying how many and why.
    """
    frames, notes = [], []
    for m in models:
        if m.fit is None:
            continue
        row = covariance_rank(m.fit.cov, m.fit.n_clusters).assign(model=m.name)
        frames.append(row)
        r = row.iloc[0]
        if r["rank"] < r["n_coefficients"]:
            notes.append(
                f"{m.name} model: the robust covariance has rank {r['rank']} for "
                f"{r['n_coefficients']} coefficients and {r['n_clusters']} clusters: "
                f"{r['reason']}; the coefficients in the missing directions: "
                f"{r['null_coefficients']}. A Wald test whose dof is below its number of "
                "columns is made on the directions the covariance spans."
                + _separated(m.fit.separation)
            )
    if not frames:
        return pd.DataFrame(columns=["model", *RANK_COLUMNS]), notes
    return pd.concat(frames, ignore_index=True)[["model", *RANK_COLUMNS]], notes


def descriptive_tables(
    t: pd.DataFrame,
    ps: PromptSets,
    notes: list[str],
    *,
    n_boot: int,
    seed: int,
    min_items: int,
    invalid_margin: float,
) -> tuple[dict[str, pd.DataFrame], list[str], dict[str, list[str]], list[str]]:
    """Agreement, invalid answers, flips, PSS, accuracy, paired tests and confidence.

    Parameters
    ----------
    t, ps
        The validated table and its prompt sets.
    notes
        The run's notes; the notes of these tables are appended to it.
    n_boot, seed, min_items, invalid_margin
        As :func:`robustness.analysis.pipeline.analyze`.

    Returns
    -------
    tuple
        The tables (file stem -> DataFrame: :func:`agreement_tables`' and
        ``invalid_rates, flip_rate, flip_summary, pss, pss_items``, :func:`accuracy_tables`',
        ``accuracy_vs_chance, label_concentration``, :func:`paired_tables`',
        ``confidence_sensitivity, confidence_items``), the families both types have for
        every model, the families only one type has (type -> families) and the
        invalid-rate warnings.
    """
    tables = agreement_tables(t, ps, n_boot, seed)
    items = tables["agreement_items"]
    _, only = shared_families(items)
    shared = common_families(items)
    for kind, cats in only.items():
        if cats:
            notes.append(
                f"only {kind} items have a defined agreement for {', '.join(cats)}; the "
                "objective - subjective comparisons (the 'all' rows, the headline) use the "
                f"families both types have, per model ({', '.join(shared) or 'none'} for "
                "every model)."
            )
    rates = invalid_rates(t)
    tables["invalid_rates"] = rates
    gaps = invalid_gaps(rates, invalid_margin)
    warn = [
        f"model {r.model!r}: {r.subjective:.0%} of subjective rows are invalid against "
        f"{r.objective:.0%} of objective ones"
        for r in gaps.itertuples()
    ]
    notes.extend(
        f"{w}; compare with the sensitivity analysis (invalid answers counted as disagreement)."
        for w in warn
    )
    tables["flip_rate"] = flips(ps)
    tables["flip_summary"] = flip_summary(tables["flip_rate"])
    pss_items_frame, k_source = _pss_items(ps)
    tables["pss"] = summarize_pss(pss_items_frame)
    tables["pss_items"] = pss_items_frame
    if "ordinal" in set(pss_items_frame["score"]) and "lower bound" in k_source:
        notes.append(
            "PSS ordinal: some rows have neither n_options nor option_probs; their K "
            "is the largest answer in the dataset + 1, a lower bound."
        )
    tables.update(accuracy_tables(t, ps))
    tables["accuracy_vs_chance"] = accuracy_vs_chance(t)
    tables["label_concentration"] = label_concentration(t)
    tables.update(paired_tables(ps, len(tables["accuracy"]) > 0, min_items))
    conf, points = confidence_sensitivity(t, pss_items_frame, min_items=min_items)
    tables["confidence_sensitivity"] = conf
    tables["confidence_items"] = points
    return tables, shared, only, warn


def model_tables(
    t: pd.DataFrame,
    ps: PromptSets,
    tables: dict[str, pd.DataFrame],
    notes: list[str],
    *,
    text: str,
    cluster: str,
    fams: list[str],
    min_items: int,
) -> tuple[ModelFit, ModelFit]:
    """Fit the type and dataset models; add their tables, the contrasts and their notes.

    Parameters
    ----------
    t, ps
        The validated table and its prompt sets.
    tables
        The run's tables so far (with ``agreement_items``); the models' tables,
        ``covariance_rank``, ``contrasts``, ``contrasts_by_model`` and
        ``contrasts_invalid_as_disagreement`` are added to it.
    notes
        The run's notes; the models' notes are appended to it.
    text, cluster, fams, min_items
        The type model's formula, the clusters, the study's families and the fewest
        items per cell, as :func:`robustness.analysis.pipeline.analyze`.

    Returns
    -------
    tuple of ModelFit
        The type model and the dataset model.
    """
    type_model, dataset_model = fit_models(t, ps, text, cluster)
    notes.extend(type_model.notes)
    notes.extend(dataset_model.notes)
    tables.update(type_model.tables)
    tables.update(dataset_model.tables)
    tables["covariance_rank"], more = rank_table([type_model, dataset_model])
    notes.extend(more)
    tables["contrasts"] = contrast_rows(
        type_model.tables["contrasts"], tables["agreement_items"], fams, min_items=min_items
    )
    by_model, more = contrasts_by_model(t, fams, cluster=cluster, min_items=min_items, whole=ps)
    tables["contrasts_by_model"] = by_model
    notes.extend(more)
    sens, more = sensitivity_contrasts(ps, text, cluster, fams, min_items)
    tables["contrasts_invalid_as_disagreement"] = sens
    notes.extend(more)
    return type_model, dataset_model
