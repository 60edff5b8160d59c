"""The embedded model's converted folder is keyed by the GGUF's content (issue 17): a
reinstall with a new modification time reuses it, older copies are reused or removed, and the
location is printed once."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers.tiny import fake_gguf as install_fake_gguf

from robustness.runners import embedded


@pytest.fixture
def fake_gguf(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, list[object]]:
    return install_fake_gguf(monkeypatch, tmp_path / "pkg")


def folders(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "models").iterdir() if p.is_dir())


def test_a_reinstall_with_a_new_mtime_reuses_the_conversion(fake_gguf, tmp_path, capsys):
    source, loaded = fake_gguf
    root = tmp_path / "cache"
    first = embedded.ensure_converted(root)
    assert first.converted and len(loaded) == 1
    assert first.path.name.startswith(f"smollm2-135m-instruct-{first.gguf_sha256[:16]}")
    err = capsys.readouterr().err
    assert err.count(str(first.path)) == 1 and "later runs reuse it" in err
    os.utime(source, (1, 1))  # a reinstall: same bytes, another modification time
    again = embedded.ensure_converted(root)
    assert not again.converted and again.path == first.path and len(loaded) == 1
    assert capsys.readouterr().err == ""  # printed once
    assert folders(root) == [first.path.name]
    source.write_bytes(b"GGUF" + bytes(range(255, -1, -1)) * 4)  # other weights: a new folder
    other = embedded.ensure_converted(root)
    assert other.converted and other.path != first.path and len(folders(root)) == 2


def test_older_copies_are_reused_or_removed(fake_gguf, tmp_path):
    _, loaded = fake_gguf
    root = tmp_path / "cache"
    first = embedded.ensure_converted(root)
    models = first.path.parent
    # two copies under the names an older toolkit gave them (keyed by modification time)
    shutil.copytree(first.path, models / "smollm2-135m-instruct-0123456789abcdef")
    os.rename(first.path, models / "smollm2-135m-instruct-fedcba9876543210")
    again = embedded.ensure_converted(root)
    assert not again.converted and len(loaded) == 1 and again.path == first.path
    assert folders(root) == [first.path.name]  # the older copy renamed, the other removed
    assert not list(models.glob(".tmp-*"))


def test_the_hash_index_spares_rehashing(fake_gguf, tmp_path, monkeypatch):
    root = tmp_path / "cache"
    embedded.ensure_converted(root)
    calls: list[Path] = []
    real = embedded._file_sha256
    monkeypatch.setattr(embedded, "_file_sha256", lambda p: calls.append(p) or real(p))
    embedded.ensure_converted(root)
    assert calls == []
    (root / "models" / embedded.HASH_INDEX).write_text("not json")
    embedded.ensure_converted(root)  # a damaged index is rebuilt, never an error
    assert len(calls) == 1
