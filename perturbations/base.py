"""The interface every perturbation family implements and the registry.

A family changes one part of a prompt spec and keeps its meaning.  It yields
candidate specs from a ``numpy.random.Generator``; :meth:`Family.perturb` keeps
the first ``n`` whose rendered text differs from the original and from each
other.  The generator is seeded from (study seed, dataset, item id, family), so
adding an item or a family never changes another's variants.  The generators live in
:mod:`robustness.core.seeding` and the family names in :mod:`robustness.core.names`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from robustness.core.errors import StudyError
from robustness.core.names import FAMILY_ORDER
from robustness.core.seeding import family_rng, study_rng

if TYPE_CHECKING:
    from robustness.core.items import Item
    from robustness.core.prompts import PromptSpec

__all__ = ["REGISTRY", "Candidate", "Family", "make_family", "register", "rng_for"]

Candidate = tuple["PromptSpec", dict[str, Any]]

REGISTRY: dict[str, type[Family]] = {}


def register(cls: type[Family]) -> type[Family]:
    """Class decorator: make a family available by its ``name``."""
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise StudyError(f"a family named {cls.name!r} is already registered")
    REGISTRY[cls.name] = cls
    return cls


def rng_for(seed: int, item: Item, family: Family) -> np.random.Generator:
    """The generator :func:`robustness.perturb` passes to ``family`` for ``item``."""
    if family.same_for_all_items:
        return study_rng(seed, family.name)
    return family_rng(seed, item, family.name)


class Family(ABC):
    """A perturbation family: subclasses set ``name`` and implement :meth:`candidates`."""

    name: ClassVar[str]
    #: Draw from a generator seeded by (seed, family) alone, so that variant i is the same
    #: change for every item (FormatSpread compares formats across a whole dataset).
    same_for_all_items: ClassVar[bool] = False
    #: Give up after this many candidates per requested variant (random families).
    max_attempts_per_variant: ClassVar[int] = 40

    def __init__(self, **params: Any) -> None:
        unknown = set(params) - set(self.parameters())
        if unknown:
            raise StudyError(
                f"family {self.name!r} has no parameter(s) {', '.join(sorted(unknown))}; "
                f"it takes {', '.join(sorted(self.parameters())) or 'none'}"
            )
        self.params = {**self.parameters(), **params}

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        """Parameter names and their defaults."""
        return {}

    @abstractmethod
    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        """Yield perturbed specs with the JSON-able parameters that made each."""

    def planned(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, n: int
    ) -> Iterator[Candidate]:
        """The candidates for a request of ``n`` variants; a family whose design depends
        on ``n`` (option order's balanced schedule) overrides this, the rest do not."""
        return self.candidates(spec, item, rng)

    def perturb(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, n: int
    ) -> list[Candidate]:
        """Up to ``n`` candidates whose rendered prompts differ from ``spec`` and each other."""
        seen = {spec.render()}
        out: list[Candidate] = []
        budget = max(1, n) * self.max_attempts_per_variant
        for attempt, (candidate, params) in enumerate(self.planned(spec, item, rng, n)):
            if len(out) >= n or attempt >= budget:
                break
            text = candidate.render()
            if text in seen:
                continue
            seen.add(text)
            out.append((candidate, params))
        return out


def make_family(name: str, **params: Any) -> Family:
    """Instantiate a registered family by name."""
    import perturbations  # noqa: F401  (registers the built-in families)

    try:
        cls = REGISTRY[name]
    except KeyError:
        raise StudyError(
            f"unknown perturbation family {name!r}; known: {', '.join(FAMILY_ORDER)}"
        ) from None
    return cls(**params)
