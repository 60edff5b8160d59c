"""paraphrase: the instruction and the question's frame said in other words.

A :class:`Paraphraser` proposes rewrites (:class:`Rewrite`: a new question, and
optionally a new instruction); the family turns each into a spec, drops those whose
meaning moved (sentence-embedding similarity of instruction + question, before vs
after, below ``threshold``) and records the similarity in the variant's params.
Options, labels, their order and the format are never touched, so the answer map is
the identity.

Paraphrasers (one module each): :class:`~perturbations.paraphrase.rules.RuleParaphraser`
(the default: instruction wordings and question-frame rules), ``FileParaphraser`` (a user's
file, ``file.py``) and ``ModelParaphraser`` (a model through any runner, ``model.py``).

Threshold: 0.80 (cosine of all-MiniLM-L6-v2 embeddings of instruction + question,
before vs after), chosen on 200 random items of ../shared/data with the default prompt:

- All 8,004 rule rewrites of those items (every instruction x question-frame/rule
  combination): median 0.931, 1st percentile 0.751, 5th 0.799; 94.8% pass 0.80.  The
  ones below pair the most different instruction with a frame around a short question.
- Another item's question (same dataset) under the same instruction (n=199): median
  0.349, max 0.768; under a rewritten instruction (n=199): max 0.729.  None pass.
- The question cut to its first half (n=192): median 0.817; 45% rejected.
- The instruction of another kind of task (agreement wording on a multiple-choice
  item and so on, n=200): median 0.891; 15% rejected.
- Agree statements negated, "It is not the case that ..." (n=70): min 0.951; all pass.

0.75 would keep 99% of the rules' rewrites but let 1% of swapped questions through;
0.85 would reject 16% of the rules' rewrites.  Embedding similarity cannot see negation,
so the rules never add or drop one, and :class:`ModelParaphraser` refuses outputs whose
negations, numbers, blanks or ending differ from the question's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from perturbations.base import Candidate, Family, register
from perturbations.paraphrase.rewrite import Paraphraser
from perturbations.paraphrase.rules import RuleParaphraser
from perturbations.similarity import Similarity, default_similarity, keep_similar
from robustness.core.errors import StudyError
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec

__all__ = ["THRESHOLD", "Paraphrase"]

#: Default similarity threshold; see the module docstring for the evidence.
THRESHOLD = 0.80


@register
class Paraphrase(Family):
    """Paraphrases of the instruction and question, kept when similar enough in meaning.

    Parameters
    ----------
    paraphraser
        A :class:`Paraphraser`; default :class:`RuleParaphraser`.
    similarity
        The meaning checker; default all-MiniLM-L6-v2, shared in the process.
    threshold
        Minimum similarity of instruction + question, before vs after (default 0.80).
    oversample
        Rewrites asked of the paraphraser per wanted variant (spares for rejections).
    """

    name = "paraphrase"

    def __init__(
        self,
        paraphraser: Paraphraser | None = None,
        similarity: Similarity | None = None,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        if int(self.params["oversample"]) < 1:
            raise StudyError("paraphrase oversample must be >= 1")
        self.paraphraser: Paraphraser = paraphraser or RuleParaphraser()
        self._similarity = similarity

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        return {"threshold": THRESHOLD, "oversample": 2}

    @property
    def similarity(self) -> Similarity:
        if self._similarity is None:
            self._similarity = default_similarity()
        return self._similarity

    def _candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, k: int
    ) -> Iterator[Candidate]:
        source = getattr(self.paraphraser, "name", type(self.paraphraser).__name__)
        for rewrite in self.paraphraser.paraphrase(item, spec, k, rng):
            changes: dict[str, Any] = {"question": rewrite.question}
            if rewrite.instruction is not None:
                changes["instruction"] = rewrite.instruction
            yield spec.with_(**changes), {"paraphraser": source, "rewrite": rewrite.how}

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        """Unchecked candidates (ten); :meth:`perturb` checks their meaning."""
        return self._candidates(spec, item, rng, 10)

    def perturb(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, n: int
    ) -> list[Candidate]:
        """Up to ``n`` distinct paraphrases whose similarity to ``spec`` reaches the threshold."""
        k = max(1, n) * int(self.params["oversample"])
        return keep_similar(
            spec,
            self._candidates(spec, item, rng, k),
            n,
            self.similarity,
            float(self.params["threshold"]),
            k,
        )
