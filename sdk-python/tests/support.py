"""What the tests share: the package on the path, a scripted stub of the service, a fake clock."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The tests run from the source tree, nothing installed: `python3 -m unittest discover -s sdk-python/tests`.
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)

#: The repository's root (the TypeScript SDK's sources are compared with this package's).
REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


@dataclass(frozen=True)
class Recorded:
    """A request as the stub received it; ``path`` is the raw request target, still encoded."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds to wait before answering (an attempt that times out).
    delay: float = 0.0
    #: Close the connection without answering (a dropped connection).
    drop: bool = False


def error_body(code: str, message: str = "m", status: int = 400, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "statusCode": status, **extra}}


class StubServer:
    """A ``ThreadingHTTPServer`` on a free loopback port answering with scripted replies, in order;
    once they are used up, with ``default``. Records every request."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.default = Reply(200, {})
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with stub._lock:
                    stub.requests.append(
                        Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    reply = stub.replies.popleft() if stub.replies else stub.default
                if reply.delay:
                    threading.Event().wait(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    return
                payload = (
                    b""
                    if reply.body is None
                    else reply.body.encode() if isinstance(reply.body, str) else json.dumps(reply.body).encode()
                )
                self.send_response(reply.status)
                headers = {"Content-Type": "application/json", **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (a timeout test)

            do_GET = do_POST = do_PUT = do_DELETE = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that hung up early is part of the script

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def reply(self, status: int = 200, body: Any = None, headers: dict[str, str] | None = None, **kwargs: Any) -> None:
        self.replies.append(Reply(status, body, headers or {}, **kwargs))

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class FakeTime:
    """``sleep`` and ``clock`` for a client: sleeping records the wait and moves the clock on."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def highest() -> float:
    """The largest jitter ``random()`` can return."""
    return 0.999999
