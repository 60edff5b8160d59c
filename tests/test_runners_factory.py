"""make_runner: one clear sentence for every bad setting, and local folders load offline."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from helpers.tiny import tiny_model, tiny_tokenizer

from robustness.core.errors import ModelError
from robustness.runners import Runner, make_runner


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"backend": "llamafile"}, r"unknown backend 'llamafile': use one of hf, vllm, openai"),
        ({"backend": "vllm"}, r"pip install"),
        ({"backend": "openai"}, r"backend 'openai' needs the model name the server serves"),
        ({"backend": "openai", "model": "m"}, r"backend 'openai' needs base_url"),
        ({"threads": 1, "port": 2}, r"backend 'hf' has no option\(s\) port"),
        ({"dtype": "float8"}, r"unknown dtype 'float8'"),
        ({"batch_size": 0}, r"batch_size must be a positive integer"),
        ({"model": "./no/such/model"}, r"model path './no/such/model' does not exist\."),
        ({"model": "/definitely/missing"}, r"model path '/definitely/missing' does not exist\."),
        ({"device": "tpu"}, r"device"),
    ],
)
def test_bad_settings_raise_one_sentence(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ModelError, match=message) as info:
        make_runner(**kwargs)  # type: ignore[arg-type]
    text = str(info.value)
    assert text.endswith(".") and text.count(". ") == 0


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_requested_but_absent() -> None:
    with pytest.raises(ModelError, match=r"'cuda' was requested but CUDA is not available"):
        make_runner(device="cuda")


def test_hub_id_not_in_local_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelError, match=r"not in the local Hugging Face cache"):
        make_runner(model="nobody-owns/this-model-xyz")


def test_a_file_is_not_a_model_folder(tmp_path: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"x")
    with pytest.raises(ModelError, match="is a file"):
        make_runner(model=str(weights))


def test_local_folder_loads_and_scores_like_the_model_in_memory(tmp_path: Path) -> None:
    tokenizer = tiny_tokenizer()
    model = tiny_model(len(tokenizer), seed=5)
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    runner = make_runner(model=str(tmp_path / "tiny"), batch_size=2, threads=1)
    identity = runner.identity()
    assert identity["device"] == "cpu" and identity["dtype"] == "float32"
    assert identity["batch_size"] == 2 and len(identity["revision"]) == 16
    prompt = [{"role": "user", "content": "pick"}]
    score = runner.score_options([prompt], [["A", "B"]])[0]
    ids = torch.tensor([runner.encode_prompts([prompt])[0]])
    with torch.inference_mode():
        logprobs = torch.log_softmax(model(input_ids=ids).logits[0, -1].double(), -1)
    a, space_a = tokenizer.encode("A"), tokenizer.encode(" A")
    expected = float(torch.logaddexp(logprobs[a[0]], logprobs[space_a[0]]))
    assert score.label_logprobs[0] == pytest.approx(expected, abs=1e-5)
    # the runner contract: chat use from the template, and close() releases nothing needed.
    assert isinstance(runner, Runner)
    assert runner.uses_chat is bool(getattr(tokenizer, "chat_template", None))
    runner.close()
    assert runner.score_options([prompt], [["A", "B"]])[0].probs == score.probs
