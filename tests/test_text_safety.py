"""Untrusted text through each target's function (issue 17): no escape sequence or control
character survives, every special character of HTML, Markdown and LaTeX is escaped, and an
API key is scrubbed."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robustness.core.text_safety import (
    clip,
    escape_html,
    escape_latex,
    escape_markdown,
    for_console,
    for_figure,
    for_terminal,
    plain_text,
    scrub_secret,
    shown,
    strip_controls,
)

HOSTILE = [
    "\x1b[2J\x1b[H cleared",  # clear the screen, cursor home
    "\x1b]0;owned\x07 title",  # window title (OSC ... BEL)
    "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\",  # hyperlink (OSC ... ST)
    "\x9b31m C1 CSI red",  # the 8-bit CSI
    "\x1bc reset",  # reset the terminal
    "bell\x07 nul\x00 del\x7f nel\x85 bs\x08",
    "bidi \u202eevil\u202c \u2066iso\u2069",
    "<script>alert(1)</script> <img src=x onerror=alert(1)>",
    "| a | b | *bold* _it_ [link](javascript:x) `code` # h & &amp;",
    r"\input{/etc/passwd} $x^2$ 50% #1 a_b {c} ~ \\",
    "lone \ud800 surrogate",
    "cut \x1b[",
    "</td></tr></table> | pipes | `tick` $\\input{x}$",
    "- a list\n1. ordered\n# heading\r\n> quote\u2028next\x85line",
    "[bold red]rich markup[/] \\[escaped]",
    "y" * 10_000,
]
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.mark.parametrize("text", HOSTILE)
def test_each_target_gets_safe_text(text):
    term = for_terminal(text, None)
    assert not CONTROL.search(term) and "\n" not in term and "\x1b" not in term
    html = escape_html(text)
    assert not CONTROL.search(html) and "<" not in html and ">" not in html
    assert '"' not in html and "'" not in html
    md = escape_markdown(text)
    assert not CONTROL.search(md) and "<" not in md and "\n" not in md
    assert not re.search(r"(?<!\\)[|*_`\[\]]", md)  # every markup character escaped
    assert not re.search(r"&(?!amp;|lt;)", md)
    tex = escape_latex(text)
    assert not CONTROL.search(tex) and "\n" not in tex
    bare = re.sub(r"^\{\}|\\text[a-z]+\{\}|\\[{}$&%#_]", "", tex)  # ^{}: a guarded [
    assert not re.search(r"[\\{}$&%#_^~]", bare), bare
    console = for_console(text, None)
    assert not CONTROL.search(console) and "\n" not in console
    assert not re.search(r"(?<!\\)\[[a-z/]", console)  # no rich markup tag
    figure = for_figure(text, None)
    assert not CONTROL.search(figure) and "\n" not in figure
    assert not re.search(r"(?<!\\)\$", figure)  # no mathtext
    for out in (term, html, md, tex, console, figure):
        out.encode("utf-8")  # writable as UTF-8


def test_the_visible_text_survives():
    assert for_terminal("\x1b[31mred\x1b[0m text") == "red text"
    assert for_terminal("\x1b]0;owned\x07title") == "title"
    assert escape_html("a < b & c") == "a &lt; b &amp; c"
    assert escape_markdown("a|b") == r"a\|b"
    assert escape_latex("50% of $5") == r"50\% of \$5"
    assert strip_controls("line\nnext\tcol\x00") == "line\nnext\tcol"
    assert for_terminal("x" * 500, 10) == "x" * 9 + "…" and clip("abc", 5) == "abc"


def test_line_breaks_become_spaces_on_one_line_targets():
    text = "one\ntwo\r\nthree\u2028four\tfive\x85six"
    spaced = "one two three four five six"
    assert plain_text(text, one_line=True) == spaced and for_terminal(text, None) == spaced
    assert escape_latex(text) == spaced and escape_markdown(text) == spaced
    assert plain_text("a\nb\tc\x00") == "a\nb\tc"  # kept where the target shows them
    assert escape_html("a\nb") == "a\nb"


def test_markdown_escapes_markup_and_block_markers():
    assert escape_markdown("<b>x</b> & `y`") == r"&lt;b\>x&lt;/b\> &amp; \`y\`"
    assert escape_markdown("| a | *b* _c_ [d](e) ~f~ $g$ # h !i") == (
        r"\| a \| \*b\* \_c\_ \[d\](e) \~f\~ \$g\$ \# h \!i"
    )
    assert escape_markdown("0.531 - 1") == "0.531 - 1"  # numbers and dashes stay readable
    assert escape_markdown("- item", block=True) == r"\- item"
    assert escape_markdown("+ item", block=True) == r"\+ item"
    assert escape_markdown("12. item", block=True) == r"12\. item"
    assert escape_markdown("3) item", block=True) == r"3\) item"
    assert escape_markdown("- item") == "- item"  # a table cell or a heading: no marker


def test_latex_guards_a_leading_bracket_and_escapes_every_special():
    assert escape_latex("[1cm] x") == "{}[1cm] x" and escape_latex("*y") == "{}*y"
    assert escape_latex(r"\input{x} a|b <c>") == (
        r"\textbackslash{}input\{x\} a\textbar{}b \textless{}c\textgreater{}"
    )


def test_figure_and_console_labels():
    assert for_figure("$x^2$ cost") == r"\$x^2\$ cost"
    assert for_figure("_hidden") == " _hidden"  # a legend drops labels that start with _
    assert len(for_figure("z" * 500)) == 120
    assert for_console("[bold]x[/bold]\x1b[2J") == r"\[bold]x\[/bold]"
    assert for_console("a\nb") == "a b"


def test_clipping_never_cuts_an_escape():
    assert escape_html("&" * 10, 5) == "&amp;" * 4 + "…"
    assert escape_latex("%" * 10, 3) == r"\%\%…"
    assert escape_markdown("|" * 10, 3) == r"\|\|…"


def test_a_limit_reads_only_a_bounded_head():
    """A 100,000-character category name was scrubbed whole in every table cell before being
    cut to 300 characters (21 s of regular expressions for one report); now only a bounded
    head is read, and the cut is still marked when that head was mostly controls."""
    assert plain_text("a" * 10**6, 10) == "a" * 9 + "…"
    assert plain_text("\x00" * 10**6 + "visible", 10) == "…"
    assert plain_text("\x1b[2J" * 1000 + "x" * 100, 10) == "…"
    head = "\x07" * 30 + "abc"  # within the bound: controls removed, nothing cut
    assert plain_text(head, 10) == "abc"
    assert escape_html("<" * 10**6, 5) == "&lt;" * 4 + "…"


def test_scrub_secret(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-live-0123456789")
    assert scrub_secret("echo sk-live-0123456789!", "MY_KEY") == "echo [$MY_KEY]!"
    assert scrub_secret(None, "MY_KEY") is None and scrub_secret(7, "MY_KEY") == 7
    monkeypatch.setenv("MY_KEY", "EMPTY")  # too short to be a secret: ordinary words stay
    assert scrub_secret("EMPTY answer", "MY_KEY") == "EMPTY answer"
    monkeypatch.delenv("MY_KEY")
    assert scrub_secret("nothing", "MY_KEY") == "nothing"


def test_shown_writes_values_as_a_user_would():
    assert shown(np.int64(-7)) == "-7" and shown(np.float64(0.5)) == "0.5"
    assert shown(float("inf")) == "inf" and shown("a") == "'a'" and shown(None) == "None"
    assert shown(10**5000) == "a number of 5001 digits"
    assert len(shown("x" * 10**6)) == 80
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    assert shown(deep) == "a nested list"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=200))
def test_any_text_comes_out_safe(text):
    for out in (for_terminal(text, None), escape_html(text), escape_markdown(text)):
        assert not CONTROL.search(out)
    assert not CONTROL.search(escape_latex(text))
    for line in (for_console(text, None), for_figure(text, None), escape_markdown(text)):
        assert not CONTROL.search(line) and len(line.splitlines()) <= 1
