"""Format spread by hand: invalid answers, the original format, and the issue's example."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyses import format_accuracy, format_spread


def formats_table():
    # 3 formats x 4 items; accuracies 1.0, 0.5, 0.25; one invalid row in f/2
    ans = {"f/0": [0, 0, 0, 0], "f/1": [0, 1, 0, 1], "f/2": [0, 1, 1, None]}
    rows = []
    for fmt, answers in ans.items():
        for k, a in enumerate(answers):
            rows.append(
                {
                    "model": "m",
                    "dataset": "d",
                    "dataset_type": "objective",
                    "item_id": f"q{k}",
                    "category": "formatting",
                    "variant_id": fmt,
                    "answer": a,
                    "gold": 0,
                    "valid": a is not None,
                }
            )
    df = pd.DataFrame(rows)
    df["answer"] = df["answer"].astype("Int64")
    return df


def test_format_accuracy_by_hand():
    acc = format_accuracy(formats_table()).set_index("format")
    assert acc.loc["f/0", "accuracy"] == 1.0
    assert acc.loc["f/1", "accuracy"] == 0.5
    assert acc.loc["f/2", "accuracy"] == pytest.approx(1 / 4)  # invalid row counted wrong
    assert acc.loc["f/2", "n"] == 4 and acc.loc["f/2", "n_invalid"] == 1
    drop = format_accuracy(formats_table(), invalid="drop").set_index("format")
    assert drop.loc["f/2", "accuracy"] == pytest.approx(1 / 3)  # invalid row left out
    assert drop.loc["f/2", "n"] == 3 and drop.loc["f/2", "n_invalid"] == 1


def test_format_spread_by_hand():
    r = format_spread(formats_table(), invalid="drop").iloc[0]
    a = np.array([1.0, 0.5, 1 / 3])
    assert r["spread"] == pytest.approx(1 - 1 / 3)
    assert r["sd"] == pytest.approx(a.std(ddof=1))
    assert r["median"] == pytest.approx(0.5)
    assert (r["best_format"], r["worst_format"], r["n_formats"]) == ("f/0", "f/2", 3)
    assert r["n_invalid"] == 1 and r["invalid"] == "drop"
    assert format_spread(formats_table(), min_n=4).iloc[0]["n_formats"] == 3
    assert format_spread(formats_table(), min_n=4, invalid="drop").iloc[0]["n_formats"] == 2
    wrong = format_spread(formats_table()).iloc[0]
    assert wrong["spread"] == pytest.approx(1 - 1 / 4) and wrong["n_invalid"] == 1


def issue_table(first_category="formatting"):
    # Issue 12, point 2: two formats on two items, one invalid answer under format 1.
    rows = []
    for fmt, cat, answers in (("f/0", first_category, [0, 0]), ("f/1", "formatting", [0, None])):
        for k, a in enumerate(answers):
            rows.append(
                {
                    "model": "m",
                    "dataset": "d",
                    "dataset_type": "objective",
                    "item_id": f"q{k}",
                    "category": cat,
                    "variant_id": fmt,
                    "answer": a,
                    "gold": 0,
                    "valid": a is not None,
                }
            )
    df = pd.DataFrame(rows)
    df["answer"] = df["answer"].astype("Int64")
    return df


def test_issue_example_invalid_counts_as_wrong():
    r = format_spread(issue_table()).iloc[0]
    assert r["spread"] == pytest.approx(0.5)  # FormatSpread: 1.0 - 0.5
    assert r["n_invalid"] == 1 and r["invalid"] == "wrong"
    assert format_spread(issue_table(), invalid="drop").iloc[0]["spread"] == 0.0


def test_the_original_prompt_is_one_of_the_formats():
    # The same example with format 0 being the original prompt: one group, two formats.
    out = format_spread(issue_table("original"))
    assert out["category"].tolist() == ["formatting"]
    r = out.iloc[0]
    assert r["n_formats"] == 2 and r["spread"] == pytest.approx(0.5)
    assert r["best_format"] == "f/0"
    alone = format_spread(issue_table("original"), include_original=False)
    assert alone.set_index("category").loc["formatting", "n_formats"] == 1


def test_bad_invalid_rule_is_one_clear_error():
    from robustness.core.errors import StudyError

    with pytest.raises(StudyError, match="invalid must be 'wrong' or 'drop', not 'skip'"):
        format_spread(formats_table(), invalid="skip")
