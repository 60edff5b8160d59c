"""PSS (ProSA eq. 1-2) on hand-computed prompt sets, including the ordered-pairs mistake."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from analyses import pss, pss_items
from analyses.synthetic import synthetic_table


def prompt_set(
    answers,
    *,
    dtype="objective",
    gold=None,
    k=None,
    scale=None,
    category="framing",
    item="q",
    model="m",
):
    n = len(answers)
    df = pd.DataFrame(
        {
            "model": model,
            "dataset": "d",
            "dataset_type": dtype,
            "item_id": item,
            "category": category,
            "variant_id": [f"v{j}" for j in range(n)],
            "answer": pd.array(answers, dtype="Int64"),
            "valid": [a is not None for a in answers],
        }
    )
    if gold is not None:
        df["gold"] = pd.array([gold] * n, dtype="Int64")
    if k is not None:
        df["n_options"] = pd.array([k] * n, dtype="Int64")
    if scale is not None:
        df["scale"] = scale
    return df


def s_of(df, score, category="framing"):
    r = pss_items(df)
    r = r[(r.category == category) & (r.score == score)]
    assert len(r) == 1
    return float(r["s_i"].iloc[0])


def test_correctness_unordered_pairs_not_ordered():
    # correct = [1, 1, 0, 0, 0]: discordant unordered pairs = 2 * 3 = 6 of C(5,2) = 10.
    df = prompt_set([1, 1, 0, 3, 2], gold=1)
    assert s_of(df, "correctness") == pytest.approx(6 / 10)
    # The doubled numerator of summing over ordered pairs would give 12 / 10.
    ordered = sum(abs(a - b) for a, b in itertools.permutations([1, 1, 0, 0, 0], 2))
    assert ordered / 10 == pytest.approx(1.2)
    assert s_of(df, "correctness") != pytest.approx(ordered / 10)


def test_answer_identity_is_share_of_discordant_pairs():
    # answers 0,0,1,2: pairs (0,0) agree; 5 of 6 pairs differ.
    df = prompt_set([0, 0, 1, 2])
    assert s_of(df, "answer") == pytest.approx(5 / 6)
    assert s_of(prompt_set([3, 3, 3]), "answer") == 0.0


def test_ordinal_distance_by_hand():
    # 5-point scale, answers 0,3,1,1: |diffs| 3,1,1,2,2,0 -> 9 / 4 (K-1) / 6 pairs = 0.375
    df = prompt_set([0, 3, 1, 1], dtype="subjective", k=5, scale="ordinal")
    assert s_of(df, "ordinal") == pytest.approx(9 / 4 / 6)
    assert s_of(df, "answer") == pytest.approx(5 / 6)


def test_ordinal_k_from_option_probs_then_fallback():
    df = prompt_set([0, 3], dtype="subjective", scale="ordinal")
    df["option_probs"] = [[0.7, 0.1, 0.1, 0.1]] * 2  # K = 4
    assert s_of(df, "ordinal") == pytest.approx(3 / 3)
    # no n_options and no probs: K = largest answer in the dataset + 1 = 4 here as well
    df2 = prompt_set([0, 3, 1], dtype="subjective")
    assert s_of(df2, "ordinal") == pytest.approx((3 + 1 + 2) / 3 / 3)


def test_nominal_items_get_no_ordinal_score_and_subjective_default_is_ordinal():
    obj = pss_items(prompt_set([0, 1], gold=0))
    assert set(obj.score) == {"answer", "correctness"}
    subj = pss_items(prompt_set([0, 1], dtype="subjective", k=4))
    assert set(subj.score) == {"answer", "ordinal"}
    nominal_subj = pss_items(prompt_set([0, 1], dtype="subjective", k=4, scale="nominal"))
    assert set(nominal_subj.score) == {"answer"}


def s_with(df, score, invalid):
    r = pss_items(df, invalid=invalid)
    r = r[(r.category == "framing") & (r.score == score)]
    assert len(r) == 1
    return float(r["s_i"].iloc[0]), int(r["n_invalid"].iloc[0])


def test_invalid_answers_are_wrong_for_correctness_by_default():
    # ProSA scores an unparseable answer as wrong: correct = 1, 0 (invalid), 0 -> 2 of 3 pairs.
    df = prompt_set([1, None, 0], gold=1)
    assert s_with(df, "correctness", "wrong") == (pytest.approx(2 / 3), 1)
    assert s_with(df, "correctness", "drop") == (pytest.approx(1.0), 1)  # one pair, discordant
    assert s_with(df, "answer", "wrong") == (pytest.approx(1.0), 1)  # answers: never a prompt
    assert s_with(prompt_set([1, None], gold=1), "correctness", "wrong")[0] == 1.0
    assert pss_items(prompt_set([1, None], gold=1), invalid="drop")["s_i"].isna().all()
    out = pss(prompt_set([1, None, 0], gold=1)).query("category == 'framing'")
    assert out.set_index("score")["n_invalid"].to_dict() == {"answer": 1, "correctness": 1}


def test_pss_is_the_mean_over_items_and_all_pools_categories():
    a = prompt_set([0, 0, 1], gold=0, item="q1")  # S = 2/3
    b = prompt_set([2, 2, 2], gold=0, item="q2")  # S = 0
    c = prompt_set([0], gold=0, item="q1", category="original")
    out = pss(pd.concat([a, b, c], ignore_index=True))
    row = out[(out.category == "framing") & (out.score == "correctness")].iloc[0]
    assert row.pss == pytest.approx(1 / 3) and row.n_items == 2
    # category 'all' for q1 pools original + framing: correct = 1,1,0,1 -> 3 of 6 pairs
    allrow = out[(out.category == "all") & (out.score == "correctness")].iloc[0]
    assert allrow.pss == pytest.approx((3 / 6 + 0) / 2)
    assert list(out.columns[:6]) == ["model", "dataset", "category", "score", "pss", "n_items"]


def test_pss_agrees_with_brute_force_pairs_on_a_synthetic_table():
    t = synthetic_table(models=2, n_items=5, n_variants=4, seed=12)
    keys = ["model", "dataset", "item_id", "category", "score"]
    items = pss_items(t, invalid="drop").set_index(keys)
    for key, g in t[t.valid].groupby(["model", "dataset", "item_id", "category"]):
        ans = g["answer"].astype(int).tolist()
        if len(ans) < 2:
            continue
        pairs = list(itertools.combinations(range(len(ans)), 2))
        disc = sum(ans[i] != ans[j] for i, j in pairs) / len(pairs)
        assert items.loc[(*key, "answer"), "s_i"] == pytest.approx(disc)
        if g["scale"].iloc[0] == "ordinal":
            k = int(g["n_options"].iloc[0])
            d = sum(abs(ans[i] - ans[j]) for i, j in pairs) / (k - 1) / len(pairs)
            assert items.loc[(*key, "ordinal"), "s_i"] == pytest.approx(d)
        else:
            corr = g["correct"].astype(int).tolist()
            c = sum(corr[i] != corr[j] for i, j in pairs) / len(pairs)
            assert items.loc[(*key, "correctness"), "s_i"] == pytest.approx(c)
    # invalid = 'wrong': every row of an item with gold is a prompt, the invalid ones wrong
    wrong = pss_items(t).set_index(keys)
    obj = t[t.dataset_type == "objective"]
    for key, g in obj.groupby(["model", "dataset", "item_id", "category"]):
        corr = (g["correct"].fillna(False).astype(bool) & g["valid"]).astype(int).tolist()
        if len(corr) < 2:
            continue
        pairs = list(itertools.combinations(range(len(corr)), 2))
        c = sum(corr[i] != corr[j] for i, j in pairs) / len(pairs)
        assert wrong.loc[(*key, "correctness"), "s_i"] == pytest.approx(c)
        assert wrong.loc[(*key, "correctness"), "n_invalid"] == (~g["valid"]).sum()
