"""Regression tests from the fuzz campaign of issue 17: each hostile item file gives one
ItemError naming the file, the line and the field, or loads as it should."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

import robustness as rb
from robustness.core.errors import ItemError

BASE = {"question": "Which?", "options": ["a", "b"], "answer": 0, "dataset_type": "objective"}


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def line(**changes) -> str:
    return json.dumps({**BASE, **changes}, ensure_ascii=False)


@pytest.mark.parametrize(
    "name, text, pattern",
    [
        ("deep.json", "[" * 100_000 + "]" * 100_000, r"deep\.json: .*nests .* too deeply"),
        ("deep.jsonl", line()[:-1] + ', "x": ' + "[" * 5000 + "]" * 5000 + "}", "line 1"),
        ("mid.jsonl", line(meta={"x": json.loads("[" * 200 + "]" * 200)}), r"line 1, field"),
        ("bigint.jsonl", line()[:-1] + ', "answer": ' + "9" * 5000 + "}", r"line 1: a number"),
        ("bigid.jsonl", line(item_id=None)[:-1] + "}", None),
        ("optnum.jsonl", line(options=5), r"line 1, field 'options': .* got 5\."),
        ("optbool.jsonl", line(options=True), r"field 'options': .* got True\."),
        ("optdict.jsonl", line(options={"text": ["a", "b"], "label": 7}), r"'label' must be"),
        ("optnested.jsonl", line(options=[["a"], "b"]), r"option 0 must be text"),
        ("idlist.jsonl", line(item_id=[1, 2]), r"field 'item_id': must be text or a number"),
        ("typenum.jsonl", line(dataset_type=3), r"field 'dataset_type': must be text, got 3"),
        ("listnon.json", "[1, 2]", r"item 0: expected a JSON object, got int"),
        ("many.jsonl", line(options=[f"o{i}" for i in range(30)]), r"30 options; at most 26"),
        ("surr.jsonl", line()[:-1] + ', "question": "\\ud800"}', r"field 'question': .*surrogate"),
        ("surropt.jsonl", line()[:-1] + ', "options": ["\\udfff", "b"]}', r"field 'options'"),
        ("long.jsonl", line(question="x" * 100_001), r"100,001 characters"),
        ("float.jsonl", line(answer=1.5), r"field 'answer': must be an option index, got 1\.5"),
        ("bad.parquet", "garbage", r"bad\.parquet: cannot be read as Parquet"),
    ],
)
def test_hostile_item_files_give_one_clean_error(tmp_path, name, text, pattern):
    path = write(tmp_path / name, text)
    if pattern is None:  # a control: the same file without the hostile part loads
        assert len(rb.load_items(path)) == 1
        return
    with pytest.raises(ItemError, match=pattern) as err:
        rb.load_items(path)
    message = str(err.value)
    assert str(path) in message and "\n" not in message and len(message) < 400


def test_a_huge_integer_id_is_refused_without_a_python_error(tmp_path):
    path = write(tmp_path / "a.jsonl", line()[:-1] + ', "item_id": ' + "7" * 4000 + "}")
    with pytest.raises(ItemError, match=r"field 'item_id': is a number of 4000 digits"):
        rb.load_items(path)


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085", "\x1c", "\x0b"])
def test_jsonl_keeps_unicode_line_breaks_inside_strings(tmp_path, sep):
    path = write(tmp_path / "a.jsonl", line(question=f"one{sep}two") + "\r\n" + line(item_id="2"))
    items = rb.load_items(path)
    assert items[0].question == f"one{sep}two" and len(items) == 2


def test_csv_question_that_looks_like_json_is_text(tmp_path):
    path = write(
        tmp_path / "a.csv",
        'question,options,answer,dataset_type,meta\n"[1, 2, 3]","[""a"",""b""]",0,objective,'
        '"{""k"": 1}"\n',
    )
    (item,) = rb.load_items(path)
    assert item.question == "[1, 2, 3]" and item.options == ("a", "b") and item.meta["k"] == 1


def test_csv_field_over_the_csv_modules_limit(tmp_path):
    path = write(tmp_path / "a.csv", 'question,options\n"' + "x" * 200_000 + '","[""a"",""b""]"\n')
    with pytest.raises(ItemError, match=r"a\.csv, line 2: cannot be read as CSV"):
        rb.load_items(path, dataset_type="subjective")


def test_datasets_folder_with_a_missing_or_corrupt_arrow_file(tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    table = pa.table({"question": ["Q?"], "options": [["a", "b"]], "answer": [0]})
    with (
        pa.OSFile(str(folder / "data-00000-of-00001.arrow"), "wb") as sink,
        pa.ipc.new_stream(sink, table.schema) as writer,
    ):
        writer.write_table(table)
    state = {"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}
    (folder / "state.json").write_text(json.dumps(state))
    assert len(rb.load_items(folder, dataset_type="objective")) == 1
    (folder / "data-00000-of-00001.arrow").write_bytes(b"\x00garbage")
    with pytest.raises(ItemError, match="cannot be read as Arrow"):
        rb.load_items(folder, dataset_type="objective")
    (folder / "data-00000-of-00001.arrow").unlink()
    with pytest.raises(ItemError, match="is missing"):
        rb.load_items(folder, dataset_type="objective")
    (folder / "state.json").write_text("{not json")
    with pytest.raises(ItemError, match=r"state\.json: not valid JSON"):
        rb.load_items(folder, dataset_type="objective")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_item_file(tmp_path):
    path = write(tmp_path / "a.jsonl", line())
    path.chmod(0)
    with pytest.raises(ItemError, match=r"a\.jsonl: cannot be read"):
        rb.load_items(path)


def test_item_constructor_refuses_too_many_options():
    with pytest.raises(ValueError, match="at most 26"):
        rb.Item("q", "d", "subjective", "Q?", tuple(f"o{i}" for i in range(27)))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mapping": ["question"]}, r"mapping must be a dict"),
        ({"mapping": {"quest": "q"}}, r"unknown field 'quest'"),
        ({"mapping": {"question": 3}}, r"mapping 'question' must name a column"),
        ({"mapping": {"options": ["A", 2]}}, r"mapping 'options' must name a column"),
        ({"dataset_type": 1}, r"dataset_type must be text, got 1"),
    ],
)
def test_bad_load_items_arguments(tmp_path, kwargs, message):
    path = write(tmp_path / "a.jsonl", line())
    with pytest.raises(ItemError, match=message):
        rb.load_items(path, **kwargs)
