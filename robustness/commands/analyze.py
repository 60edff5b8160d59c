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
    from robustness.analysis.pipeline import analyze
    from robustness.report import write_report

    console = console or Console()
    path = Path(table_path)
    table = read_table(path)
    meta = read_metadata(path) if path.suffix.lower() in (".parquet", ".pq") else {}
    if meta.get("budget") is not None:  # a budgeted run's design (robustness.budget)
        table.attrs["budget"] = meta["budget"]
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
    paths: dict[str, Path] = {}
    if report:
        paths = write_report(result, out, meta, compare=compare)
        html, md = (for_console(paths[k], None) for k in ("html", "md"))
        console.print(f"report: {html} and {md}")
    return result, paths
