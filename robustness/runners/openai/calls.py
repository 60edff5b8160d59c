"""Running one call's requests: the thread pool, results handed over as they come, stops.

Concurrency
-----------
Each call runs its requests on a pool of ``concurrency`` threads (default 8), each keeping its
own keep-alive connection. Threads, not asyncio: the runner protocol is synchronous and is
called from synchronous code (the cache, the study loop, possibly inside a caller's own event
loop such as Jupyter's), the work is waiting on sockets, which releases the GIL, and an event
loop would need an async HTTP client as a new dependency. The pool only bounds how many requests
are in flight: the server does the batching. Results are handed to ``on_batch`` from the calling
thread as they complete, at most ``batch_size`` per call, so the cache stores each at once.

Stopping
--------
A prompt that fails for good (``transport.py``) fails alone: the call finishes its other
prompts, hands them to ``on_batch``, then raises one ModelError naming the first failed prompt,
and a repeated request for it fails again without being sent. When a request fails in a way that
holds for every prompt (too many retries, 401/403/404, a missing capability), the call stops:
queued requests are cancelled, requests in flight finish their current attempt, and one
ModelError sentence says what failed and how many prompts were answered. For ``stop_cooldown``
seconds afterwards (default 60) every call fails at once with the same sentence, so a caller
that falls back to asking prompt by prompt does not retry thousands of times against a dead
server. :meth:`OpenAIRunner.reset` clears the stop.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from robustness.core.errors import ModelError
from robustness.runners.base import BatchCallback
from robustness.runners.openai.jobs import Cancelled, Job, PromptFailed
from robustness.runners.openai.transport import Transport, logger

__all__ = ["Calls"]


class Calls:
    """The requests of each call, run on a pool of ``concurrency`` threads through
    ``transport``; remembers stops and the prompts that failed for good."""

    def __init__(
        self, transport: Transport, *, concurrency: int, batch_size: int, stop_cooldown: float
    ) -> None:
        self.transport = transport
        self.concurrency = concurrency
        self.batch_size = batch_size
        self.stop_cooldown = float(stop_cooldown)
        self._init_state()

    def _init_state(self) -> None:
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        #: Stops in force, by call kind ("*": every call): (message, monotonic end).
        self._stopped: dict[str, tuple[str, float]] = {}
        self._failed_prompts: dict[str, str] = {}

    def __getstate__(self) -> dict[str, Any]:
        """Settings only (no pool, lock, stops or failed prompts)."""
        state = dict(self.__dict__)
        for name in ("_lock", "_pool", "_stopped", "_failed_prompts"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_state()

    def close(self) -> None:
        """Stop the thread pool (it comes back on the next call)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def reset(self) -> None:
        """Forget stops and the prompts that failed for good."""
        with self._lock:
            self._stopped.clear()
            self._failed_prompts.clear()

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.concurrency, thread_name_prefix="openai-runner"
                )
            return self._pool

    def check_stopped(self, kind: str) -> None:
        now = time.monotonic()
        with self._lock:
            for key in [k for k, (_, until) in self._stopped.items() if now >= until]:
                del self._stopped[key]
            stopped = self._stopped.get("*") or self._stopped.get(kind)
        if stopped is not None:
            raise ModelError(
                f"{stopped[0]}; no request was sent (call reset() to try again at once)."
            )

    def run(
        self, kind: str, jobs: Sequence[Job], n: int, on_batch: BatchCallback | None
    ) -> list[Any]:
        """Run the ``kind`` call's ``jobs`` on the pool, hand results to ``on_batch`` as they
        complete, and raise one ModelError for a stop or for prompts that failed for good."""
        self.check_stopped(kind)
        results: list[Any] = [None] * n
        failures: dict[int, str] = {}
        todo: list[Job] = []
        for job in jobs:
            known = self._failed_prompts.get(job.seed_text)
            if known is not None:
                failures[job.index] = known
            else:
                todo.append(job)
        stop = threading.Event()
        stopped: PromptFailed | None = None
        answered = 0
        futures: dict[Future[Any], Job] = {}
        try:
            pool = self._executor()
            for job in todo:
                futures[pool.submit(self.transport.perform, job, stop)] = job
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
                    except Cancelled:
                        continue
                    except PromptFailed as failure:
                        if failure.stop:
                            if stopped is None:
                                stopped = failure
                                stop.set()
                                for other in pending:
                                    other.cancel()
                        else:
                            message = self.transport.scrub(failure.message)
                            failures[job.index] = message
                            if failure.permanent:
                                self._failed_prompts[job.seed_text] = message
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
            self._stop(kind, stopped, answered, n)
        if failures:
            first = min(failures)
            others = len(failures) - 1
            more = (
                f" ({others} other prompt{'s' if others != 1 else ''} failed too)" if others else ""
            )
            raise ModelError(f"prompt {first}: {failures[first].rstrip('.')}{more}.")
        return results

    def _stop(self, kind: str, stopped: PromptFailed, answered: int, n: int) -> None:
        """Record a stop (a missing capability: this kind for good; else every call for
        ``stop_cooldown``) and raise its one-sentence ModelError."""
        message = self.transport.scrub(stopped.message.rstrip("."))
        until = math.inf if stopped.permanent else time.monotonic() + self.stop_cooldown
        with self._lock:
            self._stopped[kind if stopped.permanent else "*"] = (message, until)
        logger.warning("%s", message)
        if stopped.advice:
            raise ModelError(
                f"{message}, after answering {answered} of {n} prompts; "
                f"{self.transport.scrub(stopped.advice)}."
            )
        raise ModelError(f"{message}.")
