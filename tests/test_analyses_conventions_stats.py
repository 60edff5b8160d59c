"""Issue 13's conventions in the accuracy, spread, search, paired and PSS modules."""

from __future__ import annotations

import importlib
import inspect

import pytest

from analyses.synthetic import synthetic_table

MODULES = ["analyses.accuracy", "analyses.spread", "analyses.thompson", "analyses.paired"]
MODULES += ["analyses.cochran", "analyses.pss"]


@pytest.mark.parametrize("name", MODULES)
def test_public_names_are_declared_and_documented(name):
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    for public in module.__all__:
        obj = getattr(module, public)
        if not inspect.isfunction(obj):
            continue
        doc = inspect.getdoc(obj) or ""
        assert doc, f"{name}.{public} has no docstring"
        if public in {"check_invalid", "correct_outcome", "set_scores", "thin_note"}:
            continue  # helpers shared by the statistics, documented in one paragraph
        for section in ("Returns", "Notes", "References"):
            assert f"{section}\n---" in doc, f"{name}.{public} has no {section} section"


@pytest.mark.parametrize("name", MODULES)
def test_no_twin_functions(name):
    module = importlib.import_module(name)
    names = [n for n, o in vars(module).items() if inspect.isfunction(o) and o.__module__ == name]
    twins = [n for n in names if n.endswith(("_loaded", "_sets", "_frame")) or n == "drop_from"]
    twins = [n for n in twins if not n.startswith("_mcnemar_frame")]  # a private step, no twin
    assert not twins, f"{name} keeps twin functions {twins}"


def test_test_tables_say_dof_and_p_value():
    from analyses import cochran_q, mcnemar

    t = synthetic_table(models=2, n_items=12, seed=1)
    for out in (cochran_q(t), mcnemar(t)):
        assert {"dof", "p_value", "note"} <= set(out.columns)
        assert not {"df", "p_approx", "p_unc"} & set(out.columns)
