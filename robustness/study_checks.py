"""Value checks for study files: each wrong type or range is one StudyError naming the place.

The study loader (:mod:`robustness.study`) calls these on every value it reads, so that a wrong
value stops the load with a sentence naming the section, the key and the value as written,
instead of failing later inside a family or a backend.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import Any

from robustness.core.errors import StudyError
from robustness.core.text_safety import shown

__all__ = [
    "MAX_INT",
    "PARAMETER_RANGES",
    "as_table",
    "as_text",
    "as_whole",
    "check_keys",
    "check_parameter",
]

#: Seeds, counts and sizes are stored as 64-bit integers.
MAX_INT = 2**63 - 1
#: Bounds of the numeric family parameters, as the families check them; "(" marks an open
#: lower bound (``rate = 0`` makes no variant). Other numbers must be >= 0.
PARAMETER_RANGES: dict[str, tuple[str, float, float]] = {
    "rate": ("(", 0.0, 1.0),
    "threshold": ("[", -1.0, 1.0),
    "max_substitutions": ("[", 1, 1000),
    "min_length": ("[", 0, 1000),
    "oversample": ("[", 1, 100),
}


def as_whole(value: Any, where: str, low: int, high: int) -> int:
    """``value`` as a whole number in [low, high], or StudyError naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise StudyError(f"{where} must be a whole number, got {shown(value)}.")
    if not low <= value <= high:
        bound = f"between {low} and {high:,}" if high < MAX_INT else f">= {low}"
        raise StudyError(f"{where} must be a whole number {bound}, got {shown(value)}.")
    return value


def as_text(value: Any, where: str, allowed: Sequence[str] | None = None, what: str = "") -> str:
    """``value`` as text (one of ``allowed``), or StudyError: "{where} {what} must be text" or
    "{where}: unknown {what} 'x'; use one of ..."."""
    if not isinstance(value, str):
        raise StudyError(f"{where} {what} must be text, got {shown(value)}.".replace("  ", " "))
    if allowed is not None and value not in allowed:
        raise StudyError(
            f"{where}: unknown {what or 'value'} {shown(value)}; use one of {', '.join(allowed)}."
        )
    return value


def as_table(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise StudyError(f"{where} must be a table (key = value pairs), got {shown(value)}.")
    return value


def check_parameter(where: str, key: str, value: Any, default: Any) -> None:
    """A family parameter must have its default's type (an int default also takes a whole
    float, a float default any finite number) and lie in :data:`PARAMETER_RANGES`."""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise StudyError(f"{where} must be true or false, got {shown(value)}.")
        return
    if isinstance(default, int | float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise StudyError(f"{where} must be a number, got {shown(value)}.")
        if isinstance(default, int) and not (isinstance(value, int) or value.is_integer()):
            raise StudyError(f"{where} must be a whole number, got {shown(value)}.")
        side, low, high = PARAMETER_RANGES.get(key, ("[", 0, MAX_INT))
        inside = low < value <= high if side == "(" else low <= value <= high
        if not (isinstance(value, int) or math.isfinite(value)) or not inside:
            bound = (
                f"above {low} and at most {high:,}"
                if side == "("
                else (f"between {low} and {high:,}")
            )
            raise StudyError(f"{where} must be {bound}, got {shown(value)}.")
        return
    if isinstance(default, str) and not isinstance(value, str):
        raise StudyError(f"{where} must be text, got {shown(value)}.")


def check_keys(where: str, given: Mapping[str, Any], known: Sequence[str], source: str) -> None:
    """Refuse a key of ``given`` that is not in ``known``, naming the closest known one."""
    for key in given:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}."
            raise StudyError(f"{source}: unknown key {shown(key)} in {where}{hint}")
