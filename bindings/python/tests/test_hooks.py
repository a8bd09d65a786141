"""Hooks, middleware, exception handlers, routers and the app's life cycle, as FastAPI and
Fastify users write them; run through the in-process TestClient (nothing here needs a socket)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from typing import Any, AsyncIterator, Optional

import pytest

from ferrule import (
    App,
    HTTPException,
    JSONResponse,
    Request,
    RequestValidationError,
    Response,
    Router,
    StartupFailed,
    StreamingResponse,
)
from ferrule.testing import TestClient


def test_hooks_run_in_fastifys_order_around_the_handler() -> None:
    app = App()
    seen: list[str] = []

    @app.on_request
    def first(request: Request) -> None:
        seen.append(f"on_request {request.method} {request.path}")

    @app.pre_handler
    def second(request: Request) -> None:
        seen.append(f"pre_handler {request.path_params}")

    @app.get("/items/{item_id:int}")
    def item(item_id: int) -> dict:
        seen.append("handler")
        return {"id": item_id}

    @app.on_send
    def last(request: Request, response: Response) -> None:
        seen.append(f"on_send {response.status_code}")
        response.headers["x-hooked"] = "yes"

    with TestClient(app) as client:
        response = client.get("/items/3")
    assert (response.status_code, response.json(), response.headers["x-hooked"]) == (200, {"id": 3}, "yes")
    assert seen == ["on_request GET /items/3", "pre_handler {'item_id': 3}", "handler", "on_send 200"]


def test_a_hook_answers_the_request_itself_and_the_handler_never_runs() -> None:
    app = App()
    called: list[str] = []

    @app.on_request
    def authenticate(request: Request) -> Optional[Response]:
        if request.header("authorization") != "Bearer good":
            raise HTTPException(401, "who are you?", headers={"www-authenticate": "Bearer"})
        request.state.user = "ada"
        return None

    @app.pre_handler
    def rate_limit(request: Request) -> Any:
        if request.header("x-too-many") is not None:
            return JSONResponse({"slow": "down"}, status_code=429)
        return None

    @app.get("/me")
    def me(request: Request) -> dict:
        called.append("me")
        return {"user": request.state.user}

    with TestClient(app) as client:
        refused = client.get("/me")
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"
        assert refused.json()["detail"] == "who are you?"
        assert client.get("/me", headers={"authorization": "Bearer good", "x-too-many": "1"}).json() == {"slow": "down"}
        assert called == []
        assert client.get("/me", headers={"authorization": "Bearer good"}).json() == {"user": "ada"}
        assert called == ["me"]


def test_on_request_sees_requests_the_core_refused_and_no_route_takes() -> None:
    app = App()
    seen: list[str] = []

    @app.on_request
    def log(request: Request) -> None:
        seen.append(f"{request.method} {request.path}")

    @app.get("/items/{item_id:int}")
    def item(item_id: int) -> dict:
        return {"id": item_id}

    with TestClient(app) as client:
        invalid = client.get("/items/seven")
        missing = client.get("/nowhere")
        wrong = client.delete("/items/1")
    assert (invalid.status_code, missing.status_code, wrong.status_code) == (422, 404, 405)
    assert invalid.json()["errors"][0]["loc"] == ["path", "item_id"]  # the core's answer, unchanged
    assert wrong.headers["allow"] == "GET, HEAD"
    assert seen == ["GET /items/seven", "GET /nowhere", "DELETE /items/1"]


def test_async_hooks_and_handlers_mix() -> None:
    app = App()

    @app.on_request
    async def slow_auth(request: Request) -> None:
        await asyncio.sleep(0)
        request.state.who = "async"

    @app.get("/sync")
    def sync_handler(request: Request) -> dict:
        return {"who": request.state.who}

    @app.get("/async")
    async def async_handler(request: Request) -> dict:
        await asyncio.sleep(0)
        return {"who": request.state.who}

    @app.on_send
    async def stamp(request: Request, response: Response) -> Response:
        return JSONResponse({"wrapped": response.body}, status_code=response.status_code)

    with TestClient(app) as client:
        assert client.get("/sync").json() == {"wrapped": {"who": "async"}}
        assert client.get("/async").json() == {"wrapped": {"who": "async"}}


def test_exception_handlers_by_class_and_by_status() -> None:
    app = App()

    class OutOfStock(Exception):
        def __init__(self, item: str) -> None:
            self.item = item

    @app.exception_handler(OutOfStock)
    def out_of_stock(request: Request, exc: OutOfStock) -> JSONResponse:
        return JSONResponse({"detail": f"{exc.item} is out of stock"}, status_code=409)

    @app.exception_handler(LookupError)
    def lookup(request: Request, exc: LookupError) -> JSONResponse:
        return JSONResponse({"detail": "not here"}, status_code=404)

    @app.exception_handler(404)
    def not_found(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"missing": request.path}, status_code=404)

    @app.get("/buy/{item}")
    def buy(item: str) -> dict:
        raise OutOfStock(item)

    @app.get("/find")
    def find() -> dict:
        raise KeyError("x")  # a LookupError: the nearest handler in its class's MRO

    @app.get("/fails")
    def fails() -> dict:
        raise RuntimeError("SECRET")

    @app.get("/teapot")
    def teapot() -> dict:
        raise HTTPException(418, "short and stout")

    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/buy/pen").json() == {"detail": "pen is out of stock"}
        assert client.get("/buy/pen").status_code == 409
        assert client.get("/find").json() == {"detail": "not here"}
        assert client.get("/nowhere").json() == {"missing": "/nowhere"}  # the core's 404, handled in Python
        failed = client.get("/fails")
        assert failed.status_code == 500 and "SECRET" not in failed.text
        teapot = client.get("/teapot")
        assert (teapot.status_code, teapot.json()["detail"]) == (418, "short and stout")


@pytest.mark.parametrize("kind", ["def", "async def"])
def test_on_send_sees_the_bare_500_of_an_exception_nothing_handles(kind: str, caplog: pytest.LogCaptureFixture) -> None:
    # Fastify's onSend (and Node's here) sees its error replies; Python's skipped this one, so a
    # header every response should carry was missing from the 500s.
    app = App()
    seen: list = []

    def stamp(request: Request, response: Response) -> None:
        seen.append(response.status_code)
        response.headers["x-served-by"] = "ferrule"

    async def stamp_async(request: Request, response: Response) -> None:
        stamp(request, response)

    app.add_hook("on_send", stamp if kind == "def" else stamp_async)

    @app.get("/err")
    def err() -> dict:
        raise ValueError("SECRET-TOKEN-42")

    with TestClient(app, raise_server_exceptions=False) as client:
        answer = client.get("/err")
        assert (answer.status_code, answer.headers.get("x-served-by"), answer.headers["content-type"]) == (500, "ferrule", "application/problem+json")
        assert answer.json() == {"type": "about:blank", "title": "Internal Server Error", "status": 500, "detail": "The server could not complete the request."}
    assert seen == [500]
    assert "GET /err raised an exception" in caplog.text and "SECRET-TOKEN-42" in caplog.text, "logged with its traceback"
    # And an in-process client still gets it raised, as Starlette's does.
    with TestClient(app) as client:
        with pytest.raises(ValueError, match="SECRET-TOKEN-42"):
            client.get("/err")


@pytest.mark.parametrize("kind", ["def", "async def"])
def test_an_on_send_hook_that_raises_is_recovered_by_on_error_and_the_exception_handler(kind: str) -> None:
    app = App()
    seen: list[str] = []

    class Refused(Exception):
        pass

    def on_send(request: Request, response: Response) -> None:
        seen.append("on_send")
        if request.path == "/refused":
            raise Refused()
        if request.path == "/http":
            raise HTTPException(409, "taken")

    async def on_send_async(request: Request, response: Response) -> None:
        on_send(request, response)

    app.add_hook("on_send", on_send if kind == "def" else on_send_async)

    @app.on_error
    def record(request: Request, exc: Exception) -> None:
        seen.append(f"on_error {type(exc).__name__}")

    @app.exception_handler(Refused)
    def refused(request: Request, exc: Refused) -> JSONResponse:
        return JSONResponse({"refused": request.path}, status_code=403)

    @app.get("/{name}")
    def answer(name: str) -> dict:
        return {"name": name}

    with TestClient(app) as client:
        assert (client.get("/refused").status_code, client.get("/refused").json()) == (403, {"refused": "/refused"})
        http = client.get("/http")
        assert (http.status_code, http.json()["detail"]) == (409, "taken")
    # The recovered answer is sent as it is: on_send does not run for it a second time.
    assert seen == ["on_send", "on_error Refused"] * 2 + ["on_send", "on_error HTTPException"]


def test_async_exception_handlers_answer_the_cores_refusals_and_a_def_routes_errors() -> None:
    """Found by running FastAPI's handling-errors tutorial tests: an ``async def`` handler for
    the core's 422 or 404, or for what a ``def`` route raised, was never awaited (a 500)."""
    app = App()

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        await asyncio.sleep(0)
        return JSONResponse({"detail": exc.errors(), "body": exc.body}, status_code=400)

    @app.exception_handler(404)
    async def missing(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"missing": request.path}, status_code=404)

    @app.exception_handler(LookupError)
    async def lookup(request: Request, exc: LookupError) -> JSONResponse:
        return JSONResponse({"lookup": str(exc)}, status_code=409)

    @app.post("/items/{item_id:int}")
    def create(item_id: int, body: dict) -> dict:
        raise KeyError("taken")

    @app.get("/fine")
    def fine() -> dict:
        # An async exception handler is awaited only for a request that fails: a def route's
        # chain stays synchronous, run where the request arrived (no task of its own).
        return {"in_task": asyncio.current_task() is not None}

    with TestClient(app) as client:
        invalid_answer = client.post("/items/x", json={"title": "towel", "size": "XL"})
        assert invalid_answer.status_code == 400
        # FastAPI's tutorial sends the parsed body back: it must be JSON, not bytes.
        assert invalid_answer.json()["body"] == {"title": "towel", "size": "XL"}
        assert invalid_answer.json()["detail"][0]["loc"] == ["path", "item_id"]
        assert client.get("/nowhere").json() == {"missing": "/nowhere"}
        raised = client.post("/items/1", json={})
        assert (raised.status_code, raised.json()) == (409, {"lookup": "'taken'"})
        assert client.get("/fine").json() == {"in_task": False}


def test_a_validation_errors_body_is_parsed_json_else_as_sent() -> None:
    assert RequestValidationError([], body=b'{"a": [1]}').body == {"a": [1]}
    assert RequestValidationError([], body=b'{"a": ').body == '{"a": '
    assert RequestValidationError([], body=b"\xff").body == b"\xff"
    assert RequestValidationError([], body=b"").body is None
    assert RequestValidationError([], body=b"{}").raw_body == b"{}"


def test_a_handler_for_validation_errors_sees_the_cores_errors() -> None:
    app = App()

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"problems": [".".join(map(str, e["loc"])) for e in exc.errors()], "sent": exc.body}, status_code=400)

    @app.post("/items")
    def create(name: str, price: float) -> dict:  # query parameters
        return {"name": name, "price": price}

    with TestClient(app) as client:
        response = client.post("/items?price=cheap", content=b"raw")
    assert response.status_code == 400
    assert response.json() == {"problems": ["query.name", "query.price"], "sent": "raw"}


def test_middleware_wraps_everything_and_may_change_the_response() -> None:
    app = App()
    order: list[str] = []

    @app.middleware("http")
    async def inner(request: Request, call_next: Any) -> Response:
        order.append("inner in")
        response = await call_next(request)
        order.append("inner out")
        response.headers["x-inner"] = "1"
        return response

    @app.middleware("http")
    async def outer(request: Request, call_next: Any) -> Response:
        order.append("outer in")
        response = await call_next(request)
        order.append("outer out")
        response.headers["x-outer"] = str(response.status_code)
        return response

    @app.get("/hello")
    def hello() -> str:
        order.append("handler")
        return "hi"

    with TestClient(app) as client:
        response = client.get("/hello")
        assert (response.text, response.headers["x-inner"], response.headers["x-outer"]) == ("hi", "1", "200")
        assert order == ["outer in", "inner in", "handler", "inner out", "outer out"]
        assert client.get("/nowhere").headers["x-outer"] == "404"  # a 404 is a response to middleware


# Found by a probe: `response.body_iterator`, how a Starlette middleware reads the body it logs,
# was missing (an AttributeError, a 500), for every kind of response.
@dataclasses.dataclass
class UserOut:
    name: str


def test_middleware_reads_the_body_iterator_as_the_route_would_send_it() -> None:
    app = App()
    logged: list[bytes] = []

    @app.middleware("http")
    async def log_body(request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        body = b"".join([chunk async for chunk in response.body_iterator])
        logged.append(body)
        return Response(content=body, status_code=response.status_code, headers=dict(response.headers))

    @app.get("/user", response_model=UserOut)
    def user() -> dict:
        return {"name": "ada", "password": "secret"}

    @app.get("/text")
    def text() -> str:
        return "plain"

    @app.get("/stream")
    def stream() -> StreamingResponse:
        return StreamingResponse(iter(["a", b"b"]), media_type="text/csv")

    @app.get("/bytes")
    def raw() -> bytes:
        return b"\x00\x01"

    @app.get("/html")
    def html() -> Response:
        return Response("<p>hi</p>", media_type="text/html")

    with TestClient(app) as client:
        user_response = client.get("/user")
        assert (user_response.status_code, user_response.headers["content-type"], user_response.json()) == (200, "application/json", {"name": "ada"})
        assert b"secret" not in logged[-1], "the response schema applies to what is read"
        text_response = client.get("/text")
        assert (text_response.text, text_response.headers["content-type"]) == ("plain", "text/plain; charset=utf-8")
        streamed = client.get("/stream")
        assert (streamed.text, streamed.headers["content-type"]) == ("ab", "text/csv; charset=utf-8")
        raw_response = client.get("/bytes")
        assert (raw_response.content, raw_response.headers["content-type"]) == (b"\x00\x01", "application/octet-stream")
        html_response = client.get("/html")
        assert (html_response.text, html_response.headers["content-type"]) == ("<p>hi</p>", "text/html; charset=utf-8")
        missing = client.get("/nowhere")
        assert (missing.status_code, missing.headers["content-type"]) == (404, "application/problem+json")
        assert logged[-1] == missing.content


# Found by a README walk: `@app.exception_handler(500)` never ran for an exception no other
# handler took (the client got the bare 500), and a handler for Exception hid the exception
# from the log. Starlette runs either as its last resort, then raises the exception again.
@pytest.mark.parametrize(("key", "kind"), [(500, "def"), (500, "async def"), (Exception, "def"), (Exception, "async def")])
def test_a_handler_for_500_or_exception_answers_what_nothing_else_takes_and_the_exception_is_still_logged(
    key: Any, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = App()
    seen: list[str] = []

    def answer(request: Request, exc: Exception) -> Any:
        seen.append(type(exc).__name__)
        if request.path == "/plain":
            return {"detail": "sorry"}  # a plain value goes out with 500
        return JSONResponse({"detail": "sorry", "path": request.path}, status_code=503)

    async def answer_async(request: Request, exc: Exception) -> Any:
        await asyncio.sleep(0)
        return answer(request, exc)

    app.add_exception_handler(key, answer if kind == "def" else answer_async)

    @app.exception_handler(LookupError)
    def lookup(request: Request, exc: LookupError) -> JSONResponse:
        return JSONResponse({"detail": "not here"}, status_code=404)

    @app.get("/fails")
    def fails() -> dict:
        raise RuntimeError("SECRET")

    @app.get("/plain")
    async def plain() -> dict:
        raise ZeroDivisionError("SECRET")

    @app.get("/find")
    def find() -> dict:
        raise KeyError("x")

    @app.get("/teapot")
    def teapot() -> dict:
        raise HTTPException(418, "short and stout")

    @app.get("/http-500")
    def http_500() -> dict:
        raise HTTPException(500, "its own")  # an HTTP error: never the last resort's (Starlette)

    with TestClient(app, raise_server_exceptions=False) as client:
        own = client.get("/http-500")
        assert (own.status_code, own.json()["detail"]) == (500, "its own")
        failed = client.get("/fails")
        assert (failed.status_code, failed.json()) == (503, {"detail": "sorry", "path": "/fails"})
        plain = client.get("/plain")
        assert (plain.status_code, plain.json()) == (500, {"detail": "sorry"})
        # Nearer handlers, and HTTP errors' own answers, come first.
        assert client.get("/find").json() == {"detail": "not here"}
        assert client.get("/teapot").status_code == 418
        assert client.get("/nowhere").status_code == 404
    assert seen == ["RuntimeError", "ZeroDivisionError"]
    logged = [r for r in caplog.records if r.name == "ferrule.handler" and r.exc_info]
    assert [r.exc_info[0] for r in logged] == [RuntimeError, ZeroDivisionError]  # type: ignore[index]
    assert "SECRET" not in failed.text + plain.text
    # As Starlette's, a test client raises it after the handler answered, whatever the status.
    with TestClient(app) as client:
        with pytest.raises(RuntimeError, match="SECRET"):
            client.get("/fails")


def watch_for_division_by_zero(app: App, seen: list[str]) -> None:
    """Middleware that notes a ZeroDivisionError raised through it, and lets it go on."""

    @app.middleware("http")
    async def watch(request: Request, call_next: Any) -> Response:
        try:
            return await call_next(request)
        except ZeroDivisionError:
            seen.append("raised through")
            raise


# Found by review: with middleware, Starlette's last resort is outermost (middleware sees the
# exception raised); a last resort that raises itself hides nothing from the log.
def test_the_last_resort_answers_outside_middleware_and_one_that_raises_hides_nothing(caplog: pytest.LogCaptureFixture) -> None:
    app = App()
    seen: list[str] = []

    watch_for_division_by_zero(app, seen)

    @app.exception_handler(Exception)
    def last_resort(request: Request, exc: Exception) -> Any:
        if request.path == "/worse":
            raise LookupError("the handler's own")
        return JSONResponse({"detail": "sorry"}, status_code=200)

    @app.get("/divide")
    def divide() -> dict:
        return {"x": 1 / 0}

    @app.get("/worse")
    def worse() -> dict:
        raise ZeroDivisionError("first")

    with TestClient(app, raise_server_exceptions=False) as client:
        answered = client.get("/divide")
        assert (answered.status_code, answered.json()) == (200, {"detail": "sorry"})
        assert client.get("/worse").status_code == 500
    assert seen == ["raised through", "raised through"]
    logged = [r.exc_info[0] for r in caplog.records if r.name == "ferrule.handler" and r.exc_info]  # type: ignore[index]
    assert logged == [ZeroDivisionError, ZeroDivisionError, LookupError]
    with TestClient(app) as client:
        with pytest.raises(ZeroDivisionError):
            client.get("/divide")  # a 200, raised all the same, as Starlette's client does


def test_an_exception_no_handler_takes_goes_through_middleware_to_a_bare_500() -> None:
    app = App()
    seen: list[str] = []

    watch_for_division_by_zero(app, seen)

    @app.on_error
    def report(request: Request, exc: Exception) -> None:
        seen.append(f"on_error {type(exc).__name__}")

    @app.get("/divide")
    def divide() -> dict:
        return {"x": 1 / 0}

    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/divide").status_code == 500
    assert seen == ["on_error ZeroDivisionError", "raised through"]


def test_router_hooks_run_only_for_its_own_routes_after_the_apps() -> None:
    app = App()
    order: list[str] = []
    admin = Router(prefix="/admin", tags=["admin"])

    @app.on_request
    def everyone(request: Request) -> None:
        order.append(f"app {request.path}")

    @admin.on_request
    def admins(request: Request) -> None:
        order.append(f"admin {request.path}")

    @admin.get("/stats")
    def stats() -> dict:
        return {"users": 3}

    @app.get("/public")
    def public() -> dict:
        return {"open": True}

    app.include_router(admin, prefix="/api")
    with TestClient(app) as client:
        assert client.get("/api/admin/stats").json() == {"users": 3}
        assert client.get("/public").json() == {"open": True}
        assert client.get("/api/admin/missing").status_code == 404
    assert order == ["app /api/admin/stats", "admin /api/admin/stats", "app /public", "app /api/admin/missing", "admin /api/admin/missing"]
    assert app.openapi()["paths"]["/api/admin/stats"]["get"]["tags"] == ["admin"]


def test_lifespan_and_startup_callbacks_run_once_around_serving() -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[None]:
        events.append("lifespan start")
        yield
        events.append("lifespan stop")

    app = App(lifespan=lifespan, on_startup=[lambda: events.append("startup")])

    @app.on_event("shutdown")
    async def closed() -> None:
        events.append("shutdown")

    @app.get("/events")
    def listed() -> list:
        return list(events)

    with TestClient(app) as client:
        assert client.get("/events").json() == ["startup", "lifespan start"]
    assert events == ["startup", "lifespan start", "lifespan stop", "shutdown"]


def test_a_failing_startup_stops_the_app_before_it_serves() -> None:
    def broken() -> None:
        raise ConnectionError("the database is down")

    app = App(on_startup=[broken])
    with pytest.raises(StartupFailed, match="ConnectionError: the database is down"):
        with TestClient(app):
            pass


def test_a_misspelled_hook_phase_names_the_nearest() -> None:
    app = App()
    with pytest.raises(ValueError, match=r"unknown hook on_sned \(did you mean on_send\?\)"):
        app.add_hook("on_sned", lambda request, response: None)
    with pytest.raises(TypeError, match="middleware is an async def"):
        app.middleware("http")(lambda request, call_next: None)


def test_run_exits_with_one_line_and_status_3_when_startup_fails() -> None:
    import subprocess
    import sys

    code = (
        "from ferrule import App\n"
        "def broken():\n"
        "    raise ConnectionError('the database is down')\n"
        "App(on_startup=[broken]).run(port=0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 3, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == "ferrule: startup failed: ConnectionError: the database is down"
    assert "in broken" in result.stderr  # the traceback of what raised, above it
