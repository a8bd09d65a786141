"""Running a handler's dependencies (``Depends``) for one request, as FastAPI does.

At declaration, a dependency's parameters were analysed like a handler's and joined the
route's declared inputs (``signature.merge_spec``), so the core has parsed and validated them
before any Python runs. Per request, the handler becomes ``run(request)``: each dependency is
called once (its result cached by callable, unless ``use_cache=False``), sub-dependencies
first, with its arguments read from the already typed ``Request``; then the handler. A
generator dependency gives the value it yields; the rest of it runs after the response is sent
(``close_after``), or at once, with the exception thrown into it, when the handler raises.
"""

from __future__ import annotations

import functools
import inspect
import logging
from typing import Any, Callable, Optional, Sequence

from . import _pool
from ._stream_end import EndingAsyncStream, EndingStream
from ._tasks import in_background
from .background import tasks_of_request
from .params import MISSING, Dependency
from .responses import EventSourceResponse, FileResponse, StreamingResponse
from .signature import Analysis, Argument, what_runs

__all__ = ["Resolver", "DependencyOverrides", "with_dependencies", "with_shared_response", "close_after", "close_with_stream"]

_EXITS = "_ferrule_dependency_exits"
# Where a dependency's arguments come from the request, as the route declared them.
_INPUTS = frozenset({"path", "query", "header", "cookie", "body", "form"})
_RESPONSE = "_ferrule_response"
_SOCKET = "_ferrule_socket"


# How many apps have a dependency overridden now: while none has, resolving a dependency
# checks this one number and nothing else.
_OVERRIDING = [0]


class DependencyOverrides(dict):
    """FastAPI's ``app.dependency_overrides``: ``{dependency: replacement}``, read per request,
    so a test sets or clears it after the routes were declared. A replacement takes its
    arguments as a dependency does; those the route did not declare (the original
    dependency's inputs are what the core parsed) arrive as their defaults. Keeps
    ``_OVERRIDING`` in step with whether it holds anything."""

    def __init__(self) -> None:
        super().__init__()
        self._counted = False

    def _changed(self) -> None:
        if bool(self) != self._counted:
            self._counted = bool(self)
            _OVERRIDING[0] += 1 if self._counted else -1

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self._changed()

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self._changed()

    def __ior__(self, other: Any) -> "DependencyOverrides":
        self.update(other)
        return self

    def __del__(self) -> None:
        if self._counted:
            _OVERRIDING[0] -= 1


def _changing(name: str) -> Callable[..., Any]:
    method = getattr(dict, name)

    def changing(self: DependencyOverrides, *args: Any, **kwargs: Any) -> Any:
        result = method(self, *args, **kwargs)
        self._changed()
        return result

    changing.__name__ = name
    return changing


for _name in ("update", "clear", "pop", "popitem", "setdefault"):
    setattr(DependencyOverrides, _name, _changing(_name))


class Resolver:
    """One callable (a dependency, or the handler) and how to fill its arguments."""

    def __init__(self, func: Callable[..., Any], analysis: Analysis, marker: Optional[Dependency] = None) -> None:
        self.func = func
        self.marker = marker
        self.path = analysis.path
        # A replacement's own resolver, by replacement (`app.dependency_overrides`).
        self.replacements: dict[Any, Resolver] = {}
        self.arguments = analysis.arguments
        self.response_param = analysis.response_param
        self.subs = [Resolver(use.marker.dependency, use.analysis, use.marker) for use in analysis.dependencies]
        # Whether it reads the scopes asked for above it (a `SecurityScopes` parameter, here or
        # below): only such a dependency differs by scopes.
        self.uses_scopes: bool = getattr(func, "gives_scopes", False) or any(sub.uses_scopes for sub in self.subs)
        # What one request's cache keeps its value under: a dependency that reads the scopes is
        # resolved again under others (its checks differ), as FastAPI keys it; any other is one
        # value per request, whatever Security(...) it sits under (a `get_db` below
        # `Security(get_current_user, scopes=[...])` made a second session: found by a probe).
        self.key: Any = (func, tuple(sorted(set(analysis.scopes)))) if analysis.scopes and self.uses_scopes else func
        target = what_runs(func)
        self.generator = inspect.isgeneratorfunction(target)
        self.async_generator = inspect.isasyncgenfunction(target)
        self.coroutine = inspect.iscoroutinefunction(target)
        self.is_async = self.coroutine or self.async_generator or any(sub.is_async for sub in self.subs)
        self.yields = self.generator or self.async_generator or any(sub.yields for sub in self.subs)

    def _argument(self, argument: Argument, request: Any, resolved: list[Any]) -> Any:
        source = argument.source
        if source == "depends":
            return resolved[int(argument.key)]
        if source == "request":
            return request
        if source == "response":
            return shared_response(request)
        if source == "socket":
            return getattr(request.state, _SOCKET)
        if source == "path":
            value = request.path_params.get(argument.key)
        elif source == "query":
            value = request.query.get(argument.key)
        elif source == "header":
            value = request._declared_headers.get(argument.key)
        elif source == "cookie":
            value = request._declared_cookies.get(argument.key)
        elif source == "body":
            body = request._validated_body
            # An embedded body parameter is its member of the body (see `signature`).
            value = body if not argument.key else body.get(argument.key) if isinstance(body, dict) else None
        elif source == "form":
            body = request._validated_body
            value = body.get(argument.key) if isinstance(body, dict) else None
        else:
            raise TypeError(f"{getattr(self.func, '__qualname__', self.func)}: a dependency cannot take a {source}")
        if value is None:
            return None if argument.default is MISSING else argument.default
        return argument.convert(value) if argument.convert is not None else value

    def _call_arguments(self, request: Any, resolved: list[Any]) -> tuple[list[Any], dict[str, Any]]:
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for argument in self.arguments:
            value = self._argument(argument, request, resolved)
            if argument.positional and not kwargs:
                args.append(value)
            else:
                kwargs[argument.name] = value
        if self.response_param is not None:
            kwargs[self.response_param] = shared_response(request)
        return args, kwargs

    def replaced(self, request: Any) -> Optional["Resolver"]:
        """The resolver of what the app's ``dependency_overrides`` put in this one's place."""
        app = request.app if self.marker is not None else None
        overrides = getattr(app, "dependency_overrides", None)
        replacement = overrides.get(self.func) if overrides else None
        if replacement is None or replacement is self.func:
            return None
        resolver = self.replacements.get(replacement)
        if resolver is None:
            from .request import Request
            from .responses import Response
            from .signature import analyse

            analysis = analyse(replacement, self.path, request_type=Request, response_type=Response, as_dependency=True)
            _within(analysis, replacement, self)
            resolver = Resolver(replacement, analysis, self.marker)
            self.replacements[replacement] = resolver
        return resolver

    def _inputs(self) -> set[tuple[str, str]]:
        """The request inputs this resolver and its sub-dependencies read (what the route
        declared for them)."""
        found = {(a.source, a.key) for a in self.arguments if a.source in _INPUTS}
        for sub in self.subs:
            found |= sub._inputs()
        return found

    def value(self, request: Any, cache: dict[Any, Any], exits: list[Any]) -> Any:
        """This dependency's value for ``request`` (sync)."""
        cached = self.marker is None or self.marker.use_cache
        if cached and self.key in cache:
            return cache[self.key]
        if _OVERRIDING[0]:
            replacement = self.replaced(request)
            if replacement is not None:
                if replacement.is_async:
                    raise TypeError(f"dependency_overrides: {getattr(replacement.func, '__qualname__', replacement.func)} is async, in place of a sync dependency of a def route; make it a def")
                result = replacement.value(request, cache, exits)
                if cached:
                    cache[self.key] = result
                return result
        resolved = [sub.value(request, cache, exits) for sub in self.subs]
        args, kwargs = self._call_arguments(request, resolved)
        if self.generator:
            generator = self.func(*args, **kwargs)
            result = next(generator)
            if _pool.in_worker() and _ON_POOL not in exits:
                exits.append(_ON_POOL)
            exits.append(generator)
        else:
            result = self.func(*args, **kwargs)
        if cached:
            cache[self.key] = result
        return result

    async def value_async(self, request: Any, cache: dict[Any, Any], exits: list[Any]) -> Any:
        """This dependency's value for ``request``: sync dependencies run where they are."""
        cached = self.marker is None or self.marker.use_cache
        if cached and self.key in cache:
            return cache[self.key]
        if _OVERRIDING[0]:
            replacement = self.replaced(request)
            if replacement is not None:
                result = await replacement.value_async(request, cache, exits)
                if cached:
                    cache[self.key] = result
                return result
        resolved = [await sub.value_async(request, cache, exits) for sub in self.subs]
        args, kwargs = self._call_arguments(request, resolved)
        if self.async_generator:
            generator = self.func(*args, **kwargs)
            result = await generator.__anext__()
            exits.append(generator)
        elif self.generator:
            generator = self.func(*args, **kwargs)
            result = next(generator)
            exits.append(generator)
        else:
            result = self.func(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        if cached:
            cache[self.key] = result
        return result


def _within(analysis: Analysis, replacement: Callable[..., Any], original: Resolver) -> None:
    """A replacement reads the inputs the route declared, which are its original's: one it
    requires beyond them would arrive as None, unparsed (found by a check of the README: a
    required header of the replacement's was None though sent). Refused by name."""
    declared = original._inputs()
    sources = {"path_params": "path", "query": "query", "headers": "header", "cookies": "cookie"}
    for part, source in sources.items():
        for param in analysis.spec.get(part, []):
            required = param.get("required", "default" not in param.get("schema", {}))
            if required and (source, param["name"]) not in declared:
                _refuse(replacement, original, f"{source} {param['name']!r}")
    body = analysis.spec.get("body")
    if body is not None and body.get("required") and not any(source in ("body", "form") for source, _ in declared):
        _refuse(replacement, original, "a body")


def _refuse(replacement: Callable[..., Any], original: Resolver, what: str) -> None:
    name = getattr(replacement, "__qualname__", replacement)
    replaced = getattr(original.func, "__qualname__", original.func)
    raise TypeError(
        f"dependency_overrides: {name} requires {what}, which {replaced} does not declare; "
        "a replacement reads what the route declares (give it a default, or declare it on the original)"
    )


def with_dependencies(handler: Callable[..., Any], analysis: Analysis, extra: Sequence[Resolver] = ()) -> tuple[Callable[..., Any], bool]:
    """``handler`` as ``run(request)``, its dependencies (and the route's own ``extra`` ones,
    whose values are not passed) resolved first; and whether it is async."""
    root = Resolver(handler, analysis)
    is_async = root.is_async or any(resolver.is_async for resolver in extra)

    if is_async:

        async def run_async(request: Any) -> Any:
            cache: dict[Any, Any] = {}
            exits = _exits(request)
            try:
                for resolver in extra:
                    await resolver.value_async(request, cache, exits)
                resolved = [await sub.value_async(request, cache, exits) for sub in root.subs]
                args, kwargs = root._call_arguments(request, resolved)
                result = handler(*args, **kwargs)
                return await result if inspect.isawaitable(result) else result
            except BaseException as exc:
                await _close_async(exits, exc)
                raise

        return run_async, True

    def run(request: Any) -> Any:
        cache: dict[Any, Any] = {}
        exits = _exits(request)
        try:
            for resolver in extra:
                resolver.value(request, cache, exits)
            resolved = [sub.value(request, cache, exits) for sub in root.subs]
            args, kwargs = root._call_arguments(request, resolved)
            return handler(*args, **kwargs)
        except BaseException as exc:
            _close(exits, exc)
            raise

    return run, False


def for_socket(handler: Callable[..., Any], analysis: Analysis, extra: Sequence[Resolver] = ()) -> Callable[..., Any]:
    """A WebSocket ``handler`` with its ``Depends`` resolved from the handshake (its
    ``Request``), as FastAPI resolves them for a WebSocket route: ``run(request, websocket)``.
    A dependency may take the ``WebSocket`` too. Generator dependencies close when the handler
    ends (with its exception thrown in, if it raised). ``extra``: the app's and router's
    ``dependencies=``, run first, values unused."""
    run, _ = with_dependencies(handler, analysis, extra)

    async def run_socket(request: Any, websocket: Any) -> None:
        setattr(request.state, _SOCKET, websocket)
        result = run(request)  # on an exception, the dependencies were closed with it
        if inspect.isawaitable(result):
            await result
        await _close_async(getattr(request.state, _EXITS, []), None)

    return run_socket


def shared_response(request: Any) -> Any:
    """The one ``Response`` the handler and its dependencies set a status, headers and cookies
    on (``with_shared_response``)."""
    return getattr(request.state, _RESPONSE)


def with_shared_response(run: Callable[..., Any], is_async: bool, status_code: int, merged: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """``run(request)`` with a fresh ``Response`` for the request, shared by the handler and
    every dependency that takes one, applied to the result by ``merged``."""
    from .responses import Response

    def fresh(request: Any) -> Any:
        response = Response(status_code)
        setattr(request.state, _RESPONSE, response)
        return response

    if is_async:

        async def run_async(request: Any) -> Any:
            response = fresh(request)
            return merged(response, await run(request))

        return run_async

    def run_sync(request: Any) -> Any:
        response = fresh(request)
        return merged(response, run(request))

    return run_sync


# Among a request's exits, before its first `def` generator: they were entered on the thread
# pool (a `blocking=True` route), where their teardowns run too. A marker in the list, not an
# attribute of it: only a request that enters a `def` generator there pays for it.
_ON_POOL = object()


def _exits(request: Any) -> list[Any]:
    exits: list[Any] = []
    setattr(request.state, _EXITS, exits)
    return exits


def _close(exits: list[Any], exc: Optional[BaseException]) -> None:
    """Runs the code after each generator dependency's ``yield``, last entered first; with
    ``exc``, thrown in where it waits. What the teardown raises instead is logged."""
    while exits:
        generator = exits.pop()
        if generator is _ON_POOL:
            continue
        try:
            if exc is None:
                next(generator)
            else:
                generator.throw(exc)
        except StopIteration:
            pass
        except BaseException as raised:
            if raised is not exc:
                logging.getLogger("ferrule.handler").error("a dependency's teardown raised", exc_info=raised)
        else:
            logging.getLogger("ferrule.handler").error("a generator dependency yielded twice: %r", generator)


def _tasks_first(exits: list[Any]) -> None:
    """Puts the request's ``BackgroundTasks`` where they close first (``exits`` closes from its
    end): FastAPI runs them once the response has gone and before any teardown, so a task may
    still use the session a dependency yielded (it saw a closed one here, found by a probe)."""
    tasks = [generator for generator in exits if getattr(generator, "ag_code", None) is tasks_of_request.__code__]
    if tasks:
        exits[:] = [generator for generator in exits if generator not in tasks] + tasks


async def _close_async(exits: list[Any], exc: Optional[BaseException]) -> None:
    if exc is None:
        _tasks_first(exits)
    while exits:
        generator = exits.pop()
        if not inspect.isasyncgen(generator):
            if generator is not _ON_POOL:
                _close([generator], exc)
            continue
        try:
            if exc is None:
                await generator.__anext__()
            else:
                await generator.athrow(exc)
        except StopAsyncIteration:
            pass
        except BaseException as raised:
            if raised is not exc:
                logging.getLogger("ferrule.handler").error("a dependency's teardown raised", exc_info=raised)
        else:
            logging.getLogger("ferrule.handler").error("a generator dependency yielded twice: %r", generator)


def close_with_stream(response: Any, request: Any) -> bool:
    """A streamed response (``StreamingResponse``, ``EventSourceResponse``) is not gone when its
    head is: its producer may still use what a generator dependency yielded (a database
    session). Its stream is wrapped so that the dependencies close once the producer ends, or
    the client leaves and the stream is closed, as FastAPI does since 0.118. True when they
    will; False when there is nothing to wait for, and ``close_after`` is to run now. Called
    before the response is handed to the core, which takes the stream then. (A sync producer
    with an ``async`` generator dependency keeps the old order: the thread it runs on has no
    loop to finish that dependency on.)"""
    # Only a streamed response's `stream`: a handler's model may have a field of that name.
    if not isinstance(response, (StreamingResponse, EventSourceResponse, FileResponse)):
        return False
    state = request._state_if_made
    exits = getattr(state, _EXITS, None) if state is not None else None
    if not exits:
        return False
    if isinstance(response, FileResponse):
        # The core opens the file once it has the response, after a teardown running now: a
        # background task that removes the file it sent (FastAPI's idiom for a generated one)
        # removed it first, a 404. Read from here instead, whole, and close once it is sent.
        response._read_here()
    stream = response.stream
    if isinstance(stream, (str, bytes)):
        return False
    try:
        if hasattr(stream, "__aiter__"):
            response.stream = EndingAsyncStream(stream, lambda: _close_now(exits))
            return True
        if any(inspect.isasyncgen(generator) for generator in exits):
            return False
        # Ends on a thread of the stream pool, where a sync teardown may wait.
        response.stream = EndingStream(stream, lambda: _close_now(exits))
    except Exception:  # not a stream (`StreamingResponse(42)`): the core refuses it, a 500, as before
        return False
    return True


def _close_now(exits: list[Any]) -> Any:
    """The rest of each generator dependency in ``exits``, where it is called (an awaitable when
    one of them is async, else ``None``)."""
    if any(inspect.isasyncgen(generator) for generator in exits):
        return _close_async(exits, None)
    _close(exits, None)
    return None


def close_after(request: Any) -> None:
    """After the response: the rest of each generator dependency of ``request``, the last
    entered first. When the request has ``BackgroundTasks``, an ``async`` generator, or was
    entered on the thread pool (a ``blocking=True`` route), in a task on the loop: the binding
    hands the answer to the core once the callback that made it returns, so the task starts
    while the response goes out; the background tasks run first, then the teardowns, a ``def``
    one on the thread pool, as FastAPI runs them. Run here before, a ``blocking=True`` route's
    teardown that waited (a commit, a connection handed back) held its response back and
    blocked the loop every request shares (found by a probe: 1.5 s of teardown, and another
    route's answer 1.2 s late), and a task saw the session closed. Otherwise (``def``
    generators of a ``def`` route, entered on the loop) they close here, at once, as that
    route's own code runs on the loop."""
    state = request._state_if_made
    exits = getattr(state, _EXITS, None) if state is not None else None
    if not exits:
        return
    if any(generator is _ON_POOL or inspect.isasyncgen(generator) for generator in exits):
        in_background(_close_later(exits))
    else:
        # Only `def` generators, entered on the loop (a session dependency of a `def` route,
        # the common case): closed here, on the loop, as the route's own `def` code runs, and
        # at once. Measured (oha, one pinned core, 20,000 requests): a task per request cost
        # such a route 6.5 CPU-µs more (11.8 → 18.2), a `call_soon` callback 3.5 (an extra
        # turn of the loop per request).
        _close(exits, None)


async def _close_later(exits: list[Any]) -> None:
    on_pool = _ON_POOL in exits
    _tasks_first(exits)
    while exits:
        generator = exits.pop()
        if generator is _ON_POOL:
            continue
        if inspect.isasyncgen(generator):
            await _close_async([generator], None)
        elif on_pool:
            await _pool.THREADS.run(functools.partial(_close, [generator], None))
        else:
            _close([generator], None)
