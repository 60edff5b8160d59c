"""Ray scale-out of the runners: a worker pool that is itself a runner (``pool.py``) and the
start of a local or cluster Ray session (``session.py``). Ray is an optional extra
(``pip install 'robustness[ray]'``); importing this package never imports it."""

from __future__ import annotations

from robustness.runners.ray.pool import DEFAULT_DEPTH, RayRunner, Worker, auto_shard_size
from robustness.runners.ray.session import RAY_HINT, import_ray, init_ray, worker_env

__all__ = [
    "DEFAULT_DEPTH",
    "RAY_HINT",
    "RayRunner",
    "Worker",
    "auto_shard_size",
    "import_ray",
    "init_ray",
    "worker_env",
]
