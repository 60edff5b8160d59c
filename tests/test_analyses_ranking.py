"""Model-ranking stability (issue 15): every statistic on small tables computed by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analyses.ranking import (
    kendall_w,
    model_ranks,
    ranking_concordance,
    ranking_swaps,
    ranking_tables,
    spread_resolution,
)


def _rows(model, dataset_type, category, variant, answers, gold=0, valid=None):
    n = len(answers)
    valid = [True] * n if valid is None else valid
    return pd.DataFrame(
        {
            "model": model,
            "dataset": "d_" + dataset_type[:3],
            "dataset_type": dataset_type,
            "item_id": [f"i{k}" for k in range(n)],
            "category": category,
            "variant_id": variant,
            "answer": pd.array(
                [a if v else None for a, v in zip(answers, valid, strict=True)], "Int64"
            ),
            "valid": valid,
            "gold": pd.array([gold if dataset_type == "objective" else None] * n, "Int64"),
        }
    )


def _objective_table() -> pd.DataFrame:
    """Accuracy (gold 0; answer 0 is correct) per model and prompt:

    ============== ==== ==== ====
    prompt          A    B    C
    ============== ==== ==== ====
    original        4/4  3/4  2/4
    option_order/0  2/4  3/4  1/4
    option_order/1  3/4  3/4  3/4
    ============== ==== ==== ====
    """
    acc = {
        "original/0": (4, 3, 2),
        "option_order/0": (2, 3, 1),
        "option_order/1": (3, 3, 3),
    }
    parts = []
    for variant, counts in acc.items():
        cat = variant.split("/")[0]
        for model, k in zip("ABC", counts, strict=True):
            parts.append(_rows(model, "objective", cat, variant, [0] * k + [1] * (4 - k)))
    return pd.concat(parts, ignore_index=True)


def test_scores_and_ranks_by_hand():
    r = model_ranks(_objective_table()).set_index(["variant_id", "model"])
    assert r.loc[("option_order/0", "A"), "score"] == 0.5
    assert r.loc[("option_order/0", "B"), "rank"] == 1.0
    assert r.loc[("option_order/0", "C"), "rank"] == 3.0
    assert (r.loc["option_order/1", "rank"] == 2.0).all()  # a three-way tie shares rank 2
    assert (r["n_items"] == 4).all()


def test_swaps_against_the_original_order_by_hand():
    # original order A > B > C.  option_order/0 (B > A > C): AB reversed, AC and BC kept;
    # option_order/1 (all tied): three changes, no reversal.  6 comparisons, 1 swap, 4 changes.
    s = ranking_swaps(model_ranks(_objective_table()))
    row = s[(s["category"] == "option_order")].iloc[0]
    assert (row["n_comparisons"], row["n_swapped"], row["n_changed"]) == (6, 1, 4)
    assert row["swap_rate"] == pytest.approx(1 / 6)
    assert row["change_rate"] == pytest.approx(4 / 6)
    assert row["reference"] == "original"
    pooled = s[s["category"] == "all"].iloc[0]
    assert pooled["n_comparisons"] == 6 and pooled["n_swapped"] == 1


def test_subjective_agreement_with_the_original_answer_by_hand():
    # X: original answers (1, 2, 3, -), framing/0 all kept (3/3), framing/1 one changed (2/3);
    # item i3's original is invalid for X, so X is scored on three items.
    # Y: original (1, 2, 3, 0); framing/0 keeps only i0 (i2 invalid = disagreement): 1/4.
    parts = [
        _rows("X", "subjective", "original", "original/0", [1, 2, 3, 0], valid=[1, 1, 1, 0]),
        _rows("X", "subjective", "framing", "framing/0", [1, 2, 3, 0]),
        _rows("X", "subjective", "framing", "framing/1", [1, 0, 3, 0]),
        _rows("Y", "subjective", "original", "original/0", [1, 2, 3, 0]),
        _rows("Y", "subjective", "framing", "framing/0", [1, 0, 3, 1], valid=[1, 1, 0, 1]),
        _rows("Y", "subjective", "framing", "framing/1", [1, 2, 3, 0]),
    ]
    t = pd.concat(parts, ignore_index=True)
    t["valid"] = t["valid"].astype(bool)
    r = model_ranks(t).set_index(["variant_id", "model"])
    assert r.loc[("framing/0", "X"), "score"] == 1.0 and r.loc[("framing/0", "X"), "n_items"] == 3
    assert r.loc[("framing/1", "X"), "score"] == pytest.approx(2 / 3)
    assert r.loc[("framing/0", "Y"), "score"] == 0.25 and r.loc[("framing/0", "Y"), "n_items"] == 4
    assert r.loc[("framing/1", "Y"), "score"] == 1.0
    # reference: mean over variants, X 5/6 > Y 5/8; framing/0 keeps X > Y, framing/1 reverses it
    s = ranking_swaps(model_ranks(t)).set_index("category")
    assert s.loc["framing", "reference"] == "mean over variants"
    assert (s.loc["framing", "n_comparisons"], s.loc["framing", "n_swapped"]) == (2, 1)


def test_kendall_w_by_hand_with_ties():
    # judges (variants) x objects (models) from the objective table's option_order:
    # ranks (2, 1, 3) and (2, 2, 2); R = (4, 3, 5), S = 2, T = 24, W = 24 / (4*24 - 2*24) = 0.5
    w, chi2, _ = kendall_w([[0.5, 0.75, 0.25], [0.75, 0.75, 0.75]], n_perm=0)
    assert w == pytest.approx(0.5)
    assert chi2 == pytest.approx(2 * 2 * 0.5)
    c = ranking_concordance(model_ranks(_objective_table()), n_perm=0).iloc[0]
    assert c["w"] == pytest.approx(0.5) and c["n_variants"] == 2 and c["n_models"] == 3


def test_kendall_w_is_friedmans_chi2_over_m_n_minus_1():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, size=(6, 5)).astype(float)  # with ties
    w, chi2, _ = kendall_w(x, n_perm=0)
    ref = stats.friedmanchisquare(*x.T)  # objects as treatments, judges as blocks
    assert chi2 == pytest.approx(ref.statistic)
    assert w == pytest.approx(ref.statistic / (6 * (5 - 1)))


def test_the_permutation_p_value_matches_exact_enumeration():
    x = np.array([[3.0, 2.0, 1.0, 0.0], [2.0, 3.0, 1.0, 0.0], [3.0, 1.0, 2.0, 0.0]])
    w, _, p = kendall_w(x, n_perm=20000, rng=np.random.default_rng(1))
    ranks = [stats.rankdata(-row) for row in x]
    ws = []
    for p2, p3 in itertools.product(itertools.permutations(range(4)), repeat=2):
        r = np.vstack([ranks[0], ranks[1][list(p2)], ranks[2][list(p3)]])
        ws.append(kendall_w(-r, n_perm=0)[0])  # -rank as score keeps the ranks
    exact = float(np.mean(np.array(ws) >= w - 1e-12))
    assert p == pytest.approx(exact, abs=0.01)
    # seeded: the same generator state gives the same p-value
    assert (
        kendall_w(x, 500, np.random.default_rng(3))[2]
        == kendall_w(x, 500, np.random.default_rng(3))[2]
    )
    assert np.isnan(kendall_w([[1.0, 1.0], [2.0, 2.0]], n_perm=10)[0])  # every judge ties


def test_spread_as_the_error_bar_by_hand():
    # accuracy under (original, formatting/0, formatting/1):
    # X (3/4, 2/4, 4/4) spread 0.5; Y (2/4, 2/4, 2/4) spread 0; Z (0, 0, 1/4) spread 0.25
    acc = {"X": (3, 2, 4), "Y": (2, 2, 2), "Z": (0, 0, 1)}
    parts = []
    for model, counts in acc.items():
        for variant, k in zip(("original/0", "formatting/0", "formatting/1"), counts, strict=True):
            cat = variant.split("/")[0]
            parts.append(_rows(model, "objective", cat, variant, [0] * k + [1] * (4 - k)))
    per, pairs = spread_resolution(pd.concat(parts, ignore_index=True))
    per = per.set_index("model")
    assert per.loc["X", "spread"] == 0.5 and per.loc["Y", "spread"] == 0.0
    assert per.loc["Z", "spread"] == 0.25 and per.loc["X", "accuracy_original"] == 0.75
    pairs = pairs.set_index(["model_a", "model_b"])
    assert pairs.loc[("X", "Y"), "difference"] == 0.25
    assert pairs.loc[("X", "Y"), "unresolved"]  # 0.25 < X's spread 0.5
    assert not pairs.loc[("X", "Z"), "unresolved"]  # 0.75 > 0.5
    assert not pairs.loc[("Y", "Z"), "unresolved"]  # 0.5 > 0.25


def test_analyze_adds_the_ranking_tables_with_two_models_only(tmp_path):
    from analyses.synthetic import synthetic_table
    from robustness.analysis.pipeline import analyze

    two = analyze(
        synthetic_table(models=2, n_items=6, seed=1), tmp_path / "a", n_boot=20, quiet=True
    )
    for name in ("ranking_swaps", "ranking_concordance", "spread_resolution", "ranking_ranks"):
        assert name in two.named_tables() and (tmp_path / "a" / "tables" / f"{name}.csv").exists()
    assert len(two.ranking_swaps) > 0
    one = analyze(
        synthetic_table(models=1, n_items=6, seed=1), tmp_path / "b", n_boot=20, quiet=True
    )
    assert not one.has_ranking
    tables = ranking_tables(synthetic_table(models=2, n_items=6, seed=1), n_perm=50, seed=4)
    again = ranking_tables(synthetic_table(models=2, n_items=6, seed=1), n_perm=50, seed=4)
    pd.testing.assert_frame_equal(tables["ranking_concordance"], again["ranking_concordance"])
