"""Tests of the answer normaliser (robustness/core/answer_parser/).

Three layers:
- the committed corpus tests/data/normalizer_corpus.jsonl, one case per line, each parse
  decided by a person: short hand-written answers, real SmolLM2-135M-Instruct outputs (an
  older recorder, and generate-mode outputs of `make_runner()` over all eight families and
  every label style, tests/data/make_generate_corpus.py), and hand-written answers in the
  style of larger chat models (reasoning first, Markdown, <think> blocks, other languages,
  long explanations) for multiple choice and agree, importance and frequency scales. The
  accuracy by group is printed and the targets of issue 11 asserted; every entry must also
  parse as decided, and all mismatches are reported together;
- focused tests, one group per rule in the module docstring;
- hypothesis properties: no string makes the parser raise, and every result is either a
  label from the label set or one of the four reasons.
"""

from __future__ import annotations

import gc
import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robustness.core import answer_parser as normalize
from robustness.core.answer_parser import REASONS, ParsedAnswer, parse_answer
from robustness.core.errors import ItemError

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "normalizer_corpus.jsonl"
OUTPUTS = DATA / "smollm2_outputs.jsonl"
GENERATED = DATA / "smollm2_generate_outputs.jsonl"
REAL = "smollm2-135m-instruct"
REAL_GENERATE = "smollm2-135m-instruct-generate"
CHAT = "handwritten-chat"
INVALID = frozenset({"ambiguous", "refusal", "no_label", "empty"})

UP4 = ["A", "B", "C", "D"]
LO4 = ["a", "b", "c", "d"]
NUM4 = ["1", "2", "3", "4"]
ROM4 = ["i", "ii", "iii", "iv"]
ROMU4 = ["I", "II", "III", "IV"]
GRK4 = ["α", "β", "γ", "δ"]
CAP = ["London", "Paris", "Berlin", "Madrid"]
AG4 = ["Strongly disagree", "Disagree", "Agree", "Strongly agree"]
AG5 = ["Strongly disagree", "Disagree", "Neither agree nor disagree", "Agree", "Strongly agree"]
LABEL_SETS = [
    UP4,
    LO4,
    NUM4,
    ROM4,
    ROMU4,
    GRK4,
    ["A", "B", "C", "D", "E"],
    ["(A)", "(B)", "(C)", "(D)"],
    ["★", "♦", "♣", "♠"],
    ["A", "a", "B", "b"],
]


def _outcome(result: ParsedAnswer) -> str:
    return result.label if result.valid else str(result.reason)


def _load_corpus() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


# -- the corpus --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    return _load_corpus()


def test_corpus_size_and_sources(corpus: list[dict]) -> None:
    assert len(corpus) >= 500
    real = [e for e in corpus if e["source"] == REAL]
    assert len(real) >= 60
    assert len({e["id"] for e in corpus}) == len(corpus), "corpus ids must be unique"
    for entry in corpus:
        assert entry["group"], entry
        assert (entry["expected_label"] is None) != (entry["expected_reason"] is None), entry
        if entry["expected_label"] is not None:
            assert entry["expected_label"] in entry["labels"], entry
        else:
            assert entry["expected_reason"] in REASONS, entry
        assert len(entry["labels"]) == len(entry["options"]), entry


def test_corpus_covers_every_outcome(corpus: list[dict]) -> None:
    reasons = {e["expected_reason"] for e in corpus}
    assert set(REASONS) <= reasons
    real = [e for e in corpus if e["source"] == REAL]
    assert sum(e["expected_label"] is not None for e in real) >= 30
    assert sum(e["expected_label"] is None for e in real) >= 10


def test_generate_entries_cover_every_family_label_style_and_scale(corpus: list[dict]) -> None:
    gen = [e for e in corpus if e["source"] == REAL_GENERATE]
    assert len(gen) >= 300
    families = {
        "original",
        "option_order",
        "label_substitution",
        "spelling_noise",
        "lexical_substitution",
        "paraphrase",
        "formatting",
        "logical_equivalence",
        "framing",
    }
    assert {e["category"] for e in gen} == families
    styles = {"upper", "lower", "digits", "roman_lower", "roman_upper", "greek", "symbols"}
    assert {e["label_style"] for e in gen} == styles
    assert {e["kind"] for e in gen} == {"mc", "agree4", "agree5", "importance4", "frequency5"}
    chat = [e for e in corpus if e["source"] == CHAT]
    assert len(chat) >= 150
    groups = {e["group"] for e in chat}
    assert {"other_language", "midpoint", "negated_agreement", "lists", "self_correction"} <= groups
    assert {"hedge", "bracket_conflict", "refusal_plain", "labelish_options"} <= groups
    assert {"reasoning", "markdown", "think", "long"} <= groups
    options = {o for e in chat for o in e["options"]}
    assert {"Paris", "Agree", "Very important", "Often"} <= options


@pytest.mark.parametrize(
    ("source", "path"), [(REAL, OUTPUTS), (REAL_GENERATE, GENERATED)], ids=["short", "generate"]
)
def test_real_entries_are_the_recorded_model_outputs(
    corpus: list[dict], source: str, path: Path
) -> None:
    """Every real entry is verbatim a generation kept in the recorder's output file."""
    recorded = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        recorded[row["gen_id"]] = row
    for entry in corpus:
        if entry["source"] != source:
            continue
        row = recorded[entry["gen_id"]]
        assert (entry["raw"], entry["labels"], entry["options"]) == (
            row["raw"],
            row["labels"],
            row["options"],
        ), entry["id"]


def test_corpus_parses_as_labelled(corpus: list[dict]) -> None:
    """Every entry parses as a person labelled it; all mismatches are listed at once.

    Entries marked ``parser_disagrees`` are cases where the human reading and the parser's
    rules knowingly differ (each has a note); they must keep differing, so that fixing one
    forces its mark to be removed.
    """
    problems = []
    for entry in corpus:
        expected = entry["expected_label"] or entry["expected_reason"]
        got = _outcome(parse_answer(entry["raw"], entry["labels"], entry["options"]))
        if entry.get("parser_disagrees"):
            if got == expected:
                problems.append(f"{entry['id']}: now parses as labelled; drop parser_disagrees")
        elif got != expected:
            problems.append(
                f"{entry['id']}: expected {expected!r}, got {got!r} for "
                f"{entry['raw'][:80]!r} labels={entry['labels']}"
            )
    assert not problems, f"{len(problems)} corpus mismatches:\n" + "\n".join(problems)


def test_corpus_accuracy_by_group_meets_the_targets(corpus: list[dict]) -> None:
    """Issue 11's targets: >= 98% exact, <= 0.5% given an answer where none was decided.

    The accuracy by group is printed (``pytest -s`` or the captured output on failure).
    """
    by_group: dict[str, list[int]] = {}
    exact = answered_wrongly = 0
    for entry in corpus:
        expected = entry["expected_label"] or entry["expected_reason"]
        result = parse_answer(entry["raw"], entry["labels"], entry["options"])
        got = _outcome(result)
        stats = by_group.setdefault(entry["group"], [0, 0, 0])
        stats[0] += 1
        stats[1] += got == expected
        exact += got == expected
        if expected in INVALID and result.valid:
            stats[2] += 1
            answered_wrongly += 1
    lines = [f"{'group':<22}{'cases':>6}{'exact':>9}{'answered, not decided':>24}"]
    for group, (n, ok, wrong) in sorted(by_group.items()):
        lines.append(f"{group:<22}{n:>6}{ok / n:>9.1%}{wrong:>24}")
    n = len(corpus)
    lines.append(f"{'all':<22}{n:>6}{exact / n:>9.1%}{answered_wrongly:>24}")
    print("\n".join(lines))
    assert exact / n >= 0.98, "\n".join(lines)
    assert answered_wrongly / n <= 0.005, "\n".join(lines)


def test_known_disagreements_are_few_and_explained(corpus: list[dict]) -> None:
    marked = [e for e in corpus if e.get("parser_disagrees")]
    assert len(marked) <= 5  # of 931 cases
    assert all(e.get("note") for e in marked)


# -- the result type and bad input ---------------------------------------------------------


def test_parsed_answer_valid_and_frozen() -> None:
    good = parse_answer("B", UP4, CAP)
    assert good == ParsedAnswer("B", 1, None) and good.valid
    bad = parse_answer("", UP4, CAP)
    assert bad == ParsedAnswer(None, None, "empty") and not bad.valid
    with pytest.raises(AttributeError):
        good.label = "C"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("labels", "options"),
    [([], []), (["A", "A"], ["x", "y"]), (["A", ""], ["x", "y"]), (["A", "B"], ["x"])],
)
def test_bad_label_sets_raise(labels: list[str], options: list[str]) -> None:
    with pytest.raises(ValueError):
        parse_answer("A", labels, options)


def test_patterns_are_compiled_once_per_label_and_option_set() -> None:
    labels = ["Q1", "Q2", "Q3"]
    parse_answer("Q2", labels, ["x", "y", "z"])
    before = normalize._compile_labels.cache_info()
    for raw in ("Q1", "Q3", "neither"):
        parse_answer(raw, labels, ["x", "y", "z"])
    after = normalize._compile_labels.cache_info()
    assert after.misses == before.misses
    assert after.hits == before.hits + 3


# -- focused rules ---------------------------------------------------------------------------


def _check(cases: list[tuple[str, list[str], list[str], str]]) -> None:
    wrong = [
        (raw, exp, _outcome(parse_answer(raw, labels, options)))
        for raw, labels, options, exp in cases
    ]
    wrong = [w for w in wrong if w[1] != w[2]]
    assert not wrong, wrong


def test_label_forms() -> None:
    forms = [
        "B",
        "(B)",
        "B)",
        "B.",
        "[B]",
        "**B**",
        "Answer: B",
        "The answer is B.",
        "B. Paris",
        "`B`",
        "'B'",
        '"B"',
        "Answer:\nB",
        "Option B",
        "{B}",
        "<B>",
        "The correct answer is: (B) Paris",
        "B - Paris",
        "B: Paris",
        "> B",
    ]
    _check([(raw, UP4, CAP, "B") for raw in forms])


def test_case_folding_only_when_unambiguous() -> None:
    _check(
        [
            ("b", UP4, CAP, "B"),
            ("B", LO4, CAP, "b"),
            ("II", ROM4, CAP, "ii"),
            ("iv", ROMU4, CAP, "IV"),
            ("Γ", GRK4, CAP, "γ"),
            # a set that differs only by case is matched case-sensitively
            ("b", ["A", "a", "B", "b"], ["w", "x", "y", "z"], "b"),
            ("B", ["A", "a", "B", "b"], ["w", "x", "y", "z"], "B"),
        ]
    )


def test_whole_tokens_only() -> None:
    _check(
        [
            ("ii", ROM4, CAP, "ii"),
            ("iii", ROM4, CAP, "iii"),
            ("(iv)", ROM4, CAP, "iv"),
            ("Bob said so.", UP4, CAP, "no_label"),
            ("B-cells and B's friends", UP4, CAP, "no_label"),
            ("C++ and C# are languages.", UP4, CAP, "no_label"),
            ("e.g. this", ["a", "b", "c", "d", "e"], [*CAP, "Rome"], "no_label"),
            ("The answer is 3.5", NUM4, CAP, "no_label"),
            ("The answer is 13.", NUM4, CAP, "no_label"),
            ("It costs 1,000 euros.", NUM4, CAP, "no_label"),
            # documented: a bare upper-case label in prose is a mention, a lower-case one is not
            ("Vitamin C helps.", UP4, CAP, "C"),
            ("c helps.", UP4, CAP, "no_label"),
        ]
    )


def test_word_like_labels_need_a_label_context() -> None:
    bio = ["Nucleus", "Chloroplast", "Ribosome", "Cell wall"]
    _check(
        [
            ("I think so.", ROMU4, CAP, "no_label"),
            ("I think the answer is II.", ROMU4, CAP, "II"),
            ("I", ROMU4, CAP, "I"),
            ("A mitochondrion is an organelle.", UP4, bio, "no_label"),
            ("A chloroplast.", UP4, bio, "B"),
            ("A. Chloroplast", UP4, bio, "ambiguous"),  # label A with option B's text
            ("The answer is b, a city on the Seine.", LO4, CAP, "b"),
            ("The answer is a.", LO4, CAP, "a"),
            ("A or B", UP4, CAP, "ambiguous"),
            ("1 in 4 people agree.", NUM4, CAP, "no_label"),
        ]
    )


def test_numbers_and_numeric_options() -> None:
    mul = ["54", "56", "58", "64"]
    _check(
        [
            ("56", NUM4, mul, "2"),
            ("The answer is 4", NUM4, mul, "4"),  # label first
            ("4) 56", NUM4, mul, "ambiguous"),
            ("2) 56", NUM4, mul, "2"),
            ("7 times 8 is 56.", NUM4, mul, "2"),
            ("1. How does this work?", NUM4, CAP, "no_label"),
        ]
    )


def test_greek_labels() -> None:
    _check(
        [
            ("β", GRK4, CAP, "β"),
            ("(β) Paris", GRK4, CAP, "β"),
            ("Beta", GRK4, CAP, "β"),
            ("The answer is gamma.", GRK4, CAP, "γ"),
            ("B", GRK4, CAP, "no_label"),
            ("α or β", GRK4, CAP, "ambiguous"),
        ]
    )


def test_option_text() -> None:
    _check(
        [
            ("Paris", UP4, CAP, "B"),
            ("The answer is Paris.", UP4, CAP, "B"),
            ("PARIS!", UP4, CAP, "B"),
            (
                "Egyptians built them.",
                UP4,
                ["The Romans", "The Egyptians", "The Celts", "The Aztecs"],
                "B",
            ),
            ("Paris (B)", UP4, CAP, "B"),
            ("London (B)", UP4, CAP, "ambiguous"),
            ("B) London", UP4, CAP, "ambiguous"),
            ("The answer is not London, it is Paris.", UP4, CAP, "B"),
        ]
    )


def test_agree_scale_wording() -> None:
    _check(
        [
            ("I strongly disagree", NUM4, AG4, "1"),
            ("I disagree", NUM4, AG4, "2"),
            ("I agree", NUM4, AG4, "3"),
            ("I strongly agree", NUM4, AG4, "4"),
            ("Disagree.", NUM4, AG4, "2"),
            ("agree", NUM4, AG4, "3"),
            ("I agree strongly.", NUM4, AG4, "4"),
            ("I somewhat agree", NUM4, AG4, "3"),
            ("I completely disagree", NUM4, AG4, "2"),
            ("I neither agree nor disagree", [*NUM4, "5"], AG5, "3"),
            ("I neither agree nor disagree", NUM4, AG4, "no_label"),
            # issue 11: negated agreement is the plain Disagree (was no_label)
            ("I do not agree.", NUM4, AG4, "2"),
            ("I would not say that I agree.", NUM4, AG4, "no_label"),
            ("I don't know, but I agree.", NUM4, AG4, "3"),
            ("Agree or disagree, it depends.", NUM4, AG4, "ambiguous"),
        ]
    )


def test_precedence_clear_statements_before_mentions() -> None:
    _check(
        [
            # repeated clear statements with one label are one answer
            ("The answer is B. Yes, B.", UP4, CAP, "B"),
            ("B) Paris\n\nThe correct answer is B.", UP4, CAP, "B"),
            # clear statements that disagree are ambiguous
            ("A) London\n\nThe correct answer is B) Paris.", UP4, CAP, "ambiguous"),
            # a clear statement outranks other mentions
            ("The answer is B. London and Berlin are not capitals of France.", UP4, CAP, "B"),
            ("B is correct; A and C are wrong.", UP4, CAP, "B"),
            # an echoed option list is not an answer, but a cue after it is
            ("A) London\nB) Paris\nC) Berlin\nD) Madrid", UP4, CAP, "ambiguous"),
            ("A) London\nB) Paris\nC) Berlin\nD) Madrid\nAnswer: C", UP4, CAP, "C"),
            # "A:" opening the line is the Q:/A: answer cue
            ("A: Paris", UP4, CAP, "B"),
            ("A: [C] Berlin", UP4, CAP, "C"),
        ]
    )


def test_refusals() -> None:
    _check(
        [
            ("As an AI, I cannot answer that.", UP4, CAP, "refusal"),
            ("I don't have personal opinions.", NUM4, AG4, "refusal"),
            (
                "As an AI language model, I don't have personal beliefs, but some people agree.",
                NUM4,
                AG4,
                "refusal",
            ),
            ("I'm sorry, but I can't help with that.", UP4, CAP, "refusal"),
            ("I'm a helpful AI assistant.", NUM4, AG4, "refusal"),
            ("As an AI, I would say B.", UP4, CAP, "B"),  # an answer outranks the disclaimer
            ("I cannot stress this enough: I agree.", NUM4, AG4, "3"),
        ]
    )


def test_empty_and_no_label() -> None:
    _check(
        [
            ("", UP4, CAP, "empty"),
            (" \n\t", UP4, CAP, "empty"),
            ("***", UP4, CAP, "no_label"),
            ("Good question!", UP4, CAP, "no_label"),
            ("\u200b", UP4, CAP, "no_label"),
        ]
    )


def test_odd_code_points_do_not_raise() -> None:
    for raw in ("\ud800 B", "B\x00", "\ufeffB", "\U0001f600 B", "B\u0301"):
        assert isinstance(parse_answer(raw, UP4, CAP), ParsedAnswer)


def test_long_text_is_cut() -> None:
    tail = " B" + " filler" * 2000 + " The answer is C."
    assert _outcome(parse_answer("The answer is B." + tail, UP4, CAP)) == "B"
    assert _outcome(parse_answer("x" * (normalize.MAX_CHARS + 10) + " B", UP4, CAP)) == "no_label"


# -- properties ------------------------------------------------------------------------------

TOKENS = st.sampled_from(
    [
        "A",
        "B",
        "b",
        "(C)",
        "D)",
        "ii",
        "I",
        "a",
        "1",
        "2.",
        "β",
        "beta",
        "Answer:",
        "answer is",
        "The",
        "Paris",
        "London",
        "agree",
        "disagree",
        "strongly",
        "not",
        "I'm",
        "AI",
        "As an",
        "or",
        "and",
        ",",
        ".",
        "\n",
        "**",
        "(",
        ")",
        "[",
        "]",
        "'",
        '"',
        "-",
        ":",
        "e.g.",
        "Ⅱ",
        "①",
        "３",
        "\u200b",
        "\x00",
        "é",
        "Ⅳ",
        "I cannot answer",
        "option",
    ]
)


def _options_for(labels: list[str], which: int) -> list[str]:
    """Agree-scale options for odd-numbered label sets, capitals for the others."""
    if which % 2:
        return AG5 if len(labels) == 5 else AG4
    return ([*CAP, "Rome"])[: len(labels)]


def _assert_well_formed(result: ParsedAnswer, labels: list[str]) -> None:
    assert isinstance(result, ParsedAnswer)
    if result.valid:
        assert result.position is not None and result.label == labels[result.position]
    else:
        assert result.label is None and result.position is None
        assert result.reason in REASONS


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(raw=st.text(max_size=300), which=st.integers(0, len(LABEL_SETS) - 1))
def test_any_text_never_raises(raw: str, which: int) -> None:
    labels = LABEL_SETS[which]
    _assert_well_formed(parse_answer(raw, labels, _options_for(labels, which)), labels)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    words=st.lists(TOKENS, max_size=25),
    which=st.integers(0, len(LABEL_SETS) - 1),
    sep=st.sampled_from([" ", "", "\n"]),
)
def test_label_like_soup_never_raises(words: list[str], which: int, sep: str) -> None:
    labels = LABEL_SETS[which]
    options = _options_for(labels, which)
    _assert_well_formed(parse_answer(sep.join(words), labels, options), labels)


@settings(max_examples=200, deadline=None)
@given(which=st.integers(0, len(LABEL_SETS) - 1), data=st.data())
def test_clear_statements_round_trip(which: int, data: st.DataObject) -> None:
    """Whatever the label set, a clear statement of label k parses to label k."""
    labels = LABEL_SETS[which]
    options = ["Lisbon", "Oslo", "Vienna", "Athens", "Dublin"][: len(labels)]
    k = data.draw(st.integers(0, len(labels) - 1))
    bare = normalize._bare_label(labels[k])
    template = data.draw(
        st.sampled_from(
            [
                "{l}",
                "({l})",
                "[{l}]",
                "{l})",
                "{l}.",
                "Answer: {l}",
                "The answer is {l}.",
                "The answer is ({l}) {o}.",
                "{l}) {o}",
                "I choose {l}.",
                "**{l}**",
                "{o}",
                "The answer is {o}.",
                "Option {l}",
            ]
        )
    )
    raw = template.format(l=bare, o=options[k])
    result = parse_answer(raw, labels, options)
    assert (result.label, result.position) == (labels[k], k), raw


# -- any input: a result or a clean error, within 50 ms (issue 17) ---------------------------

#: Per-answer budget of issue 17, in CPU seconds of this process (time.process_time), so a
#: busy shared machine does not count other processes' time against the parser.
BUDGET_S = 0.050

LABEL_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from("ABCabcαβγiv()[].1"),
    max_size=6,
)
ADVERSARIAL = [
    "a" + "\n" * 4000 + "b",
    "a" + " \n" * 2000 + "b",
    "β\n" * 2000,
    "α " * 2000,
    "(" * 4000,
    ". " * 2000,
    "— " * 2000,
    "No, " * 1000,
    "I " * 2000,
    "I'd " * 1000,
    "answer is " * 400,
    "B (Paris) " * 400,
    "A) London\n" * 400,
    "not " * 1000 + "agree",
    "Actually, B. " * 300,
    "</think>" * 500 + "B",
    "<think>" * 500,
    "答案是" * 1300,
    "\ud800" * 4000,
    "x" * 100_000 + " B",
]


def _timed(raw: object, labels: list, options: list) -> tuple[ParsedAnswer | None, float]:
    """The parse and its CPU time, the garbage collector paused (a collection is no parse cost)."""
    gc.disable()
    start = time.process_time()
    try:
        result: ParsedAnswer | None = parse_answer(raw, labels, options)
    except ItemError:
        result = None
    finally:
        spent = time.process_time() - start
        gc.enable()
    return result, spent


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    raw=st.one_of(
        st.text(max_size=3000),
        st.text(alphabet="AB( )\n.,:αβ答", max_size=4000),
        st.none(),
        st.integers(),
        st.floats(),
        st.binary(max_size=50),
        st.lists(st.integers(), max_size=3),
    ),
    labels=st.lists(LABEL_TEXT, max_size=9),
    data=st.data(),
)
def test_any_input_and_any_label_set_is_a_result_or_a_clean_error(
    raw: object, labels: list[str], data: st.DataObject
) -> None:
    n = data.draw(st.sampled_from([len(labels), len(labels), len(labels) + 1]))
    options = data.draw(st.lists(st.text(max_size=60), min_size=n, max_size=n))
    result, spent = _timed(raw, labels, options)
    if result is not None:
        _assert_well_formed(result, labels)
    assert spent < BUDGET_S, f"{spent * 1000:.1f} ms for {str(raw)[:60]!r} with {labels!r}"


@pytest.mark.parametrize("raw", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
@pytest.mark.parametrize(
    ("labels", "options"),
    [(GRK4, CAP), (UP4, CAP), ([*NUM4, "5"], AG5)],
    ids=["greek", "A-D", "1-5"],
)
def test_adversarial_answers_parse_within_the_budget(
    raw: str, labels: list[str], options: list[str]
) -> None:
    parse_answer("warm up the label set's patterns", labels, options)
    normalize._parse_text.cache_clear()
    result, spent = _timed(raw, labels, options)
    assert result is not None
    _assert_well_formed(result, labels)
    assert spent < BUDGET_S, f"{spent * 1000:.1f} ms"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [(None, "empty"), (float("nan"), "empty"), (3, "no_label"), ([1, 2], "no_label")],
)
def test_a_non_string_raw_is_a_clean_invalid_result(raw: object, reason: str) -> None:
    assert parse_answer(raw, UP4, CAP) == ParsedAnswer(None, None, reason)
    assert parse_answer(b"B", UP4, CAP).label == "B"


@pytest.mark.parametrize(
    ("labels", "options", "message"),
    [
        ("ABCD", CAP, "labels must be a list"),
        (UP4, None, "options must be a list"),
        ([1, 2, 3, 4], CAP, "label 1 in"),
        ([["A"], "B"], ["x", "y"], "must be strings"),
        (UP4, CAP[:3], "4 labels but 3 options"),
    ],
)
def test_bad_label_sets_are_one_clear_item_error(labels: object, options: object, message: str):
    with pytest.raises(ItemError, match=message):
        parse_answer("B", labels, options)  # type: ignore[arg-type]
    with pytest.raises(ItemError, match="conflict policy 'first'"):
        parse_answer("B", UP4, CAP, conflict="first")


# -- issue 11's groups, one focused check each ----------------------------------------------


def test_issue_11_groups() -> None:
    ag5 = [*NUM4, "5"]
    imp5 = ["Not at all", "Slightly", "Neither important nor unimportant", "Very", "Extremely"]
    labelish = ["B. first", "A. second", "D. third", "C. fourth"]
    _check(
        [
            ("La respuesta es A.", UP4, CAP, "A"),
            ("答案是A。", UP4, CAP, "A"),
            ("Neutral", ag5, AG5, "3"),
            ("Neither.", ag5, AG5, "3"),
            ("Neither good nor bad", ag5, imp5, "3"),
            ("Neutral", NUM4, AG4, "no_label"),
            ("I don't agree", NUM4, AG4, "2"),
            ("B, C", UP4, CAP, "ambiguous"),
            ("a) and d) both seem right", LO4, CAP, "ambiguous"),
            ("The answer is B. Actually, wait: it's C.", UP4, CAP, "C"),
            ("B and C are both plausible, but B", UP4, CAP, "B"),
            ("I think it's C, but B is also possible.", UP4, CAP, "C"),
            ("4 (Strongly agree)", ag5, AG5, "ambiguous"),
            ("I don't know.", UP4, CAP, "refusal"),
            ("I prefer not to answer.", NUM4, AG4, "refusal"),
            ("B. first", UP4, labelish, "A"),
            ("<think>Maybe C? No. It's B.</think>\nB", UP4, CAP, "B"),
        ]
    )


def test_conflict_policy_and_both_readings() -> None:
    for policy, label in (("ambiguous", None), ("label", "B"), ("text", "C")):
        result = parse_answer("B. Agree", UP4, AG4, conflict=policy)
        assert (result.label, result.label_reading, result.text_reading) == (label, 1, 2)
        assert result.reason == (None if label else "ambiguous")
    # another disagreement stays ambiguous under every policy, with no readings
    for policy in ("label", "text"):
        result = parse_answer("A) London\n\nThe answer is C.", UP4, CAP, conflict=policy)
        assert result == ParsedAnswer(None, None, "ambiguous")
    # a conflict and a later cue: the label's side agrees with the cue, the text's does not
    raw = "B) London\n\nThe answer is B."
    expected = {"ambiguous": (None, "ambiguous"), "label": ("B", None), "text": (None, "ambiguous")}
    for policy, (label, reason) in expected.items():
        result = parse_answer(raw, UP4, CAP, conflict=policy)
        assert (result.label, result.reason) == (label, reason)
        assert (result.label_reading, result.text_reading) == (1, None)
