"""``robustness analyze``: any long table in; tables, figures and the report out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from robustness.core.table import read_metadata, read_table
from robustness.core.text_safety import for_console


def analyze_table(
    table_path: str | Path,
    out: str | Path,
    *,
    formula: str | None = None,
    cluster: str = "item",
    report: bool = True,
    console: Console | None = None,
    compare: str | None = None,
    min_items: int = 10,
    n_boot: int = 2000,
) -> tuple[Any, dict[str, Path]]:
    """Run every analysis on a Parquet/CSV table and write the report; return both.

    The study's families (from the table's metadata) are listed in every table, those
    without a variant included; ``compare`` names a published study (``kamal2026``) whose
    figures the report puts beside the run's; ``n_boot`` is the number of item-bootstrap
    replicates.
    """
    from analyses.pipeline import analyze
    from robustness.report import write_report

    console = console or Console()
    path = Path(table_path)
    table = read_table(path)
    meta = read_metadata(path) if path.suffix.lower() in (".parquet", ".pq") else {}
    if compare is not None:
        from robustness.report.paper import load_paper

        load_paper(compare)  # an unknown study stops before the analysis runs
    families = (meta.get("study") or {}).get("families") or None
    result = analyze(
        table,
        out,
        formula=formula,
        cluster=cluster,
        console=console,
        families=families,
        min_items=min_items,
        n_boot=n_boot,
    )
    multi = _write_multi_prompt(table, Path(out), n_boot)
    if multi is not None:  # the report's multi-prompt section reads it from the tables
        result.tables["multi_prompt"] = multi
    paths: dict[str, Path] = {}
    if report:
        paths = write_report(result, out, meta, compare=compare)
        html, md = (for_console(paths[k], None) for k in ("html", "md"))
        console.print(f"report: {html} and {md}")
    return result, paths


def _write_multi_prompt(table: Any, out: Path, n_boot: int) -> Any:
    """``tables/multi_prompt.csv`` (:func:`analyses.multi_prompt`) when items have a gold;
    the table written, or None."""
    import analyses as an
    from robustness.core.table import write_csv

    has_gold = "gold" in table.columns and table["gold"].notna().any()
    if not has_gold and "correct" not in table.columns:
        return None
    frame = an.multi_prompt(table, n_boot=n_boot)
    write_csv(frame, out / "tables" / "multi_prompt.csv")
    return frame
