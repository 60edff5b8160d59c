"""The answer parser's fast paths give exactly what their models give.

The parser reads most answers through shortcuts (robustness/core/answer_parser/_ascii.py and the
gates and prefilters of _patterns, _compile and _heads); each is compared here, on seeded
random texts built from the words the patterns look for, with the slower form it replaces.
A shortcut that changed one match would change parse results, so every comparison is exact.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pytest

from robustness.core.answer_parser import _ascii, _patterns
from robustness.core.answer_parser._compile import _ascii_starts, _compile_labels, _compile_options
from robustness.core.answer_parser._heads import _Heads
from robustness.core.answer_parser._patterns import (
    _CJK_CHAR,
    _CJK_GLUE,
    _REFUSAL_RE,
    _TRANSLATE,
    MAX_CHARS,
    _clean,
    _refusal,
)

# words and marks the scanning patterns look for, and near misses
_FRAGMENTS = [
    *sorted(
        {
            word
            for model in _ascii.MODELS
            for word in re.findall(r"[A-Za-z']+", getattr(_patterns, model).pattern)
        }
        - {"s", "S", "w", "W", "d", "b", "n"}  # pieces of escapes
    ),
    *" ,.!?;:-='_1x()\n",
    "  ",
    "I",
    "'d",
    "n't",
    "bait",
    "tut",
    "I don't agree",
    "I do not really agree",
    "I can not agree with neither",
    "I think it's",
    "I believe the answer is",
    "the answer is",
    "I'd go with",
    "answer:",
    "option -",
    "on second thought",
    "if I had to choose one",
    "in the end",
    "let me correct myself",
    "I made a mistake",
    "so the best Paris would be",
    "the only possible answer",
    "final answer",
    "no,",
    "No -",
    "I personally also think I",
]


_CHANGES = "i' -\n_1"


def _texts(seed: int, n: int, fragments: list[str]) -> list[str]:
    """Seeded random texts: fragments in mixed case, a first letter or one character changed."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        parts = []
        for _ in range(int(rng.integers(1, 12))):
            part = fragments[int(rng.integers(len(fragments)))]
            r = rng.random()
            part = part.upper() if r < 0.15 else part.capitalize() if r < 0.3 else part
            if part and rng.random() < 0.2:  # another first letter: "bait" is not "wait"
                part = "abcdefghijklmnopqrstuvwxyzI"[int(rng.integers(27))] + part[1:]
            parts.append(part + [" ", " ", "", "\n", ", "][int(rng.integers(5))])
        text = "".join(parts)
        if text and rng.random() < 0.3:  # a near miss: one character dropped, doubled, changed
            k = int(rng.integers(len(text)))
            text = (
                text[:k]
                + ["", text[k] * 2, _CHANGES[int(rng.integers(len(_CHANGES)))]][
                    int(rng.integers(3))
                ]
                + text[k + 1 :]
            )
        out.append(text)
    return out


@pytest.mark.parametrize("name", sorted(_ascii.MODELS))
def test_ascii_pattern_matches_its_model(name: str) -> None:
    model, fast = getattr(_patterns, name), _ascii.MODELS[name]
    found = 0
    for text in _texts(1, 6000, _FRAGMENTS):
        assert text.isascii()
        low = text.lower()
        expected = [m.span() for m in model.finditer(text)]
        assert [m.span() for m in fast.finditer(low)] == expected, (name, text)
        for pos in range(0, len(text), 3):  # and matched at an offset
            a, b = model.match(text, pos), fast.match(low, pos)
            assert (a and a.span()) == (b and b.span()), (name, text, pos)
        found += len(expected)
    assert found > 100  # the texts do contain what the pattern looks for


_LABEL_SETS = [
    ("A", "B", "C", "D"),
    ("a", "b", "c", "d"),
    ("1", "2", "3", "4"),
    ("10", "1", "2"),
    ("i", "ii", "iii", "iv"),
    ("I", "II", "III", "IV"),
    ("α", "β", "γ", "δ"),
    ("ε", "η", "e"),
    ("(A)", "(B)", "(C)"),
    ("★", "♦"),
    ("x", "K", "ı"),
]
_LABEL_FRAGMENTS = [
    *"aAbBcCdDeEiIkx1234",
    *"()[]{}<>\"'.:,-+#_0 \n\t",
    "ii",
    "II",
    "iii",
    "iv",
    "IV",
    "10",
    "alpha",
    "Alpha",
    "BETA",
    "gamma",
    "eta",
    "Epsilon",
    "option ",
    "Choice: ",
    "letter #",
    "answer ",
    "number ",
    "  ",
    ".5",
    ",0",
    "° ",
    "e.g.",
    "'s",
    "-x",
    "word ",
]


@pytest.mark.parametrize("labels", _LABEL_SETS, ids=" ".join)
def test_ascii_label_scans_match_theirs(labels: tuple[str, ...]) -> None:
    compiled = _compile_labels(labels)
    assert compiled.ascii_core is not None  # every set here is matched ignoring case
    found = 0
    for text in _texts(2, 1500, _LABEL_FRAGMENTS):
        for model, fast in zip(compiled.scans(False), compiled.scans(True), strict=True):
            expected = [(m.span(), m.lastgroup, m.span(m.lastgroup)) for m in model.finditer(text)]
            got = [
                (m.span(), m.lastgroup, m.span(m.lastgroup)) for m in fast.finditer(text.lower())
            ]
            assert got == expected, (labels, text)
            found += len(expected)
    assert found > 100 or labels == ("★", "♦")  # no ASCII text names ★ or ♦


def test_case_sensitive_label_sets_have_no_ascii_scans() -> None:
    compiled = _compile_labels(("a", "A", "b", "B"))
    assert compiled.ascii_core is None
    assert compiled.scans(True) is compiled.scans(False)


def test_ascii_starts_is_what_ignorecase_matches() -> None:
    # every ASCII character re.IGNORECASE matches to a first character is in the set, and
    # no other: checked against the regular-expression engine itself
    firsts = {"B", "ı", "K", "ſ", "é", "(", "7", "x"}
    starts = _ascii_starts(firsts)
    for code in range(128):
        c = chr(code)
        matched = any(re.fullmatch(re.escape(f), c, re.IGNORECASE) for f in firsts)
        assert (c.lower() in starts) == matched, c


@pytest.mark.parametrize(
    "options",
    [
        ("London", "Paris", "Berlin", "Madrid"),
        ("Strongly disagree", "Disagree", "Neither agree nor disagree", "Agree", "Strongly agree"),
        ("The Egyptians", "'Tis", "1945", "İstanbul", "Idle", "B. first", "-"),
    ],
)
def test_option_prefilter_never_skips_a_match(options: tuple[str, ...]) -> None:
    compiled = _compile_options(options)
    assert compiled.pattern is not None
    words = [w for o in options for w in o.split()] + ["the ", "a ", "an ", "neutral", "in the"]
    for text in _texts(3, 3000, [*words, *"iIıİ .,'’\n"]):
        for pos in range(len(text)):
            c = text[pos]
            if c.isascii() and c.lower() not in compiled.starts:
                assert compiled.pattern.match(text, pos) is None, (options, text, pos)


def _reference_clean(text: str) -> str:
    """_clean as it was before its ASCII shortcut."""
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS])
    text = text.translate(_TRANSLATE)
    if _CJK_CHAR.search(text):
        text = _CJK_GLUE.sub(" ", text)
    return re.sub(r"[^\S\n]+", " ", text).strip()


def test_clean_matches_the_reference() -> None:
    alphabet = [*"ab B*`\r\n\t \u00a0\u2003\x0b\x0c\x1c\x85\u2028\u3002答A’“«ｂ①\x00\u200b", "  "]
    rng = np.random.default_rng(4)
    for _ in range(20000):
        text = "".join(alphabet[int(i)] for i in rng.integers(len(alphabet), size=12))
        assert _clean(text) == _reference_clean(text), repr(text)


def test_refusal_groups_match_the_whole_pattern() -> None:
    fragments = [
        *"Iiıİ .,\n",
        "'m",
        "'d",
        "am",
        "an",
        "a",
        "as",
        "AI",
        "language model",
        "assistant",
        "do not",
        "don't",
        "have",
        "no",
        "idea",
        "cannot",
        "can't",
        "can not",
        "unable to",
        "not able to",
        "won't",
        "will not",
        "answer",
        "capable of",
        "providing",
        "opinions",
        "sorry, but",
        "apologize",
        "for me to",
        "know",
        "would",
        "prefer",
        "rather",
        "like",
        "to",
        "say",
        "comment",
        "decide",
        "hard",
        "refuse",
        "decline",
        "no sé",
        "je ne sais pas",
        "ich WEIẞ nicht",
        "不知道",
        "in a position",
    ]
    refusals = 0
    for raw in _texts(5, 20000, fragments):
        text = _clean(raw)
        heads = _Heads(text, _compile_labels(("A", "B")), _compile_options(("x", "y")))
        expected = _REFUSAL_RE.search(text) is not None
        assert _refusal(text, heads._low, heads.words) == expected, text
        refusals += expected
    assert refusals > 1000


def test_hint_words_of_ascii_text_are_hint_word_matches() -> None:
    for text in _texts(6, 3000, [*_FRAGMENTS, "Ab1c_d", "x2y"]):
        heads = _Heads(text, _compile_labels(("A", "B")), _compile_options(("x", "y")))
        assert heads.words == frozenset(_patterns.HINT_WORD.findall(text.casefold()))


def test_no_verdict_in_an_ascii_text_without_a_verdict_word() -> None:
    # mentions skip the verdict test on such a text: it must be unable to find one
    fragments = [*_FRAGMENTS, " is correct", " is the right", ": yes", " = true", " - best"]
    fragments += [" is correctly", ":yess", " is truer", " (Paris)", "B"]
    verdicts = 0
    for text in _texts(7, 3000, fragments):
        heads = _Heads(text, _compile_labels(("A", "B")), _compile_options(("x", "y")))
        found = any(_patterns._VERDICT_GOOD.match(text, pos) for pos in range(len(text) + 1))
        verdicts += found
        assert not found or "verdict" in heads.hints, text
    assert verdicts > 100
