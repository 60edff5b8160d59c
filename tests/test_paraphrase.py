"""paraphrase: rule rewrites, user files, model paraphrases, the meaning check, the oracle.

Fast tests use the n-gram similarity or stubs; tests marked slow use all-MiniLM-L6-v2;
``shared_data`` tests use ../shared/data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest
from helpers.oracle import assert_options_once, assert_round_trip

import robustness as rb
from perturbations.base import make_family
from perturbations.paraphrase import (
    INSTRUCTIONS,
    STATEMENT_FRAMES,
    THRESHOLD,
    FileParaphraser,
    ModelParaphraser,
    Paraphrase,
    ParaphraseFileError,
    Paraphraser,
    Rewrite,
    RuleParaphraser,
    clean_output,
    keeps_meaning_markers,
    question_rewrites,
)
from perturbations.similarity import NgramSimilarity, meaning_text
from robustness.core.errors import ModelError
from robustness.core.items import Item
from robustness.core.prompts import default_spec
from robustness.core.seeding import family_rng
from robustness.core.variants import Variant

MC = Item(
    "m1",
    "demo",
    "objective",
    "Which of the following is the largest planet?",
    ("Mars", "Jupiter", "Venus", "Earth"),
    answer=1,
)
WHAT = Item("m2", "demo", "objective", "What is 7 times 6?", ("42", "48", "36", "54"), answer=0)
TASK = Item(
    "m3",
    "demo",
    "objective",
    "Find the next number: 2, 4, 8, 16",
    ("24", "32", "30", "18"),
    answer=1,
)
AGREE = Item(
    "a1",
    "demo",
    "subjective",
    "It is not always wrong to tell a white lie.",
    ("Strongly disagree", "Disagree", "Agree", "Strongly agree"),
    scale="ordinal",
)
QUOTED = Item(
    "a2",
    "demo",
    "subjective",
    'The saying "time is money" is true.',
    ("Disagree", "Agree"),
    scale="ordinal",
)
ORD = Item(
    "o1",
    "demo",
    "subjective",
    "How important is leisure time in your life?",
    ("Not at all important", "Slightly important", "Very important"),
    scale="ordinal",
)
ITEMS = (MC, WHAT, TASK, AGREE, QUOTED, ORD)


def _family(**kw) -> Paraphrase:
    kw.setdefault("similarity", NgramSimilarity())
    kw.setdefault("threshold", 0.0)
    return Paraphrase(**kw)


def _perturb(fam, item, seed=0, n=5, spec=None):
    return fam.perturb(spec or default_spec(item), item, family_rng(seed, item, fam.name), n)


def oracle_round_trip(variant: Variant) -> None:
    """The project's content oracle (tests/helpers/oracle.py) maps every option back; the map is
    the identity, and each option appears once with its label in the rendered prompt."""
    assert variant.answer_map == {lab: i for i, lab in enumerate(variant.spec.labels)}
    assert_options_once(variant)
    assert_round_trip(variant)


# ----------------------------------------------------------------------------- rules


def test_instruction_wordings_ask_for_a_label_only():
    for kind, wordings in INSTRUCTIONS.items():
        assert len(set(wordings)) == len(wordings) >= 5, kind
        for w in wordings:
            assert "label" in w and "letter" not in w.lower()


def test_statement_frames_keep_the_statement_verbatim():
    rewrites = question_rewrites(AGREE, AGREE.question)
    frames = [q for how, q in rewrites if how.startswith("statement_frame")]
    assert len(frames) == len(STATEMENT_FRAMES)
    assert all(AGREE.question in q for q in frames)
    # statements with their own double quotes get no quoting frame
    quoted = [
        q
        for how, q in question_rewrites(QUOTED, QUOTED.question)
        if how.startswith("statement_frame")
    ]
    assert quoted and all(q.count('"') == 2 for q in quoted)


def test_question_rules():
    got = dict(question_rewrites(MC, MC.question))
    assert got["rule/which_one"] == "Which one of the following is the largest planet?"
    assert "Here is a question: " + MC.question in got.values()
    got = dict(question_rewrites(WHAT, WHAT.question))
    assert got["rule/whats"] == "What's 7 times 6?"
    back = dict(question_rewrites(WHAT, "What's 7 times 6?"))
    assert back["rule/what_is"] == "What is 7 times 6?"
    assert all(
        how.startswith(("task_frame", "rule")) for how, _ in question_rewrites(TASK, TASK.question)
    )
    got = dict(question_rewrites(ORD, ORD.question))
    assert got["in_your_opinion"] == "In your opinion, how important is leisure time in your life?"


def test_negations_and_digits_survive_every_rule_rewrite():
    for item in ITEMS:
        for _, q in question_rewrites(item, item.question):
            assert ("not" in q) == ("not" in item.question)
            assert [c for c in q if c.isdigit()] == [c for c in item.question if c.isdigit()]


def test_rule_paraphraser_is_seeded_and_keeps_a_custom_instruction():
    para = RuleParaphraser()
    spec = default_spec(MC)
    a = para.paraphrase(MC, spec, 8, np.random.default_rng(1))
    b = para.paraphrase(MC, spec, 8, np.random.default_rng(1))
    c = para.paraphrase(MC, spec, 8, np.random.default_rng(2))
    assert a == b and a != c and len(a) == 8
    assert all(r.instruction is None or r.instruction in INSTRUCTIONS["nominal"] for r in a)
    custom = spec.with_(instruction="Answer as a pirate would. Give the label.")
    got = para.paraphrase(MC, custom, 50, np.random.default_rng(1))
    assert got and all(r.instruction is None for r in got)


# ----------------------------------------------------------------------------- the family


def test_same_seed_same_variants_other_seed_differs():
    fam = _family()
    for item in ITEMS:
        a = [(s.render(), p) for s, p in _perturb(fam, item, 0)]
        b = [(s.render(), p) for s, p in _perturb(_family(), item, 0)]
        assert a == b and len(a) == 5
    c = [s.render() for s, _ in _perturb(fam, MC, 1)]
    assert c != [s.render() for s, _ in _perturb(fam, MC, 0)]


def test_options_labels_and_format_never_change():
    fam = _family()
    for item in ITEMS:
        spec = default_spec(item)
        out = _perturb(fam, item, 3)
        texts = [s.render() for s, _ in out]
        assert len(set(texts)) == len(texts) and spec.render() not in texts
        for vspec, params in out:
            assert (vspec.options, vspec.labels, vspec.order, vspec.format, vspec.negated) == (
                spec.options,
                spec.labels,
                spec.order,
                spec.format,
                spec.negated,
            )
            assert params["paraphraser"] == "rules" and params["rewrite"]
            oracle_round_trip(Variant(item, fam.name, "x", vspec, params))


def test_similarity_recorded_and_threshold_enforced():
    class Stub:
        """Low similarity for every rewrite that adds the 'Here is' frame."""

        def similarity(self, a, b):
            return np.array([0.5 if "Here is" in t else 0.97 for t in b])

    fam = _family(similarity=Stub(), threshold=0.9)
    out = _perturb(fam, MC, 0, n=20)
    assert out
    for vspec, params in out:
        assert "Here is" not in meaning_text(vspec)
        assert params["similarity"] == 0.97 and params["threshold"] == 0.9
    everything = _perturb(_family(similarity=Stub(), threshold=0.0), MC, 0, n=40)
    assert any("Here is" in meaning_text(s) for s, _ in everything)


def test_family_registered_and_takes_its_parts():
    fam = make_family("paraphrase", threshold=0.7)
    assert isinstance(fam, Paraphrase) and fam.params["threshold"] == 0.7
    assert isinstance(fam.paraphraser, RuleParaphraser)
    assert Paraphrase.parameters()["threshold"] == THRESHOLD
    with pytest.raises(ValueError, match="no parameter"):
        Paraphrase(bogus=1)
    assert isinstance(RuleParaphraser(), Paraphraser)


# ----------------------------------------------------------------------------- files


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_file_paraphraser_jsonl_and_csv(tmp_path):
    jsonl = _write(
        tmp_path,
        "p.jsonl",
        "\n".join(
            json.dumps(r)
            for r in [
                {"item_id": "m1", "paraphrase": "Which planet is the biggest one?"},
                {"item_id": "m1", "paraphrase": "Name the largest planet.", "dataset": "demo"},
                {"item_id": "m1", "paraphrase": "Not this one.", "dataset": "other"},
                {"item_id": "m2", "paraphrase": "How much is 7 times 6?"},
            ]
        )
        + "\n\n",
    )
    para = FileParaphraser(jsonl)
    got = para.paraphrase(MC, default_spec(MC), 5, np.random.default_rng(0))
    assert [r.question for r in got] == [
        "Which planet is the biggest one?",
        "Name the largest planet.",
    ]
    assert got[0].instruction is None and got[0].how == "file/line 1"
    csv_path = _write(tmp_path, "p.csv", 'item_id,paraphrase\nm2,"Seven times six, is?"\n')
    fam = _family(paraphraser=FileParaphraser(csv_path))
    out = _perturb(fam, WHAT)
    assert [s.question for s, _ in out] == ["Seven times six, is?"]
    assert out[0][1]["paraphraser"] == "file"
    oracle_round_trip(Variant(WHAT, fam.name, "x", out[0][0], out[0][1]))


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "p.jsonl",
            '{"item_id": "m1", "paraphrase": "ok"}\n{"item_id": "m1", ',
            "line 2: not valid JSON",
        ),
        ("p.jsonl", '["m1", "x"]\n', "line 1: expected a JSON object"),
        ("p.jsonl", '{"item_id": "m1"}\n', "line 1: missing field 'paraphrase'"),
        (
            "p.jsonl",
            '{"item_id": "m1", "paraphrase": "a"}\n{"item_id": "m2", "paraphrase": " "}\n',
            "line 2, field 'paraphrase': is empty",
        ),
        ("p.jsonl", '{"item_id": null, "paraphrase": "a"}\n', "line 1, field 'item_id'"),
        ("p.csv", "item_id,text\nm1,hello\n", "line 1: the header has no column 'paraphrase'"),
        ("p.csv", "item_id,paraphrase\nm1,a\nm2,\n", "line 3, field 'paraphrase': is empty"),
        ("p.csv", "item_id,paraphrase\nm1,a,b\n", "line 2: the row has more cells than the header"),
        ("p.txt", "item_id,paraphrase\n", "unknown paraphrase file type '.txt'"),
        ("p.jsonl", "\n\n", "holds no paraphrases"),
    ],
)
def test_file_paraphraser_errors_name_file_and_line(tmp_path, name, text, message):
    path = _write(tmp_path, name, text)
    with pytest.raises(ParaphraseFileError) as err:
        FileParaphraser(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)


def test_file_paraphraser_reads_every_format_the_item_loaders_read(tmp_path):
    """The file is read by the loaders' readers: JSON lists, TSV and Parquet too, one
    paraphrase each, with the loaders' locations (item, line, row) in ``how``."""
    import pandas as pd

    rows = [{"item_id": "m1", "paraphrase": "Which planet is the biggest one?"}]
    paths = [
        _write(tmp_path, "p.json", json.dumps(rows)),
        _write(tmp_path, "p.tsv", "item_id\tparaphrase\nm1\tWhich planet is the biggest one?\n"),
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "p.parquet")
    paths.append(tmp_path / "p.parquet")
    hows = []
    for path in paths:
        got = FileParaphraser(path).paraphrase(MC, default_spec(MC), 3, np.random.default_rng(0))
        assert [r.question for r in got] == ["Which planet is the biggest one?"]
        hows.append(got[0].how)
    assert hows == ["file/item 0", "file/line 2", "file/row 0"]


def test_file_paraphraser_missing_and_non_utf8(tmp_path):
    with pytest.raises(ParaphraseFileError, match="no such paraphrase file"):
        FileParaphraser(tmp_path / "absent.jsonl")
    path = tmp_path / "p.csv"
    path.write_bytes(b"item_id,paraphrase\nm1,caf\xe9\n")
    with pytest.raises(
        ParaphraseFileError, match="line 2: byte 0xe9 at column 7 is not valid UTF-8"
    ):
        FileParaphraser(path)


# ----------------------------------------------------------------------------- a model


@dataclass
class Out:
    text: str


class FakeRunner:
    """Answers every prompt with the next canned reply; remembers what it was asked."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = []

    def generate(self, prompts, max_new_tokens):
        self.calls.append((list(prompts), max_new_tokens))
        return [Out(self.replies[i % len(self.replies)]) for i in range(len(prompts))]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (
            'Sure! Here is the rewritten question: "Which planet is biggest?"',
            "Which planet is biggest?",
        ),
        (
            "Rewritten question:\n\nWhich planet is biggest?\n\nI kept the meaning.",
            "Which planet is biggest?",
        ),
        ("**Question:** Which planet is biggest?\nA. Mars\nB. Jupiter", "Which planet is biggest?"),
        ("“Which planet is biggest?”", "Which planet is biggest?"),
        ("Which planet is biggest?", "Which planet is biggest?"),
        (
            "Paraphrase: It is sometimes fine to tell a white lie.",
            "It is sometimes fine to tell a white lie.",
        ),
        ("", ""),
        ('The statement is reworded to: "Firms must be regulated."', "Firms must be regulated."),
        (
            "Here's a rephrased version of the question:\nWhich planet is biggest?",
            "Which planet is biggest?",
        ),
        ('Firms must be regulated."', "Firms must be regulated."),
        ('“Firms must be "regulated".', 'Firms must be "regulated".'),
    ],
)
def test_clean_output(raw, clean):
    assert clean_output(raw) == clean


@pytest.mark.parametrize(
    ("paraphrase", "question", "keeps"),
    [
        ("Which planet is the biggest?", "Which of these is the largest planet?", True),
        ("Telling lies is never right.", "It is not right to tell lies.", True),
        ("Telling lies is right.", "It is not right to tell lies.", False),  # negation lost
        ("What is 7 times 8?", "What is 7 times 6?", False),  # another number
        (
            "A being that is greater exists in reality.",
            "A being that exists in reality is greater than a being that _____.",
            False,
        ),  # blank
        (
            "Rubber is used on pan handles because it insulates.",
            "Pan handles are coated in rubber because rubber provides",
            False,
        ),  # completed stem
        (
            "Pan handles have a rubber coating since rubber provides",
            "Pan handles are coated in rubber because rubber provides",
            True,
        ),
        (
            "The spin of nitrogen's electrons is 3/2.",
            "What is the total spin of nitrogen's electrons?",
            False,
        ),  # question made a claim
    ],
)
def test_keeps_meaning_markers(paraphrase, question, keeps):
    assert keeps_meaning_markers(paraphrase, question) is keeps


def test_model_paraphraser_prompts_cleans_and_dedupes():
    runner = FakeRunner(
        [
            'Here is the paraphrase: "Which planet is the biggest?"',
            'Which of the following is the largest "planet"?',  # the original's words: dropped
            "Which planet is the biggest?",  # a duplicate: dropped
            "",  # empty: dropped
            "Of these, which planet is largest?",
        ]
    )
    para = ModelParaphraser(runner, max_new_tokens=40)
    got = para.paraphrase(MC, default_spec(MC), 5, np.random.default_rng(0))
    assert [r.question for r in got] == [
        "Which planet is the biggest?",
        "Of these, which planet is largest?",
    ]
    prompts, budget = runner.calls[0]
    assert budget == 40 and len(prompts) == 5
    for p in prompts:
        assert p[0]["role"] == "user" and MC.question in p[0]["content"]
        assert "Jupiter" not in p[0]["content"]  # the options are never shown to it
    again = ModelParaphraser(FakeRunner(runner.replies)).paraphrase(
        MC, default_spec(MC), 5, np.random.default_rng(0)
    )
    assert [r.how for r in again] == [r.how for r in got]


def test_model_paraphraser_in_the_family_with_plain_prompts():
    runner = FakeRunner(
        [
            "Is it not always wrong to tell a white lie?",  # a question: dropped
            "It is always wrong to tell a white lie.",  # negation lost: dropped
            "Telling a white lie is not always wrong.",
            "A white lie is not always a wrong thing to tell.",
        ]
    )
    fam = _family(paraphraser=ModelParaphraser(runner, chat=False))
    out = _perturb(fam, AGREE, n=2)
    assert len(runner.calls[0][0]) == 2 * 2  # oversampled
    assert isinstance(runner.calls[0][0][0], str)
    assert "statement" in runner.calls[0][0][0]
    assert [s.question for s, _ in out] == [
        "Telling a white lie is not always wrong.",
        "A white lie is not always a wrong thing to tell.",
    ]
    assert all(p["paraphraser"] == "model" for _, p in out)


def test_model_paraphraser_refuses_changed_numbers():
    runner = FakeRunner(["What is 7 times 8?", "What do you get when you multiply 7 by 6?"])
    got = ModelParaphraser(runner).paraphrase(WHAT, default_spec(WHAT), 2, np.random.default_rng(0))
    assert [r.question for r in got] == ["What do you get when you multiply 7 by 6?"]


def test_model_paraphraser_needs_generate():
    with pytest.raises(ModelError, match="generate"):
        ModelParaphraser(object())


def test_rewrite_is_plain_data():
    r = Rewrite("Q?", None, "rule/x")
    assert r == Rewrite(question="Q?", instruction=None, how="rule/x")


# ----------------------------------------------------------------------------- real model


@pytest.mark.slow
def test_real_similarity_rejects_a_different_question():
    class Swap:
        name = "swap"

        def paraphrase(self, item, spec, n, rng):
            return [
                Rewrite("Here is a question: " + item.question),
                Rewrite("What is the boiling point of water at sea level?"),
            ]

    fam = Paraphrase(paraphraser=Swap())
    out = _perturb(fam, ORD, n=2)
    assert [s.question for s, _ in out] == ["Here is a question: " + ORD.question]
    assert out[0][1]["similarity"] >= THRESHOLD


@pytest.mark.slow
@pytest.mark.shared_data
def test_real_items_rule_paraphrases_pass_and_round_trip(shared_items):
    items = shared_items
    picked = [items[i] for i in np.random.default_rng(1).permutation(len(items))[:30]]
    fam = Paraphrase()
    counts = []
    for item in picked:
        out = _perturb(fam, item, 0, n=5)
        counts.append(len(out))
        for vspec, params in out:
            assert params["similarity"] >= THRESHOLD
            assert vspec.options == item.options
            oracle_round_trip(Variant(item, fam.name, "x", vspec, params))
    assert sum(c == 5 for c in counts) >= 27, counts


@pytest.mark.slow
def test_demo_items_round_trip_through_perturb(demo):
    variants = rb.perturb(demo, families="paraphrase", n=5, seed=0)
    made = [v for v in variants if v.category == "paraphrase"]
    assert len(made) >= 4.5 * len(demo)
    for v in made:
        oracle_round_trip(v)
        assert v.params["similarity"] >= THRESHOLD
    again = rb.perturb(demo[:5], families="paraphrase", n=5, seed=0)
    assert [v.to_record() for v in again] == [v.to_record() for v in variants if v.item in demo[:5]]
