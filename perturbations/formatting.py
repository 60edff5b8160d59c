"""formatting: plausible prompt formats after FormatSpread (Sclar et al., 2024).

The format space is the product of these dimensions (FormatSpread's grammar of
descriptors, separators, casing, spacing and enumeration, plus option layout and
where the instruction sits):

========================  =============================================================
question descriptor       Question, Q, Query, Problem, none   (statements: Statement,
                          Claim, Proposition, Opinion, none)
options descriptor        Options, Choices, Answer options, none
answer descriptor (cue)   Answer, Response, Your answer, Reply
casing of descriptors     title, upper, lower
descriptor separator      ": ", " - ", ":: ", ":\\n", " = "
label wrapper             A.  (A)  [A]  A)  A:
label separator           one space, two spaces, tab
option layout             one option per line, inline
inline separator          "; ", " | ", "   "   (inline layout only)
block separator           one newline, a blank line
instruction position      before the data, after it
========================  =============================================================

:func:`format_space` exposes the space so a search (``analyses.thompson_search``)
can enumerate or sample it; the family samples ``n`` formats other than the
original uniformly from it.  Formats are drawn from a generator seeded by the
study seed alone (``same_for_all_items``), so ``formatting/i`` is the same format
for every item, as FormatSpread's accuracy-per-format needs; ``format_index``
names it in the space.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from perturbations.base import Candidate, Family, register
from perturbations.label_substitution import WRAPPERS
from robustness.core.items import Item
from robustness.core.prompts import CASINGS, LAYOUTS, POSITIONS, Format, PromptSpec

QUESTION_DESCRIPTORS = ("Question", "Q", "Query", "Problem", "")
STATEMENT_DESCRIPTORS = ("Statement", "Claim", "Proposition", "Opinion", "")
OPTIONS_DESCRIPTORS = ("Options", "Choices", "Answer options", "")
ANSWER_DESCRIPTORS = ("Answer", "Response", "Your answer", "Reply")
DESCRIPTOR_SEPARATORS = (": ", " - ", ":: ", ":\n", " = ")
LABEL_WRAPPERS = WRAPPERS
LABEL_SEPARATORS = (" ", "  ", "\t")
INLINE_SEPARATORS = ("; ", " | ", "   ")
BLOCK_SEPARATORS = ("\n", "\n\n")
INSTRUCTION_POSITIONS = POSITIONS


@dataclass(frozen=True)
class FormatSpace:
    """An indexable product of format dimensions: ``space[i]`` is the i-th :class:`Format`."""

    dimensions: tuple[tuple[str, tuple[str, ...]], ...]

    def __len__(self) -> int:
        size = 1
        for _, values in self.dimensions:
            size *= len(values)
        return size

    def __getitem__(self, index: int) -> Format:
        if not 0 <= index < len(self):
            raise IndexError(index)
        chosen: dict[str, Any] = {}
        for name, values in reversed(self.dimensions):
            index, r = divmod(index, len(values))
            chosen[name] = values[r]
        if chosen["option_layout"] == "lines":
            chosen["inline_separator"] = INLINE_SEPARATORS[0]
        return Format(**chosen)

    def __iter__(self) -> Iterator[Format]:
        seen: set[Format] = set()
        for i in range(len(self)):
            fmt = self[i]
            if fmt not in seen:  # inline separators collapse under the lines layout
                seen.add(fmt)
                yield fmt

    def sample(self, rng: np.random.Generator, size: int) -> list[Format]:
        """``size`` formats drawn uniformly with replacement."""
        return [self[int(i)] for i in rng.integers(0, len(self), size=size)]


def format_space(statement: bool = False) -> FormatSpace:
    """The format space for questions (``statement=False``) or agree-scale statements."""
    dims: Sequence[tuple[str, tuple[str, ...]]] = (
        ("question_descriptor", STATEMENT_DESCRIPTORS if statement else QUESTION_DESCRIPTORS),
        ("options_descriptor", OPTIONS_DESCRIPTORS),
        ("answer_descriptor", ANSWER_DESCRIPTORS),
        ("casing", CASINGS),
        ("descriptor_separator", DESCRIPTOR_SEPARATORS),
        ("label_wrapper", LABEL_WRAPPERS),
        ("label_separator", LABEL_SEPARATORS),
        ("option_layout", LAYOUTS),
        ("inline_separator", INLINE_SEPARATORS),
        ("block_separator", BLOCK_SEPARATORS),
        ("instruction_position", INSTRUCTION_POSITIONS),
    )
    return FormatSpace(tuple(dims))


def enumerate_formats(statement: bool = False) -> list[Format]:
    """Every distinct format of the space, in a fixed order."""
    return list(format_space(statement))


def format_diff(base: Format, other: Format) -> dict[str, str]:
    """The dimensions where ``other`` differs from ``base``, with ``other``'s values."""
    a, b = base.as_dict(), other.as_dict()
    return {k: v for k, v in b.items() if a[k] != v}


@register
class Formatting(Family):
    name = "formatting"
    same_for_all_items = True

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        space = format_space(statement=item.is_agree_scale)
        while True:
            index = int(rng.integers(0, len(space)))
            fmt = space[index]
            if fmt != spec.format:
                yield (
                    spec.with_(format=fmt),
                    {"format_index": index, "format": format_diff(spec.format, fmt)},
                )
