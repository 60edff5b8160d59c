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
_LABEL = re.compile(
    r"\b(?i:both|either|neither|only)\s+\(?[A-Za-z1-9]\)?\s*(and|or|nor|,)\s*\(?[A-Za-z1-9]\)?\b"
    r"|\b(?i:options?|answers?|choices?)\s+\(?[A-Za-z1-9]\)?(\s*(,|and|or|&)\s*\(?[A-Za-z1-9]\)?)+\b"
    r"|\b[A-E]\s*(&|and)\s*[A-E]\b"
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
