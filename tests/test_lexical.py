"""lexical_substitution: the lexicon file, the guards, substitution, seeding, the judged sample.

Fast tests use small lexicons written here; ``shared_data`` tests use ../shared/data and the
judged fixture tests/fixtures/lexical_judged.jsonl. The lexicon lint (WordNet antonyms and
co-hyponyms included) is tested in tests/test_lexical_lint.py, the misfire rows in
tests/test_lexical_misfires.py.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers.oracle import assert_options_once, assert_round_trip

import robustness as rb
from perturbations.base import make_family
from perturbations.lexical_substitution import (
    DEFAULT_PATH,
    NEGATIONS,
    TASK_WORDS,
    THRESHOLD,
    LexicalSubstitution,
    Lexicon,
    default_lexicon,
    find_slots,
    substitute,
)
from perturbations.lexical_substitution.lexicon import parse_line
from perturbations.lexical_substitution.slots import option_words
from perturbations.similarity import NgramSimilarity
from robustness.core.errors import StudyError
from robustness.core.items import Item
from robustness.core.prompts import Format, default_spec
from robustness.core.seeding import family_rng
from robustness.core.variants import Variant

JUDGED = Path(__file__).parent / "fixtures" / "lexical_judged.jsonl"

SMALL = """\
# a test lexicon
n\tstudent students\tpupil pupils
v\trequire requires\tneed needs\t!next=to
a\tbig\tlarge | huge
a\tapple\tpear
r\tquickly\trapidly | swiftly
x\tmost_likely\tmost_probably\t!prev=the
x\twhich\twhat\tstart
a\tlikely\tprobable\tprev=is next=
v\tuse\temploy
n\teffect\timpact\tnext=on
"""


def small_lexicon(text: str = SMALL) -> Lexicon:
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        entries.extend(parse_line(line, number, "test.tsv"))
    return Lexicon(entries)


def _slot_words(text, protected=frozenset(), lexicon=None):
    return [s.word for s in find_slots(text, lexicon or small_lexicon(), protected)]


# ----------------------------------------------------------------------------- the file


def test_lexicon_file_parses_and_says_whose_it_is():
    head = DEFAULT_PATH.read_text(encoding="utf-8").splitlines()[:3]
    assert "robustness project" in " ".join(head) and "copied from no" in " ".join(head)
    lexicon = default_lexicon()
    assert len({e.form for e in lexicon.entries}) > 900
    for entry in lexicon.entries:
        assert entry.substitutes, entry
        assert entry.form not in entry.substitutes
        assert all(w == w.lower() for w in entry.words)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("n\tcar", "3 or 4 tab-separated columns"),
        ("q\tcar\tauto", "unknown part of speech 'q'"),
        ("n\tcar cars\tauto", "2 forms but 1 substitutes"),
        ("n\tcar\tauto\tbefore=the", "unknown context rule 'before=the'"),
        ("x\tare_in\tare_there_in\topens=", "opens= takes lowercase words"),
        ("x\tare_in\tare_there_in\topens=how_many,", "not '' in 'opens=how_many,'"),
        ("x\tare_in\tare_there_in\topens=How_many", "not 'How_many'"),
        ("x\tare_in\tare_there_in\topens=how__many", "not 'how__many'"),
    ],
)
def test_bad_lexicon_lines_are_one_clear_error(line, message):
    with pytest.raises(StudyError, match=message) as info:
        parse_line(line, 7, "mine.tsv")
    assert "mine.tsv, line 7" in str(info.value)


def test_paradigms_pair_forms_and_context_rules_combine():
    entries = parse_line("v\tbegin begins\tstart starts | commence commences\t!next=a !next=b", 1)
    assert [(e.form, e.substitutes) for e in entries] == [
        ("begin", ("start", "commence")),
        ("begins", ("starts", "commences")),
    ]
    assert entries[0].context.not_next == frozenset({"a", "b"})  # repeated rules: union
    upper = parse_line("v\tinvestigate\tprobe\t!prev=FBI", 4)[0].context
    assert upper.not_prev == frozenset({"fbi"})  # neighbours are lowercase: so are the rules
    assert parse_line("# comment", 2) == [] and parse_line("   ", 3) == []


# ----------------------------------------------------------------------------- the guards


def test_guards_skip_negations_digits_joined_words_and_option_words():
    text = "The student does not use 3big apples-big or big2 big."
    assert _slot_words(text) == ["student", "use", "big"]
    assert _slot_words(text, frozenset({"big"})) == ["student", "use"]
    assert {"not", "never", "without"} <= NEGATIONS
    assert {"answer", "option", "label", "correct"} <= TASK_WORDS
    # a task word or negation is refused even when a lexicon lists it
    lex = small_lexicon("x\tnot\tnever\nx\tanswer\treply\nn\tstudent\tpupil")
    assert _slot_words("Do not answer, student.", lexicon=lex) == ["student"]


def test_hyphenated_words_match_whole_and_are_guarded_by_their_parts():
    lex = small_lexicon(
        "a\twell-known\tfamous\n"
        "a\tknown\tfamiliar\n"
        "a\tnever-ending\tendless\n"
        "a\tup-to-date\tcurrent\n"
        "a\tbig\tlarge\n"
    )
    assert _slot_words("A well-known writer is known.", lexicon=lex) == ["well-known", "known"]
    slots = find_slots("Well-known writers wrote it.", lex, frozenset())
    assert substitute("Well-known writers wrote it.", [(slots[0], "famous")]) == (
        "Famous writers wrote it."
    )
    # a part never matches alone, nor a form across a hyphen before a digit
    assert _slot_words("A little-known fact; a big-19 case; big.", lexicon=lex) == ["big"]
    # a negation or an option word inside the compound guards it
    assert _slot_words("A never-ending story.", lexicon=lex) == []
    assert _slot_words("Keep it up-to-date.", frozenset({"date"}), lex) == []
    assert _slot_words("Keep it up-to-date.", lexicon=lex) == ["up-to-date"]
    assert _slot_words("A Well-Known writer.", lexicon=lex) == []  # capitalised inside: a name
    assert {"long-term", "long", "term"} <= option_words(["long-term gains"])


def test_task_word_allowed_only_inside_a_vetted_phrase_of_three_words():
    """A task word ("following") may change inside a form of PHRASE (3) or more words,
    never alone, in a two-word form, as the first word, or when negated or an option word."""
    lex = small_lexicon(
        "x\twhich_of_the_following\twhich_of_these\n"
        "x\tthe_following\tthese\n"
        "a\tfollowing\tnext\n"
        "x\tfollowing_the_rule\tafter_the_rule\n"
        "x\twhich_not_following\twhich_not_these"
    )
    text = (
        "Which of the following is big? The following day, following the rule. Which not following"
    )
    assert _slot_words(text, lexicon=lex) == ["Which of the following"]
    assert _slot_words(text, frozenset({"following"}), lexicon=lex) == []
    assert default_lexicon().candidates("which")  # the packaged frame is reachable
    real = find_slots("Which of the following is a gas?", default_lexicon(), frozenset())
    assert real[0].word == "Which of the following" and "which of these" in real[0].synonyms


def test_guards_allow_capitals_only_at_sentence_start():
    text = "Big Apple. Big student? Which is it: Which big one"
    # "Apple" mid-sentence is a name; "Big" and "Which" open sentences; "Which" after ':' too
    assert _slot_words(text) == ["Big", "Big", "student", "Which", "Which", "big"]
    assert _slot_words("It is which one.") == []  # "which" only at the start


def test_pronoun_i_may_open_or_join_a_form_and_stays_capitalised():
    """ "I" is no name: a form may start with it anywhere or hold it, and a substitute written
    in lower case comes out with "I"; other capitalised words inside a sentence stay names."""
    lex = small_lexicon("x\ti_am\ti'm\nx\tif_i_were\tif_i_was\nx\tian_is\tian's")
    text = "I am here. Tell them I am fine if I were asked, as Ian is out and ian is."
    slots = find_slots(text, lex, frozenset())
    assert [s.word for s in slots] == ["I am", "I am", "if I were", "ian is"]
    out = substitute(text, [(s, s.synonyms[0]) for s in slots])
    assert out == "I'm here. Tell them I'm fine if I was asked, as Ian is out and ian's."
    # a Roman numeral after a capitalised word ("Statement I", "World War I") is no pronoun
    real = default_lexicon()
    for numeral in ("Statement I would be true.", "Phase I will take a year."):
        assert [s.word for s in find_slots(numeral, real, frozenset())] == [], numeral
    assert [s.word for s in find_slots("Yes, I would like tea.", real, frozenset())] == ["I would"]


def test_negation_kept_forms_change_only_into_their_listed_negations():
    """The one exception to the negation guard (slots.KEEPS_NEGATION): "no one" may become
    "nobody" and back, and nothing else, whatever the lexicon says; the negation survives in
    every variant; other negations stay refused; an option word "No" stays as it is."""
    from perturbations.lexical_substitution.slots import KEEPS_NEGATION

    assert KEEPS_NEGATION["no one"] == {"nobody"} and KEEPS_NEGATION["nobody"] == {"no one"}
    lex = small_lexicon(
        "x\tno_one\tsomeone | nobody\tnext=can\nx\tnobody\teveryone | no_one\n"
        "x\tnot\tnever\nx\tno_longer\tstill"
    )
    text = "No one can tell. Nobody knows. It is not no longer so; no one answer fits."
    slots = find_slots(text, lex, frozenset())
    assert [(s.word, s.synonyms) for s in slots] == [
        ("No one", ("nobody",)),
        ("Nobody", ("no one",)),
    ]
    assert find_slots(text, lex, frozenset({"no"})) == [slots[1]]  # "No" is an option word
    item = Item(
        "n1", "demo", "subjective", "No one can feel naturally homosexual.", ("Agree", "Disagree")
    )
    fam = make_family("lexical_substitution")
    out = fam.perturb(default_spec(item), item, family_rng(0, item, fam.name), 5)
    nobody = "Nobody can feel naturally homosexual."
    assert nobody in {s.question for s, _ in out} <= {item.question, nobody}
    for vspec, _ in out:
        assert set(re.findall(r"[a-z]+", vspec.question.lower())) & NEGATIONS
    assert _slot_words("There is no one answer.", lexicon=default_lexicon()) == []


def test_a_repeated_noun_changes_everywhere_or_nowhere():
    """A noun that occurs twice names one thing: both occurrences change, to the same word,
    or (one of them possessive, guarded or out of its entry's context) neither does."""
    assert _slot_words("A student reads; the student's notes.") == []
    assert _slot_words("A student reads; the student writes.") == ["student", "student"]
    assert _slot_words("A student reads.", frozenset({"student"})) == []
    item = Item("t1", "demo", "subjective", "A student reads. The student writes.", ("a", "b"))
    fam = _family(rate=1.0)
    out = fam.perturb(default_spec(item), item, np.random.default_rng(0), 5)
    assert [s.question for s, _ in out] == ["A pupil reads. The pupil writes."]
    assert [r["to"] for r in out[0][1]["substitutions"]] == ["pupil", "pupil"]
    lone = Item("t2", "demo", "subjective", "A student reads the student's notes.", ("a", "b"))
    assert fam.perturb(default_spec(lone), lone, np.random.default_rng(0), 5) == []
    # a multi-word noun ties too; the question and the instruction change together
    lex = small_lexicon("n\tocean_floor\tseabed\nn\tstudent\tpupil")
    text = "Mapping the ocean floor is hard. What lies on the ocean floor?"
    assert [s.tied for s in find_slots(text, lex, frozenset())] == [True, True]
    assert [s.tied for s in find_slots("The ocean floor.", lex, frozenset())] == [False]
    both = Item("t3", "demo", "subjective", "What should a student do?", ("a", "b"))
    spec = default_spec(both).with_(instruction="Answer as a student would.")
    fam = LexicalSubstitution(lexicon=lex, rate=0.01)  # one unit a variant
    slots = fam.slots(spec, both)
    assert [s.tied for part in ("question", "instruction") for s in slots[part]] == [True, True]
    out = fam.perturb(spec, both, np.random.default_rng(0), 5)
    assert [(s.question, s.instruction) for s, _ in out] == [
        ("What should a pupil do?", "Answer as a pupil would.")
    ]
    # an occurrence in the instruction that may not change keeps the question's too
    spec = default_spec(both).with_(instruction="Answer as the student's tutor would.")
    assert "question" not in fam.slots(spec, both)


def test_context_rules_read_hyphenated_neighbours_whole():
    lex = small_lexicon("n\tstudent\tpupil\t!prev=part-time\na\tbig\tlarge\tnext=long-term")
    assert _slot_words("A part-time student.", lexicon=lex) == []
    assert _slot_words("A keen student.", lexicon=lex) == ["student"]
    assert _slot_words("A big long-term plan.", lexicon=lex) == ["big"]
    assert _slot_words("A big long plan.", lexicon=lex) == []


def test_context_rules_part_of_speech_cues_and_possessives():
    assert _slot_words("They require to go.") == []  # !next=to
    assert _slot_words("They require food.") == ["require"]
    assert _slot_words("The use of it.") == []  # a verb entry after "the"
    assert _slot_words("They student hard.") == []  # a noun entry after "they"
    assert _slot_words("The effect on us and a cause.") == ["effect"]
    assert _slot_words("The effect on us and the effect.") == []  # a noun tie (below)
    assert _slot_words("It is likely.") == ["likely"]
    assert _slot_words("It is likely to rain.") == []
    assert _slot_words("The student’s book and the student's pen.") == []


def test_opens_rule_limits_a_form_to_a_sentence_that_opens_so():
    """``opens=how_many``: the form changes only in a sentence whose words before it open
    with "how many" ("How many bits are in a byte?"), not in another sentence, nor when it
    opens the sentence itself or the sentence opens otherwise."""
    lex = small_lexicon("x\tare_in\tare_there_in\topens=how_many,why")
    assert parse_line("x\tare_in\tare_there_in\topens=how_many,why", 1)[0].context.opens == {
        ("how", "many"),
        ("why",),
    }
    assert _slot_words("How many bits are in one byte?", lexicon=lex) == ["are in"]
    assert _slot_words("Bits are in bytes. How many are in a word?", lexicon=lex) == ["are in"]
    assert _slot_words("How many? Bits are in bytes.", lexicon=lex) == []
    assert _slot_words("Tell me how many bits are in a byte.", lexicon=lex) == []
    assert _slot_words("Are in it. Why they are in it", lexicon=lex) == ["are in"]
    real = find_slots("How many bits are in one byte?", default_lexicon(), frozenset())
    assert [s.word for s in real] == ["How many", "are in"]


def test_not_before_rule_refuses_a_form_after_a_word_of_its_sentence():
    """``!before=that``: the form is refused when "that" stands before it in its sentence
    (a mandative "should"), not when "that" is in another sentence or after the form."""
    lex = small_lexicon("x\tshould\tought_to\t!before=that,insist")
    assert parse_line("x\tshould\tought_to\t!before=That", 1)[0].context.not_before == {"that"}
    assert _slot_words("People should vote.", lexicon=lex) == ["should"]
    assert _slot_words("It is best that people should vote.", lexicon=lex) == []
    assert _slot_words("We insist they should vote.", lexicon=lex) == []
    assert _slot_words("I know that. People should vote.", lexicon=lex) == ["should"]
    assert _slot_words("People should vote; that is all.", lexicon=lex) == ["should"]
    long = "It is " + "very " * 30 + "clear that people should vote."  # > 3 * NEAR words
    assert _slot_words(long, lexicon=lex) == []


def test_longest_form_wins_and_forms_do_not_overlap():
    slots = find_slots("It will most likely rain.", small_lexicon(), frozenset())
    assert [(s.word, s.synonyms) for s in slots] == [("most likely", ("most probably",))]
    assert _slot_words("the most likely cause") == []  # the phrase's rule refuses; no fallback


def test_substitute_keeps_case_and_mends_articles():
    lex = small_lexicon("a\tapple\tpear\na\tbig\tenormous\nn\tunit\tapple")
    text = "An apple and a big apple. A unit, an apple."
    slots = find_slots(text, lex, frozenset())
    new = {"apple": "pear", "big": "enormous", "unit": "apple"}
    out = substitute(text, [(s, new[s.word.lower()]) for s in slots])
    assert out == "A pear and an enormous pear. An apple, a pear."
    big = find_slots("Big news.", lex, frozenset())[0]
    assert substitute("Big news.", [(big, "enormous")]) == "Enormous news."


@pytest.mark.parametrize(
    ("text", "old", "new", "expected"),
    [
        ("a secondhand car", "secondhand", "used", "a used car"),  # "used" sounds "you"
        ("a used car", "used", "secondhand", "a secondhand car"),
        ("an old unit", "old", "European", "a European unit"),
        ("a unique case", "unique", "odd", "an odd case"),  # "a unique": agreed by sound
        ("an hour later", "hour", "day", "a day later"),  # silent h
        ("a day later", "day", "hour", "an hour later"),
        ("a minor issue", "minor", "unimportant", "an unimportant issue"),  # "un-", not "you"
        ("a big win", "big", "one-off", "a one-off win"),
        ("an hotel", "hotel", "inn", "an inn"),  # the author's article is kept as written
        ("an old plan", "old", "unanimous", "a unanimous plan"),
        ("a single call", "single", "unanswered", "an unanswered call"),
    ],
)
def test_articles_follow_the_sound_of_the_new_word(text, old, new, expected):
    lex = small_lexicon(f"a\t{old.lower()}\t{new.lower()}")
    slot = find_slots(text, lex, frozenset())[0]
    assert substitute(text, [(slot, new)]) == expected


def test_typographic_apostrophes_match_and_are_written_back_in_kind():
    """A contraction written with ’ matches the lexicon's "'" form, keeps its place in the
    text, and a new apostrophe follows the text's style; a possessive stays a possessive, and
    an option word written with ’ is still guarded."""
    lex = small_lexicon("x\tit's\tit_is\nx\tit_is\tit's\nn\tview\topinion")
    text = "It’s plain that Maria’s view holds, and it is fine."
    slots = find_slots(text, lex, frozenset())
    assert [(s.word, s.synonyms) for s in slots] == [
        ("It’s", ("it is",)),
        ("view", ("opinion",)),
        ("it is", ("it's",)),
    ]
    assert substitute(text, [(slots[0], "it is")]).startswith("It is plain that Maria’s")
    assert substitute(text, [(slots[2], "it's")]).endswith("and it’s fine.")
    straight = "It's plain, and it is fine."
    slots = find_slots(straight, lex, frozenset())
    assert substitute(straight, [(slots[1], "it's")]) == "It's plain, and it's fine."
    guarded = option_words(["It’s true"])
    assert "it's" in guarded and find_slots("It’s so.", lex, guarded) == []


# ----------------------------------------------------------------------------- the family

ITEM = Item(
    "t1",
    "demo",
    "objective",
    "A student does not use 2 big apples. Which planet rotates quickly?",
    ("Mercury", "Venus", "Earth", "Mars"),
    answer=0,
)
AGREE = Item(
    "t2",
    "demo",
    "subjective",
    "A student will use every big chance quickly.",
    ("Strongly disagree", "Disagree", "Agree", "Strongly agree"),
    scale="ordinal",
)


def _family(**params) -> LexicalSubstitution:
    return LexicalSubstitution(lexicon=small_lexicon(), **params)


def _variants(item, seed, n=5, **params):
    fam = _family(**params)
    return fam.perturb(default_spec(item), item, family_rng(seed, item, fam.name), n)


def test_same_seed_same_bytes_other_seed_differs():
    a = [(s.render(), p) for s, p in _variants(ITEM, 0)]
    b = [(s.render(), p) for s, p in _variants(ITEM, 0)]
    c = [(s.render(), p) for s, p in _variants(ITEM, 1)]
    assert a == b and len(a) == 5
    assert json.dumps(a).encode() == json.dumps(b).encode()
    assert [t for t, _ in a] != [t for t, _ in c]


def test_variants_are_distinct_substitution_sets_and_recorded():
    spec = default_spec(ITEM)
    out = _variants(ITEM, 3)
    texts = [s.render() for s, _ in out]
    sets = [frozenset((d["word"], d["to"]) for d in p["substitutions"]) for _, p in out]
    assert len(set(texts)) == len(texts) == len(set(sets)) and spec.render() not in texts
    for vspec, params in out:
        assert 1 <= params["n_substitutions"] == len(params["substitutions"]) <= 3
        for sub in params["substitutions"]:
            assert sub["part"] in ("question", "instruction")
            assert sub["to"] in vspec.question
            assert sub["entry"] == sub["word"].lower()


def test_options_labels_numbers_and_negations_untouched():
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
        assert " not " in vspec.question


def test_max_substitutions_caps_each_variant():
    for _, params in _variants(ITEM, 2, rate=1.0, max_substitutions=1):
        assert params["n_substitutions"] == 1


def test_similarity_check_is_a_second_line_when_asked():
    class Fixed:
        def __init__(self, value):
            self.value = value

        def similarity(self, a, b):
            return np.full(len(a), self.value)

    spec, rng = default_spec(ITEM), np.random.default_rng(0)
    low = LexicalSubstitution(similarity=Fixed(0.5), lexicon=small_lexicon(), threshold=0.9)
    assert low.perturb(spec, ITEM, rng, 5) == []
    high = LexicalSubstitution(similarity=Fixed(0.95), lexicon=small_lexicon(), threshold=0.9)
    out = high.perturb(spec, ITEM, rng, 5)
    assert len(out) == 5 and all(p["similarity"] == 0.95 for _, p in out)
    ngram = LexicalSubstitution(similarity=NgramSimilarity(), lexicon=small_lexicon())
    assert all("similarity" not in p for _, p in ngram.perturb(spec, ITEM, rng, 3))


def test_default_parameters_and_bad_ones():
    assert LexicalSubstitution.parameters() == {
        "rate": 0.3,
        "max_substitutions": 3,
        "threshold": THRESHOLD,
        "instruction": True,
    }
    assert THRESHOLD == 0.0
    with pytest.raises(StudyError, match="rate"):
        _family(rate=0)
    with pytest.raises(StudyError, match="max_substitutions"):
        _family(max_substitutions=0)
    with pytest.raises(StudyError, match="no parameter"):
        _family(min_count=5)


def test_item_without_lexicon_forms_gets_no_variants():
    item = Item("t3", "demo", "objective", "Is 2 + 2 = 4?", ("Yes", "No"), answer=0)
    assert _variants(item, 0) == []


def test_registered_by_name():
    fam = make_family("lexical_substitution", rate=0.5)
    assert isinstance(fam, LexicalSubstitution) and fam.params["rate"] == 0.5


def oracle_round_trip(variant: Variant) -> None:
    """The content oracle (tests/helpers/oracle.py) maps every option back, identically."""
    assert variant.answer_map == {lab: i for i, lab in enumerate(variant.spec.labels)}
    assert_options_once(variant)
    assert_round_trip(variant)


def test_oracle_round_trip_in_two_formats():
    for item in (ITEM, AGREE):
        fam = _family()
        for vspec, params in fam.perturb(
            default_spec(item), item, family_rng(0, item, fam.name), 5
        ):
            oracle_round_trip(Variant(item, fam.name, "x", vspec, params))
    spec = default_spec(ITEM).with_(format=Format(label_wrapper="({})", option_layout="inline"))
    for vspec, params in _family().perturb(spec, ITEM, np.random.default_rng(0), 5):
        oracle_round_trip(Variant(ITEM, "lexical_substitution", "x", vspec, params))


def test_sentence_start_check_walks_back_only_over_the_gap():
    """Equal to a whole-prefix search, without scanning the prefix (issue 17)."""
    import random

    from perturbations.lexical_substitution.source import at_sentence_start as _at_sentence_start

    old = re.compile(r"(^|[.!?|:]\s*[\"“‘(]?|^\s*[\"“‘(])\s*$")
    rng = random.Random(0)
    chars = list('ab .!?|:"“‘(\n\t')
    for _ in range(5000):
        text = "".join(rng.choice(chars) for _ in range(rng.randint(0, 12)))
        k = rng.randint(0, len(text))
        assert _at_sentence_start(text, k) == bool(old.search(text[:k])), (text, k)


# ----------------------------------------------------------------------------- shared items


def _judged() -> list[dict]:
    return [json.loads(line) for line in JUDGED.read_text(encoding="utf-8").splitlines()]


def test_judged_fixture_is_a_sample_of_all_five_datasets():
    rows = _judged()
    assert len(rows) >= 200
    assert set(Counter(r["dataset"] for r in rows)) == {
        "mmlu",
        "arc_challenge",
        "political_compass",
        "valuebench",
        "wvs",
    }
    for r in rows:
        assert r["verdict"] in ("keeps", "breaks")
        assert bool(r["reason"]) == (r["verdict"] == "breaks")
        assert r["original"] != r["variant"] and r["substitutions"]


def test_judged_figures_of_the_docstring_are_the_fixture_recounted():
    """The precision the package docstring states is what the fixture holds."""
    import perturbations.lexical_substitution as family

    doc = " ".join(family.__doc__.split())
    rows = _judged()
    keep = sum(r["verdict"] == "keeps" for r in rows)
    assert (
        f"{len(rows):,} variants of the five datasets in {len({r['batch'] for r in rows})}" in doc
    )
    assert f"{keep:,} keep meaning and grammar, {100 * keep / len(rows):.1f}%" in doc
    sample = [r for r in rows if r["batch"] in (1, 2, 7, 10, 15, 25, 32, 33)]
    kept = sum(r["verdict"] == "keeps" for r in sample)
    assert f"the fixes it led to: {kept} of {len(sample)};" in doc


@pytest.mark.shared_data
def test_judged_bad_variants_are_gone_and_precision_holds(shared_items):
    """Regenerates the family at its defaults (seed 0, five variants, as the sample was drawn)
    on the judged items: no variant judged to break meaning or grammar is made any more, and
    of the judged variants still made at least 90% keep them."""
    rows = _judged()
    by_id = {(it.dataset, it.item_id): it for it in shared_items}
    fam = make_family("lexical_substitution")
    made: dict[tuple[str, str], set[str]] = {}
    for key in {(r["dataset"], r["item_id"]) for r in rows}:
        item = by_id[key]
        out = fam.perturb(default_spec(item), item, family_rng(0, item, fam.name), 5)
        made[key] = {s.question for s, _ in out}
    still = [r for r in rows if r["variant"] in made[(r["dataset"], r["item_id"])]]
    assert [r["variant"] for r in still if r["verdict"] == "breaks"] == []
    assert len(still) >= 150
    assert sum(r["verdict"] == "keeps" for r in still) / len(still) >= 0.90


@pytest.mark.shared_data
def test_judged_bad_substitutions_are_no_longer_offered(shared_items):
    """Whatever the random draws: for every variant judged to break meaning or grammar, at
    least one of its substitutions (word -> substitute, counted: two "people" need two
    places that offer it) is no longer offered for its item,
    so the variant cannot come back when a lexicon change shifts which variants are drawn."""
    by_id = {(it.dataset, it.item_id): it for it in shared_items}
    fam = make_family("lexical_substitution")
    still_offered = []
    for r in _judged():
        if r["verdict"] != "breaks":
            continue
        item = by_id[(r["dataset"], r["item_id"])]
        offered = Counter(
            (slot.word.lower(), new.lower())
            for slots in fam.slots(default_spec(item), item).values()
            for slot in slots
            for new in set(slot.synonyms)
        )
        subs = Counter((w.lower(), n.lower()) for w, n in r["substitutions"])
        if all(offered[pair] >= k for pair, k in subs.items()):
            still_offered.append((r["item_id"], sorted(subs)))
    assert still_offered == []


@pytest.mark.shared_data
def test_shared_items_variants_keep_guards_and_round_trip(shared_items):
    picked = [shared_items[i] for i in np.random.default_rng(0).permutation(len(shared_items))]
    fam = make_family("lexical_substitution")
    n_items = 0
    for item in picked[:150]:
        spec = default_spec(item)
        out = fam.perturb(spec, item, family_rng(0, item, fam.name), 3)
        again = fam.perturb(spec, item, family_rng(0, item, fam.name), 3)
        assert [s.render() for s, _ in out] == [s.render() for s, _ in again]
        n_items += bool(out)
        for vspec, params in out:
            assert vspec.options == spec.options and vspec.labels == spec.labels
            assert re.findall(r"\d+", vspec.question) == re.findall(r"\d+", spec.question)
            for sub in params["substitutions"]:
                assert not set(sub["word"].lower().split()) & NEGATIONS
            oracle_round_trip(Variant(item, fam.name, "x", vspec, params))
    assert n_items >= 0.7 * 150, n_items  # 89.5% of the shared items have one (module docstring)


def test_demo_selection_has_lexical_variants_for_both_types(demo):
    """``make demo`` (12 items of each bundled dataset, two variants, seed 0): its agreement
    table counts an item only when it has two variants of the family (agreement needs two
    answers), so the number of items with two lexical variants is the number of items in
    the family's rows: 21 objective and 21 subjective (of 24 each) measured; the quiz items
    left ("How many chambers does the human heart have?", "Which colour of visible light has
    the longest wavelength?", "What is the pH of pure water at room temperature?") have one
    safe change only."""
    from robustness.core.items import per_dataset

    items = per_dataset(demo, 12)
    variants = rb.perturb(items, families="lexical_substitution", n=2, seed=0)
    made = Counter(v.item.item_id for v in variants if v.category == "lexical_substitution")
    one = Counter(it.dataset_type for it in items if made[it.item_id] >= 1)
    two = Counter(it.dataset_type for it in items if made[it.item_id] >= 2)
    assert one["objective"] > 20 and one["subjective"] > 20, one
    assert two["objective"] > 20 and two["subjective"] > 20, two
    for v in variants:
        if v.category == "lexical_substitution":
            oracle_round_trip(v)


def test_a_question_quoting_an_option_keeps_the_quote():
    """Function words are free to change even when an option has them, except inside a span
    of the question that repeats an option text (the WVS items quote their scale's poles)."""
    pole = "The government should take more responsibility"
    item = Item(
        "q108",
        "demo",
        "subjective",
        f"Where would you place your view? 1 means: {pole}. 10 means: people should decide.",
        (pole, "People should take more responsibility"),
    )
    fam = make_family("lexical_substitution")
    words = [
        s.word.lower() for slots in fam.slots(default_spec(item), item).values() for s in slots
    ]
    assert words.count("should") == 1  # the unquoted "people should decide" only
    for vspec, _ in fam.perturb(default_spec(item), item, np.random.default_rng(0), 5):
        assert pole in vspec.question


@pytest.mark.parametrize(
    ("params", "shown"),
    [({"rate": True}, "True"), ({"rate": "abc"}, "'abc'"), ({"max_substitutions": 1.5}, "1.5")],
)
def test_parameters_of_the_wrong_type_are_one_study_error(params, shown):
    with pytest.raises(StudyError, match=re.escape(f"not {shown}")):
        make_family("lexical_substitution", **params)


def test_quoted_spans_are_positions_in_the_text_as_written():
    from perturbations.lexical_substitution.slots import quoted_spans

    text = "Pick one: The Government should act."
    assert [text[a:b] for a, b in quoted_spans(text, ["the government should act."])] == [
        "The Government should act"
    ]
    odd = "İ: the government should act"  # "İ".lower() is two characters long
    assert [odd[a:b] for a, b in quoted_spans(odd, ["the government should act"])] == [
        "the government should act"
    ]
    assert quoted_spans(text, ["act"]) == []  # one word: option_words guards it already


def test_quoted_spans_match_an_option_whose_apostrophes_differ_in_style():
    """A question quoting an option with ’ where the option writes ' (or the reverse) keeps
    the quote as it is: the span is found, at its place in the text as written."""
    from perturbations.lexical_substitution.slots import quoted_spans

    pole = "The rich shouldn't pay all of the taxes"
    text = "Do you agree that “the rich shouldn’t pay all of the taxes”? Most of the time."
    start = text.index("the rich")
    assert quoted_spans(text, [pole]) == [(start, start + len(pole))]
    mirrored = quoted_spans(text.replace("’", "'"), [pole.replace("'", "’")])
    assert mirrored == [(start, start + len(pole))]
    item = Item("q1", "demo", "subjective", text, (pole, "The poor should pay less"))
    fam = make_family("lexical_substitution")
    words = [s.word for slots in fam.slots(default_spec(item), item).values() for s in slots]
    assert "all of the" not in words and "Most of the time" in words
