"""Options that refer to other options, which reordering or relabelling would break.

"All of the above" means something else once it is no longer last; "Both A and B"
means something else once A and B are other options or other letters.  The
option-order family pins options of the first kind where they are and leaves
items with options of the second kind alone; label substitution leaves the
second kind alone too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_POSITION = re.compile(
    r"\b(all|none|both|neither|any|each|either)\s+of\s+(the\s+)?(above|below|these|those|"
    r"others|other\s+options|previous|preceding|following)\b|\b(above|below)\b",
    re.IGNORECASE,
)
#: One label: a single letter or digit standing alone ("A", "(b)", "3"), never the first
#: letter of a word ("both hands" is not "both h and s").
_ONE = r"\(?[A-Za-z1-9]\b\)?"
_LABEL = re.compile(
    rf"\b(?i:both|either|neither|only)\s+{_ONE}\s*(\b(and|or|nor)\b|,)\s*{_ONE}"
    rf"|\b(?i:options?|answers?|choices?)\s+{_ONE}(\s*(,|\band\b|\bor\b|&)\s*{_ONE})+"
    r"|\b[A-E]\s*(&|\band\b)\s*[A-E]\b"
)


def refers_by_position(option: str) -> bool:
    """True for options such as "All of the above" or "None of these"."""
    return bool(_POSITION.search(option))


def refers_by_label(option: str) -> bool:
    """True for options such as "Both A and B" or "Options 1 and 3"."""
    return bool(_LABEL.search(option))


def any_label_reference(options: Sequence[str]) -> bool:
    return any(refers_by_label(o) for o in options)


def pinned_positions(options: Sequence[str]) -> tuple[int, ...]:
    """Canonical positions of the options that must keep their place."""
    return tuple(i for i, o in enumerate(options) if refers_by_position(o))
