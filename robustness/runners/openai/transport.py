"""HTTP to an OpenAI-compatible server: keep-alive connections, time-outs, retries, the key.

Only the standard library is used (``http.client`` over one keep-alive connection per thread),
so the backend adds no dependency. :class:`Transport` sends one request until it succeeds, fails
for good or its call stops; the runner (``runner.py``) decides what to send and what a failure
means for the call.

Retries, back-off and time-outs
-------------------------------
A request is retried on a connection error (refused, reset, closed without an answer), on a
time-out, on a malformed body, and on HTTP 408, 409, 425, 429 and every 5xx, up to
``max_retries`` times (default 5) after the first attempt. Before retry ``k`` (1, 2, ...) it
waits ``backoff * 2**(k-1)`` seconds (default ``backoff`` 1 s), capped at ``max_backoff``
(30 s), times a jitter factor in [0.5, 1) drawn from a ``random.Random`` seeded with the
runner's ``seed`` and the request's content, so the same request waits the same time in every
run, yet concurrent requests do not retry in lock step. A ``Retry-After`` header in seconds
lengthens the wait (up to ``max_backoff``). A keep-alive connection that the server had closed
while idle is reopened once at once, without counting as a retry. ``timeout`` (default 60 s)
bounds each attempt as a whole: connecting, sending, waiting for and reading the answer.

Other answers are not retried. 401, 403 and 404 (bad key, no access, unknown model or path)
and redirects (3xx) hold for every prompt, so they stop the call (``PromptFailed(stop=True)``).
Any other 4xx (400 for a prompt that is too long, 422 ...) and an answer the runner cannot read
fail that prompt only (``PromptFailed(permanent=True)``).

The API key
-----------
The key is read from the environment variable named by ``api_key_env`` (default
``OPENAI_API_KEY``; surrounding whitespace is dropped, and a key with characters a header
cannot carry stops the call without being shown) when each request is sent, and only put into
its ``Authorization`` header. It is never stored on the object, so it is in no pickle or repr,
and :meth:`Transport.scrub` removes it from any text: error bodies here, and (in the runner)
every generated text and error message. An unset or empty variable sends no header, which is
right for local servers. Proxy settings from the environment (``HTTPS_PROXY`` ...) are not used.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import random
import ssl
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from robustness.core.errors import ModelError
from robustness.runners.openai.jobs import (
    Cancelled,
    Job,
    PromptFailed,
    RequestStats,
    Retryable,
    one_line,
    retry_after,
)
from robustness.runners.openai.parsing import MalformedAnswer

__all__ = ["PATHS", "Transport"]

logger = logging.getLogger("robustness.runners.openai")

#: Statuses worth retrying: time-out, conflict, too early, rate limit; every 5xx too.
RETRY_STATUSES = frozenset({408, 409, 425, 429})
#: Statuses that hold for every prompt: stop the call instead of failing prompt by prompt.
STOP_STATUSES = frozenset({401, 403, 404})
#: Errors that mean an idle keep-alive connection was closed by the server.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)
PATHS = {"chat": "/chat/completions", "completions": "/completions"}


# --------------------------------------------------------------------------- the transport
class Transport:
    """Requests to one server: URL, key, time-out, retries and the per-thread connections.

    Parameters
    ----------
    base_url
        The API root as OpenAI's client takes it (``http://127.0.0.1:8000/v1``); credentials
        in it are refused.
    model
        The server-side model name, for messages.
    api_key_env
        Environment variable holding the key (None: no key).
    timeout, max_retries, backoff, max_backoff, seed
        See the module docstring.
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key_env: str | None,
        timeout: float,
        max_retries: int,
        backoff: float,
        max_backoff: float,
        seed: int,
    ) -> None:
        self.model = model
        self.api_key_env = api_key_env or None
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.seed = int(seed)
        parts = urlsplit(str(base_url).strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ModelError(
                "base_url must be an http:// or https:// URL with a host, such as "
                "http://127.0.0.1:8000/v1."
            )
        if parts.username is not None or parts.password is not None:
            raise ModelError(
                "base_url must not carry credentials; put the API key in the "
                "environment variable named by api_key_env."
            )
        try:
            port = parts.port
        except ValueError as err:
            raise ModelError("base_url has an invalid port.") from err
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = port or (443 if parts.scheme == "https" else 80)
        self.path = parts.path.rstrip("/")
        self.query = f"?{parts.query}" if parts.query else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        #: The URL as shown in messages: no credentials, no query.
        self.url = f"{self.scheme}://{host}:{self.port}{self.path}"
        #: Host and path without scheme, port, credentials or query.
        self.default_server_id = f"{host}{self.path}"
        self._init_state()

    def _init_state(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []
        self._stats = RequestStats()

    def __getstate__(self) -> dict[str, Any]:
        """Settings only (no connections, locks or counters)."""
        state = dict(self.__dict__)
        for name in ("_lock", "_local", "_connections", "_stats"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_state()

    # ----------------------------------------------------------------- key and counters
    def api_key(self) -> str | None:
        """The key, read from the environment now (None when unset or empty)."""
        if not self.api_key_env:
            return None
        return os.environ.get(self.api_key_env, "").strip() or None

    def scrub(self, text: str, min_length: int = 1) -> str:
        """``text`` with every occurrence of the key replaced by ``[key]`` (keys shorter than
        ``min_length`` are left: placeholders such as ``EMPTY`` are no secret)."""
        key = self.api_key()
        if key and len(key) >= min_length:
            text = text.replace(key, "[key]")
        return text

    @property
    def stats(self) -> RequestStats:
        """A snapshot of the request counters."""
        with self._lock:
            return RequestStats(**{**self._stats.__dict__, "reasons": dict(self._stats.reasons)})

    def reset_stats(self) -> None:
        """Set every counter back to zero."""
        with self._lock:
            self._stats = RequestStats()

    def count(self, reason: str | None = None, **increments: int) -> None:
        """Add to the counters (and to ``reasons[reason]``)."""
        with self._lock:
            values = {k: getattr(self._stats, k) + v for k, v in increments.items()}
            reasons = dict(self._stats.reasons)
            if reason is not None:
                reasons[reason] = reasons.get(reason, 0) + 1
            self._stats = RequestStats(**{**self._stats.__dict__, **values, "reasons": reasons})

    # ----------------------------------------------------------------- connections
    def _connection(self, remaining: float) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection and whether it is reused (False: opened now)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and conn.sock is not None:
            conn.sock.settimeout(remaining)
            return conn, True
        if conn is None:
            if self.scheme == "https":
                conn = http.client.HTTPSConnection(
                    self.host, self.port, timeout=remaining, context=ssl.create_default_context()
                )
            else:
                conn = http.client.HTTPConnection(self.host, self.port, timeout=remaining)
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        conn.timeout = remaining
        return conn, False

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Close every connection (they reopen on the next request)."""
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()
        self._local = threading.local()

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "robustness-openai-runner",
        }
        key = self.api_key()
        if key:
            if not key.isascii() or not key.isprintable():
                # http.client would reject the header with the key in its message.
                raise PromptFailed(
                    f"the API key in the environment variable "
                    f"{self.api_key_env} has characters an HTTP header cannot "
                    "carry",
                    stop=True,
                )
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def exchange(self, endpoint: str, payload: bytes) -> tuple[int, Mapping[str, str], bytes]:
        """One HTTP exchange within ``timeout``; reopens a stale keep-alive connection once."""
        deadline = time.monotonic() + self.timeout
        headers = self._headers()
        path = f"{self.path}{PATHS[endpoint]}{self.query}"
        for fresh_retry in (False, True):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            conn, reused = self._connection(remaining)
            try:
                conn.request("POST", path, body=payload, headers=headers)
                response = conn.getresponse()
            except _STALE:
                self._drop_connection()
                if reused and not fresh_retry:
                    self.count(reconnects=1)
                    continue
                raise
            except BaseException:
                self._drop_connection()
                raise
            try:
                chunks = []
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError
                    if conn.sock is not None:
                        conn.sock.settimeout(remaining)
                    chunk = response.read(1 << 16)
                    if not chunk:
                        break
                    chunks.append(chunk)
            except BaseException:
                self._drop_connection()
                raise
            if response.will_close:
                self._drop_connection()
            return response.status, dict(response.getheaders()), b"".join(chunks)
        raise http.client.RemoteDisconnected("no answer")  # pragma: no cover (unreachable)

    # ----------------------------------------------------------------- one request
    def attempt(self, job: Job) -> Any:
        """Send ``job`` once; return its parsed result or raise what went wrong."""
        payload = json.dumps(job.body, ensure_ascii=False).encode("utf-8")
        started = time.perf_counter()
        try:
            status, headers, raw = self.exchange(job.endpoint, payload)
        except TimeoutError as err:
            raise Retryable("timeout", detail=f"no answer within {self.timeout:g} s") from err
        except ssl.SSLCertVerificationError as err:
            raise PromptFailed(
                f"the TLS certificate of {self.url} could not be verified.", stop=True
            ) from err
        except (OSError, http.client.HTTPException) as err:
            raise Retryable("connection", detail=f"connection error {type(err).__name__}") from err
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        if status == 429 or status >= 500 or status in RETRY_STATUSES:
            raise Retryable(f"http {status}", retry_after(headers), detail=f"HTTP {status}")
        detail = self.detail(raw)
        if status in STOP_STATUSES:
            if status == 404:
                advice = "check base_url and the model name"
            elif self.api_key_env:
                advice = f"check the key in the environment variable {self.api_key_env}"
            else:
                advice = "check the server's access settings"
            raise PromptFailed(
                f"the openai backend stopped: {self.url} answered HTTP "
                f"{status} for model {self.model!r} ({detail})",
                stop=True,
                advice=advice,
            )
        if status >= 400:
            raise PromptFailed(f"{self.url} answered HTTP {status} ({detail}).", permanent=True)
        if not 200 <= status < 300:
            raise PromptFailed(
                f"the openai backend stopped: {self.url} answered HTTP {status} ({detail})",
                stop=True,
                advice="check base_url",
            )
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise Retryable("malformed") from err
        if not isinstance(data, Mapping):
            raise Retryable("malformed")
        if data.get("error") and not data.get("choices"):
            raise PromptFailed(f"{self.url} answered with an error ({detail}).", permanent=True)
        try:
            return job.parse(dict(data), elapsed_ms)
        except MalformedAnswer:
            raise Retryable("malformed") from None
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
            raise PromptFailed(
                f"{self.url} gave an answer this runner cannot read ({type(err).__name__})",
                permanent=True,
            ) from None

    def detail(self, raw: bytes) -> str:
        """A short, key-free description of an error body."""
        text = raw.decode("utf-8", errors="replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, Mapping):
            inner = data.get("error", data.get("detail", data.get("message")))
            if isinstance(inner, Mapping):
                inner = inner.get("message", inner)
            if inner is not None:
                text = inner if isinstance(inner, str) else json.dumps(inner)
        return one_line(self.scrub(text)) or "no detail"

    def perform(self, job: Job, stop: threading.Event) -> Any:
        """Send ``job`` until it succeeds, fails for good, or ``stop`` is set."""
        rng = random.Random(f"{self.seed}\x00{job.seed_text}")
        attempt = 0
        while True:
            if stop.is_set():
                raise Cancelled
            attempt += 1
            self.count(attempts=1)
            try:
                result = self.attempt(job)
            except Retryable as failure:
                self.count(reason=failure.reason)
                if attempt > self.max_retries:
                    self.count(failed=1)
                    last = failure.detail or failure.reason
                    raise PromptFailed(
                        f"the openai backend stopped: a request to {self.url} failed "
                        f"{attempt} times in a row (last: {last})",
                        stop=True,
                        advice="check the server, then run again to resume from the cache",
                    ) from None
                delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
                delay *= 0.5 + 0.5 * rng.random()
                if failure.retry_after is not None:
                    delay = max(delay, min(self.max_backoff, failure.retry_after))
                self.count(retries=1)
                logger.info(
                    "retrying a request to %s in %.2f s after %s (attempt %d of %d)",
                    self.url,
                    delay,
                    failure.detail or failure.reason,
                    attempt + 1,
                    self.max_retries + 1,
                )
                if stop.wait(delay):
                    raise Cancelled from None
                continue
            except PromptFailed:
                self.count(failed=1)
                raise
            except ModelError as err:
                self.count(failed=1)
                raise PromptFailed(self.scrub(str(err)).rstrip("."), permanent=True) from None
            self.count(requests=1)
            return result
