"""Property tests (issue 17): the analysis and its report, on any small long table, give a
report or one of the project's errors in one line, never another exception; and what they write
holds no control character, terminal escape or live markup from the table.

The tables come from ``tests/helpers/hostile_tables.py``, which ``bench/fuzz.py --targets analysis``
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
import pytest
from helpers.hostile_tables import (
    DrawChoices,
    analysis_options,
    hostile_table,
    unsafe_output,
    write_hostile,
)
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from rich.console import Console

from analyses.synthetic import DEFAULT_DATASETS, synthetic_table
from robustness.commands.analyze import analyze_table
from robustness.core.errors import AnalysisError, RobustnessError

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
            **analysis_options(choices),
        )
    except RobustnessError as exc:
        message = str(exc)
        assert message and "\n" not in message, message
        event(f"clean {type(exc).__name__}")
        return
    event("report written")
    assert result.n_rows == len(table)
    assert unsafe_output(paths, console.getvalue()) is None


@pytest.mark.slow  # 30 analyses with reports: about 20 s, run by `make test`, not test-fast
@ANALYSIS
@given(st.data())
def test_any_small_table_gives_a_report_or_one_clean_error(data):
    choices = DrawChoices(data)
    table = hostile_table(choices)
    with tempfile.TemporaryDirectory() as tmp:
        run_analysis(table, Path(tmp), choices)


# Regression tests: what the fuzz found, each from the input that failed.


def analyse(table: pd.DataFrame, folder: Path, **options):
    path = folder / "table.csv"
    table.to_csv(path, index=False)
    console = Console(file=io.StringIO())
    return analyze_table(path, folder / "out", console=console, n_boot=20, **options)


@pytest.mark.parametrize(
    "formula",
    ["", "agree ~ " + "(" * 60 + "model" + ")" * 60, "agree ~ model + <script>"],
)
def test_a_bad_formula_is_one_analysis_error(tmp_path, formula):
    """``FormulaError`` was a plain ValueError: ``--formula ''`` ended in a traceback."""
    table = synthetic_table(models=1, n_items=3, n_variants=2, seed=0)
    with pytest.raises(AnalysisError, match=r"^formula ") as caught:
        analyse(table, tmp_path, formula=formula)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("min_items", [0, -3, 2.5, True])
def test_min_items_below_one_is_one_analysis_error(tmp_path, min_items):
    """``min_items=0`` reached Cochran's Q with no item (``zero-size array to reduction``)."""
    table = synthetic_table(models=1, n_items=3, n_variants=2, seed=0)
    with pytest.raises(AnalysisError, match=r"^min_items must be a whole number"):
        analyse(table, tmp_path, min_items=min_items)


@pytest.mark.parametrize("n", [1, 2])
def test_a_correlation_over_one_or_two_items_is_not_computed(tmp_path, n):
    """``min_items=1`` with one item per model made ``scipy.stats.pearsonr`` raise ("x and y
    must have length at least 2"); two items gave r = +-1 and a test with no freedom."""
    datasets = (DEFAULT_DATASETS[0], DEFAULT_DATASETS[2])[:n]
    table = synthetic_table(models=2, n_items=1, datasets=datasets, n_variants=2, seed=4)
    result, paths = analyse(table, tmp_path, min_items=1)
    conf = result.confidence_sensitivity
    assert len(conf) == 2 and conf["r"].isna().all()
    assert (conf["note"] == f"not computed: {n} items (at least 3 needed)").all()
    assert paths["html"].exists()
