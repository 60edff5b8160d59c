"""The toolkit's closed vocabularies, defined once.

Every module that checks or lists one of these values imports it from here: items and the
long table (dataset types, scales, modes), study files and the runner factory (backends,
dtypes), the perturbation registry, reports and synthetic tables (family names).

>>> from robustness.core.names import FAMILY_ORDER, MODES
>>> len(FAMILY_ORDER), FAMILY_ORDER[0], MODES
(8, 'option_order', ('choice', 'cloze', 'generate'))
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "BACKENDS",
    "CHAT_MODES",
    "DATASET_TYPES",
    "DTYPES",
    "EMBEDDED",
    "FAMILY_ORDER",
    "MODES",
    "ORIGINAL",
    "SCALES",
]

#: The eight perturbation families, in the order tables and reports list them.
FAMILY_ORDER: Final[tuple[str, ...]] = (
    "option_order",
    "label_substitution",
    "spelling_noise",
    "lexical_substitution",
    "paraphrase",
    "formatting",
    "logical_equivalence",
    "framing",
)

#: The category of every item's unperturbed prompt (the reference, not a family).
ORIGINAL: Final = "original"

#: ``objective``: a gold answer exists; ``subjective``: an opinion or survey item.
DATASET_TYPES: Final[tuple[str, ...]] = ("objective", "subjective")

#: ``nominal``: multiple choice; ``ordinal``: agree scales and other ordered response scales.
SCALES: Final[tuple[str, ...]] = ("nominal", "ordinal")

#: How a model is asked (the long table's ``mode`` column).
MODES: Final[tuple[str, ...]] = ("choice", "cloze", "generate")

#: The model backends: transformers + torch, the offline vLLM engine, an OpenAI-compatible server.
BACKENDS: Final[tuple[str, ...]] = ("hf", "vllm", "openai")

#: Chat settings of a model: ``auto`` uses the chat template when the model has one.
CHAT_MODES: Final[tuple[str, ...]] = ("auto", "always", "never")

#: Weight dtypes a study may name; ``auto`` is bfloat16 on CUDA and float32 on the CPU.
DTYPES: Final[tuple[str, ...]] = ("auto", "float32", "bfloat16", "float16")

#: The model name of the bundled default model (SmolLM2-135M-Instruct).
EMBEDDED: Final = "embedded"
