"""Reading an OpenAI-compatible server's answers: top log-probabilities, echoed prompt
log-probabilities and generated text.

What each mode needs from the server
------------------------------------
- ``generate``: ``choices[0].message.content`` (chat) or ``choices[0].text`` (completions);
  ``n_tokens`` is ``usage.completion_tokens`` (0 when the server reports no usage).
- ``score_options``: the first generated position's top log-probabilities. A label's
  probability is the sum of the probabilities of the listed tokens that spell it with or without
  a leading space (``"B"``, ``" B"``; the byte-level markers ``Ġ`` and ``▁`` count as a space),
  the same rule as the local backend; labels are renormalised over the labels, a label missing
  from the list counts as probability 0 (its true probability is below the K-th token's), and a
  prompt with no label in the list is an error for that prompt. ``top_prob`` / ``top_token``
  are the most likely listed token. Only single-token spellings can be scored this way: labels
  such as ``(A)`` whose tokens share a first token need the local backend.
- ``loglikelihood``: the completions endpoint's echo of prompt + response with one log-prob per
  token; the response's tokens are those whose text ends after the prompt's last character (a
  token spanning the boundary counts as a response token).

Every function here is pure: a decoded JSON answer in, plain values out. ``None`` means the
answer lacks the field entirely (the server ignored the request for it), which the runner turns
into a stop for that kind of call; an answer that has the field but cannot be read raises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from robustness.core.errors import ModelError
from robustness.runners.base import Generation, LogLikelihood

__all__ = [
    "MalformedAnswer",
    "echo_loglikelihood",
    "first_top_logprobs",
    "generation",
    "label_scores",
    "token_text",
]

_SPACE_MARKERS = ("Ġ", "▁")


class MalformedAnswer(Exception):
    """An answer without ``choices``: worth asking again (the transport retries it)."""


def token_text(token: str) -> str:
    """A listed token as text: a leading byte-level space marker (``Ġ``, ``▁``) becomes a
    space, so servers that list raw vocabulary entries match labels too."""
    for marker in _SPACE_MARKERS:
        if token.startswith(marker):
            return " " + token[len(marker) :]
    return token


def _first_logprobs(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    choices = data.get("choices") or []
    logprobs = choices[0].get("logprobs") if choices and isinstance(choices[0], Mapping) else None
    return logprobs if isinstance(logprobs, Mapping) else None


def first_top_logprobs(endpoint: str, data: Mapping[str, Any]) -> list[tuple[str, float]] | None:
    """The ``(token, logprob)`` list of the first generated position, most likely first, or
    None when the answer carries no top logprobs (the server ignored the request for them).

    Reads ``choices[0].logprobs.content[0].top_logprobs`` (chat) or
    ``choices[0].logprobs.top_logprobs[0]`` (completions; a ``{token: logprob}`` dict, or a
    list of ``{"token", "logprob"}`` entries as some servers write it).
    """
    logprobs = _first_logprobs(data)
    if logprobs is None:
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
    """Label probabilities from one position's top logprobs.

    Parameters
    ----------
    top
        ``(token, logprob)`` pairs of one position (:func:`first_top_logprobs`).
    labels
        The displayed labels, stripped.

    Returns
    -------
    tuple
        (renormalised probabilities, raw label log-probabilities, top token probability,
        top token).

    Notes
    -----
    P(label) = sum over listed tokens t with text(t) in {label, " " + label} of exp(logprob(t))
    (disjoint events, so summed, as in the local backend); a label with no listed spelling gets
    log-probability ``-inf``. Raises ModelError when no label is listed.
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
    logprobs = _first_logprobs(data)
    if logprobs is None:
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


def generation(endpoint: str, data: Mapping[str, Any], latency_ms: float) -> Generation:
    """The generated text of a chat or completions answer, with the server's token count;
    raises MalformedAnswer when the answer has no readable first choice."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise MalformedAnswer
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
