"""The report of an analysis: HTML, Markdown, figures and LaTeX tables.

>>> from robustness.report import fmt_p
>>> fmt_p(0.00002)
'2.0e-05'
"""

from __future__ import annotations

from robustness.analysis.number_text import fmt_p
from robustness.core.text_safety import escape_latex as latex_escape
from robustness.core.text_safety import escape_markdown as md_escape
from robustness.report.headline import Headline, headline
from robustness.report.render import to_html, to_latex, to_markdown
from robustness.report.write import write_report

__all__ = [
    "Headline",
    "fmt_p",
    "headline",
    "latex_escape",
    "md_escape",
    "to_html",
    "to_latex",
    "to_markdown",
    "write_report",
]
