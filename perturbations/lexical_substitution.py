"""lexical_substitution: content words replaced by WordNet synonyms, checked for meaning.

Without a part-of-speech tagger (NLTK's tagger data cannot be fetched offline) a word's
sense is guessed from WordNet alone, conservatively:

1. Only lowercase alphabetic words of three letters or more are candidates (a capital
   is allowed at the start of a sentence only: a capitalised word mid-sentence is taken
   for a proper noun); words joined to digits, hyphens, slashes or brackets, words with
   apostrophes, function words (:data:`STOPWORDS`), negations (:data:`NEGATIONS`), the
   words that name the task (:data:`TASK_WORDS`: label, option, answer ...) and every
   word that occurs in any option text are never touched.
2. The word must be a WordNet lemma itself, with no reading as an inflected form of
   another lemma ("found" is also past tense of "find": skipped).  The one inflection
   handled is the regular ``-s``/``-es``/``-ies`` ending (plural nouns, third-person
   verbs): "planets" -> "planet" -> synonym + the same ending.
3. Its senses are ranked by SemCor lemma counts (``Lemma.count()``) over all parts of
   speech.  The most frequent sense is used only when it is clear: counted at least
   ``min_count`` times and holding at least ``dominance`` of the word's counts.
4. Synonyms are that sense's other single-word, lowercase lemmas of three letters or
   more that are attested in that sense (counted at least once, and at least
   ``synonym_share`` of the word's own count there) and for which that sense is also
   their own most frequent one ("area" -> "country" is refused: "country" mostly means
   a nation).

Each variant substitutes each eligible word with probability ``rate`` (at least one,
at most ``max_substitutions``), keeps capitalisation, and mends "a"/"an" before the new
word.  Every variant is then compared with the original (instruction and question,
before vs after) by sentence-embedding similarity and rejected below ``threshold``;
the similarity is recorded in the variant's params with the substitutions.

Where the context would make a synonym wrong, no tagger is needed to see it: after
"the"/"my"/"of" a word is no verb, after "they"/"should"/"don't" no noun, a verb
followed by a preposition keeps its own ("pertains to" is not "concerns to"), words
of a WordNet multi-word entry stay ("death penalty", "equilibrium constant"), and
synonyms that are derivations ("group" -> "grouping") or plural-only ("woods") are
dropped.

Threshold: 0.94 (cosine of all-MiniLM-L6-v2 embeddings of instruction + question),
chosen on the 674 items of ../shared/data with the default prompt:

- Judged by reading, 161 variants made with the default parameters (up to two for each
  of 107 random items with a replaceable word, made before the context, derivation and
  synonym-share rules existed): 60 changed
  the meaning or broke the grammar.  Similarity separates them only moderately
  (AUC 0.75; medians 0.990 good vs 0.968 bad).  Kept good / rejected bad: 99% / 10%
  at 0.90, 97% / 25% at 0.93, 96% / 35% at 0.94, 92% / 40% at 0.95, 80% / 53% at 0.97.
  0.94 is the knee.  Those rules then removed 41 of the 60 bad ones (and 26 good);
  of the 94 variants that survive them, 20% are bad, 10% after the threshold, which
  costs 2 of their 75 good ones.
- Single substitutions, one per word and synonym: the lexicon's own synonyms (n=305)
  pass 0.94 in 88% of cases (median 0.987); a synonym from another sense of the word
  (n=808) in 70%; a random content word from another item (n=478) in 58%; a WordNet
  antonym (n=40) in 93% (median 0.995, higher than synonyms).

So the embedding check removes drift and gross sense errors but cannot see antonyms
or fine sense errors: meaning is protected first by the conservative rules above, the
threshold is the second line.

Coverage is the price of that caution: with the defaults 28% of the shared items have
a replaceable word (0.36 words per item; ``min_count=3, dominance=0.5`` gives 34%, at
about 60% good additions by reading), and only about 3% have enough for five distinct
variants; the others get fewer, or none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from perturbations.base import Candidate, Family, register
from perturbations.similarity import Similarity, default_similarity, keep_similar
from robustness.items import Item
from robustness.prompts import PromptSpec

#: Default similarity threshold; see the module docstring for the evidence.
THRESHOLD = 0.94


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Function words: articles, pronouns, prepositions, conjunctions, auxiliaries,
#: quantifiers and the adverbs whose WordNet synonyms mislead ("very" -> "real").
STOPWORDS = _wordset("""
a an the this that these those there here what which who whom whose when where why how
whether whatever whichever whoever i me my mine myself we us our ours ourselves you your
yours yourself yourselves he him his himself she her hers herself it its itself they them
their theirs themselves one ones oneself someone somebody something anyone anybody anything
everyone everybody everything each every either both all any some many much more most
few fewer less least several such same other another own
and or but if then than because since unless until while whereas although though so as
also too very just even still yet already again ever always often sometimes usually rather
quite really almost about above across after against along among around at before behind
below beneath beside besides between beyond by down during for from in inside into like
near of off on onto out outside over past per round through throughout till to toward
towards under underneath up upon via with within
be am is are was were been being have has had having do does did doing done
can could may might must shall should will would ought need dare
get gets got make makes made let lets go goes went gone come came take took
thing things way ways lot lots kind sort type well back away next
yes okay ok etc e.g i.e vs
""")

#: Negations and words whose change could flip or blur a statement: never replaced.
NEGATIONS = _wordset("""
not no nor never none nothing neither nobody nowhere cannot without except only
hardly scarcely barely seldom rarely lack lacks lacking absent fail fails failed
""")

#: Words that name the task or the answer format (instruction and question alike).
TASK_WORDS = _wordset("""
label labels option options answer answers reply respond response question questions
statement statements choice choices choose select correct incorrect true false right
wrong agree agrees disagree disagrees agreement scale point points item items
read say says tell following below above
""")

_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
#: Characters allowed right before / after a replaceable word.
_BEFORE_OK = frozenset(' \t\n"“‘(')
_AFTER_OK = frozenset(" \t\n.,;:!?\"”’)'")
_VOWELS = frozenset("aeiou")
#: Endings whose plural is not the regular -s form ("foremen", "children", "analyses").
_IRREGULAR_PLURALS = (
    "man",
    "child",
    "foot",
    "tooth",
    "goose",
    "mouse",
    "louse",
    "person",
    "sis",
    "xis",
    "ion",
    "um",
)

#: A previous word that announces a noun (or its adjective), never a verb: "personal use".
NOUN_CUES = _wordset("the a an my your his her its our their this these those of every each")
#: A previous word that announces a verb, never a noun: "they use", "should help".
VERB_CUES = _wordset("i we you they he she will would can could should must may might shall")
#: Prepositions that may be bound to the verb before them ("pertain to", "aid in").
PREPOSITIONS = _wordset("to of on in for with from about at into onto upon over")


@dataclass(frozen=True)
class Synonyms:
    """What a word may become: the sense used and the ready-to-use replacement words."""

    sense: str
    words: tuple[str, ...]

    @property
    def pos(self) -> str:
        """WordNet part of speech of the sense: n, v, a, s (satellite adjective) or r."""
        return self.sense.split(".")[-2]


def _add_s(word: str) -> str:
    """The regular ``-s`` form (plural or third person) of ``word``."""
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if len(word) > 1 and word.endswith("y") and word[-2] not in _VOWELS:
        return word[:-1] + "ies"
    return word + "s"


def _s_bases(word: str) -> list[str]:
    """Base forms from which ``word`` would be the regular ``-s`` form."""
    bases = []
    if word.endswith("ies") and len(word) > 4:
        bases.append(word[:-3] + "y")
    if word.endswith("es") and len(word) > 4:
        bases.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        bases.append(word[:-1])
    return [b for b in bases if _add_s(b) == word]


class SynonymLexicon:
    """Tagger-free synonym lookup over NLTK's WordNet (rules in the module docstring).

    Lookups are cached per word; WordNet itself is loaded on the first lookup, once.
    """

    def __init__(
        self,
        min_count: int = 5,
        dominance: float = 0.6,
        synonym_share: float = 0.1,
        wordnet: Any = None,
    ) -> None:
        if min_count < 1:
            raise ValueError(f"min_count must be >= 1, got {min_count}")
        if not 0 < dominance <= 1:
            raise ValueError(f"dominance must be in (0, 1], got {dominance}")
        if not 0 <= synonym_share <= 1:
            raise ValueError(f"synonym_share must be in [0, 1], got {synonym_share}")
        self.min_count = min_count
        self.dominance = dominance
        self.synonym_share = synonym_share
        self._wn = wordnet
        self._cache: dict[str, Synonyms | None] = {}
        self._compounds: dict[str, bool] = {}

    @property
    def wordnet(self) -> Any:
        if self._wn is None:
            from perturbations.wordnet import load_wordnet

            self._wn = load_wordnet()
        return self._wn

    def _senses(self, lemma: str) -> list[tuple[Any, int]]:
        """(synset, count of ``lemma`` in it) for the synsets that hold ``lemma`` itself."""
        out = []
        for synset in self.wordnet.synsets(lemma):
            for lem in synset.lemmas():
                if lem.name() == lemma:
                    out.append((synset, lem.count()))
                    break
        return out

    def _analyse(self, word: str) -> tuple[str, bool] | None:
        """(lemma, has -s ending) when ``word`` has exactly one reading, else None."""
        synsets = self.wordnet.synsets(word)
        if not synsets:
            return None
        direct = [s for s in synsets if any(lem.name() == word for lem in s.lemmas())]
        if direct:
            return (word, False) if len(direct) == len(synsets) else None
        for base in _s_bases(word):
            if all(any(lem.name() == base for lem in s.lemmas()) for s in synsets):
                return base, True
        return None

    def _dominant(self, lemma: str) -> tuple[Any, int, int] | None:
        senses = self._senses(lemma)
        if not senses:
            return None
        total = sum(c for _, c in senses)
        synset, count = max(senses, key=lambda sc: sc[1])  # first of equals: WordNet order
        return synset, count, total

    def lookup(self, word: str) -> Synonyms | None:
        """Synonyms of lowercase ``word`` in its clear dominant sense, or None."""
        if word in self._cache:
            return self._cache[word]
        result = self._lookup(word)
        self._cache[word] = result
        return result

    def _lookup(self, word: str) -> Synonyms | None:
        if len(word) < 3 or not word.isalpha() or not word.islower():
            return None
        reading = self._analyse(word)
        if reading is None:
            return None
        lemma, inflected = reading
        best = self._dominant(lemma)
        if best is None:
            return None
        synset, count, total = best
        if count < self.min_count or count < self.dominance * total:
            return None
        words = []
        for lem in synset.lemmas():
            name = lem.name()
            if (
                name == lemma
                or len(name) < 3
                or not name.isalpha()
                or not name.islower()
                or name in STOPWORDS
                or name in NEGATIONS
                or lem.count() < max(1, self.synonym_share * count)
            ):
                continue
            if name.startswith(lemma) or (name.endswith("ing") and not lemma.endswith("ing")):
                continue  # "group" -> "grouping", "winter" -> "wintertime": derivations
            own = self._dominant(name)
            if own is None or own[0] != synset:
                continue
            if (
                name.endswith("s")
                and not name.endswith("ss")
                and (inflected or not lemma.endswith("s"))
            ):
                continue  # "authorities", "woods": a plural where the text has none
            if inflected and name.endswith(_IRREGULAR_PLURALS):
                continue  # "foreman" + s
            form = _add_s(name) if inflected else name
            if inflected and synset not in self.wordnet.synsets(form):
                continue
            words.append(form)
        if not words:
            return None
        return Synonyms(synset.name(), tuple(words))

    def is_compound(self, first: str, second: str) -> bool:
        """True when "first second" is a WordNet entry of its own ("death penalty")."""
        key = f"{first.lower()}_{second.lower()}"
        if key not in self._compounds:
            self._compounds[key] = bool(self.wordnet.synsets(key))
        return self._compounds[key]


@lru_cache(maxsize=8)
def default_lexicon(
    min_count: int = 5, dominance: float = 0.6, synonym_share: float = 0.1
) -> SynonymLexicon:
    """A lexicon shared in the process, so repeated studies look each word up once."""
    return SynonymLexicon(min_count=min_count, dominance=dominance, synonym_share=synonym_share)


def option_words(options: Any) -> frozenset[str]:
    """Every word of the option texts, lowercased."""
    return frozenset(w.lower() for o in options for w in _WORD.findall(o))


_PREV_WORD = re.compile(r"([A-Za-z]+(?:'[A-Za-z]+)?)[ \t]+$")
_NEXT_WORD = re.compile(r"[ \t]+([A-Za-z]+)")


def _neighbours(text: str, start: int, end: int) -> tuple[str, str]:
    """The words right before and after ``text[start:end]`` (lowercased; "" if none)."""
    before = _PREV_WORD.search(text[max(0, start - 40) : start])
    after = _NEXT_WORD.match(text, end)
    return (before.group(1).lower() if before else "", after.group(1).lower() if after else "")


def _context_fits(prev: str, nxt: str, pos: str) -> bool:
    """False when the neighbours say the sense's part of speech, or its frame, is wrong.

    A tagger's poor cousin: after "the"/"my"/"of" a word is no verb ("personal use" is
    not "personal employ"); after "they"/"should"/"don't" it is no noun; and a verb
    followed by a preposition is left alone, since its synonym may not take that
    preposition ("pertains to" -> "concerns to").
    """
    if pos == "v":
        return prev not in NOUN_CUES and nxt not in PREPOSITIONS
    if pos == "n":
        return prev not in VERB_CUES and not prev.endswith("n't")
    return True


def _at_sentence_start(text: str, start: int) -> bool:
    """True when only spaces, an opening quote or bracket, or nothing stand between the
    previous sentence end (``. ! ? | :``) or the start of the text and ``start``.

    Walks back from ``start`` over that short stretch only, so checking every word of a
    text costs time linear in its length (a search over ``text[:start]`` was quadratic:
    a 1 MB question took minutes).
    """
    i = start - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    if i >= 0 and text[i] in '"“‘(':
        i -= 1
        while i >= 0 and text[i].isspace():
            i -= 1
    return i < 0 or text[i] in ".!?|:"


@dataclass(frozen=True)
class Slot:
    """One replaceable word of a text: where it is and what it may become."""

    start: int
    end: int
    word: str
    sense: str
    synonyms: tuple[str, ...]


def find_slots(text: str, lexicon: SynonymLexicon, protected: frozenset[str]) -> list[Slot]:
    """The words of ``text`` that may be replaced, with their synonyms."""
    slots = []
    for m in _WORD.finditer(text):
        word = m.group()
        if "'" in word or len(word) < 3:
            continue
        if m.start() > 0 and text[m.start() - 1] not in _BEFORE_OK:
            continue
        if m.end() < len(text) and text[m.end()] not in _AFTER_OK:
            continue
        lower = word.lower()
        if lower in STOPWORDS or lower in NEGATIONS or lower in TASK_WORDS or lower in protected:
            continue
        if word != lower:
            capitalised = word[0].isupper() and word[1:].islower()
            if not capitalised or not _at_sentence_start(text, m.start()):
                continue
        found = lexicon.lookup(lower)
        if found is None:
            continue
        prev, nxt = _neighbours(text, m.start(), m.end())
        if not _context_fits(prev, nxt, found.pos):
            continue
        if (prev and lexicon.is_compound(prev, lower)) or (nxt and lexicon.is_compound(lower, nxt)):
            continue  # part of a fixed expression: "death penalty", "photoelectric effect"
        slots.append(Slot(m.start(), m.end(), word, found.sense, found.words))
    return slots


def _match_case(new: str, old: str) -> str:
    return new[:1].upper() + new[1:] if old[:1].isupper() else new


def _mend_article(prefix: str, old: str, new: str) -> str:
    """Turn a trailing "a"/"an" of ``prefix`` into the one ``new`` needs.

    Only when the article agreed with ``old`` by the vowel-letter rule, so exceptions
    the author wrote on purpose ("a unit", "an hour") stay as written.
    """
    m = re.search(r"(^|\s)(an?|An?)(\s+)$", prefix)
    if m is None:
        return prefix
    article = m.group(2)
    wants_an = {w: w[:1].lower() in _VOWELS for w in (old, new)}
    if (article.lower() == "an") != wants_an[old] or wants_an[old] == wants_an[new]:
        return prefix
    fixed = article[0] + ("n" if wants_an[new] else "")
    return prefix[: m.start(2)] + fixed + prefix[m.end(2) :]


def substitute(text: str, chosen: list[tuple[Slot, str]]) -> str:
    """``text`` with each chosen slot replaced by its new word (slots in text order)."""
    out = ""
    last = 0
    for slot, new in sorted(chosen, key=lambda c: c[0].start):
        prefix = out + text[last : slot.start]
        out = _mend_article(prefix, slot.word, new) + _match_case(new, slot.word)
        last = slot.end
    return out + text[last:]


@register
class LexicalSubstitution(Family):
    """WordNet synonyms for content words; variants below ``threshold`` similarity dropped.

    Parameters
    ----------
    rate
        Probability that each eligible word is replaced (at least one per variant).
    max_substitutions
        At most this many words replaced per variant.
    threshold
        Minimum similarity of instruction + question before vs after (default 0.94).
    min_count, dominance
        How clear a word's most frequent sense must be (module docstring, rule 3).
    synonym_share
        A synonym must be counted in the sense at least this share of the word's count.
    instruction
        Also replace words in the instruction (default True).
    similarity, lexicon
        The meaning checker (default: all-MiniLM-L6-v2, shared in the process) and the
        synonym lookup (default: WordNet with ``min_count``/``dominance``).
    """

    name = "lexical_substitution"

    def __init__(
        self,
        similarity: Similarity | None = None,
        lexicon: SynonymLexicon | None = None,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        rate = float(self.params["rate"])
        if not 0 < rate <= 1:
            raise ValueError(f"lexical_substitution rate must be in (0, 1], got {rate}")
        if int(self.params["max_substitutions"]) < 1:
            raise ValueError("lexical_substitution max_substitutions must be >= 1")
        self._similarity = similarity
        self.lexicon = lexicon or default_lexicon(
            int(self.params["min_count"]),
            float(self.params["dominance"]),
            float(self.params["synonym_share"]),
        )

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        return {
            "rate": 0.3,
            "max_substitutions": 3,
            "threshold": THRESHOLD,
            "min_count": 5,
            "dominance": 0.6,
            "synonym_share": 0.1,
            "instruction": True,
        }

    @property
    def similarity(self) -> Similarity:
        if self._similarity is None:
            self._similarity = default_similarity()
        return self._similarity

    def slots(self, spec: PromptSpec, item: Item) -> dict[str, list[Slot]]:
        """Replaceable words of the question (and the instruction), by part."""
        protected = option_words(item.options) | option_words(spec.options)
        parts = {"question": find_slots(spec.question, self.lexicon, protected)}
        if self.params["instruction"]:
            parts["instruction"] = find_slots(spec.instruction, self.lexicon, protected)
        return {k: v for k, v in parts.items() if v}

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        parts = self.slots(spec, item)
        flat = [(part, slot) for part, slots in parts.items() for slot in slots]
        if not flat:
            return
        rate = float(self.params["rate"])
        cap = int(self.params["max_substitutions"])
        while True:
            hit = np.flatnonzero(rng.random(len(flat)) < rate)
            if hit.size == 0:
                hit = np.array([int(rng.integers(0, len(flat)))])
            if hit.size > cap:
                hit = np.sort(rng.choice(hit, size=cap, replace=False))
            chosen: dict[str, list[tuple[Slot, str]]] = {}
            record = []
            for i in hit:
                part, slot = flat[int(i)]
                new = slot.synonyms[int(rng.integers(0, len(slot.synonyms)))]
                chosen.setdefault(part, []).append((slot, new))
                record.append(
                    {
                        "part": part,
                        "word": slot.word,
                        "to": _match_case(new, slot.word),
                        "sense": slot.sense,
                    }
                )
            changes = {part: substitute(getattr(spec, part), c) for part, c in chosen.items()}
            yield spec.with_(**changes), {"n_substitutions": len(record), "substitutions": record}

    def perturb(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, n: int
    ) -> list[Candidate]:
        """Up to ``n`` distinct candidates whose similarity to ``spec`` reaches the threshold."""
        return keep_similar(
            spec,
            self.candidates(spec, item, rng),
            n,
            self.similarity,
            float(self.params["threshold"]),
            max(1, n) * self.max_attempts_per_variant,
        )
