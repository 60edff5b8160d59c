"""One parse: finders for cued answers, openings and mentions over the cleaned text."""

from __future__ import annotations

import re
from bisect import bisect_right

from robustness.answer_parser._compile import _Labels, _Options
from robustness.answer_parser._patterns import (
    _ARTICLE,
    _BRACKETED,
    _CHAIN,
    _CJK_CHAR,
    _CLAUSE_BREAK,
    _CONCLUSION,
    _CORRECTION,
    _CORRECTION_SKIP,
    _CUE,
    _CUE_CJK,
    _CUE_OTHER,
    _DESCRIPTION_END,
    _HEAD_OPTION_END,
    _HEDGE_CUE,
    _LAST_SENTENCE,
    _LEAD_SKIP,
    _LINE_END,
    _LINK,
    _LIST_NUMBER,
    _MODIFIER,
    _NEG_AGREE,
    _NEGATION,
    _OPENING_END,
    _PUNCT_SKIP,
    _QA_CUE,
    _SEPARATOR,
    _SKIP_WORD,
    _SPACE,
    _STANCE,
    _STRICT_END,
    _VERDICT_BAD,
    _VERDICT_GOOD,
    CHECK_MARKS,
    CUE_HINTS,
    HINT_WORD,
)

#: Hit roles: a plain hit, the label side or the text side of a label that came with another
#: option's text ("B. Agree" where B showed Disagree), and a hit from a list of labels.
PLAIN, LABEL, TEXT, LISTED = 0, 1, 2, 4

#: At most this many cue, stance and correction matches are followed per answer (a bound on
#: the work an adversarial text can cause; no real answer states its choice this often).
MAX_STATEMENTS = 64
#: At most this many label mentions and this many option-text mentions are read per answer.
MAX_MENTIONS = 256


class _Reader:
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
        self._low = ""
        self._words: frozenset[str] | None = None
        self._mentions: tuple[list, list] | None = None

    def hinted(self, kind: str) -> bool:
        """Whether the text has one of the words every match of cue ``kind`` contains."""
        if self._words is None:
            self._low = self.text.casefold()
            self._words = frozenset(HINT_WORD.findall(self._low))
        if kind == "verdict" and any(mark in self.text for mark in CHECK_MARKS):
            return True
        return not self._words.isdisjoint(CUE_HINTS[kind])

    def negated(self, start: int) -> bool:
        """True when a negation precedes `start` in the same clause ("I do not really agree").

        The clause starts after the last clause break and at most 160 characters back; the
        breaks and negations of the text are found once (linear in the text's length).
        """
        if self._breaks is None:
            self._negations = [(m.start(), m.end()) for m in _NEGATION.finditer(self.text)]
            self._neg_starts = [s for s, _ in self._negations]
            self._breaks = (
                [m.end() for m in _CLAUSE_BREAK.finditer(self.text)] if self._negations else []
            )
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
        pattern = self.options.pattern
        if pattern is None:
            return None
        for start in (pos, self._after(_ARTICLE, pos)):
            if start is None:
                continue
            m = pattern.match(self.text, start)
            if m and m.lastgroup:
                if self.negated(m.start()):
                    return None
                group = m.lastgroup
                return self.options.groups[group], m.end(), group in self.options.labelish
        return None

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
        m = self.labels.head.match(self.text, pos)
        if not m:
            return []
        label_pos = self.labels.position(m.group("lab"))
        if label_pos is None or (m.group("open") and not m.group("close")):
            return []
        end = m.end()
        if self.options.labelish:
            whole = self.option_at(pos)
            if whole is not None and whole[2] and whole[1] > end:
                return [(whole[0], whole[1], PLAIN)]
        wrapped = bool(m.group("close")) and (bool(m.group("open")) or m.group("close") == ")")
        strict = self.labels.is_strict(m.group("lab"))
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
            skipped = _SKIP_WORD.match(self.text, pos) or _MODIFIER.match(self.text, pos)
            if not skipped:
                break
            pos = skipped.end()
        if chained and len({p for p, _, _ in found}) > 1:
            found = [(p, off, role | LISTED) for p, off, role in found]
        return found

    def _after(self, pattern: re.Pattern[str], pos: int) -> int | None:
        m = pattern.match(self.text, pos)
        return m.end() if m else None

    # -- clear answer statements -----------------------------------------------------------

    def cued(self) -> list[tuple[int, int, int]]:
        """Answers after a cue ("The answer is B", "I think it's C") or a stance ("I agree").

        "I don't agree" is the scale's plain Disagree where it has exactly one.
        """
        out: list[tuple[int, int, int]] = []
        patterns = [
            pattern
            for kind, pattern in (
                ("cue", _CUE),
                ("other", _CUE_OTHER),
                ("hedge", _HEDGE_CUE),
                ("conclusion", _CONCLUSION),
            )
            if self.hinted(kind)
        ]
        if _CJK_CHAR.search(self.text):
            patterns.append(_CUE_CJK)
        for pattern in patterns:
            for k, m in enumerate(pattern.finditer(self.text)):
                if k == MAX_STATEMENTS:
                    break
                out.extend(self.answer_at(m.end()))
        if self.hinted("stance"):
            for k, m in enumerate(_STANCE.finditer(self.text)):
                if k == MAX_STATEMENTS:
                    break
                out.extend(self.answer_at(m.end(), labels_too=False))
        if self.options.disagree is not None and "agree" in self._low:
            for m in _NEG_AGREE.finditer(self.text):
                out.append((self.options.disagree, m.start(), PLAIN))
        return out

    def corrections(self, clear: list[tuple[int, int, int]]) -> tuple[int, list]:
        """(cut, hits): where the last commitment starts, and the answers corrections name.

        A correction ("Actually", "wait", "No,", "on second thought", "final answer") that is
        followed by a clear statement, or a turn ("but", "however", "ultimately") followed
        at once by an answer that ends its sentence ("B and C are plausible, but B"), starts
        the last commitment: statements before it no longer count. Returns (0, hits) when
        there is none.
        """
        hits: list[tuple[int, int, int]] = []
        cut = 0
        if not self.hinted("correction"):
            return cut, hits
        offsets = sorted(off for _, off, _ in clear)
        for k, m in enumerate(_CORRECTION.finditer(self.text)):
            if k == MAX_STATEMENTS:
                break
            after = _CORRECTION_SKIP.match(self.text, m.end()).end()  # type: ignore[union-attr]
            named = self.answer_at(after)
            tail = self.last_end
            if named and not (
                _STRICT_END.match(self.text, tail) or _VERDICT_GOOD.match(self.text, tail)
            ):
                named = []
            if named:
                hits.extend((p, m.start(), role) for p, _, role in named)
                cut = m.start()
                continue
            turn = m.group().split()[0].casefold() in {
                "but",
                "however",
                "ultimately",
                "in",
                "on",
                "if",
                "overall",
            }
            if not turn and offsets and offsets[-1] > m.end():
                cut = m.start()
        return cut, hits

    def is_echo(self) -> bool:
        """True when the answer repeats the option list instead of choosing from it."""
        if self._echo is None:
            self._echo = self._is_echo()
        return self._echo

    def _is_echo(self) -> bool:
        if "\n" in self.text:
            listed = {
                self.labels.position(m.group("lab"))
                for m in self.labels.list_line.finditer(self.text)
            }
            if len(listed - {None}) >= 2:
                return True
        first_line = self.text.split("\n", 1)[0]
        inline = {
            self.labels.position(m.group(m.lastgroup))
            for m in self.labels.inline.finditer(first_line)
            if m.lastgroup
        }
        return len(inline - {None}) >= 3

    def closing(self) -> list[tuple[int, int, int]]:
        """The answer's last sentence when it is a label or an option text alone.

        "... I lean towards agreeing. 4." and "I almost never do this. Rarely." end in
        their answer; a text of one sentence is read by :meth:`opening` instead.
        """
        text = self.text
        m = _LAST_SENTENCE.search(text, max(0, len(text) - 48))
        if m is None or self.is_echo():
            return []
        pos = m.start()
        while pos < len(text) and (text[pos].isspace() or text[pos] in ".!?:;-–—"):
            pos += 1
        rest = text[pos:].rstrip(" .!\"')]")
        if not rest:
            return []
        end = pos + len(rest)
        line = text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip()
        if m.group()[0] in ".:)" and 0 < len(line) <= 4:
            return []  # "4. Madrid" ends a numbered list; it is not a closing answer
        head = self.labels.head.match(text, pos)
        if head and (not head.group("open") or head.group("close")):
            surface = head.group("lab")
            label = self.labels.position(surface)
            shown = head.group("close") or surface in self.labels.exact
            if label is not None and shown and head.end() >= end:
                return [(label, pos, PLAIN)]
        hit = self.option_at(pos)
        if hit is not None and hit[1] >= end:
            return [(hit[0], pos, PLAIN)]
        return []

    def opening(self) -> list[tuple[int, int, int]]:
        """The answer's first words: a label or an option text standing alone, or a list."""
        if self.is_echo():
            return []
        pos = _LEAD_SKIP.match(self.text).end()  # type: ignore[union-attr]
        qa = _QA_CUE.match(self.text, pos)
        if qa:
            return self.answer_at(qa.end())
        heads = self.label_at(pos, opening=True)
        if not heads:  # "B or C, I can't decide": a list needs no separator after its first
            m = self.labels.head.match(self.text, pos)
            first = self.label_at(pos) if m and _CHAIN.match(self.text, m.end()) else []
            if first and _CHAIN.match(self.text, first[-1][1]):
                heads = first
        if heads:
            out = [(p, pos, role) for p, _, role in heads]
            chain = _CHAIN.match(self.text, heads[-1][1])
            if chain:  # "B, C" / "a) and d) both seem right": a list, not the first label
                more = self.answer_at(chain.end())
                if more and {p for p, _, _ in more} - {p for p, _, _ in out}:
                    out = [(p, off, role | LISTED) for p, off, role in out + more]
            return out
        hit = self.option_at(pos)
        if hit is None or not _OPENING_END.match(self.text, hit[1]):
            return []
        if _VERDICT_BAD.match(self.text, hit[1]):
            return []  # "London: no" opens a checklist, not an answer
        # "Paris (B)": an option text followed by a wrapped label names both.
        after = _SPACE.match(self.text, hit[1])
        tail = after.end() if after else hit[1]
        if self.text[tail : tail + 1] in ("(", "["):
            heads = self.label_at(tail)
            if heads:
                if heads[0][0] == hit[0]:
                    return [(hit[0], pos, PLAIN)]
                return [(hit[0], pos, TEXT), (heads[0][0], tail, LABEL)]
        chain = _CHAIN.match(self.text, hit[1])
        if chain:  # "Paris or London"
            more = self.answer_at(chain.end())
            if more and {p for p, _, _ in more} - {hit[0]}:
                return [(p, off, role | LISTED) for p, off, role in [(hit[0], pos, 0), *more]]
        return [(hit[0], pos, PLAIN)]

    def mentions(self) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        """(verdicts such as "B is correct", plain mentions) anywhere in the text."""
        if self._mentions is None:
            self._mentions = self._find_mentions()
        return self._mentions

    def _find_mentions(self) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        verdicts: list[tuple[int, int, int]] = []
        plain: list[tuple[int, int, int]] = []
        text = self.text
        found = []
        for k, m in enumerate(self.labels.mention.finditer(text)):
            if k == MAX_MENTIONS:
                break
            kind = m.lastgroup
            surface = m.group(kind) if kind else None
            pos = self.labels.position(surface) if surface else None
            if surface is not None and pos is not None:
                found.append((kind, surface, pos, m.start(), m.end()))
        for i, (kind, surface, pos, start, end) in enumerate(found):
            if self._verdict(end):
                verdicts.append((pos, start, PLAIN))
                continue
            if kind == "b" and (surface not in self.labels.exact or self.labels.is_strict(surface)):
                # A bare word-like label as shown counts when linked to another label:
                # "A or B", "B, A", "1 and 2".
                linked = surface in self.labels.exact and (
                    (i > 0 and _LINK.fullmatch(text, found[i - 1][4], start) is not None)
                    or (
                        i + 1 < len(found)
                        and _LINK.fullmatch(text, end, found[i + 1][3]) is not None
                    )
                )
                if not linked:
                    continue
            if (
                kind == "l"
                and self.labels.is_strict(surface)
                and not (
                    _LINE_END.match(text, end) or self.description_at(end, needs_separator=False)
                )
            ):
                continue  # "1. How does this work?" numbers a line; it is not label 1
            if _VERDICT_BAD.match(text, end) or self.negated(start):
                continue
            plain.append((pos, start, PLAIN))
        if self.options.pattern is not None:
            for k, m in enumerate(self.options.pattern.finditer(text)):
                if k == MAX_MENTIONS:
                    break
                if not m.lastgroup:
                    continue
                pos = self.options.groups[m.lastgroup]
                if self._verdict(m.end()):
                    verdicts.append((pos, m.start(), PLAIN))
                    continue
                if m.lastgroup in self.options.weak and not self._quoted(m.start(), m.end()):
                    continue
                line_start = text.rfind("\n", 0, m.start()) + 1
                if (
                    m.group().isdigit()
                    and _LIST_NUMBER.match(text, m.end())
                    and not text[line_start : m.start()].strip()
                ):
                    continue  # "4. 1" numbers a list line; it does not name option "4"
                if _VERDICT_BAD.match(text, m.end()) or self.negated(m.start()):
                    continue
                plain.append((pos, m.start(), PLAIN))
        return verdicts, plain

    def _verdict(self, end: int) -> bool:
        """A verdict follows `end`, maybe after a text in brackets: "B (Paris) is correct"."""
        if _VERDICT_GOOD.match(self.text, end):
            return True
        bracket = _BRACKETED.match(self.text, end)
        return bracket is not None and _VERDICT_GOOD.match(self.text, bracket.end()) is not None

    def _quoted(self, start: int, end: int) -> bool:
        before = self.text[start - 1] if start > 0 else ""
        after = self.text[end] if end < len(self.text) else ""
        return before in "\"'" and before != "" and after == before
