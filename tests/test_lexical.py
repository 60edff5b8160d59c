"""lexical_substitution: slots, substitution, seeding, the meaning check, real WordNet.

Fast tests use a small stand-in lexicon and the n-gram similarity; tests marked slow use
WordNet through NLTK and all-MiniLM-L6-v2; ``shared_data`` tests use ../shared/data.
"""

from __future__ import annotations

import re
from typing import ClassVar

import numpy as np
import pytest
from helpers.oracle import assert_options_once, assert_round_trip

import robustness as rb
from perturbations.base import family_rng, make_family
from perturbations.lexical_substitution import (
    NEGATIONS,
    THRESHOLD,
    LexicalSubstitution,
    SynonymLexicon,
    Synonyms,
    _add_s,
    _s_bases,
    find_slots,
    substitute,
)
from perturbations.similarity import NgramSimilarity
from robustness.items import Item
from robustness.prompts import Format, default_spec
from robustness.variants import Variant


class FakeLexicon:
    """A few words with synonyms, in the shape of :class:`SynonymLexicon`."""

    table: ClassVar[dict[str, Synonyms]] = {
        "student": Synonyms("student.n.01", ("pupil",)),
        "students": Synonyms("student.n.01", ("pupils",)),
        "apple": Synonyms("apple.n.01", ("pear",)),
        "planet": Synonyms("planet.n.01", ("world",)),
        "use": Synonyms("use.v.01", ("employ", "utilize")),
        "big": Synonyms("large.a.01", ("large",)),
        "happy": Synonyms("happy.a.01", ("glad",)),
        "rotates": Synonyms("rotate.v.01", ("revolves", "spins")),
        "effect": Synonyms("consequence.n.01", ("result",)),
        "fast": Synonyms("fast.a.01", ("quick", "rapid")),
        "water": Synonyms("water.n.01", ("h2o",)),
    }

    def lookup(self, word):
        return self.table.get(word)

    def is_compound(self, first, second):
        return (first, second) == ("photoelectric", "effect")


def _family(**params) -> LexicalSubstitution:
    return LexicalSubstitution(
        similarity=NgramSimilarity(), lexicon=FakeLexicon(), **{"threshold": 0.0, **params}
    )


def _words(text):
    return [m.group() for m in re.finditer(r"\S+", text)]


# ----------------------------------------------------------------------------- slots


def _slot_words(text, protected=frozenset()):
    return [s.word for s in find_slots(text, FakeLexicon(), protected)]


def test_slots_skip_function_words_negations_digits_and_joined_words():
    text = "The student does not use 3big apples-planet or planet2 big."
    assert _slot_words(text) == ["student", "use", "big"]


def test_slots_skip_option_words_and_proper_nouns_but_allow_sentence_starts():
    text = "Students met Happy Apple. Big planet rotates fast? Use water."
    assert _slot_words(text, frozenset({"water"})) == [
        "Students",
        "Big",
        "planet",
        "rotates",
        "fast",
        "Use",
    ]


def test_slots_respect_neighbour_cues_and_compounds():
    # "my use": a noun, not the verb sense; "they student": no noun after a pronoun;
    # "use of": a verb bound to its preposition; "photoelectric effect": a fixed expression.
    assert _slot_words("For my use only.") == []
    assert _slot_words("They student hard.") == []
    assert _slot_words("We use of it.") == []
    assert _slot_words("The photoelectric effect and the effect.") == ["effect"]
    text = "The photoelectric effect and the effect."
    assert find_slots(text, FakeLexicon(), frozenset())[0].start == text.rindex("effect")


def test_substitute_keeps_case_and_mends_articles():
    text = "An apple and a big apple. A unit, an apple."
    slots = find_slots(text, FakeLexicon(), frozenset())
    out = substitute(text, [(s, "pear" if s.word.lower() == "apple" else "large") for s in slots])
    assert out == "A pear and a large pear. A unit, a pear."
    assert (
        substitute("Big news.", [(find_slots("Big news.", FakeLexicon(), frozenset())[0], "large")])
        == "Large news."
    )
    slot = find_slots("an effect here", FakeLexicon(), frozenset())[0]
    assert substitute("an effect here", [(slot, "result")]) == "a result here"


def test_regular_s_forms():
    assert [_add_s(w) for w in ("planet", "box", "church", "study", "day")] == [
        "planets",
        "boxes",
        "churches",
        "studies",
        "days",
    ]
    assert "study" in _s_bases("studies")  # WordNet then says which base is a word
    assert "box" in _s_bases("boxes")
    assert _s_bases("glass") == []


# ----------------------------------------------------------------------------- the family

ITEM = Item(
    "t1",
    "demo",
    "objective",
    "A student does not use 2 big apples. Which planet rotates fast?",
    ("Mercury", "Venus", "Earth", "Mars"),
    answer=0,
)
AGREE = Item(
    "t2",
    "demo",
    "subjective",
    "A happy student will use every big chance.",
    ("Strongly disagree", "Disagree", "Agree", "Strongly agree"),
    scale="ordinal",
)


def _variants(item, seed, n=5, **params):
    fam = _family(**params)
    rng = family_rng(seed, item, fam.name)
    return fam.perturb(default_spec(item), item, rng, n)


def test_same_seed_same_variants_and_other_seed_differs():
    a = [(s.render(), p) for s, p in _variants(ITEM, 0)]
    b = [(s.render(), p) for s, p in _variants(ITEM, 0)]
    c = [(s.render(), p) for s, p in _variants(ITEM, 1)]
    assert a == b
    assert len(a) == 5
    assert [t for t, _ in a] != [t for t, _ in c]


def test_variants_distinct_and_record_substitutions_and_similarity():
    spec = default_spec(ITEM)
    out = _variants(ITEM, 3)
    texts = [s.render() for s, _ in out]
    assert len(set(texts)) == len(texts) and spec.render() not in texts
    for vspec, params in out:
        assert 1 <= params["n_substitutions"] == len(params["substitutions"]) <= 3
        for sub in params["substitutions"]:
            assert sub["part"] in ("question", "instruction")
            assert sub["to"] in vspec.question or sub["to"] in vspec.instruction
        assert 0.0 <= params["similarity"] <= 1.0
        assert params["threshold"] == 0.0


def test_options_labels_digits_and_negations_untouched():
    spec = default_spec(ITEM)
    for vspec, _ in _variants(ITEM, 5, rate=1.0):
        assert (vspec.options, vspec.labels, vspec.order, vspec.format) == (
            spec.options,
            spec.labels,
            spec.order,
            spec.format,
        )
        assert vspec.instruction == spec.instruction
        assert re.findall(r"\d+", vspec.question) == ["2"]
        neg = [w for w in _words(vspec.question.lower()) if w.strip(".?") in NEGATIONS]
        assert neg == ["not"]
        assert len(_words(vspec.question)) == len(_words(spec.question))


def test_max_substitutions_caps_each_variant():
    for _, params in _variants(ITEM, 2, rate=1.0, max_substitutions=1):
        assert params["n_substitutions"] == 1


def test_threshold_rejects_variants_below_it():
    class Fixed:
        def __init__(self, value):
            self.value = value

        def similarity(self, a, b):
            return np.full(len(a), self.value)

    spec, rng = default_spec(ITEM), np.random.default_rng(0)
    low = LexicalSubstitution(similarity=Fixed(0.5), lexicon=FakeLexicon(), threshold=0.9)
    assert low.perturb(spec, ITEM, rng, 5) == []
    high = LexicalSubstitution(similarity=Fixed(0.95), lexicon=FakeLexicon(), threshold=0.9)
    out = high.perturb(spec, ITEM, rng, 5)
    assert len(out) == 5 and all(p["similarity"] == 0.95 for _, p in out)


def test_default_threshold_and_bad_params():
    assert LexicalSubstitution.parameters()["threshold"] == THRESHOLD
    with pytest.raises(ValueError, match="rate"):
        _family(rate=0)
    with pytest.raises(ValueError, match="max_substitutions"):
        _family(max_substitutions=0)
    with pytest.raises(ValueError, match="no parameter"):
        _family(nonsense=1)


def test_item_without_eligible_words_gets_no_variants():
    item = Item("t3", "demo", "objective", "Is 2 + 2 = 4?", ("Yes", "No"), answer=0)
    assert _variants(item, 0) == []


def test_registered_by_name():
    fam = make_family("lexical_substitution", rate=0.5)
    assert isinstance(fam, LexicalSubstitution) and fam.params["rate"] == 0.5


# ----------------------------------------------------------------------------- the oracle


def oracle_round_trip(variant: Variant) -> None:
    """The project's content oracle (tests/helpers/oracle.py) maps every option back; the map is
    the identity, and each option appears once with its label in the rendered prompt."""
    assert variant.answer_map == {lab: i for i, lab in enumerate(variant.spec.labels)}
    assert_options_once(variant)
    assert_round_trip(variant)


def test_oracle_round_trip_with_stand_ins():
    for item in (ITEM, AGREE):
        fam = _family()
        for vspec, params in fam.perturb(
            default_spec(item), item, family_rng(0, item, fam.name), 5
        ):
            oracle_round_trip(Variant(item, fam.name, "x", vspec, params))


def test_oracle_round_trip_with_other_format():
    fam = _family()
    spec = default_spec(ITEM).with_(format=Format(label_wrapper="({})", option_layout="inline"))
    for vspec, params in fam.perturb(spec, ITEM, np.random.default_rng(0), 5):
        oracle_round_trip(Variant(ITEM, fam.name, "x", vspec, params))


# ----------------------------------------------------------------------------- WordNet


@pytest.fixture(scope="module")
def lexicon() -> SynonymLexicon:
    return SynonymLexicon()


@pytest.mark.slow
def test_wordnet_synonyms_of_clear_words(lexicon):
    assert "pupil" in lexicon.lookup("student").words
    assert "pupils" in lexicon.lookup("students").words  # regular plural carried over
    assert lexicon.lookup("student").sense == "student.n.01"
    assert lexicon.lookup("found") is None  # also the past tense of "find"
    assert lexicon.lookup("bank") is None  # no clear dominant sense
    assert lexicon.lookup("area") is None or "country" not in lexicon.lookup("area").words
    assert lexicon.is_compound("death", "penalty")
    assert not lexicon.is_compound("penalty", "death")


@pytest.mark.slow
def test_wordnet_words_never_touched(lexicon):
    text = "I don't mind the students. They should not help 12 others."
    words = [s.word for s in find_slots(text, lexicon, frozenset({"others"}))]
    assert "mind" not in words and "not" not in words and "help" in words


@pytest.mark.slow
@pytest.mark.shared_data
def test_real_items_real_wordnet_real_similarity(lexicon, shared_items):
    items = shared_items
    picked = [items[i] for i in np.random.default_rng(0).permutation(len(items))[:120]]
    fam = LexicalSubstitution(lexicon=lexicon)
    n_variants = 0
    for item in picked:
        spec = default_spec(item)
        out = fam.perturb(spec, item, family_rng(0, item, fam.name), 3)
        again = fam.perturb(spec, item, family_rng(0, item, fam.name), 3)
        assert [s.render() for s, _ in out] == [s.render() for s, _ in again]
        for vspec, params in out:
            n_variants += 1
            assert params["similarity"] >= THRESHOLD
            assert vspec.options == spec.options and vspec.labels == spec.labels
            assert re.findall(r"\d+", vspec.question) == re.findall(r"\d+", spec.question)
            for sub in params["substitutions"]:
                assert sub["word"].lower() not in NEGATIONS
                assert not any(sub["word"].lower() in o.lower().split() for o in item.options)
            oracle_round_trip(Variant(item, fam.name, "x", vspec, params))
    # a quarter of the items have a replaceable word (see the module docstring)
    assert n_variants >= 30, n_variants


@pytest.mark.slow
@pytest.mark.shared_data
def test_perturb_end_to_end_is_reproducible(shared_items):
    items = shared_items[:6]
    a = rb.perturb(items, families="lexical_substitution", n=3, seed=4)
    b = rb.perturb(items, families="lexical_substitution", n=3, seed=4)
    assert [v.to_record() for v in a] == [v.to_record() for v in b]
    assert any(v.category == "lexical_substitution" for v in a)


@pytest.mark.slow
def test_demo_items_round_trip_through_perturb(demo):
    variants = rb.perturb(demo, families="lexical_substitution", n=5, seed=0)
    made = [v for v in variants if v.category == "lexical_substitution"]
    assert made
    for v in made:
        oracle_round_trip(v)
        assert v.params["similarity"] >= THRESHOLD
        assert v.variant_id.startswith("lexical_substitution/")


def test_sentence_start_check_walks_back_only_over_the_gap():
    """The check equals the old whole-prefix search, without scanning the prefix (issue 17:
    a 1 MB question took minutes)."""
    import random
    import re

    from perturbations.lexical_substitution import _at_sentence_start

    old = re.compile(r"(^|[.!?|:]\s*[\"“‘(]?|^\s*[\"“‘(])\s*$")
    rng = random.Random(0)
    chars = list('ab .!?|:"“‘(\n\t')
    for _ in range(5000):
        text = "".join(rng.choice(chars) for _ in range(rng.randint(0, 12)))
        k = rng.randint(0, len(text))
        assert _at_sentence_start(text, k) == bool(old.search(text[:k])), (text, k)

    class Counting(str):
        reads = 0

        def __getitem__(self, key):
            Counting.reads += 1
            return str.__getitem__(self, key)

    text = Counting("Some words here. Another Sentence follows " * 2000)
    for m in re.finditer(r"[A-Z]\w+", text):
        _at_sentence_start(text, m.start())
    assert Counting.reads < 10 * len(text) // 20  # a few characters per word, not the prefix
