"""``robustness reparse``: re-read a table's generated answers with the current parser."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.markup import escape

from robustness.core.table import read_metadata, read_table, write_csv, write_parquet
from robustness.core.text_safety import for_console
from robustness.reparse import ReparseResult, display_json, reparse

__all__ = ["displays_from_study", "reparse_table"]


def displays_from_study(table: pd.DataFrame, study: str | Path) -> tuple[pd.DataFrame, int]:
    """Fill ``display`` where it is missing, from the variants the study file makes again.

    Variants are deterministic (same study file, same seed, same variants), so what a
    prompt showed can be rebuilt for a table written before the ``display`` column
    existed. A row gets a display only when its item and variant are found and, where the
    table keeps the rendered ``prompt``, it equals the variant's rendered prompt (so a
    changed item file or family cannot attach the wrong labels). Returns the table and
    the number of rows filled.
    """
    from robustness.run import study_items, study_variants
    from robustness.study import load_study

    config = load_study(study)
    variants = study_variants(config, study_items(config))
    by_key = {(v.item.dataset, v.item.item_id, v.variant_id): v for v in variants}
    out = table.copy()
    if "display" not in out.columns:
        out["display"] = None
    filled = 0
    cells = out["display"].astype(object).tolist()
    prompts = out["prompt"].tolist() if "prompt" in out.columns else [None] * len(out)
    keys = zip(out["dataset"], out["item_id"], out["variant_id"], strict=True)
    for i, (key, mode) in enumerate(zip(keys, out["mode"], strict=True)):
        if mode != "generate" or isinstance(cells[i], str):
            continue
        v = by_key.get(key)
        if v is None or (isinstance(prompts[i], str) and prompts[i] != v.spec.render()):
            continue
        canonical = [v.canonical_at(p) for p in range(len(v.spec.labels))]
        cells[i] = display_json(v.spec.labels, v.spec.options, canonical)
        filled += 1
    out["display"] = pd.Series(cells, index=out.index, dtype=object)
    return out, filled


def _clean(text: object, limit: int = 60) -> str:
    """One line of untrusted text for the terminal: no control characters, cut to `limit`."""
    return for_console(text, limit)


def reparse_table(
    table_path: str | Path,
    out: str | Path,
    *,
    conflict: str = "ambiguous",
    examples: int = 3,
    console: Console | None = None,
    study: str | Path | None = None,
) -> ReparseResult:
    """Re-read ``table_path``'s generate-mode rows, write the table to ``out``, print the changes.

    ``out`` ends in .parquet (the metadata of the old table is kept, with the parser
    version and conflict policy of the re-read added) or .csv. Returns the
    :class:`robustness.reparse.ReparseResult`.
    """
    console = console or Console(soft_wrap=True)
    path, out = Path(table_path), Path(out)
    if out.suffix.lower() not in (".parquet", ".csv"):
        from robustness.core.errors import TableError

        raise TableError(f"{out}: the new table must end in .parquet or .csv.")
    table = read_table(path, required=("mode", "raw_output", "answer", "valid"))
    if study is not None:
        table, rebuilt = displays_from_study(table, study)
        console.print(
            f"display rebuilt from {escape(str(study))} for {rebuilt} generate-mode rows "
            "(rows whose prompt differs from the study's are left without one)"
        )
    result = reparse(table, conflict=conflict)
    if out.suffix.lower() == ".csv":
        write_csv(result.table, out)
    else:
        meta = read_metadata(path) if path.suffix.lower() in (".parquet", ".pq") else {}
        meta["reparse"] = {
            "source": str(path),
            "parser_version": result.parser_version,
            "conflict": conflict,
        }
        write_parquet(result.table, out, meta)
    c = result.counts
    old = sorted({str(v) for v in table.get("parser_version", []) if isinstance(v, str)})
    console.print(
        f"reparse: {c['reread']} of {c['rows']} rows re-read with parser "
        f"{result.parser_version} (conflict = {conflict}; before: "
        f"{', '.join(old) if old else 'unrecorded'}); {c['changed']} changed answer or validity."
    )
    kept = [(k, c[k]) for k in ("other_mode", "model_error", "no_display") if c[k]]
    if kept:
        why = {
            "other_mode": "not generate mode",
            "model_error": "model error",
            "no_display": "no display column (written before it existed)",
        }
        console.print(
            "kept as they were: " + "; ".join(f"{n} rows ({why[k]})" for k, n in kept) + "."
        )
    for change, rows in zip(result.summary["change"], result.summary["rows"], strict=True):
        console.print(f"  {rows:>7}  {for_console(change)}")
        if examples:
            sample = result.changes[result.changes["change"] == change].head(examples)
            for raw in sample["raw_output"]:
                console.print(f"           [dim]{_clean(raw)!s}[/dim]")
    console.print(f"table: {escape(str(out))}")
    return result
