"""The test servers' shared process handling (``helpers.servers.ServerProcess``): one home for
stopping a server's process group and reading the end of its log, used by the transformers
server and the vLLM server alike."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from helpers.servers import ModelServer, ServerProcess
from helpers.vllm_engine import VLLMServer


class SleepingServer(ServerProcess):
    """A 'server' that only sleeps, in its own process group, writing one line to its log."""

    def __init__(self, log: Path) -> None:
        self.log = log
        code = "import time; print('x' * 50 + 'ready', flush=True); time.sleep(600)"
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-c", code], stdout=out, start_new_session=True
            )

    def __enter__(self) -> SleepingServer:
        return self


def test_both_servers_share_one_stop_and_one_log_tail():
    for name in ("stop", "log_tail", "__exit__"):
        assert getattr(VLLMServer, name) is getattr(ServerProcess, name)
        assert getattr(ModelServer, name) is getattr(ServerProcess, name)
    assert (VLLMServer.stop_wait, VLLMServer.tail_chars) == (30.0, 3000)
    assert (ModelServer.stop_wait, ModelServer.tail_chars) == (10.0, 4000)


def test_stop_ends_the_process_and_the_log_tail_is_its_end(tmp_path):
    server = SleepingServer(tmp_path / "server.log")
    process = server.process
    while "ready" not in server.log_tail():
        assert process.poll() is None, server.log_tail()
        time.sleep(0.05)
    assert server.log_tail(5) == "eady\n"
    with server:
        pass  # __exit__ stops it
    assert process.poll() is not None and server.process is None
    server.stop()  # a second stop does nothing
    assert server.log_tail(3) == "dy\n"  # the log outlives the process
    server.log = tmp_path / "missing.log"
    assert server.log_tail() == "(no log)"
