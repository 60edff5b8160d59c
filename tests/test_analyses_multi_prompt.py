"""analyses.multi_prompt: Mizrahi's AvgP/MaxP/CPS, HELM's worst case, PromptEval's quantiles,
checked against hand computations and an independent pandas re-implementation of the item
bootstrap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import analyses as an
from robustness.core.errors import TableError

# item -> correct under each prompt (category/variant)
HAND = {
    "original/0": [1, 1, 0, 1],
    "formatting/0": [1, 0, 0, 1],
    "formatting/1": [1, 1, 1, 0],
    "framing/0": [0, 1, 0, 1],
}


def _table(right: dict[str, list[int]], model: str = "m", dataset: str = "d") -> pd.DataFrame:
    rows = []
    for variant, oks in right.items():
        for i, ok in enumerate(oks):
            rows.append(
                {
                    "model": model,
                    "dataset": dataset,
                    "dataset_type": "objective",
                    "item_id": f"i{i}",
                    "category": variant.split("/")[0],
                    "variant_id": variant,
                    "answer": 0 if ok else 1,
                    "gold": 0,
                    "valid": True,
                }
            )
    return pd.DataFrame(rows)


def test_columns_are_the_issues():
    out = an.multi_prompt(_table(HAND), n_boot=10)
    head = ["model", "dataset", "scope", "n_prompts", "mean", "max", "min", "cps", "worst_case"]
    assert out.columns[: len(head)].tolist() == head
    for c in ("q05", "q25", "q50", "q75", "q95", "mean_low", "cps_high", "worst_case_low"):
        assert c in out.columns
    assert out["scope"].tolist() == ["formatting", "framing", "all prompts"]


def test_hand_computation_all_prompts():
    # per-prompt accuracy: original 3/4, formatting/0 2/4, formatting/1 3/4, framing/0 2/4
    r = an.multi_prompt(_table(HAND), n_boot=0).set_index("scope").loc["all prompts"]
    avg, top, low = (0.75 + 0.5 + 0.75 + 0.5) / 4, 0.75, 0.5
    assert r["n_prompts"] == 4 and r["n_items"] == 4
    assert r["mean"] == pytest.approx(avg)
    assert r["max"] == pytest.approx(top) and r["min"] == pytest.approx(low)
    assert r["spread"] == pytest.approx(0.25)
    assert r["cps"] == pytest.approx(top * (1 - (top - avg)))  # 0.75 * 0.875 = 0.65625
    assert r["cps"] == pytest.approx(0.65625)
    # items correct under all four prompts: none (i0 fails framing, i1 formatting/0, ...)
    assert r["worst_case"] == pytest.approx(0.0)
    # sorted accuracies .5 .5 .75 .75; linear rule: q25 at position 0.75 -> 0.5, q50 -> 0.625
    assert r["q25"] == pytest.approx(0.5) and r["q50"] == pytest.approx(0.625)
    assert r["q05"] == pytest.approx(0.5) and r["q95"] == pytest.approx(0.75)
    assert r["q75"] == pytest.approx(0.75)
    assert r["note"] == ""


def test_family_scope_holds_the_original():
    out = an.multi_prompt(_table(HAND), n_boot=0).set_index("scope")
    f = out.loc["formatting"]
    assert f["n_prompts"] == 3  # original/0, formatting/0, formatting/1
    assert f["mean"] == pytest.approx((0.75 + 0.5 + 0.75) / 3)
    # i0 correct under all three; i1 fails formatting/0; i2 fails original; i3 fails f/1
    assert f["worst_case"] == pytest.approx(0.25)
    alone = an.multi_prompt(_table(HAND), n_boot=0, include_original=False).set_index("scope")
    assert alone.loc["formatting", "n_prompts"] == 2
    assert alone.loc["formatting", "mean"] == pytest.approx(0.625)


def test_invalid_counts_as_wrong_or_is_dropped():
    t = _table({"original/0": [1, 1], "formatting/0": [1, 1]})
    t.loc[3, ["answer", "valid"]] = [None, False]
    wrong = an.multi_prompt(t, n_boot=0).set_index("scope").loc["all prompts"]
    assert wrong["min"] == pytest.approx(0.5) and wrong["worst_case"] == pytest.approx(0.5)
    drop = an.multi_prompt(t, n_boot=0, invalid="drop").set_index("scope").loc["all prompts"]
    assert drop["min"] == pytest.approx(1.0) and drop["worst_case"] == pytest.approx(1.0)


def _naive_bootstrap(t: pd.DataFrame, weights: np.ndarray, scope_cats: set[str]) -> dict:
    """Resample items by repeating their rows, then recompute with pandas: independent code."""
    items = sorted(t["item_id"].unique())
    sub = t[t["category"].isin(scope_cats)].assign(y=lambda f: (f["answer"] == f["gold"]) * 1.0)
    out: dict[str, list[float]] = {"mean": [], "max": [], "cps": [], "worst_case": [], "q25": []}
    for w in weights:
        rep = pd.concat(
            [
                sub[sub["item_id"] == item]
                for item, k in zip(items, w, strict=True)
                for _ in range(k)
            ]
        )
        acc = rep.groupby("variant_id")["y"].mean()
        worst = rep.groupby("item_id")["y"].min()
        n_copies = dict(zip(items, w, strict=True))
        worst_mean = sum(worst[i] * n_copies[i] for i in worst.index) / sum(
            n_copies[i] for i in worst.index
        )
        out["mean"].append(acc.mean())
        out["max"].append(acc.max())
        out["cps"].append(acc.max() * (1 - (acc.max() - acc.mean())))
        out["worst_case"].append(worst_mean)
        out["q25"].append(float(np.quantile(acc.to_numpy(), 0.25)))
    return out


def test_intervals_match_an_independent_resampling():
    rng = np.random.default_rng(5)
    right = {v: rng.integers(0, 2, 12).tolist() for v in HAND}
    t = _table(right)
    n_boot = 60
    out = an.multi_prompt(t, n_boot=n_boot, seed=11).set_index("scope")
    weights = np.random.default_rng(11).multinomial(12, np.full(12, 1 / 12), size=n_boot)
    for scope, cats in (("all prompts", set(HAND_CATS)), ("framing", {"framing", "original"})):
        naive = _naive_bootstrap(t, weights, cats)
        for stat, values in naive.items():
            lo, hi = np.quantile(values, [0.025, 0.975])
            assert out.loc[scope, f"{stat}_low"] == pytest.approx(lo), (scope, stat)
            assert out.loc[scope, f"{stat}_high"] == pytest.approx(hi), (scope, stat)
    again = an.multi_prompt(t, n_boot=n_boot, seed=11)
    pd.testing.assert_frame_equal(out.reset_index()[again.columns], again)


HAND_CATS = ("original", "formatting", "framing")


def test_models_and_datasets_apart():
    t = pd.concat(
        [
            _table(HAND, "a", "d1"),
            _table({"original/0": [0, 0, 0, 0]}, "b", "d1"),
            _table({"original/0": [1, 0]}, "a", "d2"),
        ]
    )
    out = an.multi_prompt(t, n_boot=20)
    keys = out[["model", "dataset", "scope"]].apply(tuple, axis=1).tolist()
    assert ("b", "d1", "all prompts") in keys and ("a", "d2", "all prompts") in keys
    b = out[(out["model"] == "b") & (out["scope"] == "all prompts")].iloc[0]
    assert b["n_prompts"] == 1 and b["mean"] == 0.0 and b["cps"] == 0.0


def test_prompt_level_table_matches_and_says_what_it_lacks():
    item_level = an.multi_prompt(_table(HAND), n_boot=0)
    acc = _table(HAND).assign(ok=lambda f: f["answer"] == f["gold"])
    acc = acc.groupby(["model", "dataset", "category", "variant_id"])["ok"].agg(["mean", "size"])
    prompts = acc.reset_index().rename(
        columns={"variant_id": "prompt", "mean": "accuracy", "size": "n_items"}
    )
    out = an.multi_prompt(prompts)
    for c in ("n_prompts", "mean", "max", "min", "cps", "q05", "q50", "q95", "spread"):
        assert out[c].tolist() == pytest.approx(item_level[c].tolist()), c
    assert out["worst_case"].isna().all() and out["mean_low"].isna().all()
    assert out["note"].str.contains("worst_case").all()
    assert out["n_items"].tolist() == [4, 4, 4]


def test_bad_prompt_level_accuracy_is_named():
    bad = pd.DataFrame({"model": ["m", "m"], "prompt": ["p", "q"], "accuracy": [0.5, 1.5]})
    with pytest.raises(TableError, match=r"column 'accuracy', row 1: 1.5"):
        an.multi_prompt(bad)


def test_prompts_drawn_per_item_get_no_summaries_over_prompts():
    """A formatting variant is one template on every item; an option order is drawn per item,
    so its ``option_order/0`` is no prompt to rank: only mean and worst case are given."""
    import json

    rows = []
    for i in range(4):
        for v, params in (
            ("original/0", {}),
            ("formatting/0", {"format": "a"}),
            ("formatting/1", {"format": "b"}),
            ("option_order/0", {"order": [i % 3, (i + 1) % 3, (i + 2) % 3]}),
        ):
            rows.append(
                {
                    "model": "m",
                    "dataset": "d",
                    "dataset_type": "objective",
                    "item_id": f"i{i}",
                    "category": v.split("/")[0],
                    "variant_id": v,
                    "params": json.dumps(params),
                    "answer": (i + len(v)) % 2,
                    "gold": 0,
                    "valid": True,
                }
            )
    r = an.multi_prompt(pd.DataFrame(rows), n_boot=20).set_index("scope")
    assert np.isfinite(r.loc["formatting", ["max", "cps", "q50"]].astype(float)).all()
    assert r.loc["formatting", "note"] == ""
    for scope in ("option_order", "all prompts"):
        assert r.loc[scope, ["max", "min", "cps", "q50", "max_low"]].isna().all()
        assert np.isfinite(float(r.loc[scope, "mean"])) and np.isfinite(
            float(r.loc[scope, "worst_case"])
        )
        assert "option_order differ per item" in r.loc[scope, "note"]
