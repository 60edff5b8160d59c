"""One parse, part one: the cleaned text and what starts at an offset (label, option, answer)."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator

from robustness.core.answer_parser import _ascii
from robustness.core.answer_parser._compile import _Labels, _Options
from robustness.core.answer_parser._patterns import (
    _ARTICLE,
    _CHAIN,
    _CLAUSE_BREAK,
    _DESCRIPTION_END,
    _HEAD_OPTION_END,
    _LINE_END,
    _MODIFIER,
    _NEGATION,
    _OPENING_END,
    _PUNCT_SKIP,
    _SEPARATOR,
    _SKIP_WORD,
    _STRICT_END,
    _VERDICT_BAD,
    CHECK_MARKS,
    CUE_HINTS,
    HINT_WORD,
)

# Every byte but a lower-case ASCII letter made a space: HINT_WORD's words of a casefolded
# ASCII text are what is left of it, split on spaces.
_LETTERS_ONLY = bytes(c if 97 <= c <= 122 else 32 for c in range(256))

# the cue kinds (CUE_HINTS) each hint word belongs to
_HINT_KINDS: dict[str, frozenset[str]] = {
    word: frozenset(kind for kind, words in CUE_HINTS.items() if word in words)
    for word in frozenset().union(*CUE_HINTS.values())
}
_HINT_WORDS = frozenset(_HINT_KINDS)

#: Hit roles: a plain hit, the label side or the text side of a label that came with another
#: option's text ("B. Agree" where B showed Disagree), and a hit from a list of labels.
PLAIN, LABEL, TEXT, LISTED = 0, 1, 2, 4

#: At most this many cue, stance and correction matches are followed per answer (a bound on
#: the work an adversarial text can cause; no real answer states its choice this often).
MAX_STATEMENTS = 64
#: At most this many label mentions and this many option-text mentions are read per answer.
MAX_MENTIONS = 256


class _Heads:
    """One parse: the cleaned text with its compiled label and option patterns.

    Every finder returns hits as (displayed position, offset in the text, role), the role
    one of PLAIN, LABEL, TEXT (the two sides of a label with another option's text) or
    LISTED (one label of a list such as "B, C").
    """

    def __init__(self, text: str, labels: _Labels, options: _Options) -> None:
        self.text = text
        self.labels = labels
        self.options = options
        self._breaks: list[int] | None = None
        self._negations: list[tuple[int, int]] = []
        self.last_end = 0
        self._echo: bool | None = None
        self._mentions: tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]] | None = None
        self._stops: list[int] | None = None
        # the cue kinds whose words occur in the text (every parse asks for most of them)
        self._low = low = text.casefold()
        # an ASCII text is scanned lower-cased, with the patterns of _ascii
        self.ascii = text.isascii()
        if low.isascii():  # HINT_WORD's words of an ASCII text, found faster
            words = frozenset(low.encode().translate(_LETTERS_ONLY).decode().split())
        else:
            words = frozenset(HINT_WORD.findall(low))
        self.words = words
        self.hints: set[str] = set()
        hints = self.hints
        for word in words & _HINT_WORDS:
            hints |= _HINT_KINDS[word]
        if not self.ascii and any(mark in text for mark in CHECK_MARKS):
            hints.add("verdict")

    def hinted(self, kind: str) -> bool:
        """Whether the text has one of the words every match of cue ``kind`` contains."""
        return kind in self.hints

    def negated(self, start: int) -> bool:
        """True when a negation precedes `start` in the same clause ("I do not really agree").

        The clause starts after the last clause break and at most 160 characters back; the
        breaks and negations of the text are found once (linear in the text's length).
        """
        if self._breaks is None:
            text, negation, clause_break = (
                (self._low, _ascii.NEGATION, _ascii.CLAUSE_BREAK)
                if self.ascii
                else (self.text, _NEGATION, _CLAUSE_BREAK)
            )
            self._negations = [m.span() for m in negation.finditer(text)]
            self._neg_starts = [s for s, _ in self._negations]
            self._breaks = [m.end() for m in clause_break.finditer(text)] if self._negations else []
        if not self._negations:
            return False
        k = bisect_right(self._breaks, start)
        clause_start = max(start - 160, self._breaks[k - 1] if k else 0)
        i = bisect_right(self._neg_starts, start) - 1
        while i >= 0 and self._negations[i][0] >= clause_start:
            if self._negations[i][1] <= start:
                return True
            i -= 1
        return False

    # -- heads: a label or an option text starting exactly at `pos` ------------------------

    def option_at(self, pos: int) -> tuple[int, int, bool] | None:
        """(option position, end, labelish) for an option text at `pos` (after an article).

        ``labelish`` says the option's own text starts like a label ("B. first").
        """
        pattern, text, starts = self.options.pattern, self.text, self.options.starts
        if pattern is None:
            return None
        c = text[pos : pos + 1]
        if not c:
            return None  # every option text has a character
        article = _ARTICLE.match(text, pos) if not c.isascii() or c in "tTaA" else None
        for start in (pos, article.end() if article else None):
            if start is None:
                continue
            c = text[start : start + 1]
            if c.isascii() and c.lower() not in starts:
                continue  # no option text starts with this character
            m = pattern.match(text, start)
            if m and m.lastgroup:
                if self.negated(m.start()):
                    return None
                group = m.lastgroup
                return self.options.groups[group], m.end(), group in self.options.labelish
        return None

    def option_matches(self) -> Iterator[re.Match[str]]:
        """Every option text in the text, as ``pattern.finditer`` finds them, found faster.

        A match can only start where one of the options' lower-cased starts occurs, so the
        pattern is tried at those offsets alone (the whole scan when lower-casing changes the
        text's length).
        """
        pattern, text = self.options.pattern, self.text
        if pattern is None:
            return
        low = text.lower()
        if len(low) != len(text):
            yield from pattern.finditer(text)
            return
        starts: set[int] = set()
        for key in self.options.keys:
            i = low.find(key)
            while i != -1:
                starts.add(i)
                i = low.find(key, i + 1)
        end = 0
        for pos in sorted(starts):
            if pos < end:
                continue
            m = pattern.match(text, pos)
            if m is not None:
                yield m
                end = max(m.end(), pos + 1)

    def description_at(self, pos: int, *, needs_separator: bool) -> tuple[int, int] | None:
        """An option text right after a label that ends its line or sentence: "B) Paris".

        The text may stand in brackets: "4 (Strongly agree)".
        """
        sep = _SEPARATOR.match(self.text, pos)
        if sep is None:
            return None
        start = sep.end()
        bracket = self.text[start : start + 1] in ("(", "[")
        if needs_separator and not sep.group().strip() and not bracket:
            return None
        hit = self.option_at(start + 1 if bracket else start)
        if hit is None:
            return None
        end = hit[1]
        if bracket:
            if self.text[end : end + 1] not in (")", "]"):
                return None
            end += 1
        if _DESCRIPTION_END.match(self.text, end):
            return hit[0], end
        return None

    def label_at(self, pos: int, *, opening: bool = False) -> list[tuple[int, int, int]]:
        """The label starting at `pos`, with the option text describing it, or [].

        Returns [(label position, end, PLAIN)] or, when the label is followed by the text of
        a different option ("B) London" where B showed Paris), both, as (label position,
        end, LABEL) and (text's position, end, TEXT): the caller sees a conflict. Strict
        labels (words, numbers) need a wrapper, a description, or the end of the sentence
        (after a cue) or of the line (at the opening); other labels at the opening need a
        separator or the end. An option whose own text starts like a label and is written
        out in full ("B. first" shown as option A) is that option, not the label.
        """
        m = self.labels.head_at(self.text, pos)
        if not m:
            return []
        lab, open_, close = m.group("lab", "open", "close")
        label_pos = self.labels.position(lab)
        if label_pos is None or (open_ and not close):
            return []
        end = m.end()
        if self.options.labelish:
            whole = self.option_at(pos)
            if whole is not None and whole[2] and whole[1] > end:
                return [(whole[0], whole[1], PLAIN)]
        wrapped = bool(close) and (bool(open_) or close == ")")
        strict = self.labels.is_strict(lab)
        # "A chloroplast" is an article and an option; "A. Chloroplast" is a label and one.
        described = self.description_at(end, needs_separator=strict and not wrapped)
        if not (wrapped or described):
            if strict:
                guard = _LINE_END if opening else _STRICT_END
                if not guard.match(self.text, end):
                    return []
            elif opening and not _OPENING_END.match(self.text, end):
                return []
        if described is None:
            return [(label_pos, end, PLAIN)]
        if described[0] == label_pos:
            return [(label_pos, described[1], PLAIN)]
        return [(label_pos, end, LABEL), (described[0], described[1], TEXT)]

    def answer_at(self, pos: int, *, labels_too: bool = True) -> list[tuple[int, int, int]]:
        """Every answer named from `pos` on, skipping filler words and following "B or C".

        Labels of a list ("B, C", "a) and d)") come back with the role LISTED. The end of
        the last answer read is left in ``self.last_end``.
        """
        found: list[tuple[int, int, int]] = []
        pos = _PUNCT_SKIP.match(self.text, pos).end()  # type: ignore[union-attr]
        chained = False
        for _ in range(6):
            heads = self.label_at(pos) if labels_too else []
            end = heads[-1][1] if heads else -1
            if not heads:
                hit = self.option_at(pos)
                # An option after a cue must end there ("the capital" is not option "the"),
                # unless it continues a chain ("agree and disagree at once").
                if hit is not None and (found or _HEAD_OPTION_END.match(self.text, hit[1])):
                    heads, end = [(hit[0], hit[1], PLAIN)], hit[1]
            if heads and _VERDICT_BAD.match(self.text, end):
                heads = []  # "so London is wrong" names no answer
                if not found:
                    break
            if heads:
                found.extend((p, pos, role) for p, _, role in heads)
                self.last_end = end
                chain = _CHAIN.match(self.text, end)
                if not chain:
                    break
                pos = chain.end()
                labels_too = chained = True
                continue
            if found:
                break
            if self.ascii:  # the lower-cased text, case-sensitively (_ascii)
                low = self._low
                skipped = _ascii.SKIP_WORD.match(low, pos) or _ascii.MODIFIER.match(low, pos)
            else:
                skipped = _SKIP_WORD.match(self.text, pos) or _MODIFIER.match(self.text, pos)
            if not skipped:
                break
            pos = skipped.end()
        if chained and len({p for p, _, _ in found}) > 1:
            found = [(p, off, role | LISTED) for p, off, role in found]
        return found
