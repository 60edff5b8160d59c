"""The model paraphraser: a model, through any runner with ``generate``, rewords the question.

Its answers are cleaned (preambles, labels, quotes and option lines stripped) and refused when
they change the question's negations, numbers, blanks or ending, which sentence similarity
cannot see.

Model paraphrases, tried with the embedded SmolLM2-135M-Instruct on 8 shared items (3
styles each): before those marker checks the similarity check kept 13 of 14 cleaned
outputs, among them a filled-in blank, a completed sentence stem and a question turned
into a claim (similarities 0.94-0.99).  With them, 6 remain, all kept: 3 close (one
drops "really", one turns "because" into "and") and 3 that turn "usually" into "often"
or drop it (0.89-0.99).  Sentence similarity does not catch such shifts; a model that
small is no reliable paraphraser, and no threshold makes it one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from perturbations.paraphrase.rewrite import Rewrite
from robustness.core.errors import ModelError
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec

__all__ = ["PROMPT", "STYLES", "ModelParaphraser", "clean_output", "keeps_meaning_markers"]

#: Ways to ask for a paraphrase; each call uses several, so that greedy decoding still
#: gives different paraphrases.
STYLES = (
    "",
    " Use a different sentence structure.",
    " Use simpler words.",
    " Use a more formal register.",
    " Make it more concise.",
    " Use different words wherever you can.",
    " Write it as a native speaker would say it in conversation.",
    " Change the word order.",
)

PROMPT = (
    "Rewrite the following {kind} so that it means exactly the same thing but is worded "
    "differently.{style} Keep every fact, number, name and negation. Do not answer it, do not "
    "add options and do not explain. Reply with the rewritten {kind} only.\n\n"
    "{Kind}: {text}"
)

_PREAMBLE = re.compile(
    r"^\s*(sure|certainly|of course|okay|ok|here(?:'s| is| are)|the rewritten|rewritten|"
    r"paraphrase[ds]?|reworded|rewrite|new version|answer)\b[^:\n]*[:\n]\s*"
    r"|^[^:\n]{0,80}\b(reword|rephras|paraphras|rewrit)\w*[^:\n]{0,40}:\s*",
    re.IGNORECASE,
)
_LEAD_LABEL = re.compile(
    r"^\s*(?:\*\*)?(question|statement|rewritten \w+|paraphrase)"
    r"(?:\*\*)?\s*:\s*",
    re.IGNORECASE,
)
_OPTION_LINE = re.compile(r"^\s*[(\[]?[A-Ha-h1-9][.)\]:]\s+\S")
_QUOTES = "\"'“”‘’«»`"
_NEGATION = re.compile(
    r"\b(not|no|never|none|nothing|nobody|neither|nor|without|cannot)\b|n't\b", re.IGNORECASE
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _negations(text: str) -> int:
    return len(_NEGATION.findall(text))


def _numbers(text: str) -> list[str]:
    return _NUMBER.findall(text)


_BLANK = re.compile(r"_{2,}")


def _words_key(text: str) -> str:
    """Words only, case-folded: two texts with the same key are copies of each other."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def _ending(text: str) -> str:
    """How a text ends: "?", "." (also "!"), ":" or "" (open, as a stem to complete)."""
    end = text.rstrip().rstrip(_QUOTES + ")]").rstrip()[-1:]
    return {"?": "?", ".": ".", "!": ".", ":": ":"}.get(end, "")


def keeps_meaning_markers(paraphrase: str, question: str) -> bool:
    """True when ``paraphrase`` has the question's negations, numbers, blanks and ending.

    Sentence embeddings barely notice these, yet each changes what is asked: a dropped
    "not", another number, a filled-in blank ("... greater than a being that _____"), a
    question turned into a statement, or a stem to complete that the model completed.
    """
    return (
        _negations(paraphrase) == _negations(question)
        and _numbers(paraphrase) == _numbers(question)
        and len(_BLANK.findall(paraphrase)) == len(_BLANK.findall(question))
        and _ending(paraphrase) == _ending(question)
    )


def clean_output(text: str) -> str:
    """A model's answer reduced to the paraphrase itself.

    Drops a preamble ("Sure! Here is the rewritten question:"), a leading "Question:",
    markdown emphasis, everything from the first option-like line on, and quotation
    marks around the whole; keeps the first non-empty paragraph.
    """
    out = text.strip().replace("**", "").strip()
    for _ in range(3):
        new = _PREAMBLE.sub("", out, count=1).strip()
        new = _LEAD_LABEL.sub("", new, count=1).strip()
        if new == out:
            break
        out = new
    lines: list[str] = []
    for line in out.splitlines():
        if _OPTION_LINE.match(line) or (lines and not line.strip()):
            break
        if line.strip():
            lines.append(line.strip())
    out = " ".join(lines).strip()
    while len(out) >= 2 and out[0] in _QUOTES and out[-1] in _QUOTES:
        out = out[1:-1].strip()
    if out.count('"') % 2:
        out = out.strip('"').strip()  # a stray quote, left over from quoting the whole
    if out.count("“") != out.count("”"):
        out = out.strip("“”").strip()
    return out


class ModelParaphraser:
    """Paraphrases written by a model through any runner with ``generate``.

    One prompt per style hint (:data:`STYLES`, in an order drawn from ``rng``), all in one
    ``generate`` call.  Answers are cleaned (:func:`clean_output`); empty ones, copies of
    the question (same words), duplicates, ones under 0.3 or over 3 times its length, and
    ones that change the question's negations, numbers, blanks or ending
    (:func:`keeps_meaning_markers`) are dropped.

    Parameters
    ----------
    runner
        Anything with ``generate(prompts, max_new_tokens)`` returning objects with a
        ``.text`` (every runner of ``robustness.runners``).
    max_new_tokens
        Generation budget per paraphrase.
    chat
        Send chat messages (``[{"role": "user", ...}]``) rather than plain text prompts.
    styles
        The style hints, one prompt each; ``rng`` picks which and in what order.
    """

    name = "model"

    def __init__(
        self,
        runner: Any,
        max_new_tokens: int = 96,
        chat: bool = True,
        styles: Sequence[str] = STYLES,
    ) -> None:
        if not callable(getattr(runner, "generate", None)):
            raise ModelError("ModelParaphraser needs a runner with a generate() method")
        self.runner = runner
        self.max_new_tokens = max_new_tokens
        self.chat = chat
        self.styles = tuple(styles)

    def prompt(self, item: Item, question: str, style: str) -> str:
        kind = "statement" if item.is_agree_scale else "question"
        return PROMPT.format(kind=kind, Kind=kind.capitalize(), style=style, text=question)

    def paraphrase(
        self, item: Item, spec: PromptSpec, n: int, rng: np.random.Generator
    ) -> list[Rewrite]:
        if n <= 0:
            return []
        picks = [int(i) for i in rng.permutation(len(self.styles))[:n]]
        texts = [self.prompt(item, spec.question, self.styles[i]) for i in picks]
        prompts: list[Any] = (
            [[{"role": "user", "content": t}] for t in texts] if self.chat else texts
        )
        outputs = self.runner.generate(prompts, self.max_new_tokens)
        original = _words_key(spec.question)
        out, seen = [], set()
        for i, result in zip(picks, outputs, strict=False):
            text = clean_output(str(getattr(result, "text", result) or ""))
            key = _words_key(text)
            if not text or key == original or key in seen:
                continue
            if not 0.3 <= len(text) / max(1, len(spec.question)) <= 3.0:
                continue
            if not keeps_meaning_markers(text, spec.question):
                continue  # the similarity check cannot see these change the meaning
            seen.add(key)
            out.append(Rewrite(question=text, how=f"model/style {i}"))
        return out
