"""``robustness analyze``: every analysis of a long table, written as CSV files, in one call.

:func:`analyze_path` reads a Parquet or CSV table (checked by
:func:`robustness.core.table.read_table`), :func:`analyze` takes a DataFrame; both
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
accuracy_vs_chance.csv                  accuracy under the original prompt per model x
                                        dataset, exact interval, chance (mean 1/K), verdict
label_concentration.csv                 the most frequent displayed label under the
                                        original prompt per model x type, and its count
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
covariance_rank.csv                     per GEE model: coefficients, clusters, the rank of
                                        the robust covariance, and why it is below p
gee_dataset_coefficients.csv            dataset model (Kamal et al. Table 3): coefficients
wald_dataset_type2.csv / _type3.csv     dataset model: Wald chi-square per term
fragile_items.csv                       the least stable (model, item) pairs, every variant
======================================  ===============================================
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analyses.budgeted import budget_sections
from analyses.fragile import fragile_items
from analyses.gee import formula_columns
from analyses.gee.paper_models import TYPE_FORMULA
from analyses.multi_prompt import multi_prompt
from analyses.prompt_sets import prompt_sets
from analyses.table_input import REFERENCE, k_columns, load
from robustness.analysis.files import write_summary, write_tables
from robustness.analysis.result import AnalysisResult
from robustness.analysis.table_groups import descriptive_tables, model_tables
from robustness.core.errors import AnalysisError
from robustness.core.names import FAMILY_ORDER
from robustness.core.table import TableError, read_metadata, read_table
from robustness.core.text_safety import shown

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["AnalysisResult", "analyze", "analyze_path"]

#: Extra columns kept from the table for the report (fragile items, invalid reasons).
REPORT_COLUMNS = ("invalid_reason", "label", "raw_output", "prompt", "confidence")


def _check_arguments(df: object, cluster: str, min_items: object) -> None:
    """Raise one clear error for a bad ``cluster``, ``df`` or ``min_items`` of :func:`analyze`."""
    if cluster not in ("item", "model_item"):
        raise AnalysisError(f"cluster must be 'item' or 'model_item', not {shown(cluster)}.")
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"a long table must be a pandas DataFrame, not {type(df).__name__}.")
    if isinstance(min_items, bool) or not isinstance(min_items, int | np.integer) or min_items < 1:
        raise AnalysisError(
            f"min_items must be a whole number of at least 1, not {shown(min_items)}."
        )


def _load_table(df: pd.DataFrame, text: str) -> pd.DataFrame:
    """The checked long table with the optional columns the analyses and the report use."""
    optional = (
        "gold",
        "correct",
        "scale",
        "params",  # the variants' covariates of the budgeted estimates (issue 28)
        *k_columns(df),
        *formula_columns(df.columns, text),
        *[c for c in REPORT_COLUMNS if c in df.columns],
    )
    return load(df, optional=optional)


def _table_notes(t: pd.DataFrame) -> tuple[list[str], int]:
    """The notes on the table itself (invalid rows, no original prompt) and the invalid count."""
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
    return notes, n_invalid


def analyze(
    df: pd.DataFrame,
    out_dir: str | Path,
    *,
    formula: str | None = None,
    cluster: str = "item",
    n_boot: int = 2000,
    seed: int = 0,
    quiet: bool = False,
    console: Console | None = None,
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
        The type model's GEE formula (default :data:`analyses.gee.TYPE_FORMULA`);
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
        One field per table, named by its file stem (every file of the module docstring,
        each table's columns listed in the function that makes it;
        ``result.named_tables()`` gives them as file stem -> DataFrame), ``fit`` and
        ``dataset_fit`` (the two GEE fits, None when not fitted), ``notes``, the counts
        ``n_rows, n_invalid, n_models, n_items``, the ``formula`` and ``cluster`` used,
        ``files`` (stem -> path written), the families (``families``,
        ``shared_families``, ``families_only``) and ``invalid_warnings``.

    Notes
    -----
    The statistics, each in the function named (which gives its formula):
    C_i = max_y n_i(y) / N_i per prompt set (Kamal et al. 2026, eq. 1;
    :func:`analyses.item_agreement`) and its means by type x category with item-bootstrap
    percentile intervals (:func:`analyses.type_table`, Efron & Tibshirani 1993); flip
    rates; PSS = mean over items of S_i, the mean |Y_a - Y_b| over variant pairs (Zhuo et
    al. 2024, eq. 1-2; :func:`analyses.pss`); accuracy and its drop; Cochran's Q (Cochran
    1950) and McNemar's chi-square (McNemar 1947) with cluster-robust versions; Pearson's
    r of confidence and S_i; the binomial GEE of the agreement flag with robust covariance
    (Liang & Zeger 1986, as geepack: Halekoh et al. 2006; bias-reduced where cells are
    separated: Firth 1993), Wald chi-square tests of every term, marginal means on the
    reference grid (Searle, Speed & Milliken 1980) and objective - subjective contrasts
    with Holm's adjustment (Holm 1979); Kendall's W of model rankings (Kendall &
    Babington Smith 1939) and the format spread (Sclar et al. 2024).

    References
    ----------
    Kamal et al. (2026), eq. 1 and Tables 2-3.
    Zhuo, J. et al. (2024). ProSA: Assessing and understanding the prompt sensitivity of
    LLMs. Findings of EMNLP 2024.
    Sclar, M., Choi, Y., Tsvetkov, Y. & Suhr, A. (2024). Quantifying language models'
    sensitivity to spurious features in prompt design. ICLR 2024.
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    McNemar, Q. (1947). Note on the sampling error of the difference between correlated
    proportions or percentages. Psychometrika 12(2), 153-157.
    Cochran, W. G. (1950). The comparison of percentages in matched samples. Biometrika
    37(3/4), 256-266.
    Liang, K.-Y. & Zeger, S. L. (1986). Longitudinal data analysis using generalized
    linear models. Biometrika 73(1), 13-22.
    Halekoh, U., Hojsgaard, S. & Yan, J. (2006). The R package geepack for generalized
    estimating equations. Journal of Statistical Software 15(2), 1-11.
    Firth, D. (1993). Bias reduction of maximum likelihood estimates. Biometrika 80(1),
    27-38.
    Searle, S. R., Speed, F. M. & Milliken, G. A. (1980). Population marginal means in the
    linear model: an alternative to least squares means. The American Statistician 34(4),
    216-221.
    Holm, S. (1979). A simple sequentially rejective multiple test procedure.
    Scandinavian Journal of Statistics 6(2), 65-70.
    Kendall, M. G. & Babington Smith, B. (1939). The problem of m rankings. Annals of
    Mathematical Statistics 10(3), 275-287.

    Examples
    --------
    >>> import tempfile
    >>> from robustness.analysis.pipeline import analyze
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=1, n_items=3, categories=("paraphrase", "formatting"),
    ...                     n_variants=3, seed=0)
    >>> res = analyze(t, tempfile.mkdtemp(), n_boot=100, quiet=True)
    >>> sorted(res.files)[:3]
    ['accuracy', 'accuracy_vs_chance', 'agreement_bootstrap']

    The pooled table's point estimates are plain means of C_i over prompt sets, by hand:

    >>> items = res.agreement_items.query("category == 'paraphrase' and c_i.notna()")
    >>> hand = items.groupby("dataset_type")["c_i"].mean()
    >>> row = res.agreement_by_type_category.set_index("category").loc["paraphrase"]
    >>> round(float(row["objective"]), 6) == round(float(hand["objective"]), 6)
    True
    """
    _check_arguments(df, cluster, min_items)
    text = TYPE_FORMULA if formula is None else formula
    t = _load_table(df, text)
    out = Path(out_dir)
    fams = list(families) if families is not None else list(FAMILY_ORDER)
    notes, n_invalid = _table_notes(t)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ps = prompt_sets(t)
        tables, shared, only, warn = descriptive_tables(
            t,
            ps,
            notes,
            n_boot=n_boot,
            seed=seed,
            min_items=min_items,
            invalid_margin=invalid_margin,
        )
        type_model, dataset_model = model_tables(
            t, ps, tables, notes, text=text, cluster=cluster, fams=fams, min_items=min_items
        )
        tables["fragile_items"] = fragile_items(t, tables["agreement_items"])
        design = {"budget": df.attrs["budget"]} if "budget" in df.attrs else None
        budgeted = budget_sections(t, design, n_boot=min(n_boot, 100), seed=seed)
        gold = "gold" in t.columns and t["gold"].notna().any()
        if gold and budgeted is None:  # Mizrahi et al.'s metrics (issue 27): full grid only
            tables["multi_prompt"] = multi_prompt(t, n_boot=n_boot, seed=seed)
        if pd.unique(t["model"]).size >= 2:  # model-ranking stability (issue 15)
            from analyses.ranking import ranking_tables

            tables.update(ranking_tables(t, seed=seed, format_table=tables["format_accuracy"]))
    for w in caught:
        notes.append(f"warning from {w.category.__name__}: {w.message}")

    if budgeted is not None:  # a sparse table (issue 28): estimates instead of the full grid
        for name in ("budget_design", "variant_estimates", "variant_quantiles", "withheld"):
            tables[name] = budgeted[name]
    n_items = int(ps.keys[["dataset", "item_id"]].drop_duplicates().shape[0])
    res = AnalysisResult(
        **tables,
        out_dir=out,
        fit=type_model.fit,
        notes=list(dict.fromkeys(notes)),
        n_rows=len(t),
        n_invalid=n_invalid,
        n_models=int(pd.unique(t["model"]).size),
        n_items=n_items,
        formula=text,
        cluster=cluster,
        dataset_fit=dataset_model.fit,
        families=fams,
        shared_families=shared,
        families_only=only,
        invalid_warnings=warn,
        min_items=min_items,
        invalid_margin=invalid_margin,
        budget_headline=budgeted["headline"] if budgeted else "",
        budget_method=budgeted["method"] if budgeted else "",
    )
    res = dataclasses.replace(res, files=write_tables(res.named_tables(), out / "tables"))
    write_summary(res, out, [type_model, dataset_model])
    if not quiet:
        from robustness.analysis.console import print_summary

        print_summary(res, console)
    return res


def analyze_path(
    table_path: str | Path,
    out_dir: str | Path,
    *,
    formula: str | None = None,
    cluster: str = "item",
) -> AnalysisResult:
    """Read a Parquet or CSV long table and run :func:`analyze` on it (the CLI's entry point).

    Parameters
    ----------
    table_path
        A ``.parquet`` or ``.csv`` long table (read and checked by
        :func:`robustness.core.table.read_table`).
    out_dir
        Output folder, as :func:`analyze`.
    formula, cluster
        As :func:`analyze`; everything else takes :func:`analyze`'s defaults (2000
        bootstrap replicates, seed 0, the summary printed).

    Returns
    -------
    AnalysisResult
        As :func:`analyze`.

    Notes
    -----
    analyze_path(path, out) = analyze(read_table(path), out): the statistics and their
    formulas are those of :func:`analyze`.

    References
    ----------
    As :func:`analyze`.

    Examples
    --------
    >>> import contextlib, io, tempfile
    >>> from pathlib import Path
    >>> from analyses import analyze_path, item_agreement
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=1, n_items=3, categories=("paraphrase", "formatting"),
    ...                     n_variants=3, seed=0)
    >>> folder = Path(tempfile.mkdtemp())
    >>> t.to_parquet(folder / "table.parquet")
    >>> with contextlib.redirect_stdout(io.StringIO()):       # the printed summary
    ...     res = analyze_path(folder / "table.parquet", folder / "out")
    >>> res.n_rows == len(t), (folder / "out" / "tables" / "wald_type2.csv").exists()
    (True, True)
    >>> c = res.agreement_items["c_i"].to_numpy()
    >>> bool(((c == item_agreement(t)["c_i"].to_numpy()) | (c != c)).all())
    True
    """
    table = read_table(table_path)
    if str(table_path).endswith(".parquet"):  # a budgeted run's design (robustness.budget)
        budget = read_metadata(table_path).get("budget")
        if budget is not None:
            table.attrs["budget"] = budget
    return analyze(table, out_dir, formula=formula, cluster=cluster)
