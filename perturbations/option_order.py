"""option_order: show the options in another order.

Three schedules, the parameter ``schedule``, each recorded in every variant's params:

``"balanced"`` (default)
    permutations seeded per item and balanced over the item's variants: each option is
    shown at each displayed position as evenly as the number of variants allows, and the
    original order is never repeated (:mod:`perturbations.balanced_orders`: Latin squares
    with seeded relabelling, the original prompt one more row when ``n = K - 1``).  A
    respondent that always picks one position gets no agreement from the schedule.
``"reversal"``
    the reversal only, one variant per item.
``"legacy"``
    the schedule before the balanced one: the reversal, the two cyclic shifts, then seeded
    random permutations.  With 4 options and 3 variants it puts one option at position B
    twice, so a model that always answers "B" agrees with itself on 2 of 3 variants.

Ordinal scales are shuffled too, as Kamal et al. (2026) shuffle the options of survey
items as well as of multiple-choice items.  A study that wants an ordinal scale to stay a
scale on screen sets ``shuffle_ordinal=False``: ordinal scales then get the reversal
only (params say ``"schedule": "reversal"``), one variant per item, so a prompt set of
one answer whose agreement C_i is undefined; only the flip rate measures it.  The answer
map sends each displayed position to the canonical index of the option shown there.

Options that refer to others by position ("All of the above") keep their place;
items with an option that refers to others by label ("Both A and B") get no
variants (see :mod:`perturbations.references`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from perturbations.balanced_orders import balanced_orders
from perturbations.base import Candidate, Family, register
from perturbations.references import any_label_reference, pinned_positions
from robustness.core.errors import StudyError
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec

__all__ = ["SCHEDULES", "SCHEDULE_TEXT", "OptionOrder"]

SCHEDULES = ("balanced", "reversal", "legacy")

#: What each schedule does, in the words the report's Method section uses.
SCHEDULE_TEXT = {
    "balanced": "permutations balanced over each item's variants, every option shown at "
    "each position as evenly as the number of variants allows (Latin squares)",
    "reversal": "the reversal only",
    "legacy": "the reversal, the two cyclic shifts, then seeded random permutations",
}


def _reorder(spec: PromptSpec, item: Item, order: tuple[int, ...]) -> PromptSpec:
    return spec.with_(options=tuple(item.options[i] for i in order), order=order)


@register
class OptionOrder(Family):
    name = "option_order"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.params["schedule"] not in SCHEDULES:
            raise StudyError(
                f"option_order: schedule must be one of {', '.join(SCHEDULES)}, "
                f"got {self.params['schedule']!r}."
            )

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        return {"shuffle_ordinal": True, "schedule": "balanced"}

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        return self.planned(spec, item, rng, 5)

    def planned(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, n: int
    ) -> Iterator[Candidate]:
        k = item.n_options
        if any_label_reference(item.options):
            return
        pinned = set(pinned_positions(item.options))
        free = [i for i in range(k) if i not in pinned]
        if len(free) < 2:
            return

        def order_of(moved: Sequence[int]) -> tuple[int, ...]:
            it = iter(moved)
            return tuple(i if i in pinned else next(it) for i in range(k))

        extra = {"pinned": sorted(pinned)} if pinned else {}
        schedule = self.params["schedule"]
        if item.scale == "ordinal" and not self.params["shuffle_ordinal"]:
            schedule = "reversal"
        if schedule == "balanced":
            for row in balanced_orders(len(free), n, rng):
                order = order_of([free[i] for i in row])
                yield (
                    _reorder(spec, item, order),
                    {"schedule": "balanced", "order": list(order), **extra},
                )
            return
        tag = {"schedule": schedule}
        yield _reorder(spec, item, order_of(free[::-1])), {**tag, "kind": "reversal", **extra}
        if schedule == "reversal":
            return
        yield from self._legacy_rest(spec, item, rng, free, order_of, {**tag, **extra})

    @staticmethod
    def _legacy_rest(
        spec: PromptSpec,
        item: Item,
        rng: np.random.Generator,
        free: list[int],
        order_of: Any,
        tag: dict[str, Any],
    ) -> Iterator[Candidate]:
        m = len(free)
        identity = tuple(range(item.n_options))
        for shift in (1, m - 1):
            yield (
                _reorder(spec, item, order_of(free[shift:] + free[:shift])),
                {**tag, "kind": "cyclic", "shift": shift},
            )
        while True:
            order = order_of([free[int(i)] for i in rng.permutation(m)])
            if order != identity:
                yield _reorder(spec, item, order), {**tag, "kind": "random", "order": list(order)}
