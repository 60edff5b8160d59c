"""The import layers (DESIGN.md, "Layout and layers"), read from the source with ``ast``.

1. core (``robustness/core/``: names, seeding, errors, items, prompts, variants, the table,
   the answer parser, text safety, the cache and the lazy package faces) imports nothing of the
   project above it;
2. ``perturbations/``, ``analyses/`` and ``robustness/runners/`` import only the core and
   themselves, never each other;
3. orchestration (every other ``robustness/`` module, the lazy face ``robustness/__init__``
   included) is the only place that imports across.

One rule names the core here and in mypy's strict list (``pyproject.toml``):
``robustness.core`` and every module below it. Imports deferred into functions count; imports
under ``if TYPE_CHECKING:`` do not (they never run). A second group of tests runs Python in a
subprocess and shows that importing the packages changes no environment variable and loads no
torch.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("robustness", "perturbations", "analyses")

#: The core: this package and every module below it (the one rule; see the module docstring).
CORE_PACKAGE = "robustness.core"
#: The middle layer: packages that may import only the core and themselves.
MIDDLE = ("perturbations", "analyses", "robustness.runners")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def is_core(module: str) -> bool:
    """Whether ``module`` is in the core: ``robustness.core`` or below it."""
    return module == CORE_PACKAGE or module.startswith(CORE_PACKAGE + ".")


CORE = frozenset(m for m in MODULES if is_core(m))


def layer(module: str) -> str:
    """``core``, the middle package's name, or ``orchestration``."""
    if is_core(module):
        return "core"
    for pkg in MIDDLE:
        if module == pkg or module.startswith(pkg + "."):
            return pkg
    return "orchestration"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST):
    """Every node that can run: the bodies of ``if TYPE_CHECKING:`` are left out."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def project_imports(module: str, path: Path) -> set[str]:
    """The project modules ``module`` imports at run time (top level or deferred)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            # `import a.b.c` runs a, a.b and a.b.c: the deepest project module is the one named
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name.split(".")[0] in PACKAGES:
                found.add(name)
    return found


def allowed(src: str, dst: str) -> bool:
    """Whether a module in layer ``src`` may import one in layer ``dst``."""
    if dst == "core" or src == "orchestration":
        return True
    return src == dst


def test_every_module_is_read():
    assert {
        "robustness.core.names",
        "robustness.core.seeding",
        "analyses.gee.wald",
        "perturbations.base",
    } <= set(MODULES)
    assert layer("robustness.runners.hf") == "robustness.runners"
    assert layer("robustness.run") == "orchestration"


def test_the_reader_sees_deferred_relative_and_submodule_imports(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import analyses.gee\n"
        "def f():\n    from robustness import runners\n    import perturbations.base\n"
        "from . import wald\n"
    )
    found = project_imports("analyses.gee.x", source)
    assert found == {"robustness.runners", "perturbations.base", "analyses.gee.wald"}


def test_import_layers():
    broken = []
    for module, path in MODULES.items():
        src = layer(module)
        for dst_module in sorted(project_imports(module, path)):
            dst = layer(dst_module)
            if not allowed(src, dst):
                broken.append(f"{module} ({src}) imports {dst_module} ({dst})")
    assert not broken, "imports against the layers:\n" + "\n".join(broken)


#: Inside analyses/ the folders stack too: gee/ stands on the root modules (the table input,
#: the prompt sets), power/ on gee/; no root module reaches up into either (the face excepted).
ANALYSES_FLOORS = {"analyses": 0, "analyses.gee": 1, "analyses.power": 2}


def analyses_floor(module: str) -> int:
    parts = module.split(".")
    return ANALYSES_FLOORS.get(".".join(parts[:2]), 0) if len(parts) > 2 else 0


def test_the_folders_of_analyses_import_downwards_only():
    broken = []
    for module, path in MODULES.items():
        if not module.startswith("analyses."):  # the face, analyses/__init__, is lazy
            continue
        for dst in sorted(project_imports(module, path)):
            if dst.startswith("analyses.") and analyses_floor(dst) > analyses_floor(module):
                broken.append(f"{module} imports {dst}")
    assert analyses_floor("analyses.power.solve") == 2 and analyses_floor("analyses.ranking") == 0
    assert not broken, "imports up a folder of analyses/:\n" + "\n".join(broken)


def test_mypy_names_the_core_by_the_same_rule():
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    strict = [
        o for o in config["tool"]["mypy"]["overrides"] if o.get("disallow_untyped_defs") is True
    ]
    assert len(strict) == 1
    modules = strict[0]["module"]
    assert {CORE_PACKAGE, CORE_PACKAGE + ".*"} <= set(modules)
    # no core module is named one by one beside the rule (two lists would drift apart)
    assert [m for m in modules if is_core(m) and not m.endswith("*")] == [CORE_PACKAGE]


def test_the_core_imports_no_model_library():
    heavy = {"torch", "transformers", "accelerate", "safetensors", "gguf", "vllm", "ray"}
    for module in sorted(CORE):
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        for node in _runtime_nodes(tree):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                roots = {node.module.split(".")[0]}
            else:
                continue
            assert not roots & heavy, f"{module} imports {roots & heavy}"


def _python(code: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


_REPORT = """
after = dict(os.environ)
changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
heavy = sorted(m for m in ("torch", "transformers", "vllm", "ray") if m in sys.modules)
print(json.dumps({"changed": changed, "heavy": heavy,
                  "project": sorted(m for m in sys.modules if m.split(".")[0] in PKGS)}))
"""


def test_importing_analyses_changes_nothing_and_loads_no_model_code():
    code = (
        "import json, os, sys\nPKGS = ('robustness', 'perturbations', 'analyses')\n"
        "before = dict(os.environ)\n"
        "import analyses, robustness\n"
        "analyses.gee, analyses.synthetic_table, analyses.analyze, robustness.read_table\n"
        + _REPORT
    )
    seen = _python(code)
    assert seen["changed"] == []
    assert seen["heavy"] == []
    assert not [m for m in seen["project"] if m.startswith(("perturbations", "robustness.run"))]


def test_import_analyses_wald_loads_only_what_it_needs():
    code = (
        "import json, os, sys\nPKGS = ('robustness', 'perturbations', 'analyses')\n"
        "before = dict(os.environ)\nimport analyses.gee.wald\n" + _REPORT
    )
    seen = _python(code)
    # the package's lazy exports (robustness.core.lazy, with the packages above it) and wald
    assert seen["project"] == [
        "analyses",
        "analyses.gee",
        "analyses.gee.wald",
        "robustness",
        "robustness.core",
        "robustness.core.lazy",
    ]


@pytest.mark.slow
def test_importing_every_module_changes_no_environment_variable():
    code = (
        "import importlib, json, os, pkgutil, sys\n"
        "PKGS = ('robustness', 'perturbations', 'analyses')\n"
        "before = dict(os.environ)\n"
        "for pkg in PKGS:\n"
        "    p = importlib.import_module(pkg)\n"
        "    for m in pkgutil.walk_packages(p.__path__, pkg + '.'):\n"
        "        try:\n            importlib.import_module(m.name)\n"
        "        except ImportError:\n            pass  # an optional backend not installed\n"
        + _REPORT
    )
    seen = _python(code)
    assert seen["changed"] == []
    assert "robustness.runners.hf" in seen["project"]


#: Calls that write a file or a folder (pandas, pathlib, os, shutil, matplotlib, json).
WRITERS = frozenset(
    {
        "to_csv",
        "to_parquet",
        "to_json",
        "to_latex",
        "to_excel",
        "write_text",
        "write_bytes",
        "mkdir",
        "makedirs",
        "replace",
        "rename",
        "savefig",
        "copyfile",
        "copy",
        "dump",
    }
)


def _writes_or_prints(path: Path) -> list[str]:
    """Where a module writes files or imports rich (docstrings and doctests are not code)."""
    found = []
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: import {a.name}"
                for a in node.names
                if a.name.split(".")[0] == "rich"
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rich":
            found.append(f"line {node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            # str.replace and DataFrame.replace are not os.replace: only os./shutil. count
            owner = getattr(getattr(func, "value", None), "id", "")
            if name in ("replace", "rename", "copy", "dump") and owner not in (
                "os",
                "shutil",
                "json",
            ):
                continue
            if name in WRITERS:
                found.append(f"line {node.lineno}: {name}(...)")
            elif name == "open" and isinstance(func, ast.Name):
                mode = node.args[1] if len(node.args) > 1 else None
                mode = mode or next((k.value for k in node.keywords if k.arg == "mode"), None)
                if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                    found.append(f"line {node.lineno}: open(..., {mode.value!r})")
    return found


def test_the_reader_sees_writes_and_rich(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "import os\n"
        "def f(df, p):\n    df.to_csv(p)\n    os.replace(p, p)\n    'a'.replace('a', 'b')\n"
        "    open(p, 'w')\n    open(p)\n"
        "def g():\n    from rich.table import Table\n"
    )
    assert sorted(x.split(":")[0] for x in _writes_or_prints(source)) == [
        "line 3",
        "line 4",
        "line 6",
        "line 9",
    ]


def test_no_statistics_module_writes_files_or_prints_with_rich():
    """analyses/ is statistics: DataFrames in and out; files and the console are orchestration."""
    found = {
        module: hits
        for module, path in MODULES.items()
        if layer(module) == "analyses" and (hits := _writes_or_prints(path))
    }
    assert not found, found


def test_the_statistics_face_names_orchestration_only_as_lazy_aliases():
    """``analyses.analyze`` (and ``analyze_path``, ``AnalysisResult``) stay where users find
    them, as names resolved on first use from robustness.analysis: the one place analyses/
    refers to orchestration, and never as an import that runs when analyses is imported."""
    from robustness.core.lazy import exports_of

    exports = exports_of(REPO / "analyses" / "__init__.py")
    across = {name: mod for name, mod in exports.items() if layer(mod) != "analyses"}
    assert across == {
        "analyze": "robustness.analysis.pipeline",
        "analyze_path": "robustness.analysis.pipeline",
        "AnalysisResult": "robustness.analysis.result",
    }
    seen = _python(
        "import json, os, sys\nPKGS = ('robustness', 'perturbations', 'analyses')\n"
        "before = dict(os.environ)\nimport analyses\nanalyses.gee\n" + _REPORT
    )
    assert not [m for m in seen["project"] if m.startswith("robustness.analysis")]
