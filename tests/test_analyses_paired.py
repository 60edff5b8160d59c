"""Cochran's Q, McNemar (plain and clustered), cluster bootstrap and accuracy drop by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import cochrans_q as sm_cochrans_q
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from analyses import (
    accuracy,
    accuracy_drop,
    agreement_table,
    bootstrap_agreement,
    bootstrap_items,
    cochran_q,
    mcnemar,
)
from analyses.cochran import cochran_statistics
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
    res = cochran_q(sets_table(pattern), min_items=5).iloc[0]
    assert res["q"] == pytest.approx(q)
    assert res["dof"] == 2 and res["n_items"] == 5
    assert res["p_value"] == pytest.approx(stats.chi2.sf(q, 2))
    assert res["max_rate"] == pytest.approx(0.8) and res["min_rate"] == pytest.approx(0.4)
    ref = sm_cochrans_q(x)  # statsmodels, an independent implementation
    assert res["q"] == pytest.approx(ref.statistic) and res["p_value"] == pytest.approx(ref.pvalue)
    long = pd.DataFrame(x).reset_index().melt(id_vars="index")
    pq = pg.cochran(long, dv="value", within="variable", subject="index")
    assert res["q"] == pytest.approx(pq["Q"].iloc[0])


def test_cochran_drops_incomplete_items():
    pattern = {"i1": {"a": True, "b": False}, "i2": {"a": True, "b": True}, "i3": {"a": False}}
    res = cochran_q(sets_table(pattern), min_items=1).iloc[0]
    assert res["n_items"] == 2 and res["n_items_dropped"] == 1


def test_cochran_too_few_items_is_not_computed_and_prints_nothing():
    # Issue 16: Cochran's Q on 2 items came out as a number, with a pingouin warning on stderr.
    pattern = {"i1": {"a": True, "b": False, "c": True}, "i2": {"a": False, "b": True, "c": True}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = cochran_q(sets_table(pattern)).iloc[0]
    assert not caught
    assert np.isnan(res["q"]) and np.isnan(res["q_clustered"]) and np.isnan(res["p_value"])
    assert res["n_items"] == 2
    assert res["note"] == "not computed: 2 item(s), fewer than min_items = 10"
    assert not np.isnan(cochran_q(sets_table(pattern), min_items=2).iloc[0]["q"])


def test_cochran_without_any_value_says_so():
    # One answer per set: 'consistent' is undefined everywhere, so no category has a value.
    t = sets_table({"i1": {"a": True, "b": True}}).drop_duplicates(["item_id", "category"])
    res = cochran_q(t).iloc[0]
    assert res["n_categories"] == 0 and np.isnan(res["min_rate"])
    assert res["note"] == "not computed: fewer than two categories"


def test_cochran_majority_is_original_scores_a_tie_as_not_agreeing():
    # Category 'a': answers 1, 2 (a tie, the original 1 among the modes); 'b': 1, 1.
    rows = []
    for item in ("i1", "i2"):
        for cat, answers in (("original", [1]), ("a", [1, 2]), ("b", [1, 1])):
            for v, a in enumerate(answers):
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
    res = cochran_q(pd.DataFrame(rows), outcome="majority_is_original", min_items=1).iloc[0]
    assert (res["min_rate"], res["max_rate"]) == (0.0, 1.0)  # the tie does not agree


def clustered_cochran_by_contrasts(x, cluster):
    """Independent route: contrasts of adjacent categories and an explicit inverse."""
    k = x.shape[1]
    c = np.eye(k)[:-1] - np.eye(k)[1:]
    e = x - x.mean(axis=1, keepdims=True)
    u = np.array([e[cluster == g].sum(axis=0) for g in np.unique(cluster)])
    d = c @ e.sum(axis=0)
    v = c @ (u.T @ u) @ c.T
    return float(d @ np.linalg.inv(v) @ d)


def test_clustered_cochran_by_hand():
    # k = 2, one subject per cluster: the clustered Q is McNemar's uncorrected chi2.
    x2 = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [1, 1], [0, 0], [1, 0]])
    r = cochran_statistics(x2, np.arange(7))
    b, c = 4, 1
    assert r["q_clustered"] == pytest.approx((b - c) ** 2 / (b + c))
    ref = sm_mcnemar([[1, b], [c, 1]], exact=False, correction=False)
    assert r["q_clustered"] == pytest.approx(ref.statistic)
    assert r["q"] == pytest.approx(ref.statistic)  # and Cochran's Q for k = 2
    # k = 2 in clusters: Durkalski's statistic with D_k = b_k - c_k per cluster:
    # cluster 0: (1,0), (1,0) -> 2; cluster 1: (1,0), (0,1) -> 0;
    # cluster 2: (1,1), (0,0), (1,0) -> 1
    cl = np.array([0, 0, 1, 1, 2, 2, 2])
    d = np.array([2, 0, 1])
    assert cochran_statistics(x2, cl)["q_clustered"] == pytest.approx(d.sum() ** 2 / (d**2).sum())
    # k = 3 in clusters of two subjects: against the contrast form computed separately.
    x3 = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1], [0, 0, 1], [1, 0, 0]])
    cl3 = np.array([0, 0, 1, 1, 2, 2])
    r3 = cochran_statistics(x3, cl3)
    assert r3["q_clustered"] == pytest.approx(clustered_cochran_by_contrasts(x3, cl3))
    assert r3["dof_clustered"] == 2
    assert r3["p_value_clustered"] == pytest.approx(stats.chi2.sf(r3["q_clustered"], 2))


def mc_table(a_correct, b_correct, items=None):
    """Two models on the same prompts; ``items[k]`` is prompt k's item (default: 2 per item)."""
    rows = []
    for model, flags in (("A", a_correct), ("B", b_correct)):
        for k, ok in enumerate(flags):
            rows.append(
                {
                    "model": model,
                    "dataset": "d",
                    "dataset_type": "objective",
                    "item_id": f"q{k // 2}" if items is None else f"q{items[k]}",
                    "category": "paraphrase",
                    "variant_id": f"p/{k}",
                    "answer": 0 if ok else 1,
                    "gold": 0,
                    "valid": True,
                }
            )
    return pd.DataFrame(rows)


def test_mcnemar_by_hand_and_against_statsmodels():
    a = [1, 1, 1, 1, 1, 1, 0, 0, 1, 0]
    b = [1, 0, 0, 0, 0, 1, 0, 1, 1, 0]
    # both 3, only A 4, only B 1, neither 2
    r = mcnemar(mc_table(a, b), "A", "B", min_items=1).iloc[0]
    assert (r["both"], r["only_a"], r["only_b"], r["neither"]) == (3, 4, 1, 2)
    assert r["chi2"] == pytest.approx((abs(4 - 1) - 1) ** 2 / 5)
    assert r["p_exact"] == pytest.approx(stats.binomtest(1, 5, 0.5).pvalue)
    assert r["n_pairs"] == 10 and r["n_items"] == 5 and r["difference"] == pytest.approx(0.3)
    tab = [[3, 4], [1, 2]]
    assert r["p_value"] == pytest.approx(sm_mcnemar(tab, exact=False, correction=True).pvalue)
    assert r["p_exact"] == pytest.approx(sm_mcnemar(tab, exact=True).pvalue)
    data = pd.DataFrame({"a": a, "b": b})
    _, pgr = pg.chi2_mcnemar(data, "a", "b")
    assert r["chi2"] == pytest.approx(pgr["chi2"].iloc[0])
    assert r["p_exact"] == pytest.approx(pgr["p_exact"].iloc[0])


def test_clustered_mcnemar_by_hand():
    # Prompts of items 0..2: D_k = (only A) - (only B) per item.
    a = [1, 1, 1, 0, 1, 1, 0, 1]
    b = [0, 0, 1, 1, 0, 1, 0, 0]
    items = [0, 0, 0, 1, 1, 2, 2, 2]
    # item 0: A-only 2 -> D = 2; item 1: B-only 1, A-only 1 -> D = 0; item 2: A-only 1 -> D = 1
    r = mcnemar(mc_table(a, b, items), "A", "B", min_items=1).iloc[0]
    assert r["n_items"] == 3 and (r["only_a"], r["only_b"]) == (4, 1)
    assert r["chi2_clustered"] == pytest.approx((2 + 0 + 1) ** 2 / (4 + 0 + 1))
    assert r["p_value_clustered"] == pytest.approx(stats.chi2.sf(9 / 5, 1))
    # One pair per item: the clustered statistic is McNemar's uncorrected chi2 (statsmodels).
    single = mcnemar(mc_table(a, b, list(range(8))), "A", "B", min_items=1).iloc[0]
    ref = sm_mcnemar([[1, 4], [1, 2]], exact=False, correction=False)
    assert single["chi2_clustered"] == pytest.approx(ref.statistic)
    assert single["p_value_clustered"] == pytest.approx(ref.pvalue)


def test_clustering_widens_the_test_when_items_carry_the_difference():
    # 12 items, 6 prompts each: A beats B on every prompt of 4 items, B beats A on 1 item.
    a, b, items = [], [], []
    for k in range(12):
        win = 1 if k < 4 else (-1 if k < 5 else 0)
        a += [int(win == 1)] * 6
        b += [int(win == -1)] * 6
        items += [k] * 6
    r = mcnemar(mc_table(a, b, items), "A", "B").iloc[0]
    # prompts: (|24 - 6| - 1)^2 / 30 = 9.63, p = 0.002; items: 18^2 / (4 * 36 + 36) = 1.8
    assert r["p_value"] == pytest.approx(stats.chi2.sf(17**2 / 30, 1)) and r["p_value"] < 0.01
    assert r["chi2_clustered"] == pytest.approx(1.8) and r["p_value_clustered"] > 0.15


def test_mcnemar_without_discordant_pairs_and_errors():
    same = [1, 0, 1, 1]
    r = mcnemar(mc_table(same, same), "A", "B", min_items=1).iloc[0]
    assert (r["chi2"], r["p_exact"]) == (0.0, 1.0) and r["note"].startswith("no discordant")
    with pytest.raises(ValueError, match="'C' is not in the table"):
        mcnemar(mc_table(same, same), "A", "C")


def test_mcnemar_too_few_items_is_not_computed():
    a = [1, 1, 1, 1, 1, 1, 0, 0, 1, 0]
    b = [1, 0, 0, 0, 0, 1, 0, 1, 1, 0]
    r = mcnemar(mc_table(a, b), "A", "B").iloc[0]
    assert np.isnan(r["chi2"]) and np.isnan(r["p_value_clustered"]) and r["only_a"] == 4
    assert r["note"] == "not computed: 5 item(s), fewer than min_items = 10"


def test_mcnemar_invalid_rows_wrong_or_dropped_and_groups_by_category():
    t = synthetic_table(models=2, n_items=10, n_variants=2, seed=3)
    m1, m2 = t[t.model == "model_1"], t[t.model == "model_2"]
    objective = (m1.dataset_type == "objective").to_numpy()
    both_valid = m1.valid.to_numpy() & m2.valid.to_numpy() & objective
    drop = mcnemar(t, "model_1", "model_2", by=["category"], invalid="drop")
    assert len(drop) == 9 and drop["n_pairs"].sum() == both_valid.sum()
    wrong = mcnemar(t, "model_1", "model_2", by=["category"])
    assert wrong["n_pairs"].sum() == objective.sum() > both_valid.sum()


def test_every_pair_of_models_at_once_equals_pair_by_pair():
    t = synthetic_table(models=4, n_items=12, n_variants=3, seed=5)
    every = mcnemar(t, by=["dataset_type"], outcome="agree")
    assert len(every) == 6 * 2
    for (ma, mb), g in every.groupby(["model_a", "model_b"]):
        one = mcnemar(t, ma, mb, by=["dataset_type"], outcome="agree")
        pd.testing.assert_frame_equal(g.reset_index(drop=True), one, check_dtype=False)
    # and the counts against a plain merge of the two models' rows
    y = t.assign(ok=(t.answer == t.gold).astype(float).where(t.valid, 0.0))
    y = y[y.dataset_type == "objective"]
    key = ["dataset", "item_id", "category", "variant_id"]
    m = y[y.model == "model_1"].merge(y[y.model == "model_3"], on=key)
    r = mcnemar(t, "model_1", "model_3").iloc[0]
    assert r["only_a"] == ((m.ok_x == 1) & (m.ok_y == 0)).sum()
    assert r["only_b"] == ((m.ok_x == 0) & (m.ok_y == 1)).sum()
    dk = m.assign(d=m.ok_x - m.ok_y).groupby(["dataset", "item_id"])["d"].sum()
    assert r["chi2_clustered"] == pytest.approx(dk.sum() ** 2 / (dk**2).sum())


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
    acc = accuracy(t).set_index("category")  # an invalid answer is wrong by default
    assert acc.loc["original", "accuracy"] == 0.75
    assert acc.loc["framing", "accuracy"] == 0.25
    assert acc.loc["framing", "n"] == 4 and acc.loc["framing", "n_invalid"] == 1
    assert acc.loc["framing", "valid_rate"] == 0.75
    drop = accuracy(t, invalid="drop").set_index("category")
    assert drop.loc["framing", "accuracy"] == pytest.approx(1 / 3)
    assert drop.loc["framing", "n"] == 3 and drop.loc["framing", "n_invalid"] == 1
    d = accuracy_drop(t).iloc[0]
    assert d["category"] == "framing" and d["drop"] == pytest.approx(0.75 - 0.25)
    d = accuracy_drop(t, invalid="drop").iloc[0]
    assert d["drop"] == pytest.approx(0.75 - 1 / 3)
