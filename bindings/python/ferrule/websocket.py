"""WebSockets, in Starlette's shape: ``@app.websocket("/ws/{room}")`` on an ``async def``
handler that takes a ``WebSocket`` (and any path, query, header or cookie parameters, validated
by the core before the connection is upgraded).

The connection is accepted once its parameters pass, before the handler runs; ``accept()`` is
kept so Starlette code runs unchanged. Messages wait in the core until taken: a burst is taken
in one call and wakes the event loop once. Sends are queued in the core and never wait; a
client that has not taken what is being written while more than ``ws_send_buffer_bytes`` waits
behind it is closed with 1008 (a send then raises ``WebSocketDisconnect(1008, ...)``). When the
handler returns the connection closes with 1000; when it raises, with 1011 (and the traceback
goes to the ``ferrule.handler`` logger). A ``WebSocketException(code, reason)`` closes with its
code and reason, as Starlette's does; an ``HTTPException`` (a dependency refusing the
credentials) with 1008 and its detail as the reason: the connection was upgraded before the
dependencies ran, so no 401 can be answered (an ``on_request`` hook refuses the handshake itself).
Neither is logged as a failure.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from typing import Any, AsyncIterator, Deque, Optional, Union

from ._logging import handler_raised
from .responses import HTTPException, MutableHeaders

__all__ = ["WebSocket", "WebSocketDisconnect", "WebSocketException"]

# The sockets whose handlers are running, by the core's id: where a wake-up finds its socket.
_open: dict[int, "WebSocket"] = {}


class WebSocketDisconnect(Exception):
    """The connection is closed: ``code`` and ``reason`` of its close (1006: it dropped)."""

    def __init__(self, code: int = 1000, reason: str = "") -> None:
        super().__init__(code, reason)
        self.code = code
        self.reason = reason


class WebSocketException(Exception):
    """Raise in a WebSocket handler (or its dependency) to close with ``code`` (default 1008,
    policy violation) and ``reason``, as Starlette's and FastAPI's ``WebSocketException``."""

    def __init__(self, code: int = 1008, reason: Optional[str] = None) -> None:
        if not isinstance(code, int) or not (code in (1000, 1001) or 1002 <= code <= 1014 and code not in (1004, 1005, 1006) or 3000 <= code <= 4999):
            raise ValueError(f"WebSocketException: {code!r} is not a close code a server may send (1000-1003, 1007-1014, 3000-4999)")
        super().__init__(code, reason)
        self.code = code
        self.reason = reason or ""


def _close_reason(text: str) -> str:
    """``text`` cut to the 123 bytes of UTF-8 a close frame's reason holds, at a character."""
    data = text.encode("utf-8")
    return text if len(data) <= 123 else data[:123].decode("utf-8", "ignore")


class WebSocket:
    """One connection. Receive with ``receive_text()``, ``receive_bytes()``, ``receive_json()``
    or ``receive()`` (either kind), or iterate: ``async for message in ws``, ``ws.iter_text()``,
    ``ws.iter_json()``; a receive after the client closed raises ``WebSocketDisconnect``, and
    iteration ends. Send with ``send_text()``, ``send_bytes()``, ``send_json()``."""

    __slots__ = ("_native", "_request", "_inbox", "_end", "_waiters")

    def __init__(self, native: Any, request: Any) -> None:
        self._native = native
        # The handshake's request: what Starlette's WebSocket reads as its scope.
        self._request = request
        self._inbox: Deque[Union[str, bytes]] = deque()
        self._end: Optional[tuple[int, str]] = None
        # Every receive waiting for a wake-up: two tasks may receive from one socket, and each
        # must learn of the end (one slot left the first waiting for ever: found by a probe).
        self._waiters: list[asyncio.Future[None]] = []
        _open[native.id] = self

    @property
    def subprotocol(self) -> Optional[str]:
        """The subprotocol chosen in the handshake (see ``subprotocols=`` of the route)."""
        return self._native.subprotocol

    @property
    def headers(self) -> MutableHeaders:
        """Every header of the handshake, any case (Starlette's ``ws.headers``): its request's."""
        return self._request.headers

    @property
    def query_params(self) -> Any:
        """Every query pair as sent (``QueryParams``), beside the declared, typed parameters."""
        return self._request.query_params

    @property
    def path_params(self) -> dict[str, Any]:
        return self._request.path_params

    @property
    def cookies(self) -> dict[str, str]:
        """Every cookie of the handshake, the last one by name: its request's."""
        return self._request.cookies

    @property
    def url(self) -> Any:
        """The handshake's URL, as Starlette's ``websocket.url``: scheme ``ws``, or ``wss``
        behind a trusted proxy that ended TLS (it was ``http``)."""
        url = self._request.url
        return url.replace(scheme="wss" if url.scheme == "https" else "ws")

    def url_for(self, name: str, /, **path_params: Any) -> Any:
        """The URL of the route called ``name``, as ``request.url_for`` gives it (Starlette's
        ``websocket.url_for``)."""
        return self._request.url_for(name, **path_params)

    @property
    def client(self) -> Any:
        """The peer's ``Address(host, port)``, as ``request.client``."""
        return self._request.client

    @property
    def state(self) -> Any:
        """Per-connection values, as ``request.state``."""
        return self._request.state

    @property
    def buffered_amount(self) -> int:
        """Bytes sent by the handler that the client has not taken yet."""
        return self._native.buffered

    async def accept(self, subprotocol: Optional[str] = None) -> None:
        """The connection is already accepted (its parameters passed); kept for Starlette code.
        A ``subprotocol`` other than the one chosen from the route's ``subprotocols`` is an
        error."""
        if subprotocol is not None and subprotocol != self.subprotocol:
            raise ValueError(f"subprotocol {subprotocol!r} was not chosen; declare it in subprotocols= of the route")

    async def receive(self) -> Union[str, bytes]:
        """The next message: ``str`` for text, ``bytes`` for binary."""
        while not self._inbox:
            if self._end is not None:
                raise WebSocketDisconnect(*self._end)
            messages, end = self._native.take()
            if messages or end is not None:
                self._inbox.extend(messages)
                self._end = end
                continue
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        return self._inbox.popleft()

    async def receive_text(self) -> str:
        message = await self.receive()
        if not isinstance(message, str):
            raise TypeError("expected a text message, received a binary one")
        return message

    async def receive_bytes(self) -> bytes:
        message = await self.receive()
        if not isinstance(message, bytes):
            raise TypeError("expected a binary message, received a text one")
        return message

    async def receive_json(self) -> Any:
        return json.loads(await self.receive())

    def __aiter__(self) -> AsyncIterator[Union[str, bytes]]:
        return self._iterate(self.receive)

    def iter_text(self) -> AsyncIterator[str]:
        return self._iterate(self.receive_text)

    def iter_bytes(self) -> AsyncIterator[bytes]:
        return self._iterate(self.receive_bytes)

    def iter_json(self) -> AsyncIterator[Any]:
        return self._iterate(self.receive_json)

    async def _iterate(self, receive: Any) -> AsyncIterator[Any]:
        try:
            while True:
                yield await receive()
        except WebSocketDisconnect:
            return

    async def send_text(self, data: str) -> None:
        self._sent(self._native.send_text, data)

    async def send_bytes(self, data: bytes) -> None:
        self._sent(self._native.send_bytes, data)

    async def send_json(self, data: Any) -> None:
        self._sent(self._native.send_text, json.dumps(data, separators=(",", ":"), ensure_ascii=False))

    async def send(self, data: Union[str, bytes]) -> None:
        if isinstance(data, str):
            self._sent(self._native.send_text, data)
        else:
            self._sent(self._native.send_bytes, bytes(data))

    async def ping(self, data: bytes = b"") -> None:
        self._sent(self._native.ping, data)

    async def close(self, code: int = 1000, reason: Optional[str] = None) -> None:
        """Closes the connection with ``code`` once what was sent before has gone. A code no
        server may send (1005, say) or a reason over 123 bytes is a ``ValueError``."""
        self._native.close(code, reason or "")

    def _sent(self, send: Any, data: Any) -> None:
        try:
            send(data)
        except ConnectionError as closed:
            code, reason = closed.args if len(closed.args) == 2 else (1000, "")
            raise WebSocketDisconnect(code, reason) from None

    def _wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)


def arrived(socket_id: int) -> None:
    """Called by the dispatch: messages (or the end) wait for the socket filed under the id."""
    ws = _open.get(socket_id)
    if ws is not None:
        ws._wake()


async def converse(ws: WebSocket, handler: Any, error: Optional[BaseException] = None) -> None:
    """Runs a WebSocket route's handler, then closes: 1000 when it returned, 1011 when it
    raised. ``WebSocketDisconnect`` escaping the handler is the client leaving, not a failure."""
    native = ws._native
    try:
        if error is not None:
            raise error
        await handler
        native.close(1000, "")
    except WebSocketDisconnect:
        native.close(1000, "")
    except WebSocketException as refused:
        native.close(refused.code, _close_reason(refused.reason))
    except HTTPException as refused:
        # A dependency refusing the credentials: FastAPI (with uvicorn) answers the handshake
        # with its status; here the connection is open already, so it closes as refused
        # (found by a probe: 1011 and the 401's traceback in the log).
        detail = refused.detail if isinstance(refused.detail, str) else json.dumps(refused.detail)
        native.close(1008, _close_reason(detail))
    except Exception as failure:  # noqa: BLE001 - any handler failure closes with 1011
        handler_raised(native.label, failure)
        native.close(1011, "")
    finally:
        _open.pop(native.id, None)
