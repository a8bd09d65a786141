"""Test helpers: serve an app on 127.0.0.1 in a background thread, and a real HTTP client."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import threading
from typing import Any, Iterator, Optional

from ferrule import App
from ferrule.server import new_event_loop, run_until_complete


@contextlib.contextmanager
def serving(app: App, *, threads: int = 2) -> Iterator[int]:
    """Serves `app` on a free port for the duration of the block; yields the port."""
    ready = threading.Event()
    port: list[int] = []
    failure: list[BaseException] = []
    loop = new_event_loop()

    def main() -> None:
        asyncio.set_event_loop(loop)

        def on_ready(bound: int) -> None:
            port.append(bound)
            ready.set()

        try:
            run_until_complete(loop, app.serve("127.0.0.1", 0, threads=threads, on_ready=on_ready))
        except BaseException as e:  # noqa: BLE001 - reported to the test thread
            failure.append(e)
            ready.set()
        finally:
            loop.close()

    thread = threading.Thread(target=main, name="ferrule-test-server", daemon=True)
    thread.start()
    if not ready.wait(30):
        raise TimeoutError("the server did not start within 30 s")
    if failure:
        raise failure[0]
    try:
        yield port[0]
    finally:
        loop.call_soon_threadsafe(app.shutdown)
        thread.join(30)
        assert not thread.is_alive(), "the server did not stop within 30 s"
        if failure:
            raise failure[0]


class Reply:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.header_lines = headers
        self.headers = {k.lower(): v for k, v in headers}
        self.body = body

    def header_values(self, name: str) -> list[str]:
        """Every value of a header that may repeat (``set-cookie``), in order."""
        return [v for k, v in self.header_lines if k.lower() == name]

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode()

    def __repr__(self) -> str:
        return f"<Reply {self.status} {self.body[:200]!r}>"


def request(
    port: int,
    method: str,
    path: str,
    *,
    json_body: Any = None,
    body: Optional[bytes] = None,
    headers: Optional[dict[str, str]] = None,
) -> Reply:
    headers = dict(headers or {})
    if json_body is not None:
        body = json.dumps(json_body).encode()
        headers.setdefault("content-type", "application/json")
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return Reply(response.status, response.getheaders(), response.read())
    finally:
        connection.close()
