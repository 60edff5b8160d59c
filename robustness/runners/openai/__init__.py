"""The ``openai`` backend: any OpenAI-compatible HTTP server behind the runner protocol.

Works with vLLM's server, llama.cpp's ``llama-server``, ``transformers serve`` and hosted APIs:
anything that answers ``POST {base_url}/chat/completions`` and ``POST {base_url}/completions``
the way OpenAI's API does. ``base_url`` is given as OpenAI's own client takes it, ending in the
version, e.g. ``http://127.0.0.1:8000/v1``.

One job per module:

- ``transport.py``: HTTP over keep-alive connections, time-outs, retries with seeded back-off,
  the API key (read per request, never stored, scrubbed from every text);
- ``parsing.py``: reading answers (top log-probabilities, echoed log-likelihoods, generations);
- ``jobs.py``: one request and what it can end in (retry, failure, stop), and the counters;
- ``calls.py``: one call's requests on a thread pool, results handed over as they come, stops;
- ``runner.py``: :class:`OpenAIRunner` (endpoints, request bodies, identity, scrubbing of its
  outputs) and :func:`make_openai_runner`.
"""

from __future__ import annotations

from robustness.runners.openai.jobs import RequestStats
from robustness.runners.openai.parsing import (
    echo_loglikelihood,
    first_top_logprobs,
    label_scores,
    token_text,
)
from robustness.runners.openai.runner import CHAT_MODES, OpenAIRunner, make_openai_runner

__all__ = [
    "CHAT_MODES",
    "OpenAIRunner",
    "RequestStats",
    "echo_loglikelihood",
    "first_top_logprobs",
    "label_scores",
    "make_openai_runner",
    "token_text",
]
