"""A seeded fuzz campaign over everything that reads outside input; prints counts by outcome.

Run: ``.venv/bin/python bench/fuzz.py`` (options: ``--n`` inputs, default 10,000; ``--seed``;
``--targets`` a comma-separated subset; ``--show`` examples per failure kind).

Targets, each fed inputs made from a valid one by seeded mutations (hostile values in fields and
cells: wrong types, huge and non-finite numbers, deep nesting, control characters and terminal
escapes, lone surrogates, Unicode line breaks; and byte-level edits of the file's text):

items_jsonl, items_json, items_csv, items_parquet
    ``robustness.load_items`` on a mutated item file;
study
    ``robustness.load_study`` on a mutated study file, then the study's variants of one demo
    item (families without models: option_order, label_substitution, spelling_noise, formatting,
    framing, logical_equivalence, lexical_substitution);
table
    ``robustness.core.table.validate`` on a mutated long table;
formula
    ``analyses.gee.formula.parse_formula`` on a mutated formula;
answer
    ``robustness.core.answer_parser.parse_answer`` on a hostile raw output and label set;
analysis (only when named in ``--targets``: about a second an input)
    what ``robustness analyze`` runs (``robustness.commands.analyze.analyze_table``: read the
    file, analyse, print the console summary, write the report) on a small long table from
    ``tests/helpers/hostile_tables.py`` (the generator the property tests in
    ``tests/test_fuzz_analysis.py`` draw from): hostile names, dropped columns, non-finite
    numbers, empty groups, identical or invalid answers, written as CSV or Parquet.

Outcomes: ``ok`` (a result), ``clean`` (one of the project's errors: ``RobustnessError``, or
``FormulaError`` for the formula parser), ``value_error`` (a plain ``ValueError`` raised on
purpose outside the project's classes), ``traceback`` (any other exception), ``unsafe`` (a
report or console summary holding a control character or live markup from the table),
``slow`` (a result or clean error after more than 0.5 s) and ``hang`` (stopped after 20 s).
Target: 0 tracebacks, 0 unsafe reports and 0 hangs.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "tests"))

from helpers.hostile_tables import (  # noqa: E402
    RngChoices,
    analysis_options,
    hostile_table,
    unsafe_output,
    write_hostile,
)
from helpers.tables import one_item_table  # noqa: E402

from analyses.gee.formula import FormulaError, parse_formula  # noqa: E402
from robustness.core.errors import RobustnessError  # noqa: E402

HANG_SECONDS = 20.0
SLOW_SECONDS = 0.5
#: Targets whose inputs are whole analyses: slow only past this many seconds.
SLOW_SECONDS_FOR = {"analysis": 15.0}
CHEAP_FAMILIES = (
    "option_order",
    "label_substitution",
    "spelling_noise",
    "formatting",
    "framing",
    "logical_equivalence",
    "lexical_substitution",
)


class Hang(BaseException):
    """Raised by the alarm when one input runs past HANG_SECONDS."""


class Unsafe(Exception):
    """A report or console summary that let a control character or live markup through."""


def _alarm(signum: int, frame: Any) -> None:
    raise Hang


# ----------------------------------------------------------------------------- hostile values


def deep(n: int, kind: str = "list") -> Any:
    value: Any = 0
    for _ in range(n):
        value = [value] if kind == "list" else {"k": value}
    return value


STRINGS = [
    "",
    " ",
    "A",
    "-7",
    "1e999",
    "NaN",
    "nan",
    "true",
    "None",
    "[1, 2, 3]",
    '{"a": 1}',
    "\x1b[2J\x1b[H",
    "\x1b]0;title\x07",
    "a\u2028b",
    "a\u0085b",
    "a\x00b",
    "\ud800",
    "<script>alert(1)</script>",
    "| * _ ` # $ % & { } ~ ^ \\",
    "x" * 200_000,
    "9" * 5000,
    "Agree",
    "Strongly disagree",
    "A) B) C)",
]


def hostile(rng: np.random.Generator) -> Any:
    """One value from a pool of types and sizes that break naive code."""
    pick = int(rng.integers(0, 16))
    if pick == 0:
        return None
    if pick == 1:
        return bool(rng.integers(0, 2))
    if pick == 2:
        return int(rng.choice([0, 1, -1, -7, 26, 27, 2**31, 2**63, 2**64, -(2**63)]))
    if pick == 3:
        return 10 ** int(rng.integers(20, 5000))
    if pick == 4:
        return float(rng.choice([0.5, -0.0, 1e308, float("inf"), float("-inf"), float("nan")]))
    if pick in (5, 6, 7):
        return str(rng.choice(STRINGS))
    if pick == 8:
        return [hostile(rng) for _ in range(int(rng.integers(0, 4)))]
    if pick == 9:
        return {str(rng.choice(["text", "label", "a", ""])): hostile(rng)}
    if pick == 10:
        return deep(int(rng.choice([10, 40, 200, 3000])), str(rng.choice(["list", "dict"])))
    if pick == 11:
        return [f"o{i}" for i in range(int(rng.integers(0, 40)))]
    if pick == 12:
        return "".join(chr(int(c)) for c in rng.integers(0, 0x3000, size=int(rng.integers(1, 30))))
    if pick == 13:
        return ["same", "Same"]
    if pick == 14:
        return str(rng.choice(["objective", "subjective", "ordinal", "nominal", "opinion"]))
    return float(rng.normal())


def mutate_text(text: str, rng: np.random.Generator, edits: int = 3) -> str:
    """Byte-level edits: delete, duplicate, insert hostile snippets, swap brackets and quotes."""
    chars = list(text)
    for _ in range(edits):
        if not chars:
            chars = ["{"]
        pos = int(rng.integers(0, len(chars)))
        op = int(rng.integers(0, 5))
        if op == 0:
            del chars[pos : pos + int(rng.integers(1, 20))]
        elif op == 1:
            chars[pos:pos] = list(str(rng.choice(STRINGS))[:300])
        elif op == 2:
            chars[pos:pos] = list(str(rng.choice(['"', "{", "}", "[", "]", ",", ":", "\n", "="])))
        elif op == 3:
            chars[pos:pos] = chars[pos : pos + int(rng.integers(1, 50))]
        else:
            chars[pos] = str(rng.choice(["\\", "\r", "\t", "\x0b", "\ufeff", "'", "#"]))
    return "".join(chars)


# ----------------------------------------------------------------------------- inputs

BASE_ITEMS: list[dict[str, Any]] = [
    {
        "item_id": "q1",
        "dataset": "quiz",
        "dataset_type": "objective",
        "question": "What is 2 + 2?",
        "options": ["3", "4", "5", "22"],
        "answer": 1,
    },
    {
        "item_id": "s1",
        "dataset": "survey",
        "dataset_type": "subjective",
        "question": "Taxes should be lower.",
        "options": ["Strongly disagree", "Disagree", "Agree", "Strongly agree"],
        "answer": None,
        "scale": "ordinal",
    },
]
FIELDS = ["item_id", "dataset", "dataset_type", "question", "options", "answer", "scale", "meta"]


def mutated_records(rng: np.random.Generator) -> list[dict[str, Any]]:
    records = [dict(r) for r in BASE_ITEMS]
    for _ in range(int(rng.integers(1, 4))):
        record = records[int(rng.integers(0, len(records)))]
        key = str(rng.choice([*FIELDS, "extra"]))
        if rng.random() < 0.15:
            record.pop(key, None)
        else:
            record[key] = hostile(rng)
    return records


def as_text(value: Any) -> str:
    """``str(value)``, also for integers past Python's 4,300-digit limit and deep nesting."""
    if isinstance(value, int) and value.bit_length() > 10_000:
        return "9" * 5000
    try:
        return str(value)
    except (ValueError, RecursionError):
        return "[" * 3000 + "]" * 3000


def shallow(value: Any, limit: int = 20) -> Any:
    """``value``, or its JSON text when it nests deeper than ``limit`` levels."""
    depth, inner = 0, value
    while isinstance(inner, list | dict) and inner and depth <= limit:
        inner = inner[0] if isinstance(inner, list) else next(iter(inner.values()))
        depth += 1
    return dumps(value) if depth > limit else value


def dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):
        return "[" * 3000 + "]" * 3000  # what a value too deep for Python's writer looks like


def write_items(rng: np.random.Generator, folder: Path, kind: str) -> Path:
    records = mutated_records(rng)
    if kind == "jsonl":
        text = "\n".join(dumps(r) for r in records)
        if rng.random() < 0.4:
            text = mutate_text(text, rng)
        path = folder / "items.jsonl"
    elif kind == "json":
        text = "[" + ",".join(dumps(r) for r in records) + "]"
        if rng.random() < 0.4:
            text = mutate_text(text, rng)
        path = folder / "items.json"
    elif kind == "csv":
        header = ["item_id", "dataset", "dataset_type", "question", "options", "answer", "scale"]
        lines = [",".join(header)]
        for r in records:
            cells = []
            for h in header:
                v = r.get(h)
                cell = dumps(v) if isinstance(v, list | dict) else ("" if v is None else as_text(v))
                cells.append('"' + cell[:300_000].replace('"', '""') + '"')
            lines.append(",".join(cells))
        text = "\n".join(lines)
        if rng.random() < 0.4:
            text = mutate_text(text, rng)
        path = folder / "items.csv"
    else:
        path = folder / "items.parquet"
        try:  # pyarrow itself aborts (bad_alloc) writing lists nested thousands deep
            shallow_rows = [{k: shallow(r.get(k)) for k in FIELDS[:7]} for r in records]
            frame = pd.DataFrame(shallow_rows)
            frame.to_parquet(path)
        except Exception:  # a value pyarrow cannot store: write strings instead
            frame = pd.DataFrame(
                [{k: as_text(r.get(k))[:1000] for k in FIELDS[:7]} for r in records]
            )
            frame.to_parquet(path)
        if rng.random() < 0.3:
            data = bytearray(path.read_bytes())
            for _ in range(int(rng.integers(1, 10))):
                data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
            path.write_bytes(bytes(data))
        return path
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def toml_value(value: Any, depth: int = 0) -> str:
    if depth > 40:
        return "[" * 3000 + "]" * 3000
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if value.bit_length() < 64 else "9" * 30
    if isinstance(value, float):
        return {"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(str(value), repr(value))
    if value is None:
        return '""'
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v, depth + 1) for v in value[:5]) + "]"
    if isinstance(value, dict):
        inner = ", ".join(
            f"{json.dumps(str(k))} = {toml_value(v, depth + 1)}" for k, v in value.items()
        )
        return "{" + inner + "}"
    return json.dumps(as_text(value)[:2000])


STUDY_KEYS = {
    "study": ["name", "seed", "items", "items_per_dataset", "families", "n_variants", "shots"],
    "output": ["table", "cache"],
    "models": ["name", "backend", "model", "mode", "batch_size", "dtype", "chat", "max_new_tokens"],
    "perturbations.spelling_noise": ["rate", "min_length"],
    "perturbations.option_order": ["shuffle_ordinal"],
    "items": ["path", "mapping", "dataset", "dataset_type", "split"],
}


def study_text(rng: np.random.Generator) -> str:
    sections: dict[str, dict[str, Any]] = {
        "study": {"name": "fuzz", "families": list(CHEAP_FAMILIES[:3]), "n_variants": 2},
        "output": {"table": "out/fuzz.parquet"},
        "perturbations.spelling_noise": {"rate": 0.1},
        "models": {"name": "m"},
    }
    for _ in range(int(rng.integers(1, 4))):
        section = str(rng.choice(list(STUDY_KEYS)))
        key = str(rng.choice([*STUDY_KEYS[section], "typo"]))
        value = hostile(rng)
        if section == "study" and key == "families" and rng.random() < 0.5:
            value = list(rng.choice(CHEAP_FAMILIES, size=int(rng.integers(0, 4))))
        if section == "perturbations.spelling_noise" and rng.random() < 0.5:
            value = float(rng.uniform(0, 1)) if key == "rate" else int(rng.integers(0, 10))
        if section == "study" and key == "n_variants" and rng.random() < 0.5:
            value = int(rng.choice([0, 1, 5, 50, 1000, 1001, 10**6]))
        sections.setdefault(section, {})[key] = value
    lines = []
    for section, values in sections.items():
        header = f"[[{section}]]" if section in ("models", "items") else f"[{section}]"
        lines.append(header)
        lines += [f"{k} = {toml_value(v)}" for k, v in values.items()]
    text = "\n".join(lines) + "\n"
    return mutate_text(text, rng, 2) if rng.random() < 0.3 else text


def mutated_table(rng: np.random.Generator) -> pd.DataFrame:
    t = one_item_table(6).astype(object)
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(0, 6))
        col = str(rng.choice(list(t.columns)))
        if op == 0 and len(t.columns) > 1:
            t = t.drop(columns=[col])
        elif op == 1:
            t = pd.concat([t, t[[col]]], axis=1)
        elif op == 2:
            t = pd.concat([t, t.iloc[[0]]], ignore_index=True)
        else:
            values = list(t[col]) if isinstance(t[col], pd.Series) else [None] * len(t)
            values[int(rng.integers(0, len(values)))] = hostile(rng)
            if isinstance(t[col], pd.Series):
                t[col] = pd.Series(values, dtype=object)
    return t


def formula_text(rng: np.random.Generator) -> str:
    names = ["model", "dataset_type", "category", "dataset", "x1", "x2"]
    kind = int(rng.integers(0, 5))
    if kind == 0:
        return "agree ~ " + "*".join(f"v{i}" for i in range(int(rng.integers(1, 30))))
    if kind == 1:
        depth = int(rng.integers(1, 2000))
        return "agree ~ " + "(" * depth + "model" + ")" * depth
    if kind == 2:
        return "agree ~ " + "+".join(
            str(rng.choice(names)) for _ in range(int(rng.integers(1, 900)))
        )
    base = "agree ~ model + dataset_type * category + model:category"
    return mutate_text(base, rng, int(rng.integers(1, 6)))


def answer_input(rng: np.random.Generator) -> tuple[Any, list[Any], list[Any]]:
    sets = [list("ABCD"), ["i", "ii", "iii", "iv"], list("αβγδ"), ["1", "2", "3", "4"]]
    labels = list(sets[int(rng.integers(0, len(sets)))])
    options = ["Agree", "Disagree", "Neither agree nor disagree", "Strongly agree"]
    if rng.random() < 0.1:
        labels[int(rng.integers(0, 4))] = hostile(rng)
    kind = int(rng.integers(0, 4))
    if kind == 0:
        raw: Any = hostile(rng)
    elif kind == 1:
        sep = str(rng.choice(["\n", " ", "\n\n", "(", "**"]))
        words = [*map(as_text, labels), "x", "Answer:"]
        count = int(rng.integers(1, 4000))
        raw = sep.join(words[int(k)] for k in rng.integers(0, len(words), size=count))
    else:
        raw = mutate_text(f"The answer is {labels[1]}) {options[1]}.", rng, int(rng.integers(1, 8)))
    return raw, labels, options


# ----------------------------------------------------------------------------- the campaign


def make_cases(folder: Path) -> dict[str, Callable[[np.random.Generator], Callable[[], Any]]]:
    import robustness as rb
    from robustness.core.answer_parser import parse_answer
    from robustness.core.table import validate

    demo = rb.demo_items()[:1]

    def items(kind: str) -> Callable[[np.random.Generator], Callable[[], Any]]:
        def case(rng: np.random.Generator) -> Callable[[], Any]:
            path = write_items(rng, folder, kind)
            return lambda: rb.load_items(path, dataset_type=None)

        return case

    def study(rng: np.random.Generator) -> Callable[[], Any]:
        path = folder / "study.toml"
        path.write_text(study_text(rng), encoding="utf-8", errors="surrogatepass")

        def run() -> Any:
            config = rb.load_study(path)
            if set(config.families) <= set(CHEAP_FAMILIES) and config.n_variants <= 50:
                rb.perturb(
                    demo,
                    config.families,
                    n=config.n_variants,
                    seed=config.seed,
                    options=config.perturbations,
                )
            return config

        return run

    def table(rng: np.random.Generator) -> Callable[[], Any]:
        df = mutated_table(rng)
        required = None if rng.random() < 0.5 else ["model", "item_id"]
        return lambda: validate(df, required)

    def formula(rng: np.random.Generator) -> Callable[[], Any]:
        text = formula_text(rng)
        return lambda: parse_formula(text)

    def answer(rng: np.random.Generator) -> Callable[[], Any]:
        raw, labels, options = answer_input(rng)
        return lambda: parse_answer(raw, labels, options)

    def analysis(rng: np.random.Generator) -> Callable[[], Any]:
        from rich.console import Console

        from robustness.commands.analyze import analyze_table

        choices = RngChoices(rng)
        frame = hostile_table(choices)
        where = folder / "analysis"
        shutil.rmtree(where, ignore_errors=True)
        path = write_hostile(frame, where, choices)
        options = analysis_options(choices)

        def run() -> Any:
            printed = io.StringIO()
            _, paths = analyze_table(
                path,
                where / "out",
                console=Console(file=printed, width=120),
                n_boot=50,
                **options,
            )
            problem = unsafe_output(paths, printed.getvalue())
            if problem:
                raise Unsafe(problem)

        return run

    return {
        "analysis": analysis,
        "items_jsonl": items("jsonl"),
        "items_json": items("json"),
        "items_csv": items("csv"),
        "items_parquet": items("parquet"),
        "study": study,
        "table": table,
        "formula": formula,
        "answer": answer,
    }


def outcome(call: Callable[[], Any], slow: float = SLOW_SECONDS) -> tuple[str, str, float]:
    started = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        call()
        kind, detail = "ok", ""
    except Hang:
        kind, detail = "hang", ""
    except Unsafe as exc:
        kind, detail = "unsafe", f"Unsafe: {exc}"
    except (RobustnessError, FormulaError):
        kind, detail = "clean", ""
    except ValueError as exc:
        kind, detail = "value_error", f"ValueError: {str(exc)[:120]}"
    except (Exception, RecursionError) as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        kind, detail = "traceback", f"{type(exc).__name__} at {where}: {str(exc)[:120]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    seconds = time.perf_counter() - started
    if kind in ("ok", "clean") and seconds > slow:
        kind = "slow"
    return kind, detail, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--targets", default="all")
    parser.add_argument("--show", type=int, default=2)
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    warnings.simplefilter("ignore")  # NumPy and statsmodels warnings on degenerate tables
    with tempfile.TemporaryDirectory() as tmp:
        cases = make_cases(Path(tmp))
        everyday = [n for n in cases if n != "analysis"]
        names = everyday if args.targets == "all" else args.targets.split(",")
        counts: dict[str, Counter[str]] = {name: Counter() for name in names}
        examples: dict[str, list[str]] = defaultdict(list)
        slowest: dict[str, float] = dict.fromkeys(names, 0.0)
        started = time.perf_counter()
        for i in range(args.n):
            name = names[i % len(names)]
            rng = np.random.default_rng([args.seed, i])
            try:
                call = cases[name](rng)
            except Exception as exc:  # the input could not be made: not the toolkit's fault
                counts[name]["skipped"] += 1
                examples["skipped"].append(f"{name}: {type(exc).__name__}: {exc}"[:200])
                continue
            kind, detail, seconds = outcome(call, SLOW_SECONDS_FOR.get(name, SLOW_SECONDS))
            if (i + 1) % 1000 == 0:
                print(f"... {i + 1} inputs", file=sys.stderr, flush=True)
            counts[name][kind] += 1
            slowest[name] = max(slowest[name], seconds)
            if detail and kind in ("traceback", "value_error", "unsafe"):
                examples[f"{name} {detail.split(':')[0]}"].append(f"input {i}: {detail}")
            elif kind in ("slow", "hang"):
                examples[f"{name} {kind}"].append(f"input {i}: {seconds:.1f} s")
        elapsed = time.perf_counter() - started
    kinds = ["ok", "clean", "value_error", "traceback", "unsafe", "slow", "hang", "skipped"]
    print(f"{args.n} inputs, seed {args.seed}, {elapsed:.0f} s")
    print(f"{'target':<14}" + "".join(f"{k:>12}" for k in kinds) + f"{'slowest s':>11}")
    total: Counter[str] = Counter()
    for name in names:
        total.update(counts[name])
        print(
            f"{name:<14}"
            + "".join(f"{counts[name][k]:>12}" for k in kinds)
            + f"{slowest[name]:>11.3f}"
        )
    print(f"{'all':<14}" + "".join(f"{total[k]:>12}" for k in kinds))
    for key, lines in sorted(examples.items()):
        print(f"-- {key} ({len(lines)})")
        for line in lines[: args.show]:
            print(f"   {line}")


if __name__ == "__main__":
    main()
