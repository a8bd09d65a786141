"""Type stubs for the compiled module ``ferrule._ferrule``."""

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable, Optional, Sequence

from .request import AwaitableBytes

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
    def headers(self) -> dict[str, Any]:
        """Declared headers under their lower-case names; ``header()`` reads any header."""
    @property
    def cookies(self) -> dict[str, Any]: ...
    @property
    def body(self) -> Any:
        """JSON as dicts/lists (schema defaults filled in), form fields as a dict (files as
        ``UploadFile``), bytes, str, or None."""
    @property
    def request_id(self) -> Optional[str]: ...
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
    def read(self) -> AwaitableBytes:
        """The bytes; ``await file.read()`` works too (Starlette's habit)."""

class ServerHandle:
    @property
    def port(self) -> int: ...
    @property
    def doorbell(self) -> int: ...
    def announce(self) -> None: ...
    def stop(self) -> None: ...
    def dispatch(self) -> None: ...

class PendingCall:
    """One request to an async handler (driven by ``ferrule.server.run_handler``)."""
    def start(self) -> Awaitable[Any]: ...
    def finish(self, result: Any) -> None: ...
    def fail(self, exception: BaseException) -> None: ...

class StreamSink:
    """The pushing end of a stream producer (driven by ``ferrule.server.produce`` or
    ``produce_in_thread``)."""
    @property
    def iterator(self) -> Any: ...
    @property
    def open(self) -> bool: ...
    def push(self, item: Any) -> bool: ...
    def room(self) -> Awaitable[None]: ...
    def wait_room(self) -> bool: ...
    def finish(self) -> None: ...
    def fail(self, exception: BaseException) -> None: ...

class LogDrain:
    @property
    def doorbell(self) -> int: ...
    def drain(self) -> None: ...

class NativeApp:
    def __init__(self, config_json: str, response_type: type, http_exception_type: type) -> None: ...
    def add_route(
        self, spec_json: str, handler: Callable[..., Any], arguments: Sequence[Any], is_async: bool, status: int
    ) -> None: ...
    def route_logs(self) -> LogDrain: ...
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
def unknown_option(what: str, name: str, known: Sequence[str]) -> str: ...
def app_setting_names() -> list[str]: ...
