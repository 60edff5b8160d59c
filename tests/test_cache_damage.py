"""A damaged cache from issue 17: unreadable entries are recomputed and counted, never lost;
a foreign or corrupt SQLite file is one CacheError when the cache is opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers.fake_runner import CHILD_LABELS, FakeRunner, child_prompts

from robustness.core.cache import Cache, CacheError
from robustness.runners.cached import CachedRunner


def fill(db: Path, n: int = 12) -> list:
    with Cache(db) as cache:
        runner = CachedRunner(FakeRunner(batch_size=4), cache)
        return runner.score_options(child_prompts(n), [CHILD_LABELS] * n)


@pytest.mark.parametrize("garbage", ["{not json", '"a string"', '{"probs": 3}', "[" * 5000])
def test_an_unreadable_entry_is_recomputed_and_counted(tmp_path, garbage):
    db = tmp_path / "c.sqlite"
    expected = fill(db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE results SET value = ? WHERE rowid IN (2, 5)", (garbage,))
    conn.commit()
    conn.close()
    with Cache(db) as cache:
        runner = CachedRunner(FakeRunner(batch_size=4), cache)
        got = runner.score_options(child_prompts(12), [CHILD_LABELS] * 12)
        assert got == expected
        stats = runner.stats
        assert (stats.hits, stats.misses, stats.unreadable, stats.stored) == (10, 2, 2, 2)
    with Cache(db) as cache:  # repaired: the next run reads everything
        runner = CachedRunner(FakeRunner(batch_size=4), cache)
        runner.score_options(child_prompts(12), [CHILD_LABELS] * 12)
        assert (runner.stats.hits, runner.stats.unreadable, runner.stats.model_calls) == (12, 0, 0)


def test_a_sqlite_file_with_another_schema_is_refused_at_open(tmp_path):
    db = tmp_path / "other.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE results (id INTEGER PRIMARY KEY, answer TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(CacheError, match=r"other\.sqlite is not a cache of this toolkit"):
        Cache(db)


def test_garbage_in_the_last_page_is_refused_at_open(tmp_path):
    db = tmp_path / "c.sqlite"
    fill(db, 400)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = db.stat().st_size
    with db.open("r+b") as handle:
        handle.seek(size - 4096 + 8)
        handle.write(b"\xff" * 3000)
    with pytest.raises(CacheError, match=r"c\.sqlite") as info:
        Cache(db)
    assert "\n" not in str(info.value)


def test_a_folder_is_not_a_cache(tmp_path):
    with pytest.raises(CacheError, match="is a folder"):
        Cache(tmp_path)


def test_a_study_recomputes_and_reports_an_unreadable_entry(tmp_path):
    import io

    from rich.console import Console

    import robustness as rb
    from robustness.commands.run import summarise
    from robustness.core.table import read_table

    study = tmp_path / "s.toml"
    study.write_text(
        '[study]\nfamilies = ["framing"]\nn_variants = 1\n[output]\ntable = "t.parquet"\n'
        '[[models]]\nname = "fake"\n'
    )
    config = rb.load_study(study)
    first, _ = rb.run_study(config, limit=2, runners={"fake": FakeRunner()})
    conn = sqlite3.connect(config.cache_path)
    conn.execute("UPDATE results SET value = 'garbage' WHERE rowid = 1")
    conn.commit()
    conn.close()
    again, meta = rb.run_study(config, limit=2, runners={"fake": FakeRunner()})
    assert meta["models"]["fake"]["cache"]["unreadable"] == 1
    assert meta["models"]["fake"]["cache"]["model_calls"] == 1
    assert (
        again["answer"].tolist()
        == first["answer"].tolist()
        == read_table(config.table_path)["answer"].tolist()
    )
    out = io.StringIO()
    summarise(Console(file=out, width=200), again, meta, config.table_path, 1.0)
    assert "1 unreadable cache entries recomputed" in out.getvalue()
