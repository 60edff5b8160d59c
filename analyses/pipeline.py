"""``robustness analyze``: every analysis of a long table, written as CSV files, in one call.

:func:`analyze_path` reads a Parquet or CSV table (checked by
:func:`robustness.table.read_table`), :func:`analyze` takes a DataFrame; both
validate the table once, run the analyses, write ``DIR/tables/*.csv`` and
``DIR/summary.json``, print a compact summary and return an
:class:`AnalysisResult` holding every table, both GEE fits and the notes (what
was excluded, dropped or set aside, and why): everything a report needs, so the
report never goes back to the table.

Files under ``DIR/tables/`` (header-only when a table has no rows):

======================================  ===============================================
agreement_items.csv                     C_i, majority and tie flag per prompt set
agreement_by_model_type_category.csv    Table 2 per model: mean C_i by type x category,
                                        item-bootstrap 95 % intervals, the gap; the
                                        ``all`` row pools the families both types have
agreement_by_type_category.csv          the same, models pooled (``model`` = pooled)
agreement_by_dataset_category.csv       mean C_i per model x dataset x category (Fig. 1)
agreement_bootstrap.csv                 mean C_i by type x category with intervals
invalid_rates.csv                       invalid answers by model x type x category, reasons
flip_rate.csv / flip_summary.csv        variants leaving the original answer (per item /
                                        mean per model x type x category)
pss.csv / pss_items.csv                 PSS per model x dataset x category x score / S_i
accuracy.csv                            accuracy and drop against the original (with gold)
format_accuracy.csv                     accuracy per prompt format (objective items)
cochran.csv                             Cochran's Q across categories per model x type
mcnemar.csv                             McNemar between every pair of models
confidence_sensitivity.csv              Pearson r of confidence and S_i per model (n, p)
confidence_items.csv                    the items behind it: mean confidence and S_i
gee_coefficients.csv                    type model: coefficients, robust SE, z, p, CI
wald_type2.csv / wald_type3.csv         type model: Wald chi-square (term, dof, chi2, p)
marginal_means.csv                      type model: marginal agreement per type x category
contrasts.csv                           objective - subjective per family (Holm), a reason
                                        where there is no value
contrasts_by_model.csv                  the same, each model fitted on its own
contrasts_invalid_as_disagreement.csv   sensitivity: invalid answers count as disagreeing
separation.csv                          type model: cells with a constant response
gee_dataset_coefficients.csv            dataset model (Kamal et al. Table 3): coefficients
wald_dataset_type2.csv / _type3.csv     dataset model: Wald chi-square per term
fragile_items.csv                       the least stable (model, item) pairs, every variant
======================================  ===============================================
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analyses._counts import prompt_sets
from analyses._data import REFERENCE, correct_column, k_columns, load
from analyses.accuracy import _accuracy_drop
from analyses.agreement import flips, items_frame
from analyses.bootstrap import bootstrap_items
from analyses.cochran import _cochran_q
from analyses.comparison import (
    common_families,
    invalid_as_disagreement,
    invalid_gaps,
    invalid_rates,
    shared_families,
    type_table,
)
from analyses.contrasts import CONTRAST_COLUMNS, contrast_rows, contrasts_by_model
from analyses.gee import GEEResult, formula_columns, gee_loaded
from analyses.models import DATASET_FORMULA, TYPE_FORMULA, fit_models
from analyses.outputs import write_summary, write_tables
from analyses.paired import _mcnemar
from analyses.pss import _pss_items, summarize_pss
from analyses.summaries import confidence_sensitivity, dataset_means, flip_summary, fragile_items
from robustness.errors import AnalysisError, RobustnessError
from robustness.names import FAMILY_ORDER
from robustness.table import TableError, read_table

__all__ = ["AnalysisResult", "analyze", "analyze_path"]

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
#: Extra columns kept from the table for the report (fragile items, invalid reasons).
REPORT_COLUMNS = ("invalid_reason", "label", "raw_output", "prompt", "confidence")


@dataclass
class AnalysisResult:
    """Everything :func:`analyze` computed.

    ``tables`` maps a file stem (``'wald_type2'``) to its DataFrame; ``fit`` is the
    type model's GEE and ``dataset_fit`` the dataset model's (Kamal et al. Table 3),
    each None when it could not be fitted (the reason is in ``notes``); ``notes`` are
    sentences about excluded rows, dropped terms, separation, thin cells;
    ``shared_families`` are the families both dataset types have, ``families_only`` the
    families only one type has; ``invalid_warnings`` the models whose invalid rates
    differ between the types by more than ``invalid_margin``.
    """

    out_dir: Path
    tables: dict[str, pd.DataFrame]
    fit: GEEResult | None
    notes: list[str]
    n_rows: int
    n_invalid: int
    n_models: int
    n_items: int
    formula: str
    cluster: str
    files: dict[str, Path] = field(default_factory=dict)
    dataset_fit: GEEResult | None = None
    dataset_formula: str = DATASET_FORMULA
    families: list[str] = field(default_factory=list)
    shared_families: list[str] = field(default_factory=list)
    families_only: dict[str, list[str]] = field(default_factory=dict)
    invalid_warnings: list[str] = field(default_factory=list)
    min_items: int = 10
    invalid_margin: float = 0.10

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]


def _agreement_tables(t: pd.DataFrame, ps: Any, n_boot: int, seed: int) -> dict[str, Any]:
    items = items_frame(ps)
    pert = items[items["category"] != REFERENCE]
    tables: dict[str, Any] = {"agreement_items": items[AGREEMENT_ITEM_COLUMNS]}
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


def _accuracy_tables(t: pd.DataFrame, ps: Any) -> dict[str, pd.DataFrame]:
    if correct_column(t) is None or not (t["dataset_type"] == "objective").any():
        return {
            "accuracy": pd.DataFrame(columns=ACCURACY_COLUMNS),
            "format_accuracy": pd.DataFrame(columns=["model", "format", "accuracy", "n"]),
        }
    from analyses.spread import format_accuracy

    obj = t[(t["dataset_type"] == "objective") & t["category"].isin([REFERENCE, "formatting"])]
    return {
        "accuracy": _accuracy_drop(ps),
        "format_accuracy": format_accuracy(obj, by=("model",), format_col="variant_id"),
    }


def _paired_tables(ps: Any, has_accuracy: bool, min_items: int) -> dict[str, pd.DataFrame]:
    outcome = "correct" if has_accuracy else "agree"
    return {
        "cochran": _cochran_q(ps, min_items=min_items),
        "mcnemar": _mcnemar(ps, outcome=outcome, min_items=min_items),
    }


def _sensitivity(
    t: pd.DataFrame, formula: str, cluster: str, families: Sequence[str], min_items: int
) -> tuple[pd.DataFrame, list[str]]:
    """The type comparison with invalid answers counted as disagreement."""
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    if valid.all():
        return pd.DataFrame(columns=CONTRAST_COLUMNS), []
    t2 = invalid_as_disagreement(t)
    ps2 = prompt_sets(t2)
    try:
        c = gee_loaded(t2, formula, cluster, ps=ps2).contrasts()
    except (RobustnessError, ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
        return pd.DataFrame(columns=CONTRAST_COLUMNS), [
            f"sensitivity analysis (invalid answers as disagreement): the fit failed ({exc})."
        ]
    return contrast_rows(c, items_frame(ps2), families, min_items=min_items), []


def analyze(
    df: pd.DataFrame,
    out_dir: str | Path,
    *,
    formula: str | None = None,
    cluster: str = "item",
    n_boot: int = 2000,
    seed: int = 0,
    quiet: bool = False,
    console: Any = None,
    families: Sequence[str] | None = None,
    min_items: int = 10,
    invalid_margin: float = 0.10,
) -> AnalysisResult:
    """Run every analysis on a long table, write ``out_dir/tables/*.csv`` and return the results.

    Parameters
    ----------
    df
        Long table with at least ``model, dataset, dataset_type, item_id,
        category, variant_id, answer, valid``.
    out_dir
        Output folder; ``tables/`` and ``summary.json`` are written inside it.
    formula
        The type model's GEE formula (default :data:`analyses.models.TYPE_FORMULA`);
        the dataset model (Kamal et al. Table 3) is fitted beside it whatever this is.
    cluster
        ``'item'`` or ``'model_item'``.
    n_boot, seed
        Item-bootstrap replicates and their seed.
    quiet
        Do not print the summary.
    console
        A ``rich.console.Console`` to print to (default: a new one on stdout).
    families
        The perturbation families the study ran (from its configuration), so a family
        that produced no variant still gets a row saying so; default: the eight families.
    min_items
        Fewest items per cell for a test or a correlation (at least 1; a correlation needs
        3 whatever this says); below it the statistic is reported as not computed, with the
        count.
    invalid_margin
        A model whose invalid-answer rate differs between objective and subjective items
        by more than this gets a warning in the notes and the report's headline.

    Returns
    -------
    AnalysisResult
        Every table (see the module docstring), both fits, and the notes.

    Examples
    --------
    >>> import tempfile
    >>> from analyses.pipeline import analyze
    >>> from analyses.synthetic import synthetic_table
    >>> res = analyze(synthetic_table(models=2, n_items=8, seed=0), tempfile.mkdtemp(),
    ...               n_boot=100, quiet=True)
    >>> sorted(res.files)[:3]
    ['accuracy', 'agreement_bootstrap', 'agreement_by_dataset_category']
    """
    if cluster not in ("item", "model_item"):
        raise TableError(f"cluster must be 'item' or 'model_item', not {cluster!r}.")
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"a long table must be a pandas DataFrame, not {type(df).__name__}.")
    if isinstance(min_items, bool) or not isinstance(min_items, int | np.integer) or min_items < 1:
        raise AnalysisError(f"min_items must be a whole number of at least 1, not {min_items!r}.")
    text = TYPE_FORMULA if formula is None else formula
    optional = (
        "gold",
        "correct",
        "scale",
        *k_columns(df),
        *formula_columns(df.columns, text),
        *[c for c in REPORT_COLUMNS if c in df.columns],
    )
    t = load(df, optional=optional)
    out = Path(out_dir)
    fams = list(families) if families is not None else list(FAMILY_ORDER)
    notes: list[str] = []
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    n_invalid = int((~valid).sum())
    if n_invalid:
        notes.append(
            f"{n_invalid} of {len(t)} rows are invalid (valid == False) and were "
            "excluded from every statistic (see invalid_rates and the sensitivity analysis)."
        )
    if not (t["category"] == REFERENCE).any():
        notes.append(
            "the table has no 'original' rows: flip rates, accuracy drop and the "
            "original-answer tie rule have no reference."
        )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ps = prompt_sets(t)
        tables = _agreement_tables(t, ps, n_boot, seed)
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
        tables.update(_accuracy_tables(t, ps))
        tables.update(_paired_tables(ps, len(tables["accuracy"]) > 0, min_items))
        conf, points = confidence_sensitivity(t, pss_items_frame, min_items=min_items)
        tables["confidence_sensitivity"] = conf
        tables["confidence_items"] = points

        type_model, dataset_model = fit_models(t, ps, text, cluster)
        notes.extend(type_model.notes)
        notes.extend(dataset_model.notes)
        tables.update(type_model.tables)
        tables.update(dataset_model.tables)
        tables["contrasts"] = contrast_rows(
            type_model.tables["contrasts"], items, fams, min_items=min_items
        )
        by_model, more = contrasts_by_model(t, fams, cluster=cluster, min_items=min_items)
        tables["contrasts_by_model"] = by_model
        notes.extend(more)
        sens, more = _sensitivity(t, text, cluster, fams, min_items)
        tables["contrasts_invalid_as_disagreement"] = sens
        notes.extend(more)
        tables["fragile_items"] = fragile_items(t, items)
        if pd.unique(t["model"]).size >= 2:  # model-ranking stability (issue 15)
            from analyses.ranking import ranking_tables

            tables.update(ranking_tables(t, seed=seed))
    for w in caught:
        notes.append(f"warning from {w.category.__name__}: {w.message}")

    files = write_tables(tables, out / "tables")
    n_items = int(ps.keys[["dataset", "item_id"]].drop_duplicates().shape[0])
    res = AnalysisResult(
        out_dir=out,
        tables=tables,
        fit=type_model.fit,
        notes=list(dict.fromkeys(notes)),
        n_rows=len(t),
        n_invalid=n_invalid,
        n_models=int(pd.unique(t["model"]).size),
        n_items=n_items,
        formula=text,
        cluster=cluster,
        files=files,
        dataset_fit=dataset_model.fit,
        families=fams,
        shared_families=shared,
        families_only=only,
        invalid_warnings=warn,
        min_items=min_items,
        invalid_margin=invalid_margin,
    )
    write_summary(res, out, [type_model, dataset_model])
    if not quiet:
        from analyses.console import print_summary

        print_summary(res, console)
    return res


def analyze_path(
    table_path: str | Path,
    out_dir: str | Path,
    *,
    formula: str | None = None,
    cluster: str = "item",
) -> AnalysisResult:
    """Read a Parquet or CSV long table and run :func:`analyze` on it (the CLI's entry point)."""
    table = read_table(table_path)
    return analyze(table, out_dir, formula=formula, cluster=cluster)
