"""``App``: routes declared with decorators, served by the Rust core."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from typing import Any, Callable, Iterable, Optional, TypeVar

from . import _ferrule
from .request import Request
from .response_model import FROM_ANNOTATION, response_schema
from .responses import HTTPException, Response
from .signature import Argument, analyse
from .websocket import WebSocket

__all__ = ["App"]

Handler = TypeVar("Handler", bound=Callable[..., Any])

_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
_ROUTE_OPTIONS = (
    "cors",
    "compression",
    "body_limit",
    "timeout_ms",
    "summary",
    "description",
    "operation_id",
    "tags",
    "deprecated",
    "include_in_schema",
)
_UNSET: Any = object()


class _Route:
    __slots__ = ("spec", "handler", "arguments", "is_async", "status_code")

    def __init__(self, spec: dict, handler: Callable[..., Any], arguments: list[Argument], status_code: int, blocking: bool) -> None:
        self.spec = spec
        self.arguments = arguments
        self.status_code = status_code
        if blocking:
            if inspect.iscoroutinefunction(handler):
                raise TypeError(f"{handler.__qualname__}: blocking=True is for def handlers; async handlers never block the loop")
            handler = _in_thread_pool(handler)
        self.handler = handler
        self.is_async = inspect.iscoroutinefunction(handler)


def _documented(handler: Callable[..., Any]) -> dict[str, Any]:
    """The operation's description from the handler's docstring, as FastAPI takes it (a
    ``description=`` option still wins)."""
    doc = inspect.getdoc(handler)
    return {"description": doc} if doc else {}


def _in_thread_pool(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Runs a def handler in the event loop's default thread pool (threads are reused)."""

    @functools.wraps(handler)
    async def run(*args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(handler, *args, **kwargs))

    return run


def _with_response(handler: Callable[..., Any], name: str, status_code: int) -> Callable[..., Any]:
    """Gives ``handler`` a fresh ``Response`` as its ``name`` parameter, and applies its status,
    headers and cookies to a plain return value (a returned ``Response`` is sent as it is)."""

    def merged(response: Response, result: Any) -> Any:
        if isinstance(result, Response):
            return result
        return Response(response.status, response.headers, result, media_type=response.media_type)

    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def run_async(**kwargs: Any) -> Any:
            response = Response(status_code)
            return merged(response, await handler(**kwargs, **{name: response}))

        return run_async

    @functools.wraps(handler)
    def run(**kwargs: Any) -> Any:
        response = Response(status_code)
        return merged(response, handler(**kwargs, **{name: response}))

    return run


class DrainTimeout(RuntimeError):
    """``serve()`` stopped, but requests were still running at ``shutdown_timeout_ms`` and were
    cut off. The core has printed one line saying so; ``run()`` exits with status 1."""


class App:
    """A Ferrule application.

    Settings (all optional) are the core's: ``body_limit`` (bytes, default 2 MiB), ``cors``
    (``{"allow_origins": [...], "allow_methods": [...], "allow_headers": [...],
    "expose_headers": [...], "allow_credentials": bool, "max_age_secs": int}``), ``compression``
    (``{"min_size": 500, "gzip": True, "br": True, "zstd": True}``), ``request_id`` (generate and
    echo ``X-Request-ID``, default on), ``access_log`` (a record per request to the ``ferrule.access`` logger, default off),
    ``validate_responses`` (development: a JSON result its ``response_model`` forbids becomes a
    500 listing what is wrong, default off),
    ``log_level`` (``"debug"``, ``"info"`` (default), ``"warn"``, ``"error"``, ``"off"``: the core's records
    below it are never sent to ``logging``), ``timeout_ms`` (handler time limit → 504),
    ``max_header_bytes`` (→ 431), ``shutdown_timeout_ms`` (drain deadline, default 10 s).
    Connection limits (defaults in the README's table): ``header_read_timeout_ms``,
    ``body_read_timeout_ms``, ``min_body_rate`` (bytes/s), ``keep_alive_timeout_ms``,
    ``send_timeout_ms``, ``max_connections``, ``max_queued_requests`` (→ 503), ``http2_max_concurrent_streams``,
    ``http2_keep_alive_interval_ms``, ``sse_keep_alive_ms`` (a comment on a quiet event stream,
    default 15 s); WebSockets: ``ws_max_message_bytes`` (→ close 1009, default 16 MiB),
    ``ws_send_buffer_bytes`` (unread by a client → close 1008, default 1 MiB),
    ``ws_idle_timeout_ms`` (silent → ping, then close 1001; default 60 s); input limits: ``max_json_depth``, ``max_multipart_parts``,
    ``max_part_header_bytes``, ``max_filename_bytes``. The OpenAPI document: ``title``,
    ``version``, ``description``, ``servers``, ``openapi_tags``, and ``openapi_url`` (default
    ``/openapi.json``; ``None`` serves none). The docs page (Swagger UI, served from the core's
    own copy, no CDN): ``docs_url`` (default ``/docs``; ``None`` serves none, nor does an
    ``openapi_url`` of ``None``).
    """

    def __init__(
        self,
        *,
        body_limit: Optional[int] = None,
        cors: Optional[dict] = None,
        compression: Optional[dict] = None,
        request_id: Optional[bool] = None,
        access_log: Optional[bool] = None,
        validate_responses: Optional[bool] = None,
        log_level: Optional[str] = None,
        timeout_ms: Optional[int] = None,
        max_header_bytes: Optional[int] = None,
        shutdown_timeout_ms: Optional[int] = None,
        header_read_timeout_ms: Optional[int] = None,
        body_read_timeout_ms: Optional[int] = None,
        min_body_rate: Optional[int] = None,
        keep_alive_timeout_ms: Optional[int] = None,
        send_timeout_ms: Optional[int] = None,
        max_connections: Optional[int] = None,
        max_queued_requests: Optional[int] = None,
        http2_max_concurrent_streams: Optional[int] = None,
        http2_keep_alive_interval_ms: Optional[int] = None,
        sse_keep_alive_ms: Optional[int] = None,
        ws_max_message_bytes: Optional[int] = None,
        ws_send_buffer_bytes: Optional[int] = None,
        ws_idle_timeout_ms: Optional[int] = None,
        max_json_depth: Optional[int] = None,
        max_multipart_parts: Optional[int] = None,
        max_part_header_bytes: Optional[int] = None,
        max_filename_bytes: Optional[int] = None,
        title: Optional[str] = None,
        version: Optional[str] = None,
        description: Optional[str] = None,
        servers: Optional[list[dict[str, Any]]] = None,
        openapi_tags: Optional[list[dict[str, Any]]] = None,
        openapi_url: Optional[str] = _UNSET,
        docs_url: Optional[str] = _UNSET,
    ) -> None:
        settings = {
            "body_limit": body_limit,
            "cors": cors,
            "compression": compression,
            "request_id": request_id,
            "access_log": access_log,
            "validate_responses": validate_responses,
            "log_level": log_level,
            "timeout_ms": timeout_ms,
            "max_header_bytes": max_header_bytes,
            "shutdown_timeout_ms": shutdown_timeout_ms,
            "header_read_timeout_ms": header_read_timeout_ms,
            "body_read_timeout_ms": body_read_timeout_ms,
            "min_body_rate": min_body_rate,
            "keep_alive_timeout_ms": keep_alive_timeout_ms,
            "send_timeout_ms": send_timeout_ms,
            "max_connections": max_connections,
            "max_queued_requests": max_queued_requests,
            "http2_max_concurrent_streams": http2_max_concurrent_streams,
            "http2_keep_alive_interval_ms": http2_keep_alive_interval_ms,
            "sse_keep_alive_ms": sse_keep_alive_ms,
            "ws_max_message_bytes": ws_max_message_bytes,
            "ws_send_buffer_bytes": ws_send_buffer_bytes,
            "ws_idle_timeout_ms": ws_idle_timeout_ms,
            "max_json_depth": max_json_depth,
            "max_multipart_parts": max_multipart_parts,
            "max_part_header_bytes": max_part_header_bytes,
            "max_filename_bytes": max_filename_bytes,
            "title": title,
            "version": version,
            "description": description,
            "servers": servers,
            "openapi_tags": openapi_tags,
        }
        self.config = {k: v for k, v in settings.items() if v is not None}
        # None switches the document or the page off, as in FastAPI: sent, unlike other Nones.
        for name, url in (("openapi_url", openapi_url), ("docs_url", docs_url)):
            if url is not _UNSET:
                self.config[name] = url
        # Routes go to the core as they are declared, so a bad one fails at its decorator.
        self._native_app = _ferrule.NativeApp(json.dumps(self.config), Response, HTTPException)
        self._server: Optional[_ferrule.ServerHandle] = None

    # -- declaring routes -------------------------------------------------------------------

    def route(
        self,
        path: str,
        methods: Iterable[str] = ("GET",),
        *,
        status_code: int = 200,
        blocking: bool = False,
        response_model: Any = FROM_ANNOTATION,
        **options: Any,
    ) -> Callable[[Handler], Handler]:
        """Declares ``handler`` for ``path`` and ``methods``; arguments are read from the
        handler's signature (see ``ferrule.params``). Options: ``status_code`` of plain return
        values; ``response_model`` (default: the return annotation; ``None``: none), the type
        JSON results with ``status_code`` are written as — fields it does not declare are left
        out, as in FastAPI — and documented as; ``blocking=True`` for a ``def`` handler that waits on I/O (it then runs in a
        thread pool instead of on the event loop's thread, see the README); per-route ``cors``,
        ``compression``, ``body_limit``, ``timeout_ms``; for the OpenAPI document ``summary``,
        ``description`` (default: the docstring), ``operation_id``, ``tags``, ``deprecated``,
        ``include_in_schema``."""
        for name in options:
            if name not in _ROUTE_OPTIONS:
                raise TypeError(_ferrule.unknown_option("route option", name, [*_ROUTE_OPTIONS, "status_code", "blocking", "response_model"]))

        def register(handler: Handler) -> Handler:
            analysis = analyse(handler, path, request_type=Request, response_type=Response)
            called: Callable[..., Any] = handler
            answers = response_schema(handler, response_model)
            responses = {"responses": {str(status_code): {"schema": answers}}} if answers is not None else {}
            if analysis.response_param is not None:
                called = _with_response(handler, analysis.response_param, status_code)
            for method in methods:
                method = method.upper()
                if method not in _METHODS:
                    raise ValueError(f"{method} is not a supported method ({', '.join(_METHODS)})")
                spec = {"method": method, "path": analysis.path, **analysis.spec, **_documented(handler), **responses, **options}
                self._declare(_Route(spec, called, analysis.arguments, status_code, blocking))
            return handler

        return register

    def get(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self.route(path, ("GET",), **options)

    def post(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self.route(path, ("POST",), **options)

    def put(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self.route(path, ("PUT",), **options)

    def patch(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self.route(path, ("PATCH",), **options)

    def delete(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self.route(path, ("DELETE",), **options)

    def head(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self.route(path, ("HEAD",), **options)

    def options(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self.route(path, ("OPTIONS",), **options)

    def websocket(
        self,
        path: str,
        *,
        subprotocols: Iterable[str] = (),
        max_message_bytes: Optional[int] = None,
        **options: Any,
    ) -> Callable[[Handler], Handler]:
        """Declares an ``async def`` WebSocket handler for ``path``: it takes a ``WebSocket``
        and any path, query, header and cookie parameters, which the core validates before the
        upgrade (a bad request gets its problem response and no connection). ``subprotocols``:
        the route's, preferred first; ``max_message_bytes`` replaces the app's
        ``ws_max_message_bytes``. Options: ``cors``."""
        for name in options:
            if name != "cors":
                raise TypeError(_ferrule.unknown_option("websocket option", name, ["cors", "subprotocols", "max_message_bytes"]))

        def register(handler: Handler) -> Handler:
            if not inspect.iscoroutinefunction(handler):
                raise TypeError(f"{getattr(handler, '__qualname__', handler)!r}: a WebSocket handler is an async def")
            analysis = analyse(handler, path, request_type=Request, socket_type=WebSocket)
            if not any(argument.source == "socket" for argument in analysis.arguments):
                raise TypeError(f"{handler.__qualname__}: a WebSocket handler takes a parameter annotated WebSocket")
            if "body" in analysis.spec:
                raise TypeError(f"{handler.__qualname__}: a WebSocket handler takes no body")
            socket: dict[str, Any] = {"subprotocols": list(subprotocols)}
            if max_message_bytes is not None:
                socket["max_message_bytes"] = max_message_bytes
            spec = {"method": "GET", "path": analysis.path, **analysis.spec, **options, "websocket": socket}
            self._declare(_Route(spec, handler, analysis.arguments, 200, False))
            return handler

        return register

    def add_route(self, spec: dict, handler: Callable[[Request], Any], *, status_code: int = 200, blocking: bool = False) -> None:
        """Declares a route from an explicit core ``RouteSpec`` (method, path, and
        ``query``/``headers``/``cookies``/``path_params`` lists of ``{"name", "schema",
        "required"}``, ``body`` ``{"kind", "schema"}``, …); ``handler`` receives the ``Request``
        (and, for a ``websocket`` route, the ``WebSocket`` after it).
        For routes described as data, such as the shared fixture corpus."""
        arguments = [Argument("request", True, "request", "", None, None)]
        if spec.get("websocket") is not None:
            # A WebSocket route's handler is an async def taking (request, websocket).
            if not inspect.iscoroutinefunction(handler):
                raise TypeError(f"{getattr(handler, '__qualname__', handler)!r}: a WebSocket handler is an async def")
            arguments.append(Argument("websocket", True, "socket", "", None, None))
        self._declare(_Route(dict(spec), handler, arguments, status_code, blocking))

    # -- serving ----------------------------------------------------------------------------

    def openapi(self) -> dict[str, Any]:
        """The app's OpenAPI 3.1 document, as served at ``openapi_url`` (``/openapi.json``):
        every route declared so far. ``python -m ferrule openapi module:app`` prints it."""
        document: dict[str, Any] = json.loads(self._native_app.openapi())
        return document

    def _declare(self, route: _Route) -> None:
        self._native_app.add_route(json.dumps(route.spec), route.handler, route.arguments, route.is_async, route.status_code)

    async def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        fd: Optional[int] = None,
        threads: Optional[int] = None,
        on_ready: Optional[Callable[[int], Any]] = None,
    ) -> None:
        """Serves on the running event loop until ``shutdown()`` (or cancellation), then drains
        in-flight requests. ``fd``: an already listening socket (worker processes);
        ``threads``: runtime threads (default: the CPUs this process may use);
        ``on_ready(port)`` is called once listening."""
        loop = asyncio.get_running_loop()
        stopped: asyncio.Future[None] = loop.create_future()
        logs = self._native_app.route_logs()
        loop.add_reader(logs.doorbell, logs.drain)
        try:
            server = self._native_app.start(loop, stopped, host=host, port=port, fd=fd, threads=threads)
        except BaseException:
            loop.remove_reader(logs.doorbell)
            raise
        self._server = server
        loop.add_reader(server.doorbell, server.dispatch)
        try:
            if on_ready is not None:
                on_ready(server.port)
            await asyncio.shield(stopped)
        except RuntimeError as e:
            # The only exception `stopped` carries: the drain deadline cut requests off.
            raise DrainTimeout(str(e)) from None
        except asyncio.CancelledError:
            server.stop()
            await stopped
            raise
        finally:
            loop.remove_reader(server.doorbell)
            loop.remove_reader(logs.doorbell)
            logs.drain()  # what the server said on its way out (a drain that cut requests off)
            self._server = None

    def _announce(self) -> None:
        if self._server is not None:
            self._server.announce()

    def shutdown(self) -> None:
        """Stops a running ``serve()``: no new connections, in-flight requests finish."""
        if self._server is not None:
            self._server.stop()

    @property
    def port(self) -> Optional[int]:
        """The port being served, while serving."""
        return self._server.port if self._server is not None else None

    def run(self, host: str = "127.0.0.1", port: int = 8000, *, workers: int = 1, threads: Optional[int] = None) -> None:
        """Serves until SIGINT or SIGTERM, then drains and returns. ``workers > 1`` forks that
        many processes sharing the port. Uses uvloop when it is installed."""
        from .server import run

        run(self, host=host, port=port, workers=workers, threads=threads)


