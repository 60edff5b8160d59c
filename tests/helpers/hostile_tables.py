"""Hostile long tables for the analysis and its report, shared by the property tests
(``tests/test_fuzz_analysis.py``, through hypothesis) and ``bench/fuzz.py`` (through a seeded
``numpy.random.Generator``): one generator, two sources of choices.

:func:`hostile_table` builds a small valid long table (random models, datasets, items,
categories, variants, answers and validity) and then applies a few mutations: optional columns
dropped (``gold``, ``correct``, ``scale``, ...), NaN and infinities in numeric columns, groups
emptied, one model or one item, every answer identical, every row invalid, a single dataset
type, duplicated rows, a single row or none, a model that answered nothing, extra columns,
and names (models, categories, datasets, items, raw outputs, prompts, the study) that are
huge or hold control characters, terminal escapes, bidirectional overrides or HTML, Markdown
and LaTeX markup. :func:`write_hostile` writes it as
CSV or as Parquet with the toolkit's metadata (the study's name included), the way
``robustness analyze`` reads it.

Every choice goes through a :class:`Choices` object: :class:`RngChoices` (a seeded NumPy
generator) for the campaign, :class:`DrawChoices` (hypothesis' ``data.draw``) for the tests, so
hypothesis can shrink a failing table to its simplest form (every "mutate?" choice shrinks to
no).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

__all__ = [
    "FORMULAS",
    "HOSTILE_NAMES",
    "Choices",
    "DrawChoices",
    "RngChoices",
    "analysis_options",
    "hostile_table",
    "unsafe_output",
    "write_hostile",
]

#: Names and texts a table made elsewhere may hold: markup of every output format, terminal
#: escapes, controls, bidirectional overrides, NUL, very long text and values that look like
#: something else.
HOSTILE_NAMES: tuple[str, ...] = (
    "<script>alert(1)</script>",
    "</td></tr></table><img src=x onerror=alert(1)>",
    "| pipes | here |",
    "`back` ``ticks``",
    "$\\input{x}$",
    "\\end{tabular}\\input{/etc/passwd}",
    "100% & more # _under_ ~^ {}",
    "[link](javascript:alert(1))",
    "# heading",
    "- list",
    "*bold* **x**",
    "\x1b[2J\x1b[H\x1b]0;title\x07cleared",
    "\x9b31m C1",
    "bidi \u202eevil\u202c",
    "nul\x00byte",
    "line\nbreak\r\ttab",
    "a\u2028b\u0085c",
    "x" * 5000,
    "😀 émoji ελληνικά",
    " ",
    "nan",
    "None",
    "-7",
    "original",
)
FAMILIES = ("framing", "option_order", "spelling_noise", "formatting", "paraphrase")
OPTIONAL = (
    "gold",
    "correct",
    "scale",
    "n_options",
    "raw_output",
    "invalid_reason",
    "confidence",
    "option_probs",
    "prompt",
    "study",
    "label",
)
NUMERIC = ("answer", "gold", "confidence", "n_options", "latency_ms")
NON_FINITE = (math.nan, math.inf, -math.inf, 1e308, -1.0, 2**40)


class Choices(Protocol):
    """Where a generator's choices come from."""

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]`` (shrinks towards ``low``)."""
        ...

    def chance(self, p: float) -> bool:
        """True with probability about ``p`` (shrinks towards False)."""
        ...

    def pick(self, values: Sequence[Any]) -> Any:
        """One of ``values`` (shrinks towards the first)."""
        ...


class RngChoices:
    """Choices from a seeded NumPy generator (bench/fuzz.py)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return int(self.rng.integers(low, high + 1))

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, values: Sequence[Any]) -> Any:
        return values[int(self.rng.integers(0, len(values)))]


class DrawChoices:
    """Choices drawn by hypothesis (``st.data()``), so failing tables shrink."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def integer(self, low: int, high: int) -> int:
        return int(self.data.draw(self.st.integers(low, high)))

    def chance(self, p: float) -> bool:
        return int(self.data.draw(self.st.integers(0, 99))) >= round(100 * (1 - p))

    def pick(self, values: Sequence[Any]) -> Any:
        return self.data.draw(self.st.sampled_from(list(values)))


def _name(c: Choices, plain: str, p: float = 0.3) -> str:
    return str(c.pick(HOSTILE_NAMES)) if c.chance(p) else plain


def _base(c: Choices) -> pd.DataFrame:
    """A valid long table of a few models, datasets, items, categories and variants."""
    models = list(dict.fromkeys(_name(c, f"m{i}") for i in range(c.integer(1, 3))))
    kinds = c.pick([("objective", "subjective"), ("objective",), ("subjective",)])
    families = [_name(c, str(c.pick(FAMILIES)), 0.15) for _ in range(c.integer(1, 3))]
    categories = list(dict.fromkeys(["original", *families]))
    rows = []
    for kind in kinds:
        dataset = _name(c, "quiz" if kind == "objective" else "survey")
        for i in range(c.integer(1, 4)):
            item = _name(c, f"{kind[0]}{i}", 0.15)
            options = 4 if kind == "objective" else c.pick([4, 5, 7])
            gold = c.integer(0, options - 1) if kind == "objective" else None
            for model in models:
                for category in categories:
                    for v in range(1 if category == "original" else c.integer(1, 3)):
                        valid = c.chance(0.85)
                        answer = c.integer(0, options - 1) if valid else None
                        probs = np.full(options, 1.0 / options)
                        if answer is not None:
                            probs = probs / 2
                            probs[answer] += 0.5
                        rows.append(
                            {
                                "study": "fuzz",
                                "model": model,
                                "dataset": dataset,
                                "dataset_type": kind,
                                "item_id": item,
                                "category": category,
                                "variant_id": f"{category}/{v}",
                                "answer": answer,
                                "valid": valid,
                                "invalid_reason": None if valid else "no_label",
                                "gold": gold,
                                "correct": None
                                if gold is None or answer is None
                                else answer == gold,
                                "scale": "nominal" if kind == "objective" else "ordinal",
                                "n_options": options,
                                "raw_output": _name(c, "B", 0.2),
                                "prompt": _name(c, "Question: which one?\nA. x\nB. y", 0.2),
                                "confidence": float(probs.max()),
                                "option_probs": [float(x) for x in probs],
                            }
                        )
    return pd.DataFrame(rows)


def _mutate(t: pd.DataFrame, c: Choices) -> pd.DataFrame:
    op = c.integer(0, 19)
    if op == 0:  # an optional column dropped
        present = [col for col in OPTIONAL if col in t.columns]
        if present:
            t = t.drop(columns=[c.pick(present)])
    elif op == 1 and len(t):  # non-finite or out-of-range numbers
        col = c.pick([n for n in NUMERIC if n in t.columns] or ["answer"])
        values = t[col].astype(object).tolist() if col in t.columns else [None] * len(t)
        values[c.integer(0, len(t) - 1)] = c.pick(NON_FINITE)
        t[col] = values
    elif op == 2 and len(t):  # a group emptied: one category, one model's rows, the originals
        col = c.pick(["category", "model", "dataset_type", "item_id"])
        t = t[t[col] != c.pick(list(pd.unique(t[col])))]
    elif op == 3 and len(t):  # one model, one item
        col = c.pick(["model", "item_id", "dataset"])
        t = t[t[col] == t[col].iloc[0]]
    elif op == 4 and len(t):  # every answer identical
        t["answer"] = t["valid"].map(lambda ok: 0 if ok else None)
        if "gold" in t.columns:
            t["correct"] = [
                None if g is None or pd.isna(g) or a is None else a == g
                for a, g in zip(t["answer"], t["gold"], strict=True)
            ]
    elif op == 5:  # every row invalid
        t["valid"] = False
        t["answer"] = None
        t["correct"] = None
        t["invalid_reason"] = c.pick(["no_label", "error: server said <b>no</b>\x1b[2J"])
    elif op == 6 and len(t):  # duplicated rows
        t = pd.concat([t, t.iloc[: c.integer(1, len(t))]], ignore_index=True)
    elif op == 7:  # no rows at all
        t = t.iloc[:0]
    elif op == 8 and len(t):  # a hostile name in one column, for every row of one value
        col = c.pick(["model", "category", "dataset", "item_id", "variant_id", "study"])
        if col in t.columns:
            old = c.pick(list(pd.unique(t[col])))
            t[col] = t[col].replace(old, c.pick(HOSTILE_NAMES))
    elif op == 9 and len(t):  # a hostile cell of free text
        col = c.pick(["raw_output", "prompt", "invalid_reason", "label"])
        values = t[col].tolist() if col in t.columns else [None] * len(t)
        values[c.integer(0, len(t) - 1)] = c.pick(HOSTILE_NAMES)
        t[col] = values
    elif op == 10 and len(t):  # an unknown dataset type, scale or category spelling
        col = c.pick(["dataset_type", "scale", "category"])
        if col in t.columns:
            values = t[col].astype(object).tolist()
            values[c.integer(0, len(t) - 1)] = c.pick(
                ["Objective", "opinion", "", "interval", "ORIGINAL"]
            )
            t[col] = values
    elif op == 11 and len(t):  # answers past the options
        values = t["answer"].astype(object).tolist()
        values[c.integer(0, len(t) - 1)] = c.pick([-1, 26, 10**6])
        t["answer"] = values
    elif op == 12 and len(t):  # validity written as words, or missing
        word = c.pick(["yes", "no", "true", "False", "1", None, math.nan])
        values = t["valid"].astype(object).tolist()
        values[c.integer(0, len(t) - 1)] = word
        t["valid"] = values
    elif op == 13 and len(t):  # names that are numbers, or missing
        col = c.pick(["model", "dataset", "item_id", "category", "variant_id"])
        if c.chance(0.5):
            t[col] = pd.factorize(t[col])[0]
        else:
            values = t[col].astype(object).tolist()
            values[c.integer(0, len(t) - 1)] = c.pick([None, math.nan, 7, 1.5])
            t[col] = values
    elif op == 14 and "n_options" in t.columns and len(t):  # too few or too many options
        t["n_options"] = c.pick([0, 1, 2, 27, 1000])
    elif op == 15 and "option_probs" in t.columns and len(t):  # malformed probabilities
        values = t["option_probs"].tolist()
        values[c.integer(0, len(t) - 1)] = c.pick(
            [[1.0], [0.5, 0.5, 0.5], [-0.5, 1.5], [math.nan, 1.0], [], "[0.5, 0.5]", None]
        )
        t["option_probs"] = values
    elif op == 16 and len(t):  # a row of another dataset type for an existing item
        row = t.iloc[[c.integer(0, len(t) - 1)]].copy()
        row["dataset_type"] = (
            "subjective" if row["dataset_type"].iloc[0] == "objective" else "objective"
        )
        row["variant_id"] = "extra/0"
        t = pd.concat([t, row], ignore_index=True)
    elif op == 17:  # an extra column with a hostile name and mixed values
        t[c.pick(HOSTILE_NAMES)[:200]] = [c.pick(["x", 1, None, 2.5]) for _ in range(len(t))]
    elif op == 18 and len(t):  # a single row
        t = t.iloc[[c.integer(0, len(t) - 1)]]
    elif op == 19 and len(t):  # one model answers nothing
        lost = (t["model"] == t["model"].iloc[c.integer(0, len(t) - 1)]).to_numpy()
        for col, value in (("valid", False), ("answer", None), ("correct", None)):
            if col in t.columns:
                t[col] = [value if gone else v for gone, v in zip(lost, t[col], strict=True)]
    return t.reset_index(drop=True)


#: Formulas a user may pass to ``robustness analyze --formula``.
FORMULAS = (
    None,
    "agree ~ model + category",
    "agree ~ dataset_type * category",
    "agree ~ model * dataset_type * category",
    "agree ~ dataset_type + <script>",
    "agree ~ " + "(" * 60 + "model" + ")" * 60,
    "agree ~ confidence + category",
    "agree ~ nonexistent",
    "",
)


def analysis_options(c: Choices) -> dict[str, Any]:
    """Keyword arguments of ``analyze_table`` as a user might give them: a formula (or the
    default), the GEE clusters, the fewest items per cell, and a published study to compare."""
    return {
        "formula": c.pick(FORMULAS) if c.chance(0.3) else None,
        "cluster": c.pick(["item", "model_item"]),
        "min_items": c.pick([1, 2, 0]) if c.chance(0.3) else 10,
        "compare": "kamal2026" if c.chance(0.3) else None,
    }


def hostile_table(c: Choices) -> pd.DataFrame:
    """A small long table, valid or not, with up to three mutations (see the module docstring).

    Parameters
    ----------
    c
        The source of every choice.

    Returns
    -------
    pandas.DataFrame
        Columns of the long table (``study, model, dataset, dataset_type, item_id, category,
        variant_id, answer, valid, invalid_reason, gold, correct, scale, n_options, raw_output,
        prompt, confidence, option_probs``), some dropped or damaged.
    """
    t = _base(c)
    for _ in range(c.integer(0, 3)):
        t = _mutate(t, c)
    return t


def write_hostile(t: pd.DataFrame, folder: Path, c: Choices) -> Path:
    """Write ``t`` where ``robustness analyze`` reads tables: CSV, or Parquet with the
    toolkit's metadata (a study whose name may be hostile). A table pyarrow cannot store is
    written as CSV; text that is not UTF-8 (a lone surrogate) is written as its escapes.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    if c.chance(0.5):
        meta = {"study": {"name": _name(c, "fuzz study", 0.6), "families": list(FAMILIES[:3])}}
        path = folder / "table.parquet"
        try:
            table = pa.Table.from_pandas(t, preserve_index=False)
            schema = dict(table.schema.metadata or {})
            schema[b"robustness"] = json.dumps(meta).encode()
            pq.write_table(table.replace_schema_metadata(schema), path)
            return path
        except (pa.ArrowException, ValueError, TypeError):
            path.unlink(missing_ok=True)
    path = folder / "table.csv"
    out = t.copy()
    if "option_probs" in out.columns:
        out["option_probs"] = out["option_probs"].map(
            lambda v: v if v is None or isinstance(v, str) else json.dumps(list(v))
        )
    out.to_csv(path, index=False, encoding="utf-8", errors="backslashreplace")
    return path


#: Characters no written report file and no console line may hold (line breaks and tabs aside).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: The elements the HTML report is made of; any other tag came from the data.
HTML_TAGS = frozenset(
    "!doctype html head meta title style body h1 h2 h3 p ul li table thead tbody tr th td "  # noqa: SIM905
    "figure img figcaption details summary pre".split()
)
TAG = re.compile(r"<(/?)([!a-zA-Z][^\s/>]*)([^>]*)>")
EVENT = re.compile(r"\son[a-z]+\s*=", re.IGNORECASE)


def unsafe_output(paths: Mapping[str, Path], console: str) -> str | None:
    """The first unsafe thing in a report and its console summary, or None.

    Parameters
    ----------
    paths
        What ``write_report`` returned (``html``, ``md``, figures); the LaTeX tables are read
        from ``tables/`` beside ``report.html``.
    console
        What the console summary printed.

    Returns
    -------
    str or None
        ``"<file>: control character U+XXXX"``, ``"report.html: live markup '<tag>'"`` (an
        element the report does not make, or an event handler) or ``"report.md: raw HTML"``.
    """
    html, md = Path(paths["html"]), Path(paths["md"])
    files = [html, md, *sorted((html.parent / "tables").glob("*.tex"))]
    texts = [(f.name, f.read_text(encoding="utf-8")) for f in files] + [("console", console)]
    for name, text in texts:
        found = CONTROL.search(text)
        if found:
            return f"{name}: control character U+{ord(found.group()):04X}"
    for tag in TAG.finditer(texts[0][1]):
        name = tag.group(2).lower()
        if name not in HTML_TAGS or EVENT.search(tag.group(3)):
            return f"report.html: live markup {tag.group()[:80]!r}"
        if name == "img" and "src='data:image/png;base64," not in tag.group(3):
            return f"report.html: an image from outside {tag.group()[:80]!r}"
    found = re.search(r"<[!/a-zA-Z]", texts[1][1])  # Markdown passes raw HTML through
    if found:
        return f"report.md: raw HTML {texts[1][1][found.start() : found.start() + 40]!r}"
    return None
