"""The house's size rules (DEVELOPERS' guide, issue 26): no package module over 450 lines,
no function over 100 lines once its docstring is left out."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("robustness", "analyses", "perturbations")
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 100


def package_modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, lines of body without the docstring) of every function."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        first = body[0]
        is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
        if is_doc and isinstance(first.value.value, str):
            start = body[1].lineno if len(body) > 1 else (first.end_lineno or first.lineno) + 1
        else:
            start = first.lineno
        out.append((node.name, node.lineno, (node.end_lineno or start) - start + 1))
    return out


def test_the_rule_sees_a_long_function_and_skips_its_docstring() -> None:
    doc = '    """' + "\n".join(["x"] * 300) + '"""\n'
    short = "def f():\n" + doc + "    return 1\n"
    long = "def g():\n" + "".join(f"    a{k} = {k}\n" for k in range(101))
    assert function_lengths(short) == [("f", 1, 1)]
    assert function_lengths(long) == [("g", 1, 101)]


def test_the_packages_are_found() -> None:
    assert len(package_modules()) > 100


@pytest.mark.parametrize("rule", ["module", "function"])
def test_no_module_or_function_is_over_its_size(rule: str) -> None:
    too_big = []
    for path in package_modules():
        source = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        if rule == "module":
            n = len(source.splitlines())
            if n > MAX_MODULE_LINES:
                too_big.append(f"{name}: {n} lines")
            continue
        for func, line, n in function_lengths(source):
            if n > MAX_FUNCTION_LINES:
                too_big.append(f"{name}:{line} {func}: {n} lines")
    assert not too_big, "over the size rule:\n" + "\n".join(too_big)
