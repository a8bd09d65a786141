"""``ferrule.testing.TestClient``: the app's whole core stack without a socket, with the call
shape FastAPI users write their tests in."""

from __future__ import annotations

import asyncio
import gc
import warnings
from dataclasses import dataclass
from typing import Any

import pytest

from ferrule import App, EventSourceResponse, File, Form, HTTPException, JSONResponse, RedirectResponse, Request, Response, StreamingResponse, UploadFile
from ferrule.testing import TestClient


@dataclass
class Item:
    name: str
    price: float


def make_app() -> App:
    app = App(compression={"min_size": 10})

    @app.get("/users/{user_id:int}")
    def user(user_id: int, verbose: bool = False) -> dict:
        return {"id": user_id, "verbose": verbose}

    @app.post("/items", status_code=201)
    async def create(item: Item) -> Item:
        return item

    @app.get("/echo-headers")
    def echo_headers(request: Request) -> dict:
        return {"agent": request.header("user-agent"), "host": request.header("host"), "x": request.header("x-token")}

    @app.post("/upload")
    def upload(note: str = Form(), file: UploadFile = File()) -> dict:
        return {"note": note, "name": file.filename, "type": file.content_type, "bytes": file.read().decode()}

    @app.post("/form")
    def form(a: str = Form(), b: int = Form()) -> dict:
        return {"a": a, "b": b}

    @app.get("/login")
    def login(response: Response) -> dict:
        response.set_cookie("session", "abc")
        return {"ok": True}

    @app.get("/whoami")
    def whoami(request: Request) -> dict:
        return {"cookies": dict(request.cookie_items())}

    @app.get("/logout")
    def logout(response: Response) -> dict:
        response.delete_cookie("session")
        return {"ok": True}

    @app.get("/old")
    def old() -> RedirectResponse:
        return RedirectResponse("/users/1?verbose=true")

    @app.get("/boom")
    def boom() -> dict:
        raise LookupError("the database is gone")

    @app.get("/teapot")
    def teapot() -> dict:
        raise HTTPException(418, "short and stout")

    @app.get("/big")
    def big() -> JSONResponse:
        return JSONResponse({"data": "x" * 100})

    @app.get("/rows")
    def rows() -> StreamingResponse:
        return StreamingResponse((f"{i}\n" for i in range(3)), media_type="text/plain")

    @app.get("/slow")
    async def slow() -> dict:
        await asyncio.sleep(0.01)
        return {"slept": True}

    return app


@pytest.fixture(scope="module")
def client() -> TestClient:
    with TestClient(make_app()) as client:
        yield client


def test_a_request_runs_the_route_with_typed_parameters(client: TestClient) -> None:
    response = client.get("/users/7", params={"verbose": True})
    assert response.status_code == 200
    assert response.json() == {"id": 7, "verbose": True}
    assert response.headers["content-type"] == "application/json"
    assert response.is_success


def test_validation_happens_in_the_core_as_on_a_socket(client: TestClient) -> None:
    response = client.get("/users/seven")
    assert response.status_code == 422
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.json()["errors"][0]["loc"] == ["path", "user_id"]
    assert client.get("/nowhere").status_code == 404


def test_json_bodies_and_statuses(client: TestClient) -> None:
    response = client.post("/items", json={"name": "pen", "price": 1.5})
    assert (response.status_code, response.json()) == (201, {"name": "pen", "price": 1.5})
    assert client.post("/items", json={"name": "pen"}).status_code == 422


def test_default_and_given_headers(client: TestClient) -> None:
    seen = client.get("/echo-headers", headers={"X-Token": "t1"}).json()
    assert seen == {"agent": "testclient", "host": "testserver", "x": "t1"}


def test_forms_and_files_are_encoded_as_requests_does(client: TestClient) -> None:
    assert client.post("/form", data={"a": "x", "b": "2"}).json() == {"a": "x", "b": 2}
    uploaded = client.post("/upload", data={"note": "hi"}, files={"file": ("a.txt", b"contents", "text/plain")}).json()
    assert uploaded == {"note": "hi", "name": "a.txt", "type": "text/plain", "bytes": "contents"}


def test_cookies_the_app_sets_are_sent_back_until_deleted() -> None:
    with TestClient(make_app()) as client:
        assert client.get("/login").cookies == {"session": "abc"}
        assert client.get("/whoami").json() == {"cookies": {"session": "abc"}}
        client.get("/logout")
        assert client.get("/whoami").json() == {"cookies": {}}
        assert client.get("/whoami", cookies={"theme": "dark"}).json() == {"cookies": {"theme": "dark"}}


# Found by a probe against Starlette's client: a cookie set for `/admin` went with requests to
# `/public`; `client.cookies.set` and `client.headers.get` raised AttributeError; and
# `raise_for_status()` raised an AssertionError that `except httpx.HTTPStatusError` missed.
def test_the_clients_cookies_keep_their_path_and_its_jar_and_headers_are_httpxs() -> None:
    app = App()

    @app.get("/admin/login")
    def login(response: Response) -> str:
        response.set_cookie("admin_session", "s3cret", path="/admin")
        return "in"

    @app.get("/admin/logout")
    def logout(response: Response) -> str:
        response.delete_cookie("admin_session", path="/admin")
        return "out"

    @app.get("/{area}/whoami")
    def whoami(request: Request, area: str) -> dict:
        return {"cookies": request.cookies, "token": request.headers.get("x-token")}

    with TestClient(app) as client:
        client.get("/admin/login")
        assert client.get("/public/whoami").json()["cookies"] == {}, "a /admin cookie stays under /admin"
        assert client.get("/admin/whoami").json()["cookies"] == {"admin_session": "s3cret"}
        assert client.cookies["admin_session"] == "s3cret"
        client.cookies.set("lang", "fr")
        client.headers["X-Token"] = "t1"
        assert client.headers.get("x-token") == "t1"
        assert client.get("/public/whoami").json() == {"cookies": {"lang": "fr"}, "token": "t1"}
        client.get("/admin/logout")
        assert "admin_session" not in client.cookies
        assert client.get("/admin/whoami").json()["cookies"] == {"lang": "fr"}
        missing = client.get("/nowhere")
        with pytest.raises(AssertionError) as raised:
            missing.raise_for_status()
        assert raised.value.response is missing and raised.value.request is missing.request
    # A cookie set without Path: its default is the directory of the request that set it.
    from ferrule.testing import _default_path

    assert [_default_path(p) for p in ("/admin/login", "/login", "/")] == ["/admin", "/", "/"]


def test_redirects_are_followed_unless_asked_not_to(client: TestClient) -> None:
    followed = client.get("/old")
    assert (followed.status_code, followed.json(), len(followed.history)) == (200, {"id": 1, "verbose": True}, 1)
    stopped = client.get("/old", follow_redirects=False)
    assert (stopped.status_code, stopped.headers["location"]) == (307, "/users/1?verbose=true")


def test_a_handler_exception_is_raised_in_the_test_by_default(client: TestClient) -> None:
    with pytest.raises(LookupError, match="the database is gone"):
        client.get("/boom")
    # An HTTPException is an answer, not a failure.
    assert client.get("/teapot").status_code == 418


def test_a_stream_that_raises_after_its_head_raises_in_the_test_too() -> None:
    """Found by a README-driven probe: the client returned a 200 with the chunks before the
    failure, where the socket server cuts the body off and Starlette's client raises."""
    app = App()

    def produce() -> Any:
        yield "a\n"
        raise LookupError("the cursor is gone")

    @app.get("/broken")
    def broken() -> StreamingResponse:
        return StreamingResponse(produce(), media_type="text/plain")

    with TestClient(app) as client:
        with pytest.raises(LookupError, match="the cursor is gone"):
            client.get("/broken")
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/broken").text == "a\n"


def test_an_event_stream_whose_producer_raises_raises_in_the_test() -> None:
    """Found by a README-driven probe: an event stream ends as if complete when its producer
    raises, so the client returned a 200 and a test of a broken SSE endpoint passed."""
    app = App()

    async def events() -> Any:
        yield {"data": "one"}
        raise LookupError("the feed is gone")

    @app.get("/feed")
    def feed() -> EventSourceResponse:
        return EventSourceResponse(events())

    with TestClient(app) as client:
        with pytest.raises(LookupError, match="the feed is gone"):
            client.get("/feed")
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/feed").text == "data: one\n\n"


def test_without_raising_the_client_gets_the_bare_500() -> None:
    with TestClient(make_app(), raise_server_exceptions=False) as client:
        response = client.get("/boom")
        assert response.status_code == 500
        assert "database" not in response.text
        # The kept exception does not leak into the next request.
        assert client.get("/users/1").status_code == 200


def test_compression_and_streams_go_through_the_core(client: TestClient) -> None:
    compressed = client.get("/big", headers={"accept-encoding": "gzip"})
    assert compressed.headers["content-encoding"] == "gzip"
    assert compressed.json() == {"data": "x" * 100}  # decoded, as httpx does
    assert client.get("/rows").text == "0\n1\n2\n"


def test_the_client_works_from_an_async_test(client: TestClient) -> None:
    async def inside_a_loop() -> dict:
        return client.get("/slow").json()

    assert asyncio.run(inside_a_loop()) == {"slept": True}


def test_one_body_at_a_time(client: TestClient) -> None:
    with pytest.raises(TypeError, match="give one body"):
        client.post("/items", json={}, content=b"x")


def test_a_closed_client_says_so() -> None:
    client = TestClient(make_app())
    client.close()
    client.close()  # twice is fine
    # Found by the suite's own warnings summary: the request's coroutine was left unawaited.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="closed"):
            client.get("/users/1")
        gc.collect()
    assert [str(w.message) for w in caught] == []


def test_json_none_sends_no_body_as_httpx_does() -> None:
    """FastAPI's tests post ``json=None`` to mean no body (httpx's reading); Ferrule sent the
    JSON text ``null``."""
    app = App()

    @app.post("/raw")
    def raw(request: Request) -> dict:
        return {"body": request.raw_body.decode(), "type": request.header("content-type")}

    with TestClient(app) as client:
        assert client.post("/raw", json=None).json() == {"body": "", "type": None}
        assert client.post("/raw", content="null", headers={"content-type": "application/json"}).json() == {"body": "null", "type": "application/json"}


def test_httpx_stream_auth_timeout_and_request_are_taken() -> None:
    # Found by a FastAPI port: `client.stream(...)` with `iter_lines()`, `auth=`, `timeout=` and
    # `response.request` were AttributeErrors or TypeErrors.
    app = App()

    @app.get("/events")
    def events() -> EventSourceResponse:
        return EventSourceResponse(iter([{"data": "one"}, {"data": "two"}]))

    @app.get("/who")
    def who(request: Request) -> dict:
        return {"authorization": request.headers.get("authorization")}

    client = TestClient(app)
    with client.stream("GET", "/events", timeout=5) as response:
        lines = [line for line in response.iter_lines() if line]
    assert lines == ["data: one", "data: two"]
    assert b"".join(response.iter_bytes(3)) == response.read()
    answer = client.get("/who", auth=("ada", "s3cret"), timeout=1.5)
    assert answer.json() == {"authorization": "Basic YWRhOnMzY3JldA=="}
    assert answer.request is not None and answer.request.method == "GET"
    assert answer.request.headers["authorization"] == "Basic YWRhOnMzY3JldA=="
