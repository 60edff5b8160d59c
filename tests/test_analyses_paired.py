"""Cochran's Q, McNemar, cluster bootstrap and accuracy drop on hand-computed examples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analyses import (
    accuracy,
    accuracy_drop,
    agreement_table,
    bootstrap_agreement,
    bootstrap_items,
    cochran_q,
    mcnemar,
)
from analyses.synthetic import synthetic_table


def sets_table(pattern):
    """pattern[item][category] = True (consistent: 2 equal answers) / False (2 different)."""
    rows = []
    for item, cats in pattern.items():
        for cat, consistent in cats.items():
            for v, a in enumerate((1, 1) if consistent else (1, 2)):
                rows.append(
                    {
                        "model": "m",
                        "dataset": "d",
                        "dataset_type": "objective",
                        "item_id": item,
                        "category": cat,
                        "variant_id": f"{cat}/{v}",
                        "answer": a,
                        "valid": True,
                    }
                )
    return pd.DataFrame(rows)


def test_cochran_q_by_hand():
    pattern = {
        "i1": {"a": True, "b": False, "c": False},
        "i2": {"a": True, "b": True, "c": False},
        "i3": {"a": True, "b": False, "c": True},
        "i4": {"a": True, "b": True, "c": True},
        "i5": {"a": False, "b": False, "c": False},
    }
    x = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1], [0, 0, 0]])
    k, col, row, n = 3, x.sum(0), x.sum(1), x.sum()
    q = (k - 1) * (k * (col**2).sum() - n**2) / (k * n - (row**2).sum())
    res = cochran_q(sets_table(pattern)).iloc[0]
    assert res["q"] == pytest.approx(q)
    assert res["dof"] == 2 and res["n_items"] == 5
    assert res["p_value"] == pytest.approx(stats.chi2.sf(q, 2))
    assert res["max_rate"] == pytest.approx(0.8) and res["min_rate"] == pytest.approx(0.4)


def test_cochran_drops_incomplete_items():
    pattern = {"i1": {"a": True, "b": False}, "i2": {"a": True, "b": True}, "i3": {"a": False}}
    res = cochran_q(sets_table(pattern)).iloc[0]
    assert res["n_items"] == 2 and res["n_items_dropped"] == 1


def mc_table(a_correct, b_correct):
    rows = []
    for model, flags in (("A", a_correct), ("B", b_correct)):
        for k, ok in enumerate(flags):
            rows.append(
                {
                    "model": model,
                    "dataset": "d",
                    "dataset_type": "objective",
                    "item_id": f"q{k // 2}",
                    "category": "paraphrase",
                    "variant_id": f"p/{k % 2}",
                    "answer": 0 if ok else 1,
                    "gold": 0,
                    "valid": True,
                }
            )
    return pd.DataFrame(rows)


def test_mcnemar_by_hand():
    a = [1, 1, 1, 1, 1, 1, 0, 0, 1, 0]
    b = [1, 0, 0, 0, 0, 1, 0, 1, 1, 0]
    # both 3, only A 4, only B 1, neither 2
    r = mcnemar(mc_table(a, b), "A", "B").iloc[0]
    assert (r["both"], r["only_a"], r["only_b"], r["neither"]) == (3, 4, 1, 2)
    assert r["chi2"] == pytest.approx((abs(4 - 1) - 1) ** 2 / 5)
    assert r["p_exact"] == pytest.approx(stats.binomtest(1, 5, 0.5).pvalue)
    assert r["n_pairs"] == 10


def test_mcnemar_without_discordant_pairs_and_errors():
    same = [1, 0, 1, 1]
    r = mcnemar(mc_table(same, same), "A", "B").iloc[0]
    assert (r["chi2"], r["p_exact"]) == (0.0, 1.0)
    with pytest.raises(ValueError, match="'C' is not in the table"):
        mcnemar(mc_table(same, same), "A", "C")


def test_mcnemar_skips_invalid_rows_and_groups_by_category():
    t = synthetic_table(models=2, n_items=10, n_variants=2, seed=3)
    out = mcnemar(t, "model_1", "model_2", by=["category"])
    assert len(out) == 9
    both_valid = (
        t[t.model == "model_1"].valid.to_numpy()
        & t[t.model == "model_2"].valid.to_numpy()
        & (t[t.model == "model_1"].dataset_type == "objective").to_numpy()
    )
    assert out["n_pairs"].sum() == both_valid.sum()


def test_bootstrap_point_estimates_are_table_2():
    t = synthetic_table(models=2, n_items=10, seed=1)
    b = bootstrap_agreement(t, n_boot=300, seed=2)
    tab = agreement_table(t).set_index("category")
    cells = b[b.dataset_type == "objective"].set_index("category")
    for cat in cells.index:
        assert cells.loc[cat, "estimate"] == pytest.approx(tab.loc[cat, "objective"])
    gap = b[b.dataset_type == "objective - subjective"].set_index("category")
    assert gap.loc["framing", "estimate"] == pytest.approx(tab.loc["framing", "gap"])
    assert (b.ci_low <= b.estimate).all() and (b.estimate <= b.ci_high).all()
    again = bootstrap_agreement(t, n_boot=300, seed=2)
    pd.testing.assert_frame_equal(b, again)


def test_bootstrap_is_stratified_by_dataset():
    # Items of dataset A all have value 1, of B all 0, one set each: every stratified
    # replicate keeps 3 A items and 1 B item, so the mean is always 3/4.
    items = pd.DataFrame(
        {
            "dataset": ["A", "A", "A", "B"],
            "item_id": ["1", "2", "3", "4"],
            "category": "x",
            "c_i": [1.0, 1.0, 1.0, 0.0],
        }
    )
    out = bootstrap_items(items, by=["category"], n_boot=500, seed=0).iloc[0]
    assert out["ci_low"] == out["ci_high"] == pytest.approx(0.75)


def test_accuracy_and_drop_by_hand():
    rows = []
    answers = {"original": [0, 0, 0, 1], "framing": [0, 1, 1, None]}
    for cat, ans in answers.items():
        for k, a in enumerate(ans):
            rows.append(
                {
                    "model": "m",
                    "dataset": "d",
                    "dataset_type": "objective",
                    "item_id": f"q{k}",
                    "category": cat,
                    "variant_id": f"{cat}/0",
                    "answer": a,
                    "gold": 0,
                    "valid": a is not None,
                }
            )
    t = pd.DataFrame(rows)
    t["answer"] = t["answer"].astype("Int64")
    acc = accuracy(t).set_index("category")
    assert acc.loc["original", "accuracy"] == 0.75
    assert acc.loc["framing", "accuracy"] == pytest.approx(1 / 3)
    assert acc.loc["framing", "accuracy_all"] == 0.25
    assert acc.loc["framing", "valid_rate"] == 0.75
    d = accuracy_drop(t).iloc[0]
    assert d["category"] == "framing" and d["drop"] == pytest.approx(0.75 - 1 / 3)
