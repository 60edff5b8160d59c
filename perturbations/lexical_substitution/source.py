"""Where candidate substitutions come from: one small interface, and the text it reads.

A :class:`CandidateSource` proposes, for one word of a text, the forms that may open there
and what each may become (:class:`Proposal`, longest form first). It knows nothing of the
guards: :func:`.slots.find_slots` asks it only at words the guards leave free and applies
every guard to every proposal (negations, task words, option words, names, numbers and
joined characters, possessives, the noun tie; and, for a source that is not ``vetted``,
WordNet antonyms and co-hyponyms). The lexicon (:class:`.lexicon.Lexicon`) is the source
today; a model-based proposer through any runner is one more class with the same two
members: it may read the whole text once (``text.written``, ``text.words``) and answer for
each word from what it read.

:class:`Text` is a text as sources and guards read it: typographic apostrophes inside words
made straight (same length, so positions are those of the text as written), its words found
once, and the neighbours a context rule looks at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["WORD", "CandidateSource", "Proposal", "Text", "at_sentence_start", "straight"]

#: A word: letters, inner hyphens between letters ("self-esteem", "up-to-date") and one
#: contraction ("don't", "it's"). A hyphen before a digit ("COVID-19") ends the word.
WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*(?:'[A-Za-z]+)?")
#: A typographic apostrophe inside a word ("It’s", "don’t"): read as "'" so that the
#: lexicon's contractions match; a substitute is written back in the text's own style.
CURLY = re.compile(r"(?<=[A-Za-z])\u2019(?=[A-Za-z])")
_PREV_WORD = re.compile(r"([A-Za-z]+(?:-[A-Za-z]+)*(?:'[A-Za-z]+)?)[ \t]+$")
_NEXT_WORD = re.compile(r"[ \t]+([A-Za-z]+(?:-[A-Za-z]+)*(?:'[A-Za-z]+)?)")


def straight(text: str) -> str:
    """``text`` with every apostrophe inside a word straight (same length, same positions)."""
    return CURLY.sub("'", text) if "\u2019" in text else text


def at_sentence_start(text: str, start: int) -> bool:
    """True when only spaces, an opening quote or bracket, or nothing stand between the
    previous sentence end (``. ! ? | :``) or the start of the text and ``start``.

    Walks back from ``start`` over that short stretch only, so checking every word of a
    text costs time linear in its length.
    """
    i = start - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    if i >= 0 and text[i] in '"“‘(':
        i -= 1
        while i >= 0 and text[i].isspace():
            i -= 1
    return i < 0 or text[i] in ".!?|:"


class Text:
    """A text read once: ``written`` as given, ``text`` with straight apostrophes, ``words``
    (the :data:`WORD` matches of ``text``, in order)."""

    __slots__ = ("text", "words", "written")

    def __init__(self, written: str) -> None:
        self.written = written
        self.text = straight(written)
        self.words: list[re.Match[str]] = list(WORD.finditer(self.text))

    def lower(self, i: int, n: int) -> tuple[str, ...]:
        """Words ``i`` .. ``i + n - 1``, lowercase."""
        return tuple(t.group().lower() for t in self.words[i : i + n])

    def at_start(self, i: int) -> bool:
        """True when word ``i`` opens a sentence (:func:`at_sentence_start`)."""
        return at_sentence_start(self.text, self.words[i].start())

    def neighbours(self, i: int, n: int) -> tuple[str, str]:
        """The words right before word ``i`` and right after word ``i + n - 1`` (lowercased;
        "" when punctuation or the text's edge stands there)."""
        start, end = self.words[i].start(), self.words[i + n - 1].end()
        before = _PREV_WORD.search(self.text[max(0, start - 40) : start])
        after = _NEXT_WORD.match(self.text, end)
        return (before.group(1).lower() if before else "", after.group(1).lower() if after else "")

    def opening(self, i: int, reach: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The lowercase words of the sentence holding word ``i``, before it: (its opening,
        none when the sentence start lies more than ``reach`` words back; the last ``reach``
        words before ``i`` in the sentence, whatever its length)."""
        low = max(0, i - reach)
        for k in range(i, low - 1, -1):
            if at_sentence_start(self.text, self.words[k].start()):
                words = self.lower(k, i - k)
                return words, words
        return (), self.lower(low, i - low)


@dataclass(frozen=True)
class Proposal:
    """A form of ``size`` words, opening at the word asked about, and its ``substitutes`` in
    the order the source gives them (a seeded draw picks among them); ``pos`` is the part of
    speech (:data:`.lexicon.POS`): a noun ("n") is tied across a text, and the run-time
    WordNet check reads synsets of that part of speech ("x": any)."""

    size: int
    substitutes: tuple[str, ...]
    pos: str = "x"


class CandidateSource(Protocol):
    """What the family asks for substitutes: a lexicon today, a model-based proposer later."""

    #: True when every pair the source can propose passed the WordNet check of :mod:`.lint`
    #: ahead of time (a fixed list, as the lexicon is in the test suite): the family then skips
    #: that check at run time. A source with open-ended pairs (a model) says False.
    vetted: bool

    def propose(self, text: Text, at: int) -> Iterable[Proposal]:
        """The proposals for forms that open at word ``at`` of ``text``, longest form first
        (several of one size are joined, in order; a shorter one is read only when no longer
        one passes the guards, so a lazy iterator is enough)."""
        ...
