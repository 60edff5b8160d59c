"""The interface every perturbation family implements, the registry, and seeding.

A family changes one part of a prompt spec and keeps its meaning.  It yields
candidate specs from a ``numpy.random.Generator``; :meth:`Family.perturb` keeps
the first ``n`` whose rendered text differs from the original and from each
other.  The generator is seeded from (study seed, dataset, item id, family), so
adding an item or a family never changes another's variants.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:  # no runtime import: `import perturbations` must not need robustness first
    from robustness.items import Item
    from robustness.prompts import PromptSpec

Candidate = tuple["PromptSpec", dict[str, Any]]

#: The eight families, in the order tables and reports list them.
FAMILY_ORDER = (
    "option_order",
    "label_substitution",
    "spelling_noise",
    "lexical_substitution",
    "paraphrase",
    "formatting",
    "logical_equivalence",
    "framing",
)

REGISTRY: dict[str, type[Family]] = {}


def register(cls: type[Family]) -> type[Family]:
    """Class decorator: make a family available by its ``name``."""
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"a family named {cls.name!r} is already registered")
    REGISTRY[cls.name] = cls
    return cls


def _rng(seed: int, key: str) -> np.random.Generator:
    digest = hashlib.sha256(key.encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([int(seed), *words]))


def family_rng(seed: int, item: Item, family: str) -> np.random.Generator:
    """The generator for one (seed, item, family): independent of every other item and family.

    A family with ``same_for_all_items`` gets :func:`study_rng` instead.
    """
    return _rng(seed, f"{item.dataset}\x1f{item.item_id}\x1f{family}")


def study_rng(seed: int, family: str) -> np.random.Generator:
    """The generator of a family whose variants are the same for every item (one per call)."""
    return _rng(seed, f"\x1fstudy\x1f{family}")


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
            raise ValueError(
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

    def perturb(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, n: int
    ) -> list[Candidate]:
        """Up to ``n`` candidates whose rendered prompts differ from ``spec`` and each other."""
        seen = {spec.render()}
        out: list[Candidate] = []
        budget = max(1, n) * self.max_attempts_per_variant
        for attempt, (candidate, params) in enumerate(self.candidates(spec, item, rng)):
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
        raise ValueError(
            f"unknown perturbation family {name!r}; known: {', '.join(FAMILY_ORDER)}"
        ) from None
    return cls(**params)
