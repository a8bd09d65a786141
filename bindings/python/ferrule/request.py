"""The request as handlers see it (``Request``) and uploaded files (``UploadFile``).

Both are built by Rust from data it already parsed and validated; see ``_ferrule.pyi`` for
their attributes.
"""

from __future__ import annotations

import json
import types
import urllib.parse
from typing import Any, AsyncIterator, Generator, Iterator, Mapping, NamedTuple, Optional, Union

from . import _ferrule
from ._ferrule import Request, UploadFile

__all__ = ["Address", "FormData", "QueryParams", "Request", "UploadFile", "URL", "AwaitableBytes"]


class QueryParams(Mapping[str, str]):
    """``request.query_params``, as Starlette's: every query parameter as sent, declared or not,
    decoded; ``params[name]`` and ``get`` give a repeated name's last value, ``getlist`` all of
    them, ``multi_items`` every pair in order. (``request.query`` has the declared ones, typed.)"""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._pairs = pairs
        self._last = dict(pairs)

    def __getitem__(self, name: str) -> str:
        return self._last[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._last)

    def __len__(self) -> int:
        return len(self._last)

    def getlist(self, name: str) -> list[str]:
        return [value for key, value in self._pairs if key == name]

    def multi_items(self) -> list[tuple[str, str]]:
        return list(self._pairs)

    def __str__(self) -> str:
        """The pairs as a query string, Starlette's: ``f"/items?{request.query_params}"`` builds
        a link (it built ``/items?QueryParams([...])``, found by a probe)."""
        return urllib.parse.urlencode(self._pairs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, QueryParams):
            # Keyed by text: a form's values may be files, which do not order.
            def key(pair: tuple[str, Any]) -> tuple[str, str]:
                return (pair[0], str(pair[1]))

            return sorted(self._pairs, key=key) == sorted(other._pairs, key=key)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mapping, compared by its pairs

    def __repr__(self) -> str:
        return f"QueryParams({self._pairs!r})"


class FormData(QueryParams):
    """``await request.form()``, as Starlette's ``FormData``: ``form[name]`` and ``get`` give a
    repeated field's last value, ``getlist`` all of them; an uploaded file is an ``UploadFile``."""

    def __repr__(self) -> str:
        return f"FormData({self._pairs!r})"

    async def close(self) -> None:
        """Nothing to release (the files are in memory); there for Starlette's ``form.close()``."""


def _form_of(validated: Any, content_type: Optional[str], raw_body: bytes) -> _Ready:
    """``await request.form()``: a declared form's fields (files as ``UploadFile``), or a body
    the route does not declare parsed as sent: url-encoded, or multipart by the core's parser
    (within the default multipart limits; a malformed one is a 400). It was a RuntimeError, a
    500 for every such request (found by a probe: FastAPI reads it)."""
    if isinstance(validated, dict):
        pairs = [(name, item) for name, value in validated.items() for item in (value if isinstance(value, list) else [value])]
        return _Ready(FormData(pairs))
    essence = (content_type or "").split(";", 1)[0].strip().lower()
    if essence == "application/x-www-form-urlencoded":
        return _Ready(FormData(urllib.parse.parse_qsl(raw_body.decode("utf-8", "replace"), keep_blank_values=True)))
    if essence == "multipart/form-data":
        try:
            parts = _ferrule.multipart_parts(content_type or "", raw_body)
        except ValueError as refused:
            from .responses import HTTPException

            raise HTTPException(400, str(refused)) from None
        return _Ready(FormData(parts))
    return _Ready(FormData([]))


class URL:
    """``request.url``, as Starlette's: ``scheme``, ``hostname``, ``port``, ``netloc``, ``path``
    (percent-encoded, as sent) and ``query``; ``str(url)`` is the whole URL. The host is the
    request's ``Host`` header (empty when it sent none); the scheme is ``http``, as the server
    speaks no TLS. From a proxy ``forwarded_allow_ips`` lists, both are what it says the client
    asked for (``X-Forwarded-Proto``, ``X-Forwarded-Host``)."""

    __slots__ = ("scheme", "netloc", "path", "query")

    def __init__(self, netloc: str, path: str, query: str, scheme: str = "http") -> None:
        self.scheme = scheme
        self.netloc = netloc
        self.path = path
        self.query = query

    @property
    def hostname(self) -> Optional[str]:
        host = self.netloc.rsplit("@", 1)[-1]
        if host.startswith("["):
            return host[1 : host.find("]")] if "]" in host else host
        return host.rsplit(":", 1)[0] if host else None

    @property
    def port(self) -> Optional[int]:
        host = self.netloc.rsplit("@", 1)[-1]
        _, colon, port = host.rpartition(":")
        return int(port) if colon and port.isdigit() and not host.endswith("]") else None

    def __str__(self) -> str:
        return f"{self.scheme}://{self.netloc}{self.path}" + (f"?{self.query}" if self.query else "")

    def replace(self, **parts: str) -> "URL":
        """This URL with ``scheme``, ``netloc``, ``path`` or ``query`` replaced (Starlette's ``replace``)."""
        unknown = set(parts) - {"scheme", "netloc", "path", "query"}
        if unknown:
            raise TypeError(f"URL.replace takes scheme, netloc, path and query, not {', '.join(sorted(unknown))}")
        return URL(parts.get("netloc", self.netloc), parts.get("path", self.path), parts.get("query", self.query), parts.get("scheme", self.scheme))

    def include_query_params(self, **params: Any) -> "URL":
        """This URL with ``params`` set in its query (replacing those of the same names)."""
        pairs = [(k, v) for k, v in urllib.parse.parse_qsl(self.query, keep_blank_values=True) if k not in params]
        pairs.extend((name, str(value)) for name, value in params.items())
        return self.replace(query=urllib.parse.urlencode(pairs))

    def replace_query_params(self, **params: Any) -> "URL":
        """This URL with ``params`` as its whole query."""
        return self.replace(query=urllib.parse.urlencode([(name, str(value)) for name, value in params.items()]))

    def remove_query_params(self, keys: Any) -> "URL":
        """This URL without the query parameters named in ``keys`` (a name or several)."""
        names = {keys} if isinstance(keys, str) else set(keys)
        pairs = [(k, v) for k, v in urllib.parse.parse_qsl(self.query, keep_blank_values=True) if k not in names]
        return self.replace(query=urllib.parse.urlencode(pairs))

    def __repr__(self) -> str:
        return f"URL({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


class URLPath(str):
    """A route's path from ``app.url_path_for``, as Starlette's: a ``str`` with the route's
    ``protocol`` (``"http"``, or ``"websocket"``); ``make_absolute_url(base_url)`` makes it a
    whole ``URL`` under the app's root, ``ws``/``wss`` for a WebSocket route."""

    protocol: str

    def __new__(cls, path: str, protocol: str = "http") -> "URLPath":
        made = super().__new__(cls, path)
        made.protocol = protocol
        return made

    def make_absolute_url(self, base_url: "Union[str, URL]") -> URL:
        if isinstance(base_url, str):
            parts = urllib.parse.urlsplit(base_url)
            base_url = URL(parts.netloc, parts.path or "/", "", parts.scheme or "http")
        secure = base_url.scheme in ("https", "wss")
        scheme = ("wss" if secure else "ws") if self.protocol == "websocket" else ("https" if secure else "http")
        return URL(base_url.netloc, base_url.path.rstrip("/") + str(self), "", scheme)


class NoMatchFound(Exception):
    """``url_path_for``/``url_for`` found no route of that name whose path parameters are
    those given (Starlette's ``starlette.routing.NoMatchFound``)."""

    def __init__(self, name: str, path_params: dict[str, Any]) -> None:
        given = ", ".join(path_params)
        super().__init__(f'No route exists for name "{name}" and params "{given}".')


def _url_for(request: Any, name: str, path_params: Optional[dict[str, Any]]) -> URL:
    """``request.url_for``: the route's path under the request's ``base_url``."""
    app = request.app
    if app is None:
        raise RuntimeError("request.url_for: the app that served this request is gone")
    return app.url_path_for(name, **(path_params or {})).make_absolute_url(request.base_url)


class _Ready:
    """What ``await request.json()`` waits on: the value, already there (the body is read
    before the handler runs)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, Any]:
        if False:  # pragma: no cover - makes this a generator that returns at once
            yield None
        return self.value


def _json_of(raw_body: bytes) -> _Ready:
    """``await request.json()``: the body as sent, parsed (Starlette's), whatever the route
    declares; a body that is not JSON raises ``json.JSONDecodeError`` (a ``ValueError``)."""
    return _Ready(json.loads(raw_body))


async def _stream_of(raw_body: bytes) -> AsyncIterator[bytes]:
    """``request.stream()``: the body as sent, in one chunk (it was read before the handler
    ran), then ``b""``, as Starlette's stream ends."""
    if raw_body:
        yield raw_body
    yield b""


def _state_of(app: Any) -> types.SimpleNamespace:
    """A request's ``request.state``, made on first use: what the app's lifespan yielded (a
    shallow copy, as Starlette's lifespan state), for hooks and dependencies to add to."""
    state = types.SimpleNamespace()
    lifespan_state = getattr(app, "_lifespan_state", None)
    if lifespan_state:
        state.__dict__.update(lifespan_state)
    return state


class Address(NamedTuple):
    """``request.client``, as Starlette's: the peer's ``host`` (an IP address) and ``port``."""

    host: str
    port: int


class AwaitableBytes(bytes):
    """What ``UploadFile.read()`` returns: the file's bytes, which may also be awaited, as
    Starlette's ``await file.read()`` is (the bytes are already in memory: nothing waits)."""

    def __await__(self) -> Generator[Any, None, bytes]:
        if False:  # pragma: no cover - makes this a generator that returns at once
            yield None
        return bytes(self)
