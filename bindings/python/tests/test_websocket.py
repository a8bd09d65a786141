"""WebSockets with a real client (the ``websockets`` package): a chat room across connections,
parameters validated before the upgrade, messages both ways in both kinds, the close a
handler's return, exception or ``close()`` sends, the client leaving, and subprotocols."""

from __future__ import annotations

import json
import logging
import time
from typing import AsyncIterator, Optional

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from ferrule import App, Query, WebSocket, WebSocketDisconnect

from support import request, serving


def url(port: int, path: str) -> str:
    return f"ws://127.0.0.1:{port}{path}"


def test_a_chat_room_relays_between_connections_and_notices_who_left() -> None:
    app = App()
    rooms: dict[int, set[WebSocket]] = {}

    @app.websocket("/rooms/{room}")
    async def chat(ws: WebSocket, room: int, name: str = Query(min_length=1)) -> None:
        members = rooms.setdefault(room, set())
        members.add(ws)
        try:
            async for text in ws.iter_text():
                for member in list(members):
                    await member.send_text(f"{name}: {text}")
        finally:
            members.discard(ws)
            for member in list(members):
                await member.send_text(f"{name} left")

    with serving(app) as port:
        with connect(url(port, "/rooms/1?name=ann"), open_timeout=10) as ann, connect(url(port, "/rooms/1?name=bob")) as bob:
            # The handshake is answered before the handler runs: wait until both have joined,
            # or "hello" may be relayed before bob is in the room.
            deadline = time.monotonic() + 10
            while len(rooms.get(1, ())) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            ann.send("hello")
            assert bob.recv(timeout=10) == "ann: hello"
            assert ann.recv(timeout=10) == "ann: hello"
            with connect(url(port, "/rooms/2?name=eve")) as eve:
                eve.send("elsewhere")
                assert eve.recv(timeout=10) == "eve: elsewhere"
            bob.close()
            assert ann.recv(timeout=10) == "bob left"


def test_bad_parameters_get_a_problem_response_and_no_connection() -> None:
    app = App()
    opened: list[int] = []

    @app.websocket("/rooms/{room}")
    async def chat(ws: WebSocket, room: int) -> None:
        opened.append(room)

    with serving(app) as port:
        with pytest.raises(InvalidStatus) as refused:
            connect(url(port, "/rooms/lobby"), open_timeout=10)
        assert refused.value.response.status_code == 422
        assert b'"loc":["path","room"]' in refused.value.response.body
        plain = request(port, "GET", "/rooms/1")
        assert plain.status == 426 and plain.headers["upgrade"] == "websocket"
        assert opened == []


def test_text_binary_and_json_both_ways_and_the_close_the_handler_sends() -> None:
    app = App()

    @app.websocket("/echo")
    async def echo(ws: WebSocket) -> None:
        await ws.accept()
        await ws.send_text(await ws.receive_text())
        await ws.send_bytes(await ws.receive_bytes())
        await ws.send_json({"got": await ws.receive_json()})
        # A close no server may send is the handler's mistake, told at once (`websockets` too).
        for code, reason in ((1005, ""), (4000, "x" * 124)):
            try:
                await ws.close(code, reason)
            except ValueError as refused:
                await ws.send_text(str(refused))
        await ws.close(4000, "done")

    with serving(app) as port:
        with connect(url(port, "/echo")) as client:
            client.send("héllo")
            assert client.recv(timeout=10) == "héllo"
            client.send(b"\x00\xff")
            assert client.recv(timeout=10) == b"\x00\xff"
            client.send('{"n": [1, 2]}')
            assert client.recv(timeout=10) == '{"got":{"n":[1,2]}}'
            assert client.recv(timeout=10) == "1005 is not a close code a server may send (1000-1003, 1007-1014, 3000-4999)"
            assert client.recv(timeout=10) == "a WebSocket close reason is at most 123 bytes of UTF-8, not 124"
            with pytest.raises(ConnectionClosed) as closed:
                client.recv(timeout=10)
            assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (4000, "done")


def test_a_handler_that_raises_closes_with_1011_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    app = App()

    @app.websocket("/boom")
    async def boom(ws: WebSocket) -> None:
        await ws.receive_text()
        raise ValueError("secret detail")

    with caplog.at_level(logging.ERROR, logger="ferrule.handler"), serving(app) as port:
        with connect(url(port, "/boom")) as client:
            client.send("go")
            with pytest.raises(ConnectionClosed) as closed:
                client.recv(timeout=10)
            assert closed.value.rcvd.code == 1011
            assert "secret" not in closed.value.rcvd.reason
    assert any("GET /boom" in r.getMessage() and r.exc_info for r in caplog.records)


# Found by a probe against FastAPI: a security dependency's HTTPException(401) closed the socket
# with 1011 and logged its traceback as a failure, and WebSocketException did not exist.
def test_a_refusal_closes_with_its_code_and_reason_and_is_no_failure(caplog: pytest.LogCaptureFixture) -> None:
    from ferrule import Depends, HTTPException, WebSocketException

    def current_user(token: Optional[str] = Query(None)) -> str:
        if token != "t":
            raise HTTPException(401, "Not authenticated")
        return "ada"

    app = App()

    @app.websocket("/private")
    async def private(ws: WebSocket, user: str = Depends(current_user)) -> None:
        await ws.send_text(f"hello {user}")

    @app.websocket("/rules")
    async def rules(ws: WebSocket) -> None:
        if await ws.receive_text() == "swear":
            raise WebSocketException(4003, "mind your language " + "!" * 200)

    with pytest.raises(ValueError, match="not a close code"):
        WebSocketException(1006)
    with caplog.at_level(logging.ERROR, logger="ferrule.handler"), serving(app) as port:
        with connect(url(port, "/private?token=t")) as client:
            assert client.recv(timeout=10) == "hello ada"
        with connect(url(port, "/private")) as client:
            with pytest.raises(ConnectionClosed) as closed:
                client.recv(timeout=10)
            assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "Not authenticated")
        with connect(url(port, "/rules")) as client:
            client.send("swear")
            with pytest.raises(ConnectionClosed) as closed:
                client.recv(timeout=10)
            assert closed.value.rcvd.code == 4003
            assert closed.value.rcvd.reason.startswith("mind your language !") and len(closed.value.rcvd.reason.encode()) == 123
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]


def test_the_handler_learns_how_the_client_left() -> None:
    app = App()
    seen: list[tuple[int, str]] = []

    @app.websocket("/listen")
    async def listen(ws: WebSocket) -> None:
        try:
            while True:
                await ws.receive()
        except WebSocketDisconnect as gone:
            seen.append((gone.code, gone.reason))

    with serving(app) as port:
        with connect(url(port, "/listen")) as client:
            client.send("x")
            client.close(code=4100, reason="bye")
    assert seen == [(4100, "bye")]


# Found by a probe: a send refused because the core closed a client that does not read with
# 1008 raised WebSocketDisconnect(1000, ""), telling the handler the close was normal; and of two
# tasks receiving from one socket, the first waited for ever once the client left.
def test_a_send_refused_for_a_client_that_does_not_read_says_1008_and_every_receiver_learns_the_end() -> None:
    import asyncio
    import base64
    import os
    import socket

    app = App(ws_send_buffer_bytes=64 * 1024)
    seen: list[object] = []

    @app.websocket("/flood")
    async def flood(ws: WebSocket) -> None:
        chunk = b"x" * 65536
        try:
            for _ in range(100_000):
                await ws.send_bytes(chunk)
                await asyncio.sleep(0)
        except WebSocketDisconnect as gone:
            seen.append((gone.code, gone.reason))

    @app.websocket("/two")
    async def two(ws: WebSocket) -> None:
        results = await asyncio.gather(ws.receive(), ws.receive(), return_exceptions=True)
        seen.append(sorted(type(result).__name__ for result in results))

    with serving(app) as port:
        # A client that completes the handshake and then reads nothing.
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        raw.sendall(f"GET /flood HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        deadline = time.monotonic() + 20
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
        raw.close()
        assert seen and seen[0][0] == 1008 and "does not read" in seen[0][1], seen
        seen.clear()
        with connect(url(port, "/two")) as client:
            client.send("one")
        deadline = time.monotonic() + 10
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen == [["WebSocketDisconnect", "str"]], seen


def test_the_subprotocol_is_chosen_from_the_routes() -> None:
    app = App()

    @app.websocket("/chat", subprotocols=["chat.v2", "chat.v1"])
    async def chat(ws: WebSocket) -> None:
        await ws.send_text(ws.subprotocol or "none")

    with serving(app) as port:
        with connect(url(port, "/chat"), subprotocols=["chat.v1"]) as client:  # type: ignore[list-item]
            assert client.subprotocol == "chat.v1"
            assert client.recv(timeout=10) == "chat.v1"


def test_the_socket_reads_its_handshake_as_starlettes_does() -> None:
    """Found by a README-driven probe: ``ws.headers``, ``query_params``, ``path_params``,
    ``url``, ``cookies``, ``client`` and ``state`` were AttributeErrors."""
    app = App()

    @app.websocket("/rooms/{room}")
    async def room(ws: WebSocket, room: str) -> None:
        ws.state.seen = "yes"
        await ws.send_json({
            "agent": ws.headers["X-Agent"],
            "q": ws.query_params.getlist("tag"),
            "path": ws.path_params,
            "url": (ws.url.scheme, ws.url.path, ws.url.query),
            "cookies": ws.cookies,
            "client": ws.client.host,
            "state": ws.state.seen,
        })

    with serving(app) as port:
        headers = {"x-agent": "probe", "cookie": "a=1; b=2"}
        with connect(url(port, "/rooms/blue?tag=x&tag=y"), additional_headers=headers) as client:
            assert json.loads(client.recv(timeout=10)) == {
                "agent": "probe",
                "q": ["x", "y"],
                "path": {"room": "blue"},
                "url": ["ws", "/rooms/blue", "tag=x&tag=y"],
                "cookies": {"a": "1", "b": "2"},
                "client": "127.0.0.1",
                "state": "yes",
            }


def test_a_websocket_handler_is_an_async_def_taking_a_websocket() -> None:
    app = App()
    with pytest.raises(TypeError, match="async def"):
        app.websocket("/sync")(lambda ws: None)

    async def no_socket(room: int) -> None: ...

    with pytest.raises(TypeError, match="annotated WebSocket"):
        app.websocket("/r/{room}")(no_socket)
    with pytest.raises(TypeError, match="unknown websocket option"):
        app.websocket("/x", body_limit=5)


def readme_websocket_blocks() -> list[str]:
    """The README's ```python blocks in its WebSockets section, in order."""
    import os
    import re
    from pathlib import Path

    text = Path(os.environ["FERRULE_README"]).read_text()
    start = text.index("### WebSockets")
    return re.findall(r"```python\n(.*?)```", text[start : text.index("\n## ", start)], re.S)


def test_the_readme_chat_room_relays_between_members_of_a_room() -> None:
    from typing import Any

    blocks = readme_websocket_blocks()
    assert blocks, "no python block in the README's WebSockets section"
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    with serving(namespace["app"]) as port:
        with pytest.raises(InvalidStatus) as refused:
            connect(url(port, "/chat/lobby"), open_timeout=10)  # no ?name=
        assert refused.value.response.status_code == 422
        with connect(url(port, "/chat/lobby?name=ann")) as ann, connect(url(port, "/chat/lobby?name=bob")) as bob:
            with connect(url(port, "/chat/other?name=eve")) as eve:
                bob.send("hi all")
                assert ann.recv(timeout=10) == "bob: hi all"
                assert bob.recv(timeout=10) == "bob: hi all"
                eve.send("alone")
                assert eve.recv(timeout=10) == "eve: alone"


# A FastAPI user tests a WebSocket route with `client.websocket_connect`: the TestClient had
# none, so such a test needed a server and another client library.
def test_the_test_client_opens_websockets_as_starlettes_does() -> None:
    from ferrule import Cookie
    from ferrule.testing import TestClient, WebSocketDenialResponse

    app = App()

    @app.websocket("/ws")
    async def echo(ws: WebSocket, name: str, session: str = Cookie("none")) -> None:
        await ws.accept()
        await ws.send_text(f"hello {name} {session}")
        while True:
            try:
                message = await ws.receive_json()
            except WebSocketDisconnect:
                return
            if message.get("bye"):
                await ws.close(code=4000)
                return
            await ws.send_json({"echo": message})

    with TestClient(app, cookies={"session": "s1"}) as client:
        with client.websocket_connect("/ws?name=ada") as session:
            assert session.receive_text() == "hello ada s1"
            session.send_json({"a": 1, "long": "x" * 70_000})
            assert session.receive_json() == {"echo": {"a": 1, "long": "x" * 70_000}}
            session.send_json({"bye": True})
            with pytest.raises(WebSocketDisconnect) as closed:
                session.receive_text()
            assert closed.value.code == 4000
        with pytest.raises(WebSocketDenialResponse) as denied:
            client.websocket_connect("/ws")
        assert (denied.value.status_code, denied.value.json()["errors"][0]["loc"]) == (422, ["query", "name"])
        with client.websocket_connect("/ws?name=b", cookies={"session": "s2"}) as session:
            assert session.receive() == {"type": "websocket.send", "text": "hello b s2"}


# FastAPI's WebSocket docs resolve a cookie-or-token dependency that takes the WebSocket:
# `Depends` on a WebSocket route was refused at the decorator.
def test_a_websocket_route_resolves_its_dependencies_from_the_handshake() -> None:
    from ferrule import Cookie, Depends
    from ferrule.testing import TestClient

    app = App()
    events: list[str] = []

    async def cookie_or_token(websocket: WebSocket, session: Optional[str] = Cookie(None), token: Optional[str] = Query(None)) -> str:
        if session is None and token is None:
            await websocket.close(code=1008)
            raise WebSocketDisconnect(1008)
        return session or token or ""

    async def connection() -> AsyncIterator[str]:
        events.append("opened")
        yield "db"
        events.append("closed")

    @app.websocket("/items/{item_id}/ws")
    async def endpoint(websocket: WebSocket, item_id: str, who: str = Depends(cookie_or_token), conn: str = Depends(connection)) -> None:
        await websocket.accept()
        data = await websocket.receive_text()
        await websocket.send_text(f"{who} {conn} {item_id} {data}")

    with TestClient(app) as client:
        with client.websocket_connect("/items/foo/ws?token=t1") as session:
            session.send_text("hi")
            assert session.receive_text() == "t1 db foo hi"
        deadline = time.monotonic() + 5
        while events != ["opened", "closed"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert events == ["opened", "closed"], "the generator dependency closes when the handler ends"
        with client.websocket_connect("/items/foo/ws") as session:
            with pytest.raises(WebSocketDisconnect) as refused:
                session.receive_text()
            assert refused.value.code == 1008


# Found on review: `App(dependencies=)` guarded every HTTP route but no WebSocket route.
def test_the_apps_dependencies_guard_its_websockets_too() -> None:
    from ferrule import Depends, HTTPException
    from ferrule.testing import TestClient, WebSocketDenialResponse

    def verify(token: Optional[str] = Query(None)) -> None:
        if token != "t":
            raise HTTPException(403, "who?")

    app = App(dependencies=[Depends(verify)])

    @app.websocket("/ws")
    async def echo(ws: WebSocket) -> None:
        await ws.accept()
        await ws.send_text("in")

    with TestClient(app) as client:
        with client.websocket_connect("/ws?token=t") as session:
            assert session.receive_text() == "in"
        with client.websocket_connect("/ws") as session:
            with pytest.raises(WebSocketDisconnect):
                session.receive_text()


def test_the_apps_hooks_see_a_websockets_handshake_and_one_that_answers_refuses_it() -> None:
    from ferrule import JSONResponse, Request, Response

    app = App()
    seen: list[str] = []

    @app.on_request
    async def key_required(request: Request) -> Optional[JSONResponse]:
        seen.append(f"on_request {request.url.path}")
        if request.headers.get("x-key") is None:
            return JSONResponse({"error": "key required"}, status_code=401)
        request.state.user = "ann"  # the socket's ws.state.user
        return None

    @app.pre_handler
    def noted(request: Request) -> None:
        seen.append("pre_handler")
        request.state.role = "member"

    @app.on_send
    def sent(request: Request, response: Response) -> None:
        seen.append(f"on_send {response.status_code}")

    @app.middleware("http")
    async def timing(request: Request, call_next):  # type: ignore[no-untyped-def]
        seen.append("middleware")  # Starlette's http middleware does not see WebSockets
        return await call_next(request)

    @app.websocket("/live/{room}")
    async def live(ws: WebSocket, room: int) -> None:
        seen.append(f"handler {room}")
        await ws.accept()
        await ws.send_text(f"{ws.state.user} ({ws.state.role}) in {room}: {await ws.receive_text()}")

    with serving(app) as port:
        with pytest.raises(InvalidStatus) as refused:
            connect(url(port, "/live/3"), open_timeout=10)
        assert refused.value.response.status_code == 401
        assert json.loads(refused.value.response.body) == {"error": "key required"}
        assert seen == ["on_request /live/3", "on_send 401"], "refused: no pre_handler, no handler"
        seen.clear()
        with connect(url(port, "/live/3"), additional_headers={"x-key": "k"}, open_timeout=10) as member:
            member.send("hi")
            assert member.recv(timeout=10) == "ann (member) in 3: hi", "the request.state the hooks set"
        assert seen == ["on_request /live/3", "pre_handler", "handler 3"], "let through: the 101 is no reply for on_send"
        seen.clear()
        assert request(port, "GET", "/elsewhere").status == 401
        assert seen[:2] == ["middleware", "on_request /elsewhere"], "HTTP requests still meet the middleware"


def keyed_echo_app() -> App:
    """The README's hook that refuses a handshake without its key, before an echo at /echo
    that says the key the hook kept."""
    from ferrule import JSONResponse, Request

    block = next((b for b in readme_websocket_blocks() if "key_required" in b), None)
    assert block, "no hook in the README's WebSockets section"
    app = App()
    exec(compile(block, "README.md", "exec"), {"app": app, "Request": Request, "JSONResponse": JSONResponse, "Optional": Optional})

    @app.websocket("/echo")
    async def echo(ws: WebSocket) -> None:
        await ws.accept()
        await ws.send_text(f"{ws.state.key}: {await ws.receive_text()}")

    return app


def test_the_readme_hook_refuses_a_handshake_without_its_key() -> None:
    with serving(keyed_echo_app()) as port:
        with pytest.raises(InvalidStatus) as refused:
            connect(url(port, "/echo"), open_timeout=10)
        assert refused.value.response.status_code == 401
        assert json.loads(refused.value.response.body) == {"error": "key required"}
        with connect(url(port, "/echo"), additional_headers={"x-key": "k"}, open_timeout=10) as client:
            client.send("hi")
            assert client.recv(timeout=10) == "k: hi"


def test_the_test_client_meets_a_handshake_the_hooks_refuse_as_starlettes_denial() -> None:
    from ferrule.testing import TestClient, WebSocketDenialResponse

    with TestClient(keyed_echo_app()) as client:
        with pytest.raises(WebSocketDenialResponse) as denied:
            with client.websocket_connect("/echo"):
                pass
        assert (denied.value.status_code, denied.value.json()) == (401, {"error": "key required"})
        with client.websocket_connect("/echo", headers={"x-key": "k"}) as session:
            session.send_text("hi")
            assert session.receive_text() == "k: hi"
