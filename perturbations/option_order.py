"""option_order: show the options in another order.

Every item with two or more free options gets distinct non-identity permutations:
the reversal first, then the cyclic shifts (structured orders that recur across the
literature), then seeded random permutations.  Ordinal scales are shuffled too, as
Kamal et al. (2026) shuffle the options of survey items as well as of multiple-choice
items: option order is the family that moves their answers most.  A study that wants
an ordinal scale to stay a scale on screen sets ``shuffle_ordinal=False``: the scale is
then only reversed, one variant per item (so a prompt set of one answer, whose
agreement C_i is undefined; only the flip rate measures it).  The answer map sends
each displayed position to the canonical index of the option shown there.

Options that refer to others by position ("All of the above") keep their place;
items with an option that refers to others by label ("Both A and B") get no
variants (see :mod:`perturbations.references`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from perturbations.base import Candidate, Family, register
from perturbations.references import any_label_reference, pinned_positions
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec


def _reorder(spec: PromptSpec, item: Item, order: tuple[int, ...]) -> PromptSpec:
    return spec.with_(options=tuple(item.options[i] for i in order), order=order)


@register
class OptionOrder(Family):
    name = "option_order"

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        return {"shuffle_ordinal": True}

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
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

        identity = tuple(range(k))
        extra = {"pinned": sorted(pinned)} if pinned else {}
        yield _reorder(spec, item, order_of(free[::-1])), {"kind": "reversal", **extra}
        if item.scale == "ordinal" and not self.params["shuffle_ordinal"]:
            return
        m = len(free)
        for shift in (1, m - 1):
            yield (
                _reorder(spec, item, order_of(free[shift:] + free[:shift])),
                {"kind": "cyclic", "shift": shift, **extra},
            )
        while True:
            order = order_of([free[int(i)] for i in rng.permutation(m)])
            if order != identity:
                yield _reorder(spec, item, order), {"kind": "random", "order": list(order), **extra}
