"""Where a text may change: guards on what a candidate source proposes; the substitution.

A form proposed by the source (:class:`.source.CandidateSource`; the lexicon proposes the
entries whose part of speech and context rules accept the neighbouring words) is
replaceable at a place of a text when every one of its words

- stands alone (no digit, slash, bracket or apostrophe joined to it; a hyphenated word
  such as "well-known" is one word, matched by a form written with its hyphen and never
  in part: "known" alone does not match inside it),
- is no negation (:data:`NEGATIONS`), no word naming the task (:data:`TASK_WORDS`; a
  word after the first of a form of :data:`PHRASE` or more words excepted: the lexicon
  vets such a frame as a whole) and no word of any option text (function words,
  :data:`FUNCTION_WORDS`, excepted); for a hyphenated word, neither is any of its parts,
- is lowercase, except a capitalised first word that opens a sentence (a capitalised
  word elsewhere is taken for a name) and the pronoun "I" ("I", "I'm", ...) anywhere but
  right after a capitalised word, where it is read as a Roman numeral ("Statement I would
  be true", "World War I"),

and a space or punctuation follows the form (no possessive "'s"). The source is asked only
at words that may open a form; a source that is not ``vetted`` has each pair checked against
WordNet too (no antonym or co-hyponym: :func:`.lint.opposition`).

A noun form (one word or more) that occurs more than once in a text names one thing: its
slots are tied (the family changes all of them or none, to the same substitute, in the
question and the instruction alike), and when one occurrence may not change (a possessive
"the student's", a guarded or capitalised one) none does, so "A student ... the student's
notes" never becomes "A learner ... the student's notes". A plural is another form.

The one exception to the negation guard is :data:`KEEPS_NEGATION`: a few forms holding a
negation ("no one") that may become a substitute listed there, each holding the same
negation in another word ("nobody"); any other substitute a source gives them is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from perturbations.lexical_substitution.source import (
    CURLY,
    WORD,
    CandidateSource,
    Proposal,
    Text,
    straight,
)

__all__ = [
    "FUNCTION_WORDS",
    "KEEPS_NEGATION",
    "NEGATIONS",
    "PHRASE",
    "TASK_WORDS",
    "Slot",
    "find_slots",
    "match_case",
    "option_words",
    "quoted_spans",
    "substitute",
    "tie_nouns",
]


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Negations and words whose change could flip or blur a statement: never replaced.
NEGATIONS = _wordset("""
not no nor never none nothing neither nobody nowhere cannot without except only
hardly scarcely barely seldom rarely lack lacks lacking absent fail fails failed
""")

#: Negation-bearing forms that may change, each with the only substitutes allowed: every one
#: keeps the negation in another word. The lexicon's context rules still apply ("no one" is
#: a pronoun only before a verb or the end of a clause: "no one answer" is not "nobody").
KEEPS_NEGATION: dict[str, frozenset[str]] = {
    "no one": frozenset({"nobody"}),
    "nobody": frozenset({"no one"}),
}

#: Words that name the task or the answer format (instruction and question alike).
TASK_WORDS = _wordset("""
label labels option options answer answers reply respond response question questions
statement statements choice choices choose select correct incorrect true false right
wrong agree agrees disagree disagrees agreement scale point points item items
read say says tell following below above
""")

#: A form of at least this many words may hold a task word after its first word ("which of
#: the following" -> "which of these"): the lexicon lists the phrase as a whole, so the word
#: is changed only in that frame (the task-word guard still holds for the first word).
PHRASE = 3

#: Characters allowed right before / after a replaceable form.
_BEFORE_OK = frozenset(' \t\n"“‘(')
_AFTER_OK = frozenset(" \t\n.,;:!?\"”’)'")
_VOWELS = frozenset("aeiou")
_STRAIGHT = re.compile(r"(?<=[A-Za-z])'(?=[A-Za-z])")


#: Function words that stay free to change even when an option text contains them: an
#: option saying "a gas" does not make every "a" or "of" of the question part of its answer.
FUNCTION_WORDS = _wordset("""
a an the this that these those what which who whom whose when where why how whether if
i me my we us our you your he him his she her it its they them their one
and or but so as than then because since although though while until till
of in on at to for from by with about into onto upon over under between among through via
is are was were be been being am have has had do does did can could may might must shall
should will would ought need
""")


def quoted_spans(text: str, options: Any) -> list[tuple[int, int]]:
    """Where ``text`` quotes an option text of two words or more (case-insensitive): those
    spans stay as they are, function words included, so a question that repeats an option
    ("The government should ...") still matches it after the substitution. An apostrophe
    inside a word matches in either style ("shouldn’t" quotes "shouldn't")."""
    text = straight(text)  # same length: the spans are positions in the text as written
    low = text.lower()
    fold = len(low) == len(text)  # else a letter whose lower case is longer ("İ"): as written
    if not fold:
        low = text
    spans = []
    for option in options:
        needle = " ".join(straight(str(option)).split()).rstrip(".")
        needle = needle.lower() if fold else needle
        if len(WORD.findall(needle)) < 2:
            continue
        start = low.find(needle)
        while start >= 0:
            spans.append((start, start + len(needle)))
            start = low.find(needle, start + 1)
    return spans


def option_words(options: Any) -> frozenset[str]:
    """Every word of the option texts, lowercased, less :data:`FUNCTION_WORDS`; a
    hyphenated word counts whole and by its parts ("long-term": "long-term", "long", "term")."""
    words = {w.lower() for o in options for w in WORD.findall(straight(str(o)))}
    words |= {part for w in words if "-" in w for part in w.split("-")}
    return frozenset(words) - FUNCTION_WORDS


def _possessive(text: str, end: int) -> bool:
    """True when an apostrophe and a letter follow ``end``: "people’s" stays as written."""
    return text[end] in "'’" and end + 1 < len(text) and text[end + 1].isalpha()


@dataclass(frozen=True)
class Slot:
    """One replaceable form of a text: where it is and what it may become."""

    start: int
    end: int
    word: str
    entry: str
    synonyms: tuple[str, ...]
    #: True when a noun entry matched: :func:`tie_nouns` looks at it.
    noun: bool = False
    #: True for a noun form that occurs again in the text: its slots change together.
    tied: bool = False


def _parts(word: str) -> list[str]:
    """The lowercase word and, when hyphenated, each of its parts."""
    lower = word.lower()
    return [lower, *lower.split("-")] if "-" in lower else [lower]


def _free(word: str, protected: frozenset[str]) -> bool:
    return not any(p in NEGATIONS or p in TASK_WORDS or p in protected for p in _parts(word))


def _free_in_phrase(word: str, protected: frozenset[str]) -> bool:
    """Like :func:`_free`, but a task word is allowed: the phrase is vetted as a whole."""
    return not any(p in NEGATIONS or p in protected for p in _parts(word))


def _free_but_negation(word: str, protected: frozenset[str]) -> bool:
    """Like :func:`_free`, but a negation is allowed (forms of :data:`KEEPS_NEGATION`)."""
    return not any(p in TASK_WORDS or p in protected for p in _parts(word))


def _pronoun_i(word: str) -> bool:
    """True for the pronoun "I" and its contractions ("I'm", "I'd"): capitalised, no name."""
    return word == "I" or (word[:2] == "I'" and word[2:].islower())


def _numeral_i(text: str, tokens: list[re.Match[str]], i: int) -> bool:
    """True when token ``i`` is "I" right after a capitalised word ("Statement I", "World War
    I", "Henry I"): a Roman numeral there, not the pronoun, so it opens no form."""
    if i == 0 or not _pronoun_i(tokens[i].group()):
        return False
    before = tokens[i - 1]
    return text[before.end() : tokens[i].start()] == " " and before.group()[:1].isupper()


def _match_words(text: str, tokens: list[re.Match[str]], i: int, n: int) -> bool:
    """True when tokens i..i+n-1 are lowercase-or-first words joined by single spaces."""
    if i + n > len(tokens):
        return False
    for k in range(i + 1, i + n):
        word = tokens[k].group()
        if text[tokens[k - 1].end() : tokens[k].start()] != " " or not (
            word.islower() or _pronoun_i(word)
        ):
            return False
    return True


def _opener(text: Text, i: int, protected: frozenset[str]) -> bool | None:
    """Whether a form may open at word ``i``: None when none may (a guarded word, a word
    joined to the character before it, a Roman numeral "I", a capitalised word inside a
    sentence), True when only a form of :data:`KEEPS_NEGATION` may (a negation that is no
    option word), False when any may."""
    m = text.words[i]
    word = m.group()
    lower = word.lower()
    if _free(word, protected):
        only_keeps = False
    elif lower in NEGATIONS and lower not in protected and lower not in TASK_WORDS:
        only_keeps = True
    else:
        return None
    start = m.start()
    if (start > 0 and text.text[start - 1] not in _BEFORE_OK) or _numeral_i(
        text.text, text.words, i
    ):
        return None
    if word != lower and not _pronoun_i(word):
        capitalised = word[0].isupper() and word[1:].islower()
        if not (capitalised and text.at_start(i)):
            return None
    return only_keeps


def _guarded(
    text: Text,
    i: int,
    proposal: Proposal,
    protected: frozenset[str],
    only_keeps: bool,
    opposite: Callable[[str, str, str], bool] | None,
) -> list[str]:
    """The substitutes of ``proposal`` (a form opening at word ``i``) that the guards let
    through: none when a later word of the form is guarded, the form is not written as
    lowercase words joined by single spaces, or it is joined to the character after it or is
    a possessive; for a form of :data:`KEEPS_NEGATION`, only the substitutes listed there;
    with ``opposite``, none that it calls an opposite of the form."""
    n = proposal.size
    if not _match_words(text.text, text.words, i, n):
        return []
    words = text.lower(i, n)
    form = " ".join(words)
    keeps = KEEPS_NEGATION.get(form)
    if only_keeps and keeps is None:
        return []
    free = _free_but_negation if keeps is not None else _free_in_phrase if n >= PHRASE else _free
    if not all(free(w, protected) for w in words[1:]):
        return []
    end = text.words[i + n - 1].end()
    if end < len(text.text) and (text.text[end] not in _AFTER_OK or _possessive(text.text, end)):
        return []
    news = [s for s in proposal.substitutes if keeps is None or s in keeps]
    if opposite is not None:
        news = [s for s in news if not opposite(form, s, proposal.pos)]
    return news


def find_slots(
    text: str, source: CandidateSource, protected: frozenset[str], tie: bool = True
) -> list[Slot]:
    """The forms of ``text`` that may be replaced (rules in the module docstring), as
    proposed by ``source`` (a :class:`.lexicon.Lexicon` or any other candidate source).

    Forms do not overlap: at each word the longest proposal the guards let through is taken
    (with every other proposal of its size, in order), and the search resumes after it. A
    typographic apostrophe inside a word counts as "'". A source that is not ``vetted`` has
    its pairs checked against WordNet here (:func:`.lint.opposition`). With ``tie`` false,
    repeated nouns are left for the caller's :func:`tie_nouns` over several texts.
    """
    view = Text(text)
    words = view.words
    opposite = None if source.vetted else _wordnet_opposite
    slots: list[Slot] = []
    i = 0
    while i < len(words):
        only_keeps = _opener(view, i, protected)
        found: list[str] = []
        size = 0
        noun = False
        for proposal in () if only_keeps is None else source.propose(view, i):
            if size and proposal.size != size:
                break  # a longer form matched: shorter ones are not mixed in
            news = _guarded(view, i, proposal, protected, bool(only_keeps), opposite)
            if news:
                size = proposal.size
                noun = noun or proposal.pos == "n"
                found.extend(s for s in news if s not in found)
        if found:
            start, end = words[i].start(), words[i + size - 1].end()
            label = " ".join(view.lower(i, size))
            slots.append(Slot(start, end, text[start:end], label, tuple(found), noun))
        i += size or 1
    return tie_nouns([view.text], [slots])[0] if tie else slots


@lru_cache(maxsize=65536)
def _wordnet_opposite(form: str, substitute: str, pos: str) -> bool:
    """True when WordNet calls ``substitute`` an antonym or co-hyponym of ``form``
    (:func:`.lint.opposition`; WordNet is loaded on the first call)."""
    from perturbations.lexical_substitution.lint import opposition
    from perturbations.wordnet import load_wordnet

    return opposition(load_wordnet(), form, substitute, pos) is not None


def tie_nouns(texts: list[str], slot_lists: list[list[Slot]]) -> list[list[Slot]]:
    """``slot_lists`` (the slots of each of ``texts``) with every noun form that occurs more
    than once in all the texts together (a possessive counts) tied when each occurrence is a
    slot with the same substitutes, and dropped otherwise (module docstring). A plural is
    another form: "student" and "students" tie apart."""
    low = [t.lower() for t in texts]
    groups: dict[str, list[Slot]] = {}
    for slots in slot_lists:
        for slot in slots:
            if slot.noun:
                groups.setdefault(slot.entry, []).append(slot)
    tied: dict[str, bool] = {}
    for form, group in groups.items():
        words = r"\s+".join(re.escape(w) for w in form.split())
        pattern = re.compile(rf"(?<![A-Za-z'-]){words}(?![A-Za-z-])")
        count = sum(len(pattern.findall(t)) for t in low)
        if count <= 1:
            tied[form] = False  # one occurrence: nothing to tie
        elif len(group) == count and len({g.synonyms for g in group}) == 1:
            tied[form] = True
    return [
        [
            replace(slot, tied=tied[slot.entry]) if slot.noun else slot
            for slot in slots
            if not slot.noun or slot.entry in tied
        ]
        for slots in slot_lists
    ]


_LOWER_I = re.compile(r"(?<![A-Za-z'])i(?=$|[ '])")


def match_case(new: str, old: str) -> str:
    """``new`` with a capital first letter when ``old`` has one, and "I" capitalised."""
    new = _LOWER_I.sub("I", new)
    return new[:1].upper() + new[1:] if old[:1].isupper() else new


#: Word starts spoken with a consonant though written with a vowel ("a unit", "a one-off",
#: "a European"), less the "un-" words among them ("an unintended"), and starts spoken
#: with a vowel though written with "h" ("an hour").
_YOU_SOUND = (
    *("use", "usa", "usu", "uti", "uni", "ure", "uri", "uro", "ura", "uto", "ute", "unan"),
    *("unary", "eu", "ewe", "ubiq", "once", "one-", "u-"),
)
_UN_SOUND = ("unin", "unim", "unide", "unann", "unans")
_SILENT_H = ("hour", "honest", "honor", "honour", "heir")


def _wants_an(word: str) -> bool:
    """True when ``word`` takes "an": it starts with a vowel sound (by its spelling)."""
    w = word.lower()
    if w.startswith(_SILENT_H):
        return True
    if w == "one" or (w.startswith(_YOU_SOUND) and not w.startswith(_UN_SOUND)):
        return False
    return w[:1] in _VOWELS


def _mend_article(prefix: str, old: str, new: str) -> str:
    """Turn a trailing "a"/"an" of ``prefix`` into the one ``new`` needs.

    Only when the article agreed with ``old`` by :func:`_wants_an`, so an article the
    author chose otherwise stays as written.
    """
    m = re.search(r"(^|\s)(an?|An?)(\s+)$", prefix)
    if m is None:
        return prefix
    article = m.group(2)
    wants_an = {w: _wants_an(w) for w in (old, new)}
    if (article.lower() == "an") != wants_an[old] or wants_an[old] == wants_an[new]:
        return prefix
    fixed = article[0] + ("n" if wants_an[new] else "")
    return prefix[: m.start(2)] + fixed + prefix[m.end(2) :]


def substitute(text: str, chosen: list[tuple[Slot, str]]) -> str:
    """``text`` with each chosen slot replaced by its new form (slots in text order); an
    apostrophe of the new form is typographic when the text writes them so."""
    curly = bool(CURLY.search(text)) and not _STRAIGHT.search(text)
    out = ""
    last = 0
    for slot, new in sorted(chosen, key=lambda c: c[0].start):
        prefix = out + text[last : slot.start]
        shown = match_case(new, slot.word)
        shown = shown.replace("'", "\u2019") if curly else shown
        out = _mend_article(prefix, slot.word, new) + shown
        last = slot.end
    return out + text[last:]
