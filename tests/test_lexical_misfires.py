"""Sentences outside the items where a lexicon entry broke meaning or grammar.

Each row of ``tests/fixtures/lexical_misfires.jsonl`` is one case found by a review of the
lexicon (docs/lexical.md, "Reviews"): ``text``, a sentence; ``form``, the lexicon form the
case is about; ``must_not``, a text one substitution must not make of it (the misfire), or
null; ``must``, a text one substitution must still make (the entry's intended use), or null;
``pass``, the review the row came from; ``why``, the reviewer's reason, or null.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from perturbations.lexical_substitution import Lexicon, default_lexicon, find_slots, substitute

FIXTURE = Path(__file__).parent / "fixtures" / "lexical_misfires.jsonl"
FIELDS = {"pass", "text", "form", "must_not", "must", "why"}
ROWS = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def changes(text: str, lexicon: Lexicon | None = None) -> set[str]:
    """Every text that one slot of ``lexicon`` (default: the packaged one) makes of ``text``."""
    slots = find_slots(text, lexicon or default_lexicon(), frozenset())
    return {substitute(text, [(s, new)]) for s in slots for new in s.synonyms}


def row_holds(row: dict, lexicon: Lexicon | None = None) -> bool:
    """True when ``lexicon`` refuses the row's misfire and still makes its intended change."""
    made = changes(row["text"], lexicon)
    return row["must_not"] not in made and (row["must"] is None or row["must"] in made)


def _ids(rows: list[dict]) -> list[str]:
    seen: Counter[str] = Counter()
    ids = []
    for row in rows:
        ids.append(f"{row['pass']}-{seen[row['pass']]}")
        seen[row["pass"]] += 1
    return ids


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_entries_refuse_the_readings_they_would_break(row):
    assert row_holds(row), changes(row["text"])


def test_every_row_checks_something():
    assert len(ROWS) >= 150
    assert all(set(row) == FIELDS for row in ROWS)
    assert all(row["must_not"] or row["must"] for row in ROWS)  # a row with neither could not fail
