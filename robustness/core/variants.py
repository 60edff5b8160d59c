"""Variants: a prompt spec for one item, with the map from its labels to canonical answers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from robustness.core.items import Item
from robustness.core.names import ORIGINAL as ORIGINAL  # re-exported: imported from here
from robustness.core.prompts import PromptSpec


@dataclass(frozen=True)
class Variant:
    """One prompt of one item.

    ``to_canonical`` undoes label substitution (label -> displayed position), option
    order (position -> canonical index) and negation (for an ordinal scale a
    negated statement reverses the scale: point k means point K-1-k).
    """

    item: Item
    category: str
    variant_id: str
    spec: PromptSpec
    params: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def item_id(self) -> str:
        return self.item.item_id

    def to_canonical(self, label: str | None) -> int | None:
        """The canonical option index that displayed ``label`` stands for, or None."""
        if label is None or label not in self.spec.labels:
            return None
        return self.canonical_at(self.spec.labels.index(label))

    def canonical_at(self, position: int) -> int:
        """The canonical option index shown at displayed ``position``."""
        canonical = self.spec.order[position]
        if self.spec.negated and self.item.scale == "ordinal":
            canonical = self.item.n_options - 1 - canonical
        return canonical

    @property
    def answer_map(self) -> dict[str, int]:
        """Displayed label -> canonical option index (negation already applied)."""
        return {lab: self.canonical_at(i) for i, lab in enumerate(self.spec.labels)}

    def prompt(self) -> str:
        return self.spec.render()

    def to_record(self) -> dict[str, Any]:
        """The JSON-able record ``robustness perturb`` writes, one per variant."""
        return {
            "item_id": self.item.item_id,
            "dataset": self.item.dataset,
            "dataset_type": self.item.dataset_type,
            "scale": self.item.scale,
            "category": self.category,
            "variant_id": self.variant_id,
            "prompt": self.spec.render(),
            "labels": list(self.spec.labels),
            "options": list(self.spec.options),
            "answer_map": self.answer_map,
            "negated": self.spec.negated,
            "gold": self.item.answer,
            "params": dict(self.params),
            "prompt_sha": self.spec.sha(),
        }

    def params_json(self) -> str:
        return json.dumps(dict(self.params), sort_keys=True, ensure_ascii=False)
