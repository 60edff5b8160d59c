"""The rule paraphraser: instruction wordings and question-frame rules written for this toolkit.

Equivalent instruction wordings are written for each kind of item (multiple choice, agree
statement, other ordinal question) and used only when the spec carries the item's default
instruction or one of these wordings; the question's frame is rewritten by rules: statements are
introduced ("Consider the statement: "...""), questions are introduced ("Here is a question:
...") or rewritten by small exact rules ("Which of the following" -> "Which one of the
following", "What is" <-> "What's", "In your opinion, ..." for survey questions). The rules never
add or drop a negation, which embedding similarity could not see.
"""

from __future__ import annotations

import re

import numpy as np

from perturbations.paraphrase.rewrite import Rewrite
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec, default_instruction, task_kind

__all__ = [
    "INSTRUCTIONS",
    "QUESTION_FRAMES",
    "REWRITE_RULES",
    "STATEMENT_FRAMES",
    "TASK_FRAMES",
    "RuleParaphraser",
    "instruction_kind",
    "question_rewrites",
]

#: Equivalent instructions by kind of item (:func:`instruction_kind`); each asks for the
#: label only and says "label", so any label set fits.
INSTRUCTIONS: dict[str, tuple[str, ...]] = {
    "nominal": (
        "Answer the following multiple-choice question. Reply with the label of the correct "
        "option only.",
        "Below is a multiple-choice question. Give only the label of the right option.",
        "Here is a question with several options, exactly one of which is correct. Respond "
        "with that option's label and nothing else.",
        "Pick the correct option for the multiple-choice question below and reply with its "
        "label only.",
        "The question below has one correct option. Your reply should be its label alone.",
        "Select the right answer to the following multiple-choice question. Reply with just "
        "the label of that option.",
    ),
    "agree": (
        "Say how much you agree with the statement below. Reply with the label of one option only.",
        "Below is a statement. Indicate how strongly you agree or disagree with it by "
        "replying with the label of one option only.",
        "To what extent do you agree with the following statement? Reply with only the label "
        "of one option.",
        "Read the following statement and give your level of agreement with it. Respond with "
        "one option's label and nothing else.",
        "Consider the statement below and rate how much you agree with it. Give the label of "
        "one option only.",
        "How far do you agree with the statement below? Your reply should be the label of a "
        "single option.",
    ),
    "ordinal": (
        "Answer the following question. Reply with the label of one option only.",
        "Below is a question. Respond with the label of the option that fits your answer, "
        "and nothing else.",
        "Please answer the question below by giving the label of one option only.",
        "Choose the option that best reflects your answer to the question below. Reply with "
        "its label only.",
        "Here is a question with a response scale. Reply with the label of one option only.",
        "Read the question below and reply with only the label of the option you pick.",
    ),
}

#: Frames that introduce a statement; ``{s}`` is the statement as written.  Frames with
#: quotation marks are skipped when the statement has a double quote of its own.
STATEMENT_FRAMES = (
    'Consider the statement: "{s}"',
    "Here is a statement. {s}",
    'The statement reads: "{s}"',
    "Please consider the following statement: {s}",
    "Think about this statement. {s}",
    'Statement to rate: "{s}"',
)

#: Frames that introduce a question (text ending with "?").
QUESTION_FRAMES = (
    "Here is a question: {s}",
    "Please answer this question: {s}",
    "The question is: {s}",
    "Consider the following question. {s}",
)

#: Frames for question text that is not a question (a task, a fill-in, a pair of claims).
TASK_FRAMES = (
    "Consider the following. {s}",
    "Here is the problem: {s}",
    "Read the following carefully. {s}",
)

#: Exact rewrites: (name, pattern, replacement); each applied alone, to every match.
REWRITE_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("which_one", re.compile(r"\b([Ww])hich of the following\b"), r"\1hich one of the following"),
    ("which_is", re.compile(r"^Which is\b"), "Which one is"),
    ("whats", re.compile(r"\b([Ww])hat is\b"), r"\1hat's"),
    ("what_is", re.compile(r"\b([Ww])hat's\b"), r"\1hat is"),
    ("its", re.compile(r"\b([Ii])t is\b"), r"\1t's"),
    ("it_is", re.compile(r"\b([Ii])t's\b"), r"\1t is"),
)

_KEEP_CAPITAL = re.compile(r"^(I\b|I'|[A-Z]{2,}|[A-Z][a-z]*[A-Z])")


def _lower_first(text: str) -> str:
    """``text`` with its first letter lowered, unless it is "I", an acronym or a name-like word."""
    return text if _KEEP_CAPITAL.match(text) else text[:1].lower() + text[1:]


def instruction_kind(item: Item) -> str:
    """``"nominal"``, ``"agree"`` or ``"ordinal"``: subjective items with unordered options
    (``task_kind`` "opinion") take the neutral ordinal wordings, which never say "correct"."""
    kind = task_kind(item)
    return "ordinal" if kind == "opinion" else kind


def question_rewrites(item: Item, question: str) -> list[tuple[str, str]]:
    """(how, new question) for every frame and rule that applies to ``question``."""
    q = question.strip()
    out: list[tuple[str, str]] = []
    if item.is_agree_scale:
        for i, frame in enumerate(STATEMENT_FRAMES):
            if '"' in frame and '"' in q:
                continue
            out.append((f"statement_frame/{i}", frame.format(s=q)))
    else:
        frames = QUESTION_FRAMES if q.endswith("?") else TASK_FRAMES
        kind = "question_frame" if q.endswith("?") else "task_frame"
        out += [(f"{kind}/{i}", frame.format(s=q)) for i, frame in enumerate(frames)]
        if item.dataset_type == "subjective" and q.endswith("?") and "opinion" not in q.lower():
            out.append(("in_your_opinion", "In your opinion, " + _lower_first(q)))
    for name, pattern, repl in REWRITE_RULES:
        new = pattern.sub(repl, q)
        if new != q:
            out.append((f"rule/{name}", new))
    return out


class RuleParaphraser:
    """Instruction wordings and question-frame rules written for this toolkit.

    Every (instruction, question) combination of the item's rewrites, the unchanged
    ones included but not both unchanged, shuffled with ``rng``.  The instruction is
    rewritten only when the spec has the item's default instruction or one of
    :data:`INSTRUCTIONS`, so a study's own instruction is never replaced.
    """

    name = "rules"

    def paraphrase(
        self, item: Item, spec: PromptSpec, n: int, rng: np.random.Generator
    ) -> list[Rewrite]:
        kind = instruction_kind(item)
        ours = INSTRUCTIONS[kind]
        instructions: list[tuple[str, str | None]] = [("", None)]
        if spec.instruction == default_instruction(item) or spec.instruction in ours:
            instructions += [
                (f"instruction/{i}", w) for i, w in enumerate(ours) if w != spec.instruction
            ]
        questions: list[tuple[str, str]] = [("", spec.question)]
        questions += question_rewrites(item, spec.question)
        combos = [(ih, iw, qh, qw) for ih, iw in instructions for qh, qw in questions if ih or qh]
        order = rng.permutation(len(combos))
        out = []
        for j in order[: max(0, n)]:
            ih, iw, qh, qw = combos[int(j)]
            out.append(Rewrite(question=qw, instruction=iw, how="+".join(h for h in (ih, qh) if h)))
        return out
