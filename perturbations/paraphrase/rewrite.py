"""What a paraphraser proposes (:class:`Rewrite`), what a paraphraser is
(:class:`Paraphraser`), and the error a paraphrase file raises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from robustness.core.errors import RobustnessError
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec

__all__ = ["ParaphraseFileError", "Paraphraser", "Rewrite"]


@dataclass(frozen=True)
class Rewrite:
    """One proposed paraphrase of a prompt.

    ``question`` replaces the spec's question; ``instruction`` replaces its instruction
    unless it is None.  ``how`` names the rule, file line or model prompt that made it.
    """

    question: str
    instruction: str | None = None
    how: str = ""


@runtime_checkable
class Paraphraser(Protocol):
    """Proposes rewrites of a prompt's question (and instruction)."""

    #: Recorded in each variant's params as ``paraphraser``.
    name: str

    def paraphrase(
        self, item: Item, spec: PromptSpec, n: int, rng: np.random.Generator
    ) -> list[Rewrite]:
        """Up to ``n`` rewrites of ``spec``, best first; random choices use ``rng`` only."""
        ...


class ParaphraseFileError(RobustnessError, ValueError):
    """A paraphrase file that cannot be read: the message names the file and the line."""
