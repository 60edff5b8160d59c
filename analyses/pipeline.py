"""``robustness analyze``: every analysis of a long table, written as CSV files, in one call.

:func:`analyze_path` reads a Parquet or CSV table (checked by
:func:`robustness.table.read_table`), :func:`analyze` takes a DataFrame; both
validate the table once, run the analyses, write ``DIR/tables/*.csv`` and
``DIR/summary.json``, print a compact summary and return an
:class:`AnalysisResult` holding every table, the GEE fit and the notes (what
was excluded, dropped or set aside, and why), for a report generator to use.

Files under ``DIR/tables/`` (header-only when a table has no rows):

=================================  =====================================================
agreement_items.csv                C_i, majority and tie flag per prompt set
agreement_by_type_category.csv     mean C_i by dataset type x category, and the gap
agreement_bootstrap.csv            the same means with item-bootstrap 95 % intervals
flip_rate.csv                      share of variants that leave the original answer
pss.csv                            PSS per model x dataset x category x score
accuracy.csv                       accuracy and drop against the original (with gold)
cochran.csv                        Cochran's Q across categories per model x type
mcnemar.csv                        McNemar between every pair of models
gee_coefficients.csv               GEE coefficients, robust SE, z, p, 95 % interval
wald_type2.csv / wald_type3.csv    Wald chi-square per term: term, df, chi2, p_value
marginal_means.csv                 estimated marginal agreement per type x category
contrasts.csv                      objective - subjective per category, Holm-adjusted
separation.csv                     cells with a constant response set aside
=================================  =====================================================
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analyses._counts import prompt_sets
from analyses._data import REFERENCE, correct_column, k_columns, load
from analyses.accuracy import _accuracy_drop
from analyses.agreement import flips, items_frame, summarize_agreement
from analyses.bootstrap import bootstrap_items
from analyses.cochran import _cochran_q
from analyses.gee import DEFAULT_FORMULA, GEEResult, formula_columns, gee_loaded
from analyses.paired import _mcnemar
from analyses.pss import _pss_items, summarize_pss
from analyses.separation import COLUMNS as SEPARATION_COLUMNS
from analyses.wald import COLUMNS as WALD_COLUMNS
from robustness.table import TableError, read_table

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
COEF_COLUMNS = ["coefficient", "term", "estimate", "robust_se", "z", "p_value", "ci_low", "ci_high"]
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
CONTRAST_COLUMNS = [
    "category",
    "objective",
    "subjective",
    "difference",
    "se",
    "z",
    "p_value",
    "p_holm",
    "ci_low",
    "ci_high",
]


@dataclass
class AnalysisResult:
    """Everything :func:`analyze` computed.

    ``tables`` maps a file stem (``'wald_type2'``) to its DataFrame; ``fit`` is
    the GEE (None when it could not be fitted, with the reason in ``notes``);
    ``notes`` are sentences about excluded rows, dropped terms, separation.
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

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]


def _write(tables: dict[str, pd.DataFrame], folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, frame in tables.items():
        path = folder / f"{name}.csv"
        tmp = folder / f".{name}.csv.tmp"
        frame.to_csv(tmp, index=False)
        os.replace(tmp, path)
        files[name] = path
    return files


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "-"
    if isinstance(x, (float, np.floating)):
        return f"{x:.{digits}f}"
    return str(x)


def _p(p: float) -> str:
    if p is None or np.isnan(p):
        return "-"
    return "<1e-4" if p < 1e-4 else f"{p:.4f}"


def _print_summary(res: AnalysisResult, console: Any = None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = console or Console()
    con.print(
        f"[bold]robustness analyze[/bold]: {res.n_rows} rows, {res.n_models} model(s), "
        f"{res.n_items} item(s); {res.n_invalid} invalid row(s) excluded"
    )
    tab2 = res.tables["agreement_by_type_category"]
    t = Table(title="Mean agreement C_i (Kamal et al. eq. 1)", title_justify="left")
    for col in ("category", "objective", "subjective", "gap"):
        t.add_column(col, justify="left" if col == "category" else "right")
    for r in tab2.itertuples():
        t.add_row(escape(str(r.category)), _fmt(r.objective), _fmt(r.subjective), _fmt(r.gap))
    con.print(t)
    if res.fit is not None:
        fit = res.fit
        w = Table(
            title=f"GEE Wald chi-square ({escape(fit.response)}, clusters = "
            f"{escape(fit.cluster)}, alpha = {fit.alpha:.3f})",
            title_justify="left",
        )
        for col in ("term", "df", "chi2 II", "p II", "chi2 III", "p III"):
            w.add_column(col, justify="left" if col == "term" else "right")
        w2 = res.tables["wald_type2"].set_index("term")
        w3 = res.tables["wald_type3"].set_index("term")
        for term in w2.index:
            w.add_row(
                escape(str(term)),
                str(int(w2.loc[term, "df"])),
                _fmt(w2.loc[term, "chi2"], 2),
                _p(w2.loc[term, "p_value"]),
                _fmt(w3.loc[term, "chi2"], 2) if term in w3.index else "-",
                _p(w3.loc[term, "p_value"]) if term in w3.index else "-",
            )
        con.print(w)
        c = res.tables["contrasts"]
        if len(c):
            ct = Table(
                title="Objective - subjective marginal agreement (Holm)", title_justify="left"
            )
            for col in ("category", "difference", "95% CI", "p Holm"):
                ct.add_column(col, justify="left" if col == "category" else "right")
            for r in c.itertuples():
                ct.add_row(
                    escape(str(r.category)),
                    _fmt(r.difference),
                    f"{_fmt(r.ci_low)} .. {_fmt(r.ci_high)}",
                    _p(r.p_holm),
                )
            con.print(ct)
    for note in res.notes:
        con.print(f"[yellow]note:[/yellow] {escape(note)}")
    con.print(f"tables written to {escape(str(res.out_dir / 'tables'))}")


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
        GEE formula (default :data:`analyses.gee.DEFAULT_FORMULA`).
    cluster
        ``'item'`` or ``'model_item'``.
    n_boot, seed
        Item-bootstrap replicates and their seed.
    quiet
        Do not print the summary.
    console
        A ``rich.console.Console`` to print to (default: a new one on stdout).

    Examples
    --------
    >>> import tempfile
    >>> from analyses.pipeline import analyze
    >>> from analyses.synthetic import synthetic_table
    >>> res = analyze(synthetic_table(models=2, n_items=8, seed=0), tempfile.mkdtemp(),
    ...               n_boot=100, quiet=True)
    >>> sorted(res.files)[:3]
    ['accuracy', 'agreement_bootstrap', 'agreement_by_type_category']
    """
    if cluster not in ("item", "model_item"):
        raise ValueError(f"cluster must be 'item' or 'model_item', not {cluster!r}.")
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"a long table must be a pandas DataFrame, not {type(df).__name__}.")
    text = DEFAULT_FORMULA if formula is None else formula
    optional = ("gold", "correct", "scale", *k_columns(df), *formula_columns(df.columns, text))
    t = load(df, optional=optional)
    out = Path(out_dir)
    notes: list[str] = []
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    n_invalid = int((~valid).sum())
    if n_invalid:
        notes.append(
            f"{n_invalid} of {len(t)} rows are invalid (valid == False): excluded from "
            "agreement, counted as wrong in accuracy, McNemar and PSS correctness."
        )
    if not (t["category"] == REFERENCE).any():
        notes.append(
            "the table has no 'original' rows: flip rates, accuracy drop and the "
            "original-answer tie rule have no reference."
        )

    ps = prompt_sets(t)
    tables: dict[str, pd.DataFrame] = {}
    items = items_frame(ps)
    tables["agreement_items"] = items[AGREEMENT_ITEM_COLUMNS]
    tables["agreement_by_type_category"] = summarize_agreement(items)
    pert = items[items["category"] != REFERENCE]
    if pert["c_i"].notna().any():
        tables["agreement_bootstrap"] = bootstrap_items(pert, n_boot=n_boot, seed=seed)
    else:
        tables["agreement_bootstrap"] = pd.DataFrame(
            columns=[
                "dataset_type",
                "category",
                "estimate",
                "ci_low",
                "ci_high",
                "se",
                "n_sets",
                "n_items",
            ]
        )
    tables["flip_rate"] = flips(ps)
    pss_items_frame, k_source = _pss_items(ps)
    tables["pss"] = summarize_pss(pss_items_frame)
    if "ordinal" in set(pss_items_frame["score"]) and "lower bound" in k_source:
        notes.append(
            "PSS ordinal: some rows have neither n_options nor option_probs; their K "
            "is the largest answer in the dataset + 1, a lower bound."
        )
    if correct_column(t) is not None and (t["dataset_type"] == "objective").any():
        tables["accuracy"] = _accuracy_drop(ps)
    else:
        tables["accuracy"] = pd.DataFrame(
            columns=[
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
        )
    tables["cochran"] = _cochran_q(ps)
    models = sorted(pd.unique(t["model"]), key=str)
    outcome = "correct" if len(tables["accuracy"]) else "agree"
    tables["mcnemar"] = _mcnemar(ps, outcome=outcome)

    fit: GEEResult | None = None
    try:
        fit = gee_loaded(t, text, cluster, ps=ps)
    except (TableError, ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
        notes.append(f"the GEE could not be fitted: {exc}")
    if fit is not None:
        notes.extend(f"GEE: {n}" for n in fit.notes if "invalid rows" not in n)
        tables["gee_coefficients"] = fit.coefficients()
        tables["wald_type2"] = fit.wald(2)
        tables["wald_type3"] = fit.wald(3)
        mm = (
            fit.marginal_means()
            if {"dataset_type", "category"} <= set(fit.grid.columns)
            else pd.DataFrame(columns=MARGINAL_COLUMNS)
        )
        tables["marginal_means"] = mm
        tables["contrasts"] = fit.contrasts()
        tables["separation"] = fit.separation.reindex(columns=SEPARATION_COLUMNS)
    else:
        tables["gee_coefficients"] = pd.DataFrame(columns=COEF_COLUMNS)
        tables["wald_type2"] = pd.DataFrame(columns=WALD_COLUMNS)
        tables["wald_type3"] = pd.DataFrame(columns=WALD_COLUMNS)
        tables["marginal_means"] = pd.DataFrame(columns=MARGINAL_COLUMNS)
        tables["contrasts"] = pd.DataFrame(columns=CONTRAST_COLUMNS)
        tables["separation"] = pd.DataFrame(columns=SEPARATION_COLUMNS)

    files = _write(tables, out / "tables")
    n_items = int(ps.keys[["dataset", "item_id"]].drop_duplicates().shape[0])
    res = AnalysisResult(
        out_dir=out,
        tables=tables,
        fit=fit,
        notes=notes,
        n_rows=len(t),
        n_invalid=n_invalid,
        n_models=len(models),
        n_items=n_items,
        formula=text,
        cluster=cluster,
        files=files,
    )
    summary = {
        "n_rows": res.n_rows,
        "n_invalid": n_invalid,
        "n_models": res.n_models,
        "n_items": n_items,
        "formula": text,
        "cluster": cluster,
        "notes": notes,
        "gee": None
        if fit is None
        else {
            "converged": bool(fit.converged),
            "iterations": fit.iterations,
            "alpha": fit.alpha,
            "scale": fit.scale,
            "n_obs": fit.n_obs,
            "n_clusters": fit.n_clusters,
            "dropped_terms": fit.dropped_terms,
            "aliased": fit.aliased,
        },
        "tables": {k: str(v.relative_to(out)) for k, v in files.items()},
    }
    tmp = out / ".summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=2, default=str))
    os.replace(tmp, out / "summary.json")
    if not quiet:
        _print_summary(res, console)
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
