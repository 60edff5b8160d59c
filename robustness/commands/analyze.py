"""``robustness analyze``: any long table in; tables, figures and the report out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from robustness.table import read_metadata, read_table


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
) -> tuple[Any, dict[str, Path]]:
    """Run every analysis on a Parquet/CSV table and write the report; return both.

    The study's families (from the table's metadata) are listed in every table, those
    without a variant included; ``compare`` names a published study (``kamal2026``) whose
    figures the report puts beside the run's.
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
    )
    paths: dict[str, Path] = {}
    if report:
        paths = write_report(result, out, meta, compare=compare)
        console.print(f"report: {escape(str(paths['html']))} and {escape(str(paths['md']))}")
    return result, paths
