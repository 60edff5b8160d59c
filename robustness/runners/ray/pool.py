"""Ray scale-out: one model's requests sharded over Ray actors, each holding the backend.

:class:`RayRunner` is itself a runner (the protocol of ``base.py``), so the run loop
(:func:`robustness.run.run` with ``executor=Ray(...)``) treats it like any other: it wraps it in
the same ``CachedRunner`` and asks it the same calls. Only where the numbers are computed
differs; the table is the same as in one process (same rows in the same order; only the measured
``latency_ms`` differs) and so is the cache.

How it works
------------
A pool starts ``workers`` Ray actors; each calls the runner factory once (a picklable zero-
argument callable, such as ``functools.partial(open_runner, model_config)``) and keeps the
runner for every shard it is given. The three calls cut their inputs (the requests the cache
could not answer) into shards, keep at most ``depth`` shards queued per actor, and hand each
finished shard to ``on_batch`` as ``ray.wait`` reports it. Hence:

- answers already in the cache are never sent to a worker, and a repeated run sends nothing
  (one actor still starts, because cache keys need the runner's ``identity()``: versions,
  revision, dtype, as the worker sees them);
- only the driver writes the cache file, one committed transaction per finished shard, so
  workers on other machines need no access to it;
- a worker killed mid-shard loses nothing: Ray restarts the actor (``max_restarts``) and re-runs
  the shards it had not finished (``max_task_retries``); finished shards are already stored.
  If an actor stays dead, its shards go to the others. Nothing is duplicated: a shard's result
  is taken once and the cache stores a key once;
- every shard comes back with a fingerprint of its worker's runner identity; a worker whose
  identity differs from the first one's (another transformers version on another node, say)
  stops the run, since its numbers would be filed under the wrong cache key;
- an error raised by the backend in a shard (``ModelError`` ...) lets the other shards finish,
  then is raised as it would be in one process, so the run loop retries the failed requests
  one at a time (the finished shards come from the cache) and keeps per-prompt errors as
  invalid rows.

GPUs (how many a worker reserves) are the caller's choice, passed in the actor ``options``; see
``robustness.executors.Ray`` for the defaults for vLLM and hf.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from robustness.core.cache import make_key
from robustness.core.errors import ModelError, RobustnessError
from robustness.runners.base import (
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
    Runner,
    check_label_sets,
)

__all__ = [
    "DEFAULT_DEPTH",
    "MAX_AUTO_SHARD",
    "RayRunner",
    "RunnerFactory",
    "Worker",
    "auto_shard_size",
]

#: Shards of one call kept queued per actor, so an actor never idles between two shards.
DEFAULT_DEPTH = 2
#: Bounds of the automatic shard size (see ``auto_shard_size``).
MAX_AUTO_SHARD = 1024
#: A picklable callable that opens the backend inside a worker.
RunnerFactory = Callable[[], Runner]


def auto_shard_size(n_requests: int, workers: int, batch_size: int) -> int:
    """About four shards per worker, so work balances and a lost worker costs little, but no
    shard smaller than the model's batch size (batches are what backends are fast at) and none
    above ``MAX_AUTO_SHARD``."""
    per = math.ceil(n_requests / max(1, 4 * workers))
    return max(1, min(MAX_AUTO_SHARD, max(batch_size, per)))


class Worker:
    """The body of one Ray actor: opens the backend once and answers shards with it.

    A failure to open the backend is kept and raised by every call, so the driver sees the
    backend's own error (``model path ... does not exist``) once, instead of Ray restarting an
    actor that can never start.
    """

    def __init__(self, factory: RunnerFactory) -> None:
        self.error: Exception | None = None
        self.runner: Any = None
        self.fingerprint = ""
        try:
            self.runner = factory()
            self.fingerprint = make_key(self.runner.identity())
        except Exception as err:  # re-raised by every call
            self.error = err

    def _ready(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.runner

    def describe(self) -> dict[str, Any]:
        """What the driver needs to key the cache and choose prompts: identity, chat use."""
        runner = self._ready()
        return {
            "identity": runner.identity(),
            "fingerprint": self.fingerprint,
            "backend": runner.backend,
            "model_id": runner.model_id,
            "uses_chat": bool(runner.uses_chat),
            "pid": os.getpid(),
        }

    def call(self, kind: str, args: tuple[Any, ...]) -> tuple[str, list[Any]]:
        """Run one shard: ``kind`` is a runner call, ``args`` its positional arguments."""
        runner = self._ready()
        results = getattr(runner, kind)(*args)
        return self.fingerprint, list(results)

    def apply(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """``fn(runner, *args)`` on this worker's bare runner (the noise floor, say)."""
        return fn(self._ready(), *args)


class RayRunner:
    """The driver's side of one model's worker pool, itself a runner.

    Its three calls cut their inputs into shards of ``shard_size`` (in input order; None:
    :func:`auto_shard_size`), send them to the actors and return the results in input order,
    calling ``on_batch`` once per finished shard, in completion order. The first actor is
    started at once, because its identity keys the cache; the others start when the first call
    with work to do arrives, and take shards only once they have opened the backend, so no
    shard waits behind a loading worker.

    Parameters
    ----------
    ray
        The ray module (:func:`import_ray`), initialised (:func:`init_ray`).
    factory
        Picklable zero-argument callable run in each worker to open the backend.
    name
        The model's name, for messages.
    workers
        Actors in the pool.
    batch_size
        The backend's batch size (the smallest automatic shard).
    options
        Ray actor options (``num_cpus``, ``num_gpus``, ``max_restarts``, ``max_task_retries``).
    """

    def __init__(
        self,
        ray: Any,
        factory: RunnerFactory,
        *,
        name: str,
        workers: int,
        batch_size: int,
        shard_size: int | None = None,
        depth: int = DEFAULT_DEPTH,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self._ray = ray
        self._factory = factory
        self._name = name
        self._workers = workers
        self._batch_size = batch_size
        self._depth = depth
        self.options = dict(options or {})
        self._actor_class = ray.remote(Worker).options(**self.options)
        self.shard_size = shard_size
        self.actors: list[Any] = []
        self._ready: set[int] = set()
        self._dead: set[int] = set()
        self._starting: dict[Any, int] = {}
        self.shards = 0
        self.sent = 0
        self.resubmitted = 0
        self.actors.append(self._actor_class.remote(factory))
        first = self._describe(self.actors[0].describe.remote())
        self._ready.add(0)
        self._identity = first["identity"]
        self._fingerprint = first["fingerprint"]
        self.backend = first["backend"]
        self.model_id = first["model_id"]
        self._uses_chat = first["uses_chat"]

    @property
    def uses_chat(self) -> bool:
        """Whether the workers' runner takes prompts as chat messages."""
        return bool(self._uses_chat)

    def counts(self) -> dict[str, Any]:
        """Shards and requests sent, shards sent again after a worker died, actors started,
        and the GPUs each worker reserved."""
        return {
            "shards": self.shards,
            "sent": self.sent,
            "resubmitted": self.resubmitted,
            "actors_started": len(self.actors),
            "gpus_per_worker": self.options.get("num_gpus", 0),
        }

    # ----------------------------------------------------------------- pool
    def _describe(self, ref: Any) -> dict[str, Any]:
        ray = self._ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as err:
            raise _cause(err) from None
        except ray.exceptions.RayActorError as err:
            raise ModelError(
                f"a Ray worker for model {self._name!r} could not start: {_last_line(err)}"
            ) from None

    def _grow(self) -> None:
        while len(self.actors) < self._workers:
            actor = self._actor_class.remote(self._factory)
            self._starting[actor.describe.remote()] = len(self.actors)
            self.actors.append(actor)

    def _started(self, ref: Any) -> None:
        index = self._starting.pop(ref)
        described = self._describe(ref)
        if described["fingerprint"] != self._fingerprint:
            raise RobustnessError(
                f"a Ray worker for model {self._name!r} reports another runner identity "
                "than the first (different library versions on its node?); its results would be "
                "cached under the wrong key."
            )
        self._ready.add(index)

    def close(self) -> None:
        """Stop every actor of this pool (frees their memory, GPUs and connections)."""
        for actor in self.actors:
            self._ray.kill(actor)
        self.actors = []
        self._starting.clear()

    def identity(self) -> dict[str, Any]:
        """The workers' runner identity (the same on every worker, or the run stops)."""
        return dict(self._identity)

    def apply(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(runner, *args)`` on one ready worker's bare runner; its result."""
        actor = self.actors[min(self._ready - self._dead)]
        try:
            return self._ray.get(actor.apply.remote(fn, args))
        except self._ray.exceptions.RayTaskError as err:
            raise _cause(err) from None

    # ----------------------------------------------------------------- calls
    def score_options(
        self,
        prompts: Sequence[Prompt],
        labels: Sequence[Sequence[str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[OptionScores]:
        """Label probabilities, computed by the workers."""
        check_label_sets(prompts, labels, "score_options")
        return self._dispatch(
            "score_options",
            len(prompts),
            lambda idx: ([prompts[i] for i in idx], [list(labels[i]) for i in idx]),
            on_batch,
        )

    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int,
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[Generation]:
        """Greedy generations, computed by the workers."""
        return self._dispatch(
            "generate",
            len(prompts),
            lambda idx: ([prompts[i] for i in idx], max_new_tokens),
            on_batch,
        )

    def loglikelihood(
        self, pairs: Sequence[tuple[Prompt, str]], *, on_batch: BatchCallback | None = None
    ) -> list[LogLikelihood]:
        """Response log-likelihoods, computed by the workers."""
        return self._dispatch(
            "loglikelihood", len(pairs), lambda idx: ([pairs[i] for i in idx],), on_batch
        )

    def _dispatch(
        self,
        kind: str,
        n: int,
        args_for: Callable[[list[int]], tuple[Any, ...]],
        on_batch: BatchCallback | None,
    ) -> list[Any]:
        ray = self._ray
        if n == 0:
            return []
        self._grow()
        size = self.shard_size or auto_shard_size(n, self._workers, self._batch_size)
        shards = [list(range(s, min(s + size, n))) for s in range(0, n, size)]
        results: list[Any] = [None] * n
        queue = deque(range(len(shards)))
        inflight: dict[Any, tuple[int, int]] = {}
        load = [0] * len(self.actors)
        error: BaseException | None = None

        def fill() -> None:
            while queue:
                usable = self._ready - self._dead
                if not usable:
                    return
                actor = min(usable, key=lambda a: (load[a], a))
                if load[actor] >= self._depth:
                    return
                k = queue.popleft()
                ref = self.actors[actor].call.remote(kind, args_for(shards[k]))
                inflight[ref] = (k, actor)
                load[actor] += 1
                self.shards += 1
                self.sent += len(shards[k])

        fill()
        while inflight or (queue and self._starting):
            ready, _ = ray.wait([*inflight, *self._starting], num_returns=1)
            if ready[0] in self._starting:
                self._started(ready[0])
                fill()
                continue
            k, actor = inflight.pop(ready[0])
            load[actor] -= 1
            try:
                fingerprint, out = ray.get(ready[0])
            except ray.exceptions.RayTaskError as err:
                error = error or _cause(err)
            except ray.exceptions.RayActorError as err:
                # dead for good (restarts used up): its shards go to the others. Merely
                # unavailable (restarting, retries used up): send the shard again.
                unavailable = getattr(ray.exceptions, "ActorUnavailableError", None)
                if unavailable is None or not isinstance(err, unavailable):
                    self._dead.add(actor)
                queue.appendleft(k)
                self.resubmitted += 1
            else:
                if fingerprint != self._fingerprint or len(out) != len(shards[k]):
                    raise RobustnessError(
                        f"a Ray worker for model {self._name!r} "
                        "answered a shard with another runner identity or "
                        "the wrong number of results."
                    )
                for position, result in zip(shards[k], out, strict=True):
                    results[position] = result
                if on_batch is not None:
                    on_batch(shards[k], out)
            fill()
        if queue:
            raise RobustnessError(
                f"every Ray worker for model {self._name!r} died; the shards that "
                "finished are in the cache, so running again resumes."
            )
        if error is not None:
            raise error
        return results


def _cause(err: Any) -> BaseException:
    """The backend's own exception inside a RayTaskError (so error rows read as in ``run``)."""
    cause = getattr(err, "cause", None)
    return cause if isinstance(cause, BaseException) else err


def _last_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[-1] if lines else type(err).__name__
