"""Real servers on loopback for the openai backend's tests and benchmark (imported by name).

- :func:`serving_folder` makes the embedded model servable by ``transformers serve``;
- :class:`ModelServer` runs ``transformers serve`` (transformers' own OpenAI-compatible server)
  on a free loopback port with the hubs offline, waits for ``/health`` and stops it;
- :class:`helpers.fault_proxy.FaultProxy` (its own module) stands in front of one of them
  and injects faults;
- :class:`EchoingServer` is a careless OpenAI-compatible stub whose answers repeat the
  ``Authorization`` header (:data:`KEY` is the canary key the tests look for).

The embedded model is served from its converted folder, whose ``config.json`` names its
architecture (``transformers serve`` picks the model class from ``architectures[0]``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"


def serving_folder() -> Path:
    """The converted embedded model's folder, which ``transformers serve`` loads as it is
    (its config names the architecture)."""
    from robustness.runners.embedded import ensure_converted

    return ensure_converted().path


def free_port() -> int:
    """A TCP port on loopback that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def get_json(url: str, timeout: float = 2.0) -> tuple[int, Any]:
    """GET ``url`` and return (status, decoded JSON or None); raises OSError when unreachable."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            body = response.read()
            status = response.status
    except urllib.error.HTTPError as err:
        return err.code, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None


class ServerProcess:
    """A server in its own process group that writes to ``log``: the end of the log, and
    stopping the group (TERM, then KILL after ``stop_wait`` seconds), for :class:`ModelServer`
    and ``helpers.vllm_engine.VLLMServer``, which start the process and set ``process``."""

    log: Path
    process: subprocess.Popen[bytes] | None
    stop_wait = 10.0  # seconds between TERM and KILL
    tail_chars = 4000  # what log_tail shows by default

    def log_tail(self, n: int | None = None) -> str:
        """The last ``n`` (default ``tail_chars``) characters of the log, or ``(no log)``."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return text[-(self.tail_chars if n is None else n) :]

    def stop(self) -> None:
        """End the server's process group (nothing when it was not started or has exited)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=self.stop_wait)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ModelServer(ServerProcess):
    """``transformers serve FOLDER`` on a free loopback port, pinned to that model.

    The model's name on the server is the folder's path (``model``). ``start`` waits until
    ``/health`` answers 200 and ``/v1/models`` lists the model, or raises with the end of the
    server's log; ``stop`` ends the server's whole process group (TERM, then KILL). The server
    runs with ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` and ``threads`` torch threads.
    """

    def __init__(
        self, folder: Path, log: Path, *, threads: int = 1, port: int | None = None
    ) -> None:
        self.folder = folder
        self.log = log
        self.threads = threads
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.start_seconds = 0.0

    @property
    def model(self) -> str:
        """The model name requests must use."""
        return str(self.folder)

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/v1"

    def start(self, timeout: float = 180.0) -> ModelServer:
        missing = [
            name
            for name in ("fastapi", "uvicorn", "openai")
            if importlib.util.find_spec(name) is None
        ]
        if missing:
            raise RuntimeError(
                f"transformers serve needs {', '.join(missing)}: install "
                "'transformers[serving]' at the installed transformers version."
            )
        env = dict(os.environ)
        env.update(
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            OMP_NUM_THREADS=str(self.threads),
            OMP_WAIT_POLICY="PASSIVE",
            TOKENIZERS_PARALLELISM="false",
        )
        command = [
            sys.executable,
            "-m",
            "transformers.cli.transformers",
            "serve",
            str(self.folder),
            "--host",
            LOOPBACK,
            "--port",
            str(self.port),
            "--device",
            "cpu",
            "--log-level",
            "warning",
        ]
        started = time.monotonic()
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        deadline = started + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"transformers serve exited with {self.process.returncode}:\n{self.log_tail()}"
                )
            try:
                status, _ = get_json(f"http://{LOOPBACK}:{self.port}/health", timeout=1.0)
                if status == 200:
                    status, models = get_json(f"{self.base_url}/models", timeout=5.0)
                    names = [m.get("id") for m in (models or {}).get("data", [])]
                    if status == 200 and self.model in names:
                        self.start_seconds = time.monotonic() - started
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(
            f"transformers serve did not answer within {timeout:.0f} s:\n{self.log_tail()}"
        )

    def __enter__(self) -> ModelServer:
        return self.start()


KEY_ENV = "ROBUSTNESS_TEST_OPENAI_KEY"
#: A key distinctive enough that finding it anywhere means it leaked.
KEY = "sk-rbtest-LEAKCANARY-5c9e1f0b7a2d4e6f"


class EchoingServer:
    """A careless OpenAI-compatible stub on loopback: every answer's text (and first listed
    token) repeats the ``Authorization`` header it got, as a server that leaks it would."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                said = f"B, and your header was {self.headers.get('Authorization')}"
                if self.path.endswith("/chat/completions"):
                    choice: dict[str, Any] = {"message": {"role": "assistant", "content": said}}
                    token = said.split(", and")[0]
                    if body.get("logprobs"):
                        choice["logprobs"] = {
                            "content": [
                                {
                                    "token": token,
                                    "logprob": -0.1,
                                    "top_logprobs": [
                                        {"token": said[12:], "logprob": -0.05},
                                        {"token": "B", "logprob": -0.1},
                                        {"token": "A", "logprob": -2.0},
                                    ],
                                }
                            ]
                        }
                else:
                    choice = {"text": said}
                    if body.get("logprobs"):
                        top = {said[12:]: -0.05, "B": -0.1, "A": -2.0}
                        choice["logprobs"] = {"top_logprobs": [top], "tokens": ["B"]}
                answer = json.dumps({"choices": [choice], "usage": {"completion_tokens": 3}})
                data = answer.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> EchoingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
