"""A deterministic torch-free runner for the cache and run tests, and the cache writer process.

- ``FakeRunner``: results are hashes of the request; it batches like a real backend, can sleep
  per batch and can fail after a number of batches;
- ``child_prompts``, ``CHILD_LABELS`` and ``child_main``: the writer process that the SIGKILL
  test of the cache kills (``test_cache.py``, ``test_cache_damage.py``).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["CHILD_LABELS", "FakeRunner", "child_main", "child_prompts"]


def _unit(text: str, salt: str) -> float:
    digest = hashlib.sha256(f"{salt}\x00{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


class FakeRunner:
    """A deterministic runner without a model: results are hashes of the request. It batches
    like a real backend (sorted by length, ``on_batch`` per batch), can sleep per batch, and can
    fail after a number of batches, so cache behaviour can be tested quickly."""

    backend = "fake"

    def __init__(
        self,
        batch_size: int = 4,
        sleep: float = 0.0,
        fail_after: int | None = None,
        model_id: str = "fake-model",
        dtype: str = "float32",
    ) -> None:
        self.batch_size = batch_size
        self.sleep = sleep
        self.fail_after = fail_after
        self.model_id = model_id
        self.dtype = dtype
        self.calls: list[tuple[str, int]] = []
        self.batches_run = 0

    def identity(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model_id": self.model_id,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
        }

    uses_chat = False  # plain-text prompts

    def close(self) -> None:
        self.closed = True

    def _batched(self, kind: str, texts: Sequence[str], make: Any, on_batch: Any) -> list[Any]:
        self.calls.append((kind, len(texts)))
        order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
        results: list[Any] = [None] * len(texts)
        for start in range(0, len(order), self.batch_size):
            if self.fail_after is not None and self.batches_run >= self.fail_after:
                raise RuntimeError("fake runner failure")
            batch = order[start : start + self.batch_size]
            if self.sleep:
                time.sleep(self.sleep)
            for i in batch:
                results[i] = make(i)
            self.batches_run += 1
            if on_batch is not None:
                on_batch(batch, [results[i] for i in batch])
        return results

    def score_options(
        self, prompts: Sequence[Any], labels: Sequence[Sequence[str]], *, on_batch: Any = None
    ) -> list[Any]:
        from robustness.runners.base import OptionScores

        texts = [str(p) for p in prompts]

        def make(i: int) -> OptionScores:
            raw = [_unit(texts[i], label) + 0.01 for label in labels[i]]
            total = sum(raw)
            return OptionScores(
                probs=tuple(r / total for r in raw),
                label_logprobs=tuple(math.log(r / 2) for r in raw),
                top_prob=max(raw) / 2,
                top_token=str(labels[i][0]),
                latency_ms=1.0,
            )

        return self._batched("score_options", texts, make, on_batch)

    def generate(
        self, prompts: Sequence[Any], max_new_tokens: int, *, on_batch: Any = None
    ) -> list[Any]:
        from robustness.runners.base import Generation

        texts = [str(p) for p in prompts]

        def make(i: int) -> Generation:
            return Generation(
                text=f"answer {_unit(texts[i], 'g'):.6f}"[: max_new_tokens + 7],
                n_tokens=2,
                latency_ms=1.0,
            )

        return self._batched("generate", texts, make, on_batch)

    def loglikelihood(self, pairs: Sequence[tuple[Any, str]], *, on_batch: Any = None) -> list[Any]:
        from robustness.runners.base import LogLikelihood

        texts = [f"{p}\x00{r}" for p, r in pairs]

        def make(i: int) -> LogLikelihood:
            return LogLikelihood(logprob=-10 * _unit(texts[i], "ll"), n_tokens=len(pairs[i][1]))

        return self._batched("loglikelihood", texts, make, on_batch)


def child_prompts(n: int) -> list[str]:
    """The prompts the SIGKILL writer scores (also used by the parent to check results)."""
    return [f"Question {i}: which option? " + "x" * (i % 7) for i in range(n)]


CHILD_LABELS = ("A", "B", "C", "D")


def child_main(db: str, n: int, batch_size: int, sleep: float) -> None:
    """Writer process of the SIGKILL test: score ``n`` prompts through a CachedRunner into
    ``db``, printing one line per stored batch (flushed), then ``done`` and the stats."""
    from robustness.core.cache import Cache
    from robustness.runners.cached import CachedRunner

    def report(positions: Sequence[int], results: Sequence[Any]) -> None:
        print(f"batch {len(positions)}", flush=True)

    with Cache(db) as cache:
        runner = CachedRunner(FakeRunner(batch_size=batch_size, sleep=sleep), cache)
        prompts = child_prompts(n)
        runner.score_options(prompts, [CHILD_LABELS] * n, on_batch=report)
        stats = runner.stats
        print(f"done hits={stats.hits} misses={stats.misses} calls={stats.model_calls}", flush=True)
