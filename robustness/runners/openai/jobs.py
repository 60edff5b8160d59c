"""One request of a call and what it can end in: the plain types transport and runner share.

A :class:`Job` is sent by ``Transport.perform``; an attempt that may succeed later raises
:class:`Retryable`, one that fails for good :class:`PromptFailed` (``stop``: every prompt would
fail too, so the call stops; ``permanent``: asking again would fail again), and a request the
call gave up on before it finished :class:`Cancelled`. :class:`RequestStats` counts them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Cancelled",
    "Job",
    "PromptFailed",
    "RequestStats",
    "Retryable",
    "one_line",
    "retry_after",
]


# --------------------------------------------------------------------------- outcomes
class Retryable(Exception):
    """One attempt failed in a way a later attempt may not."""

    def __init__(
        self, reason: str, retry_after: float | None = None, detail: str | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.detail = detail


class PromptFailed(Exception):
    """A request failed for good; ``stop`` means it would fail for every prompt too,
    ``permanent`` that asking again would fail again."""

    def __init__(
        self,
        message: str,
        *,
        stop: bool = False,
        permanent: bool = False,
        advice: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.stop = stop
        self.permanent = permanent
        #: For a stop of a call that sent requests: what to do, after the progress count.
        self.advice = advice


class Cancelled(Exception):
    """The call stopped before this request could finish."""


@dataclass(frozen=True)
class RequestStats:
    """Counters since the runner was made (or reset).

    ``requests`` answered, ``attempts`` sent (first tries and retries), ``retries`` after a
    failed attempt, ``reconnects`` of idle keep-alive connections the server had closed (sent
    again at once, not counted as retries), ``failed`` requests that failed for good, and
    ``reasons``: failed attempts by reason (``"http 503"``, ``"connection"``, ``"timeout"``,
    ``"malformed"``).
    """

    requests: int = 0
    attempts: int = 0
    retries: int = 0
    reconnects: int = 0
    failed: int = 0
    reasons: Mapping[str, int] = field(default_factory=dict)


@dataclass
class Job:
    """One request of a call: where it goes, its body, and how to read the answer.

    ``parse(data, latency_ms)`` may raise ``MalformedAnswer`` (retried), ``PromptFailed`` or
    ``ModelError`` (that prompt fails); ``seed_text`` seeds the retry jitter and names the
    request among prompts that failed for good."""

    index: int
    endpoint: str
    body: dict[str, Any]
    parse: Callable[[dict[str, Any], float], Any]
    seed_text: str = ""


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The ``Retry-After`` header in seconds, or None (absent, a date, or not a number)."""
    for name, value in headers.items():
        if name.lower() == "retry-after":
            try:
                seconds = float(value)
            except ValueError:
                return None
            return seconds if math.isfinite(seconds) and seconds >= 0 else None
    return None
