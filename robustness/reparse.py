"""Re-normalise a long table's generate-mode answers with the current answer parser.

A generate-mode row keeps the model's ``raw_output`` and, in ``display``, what the prompt
showed: the displayed labels, the displayed option texts and the canonical option index of
each displayed position (option order and negation already undone). That is all the
parser needs, so a table made before a parser change can be read again without asking the
model anything: :func:`reparse` parses every such row anew, rewrites ``label``, ``answer``,
``valid``, ``invalid_reason``, ``correct``, ``label_answer``, ``text_answer`` and
``parser_version``, and compares the old answers with the new ones.

Rows of the other modes, rows whose model call failed (``invalid_reason`` "error: ...")
and rows without ``display`` (tables written before it existed) are kept as they are and
counted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from robustness.core.answer_parser import (
    CONFLICT_POLICIES,
    PARSER_VERSION,
    ParsedAnswer,
    parse_answer,
)
from robustness.core.errors import TableError
from robustness.core.table import checked_or_validate, validate

__all__ = ["ReparseResult", "display_json", "parser_versions", "reading_columns", "reparse"]

#: The columns a re-read rewrites.
REREAD_COLUMNS: tuple[str, ...] = (
    "label",
    "answer",
    "valid",
    "invalid_reason",
    "correct",
    "label_answer",
    "text_answer",
    "parser_version",
)
_KEYS = ("model", "dataset", "item_id", "category", "variant_id")


def display_json(labels: Sequence[str], options: Sequence[str], canonical: Sequence[int]) -> str:
    """The ``display`` cell: displayed labels, option texts and their canonical indices."""
    return json.dumps(
        {
            "labels": list(labels),
            "options": list(options),
            "canonical": [int(c) for c in canonical],
        },
        ensure_ascii=False,
    )


def reading_columns(parsed: ParsedAnswer, canonical: Sequence[int]) -> dict[str, Any]:
    """The parser's bookkeeping columns of one row: version and the two conflict readings.

    ``label_answer`` and ``text_answer`` are set when the output named a label with another
    option's text ("B. Agree" where B showed Disagree): the canonical answer under the
    "label" and under the "text" conflict policy (missing where that reading is still
    ambiguous); missing on every other row.
    """
    return {
        "parser_version": PARSER_VERSION,
        "label_answer": None if parsed.label_reading is None else canonical[parsed.label_reading],
        "text_answer": None if parsed.text_reading is None else canonical[parsed.text_reading],
    }


def parser_versions(table: pd.DataFrame) -> str:
    """One sentence saying which parser versions read a table's generate-mode answers.

    For a report: "generated answers read by answer parser 2 (1,200 rows)", or with several
    versions each with its row count, "unrecorded" for rows written before versions were
    kept; "" when the table has no generate-mode rows.
    """
    if "mode" not in table.columns:
        return ""
    rows = table[table["mode"] == "generate"]
    if rows.empty:
        return ""
    versions = (
        rows["parser_version"].astype(object).where(rows["parser_version"].notna(), "unrecorded")
        if "parser_version" in rows.columns
        else pd.Series("unrecorded", index=rows.index)
    )
    counts = versions.value_counts(sort=False).sort_index()
    parts = [
        f"{'an unrecorded version' if v == 'unrecorded' else v} ({n:,} rows)"
        for v, n in counts.items()
    ]
    return "generated answers read by answer parser " + ", ".join(parts)


def _read_display(value: Any, where: str) -> tuple[list[str], list[str], list[int]] | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    try:
        d = json.loads(value) if isinstance(value, str) else dict(value)
        labels, options, canonical = d["labels"], d["options"], d["canonical"]
        ok = (
            isinstance(labels, list)
            and isinstance(options, list)
            and isinstance(canonical, list)
            and len(labels) == len(options) == len(canonical) >= 1
            and all(isinstance(x, str) for x in labels + options)
            and all(isinstance(c, int) and not isinstance(c, bool) for c in canonical)
        )
    except (ValueError, TypeError, KeyError):
        ok = False
    if not ok:
        raise TableError(
            f"column 'display', {where}: {str(value)[:120]!r} is not a JSON object with "
            "lists 'labels', 'options' and 'canonical' of one length."
        )
    return labels, options, canonical


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _reread(row: Mapping[str, Any], display: tuple, conflict: str) -> dict[str, Any]:
    labels, options, canonical = display
    raw = row.get("raw_output")
    parsed = parse_answer(None if _missing(raw) else raw, labels, options, conflict=conflict)
    answer = None if parsed.position is None else canonical[parsed.position]
    gold = row.get("gold")
    gold = None if _missing(gold) else int(gold)  # type: ignore[arg-type]
    out = {
        "label": parsed.label,
        "answer": answer,
        "valid": answer is not None,
        "invalid_reason": None if answer is not None else (parsed.reason or "no_label"),
        "correct": (answer == gold) if answer is not None and gold is not None else None,
    }
    out.update(reading_columns(parsed, canonical))
    return out


def _state(answer: Any, valid: Any, reason: Any) -> tuple[int | None, bool, str | None]:
    return (
        None if _missing(answer) else int(answer),
        bool(valid) if not _missing(valid) else False,
        None if _missing(reason) else str(reason),
    )


def _change(old: tuple, new: tuple) -> str | None:
    (oa, ov, orr), (na, nv, nr) = old, new
    if ov and nv:
        return "answer changed" if oa != na else None
    if ov and not nv:
        return f"valid -> {nr}"
    if not ov and nv:
        return f"{orr} -> valid"
    return f"{orr} -> {nr}" if orr != nr else None


@dataclass(frozen=True)
class ReparseResult:
    """What :func:`reparse` returns.

    ``table`` is the re-read table; ``changes`` one row per row whose answer or validity
    changed (key columns, ``change``, ``old_answer``, ``new_answer``, ``old_reason``,
    ``new_reason``, ``old_parser``, ``raw_output``); ``summary`` the count of rows per
    ``change``; ``counts`` how many rows were re-read, changed and kept as they were, and why.
    """

    table: pd.DataFrame
    changes: pd.DataFrame
    summary: pd.DataFrame
    counts: dict[str, int]
    conflict: str
    parser_version: str


def reparse(table: pd.DataFrame, *, conflict: str = "ambiguous") -> ReparseResult:
    """Parse every generate-mode row's ``raw_output`` again with the current parser.

    Parameters
    ----------
    table
        A long table (validated here, unless ``read_table`` has just checked it).
        Generate-mode rows need ``raw_output`` and ``display``.
    conflict
        The policy for a label written with another option's text: "ambiguous" (the
        default), "label" or "text" (see :func:`robustness.core.answer_parser.parse_answer`).

    Returns
    -------
    ReparseResult
        The new table (same rows and order; the re-read columns rewritten), the changed
        rows, the count per kind of change ("answer changed", "valid -> ambiguous",
        "no_label -> valid", "no_label -> refusal", ...) and the counts of rows re-read,
        changed and kept (``other_mode``, ``model_error``, ``no_display``).
    """
    if conflict not in CONFLICT_POLICIES:
        raise TableError(
            f"conflict policy {conflict!r} is not one of {', '.join(CONFLICT_POLICIES)}."
        )
    need = ("mode", "raw_output", "answer", "valid", "invalid_reason")
    # a table read_table has just checked is not checked again; the caller's frame stays as it is
    t = checked_or_validate(table, required=need).copy(deep=False)
    for column in REREAD_COLUMNS:
        if column not in t.columns:
            t[column] = None
    t = t.astype({c: object for c in REREAD_COLUMNS})
    counts = {"rows": len(t), "reread": 0, "changed": 0}
    counts.update(other_mode=0, model_error=0, no_display=0)
    changes: list[dict[str, Any]] = []
    has_display = "display" in t.columns
    records = t.to_dict("records")
    columns = {c: t[c].tolist() for c in REREAD_COLUMNS}
    displays: dict[str, tuple | None] = {}
    for i, row in enumerate(records):
        if row.get("mode") != "generate":
            counts["other_mode"] += 1
            continue
        reason = row.get("invalid_reason")
        if isinstance(reason, str) and reason.startswith("error:"):
            counts["model_error"] += 1
            continue
        cell = row.get("display") if has_display else None
        key = cell if isinstance(cell, str) else None
        if key is not None and key in displays:
            display = displays[key]
        else:
            display = _read_display(cell, f"row {i}")
            if key is not None:
                displays[key] = display
        if display is None:
            counts["no_display"] += 1
            continue
        new = _reread(row, display, conflict)
        counts["reread"] += 1
        old_state = _state(row.get("answer"), row.get("valid"), reason)
        new_state = _state(new["answer"], new["valid"], new["invalid_reason"])
        kind = _change(old_state, new_state)
        if kind is not None:
            counts["changed"] += 1
            changes.append(
                {
                    **{k: row.get(k) for k in _KEYS if k in row},
                    "change": kind,
                    "old_answer": old_state[0],
                    "new_answer": new_state[0],
                    "old_reason": old_state[2],
                    "new_reason": new_state[2],
                    "old_parser": row.get("parser_version"),
                    "raw_output": row.get("raw_output"),
                }
            )
        for column, value in new.items():
            columns[column][i] = value
    for column, values in columns.items():
        t[column] = pd.Series(values, index=t.index, dtype=object)
    out = validate(t, required=())
    change_columns = [
        *[k for k in _KEYS if k in t.columns],
        "change",
        "old_answer",
        "new_answer",
        "old_reason",
        "new_reason",
        "old_parser",
        "raw_output",
    ]
    changed = pd.DataFrame(changes, columns=change_columns)
    if len(changed):
        summary = (
            changed.groupby("change", sort=True)
            .size()
            .rename("rows")
            .reset_index()
            .sort_values(["rows", "change"], ascending=[False, True], kind="stable")
            .reset_index(drop=True)
        )
    else:
        summary = pd.DataFrame({"change": pd.Series(dtype=str), "rows": pd.Series(dtype=int)})
    return ReparseResult(out, changed, summary, counts, conflict, PARSER_VERSION)
