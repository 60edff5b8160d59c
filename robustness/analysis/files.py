"""Writing an analysis's files: ``tables/*.csv`` and ``summary.json``, each atomically.

File plumbing of :func:`robustness.analysis.pipeline.analyze`, outside the statistics
convention: the tables
written are documented where they are computed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from analyses.gee import ModelFit

if TYPE_CHECKING:
    from robustness.analysis.result import AnalysisResult

__all__ = ["write_summary", "write_tables"]


def write_tables(tables: dict[str, pd.DataFrame], folder: Path) -> dict[str, Path]:
    """Every table as ``folder/<name>.csv`` (written to a temporary name, then moved).

    Parameters
    ----------
    tables
        File stem -> table.
    folder
        The folder (created when missing).

    Returns
    -------
    dict of str to Path
        File stem -> the path written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, frame in tables.items():
        path = folder / f"{name}.csv"
        tmp = folder / f".{name}.csv.tmp"
        frame.to_csv(tmp, index=False)
        os.replace(tmp, path)
        files[name] = path
    return files


def _fit_summary(m: ModelFit) -> dict[str, Any] | None:
    fit = m.fit
    if fit is None:
        return None
    return {
        "formula": m.formula,
        "converged": bool(fit.converged),
        "iterations": fit.iterations,
        "alpha": fit.alpha,
        "scale": fit.scale,
        "n_obs": fit.n_obs,
        "n_clusters": fit.n_clusters,
        "dropped_terms": fit.dropped_terms,
        "aliased": fit.aliased,
    }


def write_summary(res: AnalysisResult, out: Path, models: Sequence[ModelFit]) -> None:
    """``out/summary.json``: counts, formulas, the budget sentence ("" on a full table), notes,
    both fits' diagnostics, the files.

    Parameters
    ----------
    res
        The analysis result.
    out
        The output folder.
    models
        The type and dataset model fits (their diagnostics are written).

    Returns
    -------
    None
        ``out/summary.json`` is written.
    """
    summary = {
        "n_rows": res.n_rows,
        "n_invalid": res.n_invalid,
        "n_models": res.n_models,
        "n_items": res.n_items,
        "formula": res.formula,
        "cluster": res.cluster,
        "budget_headline": res.budget_headline,
        "notes": res.notes,
        "shared_families": res.shared_families,
        "gee": _fit_summary(models[0]),
        "gee_dataset": _fit_summary(models[1]),
        "tables": {k: str(v.relative_to(out)) for k, v in res.files.items()},
    }
    tmp = out / ".summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=2, default=str))
    os.replace(tmp, out / "summary.json")
