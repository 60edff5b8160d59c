"""Loading items from every supported source, and one clear error per kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import robustness as rb
from robustness.core.errors import ItemError

GOOD = {
    "item_id": "q1",
    "dataset": "toy",
    "dataset_type": "objective",
    "question": "Which planet is closest to the Sun?",
    "options": ["Venus", "Mercury", "Mars", "Earth"],
    "answer": 1,
    "source": "hand-written",
}


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_jsonl_keeps_unknown_fields_in_meta(tmp_path):
    (item,) = rb.load_items(write_jsonl(tmp_path / "a.jsonl", [GOOD]))
    assert item.options == ("Venus", "Mercury", "Mars", "Earth")
    assert item.answer == 1 and item.scale == "nominal"
    assert item.meta == {"source": "hand-written"}


def test_subjective_items_default_to_an_ordinal_scale(tmp_path):
    rec = {
        **GOOD,
        "dataset_type": "subjective",
        "answer": None,
        "options": ["Disagree", "Agree"],
        "question": "Cats are better than dogs.",
    }
    (item,) = rb.load_items(write_jsonl(tmp_path / "s.jsonl", [rec]))
    assert item.scale == "ordinal" and item.is_agree_scale


def test_csv_with_option_columns_letter_answers_and_mapping(tmp_path):
    path = tmp_path / "mc.csv"
    path.write_text(
        "id,prompt,A,B,C,D,key\n"
        "x1,2 + 2 = ?,3,4,5,\n"  # short row: the CSV reader fills missing cells
        'x2,"Largest ocean, by area?",Atlantic,Pacific,Indian,Arctic,B\n',
        encoding="utf-8",
    )
    mapping = {
        "item_id": "id",
        "question": "prompt",
        "options": ["A", "B", "C", "D"],
        "answer": "key",
    }
    with pytest.raises(ItemError, match=r"mc.csv, line 2, field 'answer'.*gold answer"):
        rb.load_items(path, mapping=mapping, dataset_type="objective")
    path.write_text(path.read_text().replace("x1,2 + 2 = ?,3,4,5,\n", "x1,2 + 2 = ?,3,4,5,,B\n"))
    items = rb.load_items(path, mapping=mapping, dataset_type="objective")
    assert items[0].options == ("3", "4", "5") and items[0].answer == 1
    assert items[1].question == "Largest ocean, by area?" and items[1].answer == 1
    assert items[1].dataset == "mc"  # the file stem when no dataset is given


def test_csv_with_json_options(tmp_path):
    path = tmp_path / "j.csv"
    pd.DataFrame([{**GOOD, "options": json.dumps(GOOD["options"])}]).to_csv(path, index=False)
    (item,) = rb.load_items(path)
    assert item.options == tuple(GOOD["options"])


def test_parquet(tmp_path):
    path = tmp_path / "p.parquet"
    pd.DataFrame([GOOD, {**GOOD, "item_id": "q2"}]).to_parquet(path)
    items = rb.load_items(path)
    assert [i.item_id for i in items] == ["q1", "q2"] and items[1].answer == 1


def test_hugging_face_datasets_folder(tmp_path):
    datasets = pytest.importorskip("datasets", reason="datasets is a dev extra")
    ds = datasets.Dataset.from_list(
        [
            {
                "id": "a1",
                "question": "Which gas do plants take in?",
                "choices": {
                    "text": ["Oxygen", "Carbon dioxide", "Helium"],
                    "label": ["A", "B", "C"],
                },
                "answerKey": "B",
            },
        ]
    )
    ds.save_to_disk(str(tmp_path / "one"))
    datasets.DatasetDict({"test": ds, "train": ds}).save_to_disk(str(tmp_path / "two"))
    mapping = {"item_id": "id", "options": "choices", "answer": "answerKey"}
    (item,) = rb.load_items(tmp_path / "one", mapping=mapping, dataset_type="objective")
    assert item.options == ("Oxygen", "Carbon dioxide", "Helium") and item.answer == 1
    (only,) = rb.load_items(
        tmp_path / "two", mapping=mapping, dataset_type="objective", dataset="arcish", split="test"
    )
    assert only.meta["split"] == "test"
    with pytest.raises(ItemError, match="duplicates the item"):
        rb.load_items(tmp_path / "two", mapping=mapping, dataset_type="objective")


@pytest.mark.shared_data
def test_shared_data_loads_as_is(shared_items):
    by_dataset = {}
    for item in shared_items:
        by_dataset.setdefault(item.dataset, []).append(item)
    assert {k: len(v) for k, v in by_dataset.items()} == {
        "mmlu": 200,
        "arc_challenge": 200,
        "political_compass": 62,
        "valuebench": 152,
        "wvs": 60,
    }
    assert all(i.scale == "ordinal" for i in by_dataset["wvs"])
    assert all(i.is_agree_scale for i in by_dataset["political_compass"])
    assert not any(i.is_agree_scale for i in by_dataset["wvs"])
    assert "source_repo" in shared_items[0].meta


# ---------------------------------------------------------------------- bad input, one each


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        ({"question": "  "}, r"line 2, field 'question': is empty"),
        ({"options": ["Only one"]}, r"line 2, field 'options': needs at least two options"),
        ({"options": ["Paris", "Rome", "paris "]}, r"line 2, field 'options': options 0 and 2"),
        ({"answer": 4}, r"line 2, field 'answer': gold index 4 is out of range for 4 options"),
        ({"dataset_type": "factual"}, r"line 2, field 'dataset_type': 'factual' is not one of"),
        ({"options": ["A", ""]}, r"line 2, field 'options': option 1 is empty"),
    ],
    ids=[
        "empty-question",
        "one-option",
        "duplicate-options",
        "gold-out-of-range",
        "unknown-dataset-type",
        "empty-option",
    ],
)
def test_bad_item_names_file_line_and_field(tmp_path, change, pattern):
    path = write_jsonl(tmp_path / "bad.jsonl", [GOOD, {**GOOD, "item_id": "q2", **change}])
    with pytest.raises(ItemError, match=pattern) as info:
        rb.load_items(path)
    assert str(info.value).startswith(str(path))
    assert str(info.value).count(".") >= 1 and "\n" not in str(info.value)


def test_duplicate_item_ids_name_both_places(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [GOOD])
    b = write_jsonl(tmp_path / "b.jsonl", [{**GOOD, "question": "Another?"}])
    with pytest.raises(
        ItemError,
        match=r"b.jsonl, line 1, field 'item_id': 'q1' .*a.jsonl, "
        r"line 1",
    ):
        rb.load_items(a, b)


def test_non_utf8_bytes_name_line_and_column(tmp_path):
    path = tmp_path / "latin1.jsonl"
    good = json.dumps(GOOD).encode()
    bad = json.dumps({**GOOD, "item_id": "q2", "question": "Café?"}, ensure_ascii=False)
    bad = bad.encode("latin-1")
    path.write_bytes(good + b"\n" + bad + b"\n")
    with pytest.raises(
        ItemError,
        match=r"latin1.jsonl, line 2: byte 0xe9 at column \d+ is not "
        r"valid UTF-8",
    ):
        rb.load_items(path)


def test_csv_missing_column_is_named(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("item_id,question,answer\nq1,What?,0\n", encoding="utf-8")
    with pytest.raises(ItemError, match=r"m.csv, line 2, field 'options': is missing"):
        rb.load_items(path, dataset_type="objective")
    with pytest.raises(ItemError, match=r"mapped column\(s\) 'A', 'D' are missing"):
        rb.load_items(path, dataset_type="objective", mapping={"options": ["A", "D"]})


def test_invalid_json_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(GOOD) + '\n{"item_id": \n', encoding="utf-8")
    with pytest.raises(ItemError, match=r"broken.jsonl, line 2: not valid JSON"):
        rb.load_items(path)


def test_subjective_item_with_gold_is_rejected(tmp_path):
    rec = {**GOOD, "dataset_type": "subjective"}
    with pytest.raises(ItemError, match="a subjective item has no gold answer"):
        rb.load_items(write_jsonl(tmp_path / "s.jsonl", [rec]))


def test_unknown_file_type(tmp_path):
    path = tmp_path / "items.xlsx"
    path.write_bytes(b"")
    with pytest.raises(ItemError, match=r"unknown item file type '\.xlsx'"):
        rb.load_items(path)


def test_per_dataset_keeps_an_evenly_spaced_subset_in_order(demo):
    from robustness.core.items import per_dataset

    sub = per_dataset(demo, 5)
    by_ds: dict[str, list] = {}
    for item in sub:
        by_ds.setdefault(item.dataset, []).append(item)
    assert all(len(v) == 5 for v in by_ds.values()) and len(by_ds) == 4
    positions = [demo.index(i) for i in sub]
    assert positions == sorted(positions)
    first = [i for i in demo if i.dataset == sub[0].dataset]
    assert by_ds[sub[0].dataset][0] is first[0] and by_ds[sub[0].dataset][1] is not first[1]
    assert per_dataset(demo, 0) == demo and per_dataset(demo, 1000) == demo


def test_a_numeric_answer_that_is_also_another_options_text_is_refused(tmp_path):
    rec = {**GOOD, "options": ["2", "3", "5", "7"], "answer": "2"}
    with pytest.raises(
        ItemError,
        match=r"field 'answer': '2' is ambiguous: it is index 2 and "
        r"also the text of option 0",
    ):
        rb.load_items(write_jsonl(tmp_path / "amb.jsonl", [rec]))
    same = {**GOOD, "options": ["0", "1", "2"], "answer": "1"}  # both readings agree
    assert rb.load_items(write_jsonl(tmp_path / "ok.jsonl", [same]))[0].answer == 1
    floaty = {**GOOD, "answer": "1.0"}  # pandas writes integer columns with gaps as floats
    assert rb.load_items(write_jsonl(tmp_path / "f.jsonl", [floaty]))[0].answer == 1


def test_one_dataset_cannot_be_both_objective_and_subjective(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = write_jsonl(tmp_path / "a" / "test.jsonl", [{**GOOD, "dataset": None}])
    subj = {**GOOD, "item_id": "p1", "dataset": None, "dataset_type": "subjective", "answer": None}
    b = write_jsonl(tmp_path / "b" / "test.jsonl", [subj])
    with pytest.raises(ItemError, match=r"dataset 'test' is subjective here but objective at"):
        rb.load_items(a, b)
