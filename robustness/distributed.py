"""Ray scale-out: a study's variants sharded over Ray workers, each holding the study's backend.

``run_ray`` returns the same table as :func:`robustness.run.run` (same rows in the same order;
only the measured ``latency_ms`` differs) and fills the same SQLite cache.

How it works
------------
For each model the driver starts ``workers`` Ray actors; each opens the backend once (the
runner factory, by default :func:`robustness.run.open_runner`) and keeps it for every shard it is
given. The driver then runs the very code ``run`` runs: ``answer_rows`` through a
``CachedRunner`` over the driver's cache. Only the innermost runner differs: ``RayRunner``, a
proxy that cuts the requests the cache could not answer into shards, keeps at most ``depth``
shards queued per actor, and hands each finished shard to the cache through ``on_batch`` as
``ray.wait`` reports it. Hence:

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
  then reaches ``answer_rows`` as it would in one process: it retries the failed requests one
  at a time (the finished shards come from the cache) and keeps per-prompt errors as invalid
  rows, as ``run`` does.

Where it runs
-------------
``address=None`` (or ``"local"``) starts a one-machine Ray with ``num_cpus=workers`` and shuts
it down afterwards. Local workers run this interpreter's environment (the editable install in
``.venv`` included) in the driver's working directory; the driver's own ``sys.path`` additions
(a checkout run without installing, the tests folder under pytest) are put on their
``PYTHONPATH``, and thread and offline settings (``OMP_NUM_THREADS``, ``OMP_WAIT_POLICY``,
``HF_HUB_OFFLINE``) are passed on. When Ray is already initialised in this process, that session
is used as it is and left running.

A real cluster: start it (``ray start --head`` on one machine, ``ray start --address=HEAD:6379``
on the others), with the same Python, ``robustness`` and backend extras installed on every node
(or give ``runtime_env={"pip": [...]}`` / a container image), and the model folders at the same
path on every node (a shared filesystem, or model ids already in each node's Hugging Face
cache). Then run from any machine that can reach the head: ``address="auto"`` on a cluster node,
``address="ray://HEAD:10001"`` through Ray Client. The cache file and the table stay on the
driver's machine. Environment variables that name driver-side paths are not sent to a cluster.

GPUs and vLLM
-------------
Ray decides how many replicas run; the backend decides how each replica uses its GPUs. Each
worker is one replica and reserves ``gpus_per_worker`` GPUs on one node. The default is
``tensor_parallel_size * pipeline_parallel_size`` from the model's ``options`` for the vllm
backend (so vLLM's own multiprocessing executor runs tensor parallelism across exactly the GPUs
Ray assigned: they are the only ones in the actor's ``CUDA_VISIBLE_DEVICES``), one GPU for the
hf backend when the cluster has GPUs and the model's ``device`` is not ``cpu``, and none
otherwise. Eight GPUs with ``tensor_parallel_size = 2`` and ``workers = 4`` is four replicas of
two GPUs each: data parallelism from Ray, tensor parallelism from vLLM. A replica larger than
one node (``pipeline_parallel_size`` across machines) is not what this sharding is for; run vLLM
with ``distributed_executor_backend = "ray"`` in a single process instead.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from robustness.answers import Progress, answer_rows, rows_to_table
from robustness.cache import Cache, make_key
from robustness.errors import ModelError, RobustnessError, StudyError
from robustness.runners.base import (
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
)
from robustness.study import ModelConfig
from robustness.variants import Variant

RAY_HINT = (
    "Ray scale-out needs the ray package, which is not installed here: run "
    "pip install 'robustness[ray]'."
)
#: Shards of one call kept queued per actor, so an actor never idles between two shards.
DEFAULT_DEPTH = 2
#: Bounds of the automatic shard size (see ``auto_shard_size``).
MAX_AUTO_SHARD = 1024
#: Environment settings every worker gets (the driver's value when it has one).
WORKER_ENV_DEFAULTS = {
    "OMP_WAIT_POLICY": "PASSIVE",
    "HF_HUB_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
#: Passed on to workers when the driver sets them (thread counts and offline switches only).
WORKER_ENV_PASSED = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "TRANSFORMERS_OFFLINE",
)
#: Passed on to local workers only: they name paths on the driver's machine.
LOCAL_ENV_PASSED = ("ROBUSTNESS_CACHE_DIR", "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE")

RunnerFactory = Callable[[ModelConfig], Any]


def import_ray() -> Any:
    """The ray module, or RobustnessError saying how to install it."""
    try:
        import ray
    except ImportError as err:
        raise RobustnessError(RAY_HINT) from err
    return ray


def _is_local(address: str | None) -> bool:
    return address is None or address == "local"


def worker_env(local: bool) -> dict[str, str]:
    """Environment variables for Ray workers: thread and offline settings, and for local
    workers also the driver's extra ``sys.path`` entries and cache-folder settings."""
    env = {name: os.environ.get(name, value) for name, value in WORKER_ENV_DEFAULTS.items()}
    names = WORKER_ENV_PASSED + (LOCAL_ENV_PASSED if local else ())
    env.update({name: os.environ[name] for name in names if name in os.environ})
    if local:
        paths = driver_paths()
        if os.environ.get("PYTHONPATH"):
            paths.append(os.environ["PYTHONPATH"])
        if paths:
            env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def driver_paths() -> list[str]:
    """Folders on this interpreter's ``sys.path`` that a fresh interpreter of the same
    environment would not have (outside the installation prefixes), in order."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    out: list[str] = []
    for entry in sys.path:
        real = os.path.realpath(entry or os.getcwd())
        inside = any(real == p or real.startswith(p + os.sep) for p in prefixes)
        if os.path.isdir(real) and not inside and real not in out:
            out.append(real)
    return out


def init_ray(
    address: str | None = None, *, workers: int = 2, runtime_env: Mapping[str, Any] | None = None
) -> bool:
    """Start a local Ray (``address`` None or ``"local"``: ``num_cpus=workers``) or connect to
    a cluster, with the worker environment of ``worker_env``; the ``env_vars`` of
    ``runtime_env`` win over it. Does nothing when Ray is already initialised in this process.
    Returns whether this call started or connected (so the caller shuts it down)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    local = _is_local(address)
    env = dict(runtime_env or {})
    env["env_vars"] = {**worker_env(local), **dict(env.get("env_vars") or {})}
    options: dict[str, Any] = {
        "runtime_env": env,
        "log_to_driver": False,
        "logging_level": logging.WARNING,
    }
    if local:
        ray.init(num_cpus=workers, include_dashboard=False, **options)
    else:
        ray.init(address=address, **options)
    return True


def auto_shard_size(n_requests: int, workers: int, batch_size: int) -> int:
    """About four shards per worker, so work balances and a lost worker costs little, but no
    shard smaller than the model's batch size (batches are what backends are fast at) and none
    above ``MAX_AUTO_SHARD``."""
    per = math.ceil(n_requests / max(1, 4 * workers))
    return max(1, min(MAX_AUTO_SHARD, max(batch_size, per)))


def default_gpus(model: ModelConfig, cluster_gpus: float) -> float:
    """GPUs one worker reserves: the vllm backend's tensor x pipeline parallel size, one for
    the hf backend on a cluster with GPUs (unless its device is ``cpu``), else none."""
    if model.backend == "vllm":
        options = dict(model.options)
        return float(
            int(options.get("tensor_parallel_size", 1))
            * int(options.get("pipeline_parallel_size", 1))
        )
    if model.backend == "hf" and cluster_gpus > 0 and model.device != "cpu":
        return 1.0
    return 0.0


class _MemoryCache:
    """The two calls ``CachedRunner`` makes, in memory: used when ``run_ray`` has no cache
    file, so that a failed shard's retry one request at a time still skips finished shards."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        return {k: self._values[k] for k in keys if k in self._values}

    def put_many(self, rows: Sequence[tuple[str, str, Any, Any]]) -> int:
        added = 0
        for key, _kind, _request, value in rows:
            if key not in self._values:
                self._values[key] = value
                added += 1
        return added

    def close(self) -> None:
        self._values.clear()


class Worker:
    """The body of one Ray actor: opens the backend once and answers shards with it.

    A failure to open the backend is kept and raised by every call, so the driver sees the
    backend's own error (``model path ... does not exist``) once, instead of Ray restarting an
    actor that can never start.
    """

    def __init__(self, model: ModelConfig, factory: RunnerFactory | None = None) -> None:
        self.error: Exception | None = None
        self.runner: Any = None
        self.fingerprint = ""
        try:
            if factory is None:
                from robustness.run import open_runner

                factory = open_runner
            self.runner = factory(model)
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
            "chat": getattr(runner, "chat", "auto"),
            "has_chat_template": bool(getattr(runner, "has_chat_template", False)),
            "pid": os.getpid(),
        }

    def call(self, kind: str, args: tuple[Any, ...]) -> tuple[str, list[Any]]:
        """Run one shard: ``kind`` is a runner call, ``args`` its positional arguments."""
        runner = self._ready()
        results = getattr(runner, kind)(*args)
        return self.fingerprint, list(results)

    def noise_floor(
        self, variants: Sequence[Variant], k: int, seed: int, chat: bool
    ) -> dict[str, Any]:
        """The noise floor measured on this worker's bare runner (see ``robustness.run``)."""
        from robustness.run import measure_noise_floor

        return measure_noise_floor(self._ready(), variants, k, seed, chat)


class RayRunner:
    """The driver's side of one model's worker pool, itself a runner.

    Its three calls cut their inputs into shards of ``shard_size`` (in input order), send them to
    the actors and return the results in input order, calling ``on_batch`` once per finished
    shard, in completion order. The first actor is started at once, because its identity keys
    the cache; the others start when the first call with work to do arrives, and take shards
    only once they have opened the backend, so no shard waits behind a loading worker.
    """

    def __init__(
        self,
        ray: Any,
        model: ModelConfig,
        *,
        workers: int,
        shard_size: int | None,
        depth: int = DEFAULT_DEPTH,
        options: Mapping[str, Any],
        factory: RunnerFactory | None = None,
    ) -> None:
        self._ray = ray
        self._model = model
        self._workers = workers
        self._depth = depth
        self._factory = factory
        self._actor_class = ray.remote(Worker).options(**options)
        self.shard_size = shard_size
        self.actors: list[Any] = []
        self._ready: set[int] = set()
        self._dead: set[int] = set()
        self._starting: dict[Any, int] = {}
        self.shards = 0
        self.sent = 0
        self.resubmitted = 0
        self.actors.append(self._actor_class.remote(model, factory))
        first = self._describe(self.actors[0].describe.remote())
        self._ready.add(0)
        self._identity = first["identity"]
        self._fingerprint = first["fingerprint"]
        self.backend = first["backend"]
        self.model_id = first["model_id"]
        self.chat = first["chat"]
        self.has_chat_template = first["has_chat_template"]

    # ----------------------------------------------------------------- pool
    def _describe(self, ref: Any) -> dict[str, Any]:
        ray = self._ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as err:
            raise _cause(err) from None
        except ray.exceptions.RayActorError as err:
            raise ModelError(
                f"a Ray worker for model {self._model.name!r} could not start: {_last_line(err)}"
            ) from None

    def _grow(self) -> None:
        while len(self.actors) < self._workers:
            actor = self._actor_class.remote(self._model, self._factory)
            self._starting[actor.describe.remote()] = len(self.actors)
            self.actors.append(actor)

    def _started(self, ref: Any) -> None:
        index = self._starting.pop(ref)
        described = self._describe(ref)
        if described["fingerprint"] != self._fingerprint:
            raise RobustnessError(
                f"a Ray worker for model {self._model.name!r} reports another runner identity "
                "than the first (different library versions on its node?); its results would be "
                "cached under the wrong key."
            )
        self._ready.add(index)

    def close(self) -> None:
        """Stop every actor of this pool (frees their memory and GPUs)."""
        for actor in self.actors:
            self._ray.kill(actor)
        self.actors = []
        self._starting.clear()

    def identity(self) -> dict[str, Any]:
        """The workers' runner identity (the same on every worker, or the run stops)."""
        return dict(self._identity)

    def noise_floor(
        self, variants: Sequence[Variant], k: int, seed: int, chat: bool
    ) -> dict[str, Any]:
        """The noise floor measured on one ready worker."""
        actor = self.actors[min(self._ready - self._dead)]
        try:
            return self._ray.get(actor.noise_floor.remote(list(variants), k, seed, chat))
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
        if len(labels) != len(prompts):
            raise ModelError(
                f"score_options got {len(prompts)} prompts but {len(labels)} label sets."
            )
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
        size = self.shard_size or auto_shard_size(n, self._workers, self._model.batch_size)
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
                        f"a Ray worker for model {self._model.name!r} "
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
                f"every Ray worker for model {self._model.name!r} died; the shards that "
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


def run_ray(
    variants: Sequence[Variant],
    models: Sequence[ModelConfig] = (ModelConfig(),),
    *,
    cache: str | Path | None,
    address: str | None = None,
    workers: int = 2,
    shard_size: int | None = None,
    progress: Progress | None = None,
    info: dict[str, Any] | None = None,
    runner_factory: RunnerFactory | None = None,
    study: str = "study",
    seed: int = 0,
    noise_floor: int = 0,
    gpus_per_worker: float | None = None,
    cpus_per_worker: float = 1.0,
    max_retries: int = 3,
    depth: int = DEFAULT_DEPTH,
    runtime_env: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Ask every model every variant on Ray workers; return the long table.

    The result equals :func:`robustness.run.run` with the same arguments (see the module
    docstring for how, and for clusters and GPUs).

    Parameters
    ----------
    cache
        SQLite file on the driver (None: an in-memory cache for this call only).
    address
        None or ``"local"``: a local Ray with ``num_cpus=workers``; ``"auto"``, ``"HOST:PORT"``
        or ``"ray://HOST:10001"``: an existing cluster. An already initialised Ray session in
        this process is used as it is.
    workers
        Actors per model, each holding one copy of the backend.
    shard_size
        Requests per shard (None: ``auto_shard_size``).
    progress, info, study, seed, noise_floor
        As for ``run``; ``info[model]["ray"]`` also gets the shard counts and worker pids.
    runner_factory
        ``factory(model_config) -> runner`` run inside each worker (default ``open_runner``);
        it must be importable there (a module-level function or a picklable object).
    gpus_per_worker, cpus_per_worker
        Ray resources of one worker (GPUs default: ``default_gpus``).
    max_retries
        Restarts of a dead worker, and re-runs of the shards it had not finished.
    runtime_env
        Ray runtime environment for a cluster (``pip``, ``working_dir``, ``env_vars`` ...).
    """
    if workers < 1:
        raise StudyError(f"workers must be at least 1, got {workers}.")
    if shard_size is not None and shard_size < 1:
        raise StudyError(f"shard_size must be at least 1, got {shard_size}.")
    ray = import_ray()
    started = init_ray(address, workers=workers, runtime_env=runtime_env)
    store: Any = Cache(cache) if cache is not None else _MemoryCache()
    rows: list[dict[str, Any]] = []
    try:
        from robustness.run import uses_chat
        from robustness.runners.cached import CachedRunner

        cluster_gpus = float(ray.cluster_resources().get("GPU", 0))
        for model in models:
            gpus = default_gpus(model, cluster_gpus) if gpus_per_worker is None else gpus_per_worker
            options = {
                "num_cpus": cpus_per_worker,
                "num_gpus": gpus,
                "max_restarts": max_retries,
                "max_task_retries": max_retries,
            }
            pool = RayRunner(
                ray,
                model,
                workers=workers,
                shard_size=shard_size,
                depth=depth,
                options=options,
                factory=runner_factory,
            )
            try:
                chat = uses_chat(pool)
                asked = CachedRunner(pool, store)
                rows.extend(
                    answer_rows(
                        asked, variants, model, study=study, seed=seed, chat=chat, progress=progress
                    )
                )
                if info is not None:
                    entry = info.setdefault(model.name, {})
                    entry["runner"] = pool.identity()
                    entry["chat"] = chat
                    entry["cache"] = asdict(asked.stats)
                    entry["ray"] = {
                        "address": address or "local",
                        "workers": workers,
                        "shard_size": shard_size,
                        "shards": pool.shards,
                        "sent": pool.sent,
                        "resubmitted": pool.resubmitted,
                        "actors_started": len(pool.actors),
                        "gpus_per_worker": gpus,
                    }
                    if noise_floor and model.mode == "choice":
                        entry["noise_floor"] = pool.noise_floor(variants, noise_floor, seed, chat)
            finally:
                pool.close()
    finally:
        store.close()
        if started:
            ray.shutdown()
    return rows_to_table(rows)
