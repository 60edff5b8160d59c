"""Runners that record where and when they run, for the Ray tests (``test_distributed.py``).

``SlowRunner`` / ``SlowFactory``: a real runner from ``open_runner`` that sleeps per call and
writes which process runs which call into a folder, so the Ray test can SIGKILL a worker while
it is inside a shard and afterwards count how often each shard ran; ``FailingRunner`` /
``FailingFactory`` fail on chosen calls; ``PidIdentityFactory`` gives each worker another
identity. Ray workers import this module by name (``helpers.ray_runners``):
``robustness.runners.ray`` puts the driver's extra ``sys.path`` entries (the tests folder, under
pytest) on the local workers' ``PYTHONPATH``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "FailingFactory",
    "FailingRunner",
    "PidIdentityFactory",
    "SlowFactory",
    "SlowRunner",
    "read_log",
]


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


class SlowRunner:
    """Wrap a runner: each call first records ``start`` (pid, kind, digest of its inputs) in
    ``log_dir``, sleeps ``sleep`` seconds, runs, then records ``end``."""

    def __init__(self, inner: Any, log_dir: str, sleep: float) -> None:
        self.inner = inner
        self.log_dir = Path(log_dir)
        self.sleep = sleep
        self.backend = inner.backend
        self.model_id = inner.model_id

    @property
    def uses_chat(self) -> bool:
        return self.inner.uses_chat

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def close(self) -> None:
        self.inner.close()

    def _record(self, event: str, kind: str, digest: str) -> None:
        line = json.dumps(
            {"event": event, "pid": os.getpid(), "kind": kind, "shard": digest, "t": time.time()}
        )
        with open(self.log_dir / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def _call(self, kind: str, inputs: Any, fn: Any) -> list[Any]:
        digest = _digest(inputs)
        self._record("start", kind, digest)
        time.sleep(self.sleep)
        out = fn()
        self._record("end", kind, digest)
        return out

    def score_options(
        self, prompts: Sequence[Any], labels: Sequence[Sequence[str]], *, on_batch: Any = None
    ) -> list[Any]:
        return self._call(
            "score_options",
            [prompts, labels],
            lambda: self.inner.score_options(prompts, labels, on_batch=on_batch),
        )

    def generate(
        self, prompts: Sequence[Any], max_new_tokens: int, *, on_batch: Any = None
    ) -> list[Any]:
        return self._call(
            "generate",
            [prompts, max_new_tokens],
            lambda: self.inner.generate(prompts, max_new_tokens, on_batch=on_batch),
        )

    def loglikelihood(self, pairs: Sequence[tuple[Any, str]], *, on_batch: Any = None) -> list[Any]:
        return self._call(
            "loglikelihood", [pairs], lambda: self.inner.loglikelihood(pairs, on_batch=on_batch)
        )


class SlowFactory:
    """A picklable runner factory: ``open_runner(model)`` wrapped in ``SlowRunner``."""

    def __init__(self, log_dir: str, sleep: float) -> None:
        self.log_dir = log_dir
        self.sleep = sleep

    def __call__(self, model: Any) -> SlowRunner:
        from robustness.executors import open_runner

        return SlowRunner(open_runner(model), self.log_dir, self.sleep)


def read_log(log_dir: Path) -> list[dict[str, Any]]:
    """Every event the slow runners wrote, in time order."""
    events = []
    for path in sorted(log_dir.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                events.append(json.loads(line))
    return sorted(events, key=lambda e: e["t"])


class FailingRunner(SlowRunner):
    """Wrap a runner so that any call with a prompt containing ``marker`` raises ModelError
    (as the hf runner does for a prompt that is too long), with no sleeping or logging."""

    def __init__(self, inner: Any, marker: str) -> None:
        self.marker = marker
        super().__init__(inner, ".", 0.0)

    def _call(self, kind: str, inputs: Any, fn: Any) -> list[Any]:
        from robustness.core.errors import ModelError

        if self.marker in json.dumps(inputs, default=str):
            raise ModelError(f"prompt containing {self.marker!r} is refused.")
        return fn()


class FailingFactory:
    """``open_runner(model)`` wrapped in ``FailingRunner``."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __call__(self, model: Any) -> FailingRunner:
        from robustness.executors import open_runner

        return FailingRunner(open_runner(model), self.marker)


class PidIdentityFactory(SlowFactory):
    """``SlowFactory`` whose runners' identity names their process: every worker differs.

    Each runner marks its start in ``log_dir`` and holds every call until ``workers`` runners
    have started (at most ``wait`` seconds), so the pool cannot finish its shards before the
    second worker has opened the backend, however slowly a loaded machine starts it."""

    def __init__(self, log_dir: str, sleep: float, workers: int = 2, wait: float = 120.0) -> None:
        super().__init__(log_dir, sleep)
        self.workers = workers
        self.wait = wait

    def __call__(self, model: Any) -> SlowRunner:
        runner = super().__call__(model)
        base = runner.identity()
        runner.identity = lambda: {**base, "pid": os.getpid()}  # type: ignore[method-assign]
        folder = Path(self.log_dir)
        (folder / f"started-{os.getpid()}").touch()
        inner_call = runner._call

        def held(kind: str, inputs: Any, fn: Any) -> list[Any]:
            deadline = time.monotonic() + self.wait
            while len(list(folder.glob("started-*"))) < self.workers:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            return inner_call(kind, inputs, fn)

        runner._call = held  # type: ignore[method-assign]
        return runner
