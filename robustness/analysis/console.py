"""The compact console summary that ``robustness analyze`` prints (rich).

Every piece of text from the table (model, dataset and category names, notes, the formula)
goes through :func:`robustness.core.text_safety.for_console` (control characters and terminal
escapes stripped, one line, rich markup escaped) before it is printed.
Printing is plumbing, outside the statistics convention: the numbers printed are the
tables of :func:`analyses.analyze`, documented where they are computed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from robustness.analysis.number_text import fmt, fmt_dof, fmt_p
from robustness.core.text_safety import for_console

if TYPE_CHECKING:
    from robustness.analysis.result import AnalysisResult

__all__ = ["print_summary"]


def _plain(text: object) -> str:
    return for_console(text, 200)


def _wald(con: Any, title: str, w2: Any, w3: Any) -> None:
    from rich.table import Table

    if w2 is None or not len(w2):
        return
    w = Table(title=title, title_justify="left")
    for col in ("term", "dof", "chi2 II", "p II", "chi2 III", "p III"):
        w.add_column(col, justify="left" if col == "term" else "right")
    ii = w2.set_index("term")
    iii = w3.set_index("term") if w3 is not None and len(w3) else None
    for term in ii.index:
        has3 = iii is not None and term in iii.index
        w.add_row(
            _plain(term),
            fmt_dof(ii.loc[term, dof_column(ii)]),
            fmt(ii.loc[term, "chi2"], 2),
            fmt_p(ii.loc[term, "p_value"]),
            fmt(iii.loc[term, "chi2"], 2) if has3 else "-",  # type: ignore[union-attr]
            fmt_p(iii.loc[term, "p_value"]) if has3 else "-",  # type: ignore[union-attr]
        )
    con.print(w)


def dof_column(frame: Any) -> str:
    """The degrees-of-freedom column of a Wald table (``dof``; ``df`` in older tables)."""
    return "dof" if "dof" in frame.columns else "df"


def print_summary(res: AnalysisResult, console: Any = None) -> None:
    """Print the headline tables of an analysis: Table 2 per model, Wald tests, contrasts.

    Parameters
    ----------
    res
        The :class:`~robustness.analysis.result.AnalysisResult` to summarise.
    console
        A ``rich.console.Console`` (default: a new one on standard output).

    Returns
    -------
    None
        The summary is printed.
    """
    from rich.console import Console
    from rich.table import Table

    con = console or Console()
    con.print(
        f"[bold]robustness analyze[/bold]: {res.n_rows} rows, {res.n_models} model(s), "
        f"{res.n_items} item(s); {res.n_invalid} invalid row(s) excluded"
    )
    if res.budget_headline:  # the headline's sentence; the notes do not repeat it
        con.print(_plain(res.budget_headline))
    tab2 = res.agreement_by_model_type_category
    t = Table(
        title="Mean agreement C_i per model (Kamal et al. eq. 1; 'all' = shared families)",
        title_justify="left",
    )
    for col in ("model", "category", "objective", "subjective", "gap (95% CI)"):
        t.add_column(col, justify="left" if col in ("model", "category") else "right")
    for r in tab2.itertuples():
        gap = (
            "-" if np.isnan(r.gap) else f"{fmt(r.gap)} ({fmt(r.gap_ci_low)}, {fmt(r.gap_ci_high)})"
        )
        t.add_row(_plain(r.model), _plain(r.category), fmt(r.objective), fmt(r.subjective), gap)
    con.print(t)
    _wald(
        con,
        f"Type model: {_plain(res.formula)} (Wald)",
        res.wald_type2,
        res.wald_type3,
    )
    _wald(
        con,
        "Dataset model (Kamal et al. Table 3): agree ~ model + dataset * category + "
        "model:category (Wald)",
        res.wald_dataset_type2,
        res.wald_dataset_type3,
    )
    c = res.contrasts
    if c is not None and len(c):
        ct = Table(title="Objective - subjective marginal agreement (Holm)", title_justify="left")
        for col in ("category", "difference", "95% CI", "p Holm", "reason"):
            ct.add_column(col, justify="left" if col in ("category", "reason") else "right")
        for r in c.itertuples():
            ct.add_row(
                _plain(r.category),
                fmt(r.difference),
                "-" if np.isnan(r.ci_low) else f"{fmt(r.ci_low)} .. {fmt(r.ci_high)}",
                fmt_p(r.p_holm),
                _plain(r.reason) if isinstance(r.reason, str) else "",
            )
        con.print(ct)
    for note in res.notes:
        con.print(f"[yellow]note:[/yellow] {_plain(note)}")
    con.print(f"tables written to {_plain(res.out_dir / 'tables')}")
