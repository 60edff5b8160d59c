"""``ROBUSTNESS_FAIL_ON_SKIP=1`` (set by ``make test-vllm``) turns a skip into a failure that
keeps the skip's reason; without it a skip stays a skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def run_pytest(folder: Path, fail_on_skip: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    env.pop("ROBUSTNESS_FAIL_ON_SKIP", None)
    if fail_on_skip:
        env["ROBUSTNESS_FAIL_ON_SKIP"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
    )


def test_a_skip_fails_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "from helpers.no_skip import pytest_runtest_makereport  # noqa: F401\n"
    )
    (tmp_path / "test_probe.py").write_text(
        "import pytest\n"
        "def test_skips():\n    pytest.skip('shared data not found')\n"
        "@pytest.mark.xfail(reason='known')\ndef test_xfails():\n    assert False\n"
        "def test_passes():\n    assert True\n"
    )
    quiet = run_pytest(tmp_path, fail_on_skip=False)
    assert quiet.returncode == 0 and "1 passed, 1 skipped, 1 xfailed" in quiet.stdout
    strict = run_pytest(tmp_path, fail_on_skip=True)
    assert strict.returncode == 1, strict.stdout
    assert "1 failed, 1 passed, 1 xfailed" in strict.stdout
    assert "skipped where no test may skip (ROBUSTNESS_FAIL_ON_SKIP=1)" in strict.stdout
    assert "shared data not found" in strict.stdout
