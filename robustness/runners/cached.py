"""``CachedRunner``: any runner behind the SQLite result cache.

It implements the runner protocol itself. Each call looks every request up first, answers hits
from the cache, sends only the misses to the inner runner (one call, which the inner runner
batches as it likes; identical requests within a call are computed once), and stores each batch
the moment the inner runner reports it through ``on_batch``. A run killed at any point therefore
loses at most the batch in flight, and a repeated run makes no model call at all, which
``stats`` lets a caller (or a test) check.

The caller's own ``on_batch`` sees every position exactly once: hits first, in one call, then
each computed batch, so a progress bar driven by it counts cached and computed prompts alike.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from robustness.core.cache import Cache, make_key
from robustness.runners.base import (
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
    Runner,
    canonical_prompt,
    check_label_sets,
    result_from_json,
    result_to_json,
)

#: Part of every key; bump when the meaning of a cached value changes.
KEY_VERSION = 1


@dataclass(frozen=True)
class CacheStats:
    """Counts since the wrapper was made: ``hits`` and ``misses`` are requests (positions)
    answered from the cache or by the model (a position the model failed on is neither);
    ``model_calls`` are calls into the inner runner and ``model_requests`` the requests those
    calls carried (duplicates in a call count once); ``stored`` counts rows newly written to
    the cache; ``unreadable`` counts stored values that could not be read back (not JSON, or
    not a result of their kind), which were deleted and computed again, so nothing is silently
    lost."""

    hits: int = 0
    misses: int = 0
    model_calls: int = 0
    model_requests: int = 0
    stored: int = 0
    unreadable: int = 0


class MemoryCache:
    """The two calls ``CachedRunner`` makes of a ``Cache``, in memory, for one run without a
    cache file: identical requests are still computed once, and after a failed call the retry
    one request at a time reuses the batches that had finished."""

    #: A dict cannot hold an unreadable entry; the count ``CachedRunner`` reads stays 0.
    unreadable = 0

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def discard(self, keys: Sequence[str]) -> None:
        """Forget ``keys`` (a value that could not be read back is computed again)."""
        for key in keys:
            self._values.pop(key, None)

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The stored values of ``keys`` that are stored."""
        return {k: self._values[k] for k in keys if k in self._values}

    def put_many(self, rows: Sequence[tuple[str, str, Any, Any]]) -> int:
        """Store ``(key, kind, request, value)`` rows; returns how many keys were new."""
        added = 0
        for key, _kind, _request, value in rows:
            if key not in self._values:
                self._values[key] = value
                added += 1
        return added

    def close(self) -> None:
        """Forget every value."""
        self._values.clear()


class CachedRunner:
    """Wrap ``runner`` so that every result goes through ``cache``.

    ``key_ignore`` names identity fields to leave out of the keys, e.g. ``("batch_size",)`` to
    let a resumed run use another batch size; by default every field counts, so a cached value
    is always one this exact configuration produced.
    """

    def __init__(
        self, runner: Runner, cache: Cache | MemoryCache, *, key_ignore: Collection[str] = ()
    ) -> None:
        self.runner = runner
        self.cache = cache
        self.backend = runner.backend
        self.model_id = runner.model_id
        self.key_ignore = frozenset(key_ignore)
        self._stats = CacheStats()
        self._lock = threading.Lock()

    @property
    def stats(self) -> CacheStats:
        """A snapshot of the counters."""
        with self._lock:
            return self._stats

    def reset_stats(self) -> None:
        """Set every counter back to zero."""
        with self._lock:
            self._stats = CacheStats()

    def _count(self, **increments: int) -> None:
        with self._lock:
            values = {k: getattr(self._stats, k) + v for k, v in increments.items()}
            self._stats = replace(self._stats, **values)

    def identity(self) -> dict[str, Any]:
        """The inner runner's identity (the cache adds nothing that changes results)."""
        return self.runner.identity()

    @property
    def uses_chat(self) -> bool:
        """The inner runner's answer: the cache changes nothing about prompts."""
        return self.runner.uses_chat

    def close(self) -> None:
        """Close the inner runner (the cache belongs to the caller and stays open)."""
        self.runner.close()

    def key_identity(self) -> dict[str, Any]:
        """The identity fields that go into cache keys."""
        return {k: v for k, v in self.runner.identity().items() if k not in self.key_ignore}

    # ----------------------------------------------------------------- protocol
    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int,
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[Generation]:
        """Greedy generations, from the cache where possible."""
        requests = [
            {
                "prompt": canonical_prompt(p),
                "max_new_tokens": int(max_new_tokens),
                "decoding": "greedy",
            }
            for p in prompts
        ]

        def call(positions: list[int], callback: BatchCallback) -> list[Any]:
            return self.runner.generate(
                [prompts[i] for i in positions], max_new_tokens, on_batch=callback
            )

        return self._run("generate", requests, call, on_batch)

    def score_options(
        self,
        prompts: Sequence[Prompt],
        labels: Sequence[Sequence[str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[OptionScores]:
        """Label probabilities, from the cache where possible."""
        check_label_sets(prompts, labels, "score_options")
        requests = [
            {"prompt": canonical_prompt(p), "labels": [str(x) for x in lab]}
            for p, lab in zip(prompts, labels, strict=True)
        ]

        def call(positions: list[int], callback: BatchCallback) -> list[Any]:
            return self.runner.score_options(
                [prompts[i] for i in positions], [labels[i] for i in positions], on_batch=callback
            )

        return self._run("score_options", requests, call, on_batch)

    def loglikelihood(
        self,
        pairs: Sequence[tuple[Prompt, str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[LogLikelihood]:
        """Response log-likelihoods, from the cache where possible."""
        requests = [{"prompt": canonical_prompt(p), "response": str(r)} for p, r in pairs]

        def call(positions: list[int], callback: BatchCallback) -> list[Any]:
            return self.runner.loglikelihood([pairs[i] for i in positions], on_batch=callback)

        return self._run("loglikelihood", requests, call, on_batch)

    # ----------------------------------------------------------------- the one algorithm
    def _run(
        self,
        kind: str,
        requests: list[dict[str, Any]],
        call: Callable[[list[int], BatchCallback], list[Any]],
        on_batch: BatchCallback | None,
    ) -> list[Any]:
        identity = self.key_identity()
        full = [dict(r, kind=kind, runner=identity, v=KEY_VERSION) for r in requests]
        keys = [make_key(r) for r in full]
        results: list[Any] = [None] * len(keys)
        before = self.cache.unreadable
        stored = self.cache.get_many(keys)
        decoded: dict[str, Any] = {}
        for key, value in stored.items():
            # a value stored by something else, or damaged, is computed again below
            with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError):
                decoded[key] = result_from_json(kind, value)
        broken = [key for key in stored if key not in decoded]
        if broken:
            self.cache.discard(broken)
        stored = decoded
        hits = [i for i, k in enumerate(keys) if k in stored]
        for i in hits:
            results[i] = stored[keys[i]]
        self._count(hits=len(hits), unreadable=self.cache.unreadable - before)
        if hits and on_batch is not None:
            on_batch(hits, [results[i] for i in hits])

        # positions sharing a missing key are computed once, through their first position.
        waiting: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            if key not in stored:
                waiting.setdefault(key, []).append(i)
        if not waiting:
            return results
        firsts = [positions[0] for positions in waiting.values()]
        # misses are counted as the model answers them (in ``store``), so a call that fails
        # part-way counts only the positions it answered, and a retry of the rest counts no
        # position twice.
        self._count(model_calls=1, model_requests=len(firsts))
        saved: set[str] = set()

        def store(local: Sequence[int], batch: Sequence[Any]) -> None:
            rows = []
            answered: list[int] = []
            for j, result in zip(local, batch, strict=True):
                key = keys[firsts[j]]
                rows.append((key, kind, full[firsts[j]], result_to_json(result)))
                saved.add(key)
                for i in waiting[key]:
                    results[i] = result
                    answered.append(i)
            self._count(stored=self.cache.put_many(rows), misses=len(answered))
            if on_batch is not None and answered:
                on_batch(answered, [results[i] for i in answered])

        returned = call(firsts, store)
        # a runner that did not report some batches through on_batch: store what is left.
        left = [j for j, i in enumerate(firsts) if keys[i] not in saved]
        if left:
            store(left, [returned[j] for j in left])
        return results
