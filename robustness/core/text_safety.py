"""Untrusted text made safe for each place it is shown: terminal, HTML, Markdown, LaTeX, figures.

Item texts, options, model outputs, model, dataset, category and study names are data from
outside. Before any of them reaches a target, it goes through the one function for that target
here (the report, the console summary and the figures call nothing else):

- :func:`plain_text`: control characters and terminal escape sequences (screen clears,
  window-title changes, hyperlinks, bidirectional overrides) removed, long text clipped;
  :func:`for_terminal` and :func:`for_console` (with rich markup escaped) put it on one line;
- :func:`escape_html`, :func:`escape_markdown`, :func:`escape_latex`: the target's special
  characters escaped, after the same control characters are removed (they are invisible in a
  report, and some are not even valid in XML or PDF text);
- :func:`for_figure`: a figure label on one line, with matplotlib's mathtext marker ``$``
  escaped so a name prints as written;
- :func:`scrub_secret`: the value of an environment variable holding an API key replaced by a
  placeholder, for every text that is stored or printed;
- :func:`shown`: a value written as a user would write it, for error messages (``-7``, not
  ``np.int64(-7)``; long text clipped).

Every function takes any value (``None`` becomes ``""``, other non-strings are converted
with ``str``) and runs in time linear in the length of its input.
"""

from __future__ import annotations

import contextlib
import html
import os
import re
from typing import Any

__all__ = [
    "SECRET_MIN_LENGTH",
    "clip",
    "escape_html",
    "escape_latex",
    "escape_markdown",
    "for_console",
    "for_figure",
    "for_terminal",
    "plain_text",
    "scrub_secret",
    "shown",
    "strip_controls",
]

#: Terminal escape sequences (ECMA-48): CSI (``ESC [`` ... final byte), OSC, DCS, SOS, PM and
#: APC strings (terminated by BEL or ST), and the two-character escapes. The 8-bit forms (C1
#: CSI and OSC) are matched too. Each pattern is linear: no nested quantifiers.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI ... final byte (a cut-off sequence too)
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # strings
    r"|\x1b[ -/]*[0-~]?"  # other escapes (ESC c resets the terminal, ESC ( B ...)
)
#: C0 and C1 controls, DEL, bidirectional overrides and isolates, and lone surrogates (which
#: cannot be written as UTF-8).
_CONTROLS = "\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_CONTROL_RE: dict[str, re.Pattern[str]] = {}

#: Secrets shorter than this are not scrubbed: a short value such as ``EMPTY`` (the key vLLM
#: servers accept) would blank out ordinary words.
SECRET_MIN_LENGTH = 8

#: How many characters :func:`plain_text` reads per character it may show (escape sequences
#: and controls are removed after the text is cut to this bound).
_READ_AHEAD = 4
#: Line breaks of every kind (``\r\n`` once), and tabs: a space each on one-line targets.
_BREAKS = re.compile("\r\n|[\n\r\t\v\f\x1c-\x1e\x85\u2028\u2029]")
#: Characters that make Markdown (CommonMark and GitHub's tables, strikethrough and math)
#: markup anywhere in a line; ``&`` and ``<`` become entities instead (raw HTML passes through).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]#!|~>$])")
#: A list item's or ordered list's marker at the start of a block (``- x``, ``+ x``, ``1. x``).
_MARKDOWN_BLOCK = re.compile(r"^(\s*)(?:([-+])|(\d{1,9})([.)]))")
_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX))


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def strip_controls(text: Any, keep: str = "\n\t") -> str:
    """``text`` without terminal escape sequences and control characters.

    Parameters
    ----------
    text
        Any value (converted with ``str``; ``None`` gives ``""``).
    keep
        Control characters to keep (default newline and tab; ``""`` keeps none).

    Returns
    -------
    str
        The text with escape sequences removed whole, and every other C0/C1 control,
        DEL, bidirectional override or isolate and lone surrogate removed.
    """
    s = _ESCAPES.sub("", _text(text))
    pattern = _CONTROL_RE.get(keep)
    if pattern is None:
        allowed = "".join(re.escape(c) for c in keep)
        pattern = re.compile(f"(?![{allowed}])[{_CONTROLS}]" if keep else f"[{_CONTROLS}]")
        _CONTROL_RE[keep] = pattern
    return pattern.sub("", s)


def clip(text: Any, max_chars: int | None) -> str:
    """``text`` cut to ``max_chars`` characters with an ellipsis marking the cut."""
    s = _text(text)
    if max_chars is None or len(s) <= max_chars:
        return s
    return s[: max(0, max_chars - 1)] + "…"


def plain_text(text: Any, max_chars: int | None = None, *, one_line: bool = False) -> str:
    """``text`` with no escape sequence or control character, clipped to ``max_chars``.

    Parameters
    ----------
    text
        Any value (converted with ``str``; ``None`` gives ``""``).
    max_chars
        Longest result (an ellipsis marks a cut); None: no limit.
    one_line
        Every line break (``\\n``, ``\\r``, U+2028, ...) and tab becomes a space; otherwise
        newlines and tabs are kept.

    Returns
    -------
    str
        The visible text, without the controls :func:`strip_controls` removes.

    Notes
    -----
    With a limit, only the first ``4 * max_chars + 64`` characters are read, so a name of a
    million characters costs no more than a short one wherever it is shown.
    """
    s = _text(text)
    bound = None if max_chars is None else _READ_AHEAD * max_chars + 64
    cut = bound is not None and len(s) > bound
    if cut:  # only the head can be shown: scan no more than a bounded prefix of it
        s = s[:bound]
    if one_line:
        s = _BREAKS.sub(" ", s)
    s = clip(strip_controls(s), max_chars)
    if cut and max_chars is not None and not s.endswith("…"):  # mostly controls: mark the cut
        s = s[: max(0, max_chars - 1)] + "…"
    return s


def for_terminal(text: Any, max_chars: int | None = 200, *, one_line: bool = True) -> str:
    """Text safe to print on a terminal: no escape sequences, no controls, clipped.

    ``one_line`` (default) turns line breaks and tabs into spaces, for names in a summary line.
    """
    return plain_text(text, max_chars, one_line=one_line)


def for_console(text: Any, max_chars: int | None = 200) -> str:
    """:func:`for_terminal` text with rich's markup (``[bold]``) escaped, for a rich console,
    table cell or title."""
    from rich.markup import escape

    return escape(for_terminal(text, max_chars))


def escape_html(text: Any, max_chars: int | None = None) -> str:
    """Text safe inside an HTML element or a quoted attribute (``& < > " '`` escaped), line
    breaks kept, clipped to ``max_chars`` before escaping (no entity is cut)."""
    return html.escape(plain_text(text, max_chars), quote=True)


def escape_markdown(text: Any, max_chars: int | None = None, *, block: bool = False) -> str:
    """Text safe on one line of Markdown: a table cell, a heading, a list item, a paragraph.

    Parameters
    ----------
    text
        Any value.
    max_chars
        Longest visible text (clipped before escaping).
    block
        The text starts a block (a paragraph or a list item's content): a leading ``-`` or
        ``+`` (a list item, a rule) or number with ``.`` or ``)`` (an ordered list) is escaped
        too.

    Returns
    -------
    str
        One line (line breaks and tabs as spaces); ``&`` and ``<`` as entities (Markdown passes
        raw HTML through), every other markup character (``\\ ` * _ [ ] # ! | ~ > $``)
        backslash-escaped.
    """
    s = plain_text(text, max_chars, one_line=True)
    s = _MARKDOWN_SPECIAL.sub(r"\\\1", s.replace("&", "&amp;").replace("<", "&lt;"))
    if block:
        s = _MARKDOWN_BLOCK.sub(_guard_marker, s)
    return s


def _guard_marker(m: re.Match[str]) -> str:
    space, bullet, number, dot = m.groups()
    return space + ("\\" + bullet if bullet else number + "\\" + dot)


def escape_latex(text: Any, max_chars: int | None = None) -> str:
    """Text safe in LaTeX body text or a table cell: every special character as its command,
    on one line, and a leading ``[`` or ``*`` guarded with ``{}`` (after a table row's ``\\\\``
    LaTeX would read it as an option)."""
    s = plain_text(text, max_chars, one_line=True)
    s = _LATEX_RE.sub(lambda m: _LATEX[m.group(0)], s)
    return "{}" + s if s[:1] in ("[", "*") else s


def for_figure(text: Any, max_chars: int | None = 120) -> str:
    """A figure label (tick, title, legend entry) as written: one line, no controls, clipped,
    ``$`` escaped so matplotlib draws no mathtext, and a leading ``_`` (which hides a legend
    entry) after a space."""
    s = plain_text(text, max_chars, one_line=True).replace("$", r"\$")
    return " " + s if s.startswith("_") else s


def scrub_secret(text: Any, env_var: str, placeholder: str | None = None) -> Any:
    """``text`` with the value of the environment variable ``env_var`` replaced.

    Parameters
    ----------
    text
        A string (other values are returned unchanged, so a result field can be passed as is).
    env_var
        Name of the variable holding the secret, e.g. ``"OPENAI_API_KEY"``.
    placeholder
        What replaces the secret (default ``"[${env_var}]"``).

    Notes
    -----
    A value shorter than :data:`SECRET_MIN_LENGTH` characters is not treated as a secret.
    """
    if not isinstance(text, str):
        return text
    secret = os.environ.get(env_var, "")
    if len(secret) < SECRET_MIN_LENGTH or secret not in text:
        return text
    return text.replace(secret, placeholder if placeholder is not None else f"[${env_var}]")


def shown(value: Any, max_chars: int = 80) -> str:
    """A value as a user would write it in a file, for an error message.

    Numbers print plainly (NumPy scalars become Python numbers: ``-7``, ``nan``), strings
    in quotes with their escapes visible (``'a\\x1b[2J'``), anything long is clipped.
    """
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        with contextlib.suppress(TypeError, ValueError):
            value = item()
    if isinstance(value, float | int) and not isinstance(value, bool):
        if isinstance(value, int) and value.bit_length() > 133:  # past 40 digits
            digits = int(value.bit_length() * 0.30103) + 1
            digits -= abs(value) < 10 ** (digits - 1)
            text = f"a number of {digits} digits"
        else:
            text = str(value)
    elif value is None:
        text = "None"
    else:
        try:
            head = value[: 4 * max_chars] if isinstance(value, str) else value
            text = repr(head)
        except (ValueError, RecursionError):  # deeply nested containers
            text = f"a nested {type(value).__name__}"
    return clip(text, max_chars)
