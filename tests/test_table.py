"""The long table's schema: validation names the column, row and value; I/O round trips."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.tables import one_item_table as table

from robustness.core.errors import TableError
from robustness.core.table import (
    ANALYSIS_COLUMNS,
    read_metadata,
    read_table,
    validate,
    write_csv,
    write_parquet,
)


def test_a_good_table_passes_and_keeps_extra_columns():
    t = table().assign(my_note="x")
    out = validate(t)
    assert len(out) == 4 and out["my_note"].eq("x").all()
    assert str(out["answer"].dtype) == "Int64" and str(out["valid"].dtype) == "boolean"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.drop(columns=["answer"]), r"missing column\(s\) 'answer'"),
        (
            lambda t: t.assign(dataset_type=["objective", "factual", "objective", "objective"]),
            r"column 'dataset_type', row 1 \(model='m', item_id='q1', variant_id='framing/0'\): "
            r"'factual' is not one of",
        ),
        (
            lambda t: t.assign(answer=[1, 1, "two", 1]),
            r"column 'answer', row 2 .*'two' is not a number",
        ),
        (lambda t: t.assign(answer=[1, 1, 1.5, 1]), "is not a whole number"),
        (lambda t: t.assign(answer=[1, 1, 4, 1]), "is not below the row's n_options"),
        (
            lambda t: t.assign(valid=["yes", "maybe", "no", "yes"]),
            r"column 'valid', row 1.*'maybe' is not a boolean",
        ),
        (
            lambda t: t.assign(variant_id=["original/0", "framing/0", "framing/0", "framing/2"]),
            r"rows 1 and 2 share the key",
        ),
        (lambda t: t.assign(option_probs=[[0.5, 0.6, 0, 0]] * 4), "is not a probability vector"),
        (lambda t: t.assign(option_probs=[[0.5, 0.5]] * 4), "has 2 entries but n_options is 4"),
        (
            lambda t: t.assign(correct=[True, False, True, True]),
            r"column 'correct', row 1.*disagrees with answer == gold",
        ),
        (lambda t: t.assign(confidence=[0.5, 1.5, 0.5, 0.5]), "is not a probability"),
        (lambda t: t.assign(item_id=["q1", " ", "q1", "q1"]), "is an empty string"),
        (lambda t: t.assign(valid=[True, False, True, True]), "is set on a row marked invalid"),
        (
            lambda t: t.assign(answer=[1, None, 1, 1], correct=[True, None, True, True]),
            "is missing on a row marked valid",
        ),
        (lambda t: t.assign(dataset_type="subjective"), "is set on a subjective item"),
        (lambda t: t.assign(params=["{}", "{bad", "{}", "{}"]), "is not a JSON object"),
        (
            lambda t: t.assign(
                dataset_type=["objective"] * 3 + ["subjective"],
                gold=[1, 1, 1, None],
                correct=[True, True, True, None],
            ),
            "dataset 'd' is objective in row 0 but subjective in row 3",
        ),
    ],
)
def test_faults_are_named_by_column_row_and_value(change, message):
    with pytest.raises(TableError, match=message) as info:
        validate(change(table()))
    assert "\n" not in str(info.value)


def test_the_analysis_subset_needs_only_its_columns():
    t = table()[list(ANALYSIS_COLUMNS)]
    assert len(validate(t, ANALYSIS_COLUMNS)) == 4
    with pytest.raises(TableError, match="missing column"):
        validate(t)


def test_parquet_round_trip_carries_metadata(tmp_path):
    path = write_parquet(table(), tmp_path / "t.parquet", {"version": "9", "study": {"seed": 3}})
    assert read_metadata(path) == {"version": "9", "study": {"seed": 3}}
    back = read_table(path)
    assert back["option_probs"].iloc[0] == pytest.approx([0.1, 0.7, 0.1, 0.1])
    assert not (tmp_path / "t.parquet.tmp").exists()


def test_csv_round_trip_with_missing_booleans_and_lists(tmp_path):
    t = table().astype({"valid": object, "correct": object, "answer": object})
    t.loc[3, ["valid", "answer", "label", "correct", "invalid_reason"]] = [
        False,
        None,
        None,
        None,
        "no_label",
    ]
    path = write_csv(t, tmp_path / "t.csv")
    back = read_table(path, required=None)
    assert back["valid"].tolist() == [True, True, True, False]
    assert back["correct"].isna().tolist() == [False, False, False, True]
    assert back["option_probs"].iloc[1] == pytest.approx([0.1, 0.7, 0.1, 0.1])


def test_unreadable_and_unknown_files(tmp_path):
    (tmp_path / "t.parquet").write_bytes(b"not parquet")
    (tmp_path / "t.xlsx").touch()
    with pytest.raises(TableError, match="cannot be read as a table"):
        read_table(tmp_path / "t.parquet")
    with pytest.raises(TableError, match=r"must be \.parquet or \.csv"):
        read_table(tmp_path / "t.xlsx")
    with pytest.raises(TableError, match="no such table file"):
        read_table(tmp_path / "none.csv")


def test_large_tables_validate_vectorised():
    t = table(2)
    big = t.loc[np.repeat(t.index, 50_000)].reset_index(drop=True)
    big["variant_id"] = [f"v/{i}" for i in range(len(big))]
    big["item_id"] = [f"q{i % 50_000}" for i in range(len(big))]  # one original per item
    assert len(validate(big)) == 100_000


def test_csv_keeps_text_that_looks_like_numbers_or_missing_values(tmp_path):
    t = table().astype({"raw_output": object, "label": object, "dataset": object})
    t["raw_output"] = ["NA", "None", "1", "null"]
    t["dataset"] = "001"
    back = read_table(write_csv(t, tmp_path / "t.csv"), required=None)
    assert back["raw_output"].tolist() == ["NA", "None", "1", "null"]
    assert back["dataset"].eq("001").all() and back["label"].eq("B").all()


def test_two_original_rows_of_one_item_and_model_are_refused_naming_both_rows():
    twice = table().assign(
        category=["original", "framing", "original", "framing"],
        variant_id=["original/0", "framing/0", "original/1", "framing/2"],
    )
    with pytest.raises(TableError) as info:
        validate(twice)
    message = str(info.value)
    assert message.startswith("column 'category': model 'm', dataset 'd', item 'q1' has 2 ")
    assert "rows 0 and 2" in message and "\n" not in message


def test_one_original_per_model_study_or_repeat_column_is_accepted():
    two = table().assign(category=["original", "framing", "original", "framing"])
    other_model = two.assign(model=["m", "m", "n", "n"], variant_id="original/0")
    other_model.loc[[1, 3], "variant_id"] = "framing/0"
    assert len(validate(other_model)) == 4
    assert len(validate(other_model.assign(model="m", study=["s", "s", "t", "t"]))) == 4
    by_epoch = other_model.assign(model="m", epoch=[1, 1, 2, 2])
    by_epoch.loc[2:, "variant_id"] = ["original/1", "framing/1"]
    assert len(validate(by_epoch)) == 4
    with pytest.raises(TableError, match="item 'q1', epoch 1 has 2 original rows"):
        validate(by_epoch.assign(epoch=1))
    with pytest.raises(TableError, match=r"epoch None has 2 original rows \(rows 0 and 2\)"):
        validate(by_epoch.assign(epoch=None))
