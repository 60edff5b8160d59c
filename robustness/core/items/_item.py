"""Items: the questions a study asks, in canonical form.

An :class:`Item` holds the option texts in canonical order and, for objective
items, the gold option's index.  Everything downstream (prompt specs, variants,
the long table) refers back to these canonical indices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from robustness.core.names import DATASET_TYPES, SCALES
from robustness.core.text_safety import shown

#: Most options an item may have: the default labels are the letters A-Z.
MAX_OPTIONS = 26
#: Longest question or option text accepted (characters); real items are far shorter, and
#: every later stage (perturbation, prompts, models, reports) costs at least linear time in it.
MAX_TEXT_CHARS = 100_000

#: Words that mark an agree/disagree response scale.
_AGREE_WORDS = ("agree", "disagree")


class ItemFieldError(ValueError):
    """An item field is wrong; the loader adds the file and line."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class Item:
    """One question with its options in canonical order.

    Attributes
    ----------
    item_id
        Identifier, unique within ``dataset``.
    dataset
        Name of the dataset the item belongs to.
    dataset_type
        ``"objective"`` (a gold answer exists) or ``"subjective"`` (an opinion or survey item).
    question
        The question or statement text.
    options
        Option texts in canonical order; for ordinal scales, in scale order.
    answer
        Gold option index for objective items, ``None`` for subjective ones.
    scale
        ``"nominal"`` for multiple choice, ``"ordinal"`` for agree scales and any
        other ordered response scale.
    meta
        Every other field of the source record, kept as it was.
    """

    item_id: str
    dataset: str
    dataset_type: str
    question: str
    options: tuple[str, ...]
    answer: int | None = None
    scale: str = "nominal"
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))
        check_item_fields(self)

    @property
    def n_options(self) -> int:
        return len(self.options)

    @property
    def key(self) -> tuple[str, str]:
        """(dataset, item_id): the item's identity across files."""
        return (self.dataset, self.item_id)

    @property
    def is_agree_scale(self) -> bool:
        """True for an ordinal scale whose options speak of agreeing (Likert agreement)."""
        return (
            self.scale == "ordinal"
            and all(
                any(w in o.lower() for w in _AGREE_WORDS) or _is_neutral(o) for o in self.options
            )
            and any("agree" in o.lower() for o in self.options)
        )

    def to_record(self) -> dict[str, Any]:
        """A JSON-able dict in the loaders' schema."""
        return {
            "item_id": self.item_id,
            "dataset": self.dataset,
            "dataset_type": self.dataset_type,
            "question": self.question,
            "options": list(self.options),
            "answer": self.answer,
            "scale": self.scale,
            "meta": dict(self.meta),
        }


def _is_neutral(option: str) -> bool:
    o = option.lower()
    return "neither" in o or "neutral" in o or "undecided" in o or "not sure" in o


def check_item_fields(item: Item) -> None:
    """Raise :class:`ItemFieldError` naming the first bad field of ``item``."""
    for name in ("item_id", "dataset"):
        value = getattr(item, name)
        if not isinstance(value, str) or not value.strip():
            raise ItemFieldError(name, f"must be a non-empty string, got {shown(value)}")
        _check_text(name, value, 1000)
    if item.dataset_type not in DATASET_TYPES:
        raise ItemFieldError(
            "dataset_type", f"{shown(item.dataset_type)} is not one of {', '.join(DATASET_TYPES)}"
        )
    if item.scale not in SCALES:
        raise ItemFieldError("scale", f"{shown(item.scale)} is not one of {', '.join(SCALES)}")
    if not isinstance(item.question, str) or not item.question.strip():
        raise ItemFieldError("question", "is empty")
    _check_text("question", item.question, MAX_TEXT_CHARS)
    _check_options(item.options)
    _check_answer(item.answer, item.dataset_type, len(item.options))


def _check_text(name: str, text: str, limit: int) -> None:
    if len(text) > limit:
        raise ItemFieldError(
            name, f"is {len(text):,} characters long; at most {limit:,} are accepted"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ItemFieldError(
            name,
            f"holds the lone surrogate {text[exc.start]!r} at character {exc.start + 1}, "
            "which is not a character (check the escapes in the file)",
        ) from None


def _check_options(options: Sequence[Any]) -> None:
    if len(options) < 2:
        raise ItemFieldError("options", f"needs at least two options, got {len(options)}")
    if len(options) > MAX_OPTIONS:
        raise ItemFieldError(
            "options",
            f"has {len(options)} options; at most {MAX_OPTIONS} (labels A-Z) are supported",
        )
    seen: dict[str, int] = {}
    for i, text in enumerate(options):
        if not isinstance(text, str):
            raise ItemFieldError("options", f"option {i} is {type(text).__name__}, not text")
        if not text.strip():
            raise ItemFieldError("options", f"option {i} is empty")
        _check_text("options", text, MAX_TEXT_CHARS)
        norm = " ".join(text.split()).casefold()
        if norm in seen:
            raise ItemFieldError(
                "options", f"options {seen[norm]} and {i} are the same text {shown(text)}"
            )
        seen[norm] = i


def _check_answer(answer: Any, dataset_type: str, k: int) -> None:
    if dataset_type == "objective":
        if answer is None:
            raise ItemFieldError("answer", "an objective item needs a gold answer index")
        if isinstance(answer, bool) or not isinstance(answer, int):
            raise ItemFieldError("answer", f"must be an option index, got {shown(answer)}")
        if not 0 <= answer < k:
            raise ItemFieldError(
                "answer", f"gold index {shown(answer)} is out of range for {k} options (0..{k - 1})"
            )
    elif answer is not None:
        raise ItemFieldError("answer", f"a subjective item has no gold answer, got {shown(answer)}")
