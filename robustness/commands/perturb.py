"""``robustness perturb``: items in, variants (JSON lines) and a summary out."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from robustness.core.errors import StudyError
from robustness.core.items import demo_items, load_items
from robustness.core.names import FAMILY_ORDER
from robustness.core.variants import ORIGINAL, Variant
from robustness.perturb import perturb, resolve_families


def write_variants(variants: Sequence[Variant], path: str | Path) -> Path:
    """One JSON object per line, keys in a fixed order: the same variants give the same bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for v in variants:
            fh.write(json.dumps(v.to_record(), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def summary_table(variants: Sequence[Variant]) -> Table:
    """Variants per family: how many, over how many items, how many per item."""
    counts = Counter(v.category for v in variants)
    items: dict[str, set[tuple[str, str]]] = {c: set() for c in counts}
    for v in variants:
        items[v.category].add(v.item.key)
    table = Table(title="variants per family")
    table.add_column("family")
    for col in ("variants", "items", "per item"):
        table.add_column(col, justify="right")
    for cat in (ORIGINAL, *FAMILY_ORDER):
        if cat in counts:
            table.add_row(
                cat, str(counts[cat]), str(len(items[cat])), f"{counts[cat] / len(items[cat]):.2f}"
            )
    return table


def run_perturb(
    paths: Sequence[str],
    out: str | None,
    families: str,
    n: int,
    seed: int,
    options: Mapping[str, Mapping[str, Any]],
) -> list[Variant]:
    items = load_items(*paths) if paths else demo_items()
    for path in paths if len(paths) > 1 else ():
        if not load_items(path):
            raise StudyError(f"{path}: the item file holds no items.")
    if not items:
        raise StudyError(f"{', '.join(map(str, paths))}: the item file holds no items.")
    resolve_families(families)  # fail on a typo before loading anything heavy
    variants = perturb(items, families=families, n=n, seed=seed, options=options)
    console = Console()
    console.print(summary_table(variants))
    if out:
        write_variants(variants, out)
        console.print(f"wrote {len(variants)} variants of {len(items)} items to {escape(str(out))}")
    return variants
