"""Public names of a package that load on first use (PEP 562), for ``robustness`` and ``analyses``.

A package lists each public name once, as the import that defines it inside an
``if TYPE_CHECKING:`` block (so type checkers and editors see the real objects), and calls
:func:`lazy_exports` at the end of its ``__init__``::

    if TYPE_CHECKING:
        from analyses.gee import GEEResult, gee

    lazy_exports(__name__)

:func:`exports_of` reads that block from the package's source (``ast``, no import), so the
name -> module map and ``__all__`` are derived from the one list and never drift from it.
``import analyses`` then imports none of those modules; ``analyses.gee`` imports
``analyses.gee`` (the module) the first time it is read and keeps the value. ``dir()`` lists every
public name, and a name that is not one raises ``AttributeError`` naming the package and the
closest public name. Importing a submodule whose name is also a public name (``analyses.gee``
defines the function ``gee``) never hides the function: the package attribute stays the
function, as when the package imported its names eagerly. Nothing else in the process changes.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import sys
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["LazyPackage", "exports_of", "lazy_exports"]

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
        # ``sub`` is also the public name that module defines, keep the public object. When
        # ``sub`` is itself a lazy package that has not loaded that name yet, bind nothing:
        # the name loads on first use, and importing ``pkg.sub.leaf`` loads no more than it.
        if isinstance(value, types.ModuleType) and _exports(self).get(name) == value.__name__:
            if name not in vars(value):
                vars(self).pop(name, None)
                return
            value = vars(value)[name]
        super().__setattr__(name, value)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def exports_of(source: str | Path) -> dict[str, str]:
    """Public name -> defining module, read from the ``if TYPE_CHECKING:`` imports of a file.

    Parameters
    ----------
    source
        The path of a package's ``__init__.py``.

    Returns
    -------
    dict
        Each name the block imports (its ``as`` name when it has one) -> the module named in
        its ``from ... import``, in the order written.

    Raises
    ------
    ValueError
        When the file has no such block, the block holds anything but absolute
        ``from ... import`` statements, or a name is imported twice.
    """
    path = Path(source)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    blocks = [n for n in tree.body if isinstance(n, ast.If) and _is_type_checking(n.test)]
    if len(blocks) != 1:
        raise ValueError(f"{path}: expected one `if TYPE_CHECKING:` block of public imports.")
    found: dict[str, str] = {}
    for node in blocks[0].body:
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            raise ValueError(f"{path}, line {node.lineno}: only `from module import name` here.")
        for alias in node.names:
            name = alias.asname or alias.name
            if name in found:
                raise ValueError(f"{path}, line {node.lineno}: {name!r} is imported twice.")
            found[name] = node.module
    return found


def lazy_exports(
    package: str, exports: Mapping[str, str] | None = None, *, also: Iterable[str] = ()
) -> None:
    """Make the public names of the imported package ``package`` load on first use.

    Parameters
    ----------
    package
        The package's ``__name__`` (it must be in ``sys.modules``, as it is while its
        ``__init__`` runs).
    exports
        Public name -> the module that defines it under that name; None (the default) reads
        them from the package's ``if TYPE_CHECKING:`` block with :func:`exports_of`.
    also
        Names the package defines itself (``__version__``), listed in ``__all__`` too.
    """
    module = sys.modules[package]
    if exports is None:
        if module.__file__ is None:
            raise ValueError(f"package {package!r} has no source file to read its exports from.")
        exports = exports_of(module.__file__)
    module.__class__ = LazyPackage
    vars(module)[_KEY] = dict(exports)
    vars(module)["__all__"] = sorted({*exports, *also})
