"""The planned study of a power analysis: datasets per type, items, variants and models.

:class:`Design` is the design :func:`analyses.power` simulates and
:mod:`analyses.power.solve` varies; :mod:`analyses.power.effects` makes its tables (and
re-exports it, so ``from analyses.power.effects import Design`` keeps working).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robustness.core.errors import StudyError

__all__ = ["Design"]


@dataclass(frozen=True)
class Design:
    """A planned study: ``datasets_per_type`` (objective, subjective) datasets of
    ``items_per_dataset`` items, ``variants_per_family`` variants of every category, and
    ``models`` models answering every prompt."""

    items_per_dataset: int = 12
    variants_per_family: int = 2
    models: int = 1
    datasets_per_type: tuple[int, int] = (2, 2)

    def __post_init__(self) -> None:
        for name in ("items_per_dataset", "variants_per_family", "models"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise StudyError(f"design: {name} must be a positive integer, not {value!r}.")
        d = tuple(self.datasets_per_type)
        if len(d) != 2 or any(not isinstance(k, (int, np.integer)) or k < 1 for k in d):
            raise StudyError(
                "design: datasets_per_type must be two positive integers (objective, "
                f"subjective), not {self.datasets_per_type!r}."
            )

    def with_items(self, n: int) -> Design:
        """The same design with ``n`` items per dataset."""
        return Design(int(n), self.variants_per_family, self.models, self.datasets_per_type)
