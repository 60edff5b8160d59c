"""CachedRunner: hits, misses and model calls are counted; a repeated run makes no model call;
each batch is stored as it completes; keys follow the runner's identity."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers.fake_runner import FakeRunner
from helpers.tiny import tiny_runner

from robustness.core.cache import Cache
from robustness.runners import CachedRunner, Runner

LABELS = ["A", "B", "C", "D"]


def prompts(n: int, tag: str = "") -> list[str]:
    return [f"{tag}question {i} " + "word " * (i % 5) for i in range(n)]


@pytest.fixture
def cache(tmp_path: Path):
    with Cache(tmp_path / "cache.sqlite") as c:
        yield c


def test_repeated_run_makes_zero_model_calls_with_a_real_model(cache: Cache) -> None:
    inner = tiny_runner(seed=3, batch_size=3)
    runner = CachedRunner(inner, cache)
    assert isinstance(runner, Runner)
    ps = prompts(7)
    first = runner.score_options(ps, [LABELS] * 7)
    gens = runner.generate(ps[:3], 4)
    lls = runner.loglikelihood([(p, " B") for p in ps[:4]])
    assert runner.stats.misses == 14 and runner.stats.hits == 0
    assert runner.stats.model_calls == 3 and runner.stats.stored == 14

    again = CachedRunner(inner, cache)
    forward_calls = []
    original = inner.model.forward
    inner.model.forward = lambda *a, **k: forward_calls.append(1) or original(*a, **k)
    try:
        assert again.score_options(ps, [LABELS] * 7) == first
        assert again.generate(ps[:3], 4) == gens
        assert again.loglikelihood([(p, " B") for p in ps[:4]]) == lls
    finally:
        del inner.model.forward
    assert again.stats.model_calls == 0 and again.stats.hits == 14 and forward_calls == []


def test_only_misses_reach_the_model_and_duplicates_run_once(cache: Cache) -> None:
    inner = FakeRunner(batch_size=2)
    runner = CachedRunner(inner, cache)
    runner.score_options(prompts(4), [LABELS] * 4)
    mixed = [*prompts(6), prompts(6)[5], prompts(6)[4]]
    results = runner.score_options(mixed, [LABELS] * len(mixed))
    assert inner.calls == [("score_options", 4), ("score_options", 2)]
    assert runner.stats.hits == 4 and runner.stats.misses == 4 + 4
    assert runner.stats.model_requests == 6
    assert results[6] == results[5] and results[7] == results[4]
    assert results == FakeRunner().score_options(mixed, [LABELS] * len(mixed))


def test_each_batch_is_stored_as_it_completes(cache: Cache) -> None:
    runner = CachedRunner(FakeRunner(batch_size=3, fail_after=2), cache)
    with pytest.raises(RuntimeError, match="fake runner failure"):
        runner.score_options(prompts(10), [LABELS] * 10)
    assert len(cache) == 6
    resumed = CachedRunner(FakeRunner(batch_size=3), cache)
    resumed.score_options(prompts(10), [LABELS] * 10)
    assert resumed.stats.hits == 6 and resumed.stats.misses == 4 and len(cache) == 10


def test_progress_callback_sees_every_position_once(cache: Cache) -> None:
    runner = CachedRunner(FakeRunner(batch_size=2), cache)
    runner.generate(prompts(3), 5)
    seen: list[int] = []
    out = runner.generate(prompts(7), 5, on_batch=lambda pos, res: seen.extend(pos))
    assert sorted(seen) == list(range(7)) and seen[:3] == [0, 1, 2]
    assert len(out) == 7


def test_keys_follow_identity_and_request(cache: Cache) -> None:
    CachedRunner(FakeRunner(batch_size=2), cache).score_options(prompts(3), [LABELS] * 3)
    other_dtype = CachedRunner(FakeRunner(batch_size=2, dtype="bfloat16"), cache)
    other_dtype.score_options(prompts(3), [LABELS] * 3)
    assert other_dtype.stats.hits == 0
    other_batch = CachedRunner(FakeRunner(batch_size=5), cache)
    other_batch.score_options(prompts(3), [LABELS] * 3)
    assert other_batch.stats.hits == 0
    lenient = CachedRunner(FakeRunner(batch_size=7), cache, key_ignore=("batch_size",))
    lenient.score_options(prompts(3), [LABELS] * 3)
    assert lenient.stats.hits == 0  # keys without batch_size are a different key space
    lenient.score_options(prompts(3), [LABELS] * 3)
    assert lenient.stats.hits == 3
    relabelled = CachedRunner(FakeRunner(batch_size=2), cache)
    relabelled.score_options(prompts(3), [["A", "B"]] * 3)
    relabelled.generate(prompts(3), 5)
    relabelled.generate(prompts(3), 6)
    assert relabelled.stats.hits == 0 and relabelled.stats.misses == 9


def test_thread_pool_callers(cache: Cache) -> None:
    runner = CachedRunner(FakeRunner(batch_size=3), cache)
    chunks = [prompts(9, tag=f"t{i % 4}-") for i in range(12)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        outputs = list(pool.map(lambda ps: runner.score_options(ps, [LABELS] * 9), chunks))
    stats = runner.stats
    assert stats.hits + stats.misses == 12 * 9
    assert len(cache) == 4 * 9
    for ps, out in zip(chunks, outputs, strict=True):
        assert out == FakeRunner().score_options(ps, [LABELS] * 9)
