"""``robustness reparse``: re-read a table's generated answers with the current parser."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from robustness.reparse import ReparseResult, reparse
from robustness.table import read_metadata, read_table, write_csv, write_parquet

__all__ = ["reparse_table"]


def _clean(text: object, limit: int = 60) -> str:
    """One line of untrusted text for the terminal: no control characters, cut to `limit`."""
    out = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return escape(out if len(out) <= limit else out[: limit - 1] + "…")


def reparse_table(
    table_path: str | Path,
    out: str | Path,
    *,
    conflict: str = "ambiguous",
    examples: int = 3,
    console: Console | None = None,
) -> ReparseResult:
    """Re-read ``table_path``'s generate-mode rows, write the table to ``out``, print the changes.

    ``out`` ends in .parquet (the metadata of the old table is kept, with the parser
    version and conflict policy of the re-read added) or .csv. Returns the
    :class:`robustness.reparse.ReparseResult`.
    """
    console = console or Console(soft_wrap=True)
    path, out = Path(table_path), Path(out)
    if out.suffix.lower() not in (".parquet", ".csv"):
        from robustness.errors import TableError

        raise TableError(f"{out}: the new table must end in .parquet or .csv.")
    table = read_table(path, required=("mode", "raw_output", "answer", "valid"))
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
        console.print(f"  {rows:>7}  {escape(str(change))}")
        if examples:
            sample = result.changes[result.changes["change"] == change].head(examples)
            for raw in sample["raw_output"]:
                console.print(f"           [dim]{_clean(raw)!s}[/dim]")
    console.print(f"table: {escape(str(out))}")
    return result
