"""Hooks, ``@app.middleware("http")`` and exception handlers: how one request's chain runs.

The core decides which hooks a request meets and in which order (Fastify's: ``on_request``,
``pre_handler``, the handler, ``on_send``; ``on_error`` when something raises), and hands the
request over with its hook slots; this module runs them, with the handler, in the one trip to
the event loop's thread that runs the handler anyway. A chain whose hooks and handler are all
``def`` functions runs right there, synchronously (no task); one with an ``async def`` in it,
or with middleware, runs as a task on the loop.

A hook answers the request itself by returning a ``Response`` (or any value a handler may
return) or by raising ``HTTPException``; returning ``None`` lets the request go on. An
``on_send`` hook gets the response (``response.headers`` is a ``MutableHeaders``) and may change
it in place or return another. Middleware (Starlette's shape, ``call_next``) wrap the whole
chain, exception handlers included, so ``call_next`` returns a ``Response`` even for a 404.

Requests the core refused (a validation failure, no route) reach here only when something
must see them; their refusal is raised as ``RequestValidationError`` (422) or ``HTTPException``
after the ``on_request`` hooks, and an exception handler for it may answer instead of the core.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Awaitable, Callable, Optional, Sequence

from . import _ferrule
from ._tasks import in_background
from .dependencies import close_after, close_with_stream
from .responses import HTTPException, MutableHeaders, Response
from .signature import is_async

__all__ = ["PHASES", "Registry", "RequestValidationError", "finish_sync", "run_async"]

PHASES = ("on_request", "pre_handler", "on_send", "on_error")


class RequestValidationError(Exception):
    """A request the core refused because its values failed validation (FastAPI's name).
    ``errors()`` lists the failures as the problem response does (``type``, ``loc``, ``msg``,
    ``input``, ``ctx``); ``body`` is the body as FastAPI gives it — a JSON body parsed (a
    handler may send it back in a ``JSONResponse``), else as sent — and ``raw_body`` the bytes."""

    def __init__(self, errors: Sequence[dict[str, Any]], *, body: Any = None) -> None:
        super().__init__(errors)
        self._errors = list(errors)
        self.raw_body = body
        self.status_code = 422

    @property
    def body(self) -> Any:
        raw = self.raw_body
        if not isinstance(raw, (bytes, bytearray)):
            return raw
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:  # not JSON (or malformed JSON, FastAPI's case): the text, or the bytes
            try:
                return raw.decode()
            except UnicodeDecodeError:
                return bytes(raw)

    def errors(self) -> list[dict[str, Any]]:
        return self._errors


class _Hook:
    __slots__ = ("func", "phase", "is_async", "middleware")

    def __init__(self, func: Callable[..., Any], phase: str, middleware: bool = False) -> None:
        self.func = func
        self.phase = phase
        self.middleware = middleware
        self.is_async = middleware or is_async(func)


class Registry:
    """One app's hooks (by the slot the core knows each as), middleware and exception
    handlers."""

    def __init__(self) -> None:
        self.slots: list[_Hook] = []
        self.exception_handlers: dict[Any, Callable[..., Any]] = {}
        # Starlette's last resort: the handler for 500 or for Exception, whichever came last.
        self.last_resort: Optional[Callable[..., Any]] = None

    def add(self, phase: str, func: Callable[..., Any], *, middleware: bool = False) -> int:
        if phase not in PHASES:
            raise ValueError(_ferrule.unknown_option("hook", phase, list(PHASES)))
        if not callable(func):
            raise TypeError(f"a hook must be callable, not {type(func).__name__}")
        self.slots.append(_Hook(func, phase, middleware))
        return len(self.slots) - 1

    @property
    def has_handlers(self) -> bool:
        """Whether every request must run through a chain: exception handlers see what any
        handler raises."""
        return bool(self.exception_handlers) or self.last_resort is not None

    def chain(self, on_request: Sequence[int], pre_handler: Sequence[int], on_send: Sequence[int], on_error: Sequence[int]) -> "Chain":
        hooks = [self.slots[i] for i in on_request]
        return Chain(
            self,
            [h.func for h in hooks if not h.middleware],
            [self.slots[i].func for i in pre_handler],
            [self.slots[i].func for i in on_send],
            [self.slots[i].func for i in on_error],
            [h.func for h in hooks if h.middleware],
            sync=not any(self.slots[i].is_async for i in (*on_request, *pre_handler, *on_send, *on_error)),
        )

    def handler_for(self, exc: BaseException) -> Optional[Callable[..., Any]]:
        """The exception handler for ``exc``: by its status for an ``HTTPException`` (as
        Starlette looks one up), then by its class, nearest first. ``HTTPException`` and
        ``RequestValidationError`` have the core's answer as their default, so a handler for
        ``Exception`` never takes them."""
        handlers = self.exception_handlers
        if isinstance(exc, HTTPException) and exc.status in handlers:
            return handlers[exc.status]
        for cls in type(exc).__mro__:
            if cls in handlers:
                return handlers[cls]
            if cls is HTTPException or cls is RequestValidationError:
                return None
        return None

    def server_error_handler(self, exc: Exception) -> Optional[Callable[..., Any]]:
        """Starlette's last resort (the handler for ``500`` or ``Exception``), for an exception
        no nearer handler takes that is no HTTP error. What it answers is sent with 500 unless
        it says otherwise; the exception is still logged, and a test client raises it, as
        Starlette raises it again after that handler's response."""
        return None if isinstance(exc, (HTTPException, RequestValidationError)) else self.last_resort


class Chain:
    """The hooks one route's requests meet, resolved once per route and server."""

    __slots__ = ("registry", "on_request", "pre_handler", "on_send", "on_error", "middleware", "sync")

    def __init__(self, registry: Registry, on_request: list, pre_handler: list, on_send: list, on_error: list, middleware: list, *, sync: bool) -> None:
        self.registry = registry
        self.on_request = on_request
        self.pre_handler = pre_handler
        self.on_send = on_send
        self.on_error = on_error
        self.middleware = middleware
        self.sync = sync and not middleware


def _as_response(value: Any, status: int) -> Response:
    """What a handler or hook answered, as a ``Response`` whose headers can be changed."""
    response = value if isinstance(value, Response) else Response(status, None, value)
    _ = response.headers  # from here on a MutableHeaders, which hooks change in place
    return response


def _default(exc: Exception, call: Any) -> Response:
    """The answer to an HTTP error no exception handler took: for a refusal of the core's, its
    own response; else the problem response the exception describes. Anything else goes on (a
    bare 500, logged)."""
    if exc is call.refusal:
        return _as_response(call.default_response(), call.status)
    if isinstance(exc, HTTPException):
        headers = MutableHeaders(list((exc.headers or {}).items()))
        headers["content-type"] = _ferrule.PROBLEM_JSON
        return Response(exc.status, headers, _ferrule.problem_body(exc.status, exc._detail))
    if isinstance(exc, RequestValidationError):
        # Raised by the app's own code (the core's refusals are answered above).
        headers = MutableHeaders([("content-type", _ferrule.PROBLEM_JSON)])
        return Response(422, headers, validation_problem_body(exc))
    raise exc


def _unanswered(chain: Chain, exc: Exception, call: Any) -> Response:
    """An exception no handler answers: ``_default``'s answer, except that for an unexpected one
    on a chain with ``on_send`` hooks, the core's bare 500 is made here (the exception logged,
    and kept for a test client, as the core would), so that they see it: Fastify's onSend sees
    its error replies, and Node's hooks see this one."""
    if not chain.on_send or exc is call.refusal or isinstance(exc, (HTTPException, RequestValidationError)):
        return _default(exc, call)
    _report(exc, call)
    return Response(500, MutableHeaders([("content-type", _ferrule.PROBLEM_JSON)]), _ferrule.server_error_body())


def validation_problem_body(exc: RequestValidationError) -> bytes:
    """The 422 problem document of a ``RequestValidationError`` the app's code raised (or a
    model's own validator did, as its argument was converted), as the core writes its own."""
    errors = exc.errors()
    problem = {
        "type": _ferrule.VALIDATION_PROBLEM_TYPE,
        "title": "Unprocessable Content",
        "status": 422,
        "detail": "1 validation error" if len(errors) == 1 else f"{len(errors)} validation errors",
        "errors": errors,
    }
    return json.dumps(problem, default=str, separators=(",", ":")).encode()


def _recovered(chain: Chain, request: Any, exc: Exception, call: Any) -> Any:
    """``on_error`` hooks see ``exc`` (not a refusal of the core's: that is no failure of the
    app's); then its exception handler answers, or the default does."""
    if exc is not call.refusal:
        for hook in chain.on_error:
            hook(request, exc)
    handler = chain.registry.handler_for(exc)
    if handler is not None:
        try:
            answer = handler(request, exc)
        except Exception as raised:
            return _handler_raised(chain, request, handler, raised, call)
        return _guarded(chain, request, handler, answer, call) if inspect.isawaitable(answer) else answer
    last_resort = chain.registry.server_error_handler(exc)
    if last_resort is None:
        return _unanswered(chain, exc, call)
    _report(exc, call)
    answer = last_resort(request, exc)
    if inspect.isawaitable(answer):
        return _server_error_awaited(answer)
    return _server_error(answer)


def _handler_raised(chain: Chain, request: Any, handler: Callable[..., Any], raised: Exception, call: Any) -> Any:
    """An exception handler that raised: what it raised goes to the last resort (the handler
    for ``Exception`` or 500), as Starlette's ``ServerErrorMiddleware`` takes it, or is a bare
    500 (found by a FastAPI port: the last resort never saw it)."""
    last_resort = chain.registry.last_resort
    if last_resort is None or last_resort is handler:
        raise raised
    _report(raised, call)
    answer = last_resort(request, raised)
    if inspect.isawaitable(answer):
        return _server_error_awaited(answer)
    return _server_error(answer)


async def _guarded(chain: Chain, request: Any, handler: Callable[..., Any], answer: Awaitable[Any], call: Any) -> Any:
    try:
        return await answer
    except Exception as raised:
        return await _maybe(_handler_raised(chain, request, handler, raised, call))


def _report(exc: Exception, call: Any) -> None:
    """An exception the last resort answers goes to the log, and to a test client, all the
    same (before the handler runs, so one that raises too hides nothing): Starlette raises it
    again whatever that handler answered, so its test client raises it whatever the status."""
    call.report(exc)
    try:
        exc.__ferrule_last_resort__ = True  # type: ignore[attr-defined]
    except AttributeError:  # an exception class with __slots__ and no __dict__
        pass


def _server_error(answer: Any) -> Response:
    """What the last resort answered, with 500 unless it set a status."""
    return answer if isinstance(answer, Response) else Response(500, None, answer)


async def _server_error_awaited(answer: Awaitable[Any]) -> Response:
    return _server_error(await answer)


async def _recovered_async(chain: Chain, request: Any, exc: Exception, call: Any, *, last_resort_here: bool = True) -> Any:
    """``_recovered`` where hooks and handlers may be ``async def``. With middleware, the last
    resort answers outside it (``last_resort_here`` false): as Starlette's
    ``ServerErrorMiddleware``, it is outermost, so middleware sees the exception raised."""
    if exc is not call.refusal:
        for hook in chain.on_error:
            await _maybe(hook(request, exc))
    handler = chain.registry.handler_for(exc)
    if handler is not None:
        try:
            return await _maybe(handler(request, exc))
        except Exception as raised:
            if not last_resort_here:
                raise  # the last resort answers outside the middleware
            return await _maybe(_handler_raised(chain, request, handler, raised, call))
    last_resort = chain.registry.server_error_handler(exc)
    if not last_resort_here:
        return _default(exc, call)
    if last_resort is None:
        return _unanswered(chain, exc, call)
    _report(exc, call)
    return _server_error(await _maybe(last_resort(request, exc)))


def finish_sync(chain: Chain, call: Any, request: Any, outcome: Any, failed: bool) -> None:
    """The rest of a chain of ``def`` hooks around a ``def`` handler, which the dispatcher runs
    where the request arrived (``on_request``, then ``pre_handler``, then the handler, the
    first to return something answering): ``outcome`` is that answer, or what raised
    (``failed``). ``on_error`` hooks and the exception handler recover; ``on_send`` hooks see
    the response (one that raises is recovered the same way, Fastify's rule, and the answer
    recovered is sent without running ``on_send`` again); then it is sent, and generator
    dependencies are closed."""
    try:
        if failed:
            if not isinstance(outcome, Exception):
                raise outcome
            response = _recovered(chain, request, outcome, call)
            if inspect.isawaitable(response):
                # An `async def` exception handler: it and the rest run as a task, so the
                # chain stays synchronous for every request that does not fail.
                call.answer_later()
                in_background(_finish_awaited(chain, call, request, response))
                return
        else:
            response = outcome
        if chain.on_send:
            try:
                response = _sent(chain, request, response, call)
            except Exception as exc:  # recovered as the handler's failure, not sent again
                response = _recovered(chain, request, exc, call)
                if inspect.isawaitable(response):
                    call.answer_later()
                    in_background(_finish_awaited(chain, call, request, response, sent=True))
                    return
    except BaseException as exc:
        call.fail(exc)
        if not isinstance(exc, Exception):
            raise
        return
    # The rest of the handler's generator dependencies, once the response has gone: for a
    # stream, once its producer has ended.
    if close_with_stream(response, request):
        call.finish(response)
        return
    call.finish(response)
    close_after(request)


def _sent(chain: Chain, request: Any, response: Any, call: Any) -> Response:
    """The ``def`` ``on_send`` hooks' work on ``response``."""
    response = _as_response(response, call.status)
    for hook in chain.on_send:
        replaced = hook(request, response)
        if replaced is not None:
            response = _as_response(replaced, call.status)
    return response


async def _finish_awaited(chain: Chain, call: Any, request: Any, pending: Any, *, sent: bool = False) -> None:
    """``finish_sync``'s end for an answer an ``async def`` exception handler gives."""

    async def respond() -> Any:
        response = await pending
        if chain.on_send and not sent:
            try:
                response = _sent(chain, request, response, call)
            except Exception as exc:  # as in finish_sync
                response = await _recovered_async(chain, request, exc, call)
        return response

    await _settle(call, request, respond())


async def _settle(call: Any, request: Any, producing: Awaitable[Any]) -> None:
    """Answers ``call`` with what ``producing`` gives, or with its failure; then closes the
    request's generator dependencies. A task and the end of a chain of ``def``s alike."""
    try:
        response = await producing
    except asyncio.CancelledError:
        raise  # past its deadline, or cut off by a drain: nobody waits for an answer
    except BaseException as exc:
        call.fail(exc)
        if not isinstance(exc, Exception):
            raise
        return
    if close_with_stream(response, request):
        call.finish(response)
        return
    call.finish(response)
    close_after(request)


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def run_async(chain: Chain, call: Any) -> None:
    """A chain with an ``async def`` in it, or with middleware, or a WebSocket's handshake, as a
    task on the loop."""
    request = call.request()

    async def endpoint(request: Any) -> Response:
        try:
            response = None
            for hook in chain.on_request:
                response = await _maybe(hook(request))
                if response is not None:
                    break
            if response is None and call.refusal is None:
                for hook in chain.pre_handler:
                    response = await _maybe(hook(request))
                    if response is not None:
                        break
            if response is None:
                if handshake:
                    # Let through: the 101 that tells the core to upgrade is no answer of the
                    # app's, so no on_send hook sees it; the handler runs once the socket is open.
                    return call.handle(request)
                response = await _maybe(call.handle(request))
        except Exception as exc:
            response = await _recovered_async(chain, request, exc, call, last_resort_here=here)
        try:
            response = _as_response(response, call.status)
            for hook in chain.on_send:
                replaced = await _maybe(hook(request, response))
                if replaced is not None:
                    response = _as_response(replaced, call.status)
        except Exception as exc:  # as in finish_sync
            response = await _recovered_async(chain, request, exc, call, last_resort_here=here)
        return response

    # A WebSocket's handshake meets the hooks but not ``@app.middleware("http")``, which
    # Starlette's BaseHTTPMiddleware does not run for WebSockets either.
    handshake = call.is_handshake
    middlewares = () if handshake else chain.middleware
    here = not middlewares
    # The last declared middleware runs outermost, as Starlette's.
    handle: Callable[[Any], Awaitable[Response]] = endpoint
    for middleware in middlewares:
        handle = _wrapped(middleware, handle, call)
    if not here and chain.registry.last_resort is not None:
        handle = _outermost(chain, call, handle)
    await _settle(call, request, handle(request))


def _outermost(chain: Chain, call: Any, handle: Callable[[Any], Awaitable[Response]]) -> Callable[[Any], Awaitable[Response]]:
    """The last resort around the middleware, as Starlette's ``ServerErrorMiddleware``."""

    async def answered(request: Any) -> Response:
        try:
            return await handle(request)
        except Exception as exc:
            last_resort = chain.registry.server_error_handler(exc)
            if last_resort is None:
                raise
            _report(exc, call)
            return _server_error(await _maybe(last_resort(request, exc)))

    return answered


def _wrapped(middleware: Callable[..., Any], inner: Callable[[Any], Awaitable[Response]], call: Any) -> Callable[[Any], Awaitable[Response]]:
    async def call_next(request: Any) -> Response:
        response = await inner(request)
        # As Starlette's: the response names its type, so a middleware that reads its
        # `body_iterator` and makes a new response with its headers sends the same type; and
        # its JSON is read as the route writes it.
        response._call = call
        if "content-type" not in response.headers:
            kind = _ferrule.media_type_of(response)
            if kind is not None:
                response.headers["content-type"] = kind
        return response

    async def handle(request: Any) -> Response:
        return _as_response(await middleware(request, call_next), 200)

    return handle
