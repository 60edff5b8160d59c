"""Building a vLLM runner from a study file's settings: model source, dtype, engine arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from robustness.core.errors import ModelError
from robustness.runners.torch_setup import folder_revision
from robustness.runners.vllm.runner import DEFAULT_TOP_LOGPROBS, VLLMRunner, import_vllm

__all__ = ["VLLM_DTYPES", "make_vllm_runner"]

#: The toolkit's dtype names -> vLLM's (``auto`` is bfloat16 on a GPU, as in the hf runner).
VLLM_DTYPES = {
    "auto": "bfloat16",
    "float32": "float32",
    "bfloat16": "bfloat16",
    "float16": "float16",
}


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

    ``model`` is ``"embedded"`` (the converted SmolLM2 folder the hf backend uses), a local model
    folder, or a model id already in the local Hugging Face cache; nothing is downloaded unless
    the user unset ``HF_HUB_OFFLINE``. ``dtype`` takes the toolkit's names (``auto`` is
    bfloat16). ``device`` exists so study files written for the hf backend work: vLLM always
    runs on the GPUs it is given, so only ``auto`` and ``cuda`` are accepted. Every other
    keyword goes to ``vllm.LLM`` unchanged (``tensor_parallel_size=2``, ``max_model_len=4096``
    ...). Raises ModelError with one sentence when vllm is missing or a setting is wrong.
    """
    vllm = import_vllm()
    if dtype not in VLLM_DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}: use one of {', '.join(VLLM_DTYPES)}.")
    if device not in ("auto", "cuda"):
        raise ModelError(
            f"backend 'vllm' runs on the GPUs it is given; device {device!r} is "
            "not supported (use auto)."
        )
    model_id, revision, source = model, None, model
    if model == "embedded":
        from robustness.runners.embedded import MODEL_ID, ensure_converted

        found = ensure_converted()
        source, model_id, revision = str(found.path), f"embedded:{MODEL_ID}", found.gguf_sha256[:16]
    else:
        path = Path(model).expanduser()
        if path.is_dir():
            source, revision = str(path), folder_revision(path)
        elif path.exists():
            raise ModelError(f"model path {model!r} is a file; give the model's folder.")
    reserved = sorted({"model", "tokenizer", "dtype"} & set(engine_args))
    if reserved:
        raise ModelError(
            f"engine argument {reserved[0]!r} is set by the runner itself; give it "
            "as the model's own setting instead."
        )
    engine_args.setdefault("enable_prefix_caching", False)
    engine_args.setdefault("seed", 0)
    cap = int(engine_args.get("max_logprobs", 0) or 0)
    if cap > 0:  # vLLM refuses requests for more log-probs than its max_logprobs
        top_logprobs = min(top_logprobs, cap)
    vllm_dtype = VLLM_DTYPES[dtype]
    try:
        llm = vllm.LLM(model=source, tokenizer=source, dtype=vllm_dtype, **engine_args)
    except (OSError, ValueError) as err:
        raise ModelError(f"vLLM could not load model {model!r}: {err}") from err
    return VLLMRunner(
        llm,
        model_id=model_id,
        revision=revision,
        dtype=vllm_dtype,
        batch_size=batch_size,
        chat=chat,
        engine_args=engine_args,
        top_logprobs=top_logprobs,
    )
