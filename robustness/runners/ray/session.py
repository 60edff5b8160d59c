"""Starting Ray for the toolkit: a local one-machine Ray or a connection to a cluster, with
the worker environment.

Where it runs
-------------
:func:`init_ray` with ``address=None`` (or ``"local"``) starts a one-machine Ray with
``num_cpus=workers``. Local workers run this interpreter's environment in the driver's working
directory; the driver's own ``sys.path`` additions (a checkout run without installing, the tests
folder under pytest) are put on their ``PYTHONPATH``; thread settings (``OMP_NUM_THREADS``,
``OMP_WAIT_POLICY``, passive by default) and offline switches (``HF_HUB_OFFLINE``,
``TRANSFORMERS_OFFLINE``) are passed on when the driver has them, so a worker downloads a model
exactly when the driver would. When Ray is
already initialised in this process, that session is used as it is and left running.

A real cluster: start it (``ray start --head`` on one machine, ``ray start --address=HEAD:6379``
on the others), with the same Python, ``robustness`` and backend extras installed on every node
(or give ``runtime_env={"pip": [...]}`` / a container image), and the model folders at the same
path on every node (a shared filesystem, or model ids already in each node's Hugging Face
cache). Then run from any machine that can reach the head: ``address="auto"`` on a cluster node,
``address="ray://HEAD:10001"`` through Ray Client. The cache file and the table stay on the
driver's machine. Environment variables that name driver-side paths are not sent to a cluster.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

from robustness.core.errors import RobustnessError

__all__ = ["RAY_HINT", "driver_paths", "import_ray", "init_ray", "worker_env"]

RAY_HINT = (
    "Ray scale-out needs the ray package, which is not installed here: run "
    "pip install 'robustness[ray]'."
)
#: Environment settings every worker gets (the driver's value when it has one).
WORKER_ENV_DEFAULTS = {
    "OMP_WAIT_POLICY": "PASSIVE",
    "TOKENIZERS_PARALLELISM": "false",
}
#: Passed on to workers when the driver sets them (thread counts and offline switches only).
WORKER_ENV_PASSED = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
)
#: Passed on to local workers only: they name paths on the driver's machine.
LOCAL_ENV_PASSED = ("ROBUSTNESS_CACHE_DIR", "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE")


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
