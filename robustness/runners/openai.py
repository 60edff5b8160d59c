"""The ``openai`` backend: any OpenAI-compatible HTTP server behind the runner protocol.

Works with vLLM's server, llama.cpp's ``llama-server``, ``transformers serve`` and hosted APIs:
anything that answers ``POST {base_url}/chat/completions`` and ``POST {base_url}/completions``
the way OpenAI's API does. ``base_url`` is given as OpenAI's own client takes it, ending in the
version, e.g. ``http://127.0.0.1:8000/v1``. Only the standard library is used (``http.client``
over keep-alive connections), so the backend adds no dependency.

Which endpoint a prompt goes to
-------------------------------
``chat="auto"`` (the default) sends chat messages to ``/chat/completions`` (the server applies
the model's chat template) and plain text to ``/completions`` (the text is the whole prompt).
``chat="always"`` also sends text to the chat endpoint, as one user message; ``chat="never"``
joins the contents of chat messages with blank lines and sends everything to ``/completions``
(for base models without a chat template). ``run`` sends messages whenever ``chat`` is not
``"never"`` (``has_chat_template`` says so).

What each mode needs from the server
------------------------------------
- ``generate`` (mode ``generate``): one request per prompt with ``temperature = 0`` and
  ``max_tokens = max_new_tokens``. Every compatible server can do this. ``n_tokens`` is the
  server's ``usage.completion_tokens`` (0 when the server reports no usage).
- ``score_options`` (mode ``choice``): one request per prompt with ``max_tokens = 1`` asking for
  the ``top_logprobs`` (default 20) most likely first tokens (``logprobs: true, top_logprobs: K``
  on the chat endpoint, ``logprobs: K`` on the completions endpoint). A label's probability is
  the sum of the probabilities of the listed tokens that spell it with or without a leading
  space (``"B"``, ``" B"``; the byte-level markers ``Ġ`` and ``▁`` count as a space), the same
  rule as the local backend; labels are renormalised over the labels, a label missing from the
  list counts as probability 0 (its true probability is below the K-th token's), and a prompt
  with no label in the list is an error for that prompt. ``top_prob`` / ``top_token`` are the
  most likely listed token. Only single-token spellings can be scored this way: labels such as
  ``(A)`` whose tokens share a first token need the local backend. vLLM allows 20 by default
  (``--max-logprobs``); OpenAI's own completions endpoint allows 5, so set ``top_logprobs=5``
  there. A server that returns no
  ``top_logprobs`` (``transformers serve`` ignores the fields) stops the call with one sentence
  saying that only ``generate`` mode works with it; the runner then refuses further choice calls
  without sending anything (until :meth:`OpenAIRunner.reset`).
- ``loglikelihood`` (mode ``cloze``, POSIX): ``/completions`` with the prompt and response as one
  text, ``echo: true``, ``logprobs: 1`` and ``max_tokens: 1``; the response's tokens are those
  whose text ends after the prompt's last character (a token spanning the boundary counts as a
  response token). Chat prompts cannot be scored this way (a chat endpoint cannot echo), so they
  are refused unless ``chat="never"``; a server that does not echo logprobs (``transformers
  serve``, hosted chat-only APIs) stops with one sentence, as above.

Concurrency
-----------
Each call runs its requests on a pool of ``concurrency`` threads (default 8), each keeping its
own keep-alive connection. Threads, not asyncio: the runner protocol is synchronous and is
called from synchronous code (the cache, the study loop, possibly inside a caller's own event
loop such as Jupyter's), the work is waiting on sockets, which releases the GIL, and at tens of
requests in flight a thread costs nothing next to a model's latency; an event loop would have
to be started inside every call and would need an async HTTP client as a new dependency. The
pool only bounds how many requests are in flight: the server does the batching (vLLM batches
whatever arrives concurrently). Results are handed to ``on_batch`` from the calling thread as
soon as they complete, at most ``batch_size`` per call, so the cache stores each one at once
and an interrupted run loses only requests still in flight.

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
and redirects (3xx) hold for every prompt, so they stop the call at once. Any other 4xx (400
for a prompt that is too long, 422 ...), an answer the runner cannot read, and a choice answer
whose top tokens hold none of the labels fail that prompt only: the call finishes its other
prompts, hands them to ``on_batch``, then raises one ModelError naming the first failed prompt
(``run`` then asks prompt by prompt, so each failed prompt becomes a row with its reason), and
a repeated request for a failed prompt fails again without being sent.

Stopping
--------
When one request has failed ``max_retries + 1`` times, the call stops: queued requests are
cancelled, requests in flight finish their current attempt (and are handed over if they
succeeded), and one ModelError sentence says which server failed how often, with the last
reason and how many prompts were answered. For ``stop_cooldown`` seconds afterwards (default
60) every call fails at once with the same sentence, without sending anything: ``run`` falls
back to asking prompt by prompt after a failed call, and that must not mean thousands of
further retries against a dead server; the prompts become rows with the error as their reason,
and running the study again resumes from the cache. :meth:`OpenAIRunner.reset` clears the stop.

Identity and the cache
----------------------
``identity()`` holds what determines the numbers: the server-side model name, ``server_id``,
the endpoint each kind of prompt goes to (from ``chat``), the decoding parameters
(temperature 0, ``top_logprobs``), ``extra_body`` and the request format version. It leaves out
what does not (``concurrency``, ``batch_size``, ``timeout``, retries) and, above all, the port:
``server_id`` defaults to the host and path of ``base_url`` without scheme, port, credentials or
query (``127.0.0.1/v1``, ``api.openai.com/v1``), so a run interrupted against a server that
comes back on another port resumes from the cache without paying twice. Set ``server_id``
yourself to share a cache between hosts serving the same weights, or to tell apart two servers
on one host that serve different weights under the same model name.

The API key
-----------
The key is read from the environment variable named by ``api_key_env`` (default
``OPENAI_API_KEY``; surrounding whitespace is dropped, and a key with characters a header
cannot carry stops the call without being shown) when each request is sent, and only put into
its ``Authorization`` header;
the runner never stores it, so it is not in ``identity()``, cache keys, tables, pickles or the
repr, and every error and log message is scrubbed of it (a server that echoes the header back in
an error body does not leak it either). An unset or empty variable sends no header, which is
right for local servers. Credentials in ``base_url`` itself are refused. Proxy settings from the
environment (``HTTPS_PROXY`` ...) are not used.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import os
import random
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from robustness.errors import ModelError
from robustness.runners.base import (
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
    canonical_prompt,
    check_label_sets,
    check_labels,
    check_max_new_tokens,
)

logger = logging.getLogger(__name__)

CHAT_MODES = ("auto", "always", "never")
#: Bump when the requests this runner sends change in a way that changes results.
REQUEST_FORMAT = 1
#: Statuses worth retrying: time-out, conflict, too early, rate limit; every 5xx too.
RETRY_STATUSES = frozenset({408, 409, 425, 429})
#: Statuses that hold for every prompt: stop the call instead of failing prompt by prompt.
STOP_STATUSES = frozenset({401, 403, 404})
#: Errors that mean an idle keep-alive connection was closed by the server.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)
_PATHS = {"chat": "/chat/completions", "completions": "/completions"}
_SPACE_MARKERS = ("Ġ", "▁")


# --------------------------------------------------------------------------- outcomes
class _Retryable(Exception):
    """One attempt failed in a way a later attempt may not."""

    def __init__(
        self, reason: str, retry_after: float | None = None, detail: str | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.detail = detail


class _PromptFailed(Exception):
    """A request failed for good; ``stop`` means it would fail for every prompt too."""

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


class _Cancelled(Exception):
    """The call stopped before this request could finish."""


@dataclass(frozen=True)
class RequestStats:
    """Counters since the runner was made (or :meth:`OpenAIRunner.reset`).

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
class _Job:
    """One request of a call: where it goes, its body, and how to read the answer."""

    index: int
    endpoint: str
    body: dict[str, Any]
    parse: Callable[[dict[str, Any], float], Any]
    seed_text: str = ""


# --------------------------------------------------------------------------- parsing helpers
def token_text(token: str) -> str:
    """A listed token as text: a leading byte-level space marker (``Ġ``, ``▁``) becomes a
    space, so servers that list raw vocabulary entries match labels too."""
    for marker in _SPACE_MARKERS:
        if token.startswith(marker):
            return " " + token[len(marker) :]
    return token


def first_top_logprobs(endpoint: str, data: Mapping[str, Any]) -> list[tuple[str, float]] | None:
    """The ``(token, logprob)`` list of the first generated position, most likely first, or
    None when the answer carries no top logprobs (the server ignored the request for them).

    Reads ``choices[0].logprobs.content[0].top_logprobs`` (chat) or
    ``choices[0].logprobs.top_logprobs[0]`` (completions; a ``{token: logprob}`` dict, or a
    list of ``{"token", "logprob"}`` entries as some servers write it).
    """
    choices = data.get("choices") or []
    logprobs = choices[0].get("logprobs") if choices and isinstance(choices[0], Mapping) else None
    if not isinstance(logprobs, Mapping):
        return None
    entries: Any
    if endpoint == "chat":
        content = logprobs.get("content")
        if not isinstance(content, list) or not content or not isinstance(content[0], Mapping):
            return None
        entries = content[0].get("top_logprobs")
    else:
        tops = logprobs.get("top_logprobs")
        if not isinstance(tops, list) or not tops:
            return None
        entries = tops[0]
    pairs: list[tuple[str, float]] = []
    if isinstance(entries, Mapping):
        pairs = [(str(tok), float(lp)) for tok, lp in entries.items() if lp is not None]
    elif isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, Mapping) and entry.get("logprob") is not None:
                pairs.append((str(entry.get("token", "")), float(entry["logprob"])))
    if not pairs:
        return None
    pairs.sort(key=lambda p: -p[1])
    return pairs


def label_scores(
    top: Sequence[tuple[str, float]], labels: Sequence[str]
) -> tuple[tuple[float, ...], tuple[float, ...], float, str]:
    """Label probabilities from one position's top logprobs: (renormalised probs, raw label
    log-probs, top token probability, top token).

    A label's probability is the sum over listed tokens equal to the label or to the label
    after one space (disjoint events, so summed, as in the local backend); a label with no
    listed spelling gets log-probability ``-inf``. Raises ModelError when no label is listed.
    """
    mass = [0.0 for _ in labels]
    spellings = {}
    for i, label in enumerate(labels):
        spellings[label] = i
        spellings[" " + label] = i
    for token, logprob in top:
        index = spellings.get(token_text(token))
        if index is not None:
            mass[index] += math.exp(logprob)
    if not any(m > 0.0 for m in mass):
        listed = ", ".join(repr(token_text(t)) for t, _ in top[:5])
        raise ModelError(
            f"none of the labels {list(labels)!r} is among the server's "
            f"{len(top)} most likely first tokens (the first are {listed})."
        )
    total = sum(mass)
    probs = tuple(m / total for m in mass)
    label_lp = tuple(math.log(m) if m > 0.0 else -math.inf for m in mass)
    best_token, best_lp = max(top, key=lambda p: p[1])
    return probs, label_lp, math.exp(best_lp), token_text(best_token)


def echo_loglikelihood(
    data: Mapping[str, Any], prompt_chars: int, full_chars: int
) -> LogLikelihood | None:
    """Sum the echoed log-probabilities of the response's tokens, or None when the answer
    carries no echoed logprobs.

    ``prompt_chars`` / ``full_chars`` are the lengths of the prompt and of prompt + response.
    Response tokens are those ending after the prompt and starting before the end of the
    response (a token spanning the boundary counts); offsets are ``text_offset`` when given,
    else the running length of the token texts.
    """
    choices = data.get("choices") or []
    logprobs = choices[0].get("logprobs") if choices and isinstance(choices[0], Mapping) else None
    if not isinstance(logprobs, Mapping):
        return None
    tokens = logprobs.get("tokens")
    values = logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        return None
    offsets = logprobs.get("text_offset")
    if not isinstance(offsets, list) or len(offsets) != len(tokens):
        offsets, at = [], 0
        for token in tokens:
            offsets.append(at)
            at += len(str(token))
    ends = [*offsets[1:], offsets[-1] + len(str(tokens[-1]))] if tokens else []
    if not ends or ends[-1] < full_chars:
        return None  # not an echo of the whole text
    total, count = 0.0, 0
    for start, end, value in zip(offsets, ends, values, strict=True):
        if end > prompt_chars and start < full_chars:
            if value is None:
                raise ModelError(
                    "the server gave no log-probability for the response's first "
                    "token (an empty prompt cannot condition it)."
                )
            total += float(value)
            count += 1
    return LogLikelihood(logprob=total, n_tokens=count)


def _generation(endpoint: str, data: Mapping[str, Any], latency_ms: float) -> Generation:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise _Retryable("malformed")
    if endpoint == "chat":
        message = choices[0].get("message")
        text = message.get("content") if isinstance(message, Mapping) else None
    else:
        text = choices[0].get("text")
    usage = data.get("usage")
    n = usage.get("completion_tokens") if isinstance(usage, Mapping) else None
    return Generation(
        text=str(text or ""), n_tokens=int(n) if isinstance(n, int) else 0, latency_ms=latency_ms
    )


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# --------------------------------------------------------------------------- the runner
class OpenAIRunner:
    """An OpenAI-compatible server behind the runner protocol (see the module docstring for
    endpoints, concurrency, retries, stopping, identity and key handling).

    ``model`` is the model name the server expects; ``base_url`` the API root (``.../v1``).
    ``top_logprobs`` is how many first tokens choice mode asks for (20 is OpenAI's maximum),
    ``extra_body`` extra JSON fields sent with every request (part of the identity: put no
    secret there), ``seed`` seeds the retry jitter, ``backoff``/``max_backoff`` shape the
    waits, ``stop_cooldown`` is how long a stop holds.
    """

    backend = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 5,
        chat: str | bool = "auto",
        batch_size: int = 16,
        server_id: str | None = None,
        top_logprobs: int = 20,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        stop_cooldown: float = 60.0,
        seed: int = 0,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ModelError("the openai backend needs the server's model name as model.")
        if chat is True:
            chat = "always"
        elif chat is False:
            chat = "never"
        if chat not in CHAT_MODES:
            raise ModelError(f"unknown chat setting {chat!r}: use auto, always or never.")
        for name, value, low in (
            ("concurrency", concurrency, 1),
            ("batch_size", batch_size, 1),
            ("max_retries", max_retries, 0),
            ("top_logprobs", top_logprobs, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ModelError(f"{name} must be an integer of at least {low}, got {value!r}.")
        for name, number in (
            ("timeout", timeout),
            ("backoff", backoff),
            ("max_backoff", max_backoff),
            ("stop_cooldown", stop_cooldown),
        ):
            if (
                isinstance(number, bool)
                or not isinstance(number, int | float)
                or not (number >= 0 and math.isfinite(number))
                or (name == "timeout" and number == 0)
            ):
                raise ModelError(
                    f"{name} must be a non-negative number of seconds (timeout "
                    f"positive), got {number!r}."
                )
        self.model_id = model
        self._set_url(base_url)
        self.api_key_env = api_key_env or None
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.chat = str(chat)
        self.batch_size = batch_size
        self.server_id = server_id if server_id is not None else self._default_server_id
        self.top_logprobs = top_logprobs
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.stop_cooldown = float(stop_cooldown)
        self.seed = int(seed)
        try:
            self.extra_body = json.loads(json.dumps(dict(extra_body or {}), allow_nan=False))
        except (TypeError, ValueError) as err:
            raise ModelError("extra_body must be plain JSON data.") from err
        self._init_state()

    # ----------------------------------------------------------------- setup
    def _set_url(self, base_url: str) -> None:
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
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = port or (443 if parts.scheme == "https" else 80)
        self._path = parts.path.rstrip("/")
        self._query = f"?{parts.query}" if parts.query else ""
        host = f"[{self._host}]" if ":" in self._host else self._host
        #: The URL as shown in messages: no credentials, no query.
        self.url = f"{self._scheme}://{host}:{self._port}{self._path}"
        self._default_server_id = f"{host}{self._path}"

    def _init_state(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []
        self._pool: ThreadPoolExecutor | None = None
        self._stats = RequestStats()
        #: Stops in force, by call kind ("*": every call): (message, monotonic end).
        self._stopped: dict[str, tuple[str, float]] = {}
        self._failed_prompts: dict[str, str] = {}

    def __getstate__(self) -> dict[str, Any]:
        """Settings only (no pool, connections, locks or counters), so a runner can be sent
        to another process; the key is read there from that process's environment."""
        state = dict(self.__dict__)
        for name in (
            "_lock",
            "_local",
            "_connections",
            "_pool",
            "_stats",
            "_stopped",
            "_failed_prompts",
        ):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_state()

    def __repr__(self) -> str:
        return (
            f"OpenAIRunner(model={self.model_id!r}, server_id={self.server_id!r}, "
            f"chat={self.chat!r}, concurrency={self.concurrency})"
        )

    def close(self) -> None:
        """Stop the thread pool and close every connection (the runner can still be used:
        both come back on the next call)."""
        with self._lock:
            pool, self._pool = self._pool, None
            connections, self._connections = self._connections, []
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        for conn in connections:
            conn.close()
        self._local = threading.local()

    def __enter__(self) -> OpenAIRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset(self) -> None:
        """Forget a stop, the prompts that failed for good, and the counters."""
        with self._lock:
            self._stopped.clear()
            self._failed_prompts.clear()
            self._stats = RequestStats()

    @property
    def stats(self) -> RequestStats:
        """A snapshot of the request counters."""
        with self._lock:
            return RequestStats(**{**self._stats.__dict__, "reasons": dict(self._stats.reasons)})

    @property
    def has_chat_template(self) -> bool:
        """Whether callers should send chat messages (the server applies the template)."""
        return self.chat != "never"

    def identity(self) -> dict[str, Any]:
        """What determines this runner's numbers, JSON-able (see "Identity and the cache")."""
        return {
            "backend": self.backend,
            "model_id": self.model_id,
            "server_id": self.server_id,
            "chat": self.chat,
            "endpoints": {"text": self._endpoint_for(False), "messages": self._endpoint_for(True)},
            "temperature": 0.0,
            "top_logprobs": self.top_logprobs,
            "extra_body": self.extra_body,
            "request_format": REQUEST_FORMAT,
        }

    # ----------------------------------------------------------------- requests
    def _endpoint_for(self, messages: bool) -> str:
        if messages:
            return "completions" if self.chat == "never" else "chat"
        return "chat" if self.chat == "always" else "completions"

    def _route(self, prompt: Prompt) -> tuple[str, dict[str, Any], str | None]:
        """(endpoint, prompt fields of the body, the prompt text on the completions path)."""
        data = canonical_prompt(prompt)
        if isinstance(data, str):
            if self.chat == "always":
                return "chat", {"messages": [{"role": "user", "content": data}]}, None
            return "completions", {"prompt": data}, data
        if self.chat == "never":
            text = "\n\n".join(m["content"] for m in data)
            return "completions", {"prompt": text}, text
        return "chat", {"messages": data}, None

    def _body(self, fields: Mapping[str, Any], **params: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_id,
            **fields,
            "temperature": 0.0,
            "stream": False,
            **params,
        }
        body.update(self.extra_body)
        return body

    def _api_key(self) -> str | None:
        if not self.api_key_env:
            return None
        return os.environ.get(self.api_key_env, "").strip() or None

    def _scrub(self, text: str) -> str:
        """``text`` without the API key (servers may echo headers back in error bodies)."""
        key = self._api_key()
        if key:
            text = text.replace(key, "[key]")
        return text

    def _count(self, reason: str | None = None, **increments: int) -> None:
        with self._lock:
            values = {k: getattr(self._stats, k) + v for k, v in increments.items()}
            reasons = dict(self._stats.reasons)
            if reason is not None:
                reasons[reason] = reasons.get(reason, 0) + 1
            self._stats = RequestStats(**{**self._stats.__dict__, **values, "reasons": reasons})

    def _connection(self, remaining: float) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection and whether it is reused (False: opened now)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and conn.sock is not None:
            conn.sock.settimeout(remaining)
            return conn, True
        if conn is None:
            if self._scheme == "https":
                conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=remaining, context=ssl.create_default_context()
                )
            else:
                conn = http.client.HTTPConnection(self._host, self._port, timeout=remaining)
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        conn.timeout = remaining
        return conn, False

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()

    def _exchange(self, endpoint: str, payload: bytes) -> tuple[int, Mapping[str, str], bytes]:
        """One HTTP exchange within ``timeout``; reopens a stale keep-alive connection once."""
        deadline = time.monotonic() + self.timeout
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "robustness-openai-runner",
        }
        key = self._api_key()
        if key:
            if not key.isascii() or not key.isprintable():
                # http.client would reject the header with the key in its message.
                raise _PromptFailed(
                    f"the API key in the environment variable "
                    f"{self.api_key_env} has characters an HTTP header cannot "
                    "carry",
                    stop=True,
                )
            headers["Authorization"] = f"Bearer {key}"
        path = f"{self._path}{_PATHS[endpoint]}{self._query}"
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
                    self._count(reconnects=1)
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
        raise http.client.RemoteDisconnected  # pragma: no cover (the loop returns or raises)

    def _attempt(self, job: _Job) -> Any:
        """Send ``job`` once; return its parsed result or raise what went wrong."""
        payload = json.dumps(job.body, ensure_ascii=False).encode("utf-8")
        started = time.perf_counter()
        try:
            status, headers, raw = self._exchange(job.endpoint, payload)
        except TimeoutError as err:
            raise _Retryable("timeout", detail=f"no answer within {self.timeout:g} s") from err
        except ssl.SSLCertVerificationError as err:
            raise _PromptFailed(
                f"the TLS certificate of {self.url} could not be verified.", stop=True
            ) from err
        except (OSError, http.client.HTTPException) as err:
            raise _Retryable("connection", detail=f"connection error {type(err).__name__}") from err
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        if status == 429 or status >= 500 or status in RETRY_STATUSES:
            raise _Retryable(f"http {status}", _retry_after(headers), detail=f"HTTP {status}")
        detail = self._detail(raw)
        if status in STOP_STATUSES:
            if status == 404:
                advice = "check base_url and the model name"
            elif self.api_key_env:
                advice = f"check the key in the environment variable {self.api_key_env}"
            else:
                advice = "check the server's access settings"
            raise _PromptFailed(
                f"the openai backend stopped: {self.url} answered HTTP "
                f"{status} for model {self.model_id!r} ({detail})",
                stop=True,
                advice=advice,
            )
        if status >= 400:
            raise _PromptFailed(f"{self.url} answered HTTP {status} ({detail}).", permanent=True)
        if not 200 <= status < 300:
            raise _PromptFailed(
                f"the openai backend stopped: {self.url} answered HTTP {status} ({detail})",
                stop=True,
                advice="check base_url",
            )
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise _Retryable("malformed") from err
        if not isinstance(data, Mapping):
            raise _Retryable("malformed")
        if data.get("error") and not data.get("choices"):
            raise _PromptFailed(
                f"{self.url} answered with an error ({self._detail(raw)}).", permanent=True
            )
        try:
            return job.parse(dict(data), elapsed_ms)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
            raise _PromptFailed(
                f"{self.url} gave an answer this runner cannot read ({type(err).__name__})",
                permanent=True,
            ) from None

    def _detail(self, raw: bytes) -> str:
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
        return _one_line(self._scrub(text)) or "no detail"

    def _perform(self, job: _Job, stop: threading.Event) -> Any:
        """Send ``job`` until it succeeds, fails for good, or the call stops."""
        rng = random.Random(f"{self.seed}\x00{job.seed_text}")
        attempt = 0
        while True:
            if stop.is_set():
                raise _Cancelled
            attempt += 1
            self._count(attempts=1)
            try:
                result = self._attempt(job)
            except _Retryable as failure:
                self._count(reason=failure.reason)
                if attempt > self.max_retries:
                    self._count(failed=1)
                    last = failure.detail or failure.reason
                    raise _PromptFailed(
                        f"the openai backend stopped: a request to {self.url} failed "
                        f"{attempt} times in a row (last: {last})",
                        stop=True,
                        advice="check the server, then run again to resume from the cache",
                    ) from None
                delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
                delay *= 0.5 + 0.5 * rng.random()
                if failure.retry_after is not None:
                    delay = max(delay, min(self.max_backoff, failure.retry_after))
                self._count(retries=1)
                logger.info(
                    "retrying a request to %s in %.2f s after %s (attempt %d of %d)",
                    self.url,
                    delay,
                    failure.detail or failure.reason,
                    attempt + 1,
                    self.max_retries + 1,
                )
                if stop.wait(delay):
                    raise _Cancelled from None
                continue
            except _PromptFailed:
                self._count(failed=1)
                raise
            except ModelError as err:
                self._count(failed=1)
                raise _PromptFailed(self._scrub(str(err)).rstrip("."), permanent=True) from None
            self._count(requests=1)
            return result

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.concurrency, thread_name_prefix="openai-runner"
                )
            return self._pool

    def _check_stopped(self, kind: str) -> None:
        now = time.monotonic()
        with self._lock:
            for key in [k for k, (_, until) in self._stopped.items() if now >= until]:
                del self._stopped[key]
            stopped = self._stopped.get("*") or self._stopped.get(kind)
        if stopped is not None:
            raise ModelError(
                f"{stopped[0]}; no request was sent (call reset() to try again at once)."
            )

    def _run(
        self, kind: str, jobs: Sequence[_Job], n: int, on_batch: BatchCallback | None
    ) -> list[Any]:
        """Run the ``kind`` call's ``jobs`` on the pool, hand results to ``on_batch`` as they
        complete, and raise one ModelError for a stop or for prompts that failed for good."""
        self._check_stopped(kind)
        results: list[Any] = [None] * n
        failures: dict[int, str] = {}
        todo: list[_Job] = []
        for job in jobs:
            known = self._failed_prompts.get(job.seed_text)
            if known is not None:
                failures[job.index] = known
            else:
                todo.append(job)
        stop = threading.Event()
        stopped: _PromptFailed | None = None
        answered = 0
        futures: dict[Future[Any], _Job] = {}
        try:
            pool = self._executor()
            for job in todo:
                futures[pool.submit(self._perform, job, stop)] = job
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                ready: list[int] = []
                for future in sorted(done, key=lambda f: futures[f].index):
                    job = futures[future]
                    if future.cancelled():
                        continue
                    try:
                        results[job.index] = future.result()
                    except _Cancelled:
                        continue
                    except _PromptFailed as failure:
                        if failure.stop:
                            if stopped is None:
                                stopped = failure
                                stop.set()
                                for other in pending:
                                    other.cancel()
                        else:
                            failures[job.index] = failure.message
                            if failure.permanent:
                                self._failed_prompts[job.seed_text] = failure.message
                        continue
                    ready.append(job.index)
                answered += len(ready)
                if on_batch is not None:
                    for start in range(0, len(ready), self.batch_size):
                        chunk = ready[start : start + self.batch_size]
                        on_batch(chunk, [results[i] for i in chunk])
        except BaseException:
            stop.set()
            for future in futures:
                future.cancel()
            raise
        if stopped is not None:
            message = self._scrub(stopped.message.rstrip("."))
            # a missing capability stops this kind of call for good; a failing server, all.
            until = math.inf if stopped.permanent else time.monotonic() + self.stop_cooldown
            with self._lock:
                self._stopped[kind if stopped.permanent else "*"] = (message, until)
            logger.warning("%s", message)
            if stopped.advice:
                raise ModelError(
                    f"{message}, after answering {answered} of {n} prompts; "
                    f"{self._scrub(stopped.advice)}."
                )
            raise ModelError(f"{message}.")
        if failures:
            first = min(failures)
            others = len(failures) - 1
            more = (
                f" ({others} other prompt{'s' if others != 1 else ''} failed too)" if others else ""
            )
            raise ModelError(f"prompt {first}: {failures[first].rstrip('.')}{more}.")
        return results

    def _capability_stop(self, what: str, mode_hint: str) -> _PromptFailed:
        return _PromptFailed(
            f"the server at {self.url} returned no {what} for model "
            f"{self.model_id!r}, so {mode_hint} cannot run on it; use "
            'mode = "generate" for this model (only generate mode works '
            "with this server)",
            stop=True,
            permanent=True,
        )

    # ----------------------------------------------------------------- protocol
    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int,
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[Generation]:
        """Greedy (temperature 0) continuation of each prompt, one request per prompt."""
        check_max_new_tokens(max_new_tokens)
        jobs = []
        for i, prompt in enumerate(prompts):
            endpoint, fields, _ = self._route(prompt)
            body = self._body(fields, max_tokens=max_new_tokens)

            def parse(data: dict[str, Any], ms: float, endpoint: str = endpoint) -> Generation:
                return _generation(endpoint, data, ms)

            jobs.append(_Job(i, endpoint, body, parse, _seed_text(endpoint, body)))
        return self._run("generate", jobs, len(prompts), on_batch)

    def score_options(
        self,
        prompts: Sequence[Prompt],
        labels: Sequence[Sequence[str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[OptionScores]:
        """Label probabilities from the server's top logprobs of the first generated token
        (see "What each mode needs from the server")."""
        check_label_sets(prompts, labels, "score_options")
        checked = [check_labels(lab, f"label set {i}") for i, lab in enumerate(labels)]
        jobs = []
        for i, prompt in enumerate(prompts):
            endpoint, fields, _ = self._route(prompt)
            if endpoint == "chat":
                body = self._body(
                    fields, max_tokens=1, logprobs=True, top_logprobs=self.top_logprobs
                )
            else:
                body = self._body(fields, max_tokens=1, logprobs=self.top_logprobs)

            def parse(
                data: dict[str, Any],
                ms: float,
                endpoint: str = endpoint,
                lab: tuple[str, ...] = checked[i],
            ) -> OptionScores:
                if not data.get("choices"):
                    raise _Retryable("malformed")
                top = first_top_logprobs(endpoint, data)
                if top is None:
                    raise self._capability_stop("top_logprobs", "choice mode")
                probs, label_lp, top_prob, top_token = label_scores(top, lab)
                return OptionScores(
                    probs=probs,
                    label_logprobs=label_lp,
                    top_prob=top_prob,
                    top_token=top_token,
                    latency_ms=ms,
                )

            seed = _seed_text(endpoint, body) + "\x00" + json.dumps(list(checked[i]))
            jobs.append(_Job(i, endpoint, body, parse, seed))
        return self._run("score_options", jobs, len(prompts), on_batch)

    def loglikelihood(
        self,
        pairs: Sequence[tuple[Prompt, str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[LogLikelihood]:
        """log P(response | prompt) from the completions endpoint's echoed logprobs."""
        jobs = []
        empty: list[int] = []
        for i, (prompt, response) in enumerate(pairs):
            endpoint, _, text = self._route(prompt)
            if endpoint != "completions" or text is None:
                raise ModelError(
                    "loglikelihood needs the completions endpoint (echo with "
                    "logprobs), which cannot score chat messages; give text "
                    'prompts, or set chat = "never" for this model.'
                )
            response = str(response)
            if not response:
                empty.append(i)
                continue
            full = text + response
            body = self._body({"prompt": full}, max_tokens=1, echo=True, logprobs=1)

            def parse(
                data: dict[str, Any], ms: float, n_prompt: int = len(text), n_full: int = len(full)
            ) -> LogLikelihood:
                if not data.get("choices"):
                    raise _Retryable("malformed")
                result = echo_loglikelihood(data, n_prompt, n_full)
                if result is None:
                    raise self._capability_stop(
                        "echoed prompt logprobs", "loglikelihood (cloze mode, POSIX)"
                    )
                return result

            jobs.append(_Job(i, "completions", body, parse, _seed_text("completions", body)))
        if empty and on_batch is not None:
            on_batch(empty, [LogLikelihood(logprob=0.0, n_tokens=0) for _ in empty])
        out = self._run("loglikelihood", jobs, len(pairs), on_batch)
        for i in empty:
            out[i] = LogLikelihood(logprob=0.0, n_tokens=0)
        return out


def _seed_text(endpoint: str, body: Mapping[str, Any]) -> str:
    """The request's content as text: seeds its jitter and names it among failed prompts."""
    return endpoint + "\x00" + json.dumps(body, sort_keys=True, ensure_ascii=False)


def _retry_after(headers: Mapping[str, str]) -> float | None:
    for name, value in headers.items():
        if name.lower() == "retry-after":
            try:
                seconds = float(value)
            except ValueError:
                return None
            return seconds if math.isfinite(seconds) and seconds >= 0 else None
    return None


def make_openai_runner(
    model: str,
    *,
    base_url: str,
    api_key_env: str = "OPENAI_API_KEY",
    concurrency: int = 8,
    timeout: float = 60,
    max_retries: int = 5,
    chat: str | bool = "auto",
    batch_size: int = 16,
    **kwargs: Any,
) -> OpenAIRunner:
    """Build an :class:`OpenAIRunner` from plain settings (the shape a study file gives them).

    ``kwargs`` are the runner's other settings: ``server_id``, ``top_logprobs``, ``backoff``,
    ``max_backoff``, ``stop_cooldown``, ``seed`` and ``extra_body``; an unknown one raises
    ModelError naming it, so a typo in a study file never falls back to a default.
    """
    known = (
        "server_id",
        "top_logprobs",
        "backoff",
        "max_backoff",
        "stop_cooldown",
        "seed",
        "extra_body",
    )
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        raise ModelError(
            f"unknown setting {unknown[0]!r} for the openai backend; known: "
            f"base_url, api_key_env, concurrency, timeout, max_retries, chat, "
            f"batch_size, {', '.join(known)}."
        )
    return OpenAIRunner(
        model,
        base_url=base_url,
        api_key_env=api_key_env,
        concurrency=concurrency,
        timeout=timeout,
        max_retries=max_retries,
        chat=chat,
        batch_size=batch_size,
        **kwargs,
    )
