"""spelling_noise: typing errors in the question and the instruction.

Each eligible word is edited with probability ``rate`` (at least one edit per
variant).  An edit is one of: swap two adjacent letters, drop a letter, insert a
keyboard neighbour of a letter next to it, or replace a letter by a keyboard
neighbour (QWERTY).  Eligible words are alphabetic, at least ``min_length``
letters long and not negations, so digits, labels, option texts and the option
structure are never touched and "not" never becomes a different word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from perturbations.base import Candidate, Family, register
from robustness.core.errors import StudyError
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec

EDITS = ("swap", "drop", "insert", "neighbor")

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
KEYBOARD: dict[str, str] = {}
for _r, _row in enumerate(_ROWS):
    for _c, _ch in enumerate(_row):
        near = []
        for _dr in (-1, 0, 1):
            rr = _r + _dr
            if 0 <= rr < len(_ROWS):
                for _dc in (-1, 0, 1):
                    cc = _c + _dc
                    if (_dr or _dc) and 0 <= cc < len(_ROWS[rr]):
                        near.append(_ROWS[rr][cc])
        KEYBOARD[_ch] = "".join(near)

#: Words whose misspelling could flip or blur the meaning; never edited.
PROTECTED = frozenset(
    {
        "not",
        "no",
        "nor",
        "never",
        "none",
        "nothing",
        "neither",
        "nobody",
        "nowhere",
        "cannot",
        "cant",
        "dont",
        "doesnt",
        "isnt",
        "arent",
        "wasnt",
        "werent",
        "wont",
        "shouldnt",
        "wouldnt",
        "couldnt",
        "without",
        "except",
        "only",
    }
)

_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


def _keep_case(new: str, old: str) -> str:
    return new.upper() if old.isupper() else new


def edit_word(word: str, op: str, rng: np.random.Generator) -> str:
    """Apply one edit ``op`` to ``word`` at a random position."""
    n = len(word)
    if op == "swap":
        i = int(rng.integers(0, n - 1))
        if word[i].lower() == word[i + 1].lower():
            op = "drop"
        else:
            return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op == "drop":
        i = int(rng.integers(1, n))  # keep the first letter: readers anchor on it
        return word[:i] + word[i + 1 :]
    i = int(rng.integers(0, n))
    near = KEYBOARD.get(word[i].lower(), "")
    if not near:
        return word[:i] + word[i + 1 :]
    ch = _keep_case(near[int(rng.integers(0, len(near)))], word[i])
    if op == "insert":
        return word[: i + 1] + ch + word[i + 1 :]
    return word[:i] + ch + word[i + 1 :]


def eligible_words(text: str, min_length: int) -> list[re.Match[str]]:
    """The words of ``text`` that may be misspelt."""
    return [
        m
        for m in _WORD.finditer(text)
        if len(m.group()) >= min_length and m.group().lower().replace("'", "") not in PROTECTED
    ]


def add_noise(
    text: str, rate: float, rng: np.random.Generator, min_length: int, force: bool
) -> tuple[str, list[dict[str, Any]]]:
    """Edit eligible words of ``text``; return the new text and the edits made.

    With ``force`` at least one word is edited when any is eligible.
    """
    spans = eligible_words(text, min_length)
    if not spans:
        return text, []
    hit = rng.random(len(spans)) < rate
    if force and not hit.any():
        hit[int(rng.integers(0, len(spans)))] = True
    out, last, edits = [], 0, []
    for m, h in zip(spans, hit, strict=True):
        if not h:
            continue
        op = EDITS[int(rng.integers(0, len(EDITS)))]
        new = edit_word(m.group(), op, rng)
        out.append(text[last : m.start()])
        out.append(new)
        last = m.end()
        edits.append({"op": op, "word": m.group(), "to": new})
    out.append(text[last:])
    return "".join(out), edits


@register
class SpellingNoise(Family):
    name = "spelling_noise"

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        return {"rate": 0.1, "min_length": 4}

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        try:
            rate, min_len = float(self.params["rate"]), int(self.params["min_length"])
        except (TypeError, ValueError):
            raise StudyError(
                f"spelling_noise rate and min_length must be numbers, got "
                f"{self.params['rate']!r} and {self.params['min_length']!r}"
            ) from None
        if not 0 < rate <= 1:
            raise StudyError(f"spelling_noise rate must be in (0, 1], got {rate}")
        in_question = bool(eligible_words(spec.question, min_len))
        if not in_question and not eligible_words(spec.instruction, min_len):
            return  # nothing eligible to edit
        while True:
            question, q_edits = add_noise(spec.question, rate, rng, min_len, force=in_question)
            instruction, i_edits = add_noise(
                spec.instruction, rate, rng, min_len, force=not in_question
            )
            yield (
                spec.with_(question=question, instruction=instruction),
                {"rate": rate, "n_edits": len(q_edits) + len(i_edits), "edits": q_edits + i_edits},
            )
