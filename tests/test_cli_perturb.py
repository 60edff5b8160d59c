"""`robustness perturb`: the record schema, byte-identical reruns, parameters and errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from robustness.cli import app

RUNNER = CliRunner()
FAMILIES = "option_order,label_substitution,spelling_noise,formatting,logical_equivalence,framing"
KEYS = {
    "item_id",
    "dataset",
    "dataset_type",
    "category",
    "variant_id",
    "prompt",
    "labels",
    "options",
    "answer_map",
    "negated",
    "params",
}


def run(*args: str):
    result = RUNNER.invoke(app, ["perturb", *args])
    assert result.exit_code == 0, result.output
    return result


def test_records_have_the_documented_fields_and_maps(tmp_path):
    out = tmp_path / "v.jsonl"
    result = run("--families", FAMILIES, "--n", "2", "--out", str(out))
    assert "variants per family" in result.output and "logical_equivalence" in result.output
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert records and all(set(r) >= KEYS for r in records)
    for r in records:
        assert r["labels"] == list(r["answer_map"])
        assert sorted(r["answer_map"].values()) == list(range(len(r["options"])))
        for label, option in zip(r["labels"], r["options"], strict=True):
            assert label in r["prompt"] and option in r["prompt"]
    assert {r["category"] for r in records} == {"original", *FAMILIES.split(",")}
    negated = [r for r in records if r["negated"]]
    assert negated and all(r["category"] == "logical_equivalence" for r in negated)


def test_same_seed_same_bytes_through_the_console_script(tmp_path):
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    exe = Path(sys.executable).with_name("robustness")
    for path, seed in ((a, "1"), (b, "1"), (c, "2")):
        subprocess.run(
            [
                str(exe),
                "perturb",
                "--families",
                FAMILIES,
                "--n",
                "3",
                "--seed",
                seed,
                "--out",
                str(path),
            ],
            check=True,
            capture_output=True,
        )
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_family_parameters_from_the_command_line(tmp_path):
    out = tmp_path / "v.jsonl"
    run(
        "--families",
        "spelling_noise",
        "--n",
        "1",
        "--param",
        "spelling_noise.rate=0.5",
        "--out",
        str(out),
    )
    rates = {json.loads(line)["params"].get("rate") for line in out.read_text().splitlines()}
    assert rates == {None, 0.5}


def test_unknown_family_and_bad_parameter_are_one_clear_error(tmp_path):
    result = RUNNER.invoke(app, ["perturb", "--families", "option_order,typos"])
    assert result.exit_code != 0
    assert "unknown perturbation family 'typos'" in str(result.exception)
    result = RUNNER.invoke(app, ["perturb", "--families", "framing", "--param", "framing.x=1"])
    assert "has no parameter(s) x" in str(result.exception)
    result = RUNNER.invoke(app, ["perturb", "--param", "rate=1"])
    assert result.exit_code != 0 and "family.key=value" in result.output


def test_reads_item_files(tmp_path):
    items = tmp_path / "mine.jsonl"
    items.write_text(
        json.dumps(
            {
                "item_id": "m1",
                "dataset_type": "objective",
                "question": "Pick the even number.",
                "options": ["3", "8"],
                "answer": 1,
            }
        )
        + "\n"
    )
    out = tmp_path / "v.jsonl"
    run(str(items), "--families", "option_order", "--out", str(out))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["variant_id"] for r in records] == ["original/0", "option_order/0"]
    assert records[1]["answer_map"] == {"A": 1, "B": 0} and records[0]["dataset"] == "mine"
