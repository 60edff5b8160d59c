"""option_order: show the options in another order.

Nominal items get distinct non-identity permutations: the reversal and the
cyclic shifts first (structured orders that recur across the literature), then
random permutations.  Ordinal scales are reversed only (a shuffled agree scale
is no longer a scale); full shuffles of ordinal scales are opt-in
(``shuffle_ordinal=True``).  The answer map sends each displayed position to the
canonical index of the option shown there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from perturbations.base import Candidate, Family, register
from robustness.items import Item
from robustness.prompts import PromptSpec


def _reorder(spec: PromptSpec, item: Item, order: tuple[int, ...]) -> PromptSpec:
    return spec.with_(options=tuple(item.options[i] for i in order), order=order)


@register
class OptionOrder(Family):
    name = "option_order"

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        return {"shuffle_ordinal": False}

    def candidates(self, spec: PromptSpec, item: Item, rng: np.random.Generator) -> Iterator[
            Candidate]:
        k = item.n_options
        identity = tuple(range(k))
        yield _reorder(spec, item, identity[::-1]), {"kind": "reversal"}
        if item.scale == "ordinal" and not self.params["shuffle_ordinal"]:
            return
        for shift in (1, k - 1):
            order = identity[shift:] + identity[:shift]
            yield _reorder(spec, item, order), {"kind": "cyclic", "shift": shift}
        while True:
            order = tuple(int(i) for i in rng.permutation(k))
            if order != identity:
                yield _reorder(spec, item, order), {"kind": "random", "order": list(order)}
