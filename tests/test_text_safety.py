"""Untrusted text through each target's function (issue 17): no escape sequence or control
character survives, every special character of HTML, Markdown and LaTeX is escaped, and an
API key is scrubbed."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robustness.text_safety import (
    clip,
    escape_html,
    escape_latex,
    escape_markdown,
    for_terminal,
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
    bare = re.sub(r"\\text[a-z]+\{\}|\\[{}$&%#_]", "", tex)
    assert not re.search(r"[\\{}$&%#_^~]", bare), bare
    for out in (term, html, md, tex):
        out.encode("utf-8")  # writable as UTF-8


def test_the_visible_text_survives():
    assert for_terminal("\x1b[31mred\x1b[0m text") == "red text"
    assert for_terminal("\x1b]0;owned\x07title") == "title"
    assert escape_html("a < b & c") == "a &lt; b &amp; c"
    assert escape_markdown("a|b") == r"a\|b"
    assert escape_latex("50% of $5") == r"50\% of \$5"
    assert strip_controls("line\nnext\tcol\x00") == "line\nnext\tcol"
    assert for_terminal("x" * 500, 10) == "x" * 9 + "…" and clip("abc", 5) == "abc"


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
