"""Patterns compiled once per label set and once per option set."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from robustness.core.answer_parser._patterns import (
    _FUNCTION_WORDS,
    _LB,
    _MIDPOINT_TEXT,
    _RB,
    _WORDLIKE,
    GREEK_NAMES,
    MIDPOINT_ALIASES,
    _bare_label,
    _clean,
)
from robustness.core.errors import ItemError

# The only non-ASCII characters that re.IGNORECASE matches to ASCII ones.
_ASCII_KIN = {"İ": "i", "ı": "i", "ſ": "s", "K": "k"}
_ASCII_SPACES = "".join(c for c in map(chr, range(128)) if c.isspace())


def _ascii_starts(firsts: set[str]) -> frozenset[str]:
    """The lower-cased ASCII characters that match one of ``firsts`` under re.IGNORECASE.

    A pattern whose every match starts with one of ``firsts`` cannot match at an ASCII
    character whose lower case is not in the result: a test cheaper than the match itself.
    """
    out = {c.lower() for c in firsts if c.isascii()}
    out.update(_ASCII_KIN[c] for c in firsts if c in _ASCII_KIN)
    return frozenset(out)


_Scans = tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]


@dataclass(frozen=True)
class _Labels:
    lookup: dict[str, int]  # surface (casefolded when `fold`) -> position
    fold: bool
    strict: frozenset[str]  # lookup keys that count only in a label context
    exact: frozenset[str]  # surfaces as shown, the only ones counted as bare tokens
    head: re.Pattern[str]  # a label at a given position (after a cue, at the start)
    starts: frozenset[str]  # lower-cased ASCII characters a `head` match can start with
    core: str  # the alternation of the surfaces (see _scans)
    # the same for a lower-cased ASCII text matched case-sensitively, and the characters its
    # matches start with (None for a label set matched case-sensitively)
    ascii_core: tuple[str, frozenset[str]] | None
    compiled: dict[bool, _Scans] = field(default_factory=dict, compare=False)

    def scans(self, ascii_text: bool) -> _Scans:
        """(mention, list_line, inline): the patterns that scan a text for labels.

        They find every label in running text, a line that starts like an option list entry,
        and a label written as a list entry inside a line ("(B)", "B)", "B."). For an ASCII
        text (``ascii_text``) they scan the lower-cased text where the label set has such
        patterns (``ascii_core``), and the text itself otherwise. Each kind is compiled on
        first use: most label sets only ever meet one kind of text.
        """
        fast = ascii_text and self.ascii_core is not None
        found = self.compiled.get(fast)
        if found is None:
            if self.ascii_core is not None and fast:
                found = _scans(self.ascii_core[0], self.ascii_core[1], 0)
            else:
                found = _scans(self.core, None, re.IGNORECASE)
            self.compiled[fast] = found
        return found

    def head_at(self, text: str, pos: int) -> re.Match[str] | None:
        """``head.match(text, pos)``, skipping the match where it cannot start."""
        c = text[pos : pos + 1]
        if not c or (c.isascii() and c.lower() not in self.starts):
            return None
        return self.head.match(text, pos)

    def position(self, surface: str) -> int | None:
        if self.fold:
            return self.lookup.get(surface.casefold())
        pos = self.lookup.get(surface)
        if pos is None:
            pos = self.lookup.get(surface.casefold())
        return pos

    def is_strict(self, surface: str) -> bool:
        folded = surface.casefold()
        return folded in self.strict or (not self.fold and surface in self.strict)


@lru_cache(maxsize=1024)
def _compile_labels(labels: tuple[str, ...]) -> _Labels:
    if not labels:
        raise ItemError("parse_answer needs at least one label.")
    bare = [_bare_label(lab) for lab in labels]
    if any(not b for b in bare):
        raise ItemError(f"empty label in {list(labels)!r}.")
    if len(set(bare)) != len(bare):
        raise ItemError(f"duplicate labels in {list(labels)!r}.")
    fold = len({b.casefold() for b in bare}) == len(bare)
    lookup: dict[str, int] = {}
    strict: set[str] = set()
    surfaces: set[str] = set()
    names: set[str] = set()
    for pos, b in enumerate(bare):
        key = b.casefold() if fold else b
        lookup[key] = pos
        surfaces.add(b)
        if fold:
            surfaces.update({b.lower(), b.upper(), b.casefold()})
        if b.casefold() in _WORDLIKE or b.isdigit():
            strict.add(key)
        name = GREEK_NAMES.get(b.casefold())
        if name and name not in lookup:
            lookup[name] = pos
            strict.add(name)
            names.update({name, name.capitalize(), name.upper()})
    core = _core(surfaces, names, fold)
    head = re.compile(
        rf"(?P<open>[(\[{{<\"'])?\s*{_LB}(?P<lab>{core})(?:\s*(?P<close>[)\]}}>\"'])|{_RB})",
        re.IGNORECASE,
    )
    ascii_core = None
    if fold:  # the same scans for a lower-cased ASCII text
        low = {_ascii_fold(s) for s in surfaces}, {_ascii_fold(s) for s in names}
        ascii_core = _core(*low, fold), frozenset(s[0] for s in low[0] | low[1])
    starts = {s[0] for s in surfaces | names} | set("([{<\"'" + _ASCII_SPACES)
    return _Labels(
        lookup,
        fold,
        frozenset(strict),
        frozenset(bare) | frozenset(names),
        head,
        _ascii_starts(starts),
        core,
        ascii_core,
    )


def _ascii_fold(text: str) -> str:
    """What re.IGNORECASE matches ``text`` to in a lower-cased ASCII text, character by
    character (a character that matches no ASCII character is kept: it matches nothing)."""
    return "".join(c.lower() if c.isascii() else _ASCII_KIN.get(c, c) for c in text)


def _core(surfaces: set[str], names: set[str], fold: bool) -> str:
    """The alternation of a label set's surfaces, longest first, after its Greek names."""
    alternation = "|".join(re.escape(s) for s in sorted(surfaces, key=lambda s: (-len(s), s)))
    core = alternation if fold else f"(?-i:{alternation})"
    if names:
        core = "|".join(re.escape(s) for s in sorted(names, key=len, reverse=True)) + "|" + core
    return f"(?:{core})"


def _scans(core: str, firsts: frozenset[str] | None, flags: int) -> _Scans:
    """The patterns that scan a text for labels: mention, list_line and inline.

    With ``firsts`` (the characters every match of ``core`` starts with, matched without
    re.IGNORECASE) the last two alternatives of mention and inline are one, behind a test
    of the first character: the same matches, found faster.
    """
    tail = rf"|{_LB}(?P<p>{core})\)|{_LB}(?P<b>{core}){_RB}"
    inline_tail = rf"|{_LB}(?P<p>{core})\)|{_LB}(?P<d>{core})[.:](?= )"
    if firsts is not None:
        start = "(?=[" + "".join(re.escape(c) for c in sorted(firsts)) + "])"
        tail = rf"|{start}{_LB}(?:(?P<p>{core})\)|(?P<b>{core}){_RB})"
        inline_tail = rf"|{start}{_LB}(?:(?P<p>{core})\)|(?P<d>{core})[.:](?= ))"
    mention = re.compile(
        rf"[(\[{{<\"']\s*(?P<w>{core})\s*[)\]}}>\"']"
        rf"|\b(?:option|choice|letter|label|number|alternative|answer)\s*[:#]?\s*{_LB}"
        rf"(?P<k>{core}){_RB}"
        rf"|(?m:^)\s*(?P<l>{core})\s*[.:](?=\s|$)"
        rf"{tail}",
        flags,
    )
    list_line = re.compile(
        rf"(?m)^[ \t]*(?:[-•>+][ \t]+)?[(\[]?[ \t]*(?P<lab>{core})[ \t]*[.)\]:][ \t]+\S",
        flags,
    )
    inline = re.compile(rf"[(\[]\s*(?P<w>{core})\s*[)\]]{inline_tail}", flags)
    return mention, list_line, inline


@dataclass(frozen=True)
class _Options:
    pattern: re.Pattern[str] | None  # every option text, longest alternative first
    groups: dict[str, int]  # regex group name -> option position
    weak: frozenset[str]  # groups whose text is a function word ("the", "their")
    labelish: frozenset[str]  # groups whose option text starts like a label ("B. first")
    disagree: int | None  # the one option that is a plain "Disagree", if any
    keys: tuple[str, ...] = ()  # lower-cased starts: every option match begins with one
    starts: frozenset[str] = frozenset()  # lower-cased ASCII characters a match starts with


_LABELISH = re.compile(r"[(\[]?\s*(?:[^\W\d_]|\d{1,2}|[ivxIVX]{1,4})\s*[.):\]]\s+\S")


def _option_alternatives(text: str) -> list[tuple[int, str, str, str]]:
    words = _clean(text).rstrip(".").split()
    if not words:
        return []
    forms = [words]
    if len(words) > 1 and words[0].lower() in {"the", "a", "an"}:
        forms.append(words[1:])
    if len(words) > 1 and _LABELISH.match(" ".join(words)):
        forms.append(words[1:])
    if len(words) == 2 and words[0].lower().endswith("ly") and len(words[0]) > 3:
        forms.append([words[1], words[0]])
    out = []
    for form in forms:
        body = r"\s+".join(re.escape(w).replace("'", "['’]") for w in form)
        left = r"(?<!\w)(?<!\d[.,])" if re.match(r"\w", form[0]) else ""
        right = r"(?!\w)(?![.,]\d)" if re.search(r"\w$", form[-1]) else ""
        first = form[0][0]
        out.append((len(" ".join(form)), f"{left}{body}{right}", form[0].lower()[:3], first))
    return out


def _midpoint(options: tuple[str, ...]) -> int | None:
    """The middle option of an odd scale when its text names a midpoint ("Neutral")."""
    if len(options) < 3 or len(options) % 2 == 0:
        return None
    mid = len(options) // 2
    return mid if _MIDPOINT_TEXT.match(_clean(options[mid])) else None


@lru_cache(maxsize=4096)
def _compile_options(options: tuple[str, ...]) -> _Options:
    alternatives: list[tuple[int, str, str]] = []
    groups: dict[str, int] = {}
    weak: set[str] = set()
    labelish: set[str] = set()
    keys: set[str] = set()
    firsts: set[str] = set()
    for pos, text in enumerate(options):
        for k, (length, alt, key, first) in enumerate(_option_alternatives(text)):
            keys.add(key)
            firsts.update("'’" if first == "'" else first)
            name = f"o{pos}_{k}"
            groups[name] = pos
            alternatives.append((length, name, alt))
            if _clean(text).rstrip(".").casefold() in _FUNCTION_WORDS:
                weak.add(name)
            if _LABELISH.match(_clean(text)):
                labelish.add(name)
    mid = _midpoint(options)
    if mid is not None:
        for k, alias in enumerate(MIDPOINT_ALIASES):
            name = f"m{mid}_{k}"
            groups[name] = mid
            alternatives.append((0, name, rf"(?<!\w){alias}(?!\w)"))
            keys.add(re.sub(r"[^a-z]", "", alias)[:2])
            firsts.add(alias[0])
    plain = [p for p, o in enumerate(options) if _clean(o).rstrip(".").casefold() == "disagree"]
    disagree = plain[0] if len(plain) == 1 else None
    if not alternatives:
        return _Options(None, {}, frozenset(), frozenset(), disagree)
    alternatives.sort(key=lambda a: (-a[0], a[1]))
    body = "|".join(f"(?P<{name}>{alt})" for _, name, alt in alternatives)
    return _Options(
        re.compile(body, re.IGNORECASE),
        groups,
        frozenset(weak),
        frozenset(labelish),
        disagree,
        tuple(sorted(keys)),
        _ascii_starts(firsts),
    )
