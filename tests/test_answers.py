"""From runner results to table rows, with fake runners whose answers we control."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from helpers.oracle import oracle_answer

import robustness as rb
from robustness.answers import answer_rows, rows_to_table
from robustness.core.errors import ModelError
from robustness.core.table import validate
from robustness.runners.base import Generation, LogLikelihood, OptionScores
from robustness.study import ModelConfig

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
    "toy_survey",
    "subjective",
    "Cities should plant more trees.",
    ("Strongly disagree", "Disagree", "Agree", "Strongly agree"),
    scale="ordinal",
)


class ContentRunner:
    """Answers by content through the test oracle: wants canonical option ``wanted[item_id]``."""

    backend, model_id = "fake", "content"

    def __init__(self, vs, wanted, fail_on=None):
        self.by_prompt = {v.prompt(): v for v in vs}
        self.wanted, self.fail_on = wanted, fail_on

    def _label(self, prompt):
        if self.fail_on and self.fail_on in prompt:
            raise ModelError("simulated failure")
        v = self.by_prompt[prompt]
        return v, oracle_answer(v, self.wanted[v.item_id])

    def score_options(self, prompts, labels, *, on_batch=None):
        out = []
        for prompt, labs in zip(prompts, labels, strict=True):
            _, label = self._label(prompt)
            pos = list(labs).index(label)
            probs = [0.1 / (len(labs) - 1)] * len(labs)
            probs[pos] = 0.9
            out.append(
                OptionScores(tuple(probs), tuple(math.log(p) for p in probs), 0.8, label, 1.0)
            )
        if on_batch:
            on_batch(list(range(len(prompts))), out)
        return out

    def generate(self, prompts, max_new_tokens, *, on_batch=None):
        out = []
        for prompt in prompts:
            v, label = self._label(prompt)
            if v.params.get("label_set") == "greek":
                out.append(Generation("I cannot answer that, as an AI.", 8, 1.0))
            else:
                out.append(Generation(f"The answer is {label}", 4, 1.0))
        return out

    def loglikelihood(self, pairs, *, on_batch=None):
        out = []
        for prompt, response in pairs:
            v, _ = self._label(prompt)
            lp = -1.0 if response.strip() == v.item.options[self.wanted[v.item_id]] else -3.0
            n = len(response.split())
            out.append(LogLikelihood(lp * n, n))
        return out


WANTED = {"q1": 1, "s1": 2}


def variants(families=("option_order", "label_substitution", "logical_equivalence")):
    return rb.perturb([ITEM, AGREE], families=families, n=5, seed=0)


def runner(vs, **kw):
    return ContentRunner(vs, WANTED, **kw)


def test_choice_rows_map_back_to_canonical_answers():
    vs = variants()
    assert any(v.spec.negated for v in vs) and any(v.spec.order != (0, 1, 2, 3) for v in vs)
    rows = answer_rows(runner(vs), vs, ModelConfig(name="m"), study="s", seed=0)
    table = validate(rows_to_table(rows))
    assert len(table) == len(vs)
    for row, v in zip(table.itertuples(), vs, strict=True):
        assert row.item_id == v.item_id and row.variant_id == v.variant_id
        want = WANTED[v.item_id]
        assert row.answer == want and row.valid and row.confidence == 0.8
        assert row.option_probs[want] == pytest.approx(0.9)
    obj = table[table.dataset_type == "objective"]
    assert obj.correct.all() and obj.gold.eq(1).all()
    assert table[table.dataset_type == "subjective"].correct.isna().all()


def test_generate_mode_keeps_invalid_rows_with_their_reason():
    vs = variants(("label_substitution",))
    rows = answer_rows(runner(vs), vs, ModelConfig(name="m", mode="generate"))
    table = validate(rows_to_table(rows))
    assert len(table) == len(vs)
    bad = table[~table.valid]
    assert len(bad) >= 1 and set(bad.invalid_reason) == {"refusal"}
    assert bad.answer.isna().all() and bad.raw_output.str.contains("cannot").all()
    good = table[table.valid & (table.dataset_type == "objective")]
    assert good.answer.eq(1).all()


def test_cloze_mode_length_normalises_and_maps_back():
    vs = [v for v in variants(("option_order",)) if v.item is ITEM]
    rows = answer_rows(runner(vs), vs, ModelConfig(name="m", mode="cloze"))
    table = validate(rows_to_table(rows))
    assert table.answer.eq(1).all()
    probs = table.option_probs.iloc[0]
    assert probs[1] == pytest.approx(math.exp(-1) / (math.exp(-1) + 3 * math.exp(-3)))


def test_a_failing_prompt_becomes_an_invalid_row_and_the_run_goes_on():
    vs = variants(("framing",))
    rows = answer_rows(runner(vs, fail_on="You are"), vs, ModelConfig(name="m"))
    table = validate(rows_to_table(rows))
    errors = table[table.invalid_reason.fillna("").str.startswith("error:")]
    assert 0 < len(errors) < len(table)
    assert (errors.invalid_reason == "error: simulated failure").all()
    assert table[table.valid].shape[0] == len(table) - len(errors)


def test_progress_is_reported_per_batch():
    seen = []
    vs = variants()
    answer_rows(
        runner(vs),
        vs,
        ModelConfig(name="m"),
        progress=lambda name, done, total: seen.append((name, done, total)),
    )
    assert seen and seen[-1][1] == seen[-1][2] and seen[-1][0] == "m"


def test_table_columns_follow_the_schema_order():
    vs = variants()
    table = rows_to_table(answer_rows(runner(vs), vs, ModelConfig(name="m")))
    from robustness.core.table import COLUMNS

    assert list(table.columns) == list(COLUMNS)
    assert isinstance(table, pd.DataFrame)
