"""PromptSpec rendering: text, chat messages, format dimensions and validation."""

from __future__ import annotations

import pytest

import robustness as rb
from robustness.core.prompts import Exemplar, Format, default_spec

ITEM = rb.Item(
    "q1",
    "toy",
    "objective",
    "Which planet is closest to the Sun?",
    ("Venus", "Mercury", "Mars", "Earth"),
    answer=1,
)
AGREE = rb.Item(
    "s1",
    "toy",
    "subjective",
    "Cities should plant more trees.",
    ("Strongly disagree", "Disagree", "Agree", "Strongly agree"),
    scale="ordinal",
)
IMPORTANCE = rb.Item(
    "i1",
    "toy",
    "subjective",
    "How important is music in your life?",
    ("Not at all important", "Somewhat important", "Very important"),
    scale="ordinal",
)


def test_default_prompt_text_exactly():
    assert default_spec(ITEM).render() == (
        "The following is a multiple-choice question. Reply with the label of the correct "
        "option only.\n"
        "Question: Which planet is closest to the Sun?\n"
        "Options:\n"
        "A. Venus\nB. Mercury\nC. Mars\nD. Earth\n"
        "Answer:"
    )


def test_statements_and_other_scales_get_their_own_instruction():
    agree = default_spec(AGREE).render()
    assert agree.startswith("Read the statement and say how much you agree")
    assert "\nStatement: Cities should plant more trees.\n" in agree
    other = default_spec(IMPORTANCE).render()
    assert other.startswith("Answer the question below.") and "\nQuestion: How important" in other


def test_every_format_dimension_shows_in_the_text():
    fmt = Format(
        question_descriptor="Query",
        options_descriptor="",
        answer_descriptor="Reply",
        casing="upper",
        descriptor_separator=" - ",
        label_wrapper="({})",
        label_separator="  ",
        option_layout="inline",
        inline_separator=" | ",
        block_separator="\n\n",
        instruction_position="after",
    )
    text = default_spec(ITEM).with_(format=fmt).render()
    assert text == (
        "QUERY - Which planet is closest to the Sun?\n\n"
        "(A)  Venus | (B)  Mercury | (C)  Mars | (D)  Earth\n\n"
        "The following is a multiple-choice question. Reply with the label of the correct "
        "option only.\n\n"
        "REPLY -"
    )


def test_messages_carry_the_whole_prompt_cue_included():
    spec = default_spec(ITEM)
    assert spec.messages() == [{"role": "user", "content": spec.render()}]
    assert spec.render() == spec.body() + "\nAnswer:"
    # a change of the answer cue alone reaches a chat model too
    other = spec.with_(format=Format(answer_descriptor="Reply"))
    assert other.messages() != spec.messages() and other.sha(chat=True) != spec.sha(chat=True)


def test_few_shot_exemplars_render_before_the_question_and_as_turns():
    ex = Exemplar("What is 2 + 3?", ("4", "5", "6", "7"), answer=1)
    spec = default_spec(ITEM, exemplars=[ex])
    text = spec.render()
    assert text.index("What is 2 + 3?") < text.index("closest to the Sun")
    assert "Answer: B\n\n" in text
    msgs = spec.messages()
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"] == "B" and msgs[0]["content"].endswith("Answer:")
    joined = " ".join(m["content"] for m in msgs)
    assert joined.count(spec.instruction) == 1  # stated once, in the last message


def test_sha_is_of_the_rendered_text():
    a, b = default_spec(ITEM), default_spec(ITEM).with_(question="Which planet is nearest?")
    assert a.sha() == default_spec(ITEM).sha() and a.sha() != b.sha() and len(a.sha()) == 64


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"labels": ("A", "A", "C", "D")}, "not unique"),
        ({"order": (0, 1, 1, 3)}, "not a permutation"),
        ({"labels": ("A", "B")}, "same length"),
    ],
)
def test_inconsistent_specs_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        default_spec(ITEM).with_(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"casing": "sentence"}, "casing"),
        ({"label_wrapper": "A"}, "exactly one"),
        ({"answer_descriptor": " "}, "answer cue"),
        ({"option_layout": "grid"}, "option_layout"),
    ],
)
def test_bad_formats_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Format(**kwargs)


def test_variant_answer_map_undoes_order_labels_and_negation():
    spec = default_spec(AGREE).with_(
        options=tuple(reversed(AGREE.options)),
        order=(3, 2, 1, 0),
        labels=("1", "2", "3", "4"),
        negated=True,
    )
    v = rb.Variant(AGREE, "test", "test/0", spec, {})
    # displayed "1" is "Strongly agree" (canonical 3) of a negated statement -> canonical 0
    assert v.answer_map == {"1": 0, "2": 1, "3": 2, "4": 3}
    assert v.to_canonical("9") is None and v.to_canonical(None) is None
    nominal = rb.Variant(ITEM, "test", "test/0", default_spec(ITEM).with_(negated=True), {})
    assert nominal.answer_map == {"A": 0, "B": 1, "C": 2, "D": 3}  # negation is ordinal only


def test_each_package_imports_first_in_a_fresh_interpreter():
    import subprocess
    import sys

    for first in ("perturbations", "analyses", "robustness", "robustness.cli"):
        done = subprocess.run(
            [sys.executable, "-c", f"import {first}"], capture_output=True, text=True
        )
        assert done.returncode == 0, (first, done.stderr[-800:])
