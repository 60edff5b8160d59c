"""Majority agreement, tie rule, flip rate and Table 2 on hand-computed examples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyses import agreement_rows, agreement_table, flip_rate, item_agreement
from analyses.synthetic import synthetic_table
from robustness.core.table import TableError


def table(rows):
    """rows: (model, item, dataset_type, category, answer or None)."""
    out = []
    counter: dict[tuple, int] = {}
    for model, item, dtype, cat, ans in rows:
        k = counter.setdefault((model, item, cat), 0)
        counter[(model, item, cat)] = k + 1
        out.append(
            {
                "model": model,
                "dataset": "d_" + dtype,
                "dataset_type": dtype,
                "item_id": item,
                "category": cat,
                "variant_id": f"{cat}/{k}",
                "answer": ans,
                "valid": ans is not None,
            }
        )
    df = pd.DataFrame(out)
    df["answer"] = df["answer"].astype("Int64")
    return df


def group(res, item, cat, model="m"):
    r = res[(res.item_id == item) & (res.category == cat) & (res.model == model)]
    assert len(r) == 1
    return r.iloc[0]


def test_c_i_counts_only_valid_variants():
    t = table(
        [("m", "q", "objective", "original", 2)]
        + [("m", "q", "objective", "paraphrase", a) for a in (2, 2, None, 0)]
    )
    r = group(item_agreement(t), "q", "paraphrase")
    assert r.n_valid == 3 and r.n_invalid == 1
    assert r.c_i == pytest.approx(2 / 3)
    assert r.majority == 2 and not r.tie


def test_tie_goes_to_the_original_answer_when_it_is_a_mode():
    t = table(
        [("m", "q", "objective", "original", 2)]
        + [("m", "q", "objective", "framing", a) for a in (1, 2, 1, 2)]
    )
    r = group(item_agreement(t), "q", "framing")
    assert r.tie and r.n_modes == 2 and r.c_i == 0.5
    assert r.majority == 2  # not the smallest mode (1)
    rows = agreement_rows(t)
    assert rows.loc[rows.category == "framing", "agree"].tolist() == [False, True, False, True]


def test_tie_goes_to_the_smallest_index_otherwise():
    t = table(
        [("m", "q", "objective", "original", 0)]
        + [("m", "q", "objective", "framing", a) for a in (3, 1, 3, 1)]
    )
    r = group(item_agreement(t), "q", "framing")
    assert r.tie and r.majority == 1
    rows = agreement_rows(t)
    assert rows.loc[rows.category == "framing", "agree"].tolist() == [False, True, False, True]


def test_tie_with_invalid_original_uses_smallest_index():
    t = table(
        [("m", "q", "subjective", "original", None)]
        + [("m", "q", "subjective", "framing", a) for a in (4, 2, 4, 2)]
    )
    r = group(item_agreement(t), "q", "framing")
    assert r.majority == 2 and pd.isna(r.original_answer)


def test_three_way_tie_and_original_among_modes():
    t = table(
        [("m", "q", "objective", "original", 3)]
        + [("m", "q", "objective", "spelling_noise", a) for a in (0, 3, 2)]
    )
    r = group(item_agreement(t), "q", "spelling_noise")
    assert r.n_modes == 3 and r.majority == 3 and r.c_i == pytest.approx(1 / 3)


def test_original_majority_uses_smallest_on_its_own_tie():
    # two original rows of one item are two samples of it: the table says so (its epoch)
    t = table(
        [("m", "q", "objective", "original", a) for a in (2, 1)]
        + [("m", "q", "objective", "formatting", a) for a in (2, 1)]
    ).assign(epoch=[1, 2, 1, 2])
    res = item_agreement(t)
    assert group(res, "q", "original").majority == 1
    assert group(res, "q", "formatting").majority == 1


def test_all_invalid_set_has_no_agreement():
    t = table(
        [("m", "q", "objective", "original", 1)]
        + [("m", "q", "objective", "formatting", None) for _ in range(3)]
    )
    r = group(item_agreement(t), "q", "formatting")
    assert r.n_valid == 0 and np.isnan(r.c_i) and pd.isna(r.majority)
    rows = agreement_rows(t)
    assert rows.loc[rows.category == "formatting", "agree"].isna().all()


def test_groups_are_per_model_and_item():
    t = table(
        [("a", "q", "objective", "paraphrase", x) for x in (0, 0, 1)]
        + [("b", "q", "objective", "paraphrase", x) for x in (1, 1, 1)]
        + [("a", "r", "objective", "paraphrase", x) for x in (2, 3, 3)]
    )
    res = item_agreement(t)
    assert group(res, "q", "paraphrase", "a").c_i == pytest.approx(2 / 3)
    assert group(res, "q", "paraphrase", "b").c_i == 1.0
    assert group(res, "r", "paraphrase", "a").majority == 3


def test_flip_rate_against_the_original_answer():
    t = table(
        [("m", "q", "objective", "original", 0)]
        + [("m", "q", "objective", "option_order", a) for a in (0, 1, 1, None)]
    )
    r = flip_rate(t).iloc[0]
    assert r.category == "option_order"
    assert (r.n_valid, r.n_flipped) == (3, 2)
    assert r.flip_rate == pytest.approx(2 / 3)
    assert "original" not in set(flip_rate(t).category)


def test_flip_rate_is_nan_without_a_valid_original():
    t = table(
        [("m", "q", "objective", "original", None)]
        + [("m", "q", "objective", "option_order", a) for a in (0, 1)]
    )
    assert np.isnan(flip_rate(t).iloc[0].flip_rate)


def test_agreement_table_means_and_gap_by_hand():
    rows = []
    # objective: paraphrase C = 1 and 0.5 -> mean .75; subjective: paraphrase C = 0.5 -> gap .25
    rows += [("m", "o1", "objective", "paraphrase", a) for a in (1, 1)]
    rows += [("m", "o2", "objective", "paraphrase", a) for a in (1, 2)]
    rows += [("m", "s1", "subjective", "paraphrase", a) for a in (0, 3)]
    # framing: objective 1.0; subjective 2/3 and 1 -> 5/6
    rows += [("m", "o1", "objective", "framing", a) for a in (0, 0, 0)]
    rows += [("m", "s1", "subjective", "framing", a) for a in (1, 1, 2)]
    rows += [("m", "s2", "subjective", "framing", a) for a in (4, 4, 4)]
    rows += [("m", "o1", "objective", "original", 0)]  # the reference is left out
    tab = agreement_table(table(rows)).set_index("category")
    assert list(tab.index) == ["framing", "paraphrase", "all"]
    assert tab.loc["paraphrase", "objective"] == pytest.approx(0.75)
    assert tab.loc["paraphrase", "subjective"] == pytest.approx(0.5)
    assert tab.loc["paraphrase", "gap"] == pytest.approx(0.25)
    assert tab.loc["framing", "subjective"] == pytest.approx(5 / 6)
    assert tab.loc["framing", "gap"] == pytest.approx(1 - 5 / 6)
    assert tab.loc["all", "objective"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert tab.loc["all", "n_subjective"] == 3


def test_agreement_table_by_model_has_a_block_per_model():
    t = synthetic_table(models=2, n_items=4, n_variants=2, seed=0)
    tab = agreement_table(t, by_model=True)
    assert set(tab.model) == {"model_1", "model_2"}
    assert (tab.groupby("model").size() == 9).all()


def test_synthetic_knob_moves_agreement():
    lo = synthetic_table(models=2, n_items=30, seed=5, stability={("subjective", "framing"): 0.3})
    hi = synthetic_table(models=2, n_items=30, seed=5, stability={("subjective", "framing"): 0.99})
    a = agreement_table(lo).set_index("category").loc["framing", "subjective"]
    b = agreement_table(hi).set_index("category").loc["framing", "subjective"]
    assert b > a + 0.2


def test_agreement_matches_a_plain_python_count():
    t = synthetic_table(models=2, n_items=6, n_variants=4, seed=9)
    res = item_agreement(t).set_index(["model", "dataset", "item_id", "category"])
    for key, g in t[t.valid].groupby(["model", "dataset", "item_id", "category"]):
        counts = g["answer"].value_counts()
        if len(g) < 2:  # one answer: agreement is undefined, not 1
            assert np.isnan(res.loc[key, "c_i"])
        else:
            assert res.loc[key, "c_i"] == pytest.approx(counts.max() / len(g))
        assert res.loc[key, "n_valid"] == len(g)


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d.drop(columns="valid"), "'valid'"),
        (lambda d: d.assign(dataset_type="opinion"), "dataset_type"),
        (lambda d: d.assign(answer=d["answer"].astype(float) + 0.5), "answer"),
        (lambda d: d.assign(study=["s1"] * (len(d) - 1) + ["s2"]), "study"),
    ],
)
def test_bad_input_names_the_column(mutate, needle):
    t = table([("m", "q", "objective", "paraphrase", a) for a in (0, 1)])
    with pytest.raises(TableError, match=needle):
        item_agreement(mutate(t))


def test_item_with_two_dataset_types_is_refused():
    t = table([("m", "q", "objective", "paraphrase", 0), ("m", "q", "objective", "framing", 1)])
    t.loc[1, "dataset_type"] = "subjective"
    with pytest.raises(TableError, match="is objective in row 0 but subjective in row 1"):
        item_agreement(t)


def test_a_set_with_one_answer_has_no_agreement_and_no_agree_flag():
    t = pd.DataFrame(
        {
            "model": "m",
            "dataset": "d",
            "dataset_type": "subjective",
            "item_id": "s1",
            "category": ["original", "option_order", "framing", "framing"],
            "variant_id": ["o/0", "option_order/0", "f/0", "f/1"],
            "answer": [0, 3, 1, 1],
            "valid": True,
        }
    )
    res = item_agreement(t).set_index("category")
    assert np.isnan(res.loc["option_order", "c_i"]) and res.loc["option_order", "n_valid"] == 1
    assert res.loc["framing", "c_i"] == 1.0
    assert agreement_rows(t)["agree"].isna().tolist() == [True, True, False, False]
    # ... while its flip rate against the original prompt is defined
    flips = flip_rate(t).set_index("category")
    assert flips.loc["option_order", "flip_rate"] == 1.0
