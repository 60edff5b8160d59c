"""paraphrase: the instruction and the question's frame said in other words.

One job per module: ``rewrite.py`` (what a paraphraser proposes), ``rules.py`` (the default
rule paraphraser), ``file.py`` (a user's file, read by the item loaders' readers), ``model.py``
(a model through any runner) and ``family.py`` (the ``paraphrase`` family, which keeps the
rewrites whose meaning survives; the threshold's evidence is there).
"""

from __future__ import annotations

from perturbations.paraphrase.family import THRESHOLD, Paraphrase
from perturbations.paraphrase.file import FileParaphraser
from perturbations.paraphrase.model import (
    PROMPT,
    STYLES,
    ModelParaphraser,
    clean_output,
    keeps_meaning_markers,
)
from perturbations.paraphrase.rewrite import ParaphraseFileError, Paraphraser, Rewrite
from perturbations.paraphrase.rules import (
    INSTRUCTIONS,
    QUESTION_FRAMES,
    REWRITE_RULES,
    STATEMENT_FRAMES,
    TASK_FRAMES,
    RuleParaphraser,
    instruction_kind,
    question_rewrites,
)

__all__ = [
    "INSTRUCTIONS",
    "PROMPT",
    "QUESTION_FRAMES",
    "REWRITE_RULES",
    "STATEMENT_FRAMES",
    "STYLES",
    "TASK_FRAMES",
    "THRESHOLD",
    "FileParaphraser",
    "ModelParaphraser",
    "Paraphrase",
    "ParaphraseFileError",
    "Paraphraser",
    "Rewrite",
    "RuleParaphraser",
    "clean_output",
    "instruction_kind",
    "keeps_meaning_markers",
    "question_rewrites",
]
