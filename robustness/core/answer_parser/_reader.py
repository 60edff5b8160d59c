"""One parse, part two: clear statements (cues, openings, closings, corrections) and mentions."""

from __future__ import annotations

from bisect import bisect_left

from robustness.core.answer_parser import _ascii
from robustness.core.answer_parser._heads import (
    LABEL,
    LISTED,
    MAX_MENTIONS,
    MAX_STATEMENTS,
    PLAIN,
    TEXT,
    _Heads,
)
from robustness.core.answer_parser._patterns import (
    _BRACKETED,
    _CHAIN,
    _CJK_CHAR,
    _CLOSING_LEAD,
    _CONCLUSION,
    _CORRECTION,
    _CORRECTION_SKIP,
    _CUE,
    _CUE_CJK,
    _CUE_OTHER,
    _HEDGE_CUE,
    _LAST_SENTENCE,
    _LEAD_SKIP,
    _LINE_END,
    _LINK,
    _LIST_NUMBER,
    _NEG_AGREE,
    _OPENING_END,
    _QA_CUE,
    _SENTENCE_STOP,
    _SPACE,
    _STANCE,
    _STRICT_END,
    _VERDICT_BAD,
    _VERDICT_GOOD,
)

__all__ = ["LABEL", "LISTED", "PLAIN", "TEXT", "_Reader"]

# cue kind, pattern, the pattern for a lower-cased ASCII text (re.IGNORECASE: same matches)
_CUES = (
    ("cue", _CUE, _ascii.CUE),
    ("other", _CUE_OTHER, _CUE_OTHER),
    ("hedge", _HEDGE_CUE, _ascii.HEDGE_CUE),
    ("conclusion", _CONCLUSION, _ascii.CONCLUSION),
)


class _Reader(_Heads):
    """One parse: the heads of :class:`_Heads` and the statements and mentions built on them."""

    # -- clear answer statements -----------------------------------------------------------

    def cued(self) -> list[tuple[int, int, int]]:
        """Answers after a cue ("The answer is B", "I think it's C") or a stance ("I agree").

        "I don't agree" is the scale's plain Disagree where it has exactly one.
        """
        out: list[tuple[int, int, int]] = []
        fast = self.ascii  # an ASCII text is scanned lower-cased, with the patterns of _ascii
        text = self._low if fast else self.text
        hints = self.hints
        patterns = [ascii_ if fast else model for kind, model, ascii_ in _CUES if kind in hints]
        if not fast and _CJK_CHAR.search(text):
            patterns.append(_CUE_CJK)
        for pattern in patterns:
            for k, m in enumerate(pattern.finditer(text)):
                if k == MAX_STATEMENTS:
                    break
                out.extend(self.answer_at(m.end()))
        if "stance" in hints:
            for k, m in enumerate((_ascii.STANCE if fast else _STANCE).finditer(text)):
                if k == MAX_STATEMENTS:
                    break
                out.extend(self.answer_at(m.end(), labels_too=False))
        if self.options.disagree is not None and "agree" in self._low:
            for m in (_ascii.NEG_AGREE if fast else _NEG_AGREE).finditer(text):
                out.append((self.options.disagree, m.start(), PLAIN))
        return out

    def corrections(
        self, clear: list[tuple[int, int, int]]
    ) -> tuple[int, list[tuple[int, int, int]]]:
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
        scan = (
            _ascii.CORRECTION.finditer(self._low) if self.ascii else _CORRECTION.finditer(self.text)
        )
        for k, m in enumerate(scan):
            if k == MAX_STATEMENTS:
                break
            after = _CORRECTION_SKIP.match(self.text, m.end()).end()  # type: ignore[union-attr]
            named = self.answer_at(after)
            tail = self.last_end
            if named and (
                not (_STRICT_END.match(self.text, tail) or _VERDICT_GOOD.match(self.text, tail))
                or self._question(tail)
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
        # an ASCII text is scanned lower-cased where the label set has scans for it
        _, list_line, inline = self.labels.scans(self.ascii)
        text = self._low if self.ascii and self.labels.ascii_core else self.text
        if "\n" in text:
            listed = {self.labels.position(m.group("lab")) for m in list_line.finditer(text)}
            if len(listed - {None}) >= 2:
                return True
        first_line = text.split("\n", 1)[0]
        marks = first_line.count(")") + first_line.count(".") + first_line.count("]")
        if marks + first_line.count(":") < 3:
            return False  # three list entries need three closing marks
        entries = {
            self.labels.position(m.group(m.lastgroup))
            for m in inline.finditer(first_line)
            if m.lastgroup
        }
        return len(entries - {None}) >= 3

    def closing(self) -> list[tuple[int, int, int]]:
        """The answer's last sentence when it is a label or an option text alone.

        "... I lean towards agreeing. 4." and "I almost never do this. Rarely." end in
        their answer; a text of one sentence is read by :meth:`opening` instead.
        """
        text = self.text
        m = _LAST_SENTENCE.search(text, max(0, len(text) - 48))
        if m is None or self.is_echo():
            return []
        pos = _CLOSING_LEAD.match(text, m.start()).end()  # type: ignore[union-attr]
        rest = text[pos:].rstrip(" .!\"')]")
        if not rest:
            return []
        end = pos + len(rest)
        line = text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip()
        if m.group()[0] in ".:)" and 0 < len(line) <= 4:
            return []  # "4. Madrid" ends a numbered list; it is not a closing answer
        head = self.labels.head_at(text, pos)
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
        first = self.text[:1]
        if first.isascii() and first.isalnum() and first.lower() not in "eocal":
            pos = 0  # no lead to skip: _LEAD_SKIP matches nothing here
        else:
            pos = _LEAD_SKIP.match(self.text).end()  # type: ignore[union-attr]
        qa = _QA_CUE.match(self.text, pos) if self.text.startswith("A", pos) else None
        if qa:
            return self.answer_at(qa.end())
        heads = self.label_at(pos, opening=True)
        if not heads:  # "B or C, I can't decide": a list needs no separator after its first
            m = self.labels.head_at(self.text, pos)
            label = self.labels.position(m.group("lab")) if m else None
            chain = _CHAIN.match(self.text, m.end()) if m and label is not None else None
            if (
                m is not None
                and label is not None
                and chain
                and (not m.group("open") or m.group("close"))
            ):
                more = self.answer_at(chain.end())
                if more and {p for p, _, _ in more} - {label}:
                    return [(p, off, role | LISTED) for p, off, role in [(label, pos, 0), *more]]
        if heads and self._question(heads[-1][1]):
            return []  # "B? I'm not sure." asks; it does not answer
        if heads:
            out = [(p, pos, role) for p, _, role in heads]
            chain = _CHAIN.match(self.text, heads[-1][1])
            if chain:  # "B, C" / "a) and d) both seem right": a list, not the first label
                more = self.answer_at(chain.end())
                if more and {p for p, _, _ in more} - {p for p, _, _ in out}:
                    out = [(p, off, role | LISTED) for p, off, role in out + more]
            return out
        hit = self.option_at(pos)
        if hit is None:
            return []
        chain = _CHAIN.match(self.text, hit[1])
        if chain:  # "Paris or London", "Strongly agree or strongly disagree - I can't tell"
            more = self.answer_at(chain.end())
            if more and {p for p, _, _ in more} - {hit[0]}:
                return [(p, off, role | LISTED) for p, off, role in [(hit[0], pos, 0), *more]]
        if not _OPENING_END.match(self.text, hit[1]) or self._question(hit[1]):
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
        return [(hit[0], pos, PLAIN)]

    def _question(self, end: int) -> bool:
        """Whether the sentence going on at `end` ends in a question mark ("Is it B?")."""
        if self._stops is None:
            self._stops = [m.start() for m in _SENTENCE_STOP.finditer(self.text)]
        k = bisect_left(self._stops, end)
        return k < len(self._stops) and self.text[self._stops[k]] == "?"

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
        mention = self.labels.scans(self.ascii)[0]  # as in _is_echo
        mentions = mention.finditer(self._low if self.ascii and self.labels.ascii_core else text)
        for k, m in enumerate(mentions):
            if k == MAX_MENTIONS:
                break
            kind = m.lastgroup
            surface = text[m.start(kind) : m.end(kind)] if kind else None
            pos = self.labels.position(surface) if surface else None
            if surface is not None and pos is not None:
                found.append((kind, surface, pos, m.start(), m.end()))
        # every verdict has a verdict word: an ASCII text without one has no verdict
        verdict = self._verdict if not self.ascii or "verdict" in self.hints else None
        for i, (kind, surface, pos, start, end) in enumerate(found):
            if verdict and verdict(end):
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
            if _VERDICT_BAD.match(text, end) or self.negated(start) or self._question(end):
                continue
            plain.append((pos, start, PLAIN))
        if self.options.pattern is not None:
            for k, m in enumerate(self.option_matches()):
                if k == MAX_MENTIONS:
                    break
                if not m.lastgroup:
                    continue
                pos = self.options.groups[m.lastgroup]
                if verdict and verdict(m.end()):
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
                if (
                    _VERDICT_BAD.match(text, m.end())
                    or self.negated(m.start())
                    or self._question(m.end())
                ):
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
