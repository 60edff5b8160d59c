"""``OpenAIRunner``: an OpenAI-compatible server behind the runner protocol.

Which endpoint a prompt goes to
-------------------------------
``chat="auto"`` (the default) sends chat messages to ``/chat/completions`` (the server applies
the model's chat template) and plain text to ``/completions`` (the text is the whole prompt).
``chat="always"`` also sends text to the chat endpoint, as one user message; ``chat="never"``
joins the contents of chat messages with blank lines and sends everything to ``/completions``
(for base models without a chat template). ``uses_chat`` (the protocol's answer to "should
prompts be chat messages?") is true whenever ``chat`` is not ``"never"``.

What each mode sends
--------------------
- ``generate``: one request per prompt with ``temperature = 0`` and ``max_tokens``.
- ``score_options``: one request per prompt with ``max_tokens = 1`` asking for the
  ``top_logprobs`` (default 20) most likely first tokens (``logprobs: true, top_logprobs: K`` on
  the chat endpoint, ``logprobs: K`` on the completions endpoint); read as ``parsing.py`` says.
  vLLM allows 20 by default (``--max-logprobs``); OpenAI's own completions endpoint allows 5, so
  set ``top_logprobs=5`` there. A server that returns no ``top_logprobs`` (``transformers
  serve`` ignores the fields) stops the call with one sentence saying that only ``generate``
  mode works with it; the runner then refuses further choice calls without sending anything
  (until :meth:`OpenAIRunner.reset`). Concurrency and stops: ``calls.py``.
- ``loglikelihood``: ``/completions`` with prompt and response as one text, ``echo: true``,
  ``logprobs: 1`` and ``max_tokens: 1``. Chat prompts cannot be scored this way, so they are
  refused unless ``chat="never"``; a server that does not echo stops with one sentence.

Identity and the cache
----------------------
``identity()`` holds what determines the numbers: the server-side model name, ``server_id``,
the endpoint each kind of prompt goes to, the decoding parameters (temperature 0,
``top_logprobs``), ``extra_body`` and the request format version; not ``concurrency``,
``batch_size``, time-outs, retries, the key, or the port: ``server_id`` defaults to the host and
path of ``base_url`` (``127.0.0.1/v1``), so a run interrupted against a server that comes back
on another port resumes from the cache. Set ``server_id`` to share a cache between hosts serving
the same weights, or to tell apart two servers on one host serving different weights under one
name.

Secrets
-------
The value of the key's environment variable is scrubbed (``[key]``) from every generated text,
top token and error message before it leaves the runner, so a server that echoes the key in its
answer cannot get it into a table, a cache or a log. Keys shorter than eight characters
(placeholders such as ``EMPTY`` for a local server) are scrubbed from error messages only, so
they cannot corrupt answers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from robustness.core.errors import ModelError
from robustness.core.names import CHAT_MODES
from robustness.runners.base import (
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
    canonical_prompt,
    chat_mode,
    check_label_sets,
    check_labels,
    check_max_new_tokens,
)
from robustness.runners.openai.calls import Calls
from robustness.runners.openai.jobs import Job, PromptFailed, RequestStats
from robustness.runners.openai.parsing import (
    MalformedAnswer,
    echo_loglikelihood,
    first_top_logprobs,
    generation,
    label_scores,
)
from robustness.runners.openai.transport import Transport

__all__ = ["CHAT_MODES", "OpenAIRunner", "make_openai_runner"]

#: Bump when the requests this runner sends change in a way that changes results.
REQUEST_FORMAT = 1
#: Keys shorter than this are not scrubbed from generated text (see "Secrets").
MIN_SCRUBBED_KEY = 8


def _check_settings(numbers: Mapping[str, Any], counts: Mapping[str, tuple[Any, int]]) -> None:
    for name, (value, low) in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ModelError(f"{name} must be an integer of at least {low}, got {value!r}.")
    for name, number in numbers.items():
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


class OpenAIRunner:
    """An OpenAI-compatible server behind the runner protocol (see the module docstring).

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
        chat = chat_mode(chat)
        _check_settings(
            {
                "timeout": timeout,
                "backoff": backoff,
                "max_backoff": max_backoff,
                "stop_cooldown": stop_cooldown,
            },
            {
                "concurrency": (concurrency, 1),
                "batch_size": (batch_size, 1),
                "max_retries": (max_retries, 0),
                "top_logprobs": (top_logprobs, 1),
            },
        )
        self.model_id = model
        self.transport = Transport(
            base_url,
            model=model,
            api_key_env=api_key_env,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_backoff=max_backoff,
            seed=seed,
        )
        self.url = self.transport.url
        self.concurrency = concurrency
        self.chat = str(chat)
        self.batch_size = batch_size
        self.server_id = server_id if server_id is not None else self.transport.default_server_id
        self.top_logprobs = top_logprobs
        self.calls = Calls(
            self.transport,
            concurrency=concurrency,
            batch_size=batch_size,
            stop_cooldown=stop_cooldown,
        )
        try:
            self.extra_body = json.loads(json.dumps(dict(extra_body or {}), allow_nan=False))
        except (TypeError, ValueError) as err:
            raise ModelError("extra_body must be plain JSON data.") from err

    def __repr__(self) -> str:
        return (
            f"OpenAIRunner(model={self.model_id!r}, server_id={self.server_id!r}, "
            f"chat={self.chat!r}, concurrency={self.concurrency})"
        )

    def close(self) -> None:
        """Stop the thread pool and close every connection (the runner can still be used:
        both come back on the next call)."""
        self.calls.close()
        self.transport.close()

    def __enter__(self) -> OpenAIRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset(self) -> None:
        """Forget a stop, the prompts that failed for good, and the counters."""
        self.calls.reset()
        self.transport.reset_stats()

    @property
    def stats(self) -> RequestStats:
        """A snapshot of the request counters."""
        return self.transport.stats

    @property
    def uses_chat(self) -> bool:
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

    def _scrub_output(self, text: str) -> str:
        return self.transport.scrub(text, MIN_SCRUBBED_KEY)

    def _capability_stop(self, what: str, mode_hint: str) -> PromptFailed:
        return PromptFailed(
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
                result = generation(endpoint, data, ms)
                return replace(result, text=self._scrub_output(result.text))

            jobs.append(Job(i, endpoint, body, parse, _seed_text(endpoint, body)))
        return self.calls.run("generate", jobs, len(prompts), on_batch)

    def score_options(
        self,
        prompts: Sequence[Prompt],
        labels: Sequence[Sequence[str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[OptionScores]:
        """Label probabilities from the server's top logprobs of the first generated token
        (see ``parsing.label_scores``)."""
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
                    raise MalformedAnswer
                top = first_top_logprobs(endpoint, data)
                if top is None:
                    raise self._capability_stop("top_logprobs", "choice mode")
                probs, label_lp, top_prob, top_token = label_scores(top, lab)
                return OptionScores(
                    probs=probs,
                    label_logprobs=label_lp,
                    top_prob=top_prob,
                    top_token=self._scrub_output(top_token),
                    latency_ms=ms,
                )

            seed = _seed_text(endpoint, body) + "\x00" + json.dumps(list(checked[i]))
            jobs.append(Job(i, endpoint, body, parse, seed))
        return self.calls.run("score_options", jobs, len(prompts), on_batch)

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
                    raise MalformedAnswer
                result = echo_loglikelihood(data, n_prompt, n_full)
                if result is None:
                    raise self._capability_stop(
                        "echoed prompt logprobs", "loglikelihood (cloze mode, POSIX)"
                    )
                return result

            jobs.append(Job(i, "completions", body, parse, _seed_text("completions", body)))
        if empty and on_batch is not None:
            on_batch(empty, [LogLikelihood(logprob=0.0, n_tokens=0) for _ in empty])
        out = self.calls.run("loglikelihood", jobs, len(pairs), on_batch)
        for i in empty:
            out[i] = LogLikelihood(logprob=0.0, n_tokens=0)
        return out


def _seed_text(endpoint: str, body: Mapping[str, Any]) -> str:
    """The request's content as text: seeds its jitter and names it among failed prompts."""
    return endpoint + "\x00" + json.dumps(body, sort_keys=True, ensure_ascii=False)


#: The runner's settings besides those ``make_openai_runner`` names.
OTHER_SETTINGS = (
    "server_id",
    "top_logprobs",
    "backoff",
    "max_backoff",
    "stop_cooldown",
    "seed",
    "extra_body",
)


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
    unknown = sorted(set(kwargs) - set(OTHER_SETTINGS))
    if unknown:
        raise ModelError(
            f"unknown setting {unknown[0]!r} for the openai backend; known: "
            f"base_url, api_key_env, concurrency, timeout, max_retries, chat, "
            f"batch_size, {', '.join(OTHER_SETTINGS)}."
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
