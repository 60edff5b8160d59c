"""Real servers on loopback for the openai backend's tests and benchmark (imported by name).

- :func:`serving_folder` makes the embedded model servable by ``transformers serve``;
- :class:`ModelServer` runs ``transformers serve`` (transformers' own OpenAI-compatible server)
  on a free loopback port with the hubs offline, waits for ``/health`` and stops it;
- :class:`FaultProxy` is a small HTTP proxy on loopback in front of a real server that drops
  connections, answers 429/5xx, delays, or rewrites answers for a deterministic subset of
  requests, counts what it did and what it saw, and checks the ``Authorization`` header;
- :class:`EchoingServer` is a careless OpenAI-compatible stub whose answers repeat the
  ``Authorization`` header (:data:`KEY` is the canary key the tests look for).

The embedded model is served from its converted folder, whose ``config.json`` names its
architecture (``transformers serve`` picks the model class from ``architectures[0]``).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
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
from collections.abc import Callable
from dataclasses import dataclass
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


# --------------------------------------------------------------------------- the fault proxy
@dataclass(frozen=True)
class Fault:
    """What the proxy does to one request instead of passing it on.

    ``drop``: close the connection without answering (the server never sees the request);
    ``lose``: pass the request on, then close the connection without handing over the answer
    (the server did the work, the client must ask again); ``status``: answer ``status`` with a
    JSON error body (and ``Retry-After: 0`` for 429/503); ``delay``: wait ``seconds``, then
    pass the request on.
    """

    kind: str
    status: int = 0
    seconds: float = 0.0


#: ``plan(body, attempt)`` -> the fault for the ``attempt``-th arrival (1, 2, ...) of ``body``,
#: or None to pass it on.
Plan = Callable[[bytes, int], Fault | None]
#: ``rewrite(path, request, answer)`` -> the answer the client gets.
Rewrite = Callable[[str, dict[str, Any], dict[str, Any]], dict[str, Any]]


def bucket(body: bytes, modulus: int) -> int:
    """A request's bucket: the SHA-256 of its JSON body without the ``model`` field (a
    temporary path in the tests) modulo ``modulus``, so the same in every run."""
    try:
        data = json.loads(body)
        data.pop("model", None)
        text = json.dumps(data, sort_keys=True)
    except (ValueError, AttributeError):
        text = body.decode("utf-8", errors="replace")
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % modulus


def mixed_faults(body: bytes, attempt: int) -> Fault | None:
    """The mixed plan: by the body's bucket out of 8, bucket 0 is dropped on its first
    arrival, 1 answered 500, 2 answered 429 on its first two arrivals, 3 passed on with the
    answer lost, 4 answered 503 and then dropped; buckets 5-7 pass untouched."""
    b = bucket(body, 8)
    if b == 0 and attempt == 1:
        return Fault("drop")
    if b == 1 and attempt == 1:
        return Fault("status", status=500)
    if b == 2 and attempt <= 2:
        return Fault("status", status=429)
    if b == 3 and attempt == 1:
        return Fault("lose")
    if b == 4 and attempt <= 2:
        return Fault("status", status=503) if attempt == 1 else Fault("drop")
    return None


def planned_faults(bodies: list[bytes], plan: Plan = mixed_faults) -> int:
    """How many faults ``plan`` injects before every body gets through."""
    total = 0
    for body in bodies:
        attempt = 1
        while plan(body, attempt) is not None:
            total += 1
            attempt += 1
    return total


class FaultProxy:
    """An HTTP/1.1 keep-alive proxy on loopback in front of ``upstream`` (``host:port``).

    Each POST is looked up in ``plan`` by its body and how often that body arrived, and either
    passed on or faulted; after ``fail_after`` passed-on POSTs every further POST is answered
    503 (the server "went away"). ``rewrite`` may change passed-on answers. ``expect_key``: a
    POST whose ``Authorization`` is not ``Bearer <key>`` is answered 401, with the header it
    carried echoed in the body (a careless server), so tests can check it never leaks.
    Counters: ``posts`` received, ``forwarded``, ``faults`` injected by kind, ``authorized``.
    """

    def __init__(
        self,
        upstream: str,
        *,
        plan: Plan | None = None,
        rewrite: Rewrite | None = None,
        fail_after: int | None = None,
        expect_key: str | None = None,
    ) -> None:
        self.upstream = upstream
        self.plan = plan
        self.rewrite = rewrite
        self.fail_after = fail_after
        self.expect_key = expect_key
        self.lock = threading.Lock()
        self.arrivals: dict[str, int] = {}
        self.posts = 0
        self.forwarded = 0
        self.authorized = 0
        self.faults: dict[str, int] = {}
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                status, _, body = proxy._forward("GET", self.path, None)
                self._answer(status, body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                fault, authorized = proxy._admit(body, self.headers.get("Authorization"))
                if not authorized:
                    echoed = json.dumps(
                        {"error": {"message": f"bad key: {self.headers.get('Authorization')}"}}
                    )
                    self._answer(401, echoed.encode())
                    return
                if fault is not None and fault.kind == "drop":
                    self.close_connection = True
                    return
                if fault is not None and fault.kind == "status":
                    message = json.dumps({"error": {"message": f"injected {fault.status}"}})
                    retry = {"Retry-After": "0"} if fault.status in (429, 503) else {}
                    self._answer(fault.status, message.encode(), retry)
                    return
                if fault is not None and fault.kind == "delay":
                    time.sleep(fault.seconds)
                status, _, answer = proxy._forward("POST", self.path, body)
                if fault is not None and fault.kind == "lose":
                    self.close_connection = True
                    return
                if proxy.rewrite is not None and status == 200:
                    answer = json.dumps(
                        proxy.rewrite(self.path, json.loads(body), json.loads(answer))
                    ).encode()
                self._answer(status, answer)

            def _answer(
                self, status: int, body: bytes, extra: dict[str, str] | None = None
            ) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in (extra or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up (time-out): nothing to answer
                    self.close_connection = True

        self.server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(
            target=self.server.serve_forever, daemon=True, name="fault-proxy"
        )

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/v1"

    def _admit(self, body: bytes, authorization: str | None) -> tuple[Fault | None, bool]:
        with self.lock:
            self.posts += 1
            if self.expect_key is not None:
                if authorization != f"Bearer {self.expect_key}":
                    return None, False
                self.authorized += 1
            key = hashlib.sha256(body).hexdigest()
            self.arrivals[key] = attempt = self.arrivals.get(key, 0) + 1
            fault = self.plan(body, attempt) if self.plan is not None else None
            if fault is None and self.fail_after is not None and self.forwarded >= self.fail_after:
                fault = Fault("status", status=503)
            if fault is None or fault.kind in ("delay", "lose"):
                self.forwarded += 1
            if fault is not None:
                self.faults[fault.kind] = self.faults.get(fault.kind, 0) + 1
            return fault, True

    def _forward(self, method: str, path: str, body: bytes | None) -> tuple[int, Any, bytes]:
        host, port = self.upstream.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=300)
        try:
            headers = {"Content-Type": "application/json"} if body is not None else {}
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            conn.close()

    @property
    def injected(self) -> int:
        """Faults injected so far (every kind)."""
        with self.lock:
            return sum(self.faults.values())

    def start(self) -> FaultProxy:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


#: The environment variable the openai tests read their key from.
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
