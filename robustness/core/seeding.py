"""Seeded generators: one independent ``numpy.random.Generator`` per (seed, key).

A generator is seeded from the study seed and a SHA-256 digest of a key naming what it is for
(an item and a family, a family alone), so adding an item or a family never changes the draws
of another, and the same seed gives the same draws on every machine.

>>> from robustness.core.seeding import study_rng
>>> int(study_rng(0, "formatting").integers(1000)) == int(study_rng(0, "formatting").integers(1000))
True
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from robustness.core.items import Item

__all__ = ["family_rng", "keyed_rng", "study_rng"]


def keyed_rng(seed: int, key: str) -> np.random.Generator:
    """The generator for ``(seed, key)``: the first 128 bits of SHA-256(key) join the seed.

    Parameters
    ----------
    seed
        The study seed (any integer ``numpy.random.SeedSequence`` takes).
    key
        What the generator is for, e.g. ``"dataset\\x1fitem\\x1ffamily"``.

    Returns
    -------
    numpy.random.Generator
        A PCG64 generator whose stream depends on nothing but ``seed`` and ``key``.
    """
    digest = hashlib.sha256(key.encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([int(seed), *words]))


#: The name perturbations/base.py used before this module existed.
_rng = keyed_rng


def family_rng(seed: int, item: Item, family: str) -> np.random.Generator:
    """The generator for one (seed, item, family): independent of every other item and family.

    A family whose variants are the same for every item gets :func:`study_rng` instead.
    """
    return keyed_rng(seed, f"{item.dataset}\x1f{item.item_id}\x1f{family}")


def study_rng(seed: int, family: str) -> np.random.Generator:
    """The generator of a family whose variants are the same for every item (one per call)."""
    return keyed_rng(seed, f"\x1fstudy\x1f{family}")
