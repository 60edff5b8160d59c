"""Issue 13's docstring convention over the whole analyses package.

Every function ``analyses`` exports carries the five numpydoc sections (Parameters, Returns,
Notes with the formula, References, Examples); every other function a submodule lists in
its ``__all__`` (plumbing: formatting, file writing, the GEE's internal steps), in the
subpackages too, carries at least Parameters and Returns.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import analyses

STATISTICS = ("Parameters", "Returns", "Notes", "References", "Examples")
PLUMBING = ("Parameters", "Returns")


def _sections(obj: object) -> set[str]:
    doc = inspect.getdoc(obj) or ""
    return {s for s in STATISTICS if f"\n{s}\n{'-' * len(s)}\n" in f"\n{doc}\n"}


def _exported_functions() -> list[str]:
    return [n for n in analyses.__all__ if inspect.isfunction(getattr(analyses, n))]


def _submodule_functions() -> list[str]:
    exported = {id(getattr(analyses, n)) for n in analyses.__all__}
    out = []
    for info in pkgutil.walk_packages(analyses.__path__, "analyses."):  # gee/, power/ too
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isfunction(obj) and id(obj) not in exported:
                out.append(f"{info.name}.{name}")
    return sorted(set(out))


def test_the_lists_are_not_empty():
    assert len(_exported_functions()) >= 40
    assert len(_submodule_functions()) >= 10


@pytest.mark.parametrize("name", _exported_functions())
def test_exported_function_has_every_section(name):
    missing = [s for s in STATISTICS if s not in _sections(getattr(analyses, name))]
    assert not missing, f"analyses.{name} lacks {', '.join(missing)}"


@pytest.mark.parametrize("qualified", _submodule_functions())
def test_submodule_function_has_parameters_and_returns(qualified):
    module, name = qualified.rsplit(".", 1)
    obj = getattr(importlib.import_module(module), name)
    missing = [s for s in PLUMBING if s not in _sections(obj)]
    assert not missing, f"{qualified} lacks {', '.join(missing)}"


def test_the_section_check_can_fail():
    def f(x):
        """Nothing.

        Parameters
        ----------
        x
            A value.
        """

    assert _sections(f) == {"Parameters"}
