"""One parse: finders for cued answers, openings and mentions over the cleaned text."""

from __future__ import annotations

import re

from robustness.answer_parser._compile import _Labels, _Options
from robustness.answer_parser._patterns import (
    _ARTICLE,
    _CHAIN,
    _CLAUSE_BREAK,
    _CUE,
    _DESCRIPTION_END,
    _HEAD_OPTION_END,
    _LEAD_SKIP,
    _LINE_END,
    _LINK,
    _LIST_NUMBER,
    _MODIFIER,
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
)


def _negated(text: str, start: int) -> bool:
    """True when a negation precedes `start` in the same clause ("I do not really agree")."""
    window = text[max(0, start - 160) : start]
    clause_start = 0
    for m in _CLAUSE_BREAK.finditer(window):
        clause_start = m.end()
    return _NEGATION.search(window, clause_start) is not None


class _Reader:
    """One parse: the cleaned text with its compiled label and option patterns.

    Every finder returns hits as (displayed position, offset in the text).
    """

    def __init__(self, text: str, labels: _Labels, options: _Options) -> None:
        self.text = text
        self.labels = labels
        self.options = options

    # -- heads: a label or an option text starting exactly at `pos` ------------------------

    def option_at(self, pos: int) -> tuple[int, int] | None:
        """(option position, end) for an option text at `pos` (after an optional article)."""
        pattern = self.options.pattern
        if pattern is None:
            return None
        for start in (pos, self._after(_ARTICLE, pos)):
            if start is None:
                continue
            m = pattern.match(self.text, start)
            if m and m.lastgroup:
                if _negated(self.text, m.start()):
                    return None
                return self.options.groups[m.lastgroup], m.end()
        return None

    def description_at(self, pos: int, *, needs_separator: bool) -> tuple[int, int] | None:
        """An option text right after a label that ends its line or sentence: "B) Paris"."""
        sep = _SEPARATOR.match(self.text, pos)
        if sep is None or (needs_separator and not sep.group().strip()):
            return None
        hit = self.option_at(sep.end())
        if hit is not None and _DESCRIPTION_END.match(self.text, hit[1]):
            return hit
        return None

    def label_at(self, pos: int, *, opening: bool = False) -> list[tuple[int, int]]:
        """The label starting at `pos`, with the option text describing it, or [].

        Returns [(label position, end)] or, when the label is followed by the text of a
        different option ("B) London" where B showed Paris), both: the caller sees a conflict.
        Strict labels (words, numbers) need a wrapper, a description, or the end of the
        sentence (after a cue) or of the line (at the opening); other labels at the opening
        need a separator or the end.
        """
        m = self.labels.head.match(self.text, pos)
        if not m:
            return []
        label_pos = self.labels.position(m.group("lab"))
        if label_pos is None or (m.group("open") and not m.group("close")):
            return []
        end = m.end()
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
            return [(label_pos, end)]
        if described[0] == label_pos:
            return [(label_pos, described[1])]
        return [(label_pos, end), (described[0], described[1])]

    def answer_at(self, pos: int, *, labels_too: bool = True) -> list[tuple[int, int]]:
        """Every answer named from `pos` on, skipping filler words and following "B or C"."""
        found: list[tuple[int, int]] = []
        pos = _PUNCT_SKIP.match(self.text, pos).end()  # type: ignore[union-attr]
        for _ in range(6):
            heads = self.label_at(pos) if labels_too else []
            end = heads[-1][1] if heads else -1
            if not heads:
                hit = self.option_at(pos)
                # An option after a cue must end there ("the capital" is not option "the"),
                # unless it continues a chain ("agree and disagree at once").
                if hit is not None and (found or _HEAD_OPTION_END.match(self.text, hit[1])):
                    heads, end = [hit], hit[1]
            if heads:
                found.extend((p, pos) for p, _ in heads)
                chain = _CHAIN.match(self.text, end)
                if not chain:
                    break
                pos = chain.end()
                labels_too = True
                continue
            if found:
                break
            skipped = _SKIP_WORD.match(self.text, pos) or _MODIFIER.match(self.text, pos)
            if not skipped:
                break
            pos = skipped.end()
        return found

    def _after(self, pattern: re.Pattern[str], pos: int) -> int | None:
        m = pattern.match(self.text, pos)
        return m.end() if m else None

    # -- clear answer statements -----------------------------------------------------------

    def cued(self) -> list[tuple[int, int]]:
        """Answers after a cue ("The answer is B") or a stance ("I strongly disagree")."""
        out = []
        for m in _CUE.finditer(self.text):
            out.extend(self.answer_at(m.end()))
        for m in _STANCE.finditer(self.text):
            out.extend(self.answer_at(m.end(), labels_too=False))
        return out

    def is_echo(self) -> bool:
        """True when the answer repeats the option list instead of choosing from it."""
        listed = {
            self.labels.position(m.group("lab")) for m in self.labels.list_line.finditer(self.text)
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

    def opening(self) -> list[tuple[int, int]]:
        """The answer's first words: a label or an option text standing alone."""
        if self.is_echo():
            return []
        pos = _LEAD_SKIP.match(self.text).end()  # type: ignore[union-attr]
        qa = _QA_CUE.match(self.text, pos)
        if qa:
            return self.answer_at(qa.end())
        heads = self.label_at(pos, opening=True)
        if heads:
            return [(p, pos) for p, _ in heads]
        hit = self.option_at(pos)
        if hit is None or not _OPENING_END.match(self.text, hit[1]):
            return []
        # "Paris (B)": an option text followed by a wrapped label names both.
        after = _SPACE.match(self.text, hit[1])
        tail = after.end() if after else hit[1]
        if self.text[tail : tail + 1] in ("(", "["):
            heads = self.label_at(tail)
            if heads:
                return [(hit[0], pos), (heads[0][0], tail)]
        return [(hit[0], pos)]

    # -- mentions in running text ----------------------------------------------------------

    def mentions(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """(verdicts such as "B is correct", plain mentions) anywhere in the text."""
        verdicts: list[tuple[int, int]] = []
        plain: list[tuple[int, int]] = []
        text = self.text
        found = []
        for m in self.labels.mention.finditer(text):
            kind = m.lastgroup
            surface = m.group(kind) if kind else None
            pos = self.labels.position(surface) if surface else None
            if surface is not None and pos is not None:
                found.append((kind, surface, pos, m.start(), m.end()))
        for i, (kind, surface, pos, start, end) in enumerate(found):
            if _VERDICT_GOOD.match(text, end):
                verdicts.append((pos, start))
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
            if _VERDICT_BAD.match(text, end) or _negated(text, start):
                continue
            plain.append((pos, start))
        if self.options.pattern is not None:
            for m in self.options.pattern.finditer(text):
                if not m.lastgroup:
                    continue
                pos = self.options.groups[m.lastgroup]
                if _VERDICT_GOOD.match(text, m.end()):
                    verdicts.append((pos, m.start()))
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
                if _VERDICT_BAD.match(text, m.end()) or _negated(text, m.start()):
                    continue
                plain.append((pos, m.start()))
        return verdicts, plain

    def _quoted(self, start: int, end: int) -> bool:
        before = self.text[start - 1] if start > 0 else ""
        after = self.text[end] if end < len(self.text) else ""
        return before in "\"'" and before != "" and after == before
