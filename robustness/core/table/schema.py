"""The long table's schema: its columns, their kinds, and which of them an analysis needs.

The schema is the contract between the runners that write answers and the analyses that read
them, so it lives here and nowhere else; :mod:`robustness.core.table.checks` checks a table against
it and :mod:`robustness.core.table.io` reads and writes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from robustness.core import names

__all__ = [
    "ANALYSIS_COLUMNS",
    "COLUMNS",
    "DATASET_TYPES",
    "KEY_COLUMNS",
    "METADATA_KEY",
    "MODES",
    "OPTIONAL_EXTRAS",
    "REPEAT_COLUMNS",
    "SCALES",
    "Column",
]

#: The key of the toolkit's metadata in a Parquet file's schema.
METADATA_KEY = b"robustness"


@dataclass(frozen=True)
class Column:
    """One column of the long table: its kind, whether it may be missing, what it holds."""

    kind: str  # "str" | "int" | "float" | "bool" | "json" | "probs"
    nullable: bool
    doc: str


COLUMNS: dict[str, Column] = {
    "study": Column("str", False, "study name"),
    "model": Column("str", False, "model name as given in the study"),
    "dataset": Column("str", False, "dataset the item comes from"),
    "dataset_type": Column("str", False, "'objective' or 'subjective'"),
    "item_id": Column("str", False, "item identifier, unique within its dataset"),
    "category": Column("str", False, "perturbation family, or 'original'"),
    "variant_id": Column("str", False, "stable variant id such as 'option_order/3'"),
    "params": Column("json", True, "JSON object of the parameters that made the variant"),
    "prompt_sha": Column("str", True, "SHA-256 of the rendered prompt"),
    "shots": Column("int", True, "number of few-shot exemplars"),
    "mode": Column("str", True, "'choice', 'cloze' or 'generate'"),
    "raw_output": Column("str", True, "the model's raw output (generated text or scored label)"),
    "label": Column("str", True, "displayed label the output was parsed to"),
    "answer": Column("int", True, "canonical option index (0-based); missing when invalid"),
    "valid": Column("bool", False, "whether the output parsed to an answer"),
    "invalid_reason": Column("str", True, "empty | refusal | ambiguous | no_label | error: ..."),
    "gold": Column("int", True, "gold canonical index for objective items"),
    "correct": Column("bool", True, "answer == gold, for valid objective rows"),
    "option_probs": Column("probs", True, "label probabilities in canonical order"),
    "confidence": Column("float", True, "top next-token probability (ProSA eq. 3)"),
    "latency_ms": Column("float", True, "model time for the prompt in milliseconds"),
    "seed": Column("int", True, "study seed"),
    # Extras that the analyses use when present.
    "scale": Column("str", True, "'nominal' or 'ordinal'"),
    "n_options": Column("int", True, "number of options of the item (K)"),
    "prompt": Column("str", True, "the rendered prompt text, for reading fragile items"),
    # Generate mode: what `robustness reparse` needs, and which parser read the row.
    "display": Column("json", True, "JSON: displayed labels, options, canonical index of each"),
    "parser_version": Column("str", True, "answer-parser version that read raw_output"),
    "label_answer": Column("int", True, "answer under conflict='label' (label with other text)"),
    "text_answer": Column("int", True, "answer under conflict='text' (label with other text)"),
}

#: The columns every table must have for the analyses to run.
ANALYSIS_COLUMNS: tuple[str, ...] = (
    "model",
    "dataset",
    "dataset_type",
    "item_id",
    "category",
    "variant_id",
    "answer",
    "valid",
)

#: Columns our runs write that tables made elsewhere need not have.
OPTIONAL_EXTRAS: tuple[str, ...] = (
    "scale",
    "n_options",
    "prompt",
    "display",
    "parser_version",
    "label_answer",
    "text_answer",
)

#: The columns that identify a row; no two rows may share them.
KEY_COLUMNS: tuple[str, ...] = ("study", "model", "dataset", "item_id", "category", "variant_id")

#: Columns of a table made elsewhere that tell repeated samples of one prompt apart: an item
#: may have one ``original`` row per value of each (validate checks it; analyses keep them).
REPEAT_COLUMNS: tuple[str, ...] = ("epoch", "repeat")

DATASET_TYPES = frozenset(names.DATASET_TYPES)
MODES = frozenset(names.MODES)
SCALES = frozenset(names.SCALES)
