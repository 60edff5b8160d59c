"""Turn items into variants: the original prompt plus n variants per family."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from perturbations.base import Family, make_family, rng_for
from robustness.core.errors import StudyError
from robustness.core.items import Item
from robustness.core.names import FAMILY_ORDER
from robustness.core.prompts import PromptSpec, default_spec
from robustness.core.variants import ORIGINAL, Variant

#: Most variants per family and item (study files share the bound: robustness.study).
MAX_VARIANTS = 1000


def resolve_families(families: str | Iterable[str]) -> tuple[str, ...]:
    """``"all"`` (every family, canonical order), a comma-separated string or a list (the
    order given, duplicates and ``original`` dropped) -> family names."""
    if isinstance(families, str):
        if families.strip() == "all":
            return FAMILY_ORDER
        families = [f.strip() for f in families.split(",") if f.strip()]
    names = list(dict.fromkeys(families))
    unknown = [f for f in names if f not in FAMILY_ORDER and f != ORIGINAL]
    if unknown:
        raise StudyError(
            f"unknown perturbation family {unknown[0]!r}; known: {', '.join(FAMILY_ORDER)}"
        )
    return tuple(f for f in names if f != ORIGINAL)


def perturb(
    items: Sequence[Item],
    families: str | Iterable[str] = "all",
    n: int = 5,
    seed: int = 0,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    family_objects: Mapping[str, Family] | None = None,
    base: Mapping[tuple[str, str], PromptSpec] | None = None,
) -> list[Variant]:
    """The original variant and up to ``n`` variants of each family for every item.

    Parameters
    ----------
    items
        The items, in the order their variants should come out.
    families
        ``"all"``, a comma-separated string or a list of family names.
    n
        Variants per family and item (fewer where a family has fewer distinct ones).
    seed
        Study seed; each (seed, item, family) gets its own generator, so a subset of
        items gets exactly the variants it gets in the full set.
    options
        Parameters per family, e.g. ``{"spelling_noise": {"rate": 0.2}}``.
    family_objects
        Ready-made family instances (e.g. a paraphrase family with a model paraphraser).
    base
        Base specs by (dataset, item_id), e.g. with few-shot exemplars; default
        :func:`default_spec`.

    Examples
    --------
    >>> import robustness as rb
    >>> items = rb.demo_items()[:2]
    >>> vs = rb.perturb(items, families="option_order,framing", n=3, seed=0)
    >>> [v.category for v in vs if v.item_id == items[0].item_id]
    ['original', 'option_order', 'option_order', 'option_order', 'framing', 'framing', 'framing']
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_VARIANTS:
        raise StudyError(f"n must be a whole number from 0 to {MAX_VARIANTS:,}, got {n!r}.")
    names = resolve_families(families)
    options = options or {}
    unused = sorted(set(options) - set(names))
    if unused:
        raise StudyError(
            f"parameters were given for {unused[0]!r}, which is not among the "
            f"families run ({', '.join(names) or 'none'})"
        )
    objects = dict(family_objects or {})
    for name in names:
        if name not in objects:
            objects[name] = make_family(name, **options.get(name, {}))
    out: list[Variant] = []
    for item in items:
        spec = (base or {}).get(item.key) or default_spec(item)
        out.append(Variant(item, ORIGINAL, f"{ORIGINAL}/0", spec, {}))
        for name in names:
            rng = rng_for(seed, item, objects[name])
            for i, (vspec, params) in enumerate(objects[name].perturb(spec, item, rng, n)):
                out.append(Variant(item, name, f"{name}/{i}", vspec, params))
    return out
