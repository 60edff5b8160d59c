"""lexical_substitution: words and short phrases replaced from the project's own lexicon.

PLACEHOLDER: measured figures go here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from perturbations.base import Candidate, Family, register
from perturbations.lexical_substitution.lexicon import (
    DEFAULT_PATH,
    Context,
    Entry,
    Lexicon,
    default_lexicon,
)
from perturbations.lexical_substitution.slots import (
    NEGATIONS,
    TASK_WORDS,
    Slot,
    _at_sentence_start,
    find_slots,
    match_case,
    option_words,
    substitute,
)
from perturbations.similarity import Similarity, default_similarity, keep_similar
from robustness.errors import StudyError
from robustness.items import Item
from robustness.prompts import PromptSpec

__all__ = [
    "DEFAULT_PATH",
    "NEGATIONS",
    "TASK_WORDS",
    "THRESHOLD",
    "Context",
    "Entry",
    "LexicalSubstitution",
    "Lexicon",
    "Slot",
    "_at_sentence_start",
    "default_lexicon",
    "find_slots",
    "option_words",
    "substitute",
]

#: Default similarity threshold: 0, the check is off (module docstring: it did not separate
#: the judged good and bad variants).
THRESHOLD = 0.0


@register
class LexicalSubstitution(Family):
    """Forms of the lexicon replaced by their substitutes; variants checked for meaning.

    Parameters
    ----------
    rate
        Probability that each replaceable form is replaced (at least one per variant).
    max_substitutions
        At most this many forms replaced per variant.
    threshold
        Minimum similarity of instruction + question before vs after (0 turns it off).
    instruction
        Also replace words in the instruction (default True).
    similarity, lexicon
        The meaning checker (default: all-MiniLM-L6-v2, shared in the process, loaded
        only when ``threshold`` > 0) and the lexicon (default: the packaged one).
    """

    name = "lexical_substitution"

    def __init__(
        self,
        similarity: Similarity | None = None,
        lexicon: Lexicon | None = None,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        rate = float(self.params["rate"])
        if not 0 < rate <= 1:
            raise StudyError(f"lexical_substitution rate must be in (0, 1], got {rate}")
        if int(self.params["max_substitutions"]) < 1:
            raise StudyError("lexical_substitution max_substitutions must be >= 1")
        self._similarity = similarity
        self.lexicon = lexicon or default_lexicon()

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        return {"rate": 0.3, "max_substitutions": 3, "threshold": THRESHOLD, "instruction": True}

    @property
    def similarity(self) -> Similarity:
        if self._similarity is None:
            self._similarity = default_similarity()
        return self._similarity

    def slots(self, spec: PromptSpec, item: Item) -> dict[str, list[Slot]]:
        """Replaceable forms of the question (and the instruction), by part."""
        protected = option_words(item.options) | option_words(spec.options)
        parts = {"question": find_slots(spec.question, self.lexicon, protected)}
        if self.params["instruction"]:
            parts["instruction"] = find_slots(spec.instruction, self.lexicon, protected)
        return {k: v for k, v in parts.items() if v}

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        parts = self.slots(spec, item)
        flat = [(part, slot) for part, slots in parts.items() for slot in slots]
        if not flat:
            return
        rate = float(self.params["rate"])
        cap = int(self.params["max_substitutions"])
        while True:
            hit = np.flatnonzero(rng.random(len(flat)) < rate)
            if hit.size == 0:
                hit = np.array([int(rng.integers(0, len(flat)))])
            if hit.size > cap:
                hit = np.sort(rng.choice(hit, size=cap, replace=False))
            chosen: dict[str, list[tuple[Slot, str]]] = {}
            record = []
            for i in hit:
                part, slot = flat[int(i)]
                new = slot.synonyms[int(rng.integers(0, len(slot.synonyms)))]
                chosen.setdefault(part, []).append((slot, new))
                record.append(
                    {
                        "part": part,
                        "word": slot.word,
                        "to": match_case(new, slot.word),
                        "entry": slot.entry,
                    }
                )
            changes = {part: substitute(getattr(spec, part), c) for part, c in chosen.items()}
            yield spec.with_(**changes), {"n_substitutions": len(record), "substitutions": record}

    def perturb(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, n: int
    ) -> list[Candidate]:
        """Up to ``n`` distinct candidates whose similarity to ``spec`` reaches the threshold."""
        threshold = float(self.params["threshold"])
        budget = max(1, n) * self.max_attempts_per_variant
        if threshold <= 0:
            return super().perturb(spec, item, rng, n)
        return keep_similar(
            spec, self.candidates(spec, item, rng), n, self.similarity, threshold, budget
        )
