"""Checks on the bundled demo items in robustness/data (the project's own text).

Read straight from the JSONL files (not through the item loader) so that these checks
hold for the files themselves: counts, schema, distinct options, gold ranges, gold
position balance, response scales, and options that survive option reordering.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from importlib import resources

import pytest

KEYS = {"dataset", "dataset_type", "item_id", "question", "options", "answer", "scale", "meta"}

AGREE4 = ("Strongly disagree", "Disagree", "Agree", "Strongly agree")
AGREE5 = ("Strongly disagree", "Disagree", "Neither agree nor disagree", "Agree", "Strongly agree")
IMPORTANCE4 = (
    "Not at all important",
    "Slightly important",
    "Moderately important",
    "Very important",
)
FREQUENCY5 = ("Never", "Rarely", "Sometimes", "Often", "Always")
SCALES = {AGREE4: "agree4", AGREE5: "agree5", IMPORTANCE4: "importance4", FREQUENCY5: "frequency5"}

# Options that stop meaning the same thing once the options are reordered or relabelled.
POSITIONAL = re.compile(
    r"\b(all|none|both|neither) of (the|these|those) (above|below|options|answers)\b"
    r"|\bboth [a-e1-5] and [a-e1-5]\b|\b(above|below)\b",
    re.IGNORECASE,
)
# An option text must not start with something a parser could take for a label.
LABEL_PREFIX = re.compile(r"^\s*[(\[]?\s*([A-Ea-e1-5]|i{1,3}|iv|v)\s*[.):\]]\s*")


def _load(name: str) -> list[dict]:
    path = resources.files("robustness") / "data" / name
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        assert line.strip(), f"{name}:{n} is blank"
        rows.append(json.loads(line))
    return rows


@pytest.fixture(scope="module")
def objective() -> list[dict]:
    return _load("demo_objective.jsonl")


@pytest.fixture(scope="module")
def subjective() -> list[dict]:
    return _load("demo_subjective.jsonl")


def _schema_problems(rows: list[dict], dataset_type: str) -> list[str]:
    problems = []
    for row in rows:
        where = row.get("item_id", "?")
        if set(row) != KEYS:
            problems.append(f"{where}: keys {sorted(row)}")
            continue
        if row["dataset_type"] != dataset_type:
            problems.append(f"{where}: dataset_type {row['dataset_type']!r}")
        if not (isinstance(row["question"], str) and row["question"].strip()):
            problems.append(f"{where}: empty question")
        if not (isinstance(row["dataset"], str) and row["dataset"].startswith("demo_")):
            problems.append(f"{where}: dataset {row['dataset']!r}")
        if not isinstance(row["meta"], dict):
            problems.append(f"{where}: meta is not an object")
        opts = row["options"]
        if not (isinstance(opts, list) and all(isinstance(o, str) and o.strip() for o in opts)):
            problems.append(f"{where}: options must be non-empty strings")
            continue
        if len({o.strip().casefold() for o in opts}) != len(opts):
            problems.append(f"{where}: duplicate options {opts}")
        for o in opts:
            if o != o.strip() or "  " in o or "\n" in o:
                problems.append(f"{where}: stray whitespace in option {o!r}")
            if POSITIONAL.search(o):
                problems.append(f"{where}: positional option {o!r}")
            if LABEL_PREFIX.match(o):
                problems.append(f"{where}: label-like prefix in option {o!r}")
    return problems


def test_counts(objective: list[dict], subjective: list[dict]) -> None:
    assert len(objective) >= 48
    assert len(subjective) >= 48


def test_item_ids_unique_across_both_files(objective: list[dict], subjective: list[dict]) -> None:
    ids = Counter(row["item_id"] for row in objective + subjective)
    assert [i for i, n in ids.items() if n > 1] == []


def test_objective_schema(objective: list[dict]) -> None:
    assert _schema_problems(objective, "objective") == []


def test_subjective_schema(subjective: list[dict]) -> None:
    assert _schema_problems(subjective, "subjective") == []


def test_objective_options_and_gold(objective: list[dict]) -> None:
    sizes = Counter(len(row["options"]) for row in objective)
    assert set(sizes) == {4, 5}, sizes
    assert min(sizes.values()) >= 10, "mix 4- and 5-option items"
    for row in objective:
        assert row["scale"] == "nominal", row["item_id"]
        gold = row["answer"]
        assert isinstance(gold, int) and not isinstance(gold, bool), row["item_id"]
        assert 0 <= gold < len(row["options"]), row["item_id"]


def test_objective_subjects_and_datasets(objective: list[dict]) -> None:
    subjects = Counter(row["meta"].get("subject") for row in objective)
    assert None not in subjects
    assert len(subjects) >= 6, subjects
    assert len({row["dataset"] for row in objective}) >= 2


def test_gold_position_balance(objective: list[dict]) -> None:
    """Within each option count, no position holds the gold answer much more often than another.

    A model that always answers the first (or last) label must not score well.
    """
    for size in (4, 5):
        group = [row["answer"] for row in objective if len(row["options"]) == size]
        counts = Counter(group)
        per_position = [counts.get(p, 0) for p in range(size)]
        assert min(per_position) >= 1, (size, per_position)
        assert max(per_position) - min(per_position) <= 2, (size, per_position)
    overall = Counter(row["answer"] for row in objective)
    assert max(overall.values()) / len(objective) <= 0.3, overall


def test_subjective_scales(subjective: list[dict]) -> None:
    seen: Counter[str] = Counter()
    for row in subjective:
        opts = tuple(row["options"])
        assert opts in SCALES, f"{row['item_id']}: unknown or misordered scale {opts}"
        assert row["answer"] is None, row["item_id"]
        assert row["scale"] == "ordinal", row["item_id"]
        assert row["meta"].get("topic"), row["item_id"]
        assert row["meta"].get("response_scale") == SCALES[opts], row["item_id"]
        seen[SCALES[opts]] += 1
    assert seen["agree4"] >= 12 and seen["agree5"] >= 12, seen
    assert seen["importance4"] >= 6 and seen["frequency5"] >= 6, seen
    assert len({row["dataset"] for row in subjective}) >= 2


def test_statements_are_plain_declaratives(subjective: list[dict]) -> None:
    """Agree-scale statements are negated later as "It is not the case that <statement>".

    So each must be one declarative sentence: capitalised, ending in a full stop, with no
    question mark, not opening with the pronoun "I" or a proper noun that lower-casing
    would spoil, and keyed +1 or -1.
    """
    statements = [row for row in subjective if SCALES[tuple(row["options"])].startswith("agree")]
    assert len(statements) >= 24
    for row in statements:
        text = row["question"]
        assert row["meta"].get("keying") in (1, -1), row["item_id"]
        assert text[0].isupper() and text.endswith("."), text
        assert text.count(".") == 1 and "?" not in text and "!" not in text, text
        first = text.split()[0]
        assert first not in {"I", "I'm", "Please", "Do", "Don't"}, text
    keyings = Counter(row["meta"]["keying"] for row in statements)
    assert keyings[1] >= 6 and keyings[-1] >= 6, keyings


def test_other_ordinal_items_are_questions(subjective: list[dict]) -> None:
    others = [row for row in subjective if not SCALES[tuple(row["options"])].startswith("agree")]
    for row in others:
        assert row["question"].endswith("?"), row["item_id"]
