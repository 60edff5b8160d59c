"""Rendering tables and text for HTML, Markdown and LaTeX, with untrusted text made safe.

Every string from items, prompts, model outputs, model and study names is data: it is
stripped of control characters and terminal escape sequences, then escaped for the
format it is written in. Numbers are printed as a paper prints them (see
:mod:`analyses.numbers`): p-values as "< 0.001" or in scientific notation, degrees of
freedom as whole numbers.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pandas as pd

from analyses.numbers import fmt, fmt_dof, fmt_p, is_missing

__all__ = [
    "cell",
    "latex_escape",
    "md_escape",
    "plain_text",
    "to_html",
    "to_latex",
    "to_markdown",
]

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}
# ANSI/VT escape sequences (CSI ... final byte, OSC ... BEL/ST) and other C0/C1 controls.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
P_COLUMNS = frozenset({"p_value", "p_holm", "p_approx", "p_exact", "p_value_II", "p_value_III"})
DOF_COLUMNS = frozenset({"dof", "df", "dof_II", "dof_III", "df_II", "df_III"})


def plain_text(text: object, limit: int = 2000) -> str:
    """``text`` without terminal escape sequences or control characters (tabs and line
    breaks kept), cut to ``limit`` characters."""
    value = _ESCAPES.sub("", str(text))
    value = _CONTROLS.sub("", value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def cell(value: Any, column: str = "", digits: int = 3) -> str:
    """One table cell as text: numbers by their column's kind, text made plain."""
    if is_missing(value):
        return "-"
    if column in P_COLUMNS:
        return fmt_p(value)
    if column in DOF_COLUMNS:
        return fmt_dof(value)
    if isinstance(value, str):
        return plain_text(value, 300)
    return plain_text(fmt(value, digits), 300)


def latex_escape(text: str) -> str:
    """Text for a LaTeX cell or caption: specials escaped, and a leading ``[`` or ``*``
    guarded with ``{}`` (after a row's line break LaTeX would read it as an option)."""
    out = "".join(_LATEX_SPECIALS.get(ch, ch) for ch in plain_text(text).replace("\n", " "))
    return "{}" + out if out[:1] in ("[", "*") else out


def to_latex(df: pd.DataFrame, caption: str = "") -> str:
    """A booktabs table; every cell is escaped for LaTeX."""
    cols = list(df.columns)
    align = "".join("r" if pd.api.types.is_numeric_dtype(df[c]) else "l" for c in cols)
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(r"\caption{" + latex_escape(caption) + "}")
    lines += [
        r"\begin{tabular}{" + align + "}",
        r"\toprule",
        " & ".join(latex_escape(str(c)) for c in cols) + r" \\",
        r"\midrule",
    ]
    for row in df.itertuples(index=False):
        lines.append(
            " & ".join(latex_escape(cell(v, c)) for v, c in zip(row, cols, strict=True)) + r" \\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def md_escape(text: str) -> str:
    """Text for Markdown: the characters that make markup or HTML are backslash-escaped and
    line breaks become spaces, so table cells and headings from data stay plain text."""
    text = plain_text(text).replace("\r", " ").replace("\n", " ").replace("\t", " ")
    return "".join("\\" + ch if ch in "\\`*_[]<>|!#&~$" else ch for ch in text)


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table; every cell is escaped (:func:`md_escape`)."""
    cols = list(df.columns)
    head = "| " + " | ".join(md_escape(str(c)) for c in cols) + " |"
    rule = "|" + "|".join("---" for _ in cols) + "|"
    body = [
        "| " + " | ".join(md_escape(cell(v, c)) for v, c in zip(row, cols, strict=True)) + " |"
        for row in df.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body]) + "\n"


def to_html(df: pd.DataFrame) -> str:
    """An HTML table; every cell is escaped."""
    cols = list(df.columns)
    head = "".join(f"<th>{html.escape(plain_text(c))}</th>" for c in cols)
    rows = []
    for row in df.itertuples(index=False):
        cells = "".join(
            f"<td>{html.escape(cell(v, c))}</td>" for v, c in zip(row, cols, strict=True)
        )
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
