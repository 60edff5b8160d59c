"""The SQLite result cache: keys, round trips, bound parameters, threads, and a writer process
killed with SIGKILL mid-run."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from helpers.fake_runner import CHILD_LABELS, FakeRunner, child_prompts

from robustness.core.cache import Cache, CacheError, make_key

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def test_keys_are_canonical() -> None:
    a = make_key(
        {
            "kind": "score_options",
            "prompt": "Q",
            "labels": ["A", "B"],
            "runner": {"dtype": "float32", "model_id": "m"},
        }
    )
    b = make_key(
        {
            "runner": {"model_id": "m", "dtype": "float32"},
            "labels": ["A", "B"],
            "prompt": "Q",
            "kind": "score_options",
        }
    )
    assert a == b and len(a) == 64
    assert a != make_key(
        {
            "kind": "score_options",
            "prompt": "Q",
            "labels": ["B", "A"],
            "runner": {"dtype": "float32", "model_id": "m"},
        }
    )
    assert make_key({"prompt": "Q"}) != make_key({"prompt": [{"role": "user", "content": "Q"}]})
    assert make_key({"p": "é"}) != make_key({"p": "e"})


def test_round_trip_and_first_value_wins(tmp_path: Path) -> None:
    with Cache(tmp_path / "sub" / "c.sqlite") as cache:
        assert (
            cache.put_many(
                [
                    ("k1", "generate", {"prompt": "a"}, {"text": "x", "n": 1}),
                    ("k2", "generate", {"prompt": "b"}, {"probs": [0.25, 0.75]}),
                ]
            )
            == 2
        )
        assert cache.put_many([("k1", "generate", {"prompt": "a"}, {"text": "other"})]) == 0
        assert cache.get_many(["k1", "k2", "k3", "k1"]) == {
            "k1": {"text": "x", "n": 1},
            "k2": {"probs": [0.25, 0.75]},
        }
        assert len(cache) == 2 and cache.count("generate") == 2 and cache.count("other") == 0
        mode = sqlite3.connect(cache.path).execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"


def test_many_keys_and_untrusted_text_are_bound_parameters(tmp_path: Path) -> None:
    evil = "x'); DROP TABLE results; --\x00\"%s{}"
    rows = [
        (make_key({"i": i}), "generate", {"prompt": evil}, {"text": evil + str(i)})
        for i in range(1200)
    ]
    with Cache(tmp_path / "c.sqlite") as cache:
        assert cache.put_many(rows) == 1200
        found = cache.get_many(r[0] for r in rows)
        assert len(found) == 1200
        assert found[rows[7][0]] == {"text": evil + "7"}
        assert cache.integrity_ok()


def test_threads_share_one_cache(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c.sqlite")
    rng = np.random.default_rng(0)
    plans = [rng.integers(0, 300, size=40).tolist() for _ in range(16)]

    def work(keys: list[int]) -> int:
        added = cache.put_many([(f"k{k}", "generate", {"k": k}, {"v": k}) for k in keys])
        got = cache.get_many(f"k{k}" for k in keys)
        assert all(got[f"k{k}"] == {"v": k} for k in keys)
        return added

    with ThreadPoolExecutor(max_workers=8) as pool:
        added = sum(pool.map(work, plans))
    distinct = len({k for plan in plans for k in plan})
    assert added == distinct == len(cache)
    cache.close()


def test_foreign_or_future_files_are_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all, just text" * 50)
    with pytest.raises(CacheError, match=r"junk\.sqlite"):
        Cache(junk)
    newer = tmp_path / "newer.sqlite"
    Cache(newer).close()
    conn = sqlite3.connect(newer)
    conn.execute("UPDATE meta SET value = ? WHERE name = ?", ("99", "schema_version"))
    conn.commit()
    conn.close()
    with pytest.raises(CacheError, match=r"schema version '99'"):
        Cache(newer)


def _writer(db: Path, n: int, batch_size: int, sleep: float) -> subprocess.Popen[str]:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from helpers import fake_runner as c; "
        "c.child_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-c", code, str(TESTS), str(db), str(n), str(batch_size), str(sleep)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(ROOT),
    )


def test_sigkill_mid_run_loses_at_most_the_batch_in_flight(tmp_path: Path) -> None:
    db = tmp_path / "run.sqlite"
    n, batch_size = 60, 4
    rng = np.random.default_rng(1)
    child = _writer(db, n, batch_size, sleep=0.05)
    assert child.stdout is not None
    reported = 0
    while reported < 5:
        line = child.stdout.readline()
        assert line.startswith("batch"), line
        reported += 1
    time.sleep(float(rng.uniform(0.0, 0.05)))  # land anywhere inside a batch
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL

    with Cache(db) as cache:
        assert cache.integrity_ok()
        stored = len(cache)
    assert reported * batch_size <= stored < n
    assert stored % batch_size == 0  # whole batches only
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM results").fetchone() == (
        stored,
        stored,
    )
    conn.close()

    resumed = _writer(db, n, batch_size, sleep=0.0)
    out, _ = resumed.communicate(timeout=60)
    assert resumed.returncode == 0
    assert f"done hits={stored} misses={n - stored} calls=1" in out

    again = _writer(db, n, batch_size, sleep=0.0)
    out, _ = again.communicate(timeout=60)
    assert f"done hits={n} misses=0 calls=0" in out

    from robustness.runners.cached import CachedRunner

    with Cache(db) as cache:
        assert len(cache) == n and cache.integrity_ok()
        cached = CachedRunner(FakeRunner(batch_size=batch_size), cache)
        prompts = child_prompts(n)
        results = cached.score_options(prompts, [CHILD_LABELS] * n)
        assert cached.stats.model_calls == 0
    assert results == FakeRunner().score_options(prompts, [CHILD_LABELS] * n)
