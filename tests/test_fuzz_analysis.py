"""Property tests (issue 17): the analysis and its report, on any small long table, give a
report or one of the project's errors in one line, never another exception; and what they write
holds no control character, terminal escape or live markup from the table.

The tables come from ``tests/hostile_tables.py``, which ``bench/fuzz.py --targets analysis``
runs as a larger seeded campaign. Each example runs the entry point of ``robustness analyze``
(:func:`robustness.commands.analyze.analyze_table`: read the file, analyse, print the console
summary, write the report) on a table written to disk.
"""

from __future__ import annotations

import io
import tempfile
from datetime import timedelta
from pathlib import Path

import pandas as pd
from hostile_tables import DrawChoices, hostile_table, unsafe_output, write_hostile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from robustness.commands.analyze import analyze_table
from robustness.errors import RobustnessError, TableError

ANALYSIS = settings(
    max_examples=30,
    derandomize=True,
    database=None,
    deadline=timedelta(seconds=90),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def run_analysis(table: pd.DataFrame, folder: Path, choices: DrawChoices) -> None:
    """Write ``table``, run ``robustness analyze`` on it; check the outcome and every output."""
    path = write_hostile(table, folder, choices)
    out = folder / "out"
    console = io.StringIO()
    try:
        result, paths = analyze_table(
            path,
            out,
            console=Console(file=console, width=120),
            n_boot=20,
            compare="kamal2026" if choices.chance(0.3) else None,
        )
    except RobustnessError as exc:
        message = str(exc)
        assert message and "\n" not in message, message
        return
    assert result.n_rows == len(table)
    assert unsafe_output(paths, console.getvalue()) is None


@ANALYSIS
@given(st.data())
def test_any_small_table_gives_a_report_or_one_clean_error(data):
    choices = DrawChoices(data)
    table = hostile_table(choices)
    with tempfile.TemporaryDirectory() as tmp:
        run_analysis(table, Path(tmp), choices)


def test_an_empty_table_is_one_table_error(tmp_path):
    empty = pd.DataFrame(columns=["model", "dataset", "dataset_type", "item_id", "category"])
    path = tmp_path / "empty.csv"
    empty.to_csv(path, index=False)
    try:
        analyze_table(path, tmp_path / "out", console=Console(file=io.StringIO()), n_boot=20)
    except TableError as exc:
        assert "\n" not in str(exc)
    else:
        raise AssertionError("an empty table was analysed")
