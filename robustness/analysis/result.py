"""The typed result of ``robustness analyze``: one field per table, the fits, the counts, the notes.

:class:`AnalysisResult` is what :func:`robustness.analysis.pipeline.analyze` returns and what
the report reads: every table is a field named after its file stem (``result.wald_type2`` is
``tables/wald_type2.csv``), so a misspelt name is an ``AttributeError`` (and a mypy error), not
a missing key. :meth:`AnalysisResult.named_tables` gives the tables in the order their files
are written, for the code that writes one file per table.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analyses.gee import GEEResult
from analyses.gee.paper_models import DATASET_FORMULA

__all__ = ["RANKING_TABLES", "AnalysisResult"]

#: The tables of model-ranking stability, present only with two or more models (issue 15).
RANKING_TABLES = (
    "ranking_ranks",
    "ranking_swaps",
    "ranking_concordance",
    "spread_resolution",
    "spread_pairs",
)

#: How a table field is annotated (the module imports annotations as strings).
_TABLE_TYPES = ("pd.DataFrame", "pd.DataFrame | None")


@dataclass(frozen=True, kw_only=True)
class AnalysisResult:
    """Everything :func:`~robustness.analysis.pipeline.analyze` computed.

    The table fields, in the order their files are written, each named by its file stem
    (the columns are listed in the function that makes it; see the pipeline's module
    docstring): ``agreement_items`` ... ``fragile_items``, then the five ranking tables
    (:data:`RANKING_TABLES`, None with fewer than two models), then ``multi_prompt``
    (:func:`analyses.multi_prompt`, None when no item has a gold answer), then, for a
    budgeted table only, ``budget_design``, ``variant_estimates``, ``variant_quantiles`` and
    ``withheld`` (:func:`analyses.budget_sections`; their sentences are ``budget_headline``
    and ``budget_method``). The other fields: ``fit``
    (the type model's GEE) and ``dataset_fit`` (the dataset model's, Kamal et al. Table 3),
    each None when it could not be fitted (the reason is in ``notes``); ``notes``
    (sentences about excluded rows, dropped terms, separation, thin cells); the counts
    ``n_rows, n_invalid, n_models, n_items``; the ``formula``, ``dataset_formula`` and
    ``cluster`` used; ``files`` (file stem -> path written); ``families`` (asked for),
    ``shared_families`` (those both dataset types have), ``families_only`` (dataset type
    -> families only it has); ``invalid_warnings`` (models whose invalid rates differ
    between the types by more than ``invalid_margin``) and ``min_items``.
    """

    agreement_items: pd.DataFrame
    agreement_by_model_type_category: pd.DataFrame
    agreement_by_type_category: pd.DataFrame
    agreement_by_dataset_category: pd.DataFrame
    agreement_bootstrap: pd.DataFrame
    invalid_rates: pd.DataFrame
    flip_rate: pd.DataFrame
    flip_summary: pd.DataFrame
    pss: pd.DataFrame
    pss_items: pd.DataFrame
    accuracy: pd.DataFrame
    format_accuracy: pd.DataFrame
    accuracy_vs_chance: pd.DataFrame
    label_concentration: pd.DataFrame
    cochran: pd.DataFrame
    mcnemar: pd.DataFrame
    confidence_sensitivity: pd.DataFrame
    confidence_items: pd.DataFrame
    gee_coefficients: pd.DataFrame
    wald_type2: pd.DataFrame
    wald_type3: pd.DataFrame
    marginal_means: pd.DataFrame
    contrasts: pd.DataFrame
    separation: pd.DataFrame
    gee_dataset_coefficients: pd.DataFrame
    wald_dataset_type2: pd.DataFrame
    wald_dataset_type3: pd.DataFrame
    separation_dataset: pd.DataFrame
    covariance_rank: pd.DataFrame
    contrasts_by_model: pd.DataFrame
    contrasts_invalid_as_disagreement: pd.DataFrame
    fragile_items: pd.DataFrame
    ranking_ranks: pd.DataFrame | None = None
    ranking_swaps: pd.DataFrame | None = None
    ranking_concordance: pd.DataFrame | None = None
    spread_resolution: pd.DataFrame | None = None
    spread_pairs: pd.DataFrame | None = None
    multi_prompt: pd.DataFrame | None = None
    budget_design: pd.DataFrame | None = None
    variant_estimates: pd.DataFrame | None = None
    variant_quantiles: pd.DataFrame | None = None
    withheld: pd.DataFrame | None = None

    out_dir: Path
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
    budget_headline: str = ""
    budget_method: str = ""
    invalid_margin: float = 0.10

    @classmethod
    def table_names(cls) -> list[str]:
        """Every table field's name (its file stem), in the order the files are written."""
        return [f.name for f in dataclasses.fields(cls) if f.type in _TABLE_TYPES]

    def named_tables(self) -> dict[str, pd.DataFrame]:
        """File stem -> table, in the order the files are written; absent tables left out."""
        out = {}
        for name in self.table_names():
            frame = getattr(self, name)
            if frame is not None:
                out[name] = frame
        return out

    @property
    def has_ranking(self) -> bool:
        """Whether the ranking tables were computed (two or more models)."""
        return self.ranking_ranks is not None
