"""The fixture corpus's handler kinds (fixtures/README.md), written with the Python API.

Each returns only what it received: the typed, validated values the core handed over.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import pathlib
import time
from typing import Any, AsyncIterator, Callable, Iterator

from ferrule import EventSourceResponse, FileResponse, Request, Response, ServerSentEvent, StreamingResponse, UploadFile, WebSocket


def _plain(value: Any) -> Any:
    if isinstance(value, UploadFile):
        data = value.read()
        return {
            "filename": value.filename,
            "content_type": value.content_type,
            "size": value.size,
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def echo(request: Request) -> dict:
    out: dict[str, Any] = {}
    for key, values in (
        ("path", request.path_params),
        ("query", request.query),
        ("headers", request._declared_headers),
        ("cookies", request._declared_cookies),
    ):
        if values:
            out[key] = _plain(values)
    body = request._validated_body
    if isinstance(body, bytes):
        out["body"] = body.decode("utf-8", errors="replace")
    elif body is not None:
        out["body"] = _plain(body)
    return out


def part_headers(request: Request) -> dict:
    def headers(value: Any) -> Any:
        return [headers(v) for v in value] if isinstance(value, list) else value.headers

    body = request._validated_body if isinstance(request._validated_body, dict) else {}
    return {k: headers(v) for k, v in body.items() if isinstance(v, UploadFile) or (isinstance(v, list) and v and isinstance(v[0], UploadFile))}


def result(request: Request) -> Any:
    """The JSON body as the handler's result: the route's declared response schema decides
    what of it is sent."""
    code = request.query.get("status")
    return request._validated_body if code is None else Response(code, body=request._validated_body)


def result_text(request: Request) -> Response:
    """The JSON body as the text it arrived in, sent as JSON: the declared response schema
    still decides what of it is sent."""
    return Response(content=request.raw_body, media_type="application/json")


def status(request: Request) -> Response:
    code = request.path_params["code"]
    return Response(code, body=None if code in (204, 304) else {"status": code})


def fail(request: Request) -> Any:
    raise RuntimeError("SECRET-TOKEN-42 database password")


def sleep(request: Request) -> dict:
    time.sleep(request.query["ms"] / 1000)
    return echo(request)


def repeat(request: Request) -> dict:
    return {"data": request.query["char"] * request.query["n"]}


def text(request: Request) -> str:
    return request.query["text"]


_SERVED = pathlib.Path(os.environ.get("FERRULE_FIXTURES_DIR", pathlib.Path(__file__).resolve().parents[3] / "fixtures")) / "served"


def file(request: Request) -> FileResponse:
    return FileResponse(_SERVED / request.query["name"])


def raw(request: Request) -> dict:
    return {
        "n": request.query.get("n"),
        "query": request.query_items(),
        "extra": request.header("x-extra"),
        "cookies": request.cookie_items(),
        "body": request.raw_body.decode("utf-8", errors="replace"),
    }


def origin(request: Request) -> dict:
    return {"client": request.client.host if request.client else None, "scheme": request.url.scheme, "host": request.url.netloc}


def _chunks(request: Request) -> Iterator[str]:
    for i in range(request.query["n"]):
        yield f"{i}:{request.query['word']}\n"


def _events(request: Request) -> Iterator[Any]:
    start = int(request.header("last-event-id") or 0)
    word = request.query["word"]
    for i in range(request.query["n"]):
        yield ServerSentEvent({"i": i, "word": word}, event="tick", id=start + i + 1)
    yield word


def _partial_then_fail(item: Any) -> Iterator[Any]:
    yield item
    raise RuntimeError("SECRET-TOKEN-42 database password")


def stream(request: Request) -> StreamingResponse:
    return StreamingResponse(_chunks(request))


def events(request: Request) -> EventSourceResponse:
    return EventSourceResponse(_events(request))


def stream_fail(request: Request) -> StreamingResponse:
    return StreamingResponse(_partial_then_fail("partial"))


def events_fail(request: Request) -> EventSourceResponse:
    return EventSourceResponse(_partial_then_fail("partial"))


async def _async_items(items: Iterator[Any]) -> AsyncIterator[Any]:
    for item in items:
        await asyncio.sleep(0)  # really suspend between items
        yield item


async def _async_stream(request: Request) -> StreamingResponse:
    return StreamingResponse(_async_items(_chunks(request)))


async def _async_events(request: Request) -> EventSourceResponse:
    return EventSourceResponse(_async_items(_events(request)))


async def _async_stream_fail(request: Request) -> StreamingResponse:
    return StreamingResponse(_async_items(_partial_then_fail("partial")))


async def _async_events_fail(request: Request) -> EventSourceResponse:
    return EventSourceResponse(_async_items(_partial_then_fail("partial")))


SYNC: dict[str, Callable[[Request], Any]] = {
    "echo": echo,
    "status": status,
    "fail": fail,
    "sleep": sleep,
    "repeat": repeat,
    "text": text,
    "file": file,
    "raw": raw,
    "origin": origin,
    "part_headers": part_headers,
    "result": result,
    "result_text": result_text,
    "stream": stream,
    "events": events,
    "stream_fail": stream_fail,
    "events_fail": events_fail,
}


def _as_async(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
    async def run(request: Request) -> Any:
        await asyncio.sleep(0)  # really suspend, so the reply comes from a task's callback
        return handler(request)

    run.__name__ = f"async_{handler.__name__}"
    return run


async def _async_sleep(request: Request) -> dict:
    await asyncio.sleep(request.query["ms"] / 1000)
    return echo(request)


async def socket_echo(request: Request, ws: WebSocket) -> None:
    """What the request carried and the subprotocol, then every message back in kind; ``close
    CODE`` closes with that code, ``raise`` fails as ``fail`` does."""
    await ws.send_json({**echo(request), "subprotocol": ws.subprotocol})
    async for message in ws:
        if message == "raise":
            fail(request)
        if isinstance(message, str) and message.startswith("close "):
            await ws.close(int(message[6:]), "requested")
            return
        await ws.send(message)


SYNC["socket_echo"] = socket_echo
ASYNC: dict[str, Callable[[Request], Any]] = {name: _as_async(h) for name, h in SYNC.items() if name != "socket_echo"}
ASYNC["socket_echo"] = socket_echo
ASYNC["sleep"] = _async_sleep
# The async flavour streams from async generators.
ASYNC.update(stream=_async_stream, events=_async_events, stream_fail=_async_stream_fail, events_fail=_async_events_fail)


# -- the hook setups of fixtures/README.md ("Hooks"), in FastAPI's idiom ---------------------


def install_hooks(app: Any, names: list[str], *, asynchronous: bool) -> None:
    """Registers each named setup on ``app``, in order; ``asynchronous`` uses ``async def``
    hooks (the chain then runs as a task)."""
    from ferrule import JSONResponse, RequestValidationError

    def hook(func: Callable[..., Any]) -> Callable[..., Any]:
        if not asynchronous:
            return func

        async def run(*args: Any) -> Any:
            return func(*args)

        return run

    for name in names:
        if name == "trace":

            def start(request: Request) -> None:
                request.state.trace = ["on_request"]

            def middle(request: Request) -> None:
                request.state.trace.append("pre_handler")

            def end(request: Request, response: Response) -> None:
                trace = [*getattr(request.state, "trace", []), "on_send"]
                response.headers["x-trace"] = ",".join(trace)

            app.add_hook("on_request", hook(start))
            app.add_hook("pre_handler", hook(middle))
            app.add_hook("on_send", hook(end))
        elif name == "key_required":

            def key_required(request: Request) -> Any:
                if request.header("x-key") is None:
                    return JSONResponse({"error": "key required"}, status_code=401)
                return None

            app.add_hook("on_request", hook(key_required))
        elif name == "invalid_is_400":

            def invalid(request: Request, exc: RequestValidationError) -> Any:
                return JSONResponse({"invalid": [".".join(map(str, e["loc"])) for e in exc.errors()]}, status_code=400)

            app.add_exception_handler(RequestValidationError, hook(invalid))
        elif name == "missing_is_404":

            def missing(request: Request, exc: Exception) -> Any:
                return JSONResponse({"missing": request.path}, status_code=404)

            app.add_exception_handler(404, hook(missing))
        else:
            raise ValueError(f"unknown hook setup {name!r}")
