"""Type stubs for the compiled module ``ferrule._ferrule``."""

import asyncio
from datetime import datetime
from typing import Any, AsyncIterator, Awaitable, BinaryIO, Callable, Optional, Sequence
from uuid import UUID

from .request import URL, Address, AwaitableBytes, FormData, QueryParams
from .responses import MutableHeaders

__version__: str
PROBLEM_JSON: str

class Request:
    """Everything the core parsed for one request: typed, validated, ready to use."""

    @property
    def method(self) -> str: ...
    @property
    def path(self) -> str:
        """The path as sent (percent-encoded)."""
    @property
    def path_params(self) -> dict[str, Any]:
        """Path parameters, typed as the template declares (``{id:int}`` → int)."""
    @property
    def query(self) -> dict[str, Any]:
        """Declared query parameters, coerced and validated (missing optional ones are None)."""
    @property
    def headers(self) -> MutableHeaders:
        """Every header as sent (Starlette's ``request.headers``): names in any case."""
    @property
    def cookies(self) -> dict[str, str]:
        """Every cookie as sent (Starlette's ``request.cookies``); a repeated name's last value."""
    def body(self) -> Awaitable[bytes]:
        """``await request.body()``: the body as sent (Starlette's)."""
    def form(self) -> Awaitable[FormData]:
        """``await request.form()``: a declared form's fields, or an url-encoded body (Starlette's)."""
    def stream(self) -> AsyncIterator[bytes]:
        """``async for chunk in request.stream()``: the body as sent, then ``b""``."""
    def is_disconnected(self) -> Awaitable[bool]:
        """``await request.is_disconnected()``: whether the client has gone while the handler works (Starlette's)."""
    @property
    def _declared_headers(self) -> dict[str, Any]:
        """The declared headers, typed, under their lower-case names."""
    @property
    def _declared_cookies(self) -> dict[str, Any]: ...
    @property
    def _validated_body(self) -> Any:
        """JSON as dicts/lists (schema defaults filled in), form fields as a dict (files as
        ``UploadFile``), bytes, str, or None."""
    @property
    def request_id(self) -> Optional[str]: ...
    @property
    def query_params(self) -> QueryParams:
        """Every query parameter as sent, declared or not (Starlette's ``QueryParams``)."""
    @property
    def url(self) -> URL:
        """The URL the request named (Starlette's ``URL``: ``path``, ``query``, ``hostname``, …)."""
    @property
    def base_url(self) -> URL:
        """The app's root URL (Starlette's ``request.base_url``): ``url``'s scheme and host, path ``/``."""
    def url_for(self, name: str, /, **path_params: Any) -> URL:
        """The URL of the route called ``name`` with ``path_params`` filled in, under
        ``base_url`` (Starlette's ``request.url_for``; see ``App.url_path_for``)."""
    def json(self) -> Awaitable[Any]:
        """``await request.json()``: the body as sent, parsed (Starlette's)."""
    @property
    def client(self) -> Optional[Address]:
        """The client that sent the request (``host``, ``port``): the peer, or the client a
        proxy ``forwarded_allow_ips`` lists names (port 0); ``127.0.0.1`` (port 0) for a
        ``TestClient``'s request."""
    @property
    def trace_id(self) -> Optional[str]:
        """The W3C trace id of the caller's ``traceparent`` (when valid)."""
    @property
    def traceparent(self) -> Optional[str]:
        """The caller's ``traceparent``, validated (``None`` when absent or invalid)."""
    @property
    def app(self) -> Any:
        """The app serving the request (Starlette's ``request.app``)."""
    @property
    def session(self) -> dict[str, Any]:
        """Starlette's ``request.session`` (``ferrule.middleware.sessions.SessionMiddleware``)."""
    def _load_session(self, session: dict[str, Any]) -> None: ...
    @property
    def state(self) -> Any:
        """What hooks and middleware leave for the handler (Starlette's ``request.state``)."""
    @property
    def _state_if_made(self) -> Any:
        """``state`` if anything made it, else ``None``."""
    def header(self, name: str, default: Optional[str] = None) -> Optional[str]:
        """Any request header (case-insensitive); repeated headers joined with ", "."""
    def header_items(self) -> list[tuple[str, str]]: ...
    @property
    def raw_body(self) -> bytes:
        """The body as sent, on any route (within the body limit)."""
    @property
    def query_string(self) -> str:
        """The query string as sent (percent-encoded, without ``?``)."""
    def query_items(self) -> list[tuple[str, str]]:
        """Every query parameter, declared or not, decoded, in order."""
    def cookie_items(self) -> list[tuple[str, str]]:
        """Every cookie, declared or not, in order."""

class UploadFile:
    """An uploaded file from a multipart body, bytes kept exactly as sent."""

    @property
    def field(self) -> str: ...
    @property
    def filename(self) -> Optional[str]: ...
    @property
    def content_type(self) -> Optional[str]: ...
    @property
    def size(self) -> int: ...
    @property
    def headers(self) -> dict[str, str]:
        """Every header of the file's part, names in lower case."""
    def read(self, size: int = -1) -> AwaitableBytes:
        """Up to ``size`` bytes (all when negative) from the position, which moves past them;
        ``await file.read()`` works too (Starlette's habit)."""
    def seek(self, offset: int) -> Awaitable[None]: ...
    def close(self) -> Awaitable[None]: ...
    @property
    def file(self) -> BinaryIO:
        """An ``io.BytesIO`` of the bytes, with a position of its own."""

class ServerHandle:
    @property
    def port(self) -> int: ...
    @property
    def doorbell(self) -> int: ...
    def announce(self) -> None: ...
    def stop(self) -> None: ...
    def dispatch(self) -> None: ...

class InProcessHandle:
    @property
    def doorbell(self) -> int: ...
    def send(self, method: str, uri: str, headers: list[tuple[str, bytes]], body: bytes) -> "asyncio.Future[tuple[int, list[tuple[str, bytes]], bytes, bool]]": ...
    def dispatch(self) -> None: ...
    def take_raised(self) -> Optional[BaseException]: ...
    def retire_stand_ins(self) -> None: ...

class PendingCall:
    """One request whose hooks run in ``ferrule.hooks``."""
    def finish(self, result: Any) -> None: ...
    def json_of(self, value: Any, status: int) -> bytes: ...
    def answer_later(self) -> None: ...
    def fail(self, exception: BaseException) -> None: ...
    def report(self, exception: BaseException) -> None: ...

class StreamSink:
    """The pushing end of a stream producer (driven by ``ferrule.server.produce`` or
    ``produce_in_pool``)."""
    @property
    def iterator(self) -> Any: ...
    @property
    def open(self) -> bool: ...
    def push(self, item: Any) -> bool: ...
    def room(self) -> Awaitable[None]: ...
    def finish(self) -> None: ...
    def fail(self, exception: BaseException) -> None: ...

class NativeSocket:
    """A WebSocket as ``ferrule.websocket.WebSocket`` holds it; nothing here waits."""
    @property
    def id(self) -> int: ...
    @property
    def subprotocol(self) -> Optional[str]: ...
    @property
    def label(self) -> str: ...
    @property
    def buffered(self) -> int: ...
    def take(self) -> tuple[list[Union[str, bytes]], Optional[tuple[int, str]]]: ...
    def send_text(self, text: str) -> None: ...
    def send_bytes(self, data: bytes) -> None: ...
    def ping(self, data: bytes = ...) -> None: ...
    def close(self, code: int = ..., reason: str = ...) -> None: ...

class LogDrain:
    @property
    def doorbell(self) -> int: ...
    def drain(self) -> None: ...

class NativeApp:
    def __init__(self, config_json: str, response_type: type, http_exception_type: type, owner: Optional[Callable[[], Any]] = None) -> None: ...
    def add_route(
        self,
        spec_json: str,
        handler: Callable[..., Any],
        arguments: Sequence[Any],
        is_async: bool,
        status: int,
        group: int = 0,
        chained: bool = False,
        cannot_wait: bool = False,
        remake: Optional[Callable[[Any], Any]] = None,
    ) -> None: ...
    def configure(self, settings_json: str) -> None: ...
    def openapi(self) -> str: ...
    def mount_static(self, spec_json: str) -> None: ...
    def group(self, parent: int, prefix: str) -> int: ...
    def hook(self, group: int, phase: str, slot: int) -> None: ...
    def catch(self, status: Optional[int] = None) -> None: ...
    def route_logs(self) -> LogDrain: ...
    def in_process(self, event_loop: asyncio.AbstractEventLoop) -> InProcessHandle: ...
    def start(
        self,
        event_loop: asyncio.AbstractEventLoop,
        stopped: "asyncio.Future[None]",
        host: Optional[str] = None,
        port: int = 0,
        fd: Optional[int] = None,
        threads: Optional[int] = None,
    ) -> ServerHandle: ...

def normalize_path(path: str) -> str: ...
def reload(command: Sequence[str], directories: Sequence[str], extensions: Sequence[str], debounce_ms: int) -> int: ...
def problem_body(status: int, detail: Any = None) -> bytes: ...
def server_error_body() -> bytes: ...
def json_bytes(value: Any) -> bytes: ...
def media_type_of(response: Any) -> Optional[str]: ...
def multipart_parts(content_type: str, body: bytes) -> list[tuple[str, str | UploadFile]]: ...
def unknown_option(what: str, name: str, known: Sequence[str]) -> str: ...
def uuid_from_text(value: Any) -> UUID: ...
def datetime_from_text(value: Any) -> datetime: ...
def app_setting_names() -> list[str]: ...
