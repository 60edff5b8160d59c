"""lexical_substitution: the lexicon file, the guards, substitution, seeding, the judged sample.

Fast tests use small lexicons written here; ``slow`` tests read WordNet; ``shared_data``
tests use ../shared/data and the judged fixture tests/fixtures/lexical_judged.jsonl.
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
from perturbations.base import family_rng, make_family
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
from robustness.errors import StudyError
from robustness.items import Item
from robustness.prompts import Format, default_spec
from robustness.variants import Variant

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


def test_context_rules_part_of_speech_cues_and_possessives():
    assert _slot_words("They require to go.") == []  # !next=to
    assert _slot_words("They require food.") == ["require"]
    assert _slot_words("The use of it.") == []  # a verb entry after "the"
    assert _slot_words("They student hard.") == []  # a noun entry after "they"
    assert _slot_words("The effect on us and the effect.") == ["effect"]
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


def _changes(text: str) -> set[str]:
    """Every text that one slot of the default lexicon makes from ``text``."""
    slots = find_slots(text, default_lexicon(), frozenset())
    return {substitute(text, [(s, new)]) for s in slots for new in s.synonyms}


#: Sentences outside the items where an entry of lexicon pass 14 broke meaning or grammar
#: (found in review): (text, the broken change, an intended change still made or None).
PASS_14_MISFIRES = [
    (  # "data point" is a noun (statistics): "data point to" -> "data indicate"
        "The data point to the right of the line is an outlier.",
        "The data indicate the right of the line is an outlier.",
        None,
    ),
    ("The results point to a clear cause.", "", "The results indicate a clear cause."),
    (  # "globally" in mathematics (optimum, convergence) is no place on Earth
        "The function attains its maximum globally at x = 0.",
        "The function attains its maximum worldwide at x = 0.",
        None,
    ),
    ("The method converges globally.", "The method converges worldwide.", None),
    ("Temperatures have risen globally.", "", "Temperatures have risen worldwide."),
    (  # "the world of finance" is no place: "worldwide of finance"
        "Changes spread throughout the world of finance.",
        "Changes spread worldwide of finance.",
        None,
    ),
    ("Rules differ across the world of sport.", "Rules differ worldwide of sport.", None),
    ("It is found throughout the world.", "", "It is found worldwide."),
    (  # "use up to three" is "use at most three", not "use up"
        "You can use up to three attempts.",
        "You can consume to three attempts.",
        None,
    ),
    ("The engine used up to 5 liters of fuel.", "The engine consumed to 5 liters of fuel.", None),
    ("The plant used up the water.", "", "The plant consumed the water."),
    (  # "several" as a pronoun: "a number of" needs its noun
        "Several have argued that taxes are too high.",
        "A number of have argued that taxes are too high.",
        None,
    ),
    ("Several could not attend.", "A number of could not attend.", None),
    ("Several students agree.", "", "A number of students agree."),
    (  # closeness between people is no distance
        "Which family member are you closest to?",
        "Which family member are you nearest to?",
        None,
    ),
    ("Which planet is closest to the sun?", "", "Which planet is nearest to the sun?"),
    (  # a clause with its own subject after "how many/much": "there" is read as a place
        "How many hours did you sleep when they were in the hospital?",
        "How many hours did you sleep when they were there in the hospital?",
        None,
    ),
    (  # "in the form of" is a manner, no place
        "How much of the energy is in the form of heat?",
        "How much of the energy is there in the form of heat?",
        None,
    ),
    ("How many bits are in one byte?", "", "How many bits are there in one byte?"),
    (  # "when" as an indirect question (the time) after "shows", "determines": not "whether"
        "Which of the following best describes when the moon is full?",
        "Which of the following best describes if the moon is full?",
        None,
    ),
    (
        "What determines when a seed is ready to sprout?",
        "What determines if a seed is ready to sprout?",
        None,
    ),
    (  # "only when" / "only if" is a different logical condition
        "Which is true only when the gas is ideal?",
        "Which is true only if the gas is ideal?",
        None,
    ),
    ("What happens when ice is heated?", "", "What happens if ice is heated?"),
    (  # a second line without the first line's !prev= guard let this through
        "This stands in contrast to the earlier view.",
        "This stands unlike the earlier view.",
        None,
    ),
    ("This is in contrast to the earlier view.", "This is unlike the earlier view.", None),
    ("In contrast to mammals, fish lay eggs.", "", "Unlike mammals, fish lay eggs."),
    (  # "thought" as a noun after an adjective, and the phrasal "thought that over"
        "In Western thought that emerged after Kant, reason is central.",
        "In Western believed that emerged after Kant, reason is central.",
        None,
    ),
    ("I thought that over for a week.", "I believed that over for a week.", None),
    (
        "Aristotle thought that the heart was the seat of reason.",
        "",
        "Aristotle believed that the heart was the seat of reason.",
    ),
    (  # a question with "do"/"should": "Do people would rather" is no English
        "Do people prefer to live in cities?",
        "Do people would rather live in cities?",
        None,
    ),
    ("Why does he prefer to work alone?", "Why does he would rather work alone?", None),
    (
        "Should I prefer to socialize with familiar friends?",
        "Should I would rather socialize with familiar friends?",
        None,
    ),
    (
        "I prefer to socialize with familiar friends.",
        "",
        "I would rather socialize with familiar friends.",
    ),
    (  # an older entry, seen in review: "would rather" is a preference, not a degree
        "I would rather stay than go.",
        "I would somewhat stay than go.",
        None,
    ),
    ("It is rather large.", "", "It is somewhat large."),
    (  # "reduction" in chemistry (gain of electrons) is no decrease
        "This reaction is a reduction in which the iron gains electrons.",
        "This reaction is a drop in which the iron gains electrons.",
        None,
    ),
    ("There was a sharp reduction in prices.", "", "There was a sharp drop in prices."),
    (  # "unclear" -> "not clear" only after a form of "be": "remains not clear" is not English
        "The cause remains unclear.",
        "The cause remains not clear.",
        None,
    ),
    ("The cause is unclear.", "", "The cause is not clear."),
    # end of PASS_14_MISFIRES
]


@pytest.mark.parametrize(("text", "bad", "good"), PASS_14_MISFIRES)
def test_pass_14_entries_refuse_the_readings_they_would_break(text, bad, good):
    made = _changes(text)
    assert bad not in made, made
    assert good is None or good in made, made


#: Sentences outside the items where an entry of lexicon pass 15 broke meaning or grammar
#: (found in review): (text, the broken change, an intended change still made or None).
PASS_15_MISFIRES = [
    (  # "young people" after a determiner or quantifier: "Many the young" is no English
        "Many young people can find work easily.",
        "Many the young can find work easily.",
        None,
    ),
    ("Most young people should vote.", "Most the young should vote.", None),
    ("For young people, work is hard.", "", "For the young, work is hard."),
    (  # "a nuclear power" is a state with nuclear weapons, no source of energy
        "Is France a nuclear power?",
        "Is France a nuclear energy?",
        None,
    ),
    ("Should nuclear power be expanded?", "", "Should nuclear energy be expanded?"),
    ("He is always very punctual.", "He is always very on time.", None),
    ("He is always punctual.", "", "He is always on time."),
    (  # the object sits between "look after" and "well"
        "Parents take good care of their children.",
        "Parents look after well their children.",
        None,
    ),
    (  # worn-out things are not exhausted
        "The brake pads were worn out.",
        "The brake pads were exhausted.",
        None,
    ),
    ("I feel worn out after work.", "", "I feel exhausted after work."),
    (  # "as far as possible" of a distance is no extent
        "The ball rolled as far as possible from the goal.",
        "The ball rolled to the extent possible from the goal.",
        None,
    ),
    (
        "Move the magnet as far as possible from the coil.",
        "Move the magnet wherever possible from the coil.",
        None,
    ),
    (
        "We should avoid sugar as far as possible.",
        "",
        "We should avoid sugar to the extent possible.",
    ),
    (  # an idiom; and "at first" alone must not take over: "love initially sight"
        "It was love at first sight.",
        "It was love at first glance.",
        None,
    ),
    ("It was love at first sight.", "It was love initially sight.", None),
    ("At first sight, the problem looks easy.", "", "At first glance, the problem looks easy."),
    (  # "apart from" also means "in addition to": "except for" keeps one sense only
        "Apart from being expensive, it is also slow.",
        "Except for being expensive, it is also slow.",
        "Aside from being expensive, it is also slow.",
    ),
    (  # "is in the interest of" is "benefits", not a purpose
        "It is in the interest of the company to cut costs.",
        "It is for the sake of the company to cut costs.",
        None,
    ),
    (
        "Is it in the interests of workers to join a union?",
        "Is it for the sake of workers to join a union?",
        None,
    ),
    (
        "Laws should be made in the interest of the people.",
        "",
        "Laws should be made for the sake of the people.",
    ),
    (  # a literal handful of a substance is no number
        "A student added a handful of sand to the water.",
        "A student added a small number of sand to the water.",
        None,
    ),
    (  # epistemic "must" after a pronoun: "has to be at home" reads as an obligation
        "He must be at home now.",
        "He has to be at home now.",
        None,
    ),
    ("They must be rich.", "They have to be rich.", None),
    ("You must feel proud of your son.", "You have to feel proud of your son.", None),
    ("We must act now.", "", "We have to act now."),
    ("People must obey the law.", "", "People have to obey the law."),
    (  # "a great deal of" takes a mass noun; and "a lot of" -> "lots of" after "quite"
        "Quite a lot of people voted.",
        "A great deal of people voted.",
        None,
    ),
    ("Quite a lot of people voted.", "Quite lots of people voted.", None),
    (  # "due to" of a payment is "owed to"
        "The rent is due to the landlord on Friday.",
        "The rent is caused by the landlord on Friday.",
        None,
    ),
    ("The change is due to the heat.", "", "The change is caused by the heat."),
    (  # adverbial "more likely": "likelier" is an adjective
        "Which party would you more likely vote for?",
        "Which party would you likelier vote for?",
        None,
    ),
    ("Which is more likely?", "", "Which is likelier?"),
    (  # "he's" + an irregular participle is "he has"
        "He's broken the record twice.",
        "He is broken the record twice.",
        None,
    ),
    ("She's eaten already.", "She is eaten already.", None),
    ("Who's broken the window?", "Who is broken the window?", None),
    ("She's a doctor.", "", "She is a doctor."),
    ("Where's he gone?", "Where is he gone?", None),
    ("Where's the nearest station?", "", "Where is the nearest station?"),
    (  # "believe" is a firmer conviction than "think" (judged so in batch 15)
        "Do you think that the government should act?",
        "Do you believe that the government should act?",
        "Do you think the government should act?",
    ),
    (  # only species and languages become extinct
        "The fire died out overnight.",
        "The fire became extinct overnight.",
        None,
    ),
    ("Many old customs have died out.", "Many old customs have become extinct.", None),
    ("The dinosaurs died out long ago.", "", "The dinosaurs became extinct long ago."),
    (  # "language acquisition" is a term of linguistics
        "Children acquire language quickly.",
        "Children gain language quickly.",
        None,
    ),
    ("Children acquire knowledge at school.", "", "Children gain knowledge at school."),
    (  # one ends a contract, not an employee
        "The company may terminate employees without notice.",
        "The company may end employees without notice.",
        None,
    ),
    ("He will earn more respect this way.", "He will make more respect this way.", None),
    ("She earns more money than he does.", "", "She makes more money than he does."),
    (  # "in matters of" takes a noun, not a gerund
        "When it comes to choosing a career, what matters most?",
        "In matters of choosing a career, what matters most?",
        "With regard to choosing a career, what matters most?",
    ),
    ("When it comes to money, people disagree.", "", "In matters of money, people disagree."),
    (  # euphemism: "died" changes the tone of an item about a loss
        "My grandmother passed away last year.",
        "My grandmother died last year.",
        None,
    ),
    (  # agreeing "in principle" is no doubt about practice
        "I agree in principle with the plan.",
        "I agree in theory with the plan.",
        None,
    ),
    (  # "at random" before a noun is an adjective: "randomly intervals"
        "At random intervals, a light flashes.",
        "Randomly intervals, a light flashes.",
        None,
    ),
    ("Pick a card at random.", "", "Pick a card randomly."),
    ("How's he done it?", "How is he done it?", None),
    ("How's the weather?", "", "How is the weather?"),
    ("He put forward his hand.", "He proposed his hand.", None),
    ("He put forward a theory.", "", "He proposed a theory."),
    (  # "dependent on" a drug is addiction, not reliance
        "The child is dependent on drugs.",
        "The child depends on drugs.",
        None,
    ),
    ("The crop is dependent on rain.", "", "The crop depends on rain."),
    (  # the modal "has to" + "do with": "must manage with"
        "The firm has to do with less money.",
        "The firm relates to less money.",
        None,
    ),
    ("It has to do with money.", "", "It relates to money."),
    # end of PASS_15_MISFIRES
]


@pytest.mark.parametrize(("text", "bad", "good"), PASS_15_MISFIRES)
def test_pass_15_entries_refuse_the_readings_they_would_break(text, bad, good):
    made = _changes(text)
    assert bad not in made, made
    assert good is None or good in made, made


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
    assert out == "A pear and an enormous pear. A apple, a pear."  # "A unit": written on purpose
    big = find_slots("Big news.", lex, frozenset())[0]
    assert substitute("Big news.", [(big, "enormous")]) == "Enormous news."


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

    from perturbations.lexical_substitution.slots import _at_sentence_start

    old = re.compile(r"(^|[.!?|:]\s*[\"“‘(]?|^\s*[\"“‘(])\s*$")
    rng = random.Random(0)
    chars = list('ab .!?|:"“‘(\n\t')
    for _ in range(5000):
        text = "".join(rng.choice(chars) for _ in range(rng.randint(0, 12)))
        k = rng.randint(0, len(text))
        assert _at_sentence_start(text, k) == bool(old.search(text[:k])), (text, k)


# ----------------------------------------------------------------------------- WordNet


@pytest.mark.slow
def test_no_lexicon_pair_is_a_wordnet_antonym_or_cohyponym():
    """Embedding similarity cannot see antonyms or siblings ("north" for "south"), so the
    lexicon is checked against WordNet: no single-word pair may be antonyms in any sense,
    nor co-hyponyms (two synsets under one hypernym) without sharing a synset."""
    from perturbations.wordnet import load_wordnet

    wn = load_wordnet()
    tags = {"n": "n", "v": "v", "a": "as", "r": "r", "x": "nvasr"}

    def synsets(word, pos):
        out = set()
        for tag in tags[pos]:
            tag = "a" if tag == "s" else tag
            for base in {word, wn.morphy(word, tag) or word}:
                out |= set(wn.synsets(base, pos=tag))
        return out

    # the check itself can fail: it finds a planted antonym and a planted sibling pair
    assert {x.name() for s in synsets("increase", "v") for m in s.lemmas() for x in m.antonyms()}
    north, south = synsets("north", "n"), synsets("south", "n")
    assert any(set(a.hypernyms()) & set(b.hypernyms()) for a in north for b in south)

    bad = []
    for form, sub, pos in default_lexicon().pairs():
        if " " in form or " " in sub:
            continue
        a, b = synsets(form, pos), synsets(sub, pos)
        antonyms = {x.name().lower() for s in a for m in s.lemmas() for x in m.antonyms()}
        if antonyms & {m.name().lower() for s in b for m in s.lemmas()}:
            bad.append(("antonym", form, sub))
        elif not a & b and any(set(x.hypernyms()) & set(y.hypernyms()) for x in a for y in b):
            bad.append(("co-hyponym", form, sub))
    assert bad == []


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
    assert n_items >= 0.7 * 150, n_items  # 87% of the shared items have one (module docstring)


def test_demo_selection_has_lexical_variants_for_both_types(demo):
    """``make demo`` (12 items of each bundled dataset, two variants, seed 0): its agreement
    table counts an item only when it has two variants of the family (agreement needs two
    answers), so the number of items with two lexical variants is the number of items in
    the family's rows: 21 objective and 21 subjective (of 24 each) measured; the quiz items
    left ("How many chambers does the human heart have?", "Which colour of visible light has
    the longest wavelength?", "What is the pH of pure water at room temperature?") have one
    safe change only."""
    from robustness.loaders import per_dataset

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


#: Sentences outside the items where an entry of lexicon pass 16 broke meaning or grammar
#: (found in review): (text, the broken change, an intended change still made or None).
PASS_16_MISFIRES = [
    (  # passive "called into question" has no passive "cast doubt on"
        "The results were called into question by critics.",
        "The results were cast doubt on by critics.",
        None,
    ),
    ("Critics called into question the results.", "", "Critics cast doubt on the results."),
    (  # "set forth" in a statute lays down; "put forward" only proposes (and "set out")
        "The rights set forth in the statute apply to all tenants.",
        "The rights put forward in the statute apply to all tenants.",
        None,
    ),
    ("The travellers set forth at dawn.", "The travellers put forward at dawn.", None),
    (  # "the day before X" is a preposition: "the previous day the election"
        "He voted the day before the election.",
        "He voted the previous day the election.",
        None,
    ),
    ("He had voted the day before.", "", "He had voted the previous day."),
    ("They met again the next day.", "", "They met again the following day."),
    (  # "at what time t" names a variable: "When t is the velocity zero?"
        "At what time t is the velocity of the ball zero?",
        "When t is the velocity of the ball zero?",
        None,
    ),
    ("At what time does the train arrive?", "", "When does the train arrive?"),
    (  # "stand for" of an acronym asks for its expansion, of a party for its values
        "What does the abbreviation NATO stand for?",
        "What does the abbreviation NATO represent?",
        None,
    ),
    ("What do you stand for in life?", "What do you represent in life?", None),
    (  # "marginally significant" is a term of statistics (p just above the level)
        "The effect was marginally significant (p = 0.06).",
        "The effect was slightly significant (p = 0.06).",
        None,
    ),
    ("The new drug is marginally better.", "", "The new drug is slightly better."),
    (  # "orally" of speech is "aloud", not "by mouth"
        "The instructions were given orally to the class.",
        "The instructions were given by mouth to the class.",
        None,
    ),
    ("The drug is taken orally.", "", "The drug is taken by mouth."),
    (  # "minor offence" is a legal category; "a slight offence" is a mild affront
        "He committed a minor offence.",
        "He committed a slight offence.",
        None,
    ),
    ("He committed a minor offence.", "He committed a small offence.", None),
    ("Only minor changes were made.", "", "Only small changes were made."),
    (  # "get under way" is "begin": "got in progress"
        "The project got under way in 1990.",
        "The project got in progress in 1990.",
        None,
    ),
    (
        "The negotiations got underway last week.",
        "The negotiations got in progress last week.",
        None,
    ),
    ("Work is already under way.", "", "Work is already in progress."),
    (  # in criminal law "deliberate" (premeditated) and "intentional" killing differ, and
        # "unintentional killing" is manslaughter, "accidental" may be no crime
        "He was charged with the intentional killing of his neighbour.",
        "He was charged with the deliberate killing of his neighbour.",
        None,
    ),
    ("It was a deliberate killing.", "It was an intentional killing.", None),
    (
        "The accidental killing of a pedestrian is not always a crime.",
        "The unintentional killing of a pedestrian is not always a crime.",
        None,
    ),
    ("It was an intentional act.", "", "It was a deliberate act."),
    (  # genetic linkage (and bonding) is no mere association
        "Gene A is linked to gene B on chromosome 3.",
        "Gene A is associated with gene B on chromosome 3.",
        None,
    ),
    ("Smoking is linked to cancer.", "", "Smoking is associated with cancer."),
    (  # the pressure a gas exerts is a physical quantity
        "The gas exerts pressure on the walls of the container.",
        "The gas puts pressure on the walls of the container.",
        None,
    ),
    (
        "The union exerts pressure on the government.",
        "",
        "The union puts pressure on the government.",
    ),
    (  # "fill in the blank" is no "complete the blank"
        "Fill in the blank with a suitable word.",
        "Complete the blank with a suitable word.",
        None,
    ),
    ("Please fill in the form and return it.", "", "Please complete the form and return it."),
    (  # "born into poverty / slavery" is no "born to poverty"
        "She was born into poverty.",
        "She was born to poverty.",
        None,
    ),
    ("She was born into a wealthy family.", "", "She was born to a wealthy family."),
    (  # "individuals" of a population of plants or animals are no "people"
        "In a population of deer, most individuals are brown.",
        "In a population of deer, most people are brown.",
        None,
    ),
    (
        "These individuals are heterozygous for the gene.",
        "These people are heterozygous for the gene.",
        None,
    ),
    ("Individuals should be free to choose.", "", "People should be free to choose."),
    ("Many elderly individuals feel lonely.", "", "Many elderly people feel lonely."),
    (  # a processor's instructions (and DNA's) are a technical term
        "The following instructions are executed by the processor.",
        "The following directions are executed by the processor.",
        None,
    ),
    (
        "The instructions for building proteins are stored in DNA.",
        "The directions for building proteins are stored in DNA.",
        None,
    ),
    ("Read the instructions carefully.", "", "Read the directions carefully."),
    (  # "in all" after "seen" is "in every one", not "in total"
        "This pattern is seen in all.",
        "This pattern is seen in total.",
        None,
    ),
    ("There were 12 apples in all.", "", "There were 12 apples in total."),
    (  # "uncomplicated" is a clinical term (no complications), not "easy"
        "A 45-year-old man has an uncomplicated urinary tract infection.",
        "A 45-year-old man has a straightforward urinary tract infection.",
        None,
    ),
    (
        "In uncomplicated cases of pneumonia, antibiotics suffice.",
        "In straightforward cases of pneumonia, antibiotics suffice.",
        None,
    ),
    ("It is an uncomplicated procedure.", "", "It is a straightforward procedure."),
    (  # "during the night of 9 November" names a date: "at night of"
        "The riots began during the night of 9 November.",
        "The riots began at night of 9 November.",
        None,
    ),
    (
        "Voters queued during the day of the election.",
        "Voters queued in the daytime of the election.",
        None,
    ),
    ("Owls hunt during the night.", "", "Owls hunt at night."),
    (  # intransitive "the war drew on" (went on) is no "drew upon"
        "The war drew on for years.",
        "The war drew upon for years.",
        None,
    ),
    ("She drew on her experience.", "", "She drew upon her experience."),
    (  # a "gift" in property law is a transfer, not a "present"
        "The conveyance was a gift to his daughter.",
        "The conveyance was a present to his daughter.",
        None,
    ),
    ("The gift was valid.", "The present was valid.", None),
    ("She bought a birthday gift.", "", "She bought a birthday present."),
    (  # the pass-15 duplicate of "is found in" undid pass 16's guard for a finding of guilt
        "The defendant is found in possession of drugs.",
        "The defendant occurs in possession of drugs.",
        None,
    ),
    ("The virus is found in the blood.", "", "The virus occurs in the blood."),
    (  # "light switch on the wall": "switch" is a noun there
        "A light switch on the wall controls the lamp.",
        "A light turn on the wall controls the lamp.",
        None,
    ),
    ("Switch on the light.", "", "Turn on the light."),
    (  # "mistaken identity" is an idiom (and a defence)
        "It was a case of mistaken identity.",
        "It was a case of erroneous identity.",
        None,
    ),
    ("He held a mistaken belief.", "", "He held an erroneous belief."),
    (  # "void for vagueness": "vague" of a statute is a term of constitutional law
        "The statute is unconstitutionally vague.",
        "The statute is unconstitutionally imprecise.",
        None,
    ),
    (
        "The ordinance is void because it is vague and overbroad.",
        "The ordinance is void because it is imprecise and overbroad.",
        None,
    ),
    ("The witness gave a vague description.", "", "The witness gave an imprecise description."),
    (  # "defective" product or condition is the term of product liability
        "The manufacturer sold a defective product.",
        "The manufacturer sold a faulty product.",
        None,
    ),
    ("The ladder was defective when sold.", "The ladder was faulty when sold.", None),
    ("He replaced the defective parts.", "", "He replaced the faulty parts."),
    (  # "findings of fact" is a term of procedure
        "The court reviewed the findings of fact.",
        "The court reviewed the results of fact.",
        None,
    ),
    ("The findings of the study were clear.", "", "The results of the study were clear."),
    (  # criminal "attempt" is an offence of its own; "effort" is not
        "He was convicted of an attempt to commit murder.",
        "He was convicted of an effort to commit murder.",
        None,
    ),
    ("Her attempt to climb the mountain failed.", "", "Her effort to climb the mountain failed."),
    (  # "slight" grades a change, not a count noun: "a slight role", "slight details"
        "He played a minor role in the war.",
        "He played a slight role in the war.",
        "He played a small role in the war.",
    ),
    ("Only minor details differ.", "Only slight details differ.", "Only small details differ."),
    ("There was a minor increase.", "", "There was a slight increase."),
    (  # "delivered / baked by hand" is no machine's work undone: "delivered manually"
        "The letter was delivered by hand.",
        "The letter was delivered manually.",
        None,
    ),
    ("The sums were calculated by hand.", "", "The sums were calculated manually."),
    (  # "showed" is a definite finding; "indicated" hedges it
        "The results showed that the drug works.",
        "The results indicated that the drug works.",
        "The results demonstrated that the drug works.",
    ),
    (  # literal "carried on the wind" and "carry on" (conduct) a business are no "continue"
        "The pollen is carried on the wind.",
        "The pollen is continued the wind.",
        None,
    ),
    (
        "A small industry can be carried on at home.",
        "A small industry can be continued at home.",
        None,
    ),
    (
        "They carried on a long correspondence.",
        "They continued a long correspondence.",
        None,
    ),
    ("He carried on working after the accident.", "", "He continued working after the accident."),
    ("The war carried on for years.", "", "The war continued for years."),
    (  # "act as if" is pretending, not functioning
        "Do not act as if nothing happened.",
        "Do not function as if nothing happened.",
        None,
    ),
    ("Enzymes act as catalysts.", "", "Enzymes function as catalysts."),
    (  # "usage" of language is custom, not "use"
        "Formal usage differs from spoken usage.",
        "Formal use differs from spoken usage.",
        None,
    ),
    ("The usage of the word changed.", "The use of the word changed.", None),
    ("Water usage rose sharply.", "", "Water use rose sharply."),
    (  # "spectacles" (shows) after "of" are no "glasses"
        "It was typical of spectacles of the age.",
        "It was typical of glasses of the age.",
        None,
    ),
    (  # a "switch on" a policy is a noun
        "His switch on abortion cost him the election.",
        "His turn on abortion cost him the election.",
        None,
    ),
    (  # "they long ago abandoned" has no room for "a long time ago" before the verb
        "They long ago abandoned the plan.",
        "They a long time ago abandoned the plan.",
        None,
    ),
    ("It happened long ago.", "", "It happened a long time ago."),
    (  # "moved to | the north of Italy" (its northern part) is not "north of Italy"
        "The family moved to the north of Italy in 1950.",
        "The family moved north of Italy in 1950.",
        None,
    ),
    ("The town lies to the north of Rome.", "", "The town lies north of Rome."),
    (  # "accidental death" is a term of insurance (and law)
        "The policy pays double in the case of accidental death.",
        "The policy pays double in the case of unintentional death.",
        None,
    ),
    ("It was an accidental injury.", "", "It was an unintentional injury."),
    (  # "vague" of a feeling is faint, not "imprecise"
        "She felt a vague uneasiness.",
        "She felt an imprecise uneasiness.",
        None,
    ),
    (  # the noun "stems": "removing stems from fruit"
        "A device for removing stems from fruit.",
        "A device for removing arises from fruit.",
        None,
    ),
    ("The leaves stem from the main stem.", "", "The leaves arise from the main stem."),
    (  # a noun "drawing on rock" is no "drawing upon"
        "A line drawing on rock was found in the cave.",
        "A line drawing upon rock was found in the cave.",
        None,
    ),
    (  # the definition of a function: each element is assigned, not "linked with"
        "Each input is associated with exactly one output.",
        "Each input is linked with exactly one output.",
        None,
    ),
    ("Smoking is associated with cancer.", "", "Smoking is linked with cancer."),
    (  # "innate ideas" is a term of philosophy (Descartes, Locke)
        "Locke denied that there are innate ideas.",
        "Locke denied that there are inborn ideas.",
        None,
    ),
    ("She has an innate talent for music.", "", "She has an inborn talent for music."),
    (  # "insufficient funds" is a term of banking
        "The check was dishonored for insufficient funds.",
        "The check was dishonored for inadequate funds.",
        None,
    ),
    # end of PASS_16_MISFIRES
]


@pytest.mark.parametrize(("text", "bad", "good"), PASS_16_MISFIRES)
def test_pass_16_entries_refuse_the_readings_they_would_break(text, bad, good):
    made = _changes(text)
    assert bad not in made, made
    assert good is None or good in made, made
