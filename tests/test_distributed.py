"""Ray scale-out on a local two-worker Ray: the same table as one process, a SIGKILLed worker
loses and duplicates nothing, a repeated run sends nothing, backend errors become the same rows.

One Ray session serves the whole module (starting Ray takes several seconds here). The models
use ``batch_size=1`` so that every prompt is computed alone in both runs: with larger batches
the hf runner's float32 numbers move by ~1e-7 with batch composition (the noise floor, see
``robustness.runners.noise``), which sharding changes, and the tables would be equal only to
that tolerance rather than identical.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.ray_runners import (
    FailingFactory,
    FailingRunner,
    PidIdentityFactory,
    SlowFactory,
    read_log,
)

import robustness as rb
from robustness.core.cache import Cache
from robustness.core.errors import RobustnessError
from robustness.executors import Ray

KEY = ["model", "item_id", "category", "variant_id"]
FAMILIES = ["option_order", "label_substitution", "formatting"]


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip(
        "ray", reason="ray is an optional extra: pip install 'robustness[ray]'"
    )
    from robustness.runners.ray import init_ray

    init_ray(workers=2)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def variants():
    return rb.perturb(rb.demo_items()[:6], families=FAMILIES, n=2, seed=0)


def models(tiny_folder: Path, *modes: str) -> list[rb.ModelConfig]:
    extra = {"generate": {"max_new_tokens": 4}}
    names = {"choice": "c", "cloze": "z", "generate": "g"}
    return [
        rb.model(
            str(tiny_folder),
            name=names[mode],
            mode=mode,
            batch_size=1,
            options={"threads": 1},
            **extra.get(mode, {}),
        )
        for mode in modes
    ]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory, tiny_folder, variants):
    """The single-process table and cache size for the three modes."""
    path = tmp_path_factory.mktemp("baseline") / "cache.sqlite"
    table = rb.run(variants, models(tiny_folder, "choice", "cloze", "generate"), cache=path)
    with Cache(path) as cache:
        counts = {
            kind: cache.count(kind) for kind in ("score_options", "loglikelihood", "generate")
        }
    return table, counts


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal after sorting, exactly, but for ``latency_ms`` (wall time, the one measured
    column) and the probabilities: the transformers backend shares the key/value cache of a
    common prefix among the prompts of one call, and a shard holds other prompts than the
    whole run, so probabilities may differ in the sixth decimal (within the 1e-4 the prefix
    cache guarantees; answers must not). Missing values compare equal whatever dtype a
    subset of rows gave the column."""
    numeric = ("option_probs", "confidence")
    cols = [c for c in a.columns if c != "latency_ms" and c not in numeric]

    def plain(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
        df = df.sort_values(KEY).reset_index(drop=True)[columns].astype(object)
        return df.where(df.notna(), None)

    pd.testing.assert_frame_equal(plain(a, cols), plain(b, cols), check_exact=True)
    for col in numeric:
        if col not in a.columns:
            continue
        left, right = plain(a, [col])[col], plain(b, [col])[col]
        for x, y in zip(left, right, strict=True):
            assert (x is None) == (y is None)
            if x is not None:
                assert np.allclose(np.asarray(x, float), np.asarray(y, float), atol=1e-5)


def test_without_ray_the_error_says_how_to_install(monkeypatch, variants):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(RobustnessError) as err:
        rb.run(variants, executor=Ray())
    assert "pip install 'robustness[ray]'" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.slow
def test_two_workers_give_the_single_process_table_in_every_mode(
    ray_session, tmp_path, tiny_folder, variants, baseline
):
    info: dict = {}
    seen: list[tuple[str, int, int]] = []
    table = rb.run(
        variants,
        models(tiny_folder, "choice", "cloze", "generate"),
        cache=tmp_path / "ray.sqlite",
        info=info,
        noise_floor=4,
        progress=lambda m, done, total: seen.append((m, done, total)),
        executor=Ray(workers=2, shard_size=5),
    )
    want, counts = baseline
    same(want, table)
    assert list(table["variant_id"]) == list(want["variant_id"])  # the same order, too
    assert info["c"]["ray"]["sent"] == len(variants) and info["c"]["ray"]["shards"] >= 2
    local: dict = {}
    rb.run(variants[:1], models(tiny_folder, "choice"), info=local)
    assert info["c"]["runner"] == local["c"]["runner"]  # the workers' identity keys the cache
    assert info["c"]["noise_floor"]["k"] == 4 and info["c"]["noise_floor"]["flips"] == 0
    assert "noise_floor" not in info["z"]  # choice mode only, as in run
    assert {m for m, _, _ in seen} == {"c", "z", "g"}
    assert all(done <= total for _, done, total in seen)
    with Cache(tmp_path / "ray.sqlite") as cache:
        assert {k: cache.count(k) for k in counts} == counts


@pytest.mark.slow
def test_a_sigkilled_worker_loses_nothing_and_a_repeat_sends_nothing(
    ray_session, tmp_path, tiny_folder, variants, baseline
):
    log_dir = tmp_path / "log"
    log_dir.mkdir()
    cache = tmp_path / "killed.sqlite"
    killed: list[int] = []

    def kill_a_busy_worker(model: str, done: int, total: int) -> None:
        if killed or done == 0:
            return
        # the worker that just finished starts its queued shard a moment later: poll for it.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            last: dict[int, str] = {}
            for event in read_log(log_dir):
                last[event["pid"]] = event["event"]
            busy = sorted(pid for pid, event in last.items() if event == "start")
            if busy:
                os.kill(busy[0], signal.SIGKILL)
                killed.append(busy[0])
                return
            time.sleep(0.02)
        raise AssertionError("no worker was inside a shard after the first shard finished")

    info: dict = {}
    choice = models(tiny_folder, "choice")
    table = rb.run(
        variants,
        choice,
        cache=cache,
        info=info,
        progress=kill_a_busy_worker,
        executor=Ray(workers=2, shard_size=4, runner_factory=SlowFactory(str(log_dir), sleep=1.0)),
    )
    assert killed, "no worker was killed"
    events = read_log(log_dir)
    started_by_killed = {
        e["shard"] for e in events if e["pid"] == killed[0] and e["event"] == "start"
    }
    ended_by_killed = {e["shard"] for e in events if e["pid"] == killed[0] and e["event"] == "end"}
    interrupted = started_by_killed - ended_by_killed
    assert interrupted, "the killed worker was not inside a shard"
    for shard in interrupted:  # re-run to the end by a live (restarted or other) worker
        assert any(
            e["shard"] == shard and e["event"] == "end" and e["pid"] != killed[0] for e in events
        )
    # nothing lost, nothing duplicated: the single-process table, one cache row per request.
    want, counts = baseline
    same(want[want["model"] == "c"].reset_index(drop=True), table)
    assert not table.duplicated(KEY).any()
    with Cache(cache) as store:
        assert store.count("score_options") == counts["score_options"] and store.integrity_ok()

    again: dict = {}
    repeat = rb.run(
        variants,
        choice,
        cache=cache,
        info=again,
        executor=Ray(workers=2, shard_size=4, runner_factory=SlowFactory(str(log_dir), sleep=1.0)),
    )
    same(table, repeat)
    assert again["c"]["ray"]["sent"] == 0 and again["c"]["ray"]["shards"] == 0
    assert again["c"]["ray"]["actors_started"] == 1  # only for the runner identity
    assert again["c"]["cache"]["hits"] == len(variants)
    assert again["c"]["cache"]["model_calls"] == 0


@pytest.mark.slow
def test_backend_errors_become_the_same_invalid_rows(ray_session, tmp_path, tiny_folder, variants):
    from robustness.executors import open_runner

    marker = variants[0].item.question[:30]
    choice = models(tiny_folder, "choice")
    want = rb.run(variants, choice, runners={"c": FailingRunner(open_runner(choice[0]), marker)})
    got = rb.run(
        variants,
        choice,
        cache=tmp_path / "c.sqlite",
        executor=Ray(workers=2, shard_size=6, runner_factory=FailingFactory(marker)),
    )
    failed = got["invalid_reason"].fillna("").str.startswith("error: ")
    assert failed.sum() == (want["invalid_reason"].fillna("").str.startswith("error: ")).sum() > 0
    same(want, got)


@pytest.mark.slow
def test_workers_with_different_identities_stop_the_run(
    ray_session, tmp_path, tiny_folder, variants
):
    # the first worker's shards wait until the second one has opened the backend.
    with pytest.raises(RobustnessError, match="another runner identity"):
        rb.run(
            variants,
            models(tiny_folder, "choice"),
            cache=tmp_path / "c.sqlite",
            executor=Ray(
                workers=2, shard_size=2, runner_factory=PidIdentityFactory(str(tmp_path), sleep=0.5)
            ),
        )


@pytest.mark.slow
def test_a_backend_that_cannot_open_is_one_clear_error(ray_session, tmp_path, variants):
    missing = rb.model(str(tmp_path / "no-such-model"), name="x")
    with pytest.raises(rb.ModelError, match="does not exist"):
        rb.run(variants, [missing], cache=tmp_path / "c.sqlite", executor=Ray(workers=2))
