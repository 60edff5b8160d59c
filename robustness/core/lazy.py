"""Public names of a package that load on first use (PEP 562), for ``robustness`` and ``analyses``.

A package lists its public names and the module that defines each, then calls
:func:`lazy_exports` at the end of its ``__init__``::

    _EXPORTS = {"gee": "analyses.gee", ...}
    lazy_exports(__name__, _EXPORTS)

``import analyses`` then imports none of those modules; ``analyses.gee`` imports
``analyses.gee`` (the module) the first time it is read and keeps the value. ``dir()`` lists every
public name, and a name that is not one raises ``AttributeError`` naming the package and the
closest public name. Importing a submodule whose name is also a public name (``analyses.gee``
defines the function ``gee``) never hides the function: the package attribute stays the
function, as when the package imported its names eagerly. Nothing else in the process changes.
"""

from __future__ import annotations

import difflib
import importlib
import sys
import types
from collections.abc import Mapping
from typing import Any

__all__ = ["LazyPackage", "lazy_exports"]

#: The key under which a package's exports are kept in its ``__dict__``.
_KEY = "_lazy_exports"


def _exports(module: types.ModuleType) -> Mapping[str, str]:
    exports: Mapping[str, str] = vars(module).get(_KEY, {})
    return exports


class LazyPackage(types.ModuleType):
    """The module type of a package with lazy public names (see the module docstring)."""

    def __getattr__(self, name: str) -> Any:
        # Called only when the name is not (yet) in the package's namespace.
        module = _exports(self).get(name)
        if module is None:
            close = difflib.get_close_matches(name, list(_exports(self)), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else "."
            raise AttributeError(
                f"module {self.__name__!r} has no attribute {name!r}: it is not one of the "
                f"package's public names{hint}"
            )
        value = getattr(importlib.import_module(module), name)
        types.ModuleType.__setattr__(self, name, value)  # later lookups skip this method
        return value

    def __dir__(self) -> list[str]:
        return sorted({*vars(self), *_exports(self)} - {_KEY})

    def __setattr__(self, name: str, value: Any) -> None:
        # Importing ``pkg.sub`` binds the module ``sub`` as the package attribute ``sub``; where
        # ``sub`` is also the public name that module defines, keep the public object.
        if isinstance(value, types.ModuleType) and _exports(self).get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


def lazy_exports(package: str, exports: Mapping[str, str]) -> None:
    """Make the public names of the imported package ``package`` load on first use.

    Parameters
    ----------
    package
        The package's ``__name__`` (it must be in ``sys.modules``, as it is while its
        ``__init__`` runs).
    exports
        Public name -> the module that defines it under that name.
    """
    module = sys.modules[package]
    module.__class__ = LazyPackage
    vars(module)[_KEY] = dict(exports)
