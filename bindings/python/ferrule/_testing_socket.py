"""``TestClient.websocket_connect``: a WebSocket to the app, for tests, with Starlette's
``WebSocketTestSession`` calls (``send_text``, ``receive_json``, ``close``, …).

A WebSocket needs the connection the core upgrades, which the in-process router has not got:
the client serves the app on 127.0.0.1 (an ephemeral port, on its own loop, so handlers run
where its other requests run) and this session speaks RFC 6455 to it over a real socket, as a
browser would. Blocking calls with a timeout, so a test that waits for a message that never
comes fails instead of hanging.
"""

from __future__ import annotations

import base64
import json as jsonlib
import os
import socket
import struct
from typing import Any, Optional, Sequence, Tuple, Union

from .websocket import WebSocketDisconnect

__all__ = ["WebSocketTestSession", "WebSocketDenialResponse"]

_TEXT, _BINARY, _CLOSE, _PING, _PONG, _CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0


class WebSocketDenialResponse(WebSocketDisconnect):
    """The app answered the handshake with a response instead of upgrading (a 422 for a bad
    parameter, a 403, a 404): its ``status_code``, ``headers`` and ``content``, as Starlette's
    client raises it."""

    def __init__(self, status_code: int, headers: list[tuple[str, str]], content: bytes) -> None:
        super().__init__(1008, f"the handshake was answered {status_code}")
        self.status_code = status_code
        self.headers = dict(headers)
        self.content = content

    def json(self) -> Any:
        return jsonlib.loads(self.content)


class WebSocketTestSession:
    """An open WebSocket to the app. Use it as a context manager (closing it on exit)."""

    __test__ = False

    def __init__(self, port: int, path: str, headers: Sequence[Tuple[str, str]], subprotocols: Sequence[str], timeout: float) -> None:
        self._socket = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self._buffer = b""
        self._last_fin = True
        self._closed: Optional[Tuple[int, str]] = None
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET {path} HTTP/1.1", "upgrade: websocket", "connection: Upgrade", f"sec-websocket-key: {key}", "sec-websocket-version: 13"]
        if subprotocols:
            lines.append(f"sec-websocket-protocol: {', '.join(subprotocols)}")
        lines.extend(f"{name}: {value}" for name, value in headers)
        self._socket.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        status, answer_headers = self._read_head()
        if status != 101:
            length = int(dict(answer_headers).get("content-length", "0") or 0)
            content = self._read_exactly(length) if length else b""
            self._socket.close()
            raise WebSocketDenialResponse(status, answer_headers, content)
        self.accepted_subprotocol: Optional[str] = dict(answer_headers).get("sec-websocket-protocol")
        self.extra_headers = answer_headers

    # -- Starlette's calls ----------------------------------------------------------------------

    def send_text(self, data: str) -> None:
        self._send_frame(_TEXT, data.encode())

    def send_bytes(self, data: bytes) -> None:
        self._send_frame(_BINARY, bytes(data))

    def send_json(self, data: Any, mode: str = "text") -> None:
        text = jsonlib.dumps(data, separators=(",", ":"))
        if mode == "binary":
            self.send_bytes(text.encode())
        else:
            self.send_text(text)

    def receive(self) -> dict[str, Any]:
        """The next message as an ASGI event: ``{"type": "websocket.send", "text": …}`` (or
        ``"bytes"``), or ``{"type": "websocket.close", "code": …, "reason": …}``."""
        try:
            data = self._receive_message()
        except WebSocketDisconnect as closed:
            return {"type": "websocket.close", "code": closed.code, "reason": closed.reason}
        key = "text" if isinstance(data, str) else "bytes"
        return {"type": "websocket.send", key: data}

    def receive_text(self) -> str:
        data = self._receive_message()
        if not isinstance(data, str):
            raise TypeError(f"expected a text message, got {len(data)} bytes")
        return data

    def receive_bytes(self) -> bytes:
        data = self._receive_message()
        if not isinstance(data, bytes):
            raise TypeError(f"expected a binary message, got text {data[:60]!r}")
        return data

    def receive_json(self, mode: str = "text") -> Any:
        data = self.receive_bytes() if mode == "binary" else self.receive_text()
        return jsonlib.loads(data)

    def close(self, code: int = 1000, reason: Optional[str] = None) -> None:
        """Closes the connection (the app's receive raises ``WebSocketDisconnect(code)``) and
        waits, briefly, for the app's close in reply."""
        if self._closed is None:
            self._closed = (code, reason or "")
            try:
                self._send_frame(_CLOSE, struct.pack("!H", code) + (reason or "").encode())
                self._socket.settimeout(2)
                while True:
                    opcode, _ = self._read_frame()
                    if opcode == _CLOSE:
                        break
            except (OSError, WebSocketDisconnect):
                pass
        self._socket.close()

    def __enter__(self) -> "WebSocketTestSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the protocol ---------------------------------------------------------------------------

    def _receive_message(self) -> Union[str, bytes]:
        if self._closed is not None:
            raise WebSocketDisconnect(*self._closed)
        kind, parts = None, []
        while True:
            opcode, payload = self._read_frame()
            if opcode == _PING:
                self._send_frame(_PONG, payload)
                continue
            if opcode == _PONG:
                continue
            if opcode == _CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                self._closed = (code, payload[2:].decode(errors="replace"))
                try:
                    self._send_frame(_CLOSE, payload[:2])
                except OSError:
                    pass
                raise WebSocketDisconnect(*self._closed)
            if opcode != _CONTINUATION:
                kind = opcode
            parts.append(payload)
            if self._last_fin:
                data = b"".join(parts)
                return data.decode() if kind == _TEXT else data

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        length = len(payload)
        if length < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        masked = bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))
        self._socket.sendall(head + mask + masked)

    def _read_frame(self) -> Tuple[int, bytes]:
        first, second = self._read_exactly(2)
        self._last_fin = bool(first & 0x80)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", self._read_exactly(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._read_exactly(8))[0]
        mask = self._read_exactly(4) if second & 0x80 else None
        payload = self._read_exactly(length)
        if mask is not None:
            payload = bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))
        return first & 0x0F, payload

    def _read_head(self) -> Tuple[int, list[tuple[str, str]]]:
        while b"\r\n\r\n" not in self._buffer:
            self._fill()
        head, self._buffer = self._buffer.split(b"\r\n\r\n", 1)
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = [(name.strip().lower(), value.strip()) for name, _, value in (line.partition(":") for line in lines)]
        return int(status_line.split(" ", 2)[1]), headers

    def _read_exactly(self, count: int) -> bytes:
        while len(self._buffer) < count:
            self._fill()
        data, self._buffer = self._buffer[:count], self._buffer[count:]
        return data

    def _fill(self) -> None:
        try:
            chunk = self._socket.recv(65536)
        except socket.timeout:
            raise TimeoutError("no message from the app within the session's timeout") from None
        if not chunk:
            self._closed = self._closed or (1006, "")
            raise WebSocketDisconnect(*self._closed)
        self._buffer += chunk
