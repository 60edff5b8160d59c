"""A pytest hook that turns a skipped test into a failed one when ``ROBUSTNESS_FAIL_ON_SKIP=1``.

``make test-vllm`` sets it: the real-engine tests must run in CI, so a missing ``../shared``, a
missing package or a missing model fails there with the skip's own reason instead of passing
quietly. Expected failures (``xfail``) are left alone.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

#: The variable that makes a skip a failure.
FAIL_ON_SKIP = "ROBUSTNESS_FAIL_ON_SKIP"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[Any]:
    outcome = yield
    report = outcome.get_result()
    if os.environ.get(FAIL_ON_SKIP) != "1" or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"{item.nodeid} skipped where no test may skip ({FAIL_ON_SKIP}=1): {reason}"
