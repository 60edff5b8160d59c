"""The substitution lexicon: the project's own list of context-safe replacements.

The file (``lexicon.tsv`` next to this module) has one paradigm a line, four
tab-separated columns; ``#`` starts a comment line::

    pos    forms                      substitutes                              context
    v      require requires required  need needs needed | demand demands ...   !next=to

- ``pos``: ``n``, ``v``, ``a`` (adjective), ``r`` (adverb) or ``x`` (phrase or other).
  A ``v`` entry is refused right after a word that announces a noun (:data:`NOUN_CUES`:
  "the", "my", "of"), an ``n`` entry right after one that announces a verb
  (:data:`VERB_CUES`: "they", "should", and any word ending in "n't").
- ``forms``: the surface forms, space-separated, inflected forms listed explicitly;
  ``_`` joins the words of a multi-word form ("such_as"); a hyphenated word is written
  with its hyphen ("well-known") and matches only that whole word.
- ``substitutes``: one or more paradigms separated by ``|``, each with exactly as many
  words as ``forms``, form for form; ``_`` again joins words.
- ``context`` (optional): space-separated constraints on the neighbouring words, all of
  which must hold: ``prev=a,b`` (the word before is one of these; an empty item, as in
  ``prev=,a``, stands for no word, i.e. punctuation or the start of the text),
  ``!prev=a,b`` (it is none of these), ``next=...`` and ``!next=...`` likewise for the
  word after, ``!near=a,b`` (none of the :data:`NEAR` words after the form is one of
  these: "which of the following are" is plural), ``near=a,b`` (one of them is),
  ``start`` (the form opens a sentence) and ``!start`` (it does not), and ``opens=a_b,c``
  (the sentence holding the form, before the form, opens with one of these words or
  phrases, ``_`` joining words: ``are_in`` -> ``are_there_in`` only in a sentence that
  opens with "how many"), and ``!before=a,b`` (none of these words stands before the form
  in its sentence, within ``3 * NEAR`` words: ``should`` -> ``ought to`` is refused after
  "that" in "it is better that people should"). An item ``*ed`` matches every word
  ending in "ed". Words are compared lowercase: ``!prev=FBI`` is ``!prev=fbi``.

A :class:`Lexicon` is a candidate source (:class:`.source.CandidateSource`): at a word of a
text it proposes every entry whose form starts there and whose part of speech and context
rules accept the neighbouring words. The guards are not its business (:mod:`.slots`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from perturbations.lexical_substitution.source import Proposal, Text
from robustness.core.errors import StudyError

__all__ = [
    "DEFAULT_PATH",
    "NEAR",
    "NOUN_CUES",
    "POS",
    "VERB_CUES",
    "Context",
    "Entry",
    "Lexicon",
    "default_lexicon",
    "pos_fits",
]

#: The lexicon shipped with the package.
DEFAULT_PATH = Path(__file__).with_name("lexicon.tsv")
#: Parts of speech a line may name.
POS = ("n", "v", "a", "r", "x")
#: How many words after a form a ``!near=`` rule looks at.
NEAR = 8


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: A previous word that announces a noun (or its adjective), never a verb: "personal use".
NOUN_CUES = _wordset("the a an my your his her its our their this these those of every each")
#: A previous word that announces a verb, never a noun: "they use", "should help".
VERB_CUES = _wordset("i we you they he she will would can could should must may might shall")


def pos_fits(pos: str, prev: str) -> bool:
    """False for a verb entry after a :data:`NOUN_CUES` word and a noun entry after a
    :data:`VERB_CUES` word or a word ending in "n't"."""
    if pos == "v":
        return prev not in NOUN_CUES
    if pos == "n":
        return prev not in VERB_CUES and not prev.endswith("n't")
    return True


#: One item of an ``opens=`` rule: lowercase words joined by "_".
_OPENS_ITEM = re.compile(r"[a-z]+(?:'[a-z]+)?(?:_[a-z]+(?:'[a-z]+)?)*")


def _member(word: str, words: frozenset[str]) -> bool:
    return word in words or any(w[:1] == "*" and word.endswith(w[1:]) and word for w in words)


@dataclass(frozen=True)
class Context:
    """Constraints on the words around a form (see the module docstring)."""

    prev: frozenset[str] | None = None
    not_prev: frozenset[str] = frozenset()
    next: frozenset[str] | None = None
    not_next: frozenset[str] = frozenset()
    not_near: frozenset[str] = frozenset()
    near: frozenset[str] | None = None
    start: bool = False
    not_start: bool = False
    opens: frozenset[tuple[str, ...]] | None = None
    not_before: frozenset[str] = frozenset()

    @property
    def reads_sentence(self) -> bool:
        """True when a rule needs the words of the sentence before the form."""
        return self.opens is not None or bool(self.not_before)

    def fits(
        self,
        prev: str,
        nxt: str,
        at_start: bool,
        following: tuple[str, ...] = (),
        opening: tuple[str, ...] = (),
        recent: tuple[str, ...] = (),
    ) -> bool:
        """True when the neighbours ``prev`` and ``nxt`` ("" for none), the words
        ``following`` the form, the words ``opening`` its sentence before it and the
        ``recent`` words before it in its sentence (all lowercase) satisfy every rule."""
        if (self.start and not at_start) or (self.not_start and at_start):
            return False
        if self.opens is not None and not any(opening[: len(p)] == p for p in self.opens):
            return False
        if any(w in self.not_before for w in recent):
            return False
        if self.near is not None and not any(w in self.near for w in following[:NEAR]):
            return False
        if self.prev is not None and not _member(prev, self.prev):
            return False
        if self.next is not None and not _member(nxt, self.next):
            return False
        if any(w in self.not_near for w in following[:NEAR]):
            return False
        return not _member(prev, self.not_prev) and not _member(nxt, self.not_next)


@dataclass(frozen=True)
class Entry:
    """One surface form with its substitutes, as read from one line of the lexicon."""

    words: tuple[str, ...]
    pos: str
    substitutes: tuple[str, ...]
    context: Context
    line: int

    @property
    def form(self) -> str:
        return " ".join(self.words)


def _parse_context(text: str, where: str) -> Context:
    fields: dict[str, object] = {}
    for token in text.split():
        if token in ("start", "!start"):
            fields["start" if token == "start" else "not_start"] = True
            continue
        key, sep, value = token.partition("=")
        names = {
            "prev": "prev",
            "!prev": "not_prev",
            "next": "next",
            "!next": "not_next",
            "!near": "not_near",
            "near": "near",
            "opens": "opens",
            "!before": "not_before",
        }
        if not sep or key not in names:
            raise StudyError(
                f"{where}: unknown context rule {token!r}; use prev=, !prev=, next=, !next=, "
                "near=, !near=, opens=, !before=, start or !start."
            )
        field = names[key]
        if field == "opens":
            phrases = frozenset(tuple(p.split("_")) for p in value.split(","))
            bad = [p for p in value.split(",") if not _OPENS_ITEM.fullmatch(p)]
            if bad:
                raise StudyError(
                    f"{where}: opens= takes lowercase words or phrases joined by '_', "
                    f"separated by ',' (as in opens=how_many,why), not {bad[0]!r} in {token!r}."
                )
            old = fields.get(field)
            fields[field] = phrases | old if isinstance(old, frozenset) else phrases
            continue
        words = frozenset(value.lower().split(","))  # neighbours are compared lowercase
        old = fields.get(field)
        fields[field] = words | old if isinstance(old, frozenset) else words  # repeated: union
    return Context(**fields)  # type: ignore[arg-type]


def parse_line(text: str, number: int, source: str = "lexicon.tsv") -> list[Entry]:
    """The entries of one lexicon line (none for a blank or comment line).

    Raises
    ------
    StudyError
        When the line has too few columns, an unknown part of speech or context rule,
        or a substitute paradigm whose length differs from the forms'.
    """
    where = f"{source}, line {number}"
    if not text.strip() or text.lstrip().startswith("#"):
        return []
    cols = text.rstrip("\n").split("\t")
    if len(cols) < 3 or len(cols) > 4:
        raise StudyError(f"{where}: expected 3 or 4 tab-separated columns, got {len(cols)}.")
    pos, forms, subs = cols[0].strip(), cols[1].split(), cols[2]
    if pos not in POS:
        raise StudyError(f"{where}: unknown part of speech {pos!r}; use one of {', '.join(POS)}.")
    context = _parse_context(cols[3] if len(cols) == 4 else "", where)
    paradigms = [p.split() for p in subs.split("|")]
    for paradigm in paradigms:
        if len(paradigm) != len(forms):
            raise StudyError(
                f"{where}: {len(forms)} forms but {len(paradigm)} substitutes in {paradigm}."
            )
    out = []
    for i, form in enumerate(forms):
        news = tuple(dict.fromkeys(p[i].replace("_", " ") for p in paradigms if p[i] != form))
        words = tuple(form.lower().split("_"))
        out.append(Entry(words, pos, news, context, number))
    return out


class Lexicon:
    """Surface forms and their substitutes, indexed by first word (lowercase).

    Parameters
    ----------
    entries
        The entries, e.g. from :meth:`from_file`; several entries may share a form (each
        with its own context): the substitutes of every entry whose context fits are used.
    """

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.by_first: dict[str, list[Entry]] = {}
        for entry in entries:
            self.by_first.setdefault(entry.words[0], []).append(entry)
        for group in self.by_first.values():
            group.sort(key=lambda e: -len(e.words))  # longest form first

    @classmethod
    def from_file(cls, path: Path | str = DEFAULT_PATH) -> Lexicon:
        """Read a lexicon file (format in the module docstring)."""
        path = Path(path)
        entries: list[Entry] = []
        with path.open(encoding="utf-8") as fh:
            for number, text in enumerate(fh, start=1):
                entries.extend(parse_line(text, number, path.name))
        return cls(entries)

    #: The lexicon's pairs pass the WordNet check of :mod:`.lint` in the test suite.
    vetted = True

    def candidates(self, first: str) -> list[Entry]:
        """The entries whose form starts with the lowercase word ``first``, longest first."""
        return self.by_first.get(first, [])

    def propose(self, text: Text, at: int) -> Iterator[Proposal]:
        """The entries whose form is words ``at`` ... of ``text`` and whose part of speech
        and context rules accept its neighbours, longest first (read lazily)."""
        words = text.words
        for entry in self.by_first.get(words[at].group().lower(), ()):
            n = len(entry.words)
            if at + n > len(words) or text.lower(at, n) != entry.words:
                continue
            prev, nxt = text.neighbours(at, n)
            if not pos_fits(entry.pos, prev):
                continue
            context = entry.context
            following = text.lower(at + n, NEAR)
            opening, recent = text.opening(at, 3 * NEAR) if context.reads_sentence else ((), ())
            if context.fits(prev, nxt, text.at_start(at), following, opening, recent):
                yield Proposal(n, entry.substitutes, entry.pos)

    def pairs(self) -> list[tuple[str, str, str]]:
        """Every (form, substitute, pos) pair of the lexicon, for checks."""
        return [(e.form, s, e.pos) for e in self.entries for s in e.substitutes]


@lru_cache(maxsize=4)
def default_lexicon(path: str = str(DEFAULT_PATH)) -> Lexicon:
    """The lexicon read once per process."""
    return Lexicon.from_file(path)
