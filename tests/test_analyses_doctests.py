"""Every example in the analyses (and analyze pipeline) docstrings runs and gives what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import analyses
import robustness.analysis

MODULES = sorted(m.name for m in pkgutil.iter_modules(analyses.__path__, "analyses."))
#: The analyze pipeline moved to robustness/analysis/ (issue 26); its examples still run here.
PIPELINE = sorted(
    m.name for m in pkgutil.iter_modules(robustness.analysis.__path__, "robustness.analysis.")
)


@pytest.mark.parametrize("name", ["analyses", *MODULES, "robustness.analysis", *PIPELINE])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
