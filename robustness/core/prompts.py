"""Prompts as structure: :class:`PromptSpec` and its :class:`Format`.

A spec holds the instruction, the question, the displayed options and labels,
the displayed-position -> canonical-index ``order``, the format and the
polarity; ``render()`` turns it into text and ``messages()`` into chat messages.
Perturbation families change one part of a spec and leave the rest alone, so
every variant's answer can be mapped back to a canonical option.

Rendered layout (``instruction_position="before"``, the default)::

    <instruction>
    <Question descriptor><sep><question>
    <Options descriptor><sep>
    <wrapped label><label sep><option>      (one per line, or inline)
    <Answer descriptor><sep, right-stripped>     <- the answer cue
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from robustness.core.errors import ItemError, StudyError
from robustness.core.items import Item

CASINGS = ("title", "upper", "lower")
LAYOUTS = ("lines", "inline")
POSITIONS = ("before", "after")

#: Default instructions; they say "label", never "letter", so any label set fits them.
INSTRUCTION_NOMINAL = (
    "The following is a multiple-choice question. Reply with the label of the correct option only."
)
INSTRUCTION_AGREE = (
    "Read the statement and say how much you agree with it. "
    "Reply with the label of one option only."
)
INSTRUCTION_ORDINAL = "Answer the question below. Reply with the label of one option only."
INSTRUCTION_OPINION = (
    "Choose the option that best matches your view. Reply with the label of one option only."
)

UPPER_LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass(frozen=True)
class Format:
    """How the parts of a prompt are laid out (the FormatSpread grammar's dimensions).

    Descriptors may be empty (then the part has no header).  ``label_wrapper`` is a
    template with one ``{}`` for the label, e.g. ``"({})"`` gives ``(A)``.
    """

    question_descriptor: str = "Question"
    options_descriptor: str = "Options"
    answer_descriptor: str = "Answer"
    casing: str = "title"
    descriptor_separator: str = ": "
    label_wrapper: str = "{}."
    label_separator: str = " "
    option_layout: str = "lines"
    inline_separator: str = "; "
    block_separator: str = "\n"
    instruction_position: str = "before"

    def __post_init__(self) -> None:
        where = "prompt format"
        if self.casing not in CASINGS:
            raise StudyError(f"{where}: casing {self.casing!r} is not one of {CASINGS}.")
        if self.option_layout not in LAYOUTS:
            raise StudyError(
                f"{where}: option_layout {self.option_layout!r} is not one of {LAYOUTS}."
            )
        if self.instruction_position not in POSITIONS:
            raise StudyError(f"{where}: instruction_position must be one of {POSITIONS}.")
        if self.label_wrapper.count("{}") != 1:
            raise StudyError(
                f"{where}: label_wrapper {self.label_wrapper!r} needs exactly one '{{}}'."
            )
        if not self.answer_descriptor.strip():
            raise StudyError(
                f"{where}: answer_descriptor must not be empty (it is the answer cue)."
            )

    def cased(self, descriptor: str) -> str:
        if self.casing == "upper":
            return descriptor.upper()
        if self.casing == "lower":
            return descriptor.lower()
        return descriptor[:1].upper() + descriptor[1:]

    def wrap(self, label: str) -> str:
        return self.label_wrapper.replace("{}", label)

    def header(self, descriptor: str, text: str) -> str:
        if not descriptor:
            return text
        return self.cased(descriptor) + self.descriptor_separator + text

    def cue(self) -> str:
        return (self.cased(self.answer_descriptor) + self.descriptor_separator).rstrip()

    def options_block(self, labels: Sequence[str], options: Sequence[str]) -> str:
        lines = [
            self.wrap(lab) + self.label_separator + opt
            for lab, opt in zip(labels, options, strict=True)
        ]
        if self.option_layout == "inline":
            body = self.inline_separator.join(lines)
            return self.header(self.options_descriptor, body)
        if not self.options_descriptor:
            return "\n".join(lines)
        head = (self.cased(self.options_descriptor) + self.descriptor_separator).rstrip()
        return "\n".join([head, *lines])

    def as_dict(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Exemplar:
    """A solved few-shot example, shown in canonical option order with its gold label."""

    question: str
    options: tuple[str, ...]
    answer: int


@dataclass(frozen=True)
class PromptSpec:
    """A prompt as structure.

    ``options[i]`` is shown with ``labels[i]`` and is canonical option ``order[i]``.
    ``negated`` marks a logically negated statement: for an ordinal scale the answer
    then maps to the reversed scale point.
    """

    instruction: str
    question: str
    options: tuple[str, ...]
    labels: tuple[str, ...]
    order: tuple[int, ...]
    format: Format = field(default_factory=Format)
    exemplars: tuple[Exemplar, ...] = ()
    negated: bool = False
    system: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))
        object.__setattr__(self, "labels", tuple(self.labels))
        object.__setattr__(self, "order", tuple(int(i) for i in self.order))
        k = len(self.options)
        if len(self.labels) != k or len(self.order) != k:
            raise StudyError("prompt spec: options, labels and order must have the same length")
        if sorted(self.order) != list(range(k)):
            raise StudyError(f"prompt spec: order {self.order} is not a permutation of 0..{k - 1}")
        if len(set(self.labels)) != k:
            raise StudyError(f"prompt spec: labels {self.labels} are not unique")

    # -- text ----------------------------------------------------------------------------

    def body(self) -> str:
        """Instruction, question and options, without the answer cue."""
        f = self.format
        data = [
            f.header(f.question_descriptor, self.question),
            f.options_block(self.labels, self.options),
        ]
        parts = (
            [self.instruction, *data]
            if f.instruction_position == "before"
            else [*data, self.instruction]
        )
        return f.block_separator.join(p for p in parts if p)

    def _exemplar_text(self, ex: Exemplar) -> tuple[str, str]:
        f = self.format
        labels = self.labels[: len(ex.options)]
        text = f.block_separator.join(
            [f.header(f.question_descriptor, ex.question), f.options_block(labels, ex.options)]
        )
        return text, labels[ex.answer]

    def render(self) -> str:
        """The prompt as one text, ending with the answer cue (e.g. ``Answer:``)."""
        f = self.format
        shots = []
        for ex in self.exemplars:
            text, label = self._exemplar_text(ex)
            shots.append(text + f.block_separator + f.cue() + " " + label)
        main = self.body() + f.block_separator + f.cue()
        parts = ([self.system] if self.system else []) + shots + [main]
        return "\n\n".join(parts)

    def messages(self) -> list[dict[str, str]]:
        """Chat messages: exemplars as user/assistant turns, then the question.

        The last user message is the rendered prompt itself, answer cue included, so every
        format dimension reaches a chat model too; with no exemplars and no system text it
        equals :meth:`render`.  The instruction is stated once, in that last message.
        """
        f = self.format
        msgs: list[dict[str, str]] = []
        if self.system:
            msgs.append({"role": "system", "content": self.system})
        for ex in self.exemplars:
            text, label = self._exemplar_text(ex)
            msgs.append({"role": "user", "content": text + f.block_separator + f.cue()})
            msgs.append({"role": "assistant", "content": label})
        msgs.append({"role": "user", "content": self.body() + f.block_separator + f.cue()})
        return msgs

    def sha(self, chat: bool = False) -> str:
        """SHA-256 of what the model is sent: the rendered text, or the chat messages."""
        if chat:
            data = json.dumps(self.messages(), sort_keys=True, ensure_ascii=False)
            return hashlib.sha256(data.encode()).hexdigest()
        return hashlib.sha256(self.render().encode()).hexdigest()

    def with_(self, **changes: Any) -> PromptSpec:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return replace(self, **changes)


def task_kind(item: Item) -> str:
    """What the item asks for, which decides how instructions word the task.

    ``"nominal"``: an objective multiple-choice question (a correct option exists);
    ``"opinion"``: a subjective item with unordered options (no option is "correct");
    ``"agree"``: an agree/disagree statement; ``"ordinal"``: any other ordered scale.
    """
    if item.scale == "nominal":
        return "nominal" if item.dataset_type == "objective" else "opinion"
    return "agree" if item.is_agree_scale else "ordinal"


def default_instruction(item: Item) -> str:
    return {
        "nominal": INSTRUCTION_NOMINAL,
        "opinion": INSTRUCTION_OPINION,
        "agree": INSTRUCTION_AGREE,
        "ordinal": INSTRUCTION_ORDINAL,
    }[task_kind(item)]


def default_format(item: Item) -> Format:
    descriptor = "Statement" if item.is_agree_scale else "Question"
    return Format(question_descriptor=descriptor)


def default_spec(item: Item, exemplars: Sequence[Exemplar] = ()) -> PromptSpec:
    """The unperturbed prompt of an item: labels A, B, C ..., canonical order, default format."""
    k = item.n_options
    if k > len(UPPER_LETTERS):
        raise ItemError(
            f"item {item.item_id!r} of {item.dataset!r} has {k} options; at most 26 are supported."
        )
    return PromptSpec(
        instruction=default_instruction(item),
        question=item.question,
        options=item.options,
        labels=UPPER_LETTERS[:k],
        order=tuple(range(k)),
        format=default_format(item),
        exemplars=tuple(exemplars),
    )
