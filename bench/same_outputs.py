"""Are the outputs byte-identical before and after a change? (issue 26's check of a refactor)

Runs the same commands in a git worktree of a base revision and in a worktree of the revision
under test (``--head``, default ``HEAD``; ``--head .`` uses this working tree as it is), with
the same Python (this checkout's ``.venv``; each tree is put first on ``PYTHONPATH``), and
compares every file they write byte for byte:

- ``robustness perturb`` on the bundled demo items and on each shared dataset
  (``../shared/data``), all families, ``--n 2`` and ``--n 5``, seed 0;
- ``robustness analyze`` (tables, figures, report.html, report.md) on each table given with
  ``--table`` (default: a synthetic two-model table written by ``analyses.synthetic_table``, and
  the committed GEE fixture table ``tests/fixtures/analyses/gee_table.csv``);
- with ``--demo TABLE`` (the ``demo.parquet`` a ``robustness demo`` run wrote), the demo's own
  analysis steps on it, as ``robustness demo`` calls them after its model run
  (``analyses.analyze`` with the eight families and the printed summary, ``write_report``, the
  headline), with the console text kept as ``console.txt`` and the headline as
  ``headline.txt``, and ``robustness analyze`` on the same table.

One output is normalised before the comparison: in ``console.txt`` the output folder (which
differs between the two runs) reads ``<out>``. The console is 400 columns wide, so the path
never wraps. Nothing else: the report carries no time stamp and no version (the versions in
the table's metadata are the table's, the same on both sides), and the figures are drawn by
the one matplotlib both trees import.

Usage::

    python bench/same_outputs.py --base main
    python bench/same_outputs.py --base 0bfe792 --table demo-out/demo.parquet
    python bench/same_outputs.py --base main --demo demo-out/demo.parquet --no-perturb-shared

Prints one line per output file that differs or exists on one side only, then a summary, and
exits 1 when anything differs. Nothing is timed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"

_SYNTHETIC = (
    "import analyses as an, sys; "
    "an.synthetic_table(models=2, n_items=12, seed=3).to_parquet(sys.argv[1])"
)


#: The analysis half of ``robustness demo`` (robustness/commands/demo.py) on a table it wrote;
#: ``analyses.analyze`` is the public name in every revision (moved to robustness/analysis/).
_DEMO_ANALYSIS = """
import sys
from pathlib import Path
from rich.console import Console
import analyses as an
from robustness.core.names import FAMILY_ORDER
from robustness.core.table import read_metadata, read_table
from robustness.report import headline, write_report
path, out = Path(sys.argv[1]), Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
with open(out / "console.txt", "w", encoding="utf-8") as text:
    console = Console(file=text, width=400, color_system=None)
    result = an.analyze(read_table(path), out, console=console, families=list(FAMILY_ORDER))
write_report(result, out, read_metadata(path))
# the one line that names the output folder, which differs between the two runs
said = (out / "console.txt").read_text(encoding="utf-8")
(out / "console.txt").write_text(said.replace(str(out), "<out>"), encoding="utf-8")
(out / "headline.txt").write_text("\\n".join(headline(result).lines()), encoding="utf-8")
"""


def _run(tree: Path, args: list[str], env: dict[str, str]) -> None:
    """One command of the toolkit, imported from ``tree`` (not the installed copy)."""
    done = subprocess.run(
        [sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {' '.join(args)} failed:\n{done.stderr[-3000:]}")


def _outputs(
    tree: Path, out: Path, tables: list[Path], demo: Path | None, shared: bool, perturb: bool
) -> None:
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg"}
    cli = ["-c", "from robustness.cli import main; main()"]
    sources = [("demo", [])] if perturb else []
    if shared and perturb:
        sources += [(p.stem, [str(p)]) for p in sorted(SHARED.glob("*.jsonl"))]
    for name, paths in sources:
        for n in (2, 5):
            target = out / "variants" / f"{name}-n{n}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            _run(tree, [*cli, "perturb", *paths, "--n", str(n), "--out", str(target)], env)
    for k, table in enumerate(tables):
        _run(tree, [*cli, "analyze", str(table), "--out", str(out / f"analysis-{k}")], env)
    if demo is not None:
        _run(tree, ["-c", _DEMO_ANALYSIS, str(demo), str(out / "demo-analysis")], env)
        _run(tree, [*cli, "analyze", str(demo), "--out", str(out / "demo-analyze")], env)


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="git revision to compare with")
    parser.add_argument("--head", default="HEAD", help="revision under test ('.': this tree)")
    parser.add_argument("--table", action="append", type=Path, help="table(s) to analyse")
    parser.add_argument("--demo", type=Path, help="a demo.parquet: the demo's analysis on it")
    parser.add_argument(
        "--no-perturb-shared",
        dest="shared",
        action="store_false",
        help="perturb the bundled demo items only, not every ../shared/data file",
    )
    parser.add_argument(
        "--no-perturb", dest="perturb", action="store_false", help="compare analyses only"
    )
    args = parser.parse_args()
    demo = args.demo.resolve() if args.demo else None
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tables = [p.resolve() for p in args.table or []]
        if not tables and demo is None:  # with --demo alone, only the demo table is analysed
            synthetic = work / "synthetic.parquet"
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            _run(REPO, ["-c", _SYNTHETIC, str(synthetic)], env)
            tables = [synthetic, REPO / "tests" / "fixtures" / "analyses" / "gee_table.csv"]
        base, head = work / "base-tree", work / "head-tree"
        trees = [(base, args.base)] + ([] if args.head == "." else [(head, args.head)])
        for tree, rev in trees:
            subprocess.run(
                ["git", "worktree", "add", "--detach", "-q", str(tree), rev], cwd=REPO, check=True
            )
        try:
            _outputs(base, work / "base", tables, demo, args.shared, args.perturb)
            _outputs(
                REPO if args.head == "." else head,
                work / "head",
                tables,
                demo,
                args.shared,
                args.perturb,
            )
        finally:
            for tree, _ in trees:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO)
        before, after = _digests(work / "base"), _digests(work / "head")
    differ = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    only = sorted(before.keys() ^ after.keys())
    for name in differ:
        print(f"differs: {name}")
    for name in only:
        print(f"only {'before' if name in before else 'after'}: {name}")
    same = len(before.keys() & after.keys()) - len(differ)
    total = len(before.keys() | after.keys())
    print(f"{same} of {total} files of {args.head} byte-identical to {args.base}")
    return 1 if differ or only else 0


if __name__ == "__main__":
    sys.exit(main())
