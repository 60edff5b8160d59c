"""A content oracle: answers a rendered prompt by finding the option text it wants.

The oracle never looks at ``spec.order`` or the answer map: it reads the rendered
prompt, finds the line (or inline segment) where the wanted option text follows
a wrapped label, and answers with that label.  The tests then check that the
variant's answer map brings the label back to the canonical option.
"""

from __future__ import annotations

import re

from robustness.core.variants import Variant


def _starts_segment(prompt: str, start: int, fmt) -> bool:
    before = prompt[:start]
    return start == 0 or before.endswith(("\n", fmt.inline_separator, fmt.descriptor_separator))


def _ends_segment(prompt: str, end: int, fmt) -> bool:
    rest = prompt[end:]
    return (
        rest == ""
        or rest.startswith("\n")
        or (fmt.option_layout == "inline" and rest.startswith(fmt.inline_separator))
    )


def labelled_occurrences(variant: Variant, text: str) -> list[str]:
    """The displayed labels that the prompt shows directly before option ``text``."""
    prompt, fmt = variant.prompt(), variant.spec.format
    found = []
    for label in variant.spec.labels:
        marker = fmt.wrap(label) + fmt.label_separator + text
        for m in re.finditer(re.escape(marker), prompt):
            if _starts_segment(prompt, m.start(), fmt) and _ends_segment(prompt, m.end(), fmt):
                found.append(label)
    return found


def oracle_answer(variant: Variant, wanted: int) -> str:
    """The label a content-reading respondent gives when it wants canonical option ``wanted``.

    For a negated statement on an ordinal scale it wants the reversed scale point:
    agreeing with "not S" is disagreeing with S.
    """
    item = variant.item
    point = wanted
    if variant.spec.negated and item.scale == "ordinal":
        point = item.n_options - 1 - wanted
    labels = labelled_occurrences(variant, item.options[point])
    assert len(labels) == 1, (
        f"{variant.variant_id} of {item.item_id}: option {item.options[point]!r} appears with "
        f"labels {labels} in\n{variant.prompt()}"
    )
    return labels[0]


def assert_round_trip(variant: Variant) -> None:
    """Every canonical option survives prompt -> oracle label -> answer map."""
    for k in range(variant.item.n_options):
        label = oracle_answer(variant, k)
        got = variant.to_canonical(label)
        assert got == k, (
            f"{variant.variant_id} of {variant.item.item_id}: wanted {k}, oracle said {label!r}, "
            f"answer map gave {got}"
        )
        assert variant.answer_map[label] == k


def assert_options_once(variant: Variant) -> None:
    """Each displayed option appears exactly once with its own label; labels are unique."""
    spec = variant.spec
    assert len(set(spec.labels)) == len(spec.labels)
    assert sorted(spec.order) == list(range(variant.item.n_options))
    assert sorted(spec.options) == sorted(variant.item.options)
    for label, text in zip(spec.labels, spec.options, strict=True):
        assert labelled_occurrences(variant, text) == [label], (variant.variant_id, text)
