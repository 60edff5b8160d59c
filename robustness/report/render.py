"""Tables and text for HTML, Markdown and LaTeX, with untrusted text made safe.

Every string from items, prompts, model outputs, model and study names is data: it goes
through :mod:`robustness.core.text_safety` (control characters and terminal escape sequences
removed, then escaped for the format it is written in; this module has no escaping of its
own). Numbers are printed as a paper prints them (see
:mod:`robustness.analysis.number_text`): p-values as
"< 0.001" or in scientific notation, degrees of freedom as whole numbers.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from robustness.analysis.number_text import fmt, fmt_dof, fmt_p, is_missing
from robustness.core.text_safety import escape_html, escape_latex, escape_markdown, plain_text

__all__ = ["CELL_CHARS", "cell", "to_html", "to_latex", "to_markdown"]

#: Longest text shown in a table cell (a model's raw output, a prompt).
CELL_CHARS = 300
P_COLUMNS = frozenset({"p_value", "p_holm", "p_approx", "p_exact", "p_value_II", "p_value_III"})
DOF_COLUMNS = frozenset({"dof", "df", "dof_II", "dof_III", "df_II", "df_III"})


def cell(value: Any, column: str = "", digits: int = 3) -> str:
    """One table cell as text: numbers by their column's kind, text made plain."""
    if is_missing(value):
        return "-"
    if column in P_COLUMNS:
        return fmt_p(value)
    if column in DOF_COLUMNS:
        return fmt_dof(value)
    if column.startswith("df_denom"):  # F(q, G - p) is whole; HTZ's denominator is not
        x = float(value)
        return fmt_dof(x) if x == round(x) else f"{x:.1f}"
    return plain_text(value if isinstance(value, str) else fmt(value, digits), CELL_CHARS)


def to_latex(df: pd.DataFrame, caption: str = "") -> str:
    """A booktabs table; every cell is escaped for LaTeX."""
    cols = list(df.columns)
    align = "".join("r" if pd.api.types.is_numeric_dtype(df[c]) else "l" for c in cols)
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(r"\caption{" + escape_latex(caption) + "}")
    lines += [
        r"\begin{tabular}{" + align + "}",
        r"\toprule",
        " & ".join(escape_latex(str(c)) for c in cols) + r" \\",
        r"\midrule",
    ]
    for row in df.itertuples(index=False):
        lines.append(
            " & ".join(escape_latex(cell(v, c)) for v, c in zip(row, cols, strict=True)) + r" \\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table; every cell is escaped
    (:func:`robustness.core.text_safety.escape_markdown`)."""
    cols = list(df.columns)
    head = "| " + " | ".join(escape_markdown(str(c)) for c in cols) + " |"
    rule = "|" + "|".join("---" for _ in cols) + "|"
    body = [
        "| "
        + " | ".join(escape_markdown(cell(v, c)) for v, c in zip(row, cols, strict=True))
        + " |"
        for row in df.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body]) + "\n"


def to_html(df: pd.DataFrame) -> str:
    """An HTML table; every cell is escaped."""
    cols = list(df.columns)
    head = "".join(f"<th>{escape_html(c)}</th>" for c in cols)
    rows = []
    for row in df.itertuples(index=False):
        cells = "".join(
            f"<td>{escape_html(cell(v, c))}</td>" for v, c in zip(row, cols, strict=True)
        )
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
