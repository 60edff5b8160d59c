"""Tables from the fuzz campaign of issue 17: every malformed table gives one TableError with
plain values, the toolkit's own CSV round trip validates, and writing never leaves a .tmp."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robustness.core.errors import TableError
from robustness.core.table import (
    ANALYSIS_COLUMNS,
    COLUMNS,
    read_table,
    table_warnings,
    validate,
    write_csv,
    write_parquet,
)
from tests.test_table import table


def deep(n: int) -> list:
    value: list = []
    for _ in range(n):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("answer", [np.int64(-7), 1, 1, 1], r"column 'answer', row 0 .*: -7 is negative"),
        ("shots", [np.inf, 0, 0, 0], r"column 'shots', row 0 .*: inf is not a finite number"),
        ("shots", [1e300, 0, 0, 0], r"1e\+300 is too large for an integer"),
        ("shots", [[1], 0, 0, 0], r"column 'shots', row 0 .*: \[1\] is not a number"),
        ("shots", [True, 0, 0, 0], r"True is a boolean, not a number"),
        ("model", [["m"], "m", "m", "m"], r"column 'model', row 0 .*: \['m'\] is not text"),
        ("model", [deep(5000), "m", "m", "m"], r"'model', row 0 .*: a nested list is not text"),
        ("raw_output", [{"a": 1}, "B", "B", "B"], r"column 'raw_output', .* is not text"),
        ("valid", [[True], True, True, True], r"column 'valid', .* is not a boolean"),
        ("valid", ["maybe", True, True, True], r"'maybe' is not a boolean"),
        ("params", ["[1, 2]", "{}", "{}", "{}"], r"column 'params', .* is not a JSON object"),
        ("params", ["[" * 5000 + "]" * 5000, "{}", "{}", "{}"], r"is not a JSON object"),
        ("params", [{"x": float("nan")}, "{}", "{}", "{}"], r"is not a JSON object"),
        ("option_probs", [[0.5, np.nan]] * 4, r"\[0\.5, nan\] is not a probability vector"),
        ("option_probs", [[[0.5], [0.5]]] * 4, r"is not a list of probabilities"),
        ("option_probs", [deep(3000)] * 4, r"is not a list of probabilities"),
        ("confidence", [np.inf, 0.5, 0.5, 0.5], r"column 'confidence', .* inf is not a finite"),
        ("latency_ms", ["fast", 1.0, 1.0, 1.0], r"'fast' is not a number"),
        ("raw_output", ["B", "\ud800", "B", "B"], r"row 1 .*'\\ud800' holds a lone surrogate"),
        ("shots", [10**400, 0, 0, 0], r"a number of 401 digits is too large for a number"),
    ],
)
def test_malformed_cells_give_one_plain_sentence(column, values, message):
    t = table().astype({column: object}) if column in table() else table()
    t[column] = pd.Series(values, dtype=object)
    if column == "option_probs":
        t["n_options"] = 2
    with pytest.raises(TableError, match=message) as info:
        validate(t)
    text = str(info.value)
    assert "\n" not in text and "np." not in text and "dtype" not in text and len(text) < 400


def test_a_deeply_nested_extra_column_is_named_before_pyarrow_sees_it(tmp_path):
    t = table()
    t["extra"] = pd.Series([deep(3000), [1], None, "x"], dtype=object)
    with pytest.raises(TableError, match=r"column 'extra', row 0 .*nested more than 32"):
        validate(t)
    with pytest.raises(TableError, match="nested more than 32"):
        write_parquet(t, tmp_path / "t.parquet", {})  # pyarrow would abort the process
    t["extra"] = pd.Series([deep(30), [1], None, "x"], dtype=object)
    assert len(validate(t)) == 4


def test_duplicated_and_non_text_column_names():
    t = table()
    twice = pd.concat([t, t[["model"]]], axis=1)
    with pytest.raises(TableError, match=r"column 'model' appears 2 times"):
        validate(twice)
    with pytest.raises(TableError, match=r"column name 3 is not text"):
        validate(t.rename(columns={"seed": 3}))


def test_pandas_to_csv_round_trip_of_our_own_table(tmp_path):
    path = tmp_path / "t.parquet"
    write_parquet(table(), path, {})
    ours = pd.read_parquet(path)  # option_probs come back as NumPy arrays
    ours.to_csv(tmp_path / "pandas.csv", index=False)
    assert "[0.1 0.7 0.1 0.1]" in (tmp_path / "pandas.csv").read_text()
    back = read_table(tmp_path / "pandas.csv", required=None)
    assert back["option_probs"].iloc[0] == pytest.approx([0.1, 0.7, 0.1, 0.1])
    write_csv(back, tmp_path / "ours.csv")
    assert len(read_table(tmp_path / "ours.csv", required=None)) == 4


def test_a_table_that_cannot_be_written_leaves_no_tmp(tmp_path):
    t = table()
    t["raw_output"] = pd.Series(["ok", "\ud800", "ok", "ok"], dtype=object)
    with pytest.raises(TableError, match=r"column 'raw_output', row 1 .*lone surrogate"):
        write_parquet(t, tmp_path / "t.parquet", {})
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TableError, match="lone surrogate"):
        write_csv(t, tmp_path / "t.csv")
    assert list(tmp_path.iterdir()) == []


def test_warning_when_there_are_no_original_rows():
    t = validate(table())
    assert table_warnings(t) == []
    only = t[t["category"] != "original"]
    (warning,) = table_warnings(only)
    assert "no 'original' rows" in warning
    two = pd.concat([t, t.assign(model="m2")[t["category"] != "original"]])
    assert table_warnings(two) == [
        "model 'm2' has no 'original' rows; its flip rates and POSIX cannot be computed."
    ]


# ----------------------------------------------------------------------------- property

CELLS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["original", "objective", "subjective", "choice", "{}", "[0.5, 0.5]", "1"]),
    st.lists(st.floats(min_value=0, max_value=1), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@st.composite
def tables(draw):
    names = draw(
        st.lists(
            st.sampled_from([*COLUMNS, "extra"]), min_size=1, max_size=len(COLUMNS), unique=True
        )
    )
    n = draw(st.integers(min_value=0, max_value=4))
    base = table(max(n, 1)).iloc[:n].reset_index(drop=True)
    out = {}
    for name in names:
        if name in base.columns and draw(st.booleans()):
            column = list(base[name])
            if n and draw(st.booleans()):
                column[draw(st.integers(0, n - 1))] = draw(CELLS)
            out[name] = pd.Series(column, dtype=object)
        else:
            out[name] = pd.Series([draw(CELLS) for _ in range(n)], dtype=object)
    return pd.DataFrame(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.booleans())
def test_validate_returns_a_table_or_one_table_error(df, analysis_only):
    try:
        out = validate(df, ANALYSIS_COLUMNS if analysis_only else [])
    except TableError as exc:
        text = str(exc)
        assert "\n" not in text and "np." not in text and len(text) < 600
    else:
        assert len(out) == len(df)
        table_warnings(out)
        if "option_probs" in out.columns:
            for probs in out["option_probs"]:
                assert probs is None or np.all(np.isfinite(probs))
        json.dumps(list(out.columns))
