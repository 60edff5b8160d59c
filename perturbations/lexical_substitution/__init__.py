"""lexical_substitution: words and short phrases replaced from the project's own lexicon.

The substitutes come from ``lexicon.tsv`` (format: :mod:`.lexicon`), a list written for
this project from general knowledge of English: surface forms of common exam and survey
vocabulary ("approximately" -> "roughly", "Which of the following" -> "Which one of the
following", "require" -> "need") with inflected forms listed explicitly, each substitute
meant to keep meaning and grammar wherever the form occurs, or limited by context rules
on the neighbouring words where it would not ("likely" -> "probable" only before a noun
such as "cause" or at the end of a clause). Words whose synonyms depend on their sense
are left out. No tagger, inflection engine or model is used.

Guards (:mod:`.slots`): option texts, labels and numbers are never touched, nor negations
(one exception: "no one" <-> "nobody", which keeps the negation in another word,
:data:`.slots.KEEPS_NEGATION`), words naming the task, words of any option text,
capitalised words inside a sentence (names; the pronoun "I" excepted, unless it follows a
capitalised word: "Statement I") or possessives; a hyphenated word ("well-known") is one
word, matched only whole and guarded by its parts; a noun form that occurs twice in a text
changes everywhere, to the same word, or nowhere ("A student ... the student's notes" keeps
both; "student" and "students" are two forms and tie apart); "a"/"an" is mended by the
sound of the new word ("a used car", "an hour") and capitalisation kept; an apostrophe
written ’ inside a word reads as ' ("It’s"), and a new one follows the text's style. A
variant replaces each replaceable form with probability ``rate`` (at least one, at most
``max_substitutions``; a tied noun counts once); variants are distinct substitution sets,
drawn from the seeded generator, so a seed gives the same bytes. A test refuses any
single-word pair of the lexicon that WordNet calls antonyms or co-hyponyms (siblings under
one hypernym).

Why a lexicon and not issue 10's route (a tagger, WordNet senses in context, a model to
score them): that route was built and measured first (branch ``lexical``, 2026-11-30:
spaCy's en_core_web_sm, WordNet candidates of the tagged part of speech, lemminflect,
a context-window check): 28% of the items got a variant, at 70% judged precision; looser
settings gave 63% at 53%. No feature separated good from bad substitutions well enough:
the MiniLM cosine not at all (bad ones score 0.97-0.99), the log-likelihood ratio under
the embedded SmolLM2-135M at AUC 0.79 (77% precision keeping 82% of the good ones). A
larger scoring model could do better, but none can be fetched here.

Measured on the 674 items of ../shared/data, default parameters, five variants, seed 0
(``python bench/perturb.py --only-lexical``, which prints these tables). The lexicon was
written looking only at the ``dev`` half of each dataset (``halves`` in bench/perturb.py:
items sorted by id, permuted with seed 2026, first half), never at the ``held_out`` half.
Passes eleven to thirteen were chosen from sources independent of the items: the most
frequent adverbs, adjectives and verbs of WordNet's SemCor counts without an entry (kept
only where one substitute fits every common sense), contractions both ways and general
exam and survey frames. Pass fourteen (about 200 lines; 2026-12-01) was written by four
engineers from the dev items of their slice (science, academic, survey items, question
openings); it added the ``opens=`` context rule ("are in" -> "are there in" only in a
question opening with "how many") and the two guard exceptions above. Passes fifteen and
sixteen (about 1,800 lines, eight engineers) were written from general English, not from
the items: phrasal verbs, academic frames, everyday and survey phrases, function-level
frames, adjectives and adverbs, nouns, science and humanities phrasing. Pass seventeen
(about 850 lines, six engineers) was systematic breadth: each engineer went down a list of
the most frequent WordNet lemmas (SemCor counts) of one kind without an entry (verbs,
adjectives, nouns, adverbs and multi-word expressions, hyphenated words) and wrote an entry
wherever a context rule pins a sense with an exact substitute. Pass eighteen (seven lines)
holds general entries for phrases of dev items still without a variant ("orbit" ->
"revolve around" after a celestial subject, "health hazard" -> "health risk"). Before pass
fifteen, 25 of the 60 held-out items then without a variant were read once, to estimate
whether a meaning-preserving substitution exists for them (23 of 25: yes, 18 by a general
entry), and a few examples of that reading went into the briefs of pass fifteen; so the
``strict`` column counts those 25 items (:data:`bench.perturb.READ_HELD_OUT`) as without a
variant, whatever the lexicon makes for them now:

==============  ============  ============  ============  ============
items with      dev (337)     held_out      strict        all (674)
==============  ============  ============  ============  ============
>= 1 variant    94% (316)     85% (287)     83% (279)     89% (603)
>= 3 variants   72% (243)     59% (198)     59% (198)     65% (441)
==============  ============  ============  ============  ============

(Before pass fourteen: dev 89 / held-out 81 / all 85% and 61 / 53 / 57%; after it: 92 / 82
/ 87% and 74 / 56 / 65%; after sixteen: 92 / 86 / 89% and 74 / 58 / 66%.) By dataset (all
items, >= 1 / >= 3): ARC 89/75%, MMLU 88/56%, Political Compass 87/58%, ValueBench 93/70%,
WVS 88/63%. So issue 10's three-variant target (60%) is met on all items (not on the
held-out half alone, 59%), and its one-variant target (90%) is not: 89.5% of all items
(603; 607 would be 90%), 85% of the held-out half. Breadth pays little here: passes
fifteen and sixteen lifted the held-out half by three points (strict: one), and pass
seventeen's 850 lines, drawn systematically from the most frequent words, by none: when
written they made 42 variants of the shared items, all on items that had one already. What the items
without a variant lack is mostly one phrase each, different for every item ("stopped
functioning", "mode of life"), which a list written in advance rarely holds; the fixes of
pass seventeen's reviews and of batches 32-33, and the noun tie, cost one held-out item
and one dev item. The dev items still without a variant (21) are short questions ("Planets
orbit", "Do you believe in hell?", "What is a mohel?"), statements of abstract algebra,
and WVS questions whose key word is also in the scale's options ("How important is work in
your life?" with "Very important", ...: option words are guarded).

In ``make demo`` (bundled items, two variants each) 24 of 24 objective and 21 of 24
subjective items get a lexical variant, and 21 objective and 21 subjective items two, so
both rows of its agreement table (which counts an item only with two variants of a family)
have more than 20 items. The three objective items left ("How many chambers does the human
heart have?", "Which colour of visible light has the longest wavelength?", "What is the pH
of pure water at room temperature?") have one safe change only, their opening.

Of the guards, the option-word guard removes 23 slots on the dev half (it keeps "How
important is ..." apart from its "Very important" scale) and leaves 4 dev items without
any; it stays. The task-word guard is relaxed inside forms of three or more words
(:data:`.slots.PHRASE`), so "which of the following" may become "which of these".

Precision, judged by reading, one verdict and a reason per refusal
(tests/fixtures/lexical_judged.jsonl; ``pytest tests/test_lexical.py``), in random
batches of the variants (default parameters, seed 0, five per item) of all 674 items,
each drawn from the lexicon as it was then:

- batch 1, 230 variants (seed 2026): 213 keep meaning and grammar, 92.6% (dev 95.4% of
  131, held_out 88.9% of 99);
- batch 2, 110 variants (seed 2027), not yet judged ones: 105 keep, 95.5% (dev 95.8% of
  48, held_out 95.2% of 62);
- batch 3, 40 variants (seed 2028) using the entries added after batch 2: 36 keep, 90.0%
  (dev 95.8% of 24, held_out 81.3% of 16);
- batches 4-6, 150 variants (seeds 2029-2031) with a substitution the lexicon before
  the eleventh pass could not make: 147 keep, 98.0% (dev 70 of 72, held_out 77 of 78;
  all five datasets);
- batch 7, 60 variants (seed 2032) drawn at random from all variants not yet judged,
  judged strictly (a nuance a respondent could answer differently counts as a failure):
  56 keep, 93.3% (dev 29 of 32, held_out 27 of 28; all five datasets). Failures:
  "carried out" -> "conducted" for a biological function, "the previous 8-10 weeks" ->
  "the earlier", "excluded from" -> "kept out of the possibility", "in charge" -> "in
  control" in a power-value item;
- batch 8, 41 variants (seed 2033) with a substitution of the thirteenth pass: 36 keep,
  87.8% (dev 10 of 13, held_out 26 of 28). Failures: "What determines where" -> "What
  finds out / works out where" (causal "determine"), "Presume that" opening a physics
  problem (twice), and an older entry, "important job vacancies" -> "significant";
- batch 9, the 3 variants (all of them) made by eight general frames added last ("help
  to" -> "help", "whether or not" -> "whether", "a wide range of", ...): all keep;
- batch 10, 60 variants (seed 2035) drawn at random from all variants not yet judged,
  after the fixes above, judged as strictly as batch 7: 57 keep, 95.0% (dev 28 of 30,
  held_out 29 of 30; all five datasets). Failures: "penalise" -> "punish" in a Political
  Compass item (harsher), "the genuinely disadvantaged" -> "the really disadvantaged"
  (reads as degree), "rate yourself regarding" -> "about";
- all 694: 94.1% (dev 94.6% of 350, held_out 93.6% of 344).

The entries behind the 41 failures were then narrowed or removed. The tests check that
none of the 41 is made any more, that for each of them at least one of its substitutions
is no longer offered for its item (so it cannot return when other draws change), and that
at least 90% of the judged variants still made keep meaning and grammar.

An independent reviewer then read 40 further variants drawn at random from all items
without seeing the judgements: 35 keep meaning and grammar (87.5%; 36 if "important to me"
-> "important for me" is accepted, as the batches above had accepted it 14 times). The
entries behind its failures ("a particular challenge" -> "a certain challenge", "function
correctly" -> "function accurately", "best described as" -> "best portrayed as", and
"important to me" -> "important for me", which in the value surveys' items shifts "I value"
towards "good for me") are removed, and a span of the question that repeats an option text
("The government should ...") is left as it is, function words included.

Pass fourteen, each engineer judging the variants its entries made (all of them, or 60
drawn at random where there were more):

- batch 11 (science frames), 77 variants: all keep;
- batch 12 (academic frames), 34: all keep;
- batch 13 (survey frames), 95: 87 keep, 91.6%; of its random draw of 60 (seed 2038), 52
  (86.7%). Failures: "like to be/have" -> "enjoy being/having" (pleasure for preference,
  and presupposes the state; removed) and "like to be curious and to try" -> "like being"
  (ungrammatical before a coordination; refused there);
- batch 14 (question frames), 53: 52 keep. Failure: "a reduction of living space" -> "a
  drop of" (reads as a small amount; "drop" now only before "in").

A second reviewer then read the whole pass and showed 14 misfires on test sentences of its
own ("The data point to the right of the line" -> "The data indicate the right", "Statement
I would be true" -> "Statement I'd be true", "Do people prefer to live" -> "Do people would
rather live", ...); each is refused now and kept as a regression sentence in
``tests/test_lexical.py``. Last, a blind batch drawn at random from all variants not yet
judged after pass fourteen:

- batch 15, 80 variants (seed 2040): 75 keep, 93.8% (Wilson 95% interval 86.2-97.3%; dev
  38 of 41, held_out 37 of 39). All five failures came from older entries: "The whole is
  greater" -> "The entire is", "I strongly believe" -> "I strongly think", "household
  income" -> "household earnings", "every chance I can" -> "each chance", "an exciting
  life" -> "a thrilling life"; each entry is narrowed or removed.

Passes fifteen and sixteen, each engineer judging every variant its entries made on the
shared items (fewer than 60 each): batches 16-19 and 21-24, 250 variants, 221 keep at first
judgement, 88.4% (Wilson 83.8-91.8%); the entries behind the 29 failures are narrowed or
removed (for example "results from" taken for a verb in "got low results from", "carefully
located" -> "cautiously located", "moral obligation" -> "ethical duty", "meticulous
knowledge" -> "painstaking", "wrongdoers" -> "offenders"). Two reviewers then read the two
passes on sentences of their own and on WordNet's glosses and examples, and showed 99
misfires (pass fifteen 37 in 28 entries, pass sixteen 62 in 44 entries: "Is France a
nuclear power?" -> "a nuclear energy", "He must be at home" -> "He has to be at home",
"The gas exerts pressure" -> "puts pressure", "What does NATO stand for?" ->
"represent"); each is refused now and kept, with a change the entry should still make, in
``tests/test_lexical_misfires.py``. Since the two passes fire rarely on the shared items,
their precision on other English was measured too: of the 2,057 substitutions they offer in
WordNet's example sentences (23,637 sentences of six words or more), 100 drawn at random
(seed 2051) and judged strictly: 91 keep (Wilson 83.8-95.2%; pass fifteen 62 of 68, pass
sixteen 29 of 32). The nine failures ("what they are asking for petrol" -> "requesting",
"stay away from home" -> "avoid home", "couldn't spare time" -> "free time", "made of" ->
"made from", "in person" -> "face to face", ...) are removed or refused, with sentences of
our own in the same test module. Last, a blind batch drawn at random from all variants not
yet judged after pass sixteen:

- batch 25, 100 variants (seed 2050): 92 keep, 92.0% (Wilson 85.0-95.9%; dev 48 of 55,
  held_out 44 of 45). None of the 100 used a pass-15/16 line (the passes had judged
  nearly all their own variants); all eight failures came from older lines ("an opinion"
  -> "a view" in a fact-or-opinion question, "because:" -> "since:", "accurately" ->
  "precisely", "literally means" -> "literally refers to", "corporations" -> "firms",
  "getting ahead" -> "getting on", "each according to" -> "every", "mislead" ->
  "deceive"); each is narrowed or removed.

Pass seventeen, each engineer judging every variant its entries made on the shared items
(batches 26-31, 42 variants: 39 keep; the three failures, "existence precedes essence" ->
"comes before" in a quoted formula twice and "all the time" -> "constantly", are refused) and
30 firings drawn at random from WordNet's example sentences (173 of 180 keep, 96.1%; each
failure fixed). Three reviewers then read the pass on sentences of their own and on
WordNet's examples and glosses and showed 177 misfires in 141 entries ("The medians concur
at the centroid" -> "agree", "Once bitten, twice shy" -> "two times shy", "a well-founded
fear of persecution" -> "a justified fear", "The model accounts for 40 percent of the
variance" -> "makes up"); each is refused and kept, with a change the entry should still
make, in ``tests/test_lexical_misfires.py`` (303 rows). Two blind batches followed, drawn
at random from all variants not yet judged:

- batch 32, 100 variants (seed 2060), after pass seventeen, before its reviews: 87 keep
  (Wilson 79.0-92.2%; dev 50 of 60, held_out 37 of 40). All 13 failures came from lines
  older than pass seventeen: "should" -> "ought to" in "it is better that people should"
  (now refused after "that": the context rule ``!before=``), "defend their country" ->
  "protect", "my country" -> "my nation", "equal opportunities" -> "equal chances",
  "interesting" -> "absorbing", "shuns" -> "avoids", "described as" -> "depicted as", "A
  student ... the student's observations" -> "A learner ..." (now the noun tie above), ...;
- batch 33, 100 variants (seed 2061), after the reviews and batch 32's fixes: 96 keep
  (Wilson 90.2-98.4%; dev 51 of 53, held_out 45 of 47). Failures, again from older lines:
  "the results are reliable" -> "trustworthy", "help the population to increase" ->
  "assist ... to go up", "more important than" -> "more significant than" (harsher),
  "an important virtue" -> "a key virtue"; each narrowed or removed.

All 1,625 judged variants: 1,513 keep, 93.1%. The samples drawn at random from all variants
(batches 1, 2, 7, 10, 15, 25, 32 and 33 and the first reviewer's 40), each judged before the
fixes it led to: 816 of 880, **92.7%** (Wilson 95% interval 90.8-94.3%); the strict
batches, 7, 10, 15, 25, 32 and 33: 463 of 500, 92.6%. With the lexicon as it is now, 1,206
of the judged variants are made again, and all 1,206 keep.

The sentence-embedding check of earlier versions (all-MiniLM-L6-v2 cosine of instruction
+ question before and after, 0.94) is kept as an option, ``threshold``, but is off by
default: on batch 1 it separates good from bad variants at AUC 0.55 (medians 0.993 vs
0.989); at 0.94 it drops 8% of the good variants and 18% of the bad ones, raising
precision from 92.6% to 93.3%, and costs about a minute of embedding per run.

Speed: all 674 items x 5 variants in 2-6 s on one core (target 180 s, issue 10).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from perturbations.base import Candidate, Family, register
from perturbations.lexical_substitution.lexicon import (
    DEFAULT_PATH,
    Context,
    Entry,
    Lexicon,
    default_lexicon,
)
from perturbations.lexical_substitution.slots import (
    NEGATIONS,
    TASK_WORDS,
    Slot,
    find_slots,
    match_case,
    option_words,
    quoted_spans,
    substitute,
    tie_nouns,
)
from perturbations.lexical_substitution.source import CandidateSource, Proposal, Text
from perturbations.similarity import Similarity, default_similarity, keep_similar
from robustness.core.errors import StudyError
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec
from robustness.core.text_safety import shown

__all__ = [
    "DEFAULT_PATH",
    "NEGATIONS",
    "TASK_WORDS",
    "THRESHOLD",
    "CandidateSource",
    "Context",
    "Entry",
    "LexicalSubstitution",
    "Lexicon",
    "Proposal",
    "Slot",
    "Text",
    "default_lexicon",
    "find_slots",
    "option_words",
    "substitute",
]

#: Default similarity threshold: 0, the check is off (module docstring: it did not separate
#: the judged good and bad variants).
THRESHOLD = 0.0


@register
class LexicalSubstitution(Family):
    """Forms of the lexicon replaced by their substitutes; variants checked for meaning.

    Parameters
    ----------
    rate
        Probability that each replaceable form is replaced (at least one per variant).
    max_substitutions
        At most this many forms replaced per variant.
    threshold
        Minimum similarity of instruction + question before vs after (0 turns it off).
    instruction
        Also replace words in the instruction (default True).
    similarity
        The meaning checker (default: all-MiniLM-L6-v2, shared in the process, loaded
        only when ``threshold`` > 0).
    lexicon, source
        Where the substitutes come from: a :class:`Lexicon`, or any :class:`CandidateSource`
        (one of the two; default: the packaged lexicon). The guards apply to either.
    """

    name = "lexical_substitution"

    def __init__(
        self,
        similarity: Similarity | None = None,
        lexicon: Lexicon | None = None,
        source: CandidateSource | None = None,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        rate, cap = self.params["rate"], self.params["max_substitutions"]
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 1:
            raise StudyError(
                f"lexical_substitution rate must be a number in (0, 1], not {shown(rate)}"
            )
        if isinstance(cap, bool) or not isinstance(cap, int | np.integer) or cap < 1:
            raise StudyError(
                "lexical_substitution max_substitutions must be a whole number >= 1, "
                f"not {shown(cap)}"
            )
        if lexicon is not None and source is not None:
            raise StudyError("lexical_substitution takes a lexicon or a source, not both")
        self._similarity = similarity
        self.source: CandidateSource = source or lexicon or default_lexicon()

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        return {"rate": 0.3, "max_substitutions": 3, "threshold": THRESHOLD, "instruction": True}

    @property
    def similarity(self) -> Similarity:
        if self._similarity is None:
            self._similarity = default_similarity()
        return self._similarity

    def slots(self, spec: PromptSpec, item: Item) -> dict[str, list[Slot]]:
        """Replaceable forms of the question (and the instruction), by part."""
        protected = option_words(item.options) | option_words(spec.options)
        texts = {"question": spec.question}
        if self.params["instruction"]:
            texts["instruction"] = spec.instruction
        parts = {}
        for part, text in texts.items():
            quoted = quoted_spans(text, [*item.options, *spec.options])
            parts[part] = [
                slot
                for slot in find_slots(text, self.source, protected, tie=False)
                if not any(slot.start < end and start < slot.end for start, end in quoted)
            ]
        # a noun form in both the question and the instruction names one thing too
        tied = tie_nouns(list(texts.values()), list(parts.values()))
        return {k: v for k, v in zip(parts, tied, strict=True) if v}

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        parts = self.slots(spec, item)
        # a tied noun's slots are one unit of the draw, in the question and the instruction
        # alike where both offer the same substitutes (slots.py: a noun names one thing)
        units: dict[tuple[object, ...], list[tuple[str, Slot]]] = {}
        for part, slots in parts.items():
            for k, slot in enumerate(slots):
                key = (slot.entry, slot.synonyms) if slot.tied else (part, k)
                units.setdefault(key, []).append((part, slot))
        flat = list(units.values())
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
                group = flat[int(i)]
                first = group[0][1]
                new = first.synonyms[int(rng.integers(0, len(first.synonyms)))]
                for part, slot in group:
                    chosen.setdefault(part, []).append((slot, new))
                    record.append(
                        {
                            "part": part,
                            "word": slot.word,
                            "to": match_case(new, slot.word),
                            "entry": slot.entry,
                        }
                    )
            changes = {part: substitute(getattr(spec, part), c) for part, c in chosen.items()}
            yield spec.with_(**changes), {"n_substitutions": len(record), "substitutions": record}

    def perturb(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, n: int
    ) -> list[Candidate]:
        """Up to ``n`` distinct candidates whose similarity to ``spec`` reaches the threshold."""
        threshold = float(self.params["threshold"])
        budget = max(1, n) * self.max_attempts_per_variant
        if threshold <= 0:
            return super().perturb(spec, item, rng, n)
        return keep_similar(
            spec, self.candidates(spec, item, rng), n, self.similarity, threshold, budget
        )
