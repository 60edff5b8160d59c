"""Device, dtype, threads, Hub access and loading for the transformers backend.

Numerics
--------
float32 is the default on the CPU: on the reference CPU bf16 moved letter logits by up to 0.375
between batch sizes 1 and 8 and flipped answers, which a robustness study would misreport as
prompt sensitivity. bf16 is allowed (and ``dtype="auto"`` picks it) on CUDA.

Threads
-------
With torch's default OpenMP settings a forward pass on a small (2-core) CPU shared with other
work was 5-25x slower than with ``OMP_WAIT_POLICY=PASSIVE`` set before torch is imported, or with
``torch.set_num_threads(1)``. Nothing here touches the environment at import; the runner calls
:func:`configure_threads` when it is built. ``threads=N`` is used as given; otherwise a set
``OMP_NUM_THREADS`` or ``OMP_WAIT_POLICY=PASSIVE`` (which ``make_runner`` and the CLI set before
torch is imported, when the user set nothing) is respected, and with neither the runner falls
back to one thread and warns once.

Hub access
----------
``offline=None`` follows the environment (offline exactly when ``HF_HUB_OFFLINE`` is truthy, as
huggingface_hub reads it); ``True`` loads local files only; ``False`` downloads a model id that
is not cached yet, as transformers does.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from pathlib import Path
from typing import Any

import torch

from robustness.core.errors import ModelError

__all__ = [
    "DTYPES",
    "check_hub_reachable",
    "configure_threads",
    "eos_token_ids",
    "folder_revision",
    "is_offline",
    "load_pretrained",
    "resolve_device",
    "resolve_dtype",
]

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}
_TRUTHY = {"1", "true", "yes", "on", "y", "t"}
_thread_warning_given = False


def configure_threads(threads: int | None = None) -> int:
    """Make torch's CPU threading sane for this process and return the thread count in use.

    Parameters
    ----------
    threads : int or None
        Use exactly this many threads; ``None`` decides as the module docstring says.

    Returns
    -------
    int
        The number of torch threads now in use.
    """
    global _thread_warning_given
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ModelError(f"threads must be a whole number of at least 1, got {threads!r}.")
        torch.set_num_threads(threads)
        return threads
    passive = os.environ.get("OMP_WAIT_POLICY", "").upper() == "PASSIVE"
    if not passive and "OMP_NUM_THREADS" not in os.environ and torch.get_num_threads() > 1:
        torch.set_num_threads(1)
        if not _thread_warning_given:
            _thread_warning_given = True
            warnings.warn(
                "OpenMP runs with its default spin-waiting (neither OMP_WAIT_POLICY=PASSIVE nor "
                "OMP_NUM_THREADS was set before torch was imported), so the runner uses one CPU "
                "thread; set one of them, or pass threads=N.",
                RuntimeWarning,
                stacklevel=3,
            )
    return torch.get_num_threads()


def resolve_device(device: str) -> torch.device:
    """``"auto"`` -> CUDA when present, else CPU; ``"cuda"``/``"cuda:N"`` must exist."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ModelError(f"unknown device {device!r}: use auto, cpu, cuda or cuda:N.") from err
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise ModelError(f"device {device!r} was requested but CUDA is not available here.")
        if resolved.index is not None and resolved.index >= torch.cuda.device_count():
            raise ModelError(
                f"device {device!r} was requested but only "
                f"{torch.cuda.device_count()} CUDA device(s) exist."
            )
    elif resolved.type != "cpu":
        raise ModelError(f"unsupported device {device!r}: use auto, cpu, cuda or cuda:N.")
    return resolved


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """Map a dtype name to torch; ``"auto"`` is bfloat16 on CUDA and float32 on the CPU."""
    if dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    if dtype not in DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}: use one of auto, {', '.join(DTYPES)}.")
    if device.type == "cpu" and dtype != "float32":
        warnings.warn(
            f"{dtype} on the CPU changes answers between batch sizes; float32 is "
            "the safe choice for robustness studies.",
            RuntimeWarning,
            stacklevel=3,
        )
    return DTYPES[dtype]


def folder_revision(path: Path) -> str:
    """A cheap fingerprint of a model folder: its config bytes and the names and sizes of its
    weight files (hashing gigabytes of weights on every start would be too slow)."""
    digest = hashlib.sha256()
    config = path / "config.json"
    if config.is_file():
        digest.update(config.read_bytes())
    for weights in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        digest.update(f"{weights.name}:{weights.stat().st_size};".encode())
    return digest.hexdigest()[:16]


def is_offline(offline: bool | None = None) -> bool:
    """Whether loads must use local files only: ``offline`` when given, else whether
    ``HF_HUB_OFFLINE`` is set to a truthy value (``1``, ``true``, ``yes``, ``on``)."""
    if offline is not None:
        if not isinstance(offline, bool):
            raise ModelError(f"offline must be true, false or unset, got {offline!r}.")
        return offline
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUTHY


#: Seconds the Hub may take to answer whether a model id exists before the load gives up.
HUB_PROBE_TIMEOUT = 5.0


def check_hub_reachable(model_id: str, timeout: float = HUB_PROBE_TIMEOUT) -> None:
    """Before downloading ``model_id``, ask the Hub once (``timeout`` seconds) whether it can
    be reached; raise one sentence at once when it cannot, instead of transformers' retries.

    A model whose config is already in the local cache, or a Hub that answers at all (even
    "not found" or "gated": transformers then says so itself), passes.
    """
    from huggingface_hub import HfApi, constants, try_to_load_from_cache
    from huggingface_hub.errors import HfHubHTTPError

    if model_id.count("/") > 1 or model_id.startswith((".", "/", "~")):
        return  # not a Hub id (a path that does not exist is the loader's error)
    try:
        if isinstance(try_to_load_from_cache(model_id, "config.json"), str):
            return
    except Exception:  # an id the cache cannot even name: let transformers explain it
        return
    try:
        HfApi().model_info(model_id, timeout=timeout)
    except HfHubHTTPError:
        return  # the Hub answered
    except Exception as err:
        raise ModelError(
            f"model {model_id!r} is not in the local Hugging Face cache and the Hub at "
            f"{constants.ENDPOINT} cannot be reached ({type(err).__name__}); connect to the "
            "network, or give a local model folder (set HF_HUB_OFFLINE=1 to never try)."
        ) from None


def load_pretrained(
    path: str | Path, torch_dtype: torch.dtype, *, offline: bool | None = None
) -> tuple[Any, Any, Path | None]:
    """Load tokenizer and causal LM from a folder or a Hub model id.

    Parameters
    ----------
    path : str or Path
        A model folder, or a model id (local cache, or the Hub unless offline).
    torch_dtype : torch.dtype
        The weights' dtype.
    offline : bool or None
        See :func:`is_offline`.

    Returns
    -------
    tuple
        ``(model, tokenizer, folder)``; ``folder`` is the local folder, or None for a model id.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    local_only = is_offline(offline)
    folder = Path(path).expanduser()
    is_dir = folder.is_dir()
    source = str(folder) if is_dir else str(path)
    if not is_dir and not local_only:
        check_hub_reachable(source)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        model = AutoModelForCausalLM.from_pretrained(
            source, dtype=torch_dtype, local_files_only=local_only
        )
    except OSError as err:
        if is_dir:
            raise ModelError(f"model folder {folder} could not be loaded: {err}") from err
        if local_only:
            raise ModelError(
                f"model {str(path)!r} was not found: no such folder, and not in the local "
                "Hugging Face cache (offline, so nothing is downloaded; set offline = false "
                "or unset HF_HUB_OFFLINE to download it)."
            ) from None
        raise ModelError(
            f"model {str(path)!r} could not be loaded from a folder, the local cache or the "
            f"Hub: {err}"
        ) from err
    return model, tokenizer, folder if is_dir else None


def eos_token_ids(model: Any, tokenizer: Any) -> tuple[int, ...]:
    """Every end-of-sequence id the generation config, model config or tokenizer names."""
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), model.config, tokenizer):
        value = getattr(source, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return tuple(sorted(ids))
