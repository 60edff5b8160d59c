"""The runner protocol every model backend implements, and the plain result types it returns.

A runner answers three kinds of call, each over a whole list of prompts so a backend can batch:

- ``generate(prompts, max_new_tokens)``: greedy text, for the ``generate`` mode and the normaliser;
- ``score_options(prompts, labels)``: one forward pass per prompt giving the probability of each
  displayed label as the next token, for the ``choice`` mode (and ProSA's decoding confidence);
- ``loglikelihood(pairs)``: log P(response | prompt), for the ``cloze`` mode and POSIX.

Every call also takes an optional ``on_batch`` callback, invoked once per completed batch with the
positions (into the call's input list) that batch answered and their results. The cache uses it
to store each batch as it completes; a study uses it to drive a progress bar.

Results are frozen dataclasses of plain Python values so they can be cached as JSON, put in a
table, and compared in tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from robustness.core.errors import ModelError
from robustness.core.names import CHAT_MODES

#: A prompt: plain text, or chat messages ``[{"role": "user", "content": "..."}, ...]``.
Prompt = str | Sequence[Mapping[str, str]]

#: ``on_batch(positions, results)``: called after each completed batch; ``positions`` index the
#: call's input list and ``results[j]`` answers ``positions[j]``.
BatchCallback = Callable[[Sequence[int], Sequence[Any]], None]


@dataclass(frozen=True)
class OptionScores:
    """What one forward pass says about a prompt's answer labels.

    ``probs`` are the label probabilities renormalised over the given labels, in the order the
    labels were given (so they sum to 1). ``label_logprobs`` are the raw, un-renormalised
    log P(label | prompt), where a label's probability is the sum over its spellings with and
    without a leading space (see ``robustness.runners.hf``). ``top_prob`` / ``top_token`` are the
    largest next-token probability over the whole vocabulary and its token: the decoding
    confidence of ProSA (eq. 3). ``latency_ms`` is the wall time of the batch that answered this
    prompt divided by the batch's size.
    """

    probs: tuple[float, ...]
    label_logprobs: tuple[float, ...]
    top_prob: float
    top_token: str
    latency_ms: float

    @property
    def argmax(self) -> int:
        """Index of the most probable label (the first one on an exact tie)."""
        return max(range(len(self.probs)), key=lambda i: (self.probs[i], -i))


@dataclass(frozen=True)
class Generation:
    """Greedy continuation of a prompt: text without special tokens, number of new tokens
    (up to, not including, the end-of-sequence token) and the per-prompt share of the batch's
    wall time."""

    text: str
    n_tokens: int
    latency_ms: float


@dataclass(frozen=True)
class LogLikelihood:
    """Sum of log P(response token | prompt, earlier response tokens), and the number of
    response tokens (so callers can length-normalise, as POSIX and the cloze mode do)."""

    logprob: float
    n_tokens: int


#: The call kinds, as used in cache keys; each maps to its result type.
RESULT_TYPES: dict[str, type] = {
    "generate": Generation,
    "score_options": OptionScores,
    "loglikelihood": LogLikelihood,
}


def result_to_json(result: OptionScores | Generation | LogLikelihood) -> dict[str, Any]:
    """A result as a JSON-able dict (tuples become lists)."""
    return asdict(result)


def result_from_json(
    kind: str, data: Mapping[str, Any]
) -> OptionScores | Generation | LogLikelihood:
    """Rebuild a result of call ``kind`` from :func:`result_to_json` output."""
    cls = RESULT_TYPES[kind]
    if cls is OptionScores:
        return OptionScores(
            probs=tuple(float(p) for p in data["probs"]),
            label_logprobs=tuple(float(p) for p in data["label_logprobs"]),
            top_prob=float(data["top_prob"]),
            top_token=str(data["top_token"]),
            latency_ms=float(data["latency_ms"]),
        )
    return cls(**data)


@runtime_checkable
class Runner(Protocol):
    """A model behind the three calls, and everything a caller asks of it besides them.

    ``backend`` and ``model_id`` name it. ``identity()`` returns a JSON-able dict of everything
    that determines the numbers it produces (backend, model and its revision, dtype, device,
    batch size, chat handling); it goes into cache keys and table metadata. ``uses_chat`` says
    whether prompts should be given as chat messages (the model has a chat template, or the
    server applies one, and chat is not turned off) rather than as plain text. ``close()``
    releases what the runner holds (threads, connections, worker processes); a runner that holds
    nothing makes it a no-op, and a closed runner may still be called (it reopens what it needs).
    """

    backend: str
    model_id: str

    @property
    def uses_chat(self) -> bool: ...

    def identity(self) -> dict[str, Any]: ...

    def close(self) -> None: ...

    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int,
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[Generation]: ...

    def score_options(
        self,
        prompts: Sequence[Prompt],
        labels: Sequence[Sequence[str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[OptionScores]: ...

    def loglikelihood(
        self,
        pairs: Sequence[tuple[Prompt, str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[LogLikelihood]: ...


def canonical_prompt(prompt: Prompt) -> str | list[dict[str, str]]:
    """A prompt as plain JSON data: text stays text, messages become a list of plain dicts.

    Raises ModelError for anything else, naming what was wrong, so a malformed prompt fails
    before any model time is spent on it.
    """
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and not isinstance(prompt, bytes | bytearray):
        messages: list[dict[str, str]] = []
        for i, message in enumerate(prompt):
            if not (isinstance(message, Mapping) and "role" in message and "content" in message):
                raise ModelError(f"chat message {i} must be a mapping with 'role' and 'content'.")
            messages.append({str(k): str(v) for k, v in message.items()})
        if not messages:
            raise ModelError("a chat prompt must hold at least one message.")
        return messages
    raise ModelError(
        f"a prompt must be text or a list of chat messages, not {type(prompt).__name__}."
    )


def check_labels(labels: Sequence[str], where: str) -> tuple[str, ...]:
    """Validate one label set: at least two labels, each non-empty after stripping, all
    distinct. Returns the stripped labels; raises ModelError naming ``where`` otherwise."""
    if isinstance(labels, str):
        raise ModelError(f"{where}: labels must be a list of strings, not one string.")
    stripped = tuple(str(label).strip() for label in labels)
    if len(stripped) < 2:
        raise ModelError(f"{where}: at least two labels are needed, got {len(stripped)}.")
    if any(not label for label in stripped):
        raise ModelError(f"{where}: a label is empty.")
    if len(set(stripped)) != len(stripped):
        raise ModelError(f"{where}: labels {list(stripped)!r} are not distinct.")
    return stripped


def check_label_sets(prompts: Sequence[Any], labels: Sequence[Any], call: str) -> None:
    """One label set per prompt, or ModelError naming the call."""
    if len(labels) != len(prompts):
        raise ModelError(f"{call} got {len(prompts)} prompts but {len(labels)} label sets.")


def check_max_new_tokens(max_new_tokens: int) -> None:
    """A whole number of new tokens, at least one, or ModelError."""
    if (
        isinstance(max_new_tokens, bool)
        or not isinstance(max_new_tokens, int)
        or max_new_tokens < 1
    ):
        raise ModelError(f"max_new_tokens must be at least 1, got {max_new_tokens!r}.")


def chat_mode(chat: str | bool) -> str:
    """The chat setting as one of ``CHAT_MODES`` (``True`` is always, ``False`` never)."""
    if chat is True:
        return "always"
    if chat is False:
        return "never"
    if chat not in CHAT_MODES:
        raise ModelError(f"unknown chat setting {chat!r}: use auto, always or never.")
    return str(chat)
