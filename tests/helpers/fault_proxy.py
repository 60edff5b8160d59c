"""A fault-injecting HTTP proxy on loopback for the openai backend's retry tests.

:class:`FaultProxy` sits in front of a real server and, for a deterministic subset of
requests (:func:`bucket` of the body), drops the connection, answers 429/5xx, delays, loses
the answer, or rewrites it; it counts what it did and saw and checks ``Authorization``.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOOPBACK = "127.0.0.1"


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
