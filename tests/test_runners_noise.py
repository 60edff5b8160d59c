"""The noise floor: zero flips for an fp32 model, seeded sampling, and detection of a runner
whose answers do depend on the batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from helpers.fake_runner import FakeRunner
from helpers.tiny import tiny_runner

from robustness.core.cache import Cache
from robustness.runners import CachedRunner, noise_floor
from robustness.runners.base import OptionScores


def prompts(n: int) -> list[str]:
    return [f"item {i}: " + "so " * (i % 9) + "Answer:" for i in range(n)]


class BatchSensitive(FakeRunner):
    """Probabilities shift with the batch size, as bf16 numerics can do."""

    def score_options(
        self, ps: Sequence[Any], labels: Sequence[Sequence[str]], *, on_batch: Any = None
    ) -> list[OptionScores]:
        base = super().score_options(ps, labels, on_batch=None)
        out = []
        for score in base:
            probs = list(score.probs)
            if len(ps) > 1:
                probs = probs[::-1]
            out.append(
                OptionScores(
                    tuple(probs),
                    score.label_logprobs,
                    score.top_prob,
                    score.top_token,
                    score.latency_ms,
                )
            )
        return out


def test_fp32_tiny_model_has_no_flips() -> None:
    runner = tiny_runner(seed=2, batch_size=4)
    labels = [["A", "B", "C", "D"]] * 12
    floor = noise_floor(runner, prompts(12), labels, k=8, rng=np.random.default_rng(3))
    assert floor.k == 8 and floor.batch_size == 4 and len(set(floor.indices)) == 8
    assert floor.flips == 0 and floor.flip_rate == 0.0
    assert floor.max_abs_prob_diff < 1e-5
    data = floor.to_dict()
    assert data["runner"]["dtype"] == "float32" and isinstance(data["indices"], list)


def test_sampling_is_seeded() -> None:
    runner = FakeRunner(batch_size=3)
    labels = [["A", "B"]] * 30
    a = noise_floor(runner, prompts(30), labels, k=5, rng=np.random.default_rng(7))
    b = noise_floor(runner, prompts(30), labels, k=5, rng=np.random.default_rng(7))
    c = noise_floor(runner, prompts(30), labels, k=5, rng=np.random.default_rng(8))
    assert a.indices == b.indices and a.indices != c.indices
    all_of_them = noise_floor(runner, prompts(4), labels[:4], k=10, rng=np.random.default_rng(0))
    assert all_of_them.k == 4


def test_batch_dependent_answers_are_detected(tmp_path: Any) -> None:
    runner = BatchSensitive(batch_size=4)
    labels = [["A", "B", "C"]] * 16
    floor = noise_floor(runner, prompts(16), labels, k=12, rng=np.random.default_rng(1))
    assert floor.flips > 0 and floor.max_abs_prob_diff > 0.01
    with Cache(tmp_path / "c.sqlite") as cache:  # a cache in front is bypassed, not read
        cached = CachedRunner(runner, cache)
        again = noise_floor(cached, prompts(16), labels, k=12, rng=np.random.default_rng(1))
        assert again.flips == floor.flips and len(cache) == 0


def test_bad_arguments() -> None:
    from robustness.core.errors import ModelError

    with pytest.raises(ModelError, match="k >= 1"):
        noise_floor(FakeRunner(), prompts(3), [["A", "B"]] * 3, k=0, rng=np.random.default_rng(0))
    with pytest.raises(ModelError, match="3 prompts but 2 label sets"):
        noise_floor(FakeRunner(), prompts(3), [["A", "B"]] * 2, k=1, rng=np.random.default_rng(0))
