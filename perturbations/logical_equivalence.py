"""logical_equivalence: say the same thing in a logically equivalent form.

- Agree-scale statements are negated, "It is not the case that <statement>" and
  three equivalent negations, with the answer map reversing the scale: agreeing
  with "not S" is disagreeing with S, so displayed point k means canonical point
  K-1-k (a neutral midpoint maps to itself).
- Multiple-choice items keep the question and restate the task in equivalent
  logical forms ("exactly one option is true", "the option that is not
  incorrect", ...).
- Other ordinal scales (importance, frequency, ...) have no clean negation; they
  get equivalent reframings of the task without negation (the scale named by
  its endpoints, "exactly one option must be chosen", ...).  So do agree-scale
  items whose text is not one declarative sentence (a question, several
  sentences): negating only part of it would not reverse the whole scale.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from perturbations.base import Candidate, Family, register
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec, task_kind

NEGATIONS = (
    "It is not the case that {s}.",
    "It is false that {s}.",
    "It is not true that {s}.",
    "The following claim is false: {S}.",
)

NOMINAL_FORMS = (
    "Exactly one of the options below is correct. Reply with the label of the correct option only.",
    "Exactly one of the options below is true and the others are false. Reply with the label "
    "of the true option only.",
    "All options but one are incorrect. Reply with the label of the option that is not "
    "incorrect, and nothing else.",
    "Only one option is right; every other option is wrong. Reply with the label of the "
    "option that is not wrong, and nothing else.",
    "Find the option that is correct, that is, the one that is not false. Reply with its "
    "label only.",
    "If an option is correct, it is the answer, and exactly one option is correct. Reply with "
    "the label of that option only.",
)

ORDINAL_FORMS = (
    'The options below form a scale from "{first}" to "{last}". Answer the question with '
    "the point of that scale that fits best. Reply with its label only.",
    "Answer the question below; exactly one option must be chosen. Reply with the label of "
    "that option only.",
    "Of the options below, pick the one that answers the question best. Reply with its label only.",
    "Consider each option below as an answer to the question and keep the one that fits best. "
    "Reply with the label of that option only.",
    "Read the question and the options below, then choose exactly one option as your answer. "
    "Reply with its label only.",
    "Each option below is a possible answer to the question. Reply with the label of the one "
    "that applies best, and nothing else.",
)

_KEEP_CAPITAL = re.compile(r"^(I\b|[A-Z]{2,}|[A-Z][a-z]*[A-Z])")


def negatable(statement: str) -> bool:
    """Whether ``statement`` is one declarative sentence, so that negating it negates it all.

    A question ("Do you agree that ...?"), several sentences or a list cannot be wrapped
    in "It is not the case that ..." without changing more than its polarity.
    """
    s = statement.strip()
    body = s.rstrip(".").rstrip()
    return (
        bool(body)
        and not s.endswith(("?", "!", ":"))
        and not any(mark in body for mark in (". ", "? ", "! ", "; ", "\n"))
    )


def embed_clause(statement: str) -> tuple[str, str]:
    """The statement as a subordinate clause (first letter lowered where safe) and as is.

    Trailing full stops and spaces are removed; "I", acronyms and words with an
    inner capital keep their case.
    """
    s = statement.strip().rstrip(".").rstrip()
    clause = s if _KEEP_CAPITAL.match(s) else s[:1].lower() + s[1:]
    return clause, s


@register
class LogicalEquivalence(Family):
    name = "logical_equivalence"

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        if item.is_agree_scale and negatable(spec.question):
            clause, whole = embed_clause(spec.question)
            for i in rng.permutation(len(NEGATIONS)):
                text = NEGATIONS[int(i)].format(s=clause, S=whole)
                yield (
                    spec.with_(question=text, negated=not spec.negated),
                    {"form": f"negation/{int(i)}", "negated": True},
                )
            return
        kind = task_kind(item)
        forms: tuple[str, ...]
        fill: dict[str, str]
        if kind == "nominal":
            forms, fill = NOMINAL_FORMS, {}
        elif kind == "opinion":  # unordered options with no correct one: no scale, no "correct"
            forms, fill = ORDINAL_FORMS[1:], {}
        else:
            forms = ORDINAL_FORMS
            fill = {"first": item.options[0], "last": item.options[-1]}
        for i in rng.permutation(len(forms)):
            yield (
                spec.with_(instruction=forms[int(i)].format(**fill)),
                {"form": f"{kind}/{int(i)}", "negated": False},
            )
