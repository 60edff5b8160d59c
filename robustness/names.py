"""Closed vocabularies of the toolkit, defined once (core: imports nothing of the project)."""

from __future__ import annotations

__all__ = ["FAMILY_ORDER"]

#: The eight perturbation families, in the order tables and reports list them.
FAMILY_ORDER: tuple[str, ...] = (
    "option_order",
    "label_substitution",
    "spelling_noise",
    "lexical_substitution",
    "paraphrase",
    "formatting",
    "logical_equivalence",
    "framing",
)
