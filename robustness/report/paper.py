"""A published study's figures beside the run's: ``robustness analyze --compare kamal2026``.

The published figures are data (``robustness/data/<key>.json``, with their source), not
prose: each names what it measures (``kind``) and the run's matching figure is computed
the same way from the analysis result:

``category_mean``
    mean C_i (Kamal et al. eq. 1) over every prompt set of the category, all models and
    items pooled;
``type_mean``
    mean C_i over the prompt sets of one dataset type, over the paper's families only
    (the toolkit's eighth family, framing, is not in the paper);
``type_category_mean``
    mean C_i of one dataset type in one category;
``wald``
    the Wald chi-square of a term of the dataset model (the paper's Table 3); the run's
    Type II and Type III statistics are both shown, with their degrees of freedom.

Pooled figures come with one column per model, since the paper pools its models.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from robustness.core.errors import RobustnessError

if TYPE_CHECKING:
    from robustness.analysis.result import AnalysisResult

__all__ = ["NOT_STORED", "PAPERS", "Paper", "compare", "design", "item_interval", "load_paper"]

PAPERS = ("kamal2026",)


@dataclass(frozen=True)
class Paper:
    """A published study's figures: ``figures`` is a list of dicts (id, kind, what, value)."""

    key: str
    title: str
    source: str
    families: tuple[str, ...]
    figures: tuple[dict[str, Any], ...]


def load_paper(key: str) -> Paper:
    """The stored figures of a published study, by key (``kamal2026``)."""
    if key not in PAPERS:
        raise RobustnessError(f"--compare: unknown study {key!r}; known: {', '.join(PAPERS)}.")
    text = resources.files("robustness").joinpath("data", f"{key}.json").read_text("utf-8")
    data = json.loads(text)
    return Paper(
        data["key"],
        data["title"],
        data["source"],
        tuple(data["families"]),
        tuple(data["figures"]),
    )


def _mean(x: pd.DataFrame) -> tuple[float, int]:
    items = x["dataset"].astype(str) + "\x1f" + x["item_id"].astype(str)
    return (float(x["c_i"].mean()) if len(x) else np.nan, int(items.nunique()))


def item_interval(x: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Percentile 95% interval of the mean C_i over prompt sets, resampling items (clusters).

    Items are drawn with replacement (a seeded generator) with all their prompt sets; the
    interval is the 2.5 and 97.5 percentiles of the replicated means (Efron & Tibshirani 1993).
    """
    if x.empty:
        return np.nan, np.nan
    item = pd.factorize(x["dataset"].astype(str) + "\x1f" + x["item_id"].astype(str))[0]
    n = int(item.max()) + 1
    sums = np.bincount(item, weights=x["c_i"].to_numpy(float), minlength=n)
    counts = np.bincount(item, minlength=n).astype(float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(n_boot, n))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def _selected(fig: dict[str, Any], items: pd.DataFrame, paper: Paper) -> pd.DataFrame:
    kind = fig["kind"]
    if kind == "category_mean":
        return items[items["category"] == fig["category"]]
    if kind == "type_mean":
        x = items[(items["dataset_type"] == fig["dataset_type"])]
        return x[x["category"].isin(paper.families)]
    x = items[items["dataset_type"] == fig["dataset_type"]]
    return x[x["category"] == fig["category"]]


def _run_value(fig: dict[str, Any], items: pd.DataFrame, paper: Paper) -> tuple[float, int]:
    kind = fig["kind"]
    if kind == "category_mean":
        return _mean(items[items["category"] == fig["category"]])
    if kind == "type_mean":
        x = items[(items["dataset_type"] == fig["dataset_type"])]
        return _mean(x[x["category"].isin(paper.families)])
    if kind == "type_category_mean":
        x = items[items["dataset_type"] == fig["dataset_type"]]
        return _mean(x[x["category"] == fig["category"]])
    raise RobustnessError(f"paper figure {fig['id']!r}: unknown kind {kind!r}.")


def _wald(result: AnalysisResult, term: str) -> tuple[float, float, float]:
    out = []
    for w in (result.wald_dataset_type2, result.wald_dataset_type3):
        if w is None or w.empty or term not in set(w["term"]):
            out.append((np.nan, np.nan))
            continue
        r = w.set_index("term").loc[term]
        dof = r["dof"] if "dof" in r.index else r["df"]
        out.append((float(r["chi2"]), float(dof)))
    return out[0][0], out[1][0], out[0][1]


def compare(result: AnalysisResult, key: str = "kamal2026") -> tuple[Paper, pd.DataFrame]:
    """The published figures beside the run's, one row per published figure.

    Returns
    -------
    (Paper, DataFrame)
        Columns ``figure`` (what it measures), ``paper`` (the published value), ``run``
        (the run's value, models pooled), ``n_items`` (items behind the run's value), one
        column per model (``run: <model>``), and ``note`` (how the run's value was
        computed where it differs in kind, e.g. Type II and III for a Wald test).
    """
    paper = load_paper(key)
    dof_run = _wald(result, "dataset:category")[2]
    items = result.agreement_items
    items = items[(items["category"] != "original") & items["c_i"].notna()]
    models = sorted(pd.unique(items["model"]).tolist(), key=str)
    rows = []
    for fig in paper.figures:
        row: dict[str, Any] = {"figure": fig["what"], "paper": float(fig["value"])}
        if fig["kind"] == "wald":
            chi2, chi3, dof = _wald(result, fig["term"])
            row.update(run=chi2, n_items=result.n_items)
            row["note"] = (
                "dataset model not fitted on this table"
                if np.isnan(chi2)
                else f"Type II on {int(dof)} df"
                + ("" if np.isnan(chi3) else f"; Type III {chi3:.3f}")
            )
            paper_dof = fig.get("dof")
            row["comparable"] = (
                "not comparable: the paper's df is not in the stored source"
                if paper_dof is None
                else "yes"
                if not np.isnan(dof) and int(paper_dof) == int(dof)
                else f"not comparable: df {paper_dof} in the paper, {dof_run:g} in the run"
            )
            for m in models:
                row[f"run: {m}"] = np.nan
        else:
            row["run"], row["n_items"] = _run_value(fig, items, paper)
            row["run_ci_low"], row["run_ci_high"] = item_interval(_selected(fig, items, paper))
            row["note"] = "" if row["n_items"] else "no prompt set of this kind in the run"
            row["comparable"] = _mean_comparable(fig, _selected(fig, items, paper), paper)
            for m in models:
                row[f"run: {m}"] = _run_value(fig, items[items["model"] == m], paper)[0]
        rows.append(row)
    cols = [
        "figure",
        "paper",
        "run",
        "run_ci_low",
        "run_ci_high",
        "n_items",
        *[f"run: {m}" for m in models],
        "comparable",
        "note",
    ]
    return paper, pd.DataFrame(rows, columns=cols)


NOT_STORED = "not in the stored source"


def _mean_comparable(fig: dict[str, Any], x: pd.DataFrame, paper: Paper) -> str:
    """A mean C_i compares only under the same floor 1/N_i, i.e. the same variants per item."""
    if x.empty:
        return "no value in the run"
    n = int(x["n_valid"].max())
    theirs = load_design(paper.key).get(f"variants/{fig.get('category', '')}")
    if theirs is None:
        return (
            f"unknown: the paper's variants per item are {NOT_STORED}; the run's C_i has "
            f"N_i up to {n} (floor {1 / n:.3f})"
        )
    if int(theirs) != n:
        return f"not comparable: {theirs} variants per item in the paper, {n} in the run"
    return "yes"


def design(result: AnalysisResult, paper: Paper) -> pd.DataFrame:
    """The run's design beside the paper's: items per dataset, variants per family, models, df.

    The paper's side comes from the stored source's ``design`` entries only; a field it lacks
    reads "not in the stored source" (nothing is filled in from elsewhere).

    Returns
    -------
    DataFrame
        ``what, paper, run``: one row per dataset (items), per family (variants per item,
        the most any item has), the number of models, and the df of each Wald chi-square
        the paper reports.
    """
    stored = dict(load_design(paper.key))
    items = result.agreement_items
    rows: list[tuple[str, Any, Any]] = []
    for ds, n in items.groupby("dataset")["item_id"].nunique().items():
        rows.append((f"items, {ds}", stored.get(f"items/{ds}", NOT_STORED), int(n)))
    pert = items[items["category"] != "original"]
    per = (pert["n_valid"] + pert["n_invalid"]).groupby(pert["category"]).max()
    for fam, n in per.items():
        rows.append(
            (f"variants per item, {fam}", stored.get(f"variants/{fam}", NOT_STORED), int(n))
        )
    rows.append(("models", stored.get("models", NOT_STORED), result.n_models))
    for fig in paper.figures:
        if fig["kind"] == "wald":
            dof = _wald(result, fig["term"])[2]
            rows.append(
                (
                    f"df, {fig['what']}",
                    fig.get("dof", NOT_STORED),
                    "not fitted" if np.isnan(dof) else int(dof),
                )
            )
    return pd.DataFrame(rows, columns=["what", "paper", "run"]).astype({"paper": str, "run": str})


def load_design(key: str) -> dict[str, Any]:
    """The ``design`` entries of a stored study (empty when the source has none)."""
    text = resources.files("robustness").joinpath("data", f"{key}.json").read_text("utf-8")
    found: dict[str, Any] = json.loads(text).get("design", {})
    return found
