"""``App``: routes declared with decorators, served by the Rust core."""

from __future__ import annotations

import asyncio
import contextlib
import dis
import functools
import inspect
import json
import os
import types
import urllib.parse
import weakref
from typing import Any, AsyncContextManager, Callable, Iterable, Mapping, Optional, Sequence, TypeVar, Union

from . import _ferrule, _tasks
from .dependencies import DependencyOverrides
from .hooks import PHASES, Registry, RequestValidationError
from .middleware import HookMiddleware, core_middleware
from .request import NoMatchFound, Request, URLPath
from .response_model import FROM_ANNOTATION, as_response_class, computing, documented_responses, is_json_class, remaking, reported_by_core, response_schema
from .responses import HTTPException, Response
from .signature import Argument, _name, analyse, body_title, fill_template, is_async
from .websocket import WebSocket

__all__ = ["App", "Router", "StartupFailed"]

Handler = TypeVar("Handler", bound=Callable[..., Any])
Hook = TypeVar("Hook", bound=Callable[..., Any])

_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
_ROUTE_OPTIONS = (
    "dependencies",
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
    "responses",
    # OpenAPI requirements naming App(security_schemes=...)'s schemes; in place of those the
    # route's security dependencies would give.
    "security",
    "response_model_exclude_unset",
    "response_model_exclude_none",
    "response_model_exclude_defaults",
    "response_model_by_alias",
    "response_description",
)
_UNSET: Any = object()


def _name_of(handler: Any) -> str:
    """A route's default name, as FastAPI gives it: the function's, else its class's (a
    ``functools.partial``, a callable object)."""
    return getattr(handler, "__name__", None) or type(handler).__name__


class _Route:
    __slots__ = ("spec", "handler", "arguments", "is_async", "cannot_wait", "status_code", "chained", "rebuild", "takes_default_class", "name", "remake")

    def __init__(self, spec: dict, handler: Callable[..., Any], arguments: list[Argument], status_code: int, blocking: bool, chained: bool = False) -> None:
        self.spec = spec
        self.arguments = arguments
        self.status_code = status_code
        # Its requests run through `ferrule.hooks` (its dependencies' teardowns run there).
        self.chained = chained
        if blocking:
            if is_async(handler):
                raise TypeError(f"{_name(handler)}: blocking=True is for def handlers; async handlers never block the loop")
            handler = _in_thread_pool(handler)
        self.handler = handler
        self.is_async = is_async(handler)
        self.cannot_wait = self.is_async and _cannot_wait(handler)
        # The same route with more `Depends` run first (those of `include_router` and the app),
        # for a route a router declared; None for one that cannot take more.
        self.rebuild: Optional[Callable[..., "_Route"]] = None
        # What `url_path_for` knows it by: FastAPI's `name=`, else the handler's name.
        self.name: str = _name_of(handler)
        # Declared with neither its own `response_class` nor its router's default: the app's
        # `default_response_class` (or an including router's) is its.
        self.takes_default_class = False
        # Makes a result into its response model, for one the JSON writer finds holding a
        # scalar the model does not declare (`response_model.remaking`).
        self.remake: Optional[Callable[[Any], Any]] = None


def _cannot_wait(handler: Callable[..., Any]) -> bool:
    """An ``async def`` whose own code never yields (no ``await``, ``async for`` or ``async with``):
    its coroutine returns or raises in its first step, so it runs at once inside its route's
    stand-in task instead of a task of its own (``src/inline_run.rs``). Only a plain function
    is read; a wrapper or a callable object is left to a task."""
    # Python 3.12's `inspect.markcoroutinefunction` makes a `def` pass `iscoroutinefunction`.
    if not isinstance(handler, types.FunctionType) or not handler.__code__.co_flags & inspect.CO_COROUTINE:
        return False
    # `await`, `async for` and `async with` each compile to YIELD_VALUE (3.11+), YIELD_FROM on 3.10.
    return not any(op.opname in ("YIELD_VALUE", "YIELD_FROM") for op in dis.get_instructions(handler.__code__))


def _resolved(handler: Callable[..., Any], analysis: Any, route_dependencies: Sequence[Any], status_code: int) -> tuple[Callable[..., Any], list[Argument]]:
    """``handler`` with its ``Depends`` (and the route's ``dependencies=``) resolved per request
    in Python: it then takes the whole ``Request``. Their inputs joined the route's spec. When
    the handler or a dependency takes a ``Response``, they share one per request, applied to a
    plain result as ``_with_response`` applies it (FastAPI's sub-response)."""
    from .dependencies import with_dependencies, with_shared_response
    from .signature import takes_response

    extra, analyses = _route_resolvers(handler, analysis, route_dependencies)
    run, is_async = with_dependencies(handler, analysis, extra)
    if any(takes_response(each) for each in [analysis, *analyses]):
        run = with_shared_response(run, is_async, status_code, functools.partial(_merged, declared=status_code))
    functools.update_wrapper(run, handler)
    return run, [Argument("request", True, "request", "", None, None)]


def _route_resolvers(handler: Callable[..., Any], analysis: Any, dependencies: Sequence[Any], socket_type: Optional[type] = None) -> tuple[list[Any], list[Any]]:
    """The resolvers of a route's ``dependencies=`` (the app's, a router's, its own), run
    before its handler, values unused, and their analyses; their inputs join the route's spec."""
    from .dependencies import Resolver
    from .params import Dependency
    from .signature import analyse_dependency, merge_spec

    resolvers, analyses = [], []
    for dependency in dependencies:
        if not isinstance(dependency, Dependency):
            raise TypeError(f"dependencies= takes Depends(...) markers, not {dependency!r}")
        sub = analyse_dependency(dependency, analysis.path, request_type=Request, response_type=Response, socket_type=socket_type)
        merge_spec(analysis.spec, sub.spec, _name(handler))
        resolvers.append(Resolver(dependency.dependency, sub, dependency))
        analyses.append(sub)
    return resolvers, analyses


def _documented(handler: Callable[..., Any]) -> dict[str, Any]:
    """The operation's description from the handler's docstring, as FastAPI takes it (a
    ``description=`` option still wins)."""
    doc = inspect.getdoc(handler)
    return {"description": doc} if doc else {}


def _in_thread_pool(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Runs a def handler on Ferrule's pool of threads (``ferrule._pool``: up to 40, as
    Starlette's, where asyncio's default executor has cores + 4), in the request's context."""
    from . import _pool

    @functools.wraps(handler)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return await _pool.THREADS.run(functools.partial(handler, *args, **kwargs))

    return run


def _with_response(handler: Callable[..., Any], name: str, status_code: int) -> Callable[..., Any]:
    """Gives ``handler`` a fresh ``Response`` as its ``name`` parameter, and applies its status,
    headers and cookies to a plain return value (a returned ``Response`` is sent as it is)."""

    if is_async(handler):

        @functools.wraps(handler)
        async def run_async(**kwargs: Any) -> Any:
            response = Response(status_code)
            return _merged(response, await handler(**kwargs, **{name: response}), status_code)

        return run_async

    @functools.wraps(handler)
    def run(**kwargs: Any) -> Any:
        response = Response(status_code)
        return _merged(response, handler(**kwargs, **{name: response}), status_code)

    return run


def _merged(response: Response, result: Any, declared: Optional[int] = None) -> Any:
    """A plain ``result`` with the status, headers and cookies set on ``response``; a returned
    ``Response`` is sent as it is. The result is written with the route's response schema (the
    one of its ``declared`` status) whatever status the handler set, as FastAPI applies
    ``response_model``."""
    if isinstance(result, Response):
        return result
    merged = _Merged(response.status, response._headers, result, media_type=response.media_type)
    merged._answers_as = declared
    return merged


class _Merged(Response):
    """A plain result with a ``response: Response`` parameter's status and headers."""

    __slots__ = ("_answers_as",)


class StartupFailed(RuntimeError):
    """A startup callback or the ``lifespan``'s start raised: the app does not serve.
    ``python -m ferrule`` and ``app.run()`` print one line naming it and exit with status 3."""


class _Routes:
    """Declaring routes and hooks: what an ``App`` and a ``Router`` share."""

    _tags: list[str] = []
    # `Depends(...)` run before each route's handler (FastAPI's `dependencies=`), values unused.
    _dependencies: list[Any] = []
    # FastAPI's `default_response_class`: what a plain result of a route without its own
    # `response_class` is sent as; None leaves it to the including app (JSON at last).
    _default_response_class: Optional[type] = None
    # FastAPI's `responses=` of an app or a router, by status as the core keys them: documented
    # for each route it declares, under the route's own.
    _responses: dict[str, dict] = {}
    # FastAPI's `APIRouter(deprecated=True)`: every route it declares is marked so.
    _deprecated: bool = False

    def _declare(self, route: "_Route") -> None:
        raise NotImplementedError

    def _hook(self, phase: str, func: Callable[..., Any]) -> None:
        raise NotImplementedError

    # -- declaring routes -------------------------------------------------------------------

    def route(
        self,
        path: str,
        methods: Iterable[str] = ("GET",),
        *,
        status_code: Optional[int] = None,
        blocking: bool = False,
        response_model: Any = FROM_ANNOTATION,
        response_class: Optional[type] = None,
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
        ``include_in_schema``, ``responses`` (FastAPI's: more responses for the document only,
        ``{404: {"model": Message, "description": "..."}}``). ``response_class`` (FastAPI's): a result that is not a
        ``Response`` is sent as one of this class (``HTMLResponse``: a ``str`` is the page;
        ``RedirectResponse``: the URL; ``PlainTextResponse``, ``FileResponse``,
        ``StreamingResponse``), with ``status_code`` when one is given; JSON classes keep the
        default (the result as JSON, through ``response_model``)."""
        route_name: Optional[str] = options.pop("name", None)
        for name in options:
            if name not in _ROUTE_OPTIONS:
                raise TypeError(_ferrule.unknown_option("route option", name, [*_ROUTE_OPTIONS, "name", "status_code", "blocking", "response_model", "response_class"]))
        explicit_status = status_code
        status_code = 200 if status_code is None else status_code
        own_class = response_class or self._default_response_class

        route_dependencies = [*self._dependencies, *options.pop("dependencies", [])]
        exclude = {flag: bool(options.pop(f"response_model_exclude_{flag}", False)) for flag in ("unset", "none", "defaults")}
        # FastAPI's default; models are always sent by alias here.
        if not options.pop("response_model_by_alias", True):
            raise ValueError("response_model_by_alias=False is not supported: responses are sent by alias (FastAPI's default); give the fields no alias")
        response_description = options.pop("response_description", None)
        tags = [*self._tags, *options.pop("tags", [])] if self._tags or "tags" in options else None
        documented = {**self._responses, **documented_responses(options.pop("responses", None), path)}
        if documented:
            options["documented_responses"] = documented
        if self._deprecated:
            options["deprecated"] = True

        def register(handler: Handler) -> Handler:
            routes = built(handler, [])
            for index, route in enumerate(routes):
                route.rebuild = functools.partial(lambda extra, inherited=None, at=0: built(handler, extra, inherited)[at], at=index)
                route.takes_default_class = own_class is None
                self._declare(route)
            return handler

        def built(handler: Handler, extra: list[Any], inherited: Optional[type] = None) -> list[_Route]:
            dependencies = [*extra, *route_dependencies]
            analysis = analyse(handler, path, request_type=Request, response_type=Response)
            sent_as = own_class or inherited
            answered = handler if sent_as is None or is_json_class(sent_as) else as_response_class(handler, sent_as, explicit_status)
            called: Callable[..., Any] = answered
            # A page, a redirect or a file is no JSON document: nothing to declare or filter.
            answers = response_schema(handler, response_model) if answered is handler else None
            # What the exclude options leave out must not be filled back from the schema's
            # defaults; what they keep the result has already (dumped from its model).
            if any(exclude.values()) and answers is not None:
                from .response_model import without_defaults

                answers = without_defaults(answers)
            # The result itself is made into its model (and trimmed) before a `response:
            # Response` parameter's headers or a dependency's shared response wrap it (found by
            # a probe: wrapped first, a SecretStr went out in clear).
            answered = computing(answered, handler, response_model, answers)
            remake = remaking(handler, response_model, answers)
            if any(exclude.values()):
                from .response_model import excluding

                answered = excluding(answered, handler, response_model, **exclude)
            called = answered
            described = {"description": response_description} if response_description is not None else {}
            responses = {"responses": {str(status_code): {"schema": answers, **described}}} if answers is not None else {}
            arguments, chained, in_pool = analysis.arguments, False, blocking
            if analysis.dependencies or dependencies:
                called, arguments = _resolved(answered, analysis, dependencies, status_code)
                chained = True
                if blocking and inspect.iscoroutinefunction(called) and not is_async(handler):
                    # An async dependency (a BackgroundTasks parameter's too) makes the route
                    # async: the def handler itself then runs in the thread pool.
                    analysis = analyse(handler, path, request_type=Request, response_type=Response)
                    called, arguments = _resolved(_in_thread_pool(answered), analysis, dependencies, status_code)
                    in_pool = False
            elif analysis.response_param is not None:
                called = _with_response(answered, analysis.response_param, status_code)
            routes = []
            for method in methods:
                method = method.upper()
                if method not in _METHODS:
                    raise ValueError(f"{method} is not a supported method ({', '.join(_METHODS)})")
                spec = {"method": method, "path": analysis.path, **analysis.spec, **_documented(handler), **responses, **options}
                if analysis.embedded_body:
                    body = spec["body"]
                    spec["body"] = {**body, "schema": {"title": body_title(handler, analysis.path, method), **body["schema"]}}
                if tags is not None:
                    spec["tags"] = tags
                route = _Route(spec, called, arguments, status_code, in_pool, chained)
                route.name = route_name or _name_of(handler)
                route.remake = remake
                routes.append(route)
            return routes

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
        upgrade (a bad request gets its problem response and no connection); the
        ``on_request`` and ``pre_handler`` hooks run on the handshake, and one that answers
        refuses the upgrade (``@app.middleware("http")`` does not run); the ``request.state``
        they set is the handler's ``ws.state``. ``subprotocols``:
        the route's, preferred first; ``max_message_bytes`` replaces the app's
        ``ws_max_message_bytes``. Options: ``cors``."""
        route_name: Optional[str] = options.pop("name", None)
        for name in options:
            if name != "cors":
                raise TypeError(_ferrule.unknown_option("websocket option", name, ["cors", "name", "subprotocols", "max_message_bytes"]))

        # The app's (or router's) `dependencies=` guard its WebSockets too, as FastAPI's do.
        route_dependencies = list(self._dependencies)

        def register(handler: Handler) -> Handler:
            if not is_async(handler):
                raise TypeError(f"{_name(handler)!r}: a WebSocket handler is an async def")
            route = built(handler, [])
            route.rebuild = lambda extra, inherited=None: built(handler, extra)
            self._declare(route)
            return handler

        def built(handler: Handler, extra: list[Any]) -> _Route:
            from .dependencies import for_socket

            analysis = analyse(handler, path, request_type=Request, socket_type=WebSocket)
            if not any(argument.source == "socket" for argument in analysis.arguments):
                raise TypeError(f"{_name(handler)}: a WebSocket handler takes a parameter annotated WebSocket")
            if "body" in analysis.spec:
                raise TypeError(f"{_name(handler)}: a WebSocket handler takes no body")
            called, arguments = handler, analysis.arguments
            dependencies = [*extra, *route_dependencies]
            if analysis.dependencies or dependencies:
                resolvers, _ = _route_resolvers(handler, analysis, dependencies, WebSocket)
                called = functools.update_wrapper(for_socket(handler, analysis, resolvers), handler)
                arguments = [Argument("request", True, "request", "", None, None), Argument("websocket", True, "socket", "", None, None)]
            if "body" in analysis.spec:
                raise TypeError(f"{_name(handler)}: a WebSocket route's dependencies take no body")
            socket: dict[str, Any] = {"subprotocols": list(subprotocols)}
            if max_message_bytes is not None:
                socket["max_message_bytes"] = max_message_bytes
            spec = {"method": "GET", "path": analysis.path, **analysis.spec, **options, "websocket": socket}
            route = _Route(spec, called, arguments, 200, False)
            route.name = route_name or _name_of(handler)
            return route

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
            if not is_async(handler):
                raise TypeError(f"{_name(handler)!r}: a WebSocket handler is an async def")
            arguments.append(Argument("websocket", True, "socket", "", None, None))
        self._declare(_Route(dict(spec), handler, arguments, status_code, blocking))

    # -- hooks --------------------------------------------------------------------------------

    def add_hook(self, phase: str, func: Callable[..., Any]) -> None:
        """Runs ``func`` at ``phase`` for this app's (or router's) requests, in Fastify's order:
        ``on_request(request)`` first — for every request, those the core refused too —
        ``pre_handler(request)`` after validation, ``on_send(request, response)`` before the
        response is written (change ``response`` in place, or return another), and
        ``on_error(request, exc)`` when a hook or the handler raises. A hook returning a value
        (a ``Response``, or anything a handler may return) or raising ``HTTPException``
        answers the request itself; ``None`` lets it go on. ``def`` or ``async def``."""
        if phase not in PHASES:
            raise ValueError(_ferrule.unknown_option("hook", phase, list(PHASES)))
        self._hook(phase, func)

    def on_request(self, func: Hook) -> Hook:
        self.add_hook("on_request", func)
        return func

    def pre_handler(self, func: Hook) -> Hook:
        self.add_hook("pre_handler", func)
        return func

    def on_send(self, func: Hook) -> Hook:
        self.add_hook("on_send", func)
        return func

    def on_error(self, func: Hook) -> Hook:
        self.add_hook("on_error", func)
        return func


class Router(_Routes):
    """Routes and hooks declared apart from the app (FastAPI's ``APIRouter``), served under
    ``prefix`` once ``app.include_router(router)`` takes them: its hooks run only for its own
    routes (and for requests no route takes under its prefix), after the app's. ``tags`` are
    added to each route's."""

    def __init__(
        self,
        *,
        prefix: str = "",
        tags: Optional[Sequence[str]] = None,
        dependencies: Optional[Sequence[Any]] = None,
        default_response_class: Optional[type] = None,
        responses: Optional[dict[Any, dict[str, Any]]] = None,
        deprecated: Optional[bool] = None,
    ) -> None:
        self.prefix = prefix
        self._tags = list(tags or [])
        self._dependencies = list(dependencies or [])
        self._default_response_class = default_response_class
        self._responses = documented_responses(responses, f"APIRouter(prefix={prefix!r})")
        self._deprecated = bool(deprecated)
        self._declared: list[tuple[str, Any]] = []

    def _declare(self, route: "_Route") -> None:
        self._declared.append(("route", route))

    def _hook(self, phase: str, func: Callable[..., Any]) -> None:
        self._declared.append(("hook", (phase, func)))

    def include_router(
        self,
        router: "Router",
        *,
        prefix: str = "",
        tags: Optional[Sequence[str]] = None,
        dependencies: Optional[Sequence[Any]] = None,
        default_response_class: Optional[type] = None,
        responses: Optional[dict[Any, dict[str, Any]]] = None,
        deprecated: Optional[bool] = None,
    ) -> None:
        """Takes ``router``'s routes and hooks into this one, under ``prefix``; this router's own
        ``dependencies`` and ``tags``, then the ones given here, come before each of its routes'
        own (FastAPI's order); ``default_response_class`` is for its routes that name none;
        ``responses`` are documented for each of them under their own, and ``deprecated=True``
        marks them all (so does this router's own)."""
        # This router's own dependencies guard the routes it takes in as they guard its own: an
        # `APIRouter(dependencies=[Depends(require_admin)])` including a users router left the
        # users' routes unguarded (found by a probe against FastAPI, which runs them).
        documented = {**self._responses, **documented_responses(responses, f"include_router(prefix={prefix!r})")}
        self._declared.append(("router", (router, prefix, [*self._tags, *(tags or [])], [*self._dependencies, *(dependencies or [])], default_response_class, documented, self._deprecated or bool(deprecated))))


APIRouter = Router


class State(types.SimpleNamespace):
    """``app.state``, as Starlette's: attributes set and read freely (``app.state.db = pool``),
    and by item too (``app.state["db"]``)."""

    def __getitem__(self, name: str) -> Any:
        return self.__dict__[name]

    def __setitem__(self, name: str, value: Any) -> None:
        self.__dict__[name] = value

    def __delitem__(self, name: str) -> None:
        del self.__dict__[name]

    def __contains__(self, name: object) -> bool:
        return name in self.__dict__


class DrainTimeout(RuntimeError):
    """``serve()`` stopped, but requests were still running at ``shutdown_timeout_ms`` and were
    cut off. The core has printed one line saying so; ``run()`` exits with status 1."""


def _forwarded_allow_ips(given: Optional[Union[str, Sequence[str]]]) -> list[str]:
    """``forwarded_allow_ips`` as the core's ``trusted_proxies``: uvicorn's default. The core
    reads its comma-separated spelling and names an entry that is no address."""
    if given is None:
        given = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
    if isinstance(given, str):
        return [given]
    if not isinstance(given, (list, tuple, set, frozenset)) or not all(isinstance(entry, str) for entry in given):
        raise TypeError(f"forwarded_allow_ips is a list of addresses or a comma-separated string, not {given!r}")
    return list(given)


class App(_Routes):
    """A Ferrule application.

    Settings (all optional) are the core's: ``body_limit`` (bytes, default 2 MiB), ``cors``
    (``{"allow_origins": [...], "allow_methods": [...], "allow_headers": [...],
    "expose_headers": [...], "allow_credentials": bool, "max_age_secs": int, "allow_origin_regex":
    str, "allow_private_network": bool}``), ``compression``
    (``{"min_size": 500, "gzip": True, "br": True, "zstd": True, "level": 6}``), ``request_id`` (generate and
    echo ``X-Request-ID``, default on), ``access_log`` (a record per request to the ``ferrule.access`` logger, default off),
    ``validate_responses`` (development: a JSON result its ``response_model`` forbids becomes a
    500 listing what is wrong, default off),
    ``log_level`` (``"debug"``, ``"info"`` (default), ``"warn"``, ``"error"``, ``"off"``: the core's records
    below it are never sent to ``logging``), ``timeout_ms`` (handler time limit → 504),
    ``max_header_bytes`` (→ 431), ``shutdown_timeout_ms`` (drain deadline, default 10 s).
    ``forwarded_allow_ips`` (uvicorn's): the proxies whose ``X-Forwarded-For``, ``-Proto`` and
    ``-Host`` are believed for ``request.client`` and ``request.url``, as a list or a
    comma-separated string of addresses, networks (``10.0.0.0/8``) or ``*``; by default the
    ``FORWARDED_ALLOW_IPS`` environment variable, else ``127.0.0.1``, as in uvicorn.
    Connection limits (defaults in the README's table): ``header_read_timeout_ms``,
    ``body_read_timeout_ms``, ``min_body_rate`` (bytes/s), ``keep_alive_timeout_ms``,
    ``send_timeout_ms``, ``max_connections``, ``max_queued_requests`` (→ 503), ``http2_max_concurrent_streams``,
    ``http2_keep_alive_interval_ms``, ``sse_keep_alive_ms`` (a comment on a quiet event stream,
    default 15 s); WebSockets: ``ws_max_message_bytes`` (→ close 1009, default 16 MiB),
    ``ws_send_buffer_bytes`` (unread by a client → close 1008, default 1 MiB),
    ``ws_idle_timeout_ms`` (silent → ping, then close 1001; default 60 s); input limits: ``max_json_depth``, ``max_multipart_parts``,
    ``max_part_header_bytes``, ``max_filename_bytes``; ``refuse_prototype_keys`` (a JSON body
    with a ``__proto__`` key is a 422: Node's default, for bodies a JavaScript service may
    pass on); ``redirect_slashes`` (default ``True``, as in FastAPI: a path no route takes
    whose twin with the trailing slash added or taken away is routed is answered 307 to that
    twin; ``False`` answers 404, as Fastify and Sinatra do). The OpenAPI document: ``title``,
    ``version``, ``description``, ``servers``, ``openapi_tags``, ``security_schemes`` (schemes a
    route's ``security=[{"apiKey": []}]`` names; ``ferrule.security``'s dependencies bring their own), and ``openapi_url`` (default
    ``/openapi.json``; ``None`` serves none). The docs page (Swagger UI, served from the core's
    own copy, no CDN): ``docs_url`` (default ``/docs``; ``None`` serves none, nor does an
    ``openapi_url`` of ``None``). Prometheus metrics: ``metrics_url`` (``"/metrics"``; none
    by default).

    Life cycle (run once per worker process, as FastAPI's): ``lifespan``, an async context
    manager factory taking the app (its code before ``yield`` runs before serving, after it
    once the drain is over), and ``on_startup`` / ``on_shutdown`` lists of callables (or
    ``@app.on_event("startup")``). A startup that raises stops the app before it serves
    (``StartupFailed``). ``middleware``: Starlette's list of ``Middleware(CORSMiddleware, ...)``
    or ``Middleware(GZipMiddleware, ...)`` (see ``add_middleware``). ``default_response_class``:
    FastAPI's, the ``response_class`` of the routes that name none (see ``route``).
    """

    def __init__(
        self,
        *,
        body_limit: Optional[int] = None,
        cors: Optional[dict] = None,
        compression: Optional[dict] = None,
        allowed_hosts: Optional[Sequence[str]] = None,
        www_redirect: Optional[bool] = None,
        forwarded_allow_ips: Optional[Union[str, Sequence[str]]] = None,
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
        refuse_prototype_keys: Optional[bool] = None,
        redirect_slashes: bool = True,
        max_multipart_parts: Optional[int] = None,
        max_part_header_bytes: Optional[int] = None,
        max_filename_bytes: Optional[int] = None,
        title: Optional[str] = None,
        version: Optional[str] = None,
        description: Optional[str] = None,
        servers: Optional[list[dict[str, Any]]] = None,
        openapi_tags: Optional[list[dict[str, Any]]] = None,
        security_schemes: Optional[dict[str, dict[str, Any]]] = None,
        openapi_url: Optional[str] = _UNSET,
        docs_url: Optional[str] = _UNSET,
        metrics_url: Optional[str] = None,
        lifespan: Optional[Callable[["App"], AsyncContextManager[Any]]] = None,
        on_startup: Optional[Sequence[Callable[[], Any]]] = None,
        on_shutdown: Optional[Sequence[Callable[[], Any]]] = None,
        dependencies: Optional[Sequence[Any]] = None,
        middleware: Optional[Sequence[Any]] = None,
        default_response_class: Optional[type] = None,
        responses: Optional[dict[Any, dict[str, Any]]] = None,
        deprecated: Optional[bool] = None,
    ) -> None:
        settings = {
            "body_limit": body_limit,
            "cors": cors,
            "compression": compression,
            "allowed_hosts": allowed_hosts,
            "www_redirect": www_redirect,
            "trusted_proxies": _forwarded_allow_ips(forwarded_allow_ips),
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
            "refuse_prototype_keys": refuse_prototype_keys,
            "redirect_slashes": redirect_slashes,
            "max_multipart_parts": max_multipart_parts,
            "max_part_header_bytes": max_part_header_bytes,
            "max_filename_bytes": max_filename_bytes,
            "title": title,
            "version": version,
            "description": description,
            "servers": servers,
            "openapi_tags": openapi_tags,
            "security_schemes": security_schemes,
            "metrics_url": metrics_url,
        }
        self.config = {k: v for k, v in settings.items() if v is not None}
        # None switches the document or the page off, as in FastAPI: sent, unlike other Nones.
        for name, url in (("openapi_url", openapi_url), ("docs_url", docs_url)):
            if url is not _UNSET:
                self.config[name] = url
        # Routes go to the core as they are declared, so a bad one fails at its decorator.
        # Weakly: the native app is the App's, and `request.app` must not keep it alive.
        self._native_app = _ferrule.NativeApp(json.dumps(self.config), Response, HTTPException, weakref.ref(self))
        # Each route's name and template, as served, in declared order (`url_path_for`); each
        # router group's prefix.
        self._named: list[tuple[str, str, str]] = []
        self._prefixes: dict[int, str] = {0: ""}
        self._lifespan_state: dict[str, Any] = {}
        self._server: Optional[_ferrule.ServerHandle] = None
        self._hooks = Registry()
        self._lifespan = lifespan
        self._on_startup: list[Callable[[], Any]] = list(on_startup or [])
        self._on_shutdown: list[Callable[[], Any]] = list(on_shutdown or [])
        self._running_lifespan: Optional[AsyncContextManager[Any]] = None
        # Starlette's `app.state`: what the lifespan opens (`app.state.pool = ...`), for handlers.
        self.state: Any = State()
        # FastAPI's `FastAPI(dependencies=[...])`: run before every route's own (a router's at
        # `include_router`), values unused.
        self._dependencies = list(dependencies or [])
        self._overrides = DependencyOverrides()
        # FastAPI's `FastAPI(default_response_class=HTMLResponse)`: for routes naming none.
        self._default_response_class = default_response_class
        # FastAPI's `FastAPI(responses=..., deprecated=True)`: for every route's document.
        self._responses = documented_responses(responses, "App")
        self._deprecated = bool(deprecated)
        # Starlette's `Starlette(middleware=[Middleware(CORSMiddleware, ...)])`.
        self._middleware: dict[str, str] = {}
        for entry in middleware or ():
            cls, args, options = entry
            self.add_middleware(cls, *args, **options)

    @property
    def dependency_overrides(self) -> dict[Any, Callable[..., Any]]:
        """FastAPI's ``app.dependency_overrides[get_db] = fake_db``: while it is there, every
        route (a router's too) calls the replacement in the dependency's place. Read per
        request, so tests set and clear it after the routes were declared."""
        return self._overrides

    @dependency_overrides.setter
    def dependency_overrides(self, value: Mapping[Any, Callable[..., Any]]) -> None:
        # `app.dependency_overrides = {}` resets it; the object the routes read stays the same.
        self._overrides.clear()
        self._overrides.update(value)

    # -- hooks, middleware, exception handlers, groups --------------------------------------

    def _declare(self, route: _Route, group: int = 0) -> None:
        remake = route.remake
        if remake is not None and self.config.get("validate_responses"):
            # What the model refuses is sent to the core's validator as it was, which names
            # every member it refuses (`validate_responses`) where pydantic's 500 says nothing.
            remake = reported_by_core(remake)
        self._native_app.add_route(json.dumps(route.spec), route.handler, route.arguments, route.is_async, route.status_code, group, route.chained, route.cannot_wait, remake)
        # Where the core serves it: under its routers' prefixes, a `/` at the prefix itself.
        prefix, path = self._prefixes.get(group, ""), route.spec.get("path", "")
        protocol = "websocket" if route.spec.get("websocket") is not None else "http"
        self._named.append((route.name, prefix if prefix and path in ("", "/") else prefix + path, protocol))

    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:
        """The path of the route called ``name`` (FastAPI's ``name=``, else its handler's name)
        with ``path_params`` filled in, as Starlette's ``app.url_path_for``: the first such
        route whose parameters are exactly those given. Each value is written as its type
        writes it and percent-encoded (a ``{rest:path}`` keeps its slashes); ``NoMatchFound``
        when no route fits."""
        for route_name, template, protocol in self._named:
            if route_name == name:
                filled = fill_template(template, path_params)
                if filled is not None:
                    return URLPath(filled, protocol)
        raise NoMatchFound(name, path_params)

    def _hook(self, phase: str, func: Callable[..., Any], group: int = 0) -> None:
        slot = self._hooks.add(phase, func)
        self._native_app.hook(group, phase, slot)

    def middleware(self, kind: str = "http") -> Callable[[Hook], Hook]:
        """Starlette's ``@app.middleware("http")``: ``async def mw(request, call_next)`` wraps
        every request (those no route takes too); ``await call_next(request)`` runs the rest —
        hooks, the handler, exception handlers — and returns its ``Response``, which the
        middleware may change or replace. The last declared runs outermost."""
        if kind != "http":
            raise ValueError(f'middleware kind {kind!r}: only "http" middleware exists')

        def register(func: Hook) -> Hook:
            if not is_async(func):
                raise TypeError(f"{_name(func)!r}: middleware is an async def (request, call_next)")
            slot = self._hooks.add("on_request", func, middleware=True)
            self._native_app.hook(0, "on_request", slot)
            return func

        return register

    def add_middleware(self, middleware_class: type, *args: Any, **options: Any) -> None:
        """Starlette's ``app.add_middleware(CORSMiddleware, allow_origins=[...])``, with
        ``ferrule.middleware.cors.CORSMiddleware``, ``ferrule.middleware.gzip.GZipMiddleware`` and
        ``ferrule.middleware.trustedhost.TrustedHostMiddleware``: their work is the core's
        (``App(cors=...)``, ``App(compression=...)``, ``App(allowed_hosts=...)``), set here as
        Starlette's options say, below the routes too, until the app serves; and
        ``ferrule.middleware.sessions.SessionMiddleware`` (``request.session``). Each is set once;
        any other class is a ``TypeError`` (an ASGI middleware cannot wrap the core: write it as
        ``@app.middleware("http")``)."""
        chosen = core_middleware(middleware_class, args, options)
        if isinstance(chosen, HookMiddleware):
            if middleware_class.__name__ in self._middleware.values():
                raise ValueError(f"ferrule: add_middleware({middleware_class.__name__}): it is added already")
            chosen.install(self)
            self._middleware[f"hooks:{middleware_class.__name__}"] = middleware_class.__name__
            return
        setting = chosen.setting
        if setting in self.config or setting in self._middleware:
            by = f"add_middleware({self._middleware[setting]})" if setting in self._middleware else f"App({setting}=...)"
            raise ValueError(f"ferrule: add_middleware({middleware_class.__name__}): {setting} is already set by {by}")
        self._native_app.configure(json.dumps({setting: chosen.value, **chosen.also}))
        self._middleware[setting] = middleware_class.__name__

    def exception_handler(self, key: Union[int, type[BaseException]]) -> Callable[[Hook], Hook]:
        """FastAPI's ``@app.exception_handler(ValueError)``: ``handler(request, exc)`` answers
        whatever a handler or hook raises of that class (the nearest one registered), or an
        ``HTTPException`` of that status (``@app.exception_handler(404)``), with a ``Response``
        or any value a handler may return. Requests the core refuses reach it too: no route
        (``HTTPException`` 404, 405), a failed validation (``RequestValidationError``, with
        ``errors()``), a body of the wrong type or size (415, 413, 400). Without one, an
        HTTP error gets the core's problem response and anything else a bare 500. A handler
        for ``Exception`` or ``500`` answers that 500 instead (with 500 unless it says
        otherwise); as Starlette's, the exception is still logged, and a ``TestClient``
        raises it unless ``raise_server_exceptions=False``."""

        def register(func: Hook) -> Hook:
            self.add_exception_handler(key, func)
            return func

        return register

    def add_exception_handler(self, key: Union[int, type[BaseException]], handler: Callable[..., Any]) -> None:
        if isinstance(key, bool) or not (isinstance(key, int) or (isinstance(key, type) and issubclass(key, BaseException))):
            raise TypeError(f"an exception handler is for an exception class or an HTTP status, not {key!r}")
        if key == 500 or key is Exception:
            # Starlette's last resort: never asked about an HTTP error, a 500 one included.
            self._hooks.last_resort = handler
            return
        self._hooks.exception_handlers[key] = handler
        # Which of the core's refusals the language must now see: the status's, a validation
        # failure's, or every one for a handler of all HTTP errors.
        if isinstance(key, int):
            self._native_app.catch(key)
        elif issubclass(key, RequestValidationError):
            self._native_app.catch(422)
        elif issubclass(key, HTTPException):
            self._native_app.catch(None)

    def mount(self, path: str, app: Any, name: Optional[str] = None) -> None:
        """Starlette's ``app.mount("/static", StaticFiles(directory="public"))``: serves the
        directory under ``path`` (``/`` serves it for the paths no route takes). The files are
        served by the core; only ``StaticFiles`` can be mounted. With ``name``, Starlette's
        ``url_for(name, path="css/site.css")`` gives a file's URL."""
        from .staticfiles import StaticFiles

        if not isinstance(app, StaticFiles):
            raise TypeError(f"only StaticFiles can be mounted, not {type(app).__name__} (ASGI apps do not run here)")
        self._native_app.mount_static(json.dumps(app.spec(path or "/")))
        if name is not None:
            self._named.append((name, path.rstrip("/") + "/{path:path}", "http"))

    def include_router(
        self,
        router: Router,
        *,
        prefix: str = "",
        tags: Optional[Sequence[str]] = None,
        dependencies: Optional[Sequence[Any]] = None,
        default_response_class: Optional[type] = None,
        responses: Optional[dict[Any, dict[str, Any]]] = None,
        deprecated: Optional[bool] = None,
    ) -> None:
        """Serves ``router``'s routes under ``prefix`` + its own prefix, with its hooks after
        the app's (FastAPI's ``include_router``; what the router declares later is not
        taken). The app's ``dependencies`` and these run before each route's own, in that order.
        ``default_response_class`` is for its routes that name none (nor does the router).
        The app's ``responses`` and these are documented for each route, under its own;
        ``deprecated=True`` (or the app's) marks every one."""
        documented = {**self._responses, **documented_responses(responses, f"include_router(prefix={prefix!r})")}
        self._include(router, 0, prefix, list(tags or []), [*self._dependencies, *(dependencies or [])], default_response_class or self._default_response_class, documented, self._deprecated or bool(deprecated))

    def _include(self, router: Router, parent: int, prefix: str, tags: list[str], extra: list[Any], sent_as: Optional[type] = None, documented: Optional[dict[str, dict]] = None, deprecated: bool = False) -> None:
        group = self._native_app.group(parent, prefix.rstrip("/") + router.prefix)
        # As the core joins them (`Groups::add`): no trailing `/`, in the spelling paths are
        # matched in.
        own = urllib.parse.quote((prefix.rstrip("/") + router.prefix).rstrip("/"), safe="/%" + "-._~!$&'()*+,;=:@")
        self._prefixes[group] = self._prefixes.get(parent, "") + own
        # FastAPI's order for a route's response class: its own, its router's default, the
        # `include_router(default_response_class=)` that took the router in, the app's.
        sent_as = router._default_response_class or sent_as
        for kind, item in router._declared:
            if kind == "route":
                route: _Route = item
                inherits = route.takes_default_class and sent_as is not None
                if extra and route.rebuild is None:
                    raise TypeError(f"{route.spec.get('method')} {route.spec.get('path')}: dependencies= cannot reach this route (declared with add_route); declare them on it")
                if route.rebuild is not None and (extra or inherits):
                    route = route.rebuild(extra, sent_as if inherits else None)
                added: dict[str, Any] = {}
                if tags:
                    added["tags"] = [*tags, *route.spec.get("tags", [])]
                if documented:
                    added["documented_responses"] = {**documented, **route.spec.get("documented_responses", {})}
                if deprecated:
                    added["deprecated"] = True
                if added:
                    named = route.name
                    route = _Route({**route.spec, **added}, route.handler, route.arguments, route.status_code, False, route.chained)
                    route.name = named
                self._declare(route, group)
            elif kind == "hook":
                phase, func = item
                self._hook(phase, func, group)
            else:
                inner, inner_prefix, inner_tags, inner_dependencies, inner_class, inner_documented, inner_deprecated = item
                self._include(inner, group, inner_prefix, [*tags, *inner_tags], [*extra, *inner_dependencies], inner_class or sent_as, {**(documented or {}), **inner_documented}, deprecated or inner_deprecated)

    def on_event(self, event: str) -> Callable[[Hook], Hook]:
        """``@app.on_event("startup")`` / ``("shutdown")``, as FastAPI's."""
        if event not in ("startup", "shutdown"):
            raise ValueError(f'on_event takes "startup" or "shutdown", not {event!r}')

        def register(func: Hook) -> Hook:
            (self._on_startup if event == "startup" else self._on_shutdown).append(func)
            return func

        return register

    async def _start_lifespan(self) -> None:
        """Runs the startup callbacks and enters ``lifespan``; a failure is ``StartupFailed``."""
        try:
            for func in self._on_startup:
                result = func()
                if inspect.isawaitable(result):
                    await result
            if self._lifespan is not None:
                manager = self._lifespan(self)
                yielded = await manager.__aenter__()
                self._running_lifespan = manager
                # Starlette's lifespan state: what it yields (a mapping) starts each request's
                # `request.state`, a shallow copy per request.
                self._lifespan_state = dict(yielded) if isinstance(yielded, Mapping) else {}
        except Exception as e:
            raise StartupFailed(f"startup failed: {type(e).__name__}: {e}") from e

    async def _stop_lifespan(self) -> None:
        """Leaves ``lifespan`` and runs the shutdown callbacks (each failure is logged, the
        others still run)."""
        manager, self._running_lifespan = self._running_lifespan, None
        steps: list[Callable[[], Any]] = []
        if manager is not None:
            steps.append(lambda: manager.__aexit__(None, None, None))
        steps.extend(self._on_shutdown)
        for step in steps:
            try:
                result = step()
                if inspect.isawaitable(result):
                    await result
            except Exception:
                import logging

                logging.getLogger("ferrule").exception("a shutdown step failed")

    # -- serving ----------------------------------------------------------------------------

    def openapi(self) -> dict[str, Any]:
        """The app's OpenAPI 3.1 document, as served at ``openapi_url`` (``/openapi.json``):
        every route declared so far. ``python -m ferrule openapi module:app`` prints it."""
        document: dict[str, Any] = json.loads(self._native_app.openapi())
        return document

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
        ``on_ready(port)`` is called once listening. The startup callbacks and ``lifespan``
        run first (``StartupFailed`` if one raises: nothing is served), the shutdown ones once
        the drain is over."""
        await self._start_lifespan()
        try:
            await self._serve(host, port, fd, threads, on_ready)
        finally:
            # Background tasks and teardowns still running finish before the lifespan closes
            # what they use (a pool), within the drain's deadline again; past it, the loop's
            # end cancels them.
            await _tasks.settled(self.config.get("shutdown_timeout_ms", 10_000) / 1000)
            await self._stop_lifespan()

    async def _serve(self, host: str, port: int, fd: Optional[int], threads: Optional[int], on_ready: Optional[Callable[[int], Any]]) -> None:
        loop = asyncio.get_running_loop()
        stopped: asyncio.Future[None] = loop.create_future()
        logs = self._native_app.route_logs()
        loop.add_reader(logs.doorbell, logs.drain)
        try:
            server = self._native_app.start(loop, stopped, self._hooks, host=host, port=port, fd=fd, threads=threads)
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

    async def __call__(self, scope: Mapping[str, Any], receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        """An ASGI server (``uvicorn main:app``) calls the app: Ferrule is its own server, and
        says so once, at startup, where uvicorn prints it and stops (found by a FastAPI port:
        uvicorn served, and every request was a 500 for ``'App' object is not callable``)."""
        message = "a Ferrule App is its own server, not an ASGI application: serve it with `python -m ferrule module:app` (or app.run())"
        if scope.get("type") == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.failed", "message": message})
            return
        raise TypeError(message)

    def run(self, host: str = "127.0.0.1", port: int = 8000, *, workers: int = 1, threads: Optional[int] = None) -> None:
        """Serves until SIGINT or SIGTERM, then drains and returns. ``workers > 1`` forks that
        many processes sharing the port. Uses uvloop when it is installed."""
        from .server import run

        run(self, host=host, port=port, workers=workers, threads=threads)


