"""label_substitution: rename the option labels and change how they are wrapped.

Label sets: upper- and lower-case Latin letters, Arabic digits, upper- and
lower-case Roman numerals, Greek letters, and Latin letters from P onwards.
Wrappers: ``A.``, ``(A)``, ``[A]``, ``A)``, ``A:``.  Each variant uses a label set
other than the original's, cycling through the sets in a seeded order so that a
handful of variants covers different sets.  The answer map sends a displayed
label to its position.  Items with an option that names other options by label
("Both A and B") get no variants: new labels would break that reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import numpy as np

from perturbations.base import Candidate, Family, register
from perturbations.references import any_label_reference
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec

_ROMAN = (
    ("m", 1000),
    ("cm", 900),
    ("d", 500),
    ("cd", 400),
    ("c", 100),
    ("xc", 90),
    ("l", 50),
    ("xl", 40),
    ("x", 10),
    ("ix", 9),
    ("v", 5),
    ("iv", 4),
    ("i", 1),
)
_GREEK = "αβγδεζηθικλμνξοπρστυφχψω"
_LATIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def roman(n: int) -> str:
    """Lower-case Roman numeral of ``n`` >= 1."""
    out = []
    for symbol, value in _ROMAN:
        while n >= value:
            out.append(symbol)
            n -= value
    return "".join(out)


def _letters(alphabet: str, start: int = 0) -> Callable[[int], tuple[str, ...] | None]:
    def make(k: int) -> tuple[str, ...] | None:
        return tuple(alphabet[start : start + k]) if start + k <= len(alphabet) else None

    return make


#: name -> function(K) giving K labels, or None when the set has too few symbols.
LABEL_SETS: dict[str, Callable[[int], tuple[str, ...] | None]] = {
    "upper": _letters(_LATIN),
    "lower": _letters(_LATIN.lower()),
    "digits": lambda k: tuple(str(i) for i in range(1, k + 1)),
    "roman_upper": lambda k: tuple(roman(i).upper() for i in range(1, k + 1)),
    "roman_lower": lambda k: tuple(roman(i) for i in range(1, k + 1)),
    "greek": _letters(_GREEK),
    "late_letters": _letters(_LATIN, start=_LATIN.index("P")),
}

WRAPPERS = ("{}.", "({})", "[{}]", "{})", "{}:")


def label_set_name(labels: tuple[str, ...]) -> str | None:
    """The name of the set ``labels`` come from, or None."""
    for name, make in LABEL_SETS.items():
        if make(len(labels)) == labels:
            return name
    return None


@register
class LabelSubstitution(Family):
    name = "label_substitution"

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        k = item.n_options
        if any_label_reference(item.options):
            return
        current = label_set_name(spec.labels)
        sets = [s for s in LABEL_SETS if s != current and LABEL_SETS[s](k) is not None]
        if not sets:
            return
        order = [sets[i] for i in rng.permutation(len(sets))]
        wrappers = [WRAPPERS[i] for i in rng.permutation(len(WRAPPERS))]
        # Pair sets and wrappers round-robin: every set appears before any repeats.
        for round_ in range(len(wrappers)):
            for j, set_name in enumerate(order):
                wrapper = wrappers[(j + round_) % len(wrappers)]
                labels = LABEL_SETS[set_name](k)
                assert labels is not None
                fmt = replace(spec.format, label_wrapper=wrapper)
                yield (
                    spec.with_(labels=labels, format=fmt),
                    {
                        "label_set": set_name,
                        "wrapper": wrapper.replace("{}", labels[0]),
                    },
                )
