"""The vLLM runner's adapter, against a fake ``vllm`` module (no GPU here).

What this tests and what it does not: the fake ``vllm`` injected into ``sys.modules`` answers from
a transformers model on the CPU with the structures vLLM returns (``RequestOutput`` with
``prompt_logprobs`` as a list whose first entry is None, ``CompletionOutput.logprobs`` as one
``{token_id: Logprob}`` dict per generated token holding the top-k and the sampled token, EOS kept
as the last output id with ``finish_reason="stop"``). So these tests check the adapter (requests,
reading of the log-prob dicts, the exact fallback for labels outside the top-k, chunking,
identity, engine arguments, errors) against the hf runner's numbers on the same weights; they do
not test vLLM itself. ``bench/gpu_check.py`` does that on a GPU.
"""

from __future__ import annotations

import importlib
import math
import sys
import types
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from robustness.core.cache import Cache
from robustness.core.errors import ModelError
from robustness.runners.cached import CachedRunner


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


@pytest.mark.parametrize("top_logprobs", [1, 20])
def test_choice_scores_match_the_hf_runner_including_colliding_labels(
    fake_vllm, tiny_folder, hf, top_logprobs
):
    runner = make(tiny_folder, top_logprobs=top_logprobs)
    got = runner.score_options(PROMPTS, LABELS)
    want = hf.score_options(PROMPTS, LABELS)
    for g, w in zip(got, want, strict=True):
        assert all(close(a, b) for a, b in zip(g.probs, w.probs, strict=True)), (g, w)
        assert all(close(a, b) for a, b in zip(g.label_logprobs, w.label_logprobs, strict=True))
        assert close(g.top_prob, w.top_prob) and g.top_token == w.top_token
        assert g.argmax == w.argmax and close(sum(g.probs), 1.0, 1e-9)
    # with k=1 nearly every label lies outside the top-k, so the exact prompt_logprobs fallback
    # answers most reads; with k=20 the top-k answers some of them.
    exact = [s for call in FakeLLM.made[-1].calls for _, s in call if s.prompt_logprobs]
    assert len(exact) == runner.exact_requests and not runner.token_ids_supported
    reads = sum(
        len(tokens)
        for labels in LABELS
        for r in runner._plan(tuple(labels)).reads
        for _, _, tokens in r
    )
    if top_logprobs == 1:
        assert len(exact) >= reads - len(PROMPTS) * 4
    else:
        assert len(exact) < reads
    assert all(s.max_tokens == 1 for s in exact)


def test_named_token_logprobs_need_no_fallback_where_vllm_has_them(fake_vllm, tiny_folder, hf):
    fake_vllm.SamplingParams = SamplingParamsWithIds
    runner = make(tiny_folder, top_logprobs=1)
    assert runner.token_ids_supported
    got = runner.score_options(PROMPTS, LABELS)
    want = hf.score_options(PROMPTS, LABELS)
    for g, w in zip(got, want, strict=True):
        assert all(close(a, b) for a, b in zip(g.probs, w.probs, strict=True)), (g, w)
        assert close(g.top_prob, w.top_prob) and g.top_token == w.top_token
    asked = [s for call in FakeLLM.made[-1].calls for _, s in call]
    assert runner.exact_requests == 0 and not any(s.prompt_logprobs for s in asked)
    assert all(s.logprob_token_ids for s in asked)


def test_colliding_labels_cost_one_request_per_trie_node(fake_vllm, tiny_folder):
    runner = make(tiny_folder, top_logprobs=20)
    runner.score_options([PROMPTS[0], PROMPTS[2]], [LABELS[0], LABELS[2]])
    first = FakeLLM.made[-1].calls[0]
    prompt_a = runner.encode_prompts([PROMPTS[0]])[0]
    prompt_c = runner.encode_prompts([PROMPTS[2]])[0]
    # A-D: one node (the plain prompt). 1/10/2: the plain prompt, after the space token, and
    # after "1" and " 1" (to split "1" from "10"): the plan's nodes, each asked once.
    plain = [ids for ids, _ in first if ids == prompt_a]
    assert len(plain) == 1
    nodes = [ids[len(prompt_c) :] for ids, _ in first if ids[: len(prompt_c)] == prompt_c]
    plan = runner._plan(("1", "10", "2"))
    assert sorted(map(tuple, nodes)) == sorted(n for r in plan.reads for _, n, _ in r)


def test_generate_and_loglikelihood_match_the_hf_runner(fake_vllm, tiny_folder, hf):
    runner = make(tiny_folder)
    got = runner.generate(PROMPTS, 5)
    want = hf.generate(PROMPTS, 5)
    assert [(g.text, g.n_tokens) for g in got] == [(w.text, w.n_tokens) for w in want]
    pairs = [(p, " answer " * (i % 3)) for i, p in enumerate(PROMPTS)] + [(PROMPTS[0], "")]
    got_ll = runner.loglikelihood(pairs)
    want_ll = hf.loglikelihood(pairs)
    for g, w in zip(got_ll, want_ll, strict=True):
        assert g.n_tokens == w.n_tokens and close(g.logprob, w.logprob, 1e-4), (g, w)
    assert got_ll[-1].n_tokens == 0 and got_ll[-1].logprob == 0.0


def test_generate_drops_the_stop_token_vllm_keeps(fake_vllm, tiny_folder):
    runner = make(tiny_folder)
    eos = runner.tokenizer.eos_token_id
    hello = runner.tokenizer("hi", add_special_tokens=False)["input_ids"]

    def answer(tokens, finish, stop_reason=None):
        completion = types.SimpleNamespace(
            token_ids=tokens, finish_reason=finish, stop_reason=stop_reason, logprobs=None, text="?"
        )
        return types.SimpleNamespace(outputs=[completion], prompt_logprobs=None)

    canned = [
        answer([*hello, eos], "stop"),
        answer([*hello, 7], "stop", stop_reason=7),
        answer([*hello, 7], "length"),
        answer([*hello, eos], "length"),
    ]
    runner.llm.generate = lambda prompts, params, use_tqdm=False: canned[: len(prompts)]
    runner.batch_size = 4
    out = runner.generate(["a", "b", "c", "d"], 3)
    assert [g.n_tokens for g in out] == [len(hello), len(hello), len(hello) + 1, len(hello)]
    assert out[0].text == "hi" and out[3].text == "hi"


def test_chunks_report_batches_and_feed_the_cache(fake_vllm, tiny_folder, tmp_path):
    runner = make(tiny_folder, batch_size=3)
    seen: list[list[int]] = []
    prompts = [f"Question {i}? A or B. Answer:" for i in range(7)]
    runner.score_options(
        prompts, [["A", "B"]] * 7, on_batch=lambda pos, res: seen.append(list(pos))
    )
    assert seen == [[0, 1, 2], [3, 4, 5], [6]]
    with Cache(tmp_path / "c.sqlite") as cache:
        cached = CachedRunner(runner, cache)
        first = cached.score_options(prompts, [["A", "B"]] * 7)
        calls = len(FakeLLM.made[-1].calls)
        second = cached.score_options(prompts, [["A", "B"]] * 7)
        assert len(FakeLLM.made[-1].calls) == calls  # no engine call on a repeat
        assert [r.probs for r in first] == [r.probs for r in second]
        assert cached.stats.hits == 7


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
    with pytest.raises(ModelError, match="device 'cpu' is not supported"):
        make(tiny_folder, device="cpu")
    with pytest.raises(ModelError, match="unknown dtype"):
        make(tiny_folder, dtype="int8")


def test_too_long_inputs_are_a_clear_error(fake_vllm, tiny_folder):
    runner = make(tiny_folder, max_model_len=16)
    with pytest.raises(ModelError, match="max_model_len 16"):
        runner.loglikelihood([("a short prompt", " and a response that is far too long")])
    with pytest.raises(ModelError):
        runner.score_options(["x" * 40], [["A", "B"]])


def test_a_study_runs_through_the_vllm_runner_like_the_hf_runner(fake_vllm, tiny_folder, hf):
    import robustness as rb

    items = rb.demo_items()[:3]
    variants = rb.perturb(items, families=["option_order", "label_substitution"], n=2, seed=0)
    model = rb.model(str(tiny_folder), name="m", mode="choice")
    via_vllm = rb.run(variants, [model], runners={"m": make(tiny_folder, batch_size=8)})
    via_hf = rb.run(variants, [model], runners={"m": hf})
    assert via_vllm["answer"].tolist() == via_hf["answer"].tolist()
    for a, b in zip(via_vllm["option_probs"], via_hf["option_probs"], strict=True):
        assert all(close(x, y) for x, y in zip(a, b, strict=True))
