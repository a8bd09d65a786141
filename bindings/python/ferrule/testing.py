"""``TestClient``: requests to an app without a socket, with the call shape of requests/httpx.

    from ferrule.testing import TestClient

    client = TestClient(app)
    response = client.post("/items", json={"name": "pen"})
    assert response.status_code == 201
    assert response.json()["name"] == "pen"

Each request goes through the whole core as it would from the network — routing, parameter
parsing and validation, compression, CORS, request ids, response schemas, problem responses —
on the core's in-process router; only the socket is left out. Handlers run on an event loop of
the client's own, on a thread of its own (as Starlette's client runs the app in a portal), so
the client works the same from plain and from async tests. As in Starlette's client, a handler
that raises makes the call raise that exception (``raise_server_exceptions=False`` gives the 500
response instead), redirects are followed, and cookies the app sets are sent back.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import email.utils
import json as jsonlib
import threading
import time
import urllib.parse
import uuid
import zlib
from typing import Any, Iterable, Iterator, Mapping, MutableMapping, Optional, Sequence, Tuple, Union

from . import _tasks
from ._testing_socket import WebSocketDenialResponse, WebSocketTestSession
from .app import App
from .responses import MutableHeaders
from .server import new_event_loop

__all__ = ["TestClient", "TestResponse", "Headers", "Cookies", "HTTPStatusError", "WebSocketTestSession", "WebSocketDenialResponse"]

HeaderInput = Union[Mapping[str, str], Sequence[Tuple[str, str]], None]
QueryInput = Union[Mapping[str, Any], Sequence[Tuple[str, Any]], str, None]
_REDIRECTS = (301, 302, 303, 307, 308)


class Headers(Mapping[str, str]):
    """Response headers: case-insensitive; a repeated header reads as its values joined with
    ", " (as httpx does), every value with ``get_list`` (``set-cookie``)."""

    def __init__(self, pairs: Iterable[Tuple[str, str]]) -> None:
        self.raw: list[tuple[str, str]] = [(name.lower(), value) for name, value in pairs]

    def __getitem__(self, name: str) -> str:
        values = self.get_list(name)
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def get_list(self, name: str) -> list[str]:
        wanted = name.lower()
        return [value for key, value in self.raw if key == wanted]

    getlist = get_list

    def __iter__(self) -> Iterator[str]:
        seen: dict[str, None] = {}
        for key, _ in self.raw:
            seen.setdefault(key, None)
        return iter(seen)

    def __len__(self) -> int:
        return len({key for key, _ in self.raw})

    def multi_items(self) -> list[tuple[str, str]]:
        return list(self.raw)

    def __repr__(self) -> str:
        return f"Headers({self.raw!r})"


class TestResponse:
    """What the app answered: httpx's names (``status_code``, ``headers``, ``content``,
    ``text``, ``json()``, ``cookies``, ``is_success``, ``raise_for_status()``)."""

    __test__ = False  # not a pytest test class

    def __init__(self, method: str, url: str, status: int, headers: Headers, content: bytes, history: list["TestResponse"]) -> None:
        self.method = method
        self.url = url
        self.status_code = status
        self.headers = headers
        self.content = content
        self.history = history
        self.request: Optional[TestRequest] = None

    @property
    def text(self) -> str:
        return self.content.decode(_charset(self.headers.get("content-type", "")), errors="replace")

    def json(self) -> Any:
        return jsonlib.loads(self.content)

    @property
    def cookies(self) -> dict[str, str]:
        """The cookies this response sets (``Set-Cookie``), by name."""
        return {name: value for name, value, _ in (_set_cookie(line) for line in self.headers.get_list("set-cookie")) if name}

    @property
    def reason_phrase(self) -> str:
        from http import HTTPStatus

        try:
            return HTTPStatus(self.status_code).phrase
        except ValueError:
            return ""

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    @property
    def is_redirect(self) -> bool:
        return self.status_code in _REDIRECTS and "location" in self.headers

    @property
    def is_error(self) -> bool:
        return self.status_code >= 400

    @property
    def http_version(self) -> str:
        return "HTTP/1.1"

    def raise_for_status(self) -> "TestResponse":
        if self.status_code >= 400:
            message = f"{self.status_code} {self.reason_phrase} for {self.method} {self.url}: {self.text[:500]}"
            raise HTTPStatusError(message, request=self.request, response=self)
        return self

    # httpx's streaming reads, over the whole body the in-process exchange gathered (a stream
    # that never ends never answers here, as under Starlette's TestClient).
    def read(self) -> bytes:
        return self.content

    def iter_bytes(self, chunk_size: Optional[int] = None) -> Iterator[bytes]:
        size = chunk_size or max(len(self.content), 1)
        for start in range(0, len(self.content), size):
            yield self.content[start : start + size]

    def iter_text(self, chunk_size: Optional[int] = None) -> Iterator[str]:
        text = self.text
        size = chunk_size or max(len(text), 1)
        for start in range(0, len(text), size):
            yield text[start : start + size]

    def iter_lines(self) -> Iterator[str]:
        yield from self.text.splitlines()

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<TestResponse [{self.status_code}]>"


def _status_error_bases() -> tuple[type, ...]:
    # httpx's own class when httpx is installed, so `except httpx.HTTPStatusError` (what a
    # Starlette test catches) takes it; an AssertionError all the same, as it was here.
    try:
        import httpx
    except ImportError:
        return (AssertionError,)
    return (httpx.HTTPStatusError, AssertionError)


class HTTPStatusError(*_status_error_bases()):  # type: ignore[misc]
    """``raise_for_status()`` of a 4xx or 5xx, httpx's: ``.request`` and ``.response``."""

    def __init__(self, message: str, *, request: Any, response: Any) -> None:
        Exception.__init__(self, message)
        self.request = request
        self.response = response


class Cookies(MutableMapping[str, str]):
    """The client's cookie jar, httpx's ``client.cookies``: by name (``cookies["sid"]``,
    ``get``), and ``set(name, value, domain="", path="/")``. A cookie the app set with a
    ``Path`` goes only with requests under it (RFC 6265 §5.1.4), as a browser and httpx send
    it: it went with every request (found by a probe: an ``/admin`` session cookie reached
    ``/public``)."""

    def __init__(self, cookies: Optional[Mapping[str, str]] = None) -> None:
        # (name, path) → value, in the order set.
        self._jar: dict[tuple[str, str], str] = {}
        for name, value in (cookies or {}).items():
            self.set(name, value)

    def set(self, name: str, value: str, domain: str = "", path: str = "/") -> None:
        self._jar[(name, path or "/")] = value

    def delete(self, name: str, domain: Optional[str] = None, path: Optional[str] = None) -> None:
        for key in [key for key in self._jar if key[0] == name and (path is None or key[1] == path)]:
            del self._jar[key]

    def clear(self, domain: Optional[str] = None, path: Optional[str] = None) -> None:  # type: ignore[override]
        self._jar.clear()

    def for_path(self, path: str) -> dict[str, str]:
        """The cookies that go with a request for ``path``: the most specific path's value of
        a name first, as RFC 6265 orders them."""
        chosen: dict[str, tuple[int, str]] = {}
        for (name, cookie_path), value in self._jar.items():
            if _path_matches(path, cookie_path) and len(cookie_path) >= chosen.get(name, (-1, ""))[0]:
                chosen[name] = (len(cookie_path), value)
        return {name: value for name, (_, value) in chosen.items()}

    def __getitem__(self, name: str) -> str:
        values = [value for (key, _), value in self._jar.items() if key == name]
        if not values:
            raise KeyError(name)
        return values[-1]

    def __setitem__(self, name: str, value: str) -> None:
        self.set(name, value)

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self.delete(name)

    def __contains__(self, name: object) -> bool:
        return any(key == name for key, _ in self._jar)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(key for key, _ in self._jar))

    def __len__(self) -> int:
        return len(dict.fromkeys(key for key, _ in self._jar))

    def __repr__(self) -> str:
        return f"<Cookies {[f'{name}={value} for {path}' for (name, path), value in self._jar.items()]}>"


def _path_matches(request_path: str, cookie_path: str) -> bool:
    """RFC 6265 §5.1.4: ``/admin`` takes ``/admin`` and ``/admin/x``, not ``/administrator``."""
    if request_path == cookie_path:
        return True
    if not request_path.startswith(cookie_path):
        return False
    return cookie_path.endswith("/") or request_path[len(cookie_path)] == "/"


def _default_path(request_path: str) -> str:
    """RFC 6265 §5.1.4's default path of a cookie set without ``Path``: the request path's
    directory."""
    if not request_path.startswith("/") or request_path.count("/") == 1:
        return "/"
    return request_path[: request_path.rindex("/")]


class ClientHeaders(MutableHeaders):
    """The headers every request of the client sends, httpx's ``client.headers``: Starlette's
    ``MutableHeaders`` (a name in any case, ``client.headers["Authorization"] = ...``, ``get``,
    ``update``), a repeated name read as its values joined with ", ", as httpx reads it. It was
    a list of pairs, on which ``get`` failed."""

    def __getitem__(self, name: str) -> str:
        values = self.getlist(name)
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def __setitem__(self, name: str, value: str) -> None:
        super().__setitem__(str(name), str(value))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.getlist(name))

    def multi_items(self) -> list[tuple[str, str]]:
        return list(self.raw)


class TestRequest:
    """``response.request``: what was sent (httpx's ``method``, ``url``, ``headers``, ``content``)."""

    __test__ = False

    def __init__(self, method: str, url: str, headers: Headers, content: bytes) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.content = content


class TestClient:
    """Sends requests to ``app`` in process. ``base_url`` names the host the requests are for
    (``Host`` header); ``headers`` and ``cookies`` go with every request;
    ``raise_server_exceptions`` (default true) raises a handler's exception in the test instead
    of returning its 500; ``follow_redirects`` (default true) follows 3xx ``Location``s.

    Use it as a context manager, or call ``close()``, to stop its loop and thread."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        app: App,
        base_url: str = "http://testserver",
        *,
        raise_server_exceptions: bool = True,
        follow_redirects: bool = True,
        headers: HeaderInput = None,
        cookies: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.app = app
        self.base_url = base_url.rstrip("/")
        self.raise_server_exceptions = raise_server_exceptions
        self.follow_redirects = follow_redirects
        self._headers = ClientHeaders(_pairs(headers))
        self._cookies = Cookies(cookies)
        self._loop = new_event_loop()
        # What stopped the loop, if anything did (a handler's `SystemExit` stops it, as it
        # stops a server): raised again by whatever waits on it.
        self._stopped_by: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run_loop, name="ferrule-test-client", daemon=True)
        self._thread.start()
        self._lifespan_started = False
        self._served_port: Optional[int] = None
        self._handle = self._on_loop(self._start())

    @property
    def headers(self) -> ClientHeaders:
        return self._headers

    @headers.setter
    def headers(self, value: HeaderInput) -> None:
        self._headers = ClientHeaders(_pairs(value))

    @property
    def cookies(self) -> Cookies:
        return self._cookies

    @cookies.setter
    def cookies(self, value: Optional[Mapping[str, str]]) -> None:
        self._cookies = value if isinstance(value, Cookies) else Cookies(value)

    def _jar_for(self, target: str, given: Optional[Mapping[str, str]]) -> dict[str, str]:
        path = urllib.parse.urlsplit(target).path or "/"
        return {**self._cookies.for_path(path), **(given or {})}

    async def _start(self) -> Any:
        _tasks.keep_failures(asyncio.get_running_loop())
        handle = self.app._native_app.in_process(asyncio.get_running_loop(), self.app._hooks)
        asyncio.get_running_loop().add_reader(handle.doorbell, handle.dispatch)
        return handle

    def _run_loop(self) -> None:
        try:
            self._loop.run_forever()
        except BaseException as stopped_by:  # noqa: BLE001 - the test thread raises it
            self._stopped_by = stopped_by

    def _on_loop(self, coroutine: Any) -> Any:
        if self._loop.is_closed() or not self._thread.is_alive():
            # Closed unawaited, or Python warns of a coroutine never awaited.
            coroutine.close()
            raise self._loop_gone()
        done = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        while True:
            try:
                return done.result(0.25)
            except concurrent.futures.TimeoutError:
                # A loop stopped by a handler never answers: say why instead of waiting for ever.
                if not self._thread.is_alive():
                    raise self._loop_gone() from None

    def _loop_gone(self) -> BaseException:
        if self._stopped_by is not None:
            stopped_by, self._stopped_by = self._stopped_by, None
            return stopped_by
        return RuntimeError("this TestClient is closed")

    # -- the requests/httpx call shape -------------------------------------------------------

    def request(
        self,
        method: str,
        url: str,
        *,
        params: QueryInput = None,
        headers: HeaderInput = None,
        cookies: Optional[Mapping[str, str]] = None,
        content: Union[bytes, str, None] = None,
        data: Optional[Mapping[str, Any]] = None,
        files: Any = None,
        json: Any = None,
        follow_redirects: Optional[bool] = None,
        auth: Optional[Tuple[str, str]] = None,
        timeout: Any = None,
    ) -> TestResponse:
        """httpx's call: ``auth=(user, password)`` sends Basic credentials; ``timeout`` is taken
        and, as by Starlette's TestClient, unused: an in-process request has no network."""
        body, content_type = _encode_body(content, data, files, json)
        target = _target(self.base_url, url, params)
        pairs = [*self._headers.multi_items(), *_pairs(headers)]
        if content_type is not None and not any(name.lower() == "content-type" for name, _ in pairs):
            pairs.append(("content-type", content_type))
        if auth is not None and not any(name.lower() == "authorization" for name, _ in pairs):
            user, password = auth
            credentials = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            pairs.append(("authorization", f"Basic {credentials}"))
        follow = self.follow_redirects if follow_redirects is None else follow_redirects
        history: list[TestResponse] = []
        while True:
            response = self._send(method.upper(), target, pairs, body, self._jar_for(target, cookies), history)
            if not (follow and response.is_redirect) or len(history) >= 20:
                return response
            history.append(response)
            target = urllib.parse.urljoin(target, response.headers["location"])
            if response.status_code == 303 or (response.status_code in (301, 302) and method.upper() == "POST"):
                method, body = "GET", b""
                pairs = [(n, v) for n, v in pairs if n.lower() not in ("content-type", "content-length")]

    @contextlib.contextmanager
    def stream(self, method: str, url: str, **kwargs: Any) -> Iterator[TestResponse]:
        """httpx's ``with client.stream("GET", "/events") as response:`` then
        ``response.iter_lines()``: the response once its body has ended."""
        response = self.request(method, url, **kwargs)
        try:
            yield response
        finally:
            response.close()

    def get(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("PUT", url, **kwargs)

    def patch(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("PATCH", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("DELETE", url, **kwargs)

    def head(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("HEAD", url, **kwargs)

    def options(self, url: str, **kwargs: Any) -> TestResponse:
        return self.request("OPTIONS", url, **kwargs)

    # -- one exchange ------------------------------------------------------------------------

    def websocket_connect(
        self,
        url: str,
        subprotocols: Sequence[str] = (),
        *,
        params: QueryInput = None,
        headers: HeaderInput = None,
        cookies: Optional[Mapping[str, str]] = None,
        timeout: float = 30.0,
    ) -> WebSocketTestSession:
        """Opens a WebSocket to the app, as Starlette's client does: ``with
        client.websocket_connect("/ws") as ws: ws.send_text("hi"); ws.receive_text()``. The
        client's headers and cookies go with the handshake; a handshake the app answers with a
        response instead (a 422, a 403) raises ``WebSocketDenialResponse``. The app is served
        on 127.0.0.1 for it (started on first use, on the client's loop), since an upgrade needs
        a connection; a receive waits at most ``timeout`` seconds."""
        target = urllib.parse.urlsplit(_target(self.base_url, url, params))
        path = urllib.parse.urlunsplit(("", "", target.path or "/", target.query, ""))
        pairs = [*self._headers.multi_items(), *_pairs(headers)]
        names = {name.lower() for name, _ in pairs}
        handshake: list[tuple[str, str]] = []
        if "host" not in names:
            handshake.append(("host", target.netloc))
        jar = self._jar_for(urllib.parse.urlunsplit(target), cookies)
        if jar and "cookie" not in names:
            handshake.append(("cookie", "; ".join(f"{name}={value}" for name, value in jar.items())))
        handshake.extend(pairs)
        return WebSocketTestSession(self._served(), path, handshake, list(subprotocols or ()), timeout)

    def _served(self) -> int:
        """The port the app is served on for WebSockets, serving it first if it is not yet."""
        if self._served_port is None:

            async def serve() -> int:
                loop = asyncio.get_running_loop()
                ready: asyncio.Future[int] = loop.create_future()
                serving = loop.create_task(self.app._serve("127.0.0.1", 0, None, 1, ready.set_result))
                either: set[asyncio.Future[Any]] = {ready, serving}
                await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
                if not ready.done():
                    serving.result()  # raises what stopped it from serving
                    raise RuntimeError("the app stopped serving before it listened")
                return ready.result()

            self._served_port = self._on_loop(serve())
        return self._served_port

    def send_raw(self, method: str, path: str, headers: Sequence[Tuple[str, bytes]], body: bytes) -> Tuple[int, list[tuple[str, bytes]], bytes, bool]:
        """One request exactly as given — ``path`` with its query string, header values as
        bytes, no cookies or defaults added — answered as ``(status, [(name, value bytes)],
        body, cut_off)``; ``cut_off`` says the body broke off (a stream that failed). For tests
        that need the bytes themselves (the conformance corpus)."""

        async def exchange() -> Any:
            answer = await self._handle.send(method, path, list(headers), body)
            # As Starlette's client, which returns once the response's background tasks and
            # the dependencies' teardowns have run: a test asserting what a task did passed
            # or failed by timing (found by a probe).
            await _tasks.settled()
            return answer, _tasks.take_failure(asyncio.get_running_loop())

        answer, task_failure = self._on_loop(exchange())
        self._raise_server_exception()
        # A background task's exception, as Starlette's client raises it (it was only logged).
        if task_failure is not None and self.raise_server_exceptions:
            raise task_failure
        return answer

    def _send(self, method: str, target: str, pairs: list[tuple[str, str]], body: bytes, cookies: Mapping[str, str], history: list[TestResponse]) -> TestResponse:
        parsed = urllib.parse.urlsplit(target)
        path = urllib.parse.urlunsplit(("", "", parsed.path or "/", parsed.query, ""))
        names = {name.lower() for name, _ in pairs}
        wire: list[tuple[str, bytes]] = []
        if "host" not in names:
            wire.append(("host", parsed.netloc.encode("latin-1")))
        if "user-agent" not in names:
            wire.append(("user-agent", b"testclient"))
        if cookies and "cookie" not in names:
            wire.append(("cookie", "; ".join(f"{name}={value}" for name, value in cookies.items()).encode("latin-1")))
        wire.extend((name, value.encode("latin-1")) for name, value in pairs)
        if (body or method in ("POST", "PUT", "PATCH")) and "content-length" not in names:
            wire.append(("content-length", str(len(body)).encode()))
        status, raw_headers, content, _ = self.send_raw(method, path, wire, body)
        headers = Headers((name, value.decode("latin-1")) for name, value in raw_headers)
        response = TestResponse(method, target, status, headers, _decoded(headers, content), list(history))
        response.request = TestRequest(method, target, Headers((name, value.decode("latin-1")) for name, value in wire), body)
        self._keep_cookies(headers, parsed.path or "/")
        return response

    def _raise_server_exception(self) -> None:
        # What the app raised and did not answer itself, as Starlette's client raises it: a
        # 500's exception, a last-resort handler's (whatever status it sent), a stream
        # producer's after the head had gone — a body cut off, or an event stream, which ends
        # as if it were complete (before, only a 500 or a cut-off body raised, so a broken
        # event stream passed its test).
        raised = self._handle.take_raised()
        if raised is not None and self.raise_server_exceptions:
            raise raised

    def _keep_cookies(self, headers: Headers, request_path: str) -> None:
        for line in headers.get_list("set-cookie"):
            name, value, expired = _set_cookie(line)
            if not name:
                continue
            path = _cookie_path(line) or _default_path(request_path)
            if expired:
                self._cookies.delete(name, path=path)
            else:
                self._cookies.set(name, value, path=path)

    # -- life cycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Stops the client's loop and its thread; requests still running are cancelled."""
        _tasks.forget_failures(self._loop)
        if self._loop.is_closed():
            return
        if not self._thread.is_alive():
            self._loop.close()
            return

        async def stop() -> None:
            asyncio.get_running_loop().remove_reader(self._handle.doorbell)
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self._on_loop(stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> "TestClient":
        """Runs the app's startup (``on_startup``, ``lifespan``) on the client's loop, as
        Starlette's client does in a ``with`` block; a failing one raises ``StartupFailed``."""
        try:
            self._on_loop(self.app._start_lifespan())
        except BaseException:
            self.close()
            raise
        self._lifespan_started = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._lifespan_started and self._thread.is_alive():
            self._lifespan_started = False
            self._on_loop(self._retire_stand_ins())
            self._on_loop(self.app._stop_lifespan())
        self.close()

    async def _retire_stand_ins(self) -> None:
        """Ends the stand-in tasks of ``async def`` handlers that ran at once (cancelled, they
        end in the loop's next turn), so that no shutdown step finds them running."""
        self._handle.retire_stand_ins()
        await asyncio.sleep(0)

    def __del__(self) -> None:
        loop = getattr(self, "_loop", None)
        if loop is not None and not loop.is_closed() and loop.is_running():
            loop.call_soon_threadsafe(loop.stop)


def _pairs(headers: HeaderInput) -> list[tuple[str, str]]:
    if headers is None:
        return []
    items = headers.items() if isinstance(headers, Mapping) else headers
    return [(str(name), str(value)) for name, value in items]


def _target(base_url: str, url: str, params: QueryInput) -> str:
    target = url if "://" in url else base_url + ("" if url.startswith("/") else "/") + url
    if params is None or params == "":
        return target
    if isinstance(params, str):
        extra = params
    else:
        items = params.items() if isinstance(params, Mapping) else params
        pairs: list[tuple[str, str]] = []
        for name, value in items:
            for one in value if isinstance(value, (list, tuple)) else [value]:
                pairs.append((str(name), _query_text(one)))
        extra = urllib.parse.urlencode(pairs)
    return target + ("&" if "?" in target else "?") + extra


def _query_text(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    return "" if value is None else str(value)


def _encode_body(content: Union[bytes, str, None], data: Optional[Mapping[str, Any]], files: Any, json: Any) -> Tuple[bytes, Optional[str]]:
    # `json=None` is no body, as httpx (Starlette's and FastAPI's TestClient) reads it; a JSON
    # `null` is `content="null"`.
    given = [name for name, value in (("content", content), ("data", data), ("files", files), ("json", json)) if value is not None]
    if len(given) > 1 and set(given) != {"data", "files"}:
        raise TypeError(f"give one body: {', '.join(given)} were given")
    if json is not None:
        return jsonlib.dumps(json, separators=(",", ":"), ensure_ascii=False).encode(), "application/json"
    if content is not None:
        return (content.encode() if isinstance(content, str) else bytes(content)), None
    if files is not None:
        return _multipart(data or {}, files)
    if data is not None:
        pairs = [(str(k), _query_text(one)) for k, v in data.items() for one in (v if isinstance(v, (list, tuple)) else [v])]
        return urllib.parse.urlencode(pairs).encode(), "application/x-www-form-urlencoded"
    return b"", None


def _multipart(data: Mapping[str, Any], files: Any) -> Tuple[bytes, str]:
    """``files`` as requests/httpx take it: a mapping or a list of ``(field, file)``, where a
    file is bytes, a file object, ``(filename, content)``, ``(filename, content,
    content_type)`` or ``(filename, content, content_type, headers)``."""
    boundary = uuid.uuid4().hex
    out = bytearray()

    def part(name: str, disposition_extra: str, headers: Mapping[str, str], payload: bytes) -> None:
        out.extend(f"--{boundary}\r\n".encode())
        out.extend(f'Content-Disposition: form-data; name="{_quoted(name)}"{disposition_extra}\r\n'.encode())
        for header, value in headers.items():
            out.extend(f"{header}: {value}\r\n".encode())
        out.extend(b"\r\n")
        out.extend(payload)
        out.extend(b"\r\n")

    for name, value in data.items():
        for one in value if isinstance(value, (list, tuple)) else [value]:
            part(str(name), "", {}, _query_text(one).encode())
    entries = files.items() if isinstance(files, Mapping) else files
    for name, file in entries:
        filename: Optional[str] = None
        content_type: Optional[str] = None
        extra: Mapping[str, str] = {}
        if isinstance(file, tuple):
            filename, payload, *rest = file
            content_type = rest[0] if rest else None
            extra = rest[1] if len(rest) > 1 else {}
        else:
            payload = file
            filename = getattr(file, "name", None)
        if hasattr(payload, "read"):
            payload = payload.read()
        if isinstance(payload, str):
            payload = payload.encode()
        if filename is not None:
            filename = str(filename).replace("\\", "/").rsplit("/", 1)[-1]
        headers = {"Content-Type": content_type or "application/octet-stream", **extra}
        part(str(name), f'; filename="{_quoted(filename or "upload")}"', headers, bytes(payload))
    out.extend(f"--{boundary}--\r\n".encode())
    return bytes(out), f"multipart/form-data; boundary={boundary}"


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def _charset(content_type: str) -> str:
    for parameter in content_type.split(";")[1:]:
        key, _, value = parameter.strip().partition("=")
        if key.lower() == "charset" and value:
            return value.strip('"')
    return "utf-8"


def _decoded(headers: Headers, content: bytes) -> bytes:
    """The body with a gzip or deflate ``Content-Encoding`` undone, as httpx gives it (only
    when the request asked for one; other encodings stay as they came)."""
    encoding = headers.get("content-encoding", "").strip().lower()
    if encoding == "gzip":
        return zlib.decompress(content, 16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompress(content)
    return content


def _cookie_path(line: str) -> Optional[str]:
    """A ``Set-Cookie`` line's ``Path``, when it names one that starts with ``/``."""
    for attribute in line.split(";")[1:]:
        key, _, setting = attribute.strip().partition("=")
        if key.lower() == "path" and setting.strip().startswith("/"):
            return setting.strip()
    return None


def _set_cookie(line: str) -> Tuple[str, str, bool]:
    """``Set-Cookie`` → ``(name, value, expired)``."""
    first, *attributes = line.split(";")
    name, _, value = first.strip().partition("=")
    expired = False
    for attribute in attributes:
        key, _, setting = attribute.strip().partition("=")
        key = key.lower()
        if key == "max-age":
            try:
                expired = int(setting) <= 0
            except ValueError:
                pass
        elif key == "expires":
            try:
                expired = email.utils.parsedate_to_datetime(setting).timestamp() <= time.time()
            except (TypeError, ValueError):
                pass
    # The value as the server wrote it, quotes and escapes included, as a browser (and
    # httpx's jar) keeps it: it is sent back so, and the server reads it as it wrote it.
    return name.strip(), value.strip(), expired
