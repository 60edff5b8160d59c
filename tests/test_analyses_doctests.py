"""Every example in the analyses docstrings runs and gives what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import analyses

MODULES = sorted(m.name for m in pkgutil.iter_modules(analyses.__path__, "analyses."))


@pytest.mark.parametrize("name", ["analyses", *MODULES])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
