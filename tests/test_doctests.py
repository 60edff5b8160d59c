"""Every example in the docstrings of ``robustness/`` and ``perturbations/`` runs and gives what
it shows (``analyses/`` has its own file, ``test_analyses_doctests.py``).

Examples that need a real model are marked ``# doctest: +SKIP`` in their docstring, with the
reason in the sentence before them. A module whose optional backend is not installed (vLLM,
Ray) is skipped with the import error as the reason.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import perturbations
import robustness


def _modules(package) -> list[str]:
    found = pkgutil.walk_packages(package.__path__, package.__name__ + ".")
    return [package.__name__, *sorted(m.name for m in found)]


MODULES = _modules(robustness) + _modules(perturbations)


def test_the_examples_are_found():
    finder = doctest.DocTestFinder()
    names = {
        "robustness.core.seeding",
        "robustness.core.names",
        "robustness.core.table",
        "perturbations",
    }
    for name in names:
        tests = finder.find(importlib.import_module(name))
        assert sum(len(t.examples) for t in tests) > 0, name


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ImportError as err:  # an optional extra (vllm, ray) that is not installed
        pytest.skip(f"{name} needs an optional package: {err}")
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} example(s) of {name} failed (see above)"
