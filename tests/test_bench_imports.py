"""Every name a bench script imports from the project exists, so a renamed module or function
breaks this test rather than a benchmark that runs rarely (``bench/gpu_check.py`` runs only when
a GPU is lent). The scripts import lazily inside functions, so the test reads them with ``ast``."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("robustness", "analyses", "perturbations")
SCRIPTS = sorted((ROOT / "bench").glob("*.py"))


def project_imports(source: str) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of every import of a project module; name None for ``import m``."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in PROJECT:
                found += [(node.lineno, node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] in PROJECT
            ]
    return found


def missing_names(path: Path) -> list[str]:
    out = []
    for line, module, name in project_imports(path.read_text(encoding="utf-8")):
        try:
            imported = importlib.import_module(module)
        except ImportError as exc:
            out.append(f"{path.name}:{line}: module {module}: {exc}")
            continue
        if name is not None and not hasattr(imported, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                out.append(f"{path.name}:{line}: {module} has no name {name!r}")
    return out


def test_the_check_finds_a_missing_name(tmp_path: Path) -> None:
    script = tmp_path / "old.py"
    script.write_text("def main():\n    from robustness.runners.vllm import no_such_name\n")
    assert missing_names(script) == ["old.py:2: robustness.runners.vllm has no name 'no_such_name'"]


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_every_name_a_bench_script_imports_exists(script: Path) -> None:
    assert not missing_names(script)
