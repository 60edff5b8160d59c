"""Property tests (issue 17): any item file, study or long table gives a result or one of the
project's errors, never another exception. bench/fuzz.py runs the larger seeded campaign."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robustness as rb
from robustness.core.errors import ItemError, StudyError
from robustness.study import study_from_dict

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        ["objective", "subjective", "ordinal", "A", "-7", "[1, 2]", "\x1b[2J", "\u2028"]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)
FIELDS = ["item_id", "dataset", "dataset_type", "question", "options", "answer", "scale", "meta"]
GOOD = {
    "question": "Which one?",
    "options": ["red", "green", "blue"],
    "answer": 2,
    "dataset_type": "objective",
}


@st.composite
def records(draw):
    record = dict(GOOD)
    for key in draw(st.lists(st.sampled_from([*FIELDS, "other"]), max_size=3, unique=True)):
        if draw(st.booleans()):
            record[key] = draw(VALUES)
        else:
            record.pop(key, None)
    return record


def load(path: Path) -> None:
    try:
        items = rb.load_items(path)
    except ItemError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
    else:
        for item in items:
            assert 2 <= len(item.options) <= 26 and isinstance(item.question, str)


@SETTINGS
@given(st.lists(records(), min_size=1, max_size=3), st.sampled_from(["jsonl", "json", "csv"]))
def test_any_item_file_loads_or_gives_one_item_error(recs, kind):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"items.{kind}"
        if kind == "jsonl":
            path.write_text("\n".join(json.dumps(r) for r in recs), encoding="utf-8")
        elif kind == "json":
            path.write_text(json.dumps(recs), encoding="utf-8")
        else:
            header = sorted({k for r in recs for k in r})
            rows = [",".join(header)]
            for r in recs:
                cells = [json.dumps(r[h]) if h in r else "" for h in header]
                rows.append(",".join('"' + c.replace('"', '""') + '"' for c in cells))
            path.write_text("\n".join(rows), encoding="utf-8")
        load(path)


@SETTINGS
@given(st.binary(max_size=300), st.sampled_from(["jsonl", "json", "csv", "tsv", "parquet"]))
def test_any_bytes_load_or_give_one_item_error(data, kind):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"items.{kind}"
        path.write_bytes(data)
        load(path)


SECTION_KEYS = {
    "study": ["name", "seed", "items", "items_per_dataset", "families", "n_variants", "shots"],
    "output": ["table", "cache"],
    "perturbations": ["spelling_noise", "framing", "option_order"],
}


@st.composite
def studies(draw):
    data: dict = {}
    for section, keys in SECTION_KEYS.items():
        if draw(st.booleans()):
            chosen = draw(st.lists(st.sampled_from([*keys, "typo"]), max_size=3, unique=True))
            data[section] = {k: draw(VALUES) for k in chosen}
    if draw(st.booleans()):
        data["models"] = draw(
            st.lists(
                st.dictionaries(
                    st.sampled_from(["name", "mode", "batch_size", "dtype", "chat", "options"]),
                    VALUES,
                    max_size=3,
                )
                | VALUES,
                max_size=2,
            )
        )
    if draw(st.booleans()):
        data["items"] = draw(
            st.lists(
                st.dictionaries(st.sampled_from(["path", "mapping", "dataset_type"]), VALUES),
                max_size=2,
            )
            | VALUES
        )
    return data


@SETTINGS
@given(studies())
def test_any_study_gives_a_config_or_one_study_error(data):
    try:
        config = study_from_dict(data)
    except StudyError as exc:
        assert "\n" not in str(exc)
    else:
        assert 0 <= config.n_variants <= 1000 and all(isinstance(p, str) for p in config.items)
        for params in config.perturbations.values():
            assert all(not isinstance(v, float) or math.isfinite(v) for v in params.values())
        json.dumps(config.to_dict())


@SETTINGS
@given(st.text(max_size=300))
def test_any_study_text_gives_a_config_or_one_study_error(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "study.toml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            rb.load_study(path)
        except StudyError as exc:
            assert "\n" not in str(exc)


@pytest.mark.parametrize("n", [1000])
def test_the_largest_study_is_bounded(n):
    config = study_from_dict({"study": {"n_variants": n, "families": ["formatting"]}})
    variants = rb.perturb(rb.demo_items()[:1], config.families, n=config.n_variants)
    assert len(variants) == n + 1
