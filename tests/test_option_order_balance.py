"""Option order must not manufacture agreement: a position-biased respondent gets from the
schedule only what the design implies, computed here from the permutations themselves."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from conftest import SHARED_DATA
from helpers.oracle import assert_options_once, assert_round_trip

import robustness as rb
from analyses import item_agreement
from perturbations.references import pinned_positions
from robustness.answers import answer_rows, rows_to_table
from robustness.runners.base import OptionScores
from robustness.study import ModelConfig


class AlwaysAt:
    """Answers the label at one displayed position, whatever the prompt says."""

    backend, model_id = "fake", "position"

    def __init__(self, position: int) -> None:
        self.position = position

    def score_options(self, prompts, labels, *, on_batch=None):
        out = []
        for labs in labels:
            probs = [0.0] * len(labs)
            probs[self.position] = 1.0
            logs = tuple(math.log(p) if p else -1e9 for p in probs)
            out.append(OptionScores(tuple(probs), logs, 1.0, labs[self.position], 1.0))
        if on_batch is not None:
            on_batch(list(range(len(prompts))), out)
        return out


def ask(variants, position):
    model = ModelConfig(name="pos", mode="choice")
    return rows_to_table(answer_rows(AlwaysAt(position), variants, model, study="t"))


def expected_c_i(variants, item, position):
    """C_i of an always-``position`` respondent, from the option each order shows there."""
    shown = [
        v.spec.order[position]
        for v in variants
        if v.item.key == item.key and v.category == "option_order"
    ]
    return max(Counter(shown).values()) / len(shown), len(shown)


def four_option_items(demo):
    return [i for i in demo if i.n_options == 4]


def c_i_by_item(table):
    agree = item_agreement(table)
    agree = agree[agree["category"] == "option_order"]
    return dict(zip(agree["item_id"], agree["c_i"], strict=True))


@pytest.mark.parametrize("n", [3, 4, 5, 8])
def test_always_b_gets_what_the_balanced_design_implies(demo, n):
    items = four_option_items(demo)
    assert len(items) >= 4
    variants = rb.perturb(items, families="option_order", n=n, seed=0)
    got = c_i_by_item(ask(variants, 1))
    for item in items:
        want, n_shown = expected_c_i(variants, item, 1)
        assert n_shown == n
        assert got[item.item_id] == pytest.approx(want)
        # ... and the design is the most even one n variants allow: ceil(n / K) / n
        assert want == pytest.approx(math.ceil(n / 4) / n), (item.item_id, n)
    if n == 4:
        assert set(got.values()) == {0.25}  # a full balanced square: 1/K


def test_the_legacy_schedule_is_kept_by_name_and_gives_b_its_agreement(demo):
    items = four_option_items(demo)
    options = {"option_order": {"schedule": "legacy"}}
    variants = rb.perturb(items, families="option_order", n=3, seed=0, options=options)
    got = c_i_by_item(ask(variants, 1))
    for item in items:
        want, _ = expected_c_i(variants, item, 1)
        assert got[item.item_id] == pytest.approx(want) == pytest.approx(2 / 3)
    params = [v.params for v in variants if v.category == "option_order"]
    assert {p["schedule"] for p in params} == {"legacy"}
    assert [p["kind"] for p in params[:3]] == ["reversal", "cyclic", "cyclic"]


def test_every_variant_records_its_schedule_and_the_default_is_balanced(demo):
    variants = rb.perturb(demo, families="option_order", n=5, seed=0)
    shuffled = [v for v in variants if v.category == "option_order"]
    assert shuffled and all(v.params["schedule"] == "balanced" for v in shuffled)
    assert all(v.params["order"] == list(v.spec.order) for v in shuffled)
    reversal = rb.perturb(
        demo,
        families="option_order",
        n=5,
        seed=0,
        options={"option_order": {"schedule": "reversal"}},
    )
    rev = [v for v in reversal if v.category == "option_order"]
    assert all(v.params == {"schedule": "reversal", "kind": "reversal"} for v in rev)
    assert all(v.spec.order == tuple(range(v.item.n_options))[::-1] for v in rev)
    with pytest.raises(rb.RobustnessError, match="schedule must be one of balanced"):
        rb.perturb(demo, families="option_order", options={"option_order": {"schedule": "x"}})


@pytest.mark.parametrize("k", [3, 5, 7, 10])
def test_fewer_variants_than_options_never_repeat_a_position(k):
    item = rb.Item("q", "toy", "objective", "Pick one.", tuple(f"opt{j}" for j in range(k)), 0)
    for n in range(1, k):
        vs = [
            v for v in rb.perturb([item], "option_order", n=n, seed=n) if v.category != "original"
        ]
        assert len(vs) == n
        counts = np.zeros((k, k), dtype=int)
        for v in vs:
            assert_options_once(v)
            assert_round_trip(v)
            for pos, opt in enumerate(v.spec.order):
                counts[opt, pos] += 1
        assert counts.max() == 1, (k, n)
        assert np.trace(counts) == 0  # nor where the original prompt shows the option
        if n == k - 1:  # with the original prompt as one more row: a full Latin square
            assert (counts + np.eye(k, dtype=int) == 1).all()


def culturalbench():
    path = SHARED_DATA / "culturalbench.jsonl"
    if not path.exists():
        pytest.skip(f"shared data not found at {SHARED_DATA} (a fresh clone has none)")
    return rb.load_items(path)


@pytest.mark.shared_data
def test_culturalbench_always_a_scores_its_gold_lean_then_chance_under_balance(tmp_path):
    items = culturalbench()
    assert len(items) == 150 and all(i.n_options == 4 for i in items)
    variants = rb.perturb(items, families="option_order", n=4, seed=0)
    table = ask(variants, 0)
    original = table[table["category"] == "original"]
    assert int(original["correct"].sum()) == 86  # gold leans to A: 57 %
    shuffled = table[table["category"] == "option_order"]
    # from the design: how often each variant shows its item's gold answer at A
    at_a = sum(v.spec.order[0] == v.item.answer for v in variants if v.category == "option_order")
    assert int(shuffled["correct"].sum()) == at_a == len(items)  # once per item: 1/K
    got = c_i_by_item(table)
    for item in items:  # an item with a pinned "None of the above" moves 3 options, not 4
        want, n_shown = expected_c_i(variants, item, 0)
        assert got[item.item_id] == pytest.approx(want), item.item_id
        free = 4 - len(pinned_positions(item.options))
        assert want == pytest.approx(math.ceil(n_shown / free) / n_shown)
    assert sum(v == 0.25 for v in got.values()) >= 140


@pytest.mark.shared_data
def test_every_family_round_trips_on_culturalbench():
    items = culturalbench()
    for v in rb.perturb(items, families="option_order,label_substitution,formatting", n=3):
        assert_options_once(v)
        assert_round_trip(v)


def test_a_word_that_starts_with_a_letter_is_no_label_reference():
    from perturbations.references import refers_by_label

    assert not refers_by_label("Both hands") and not refers_by_label("with both hands when")
    assert refers_by_label("Both (A) and (C)") and refers_by_label("neither a nor b")
    item = rb.Item("h", "toy", "objective", "Which hand?", ("Right hand", "Both hands", "Left"), 0)
    assert len(rb.perturb([item], "option_order", n=2)) == 3


def test_the_table_metadata_and_the_method_text_say_which_schedule_was_used(tmp_path):
    from types import SimpleNamespace

    import pandas as pd

    from robustness.report.document import method_text
    from robustness.run import option_order_schedule

    study = tmp_path / "s.toml"
    study.write_text(
        '[study]\nname = "s"\nfamilies = ["option_order"]\n'
        '[perturbations.option_order]\nschedule = "legacy"\n'
        '[output]\ntable = "out/s.parquet"\n'
    )
    config = rb.load_study(study)
    legacy = option_order_schedule(config)
    assert legacy["schedule"] == "legacy" and "cyclic shifts" in legacy["description"]
    default = option_order_schedule(replace_perturbations(config, {}))
    assert default["schedule"] == "balanced" and "Latin squares" in default["description"]
    items = pd.DataFrame(
        {
            "dataset": ["d"],
            "dataset_type": ["objective"],
            "item_id": ["q"],
            "category": ["x"],
            "c_i": [1.0],
            "n_valid": [2],
        }
    )
    result = SimpleNamespace(
        agreement_items=items, formula="f", dataset_formula="g", fit=None, budget_method=""
    )
    meta = {"study": config.to_dict(), "option_order": legacy}
    text = " ".join(method_text(result, meta))
    assert f"Option order: {legacy['description']}." in text
    assert "Option order:" not in " ".join(method_text(result, {"study": config.to_dict()}))


def replace_perturbations(config, perturbations):
    from dataclasses import replace

    return replace(config, perturbations=perturbations)
