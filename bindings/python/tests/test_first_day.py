"""What a FastAPI user tries on the first day, each of which once went wrong: Express-style
``:id`` segments, a route declared twice, a busy port, header lists, and statuses or headers
that cannot be sent."""

from __future__ import annotations

import datetime

import enum
import os
import pathlib
import re
import socket
import subprocess
import sys
from typing import Annotated, Any, Optional

import pytest
from pydantic import BaseModel

from ferrule import App, BackgroundTasks, Cookie, Depends, File, Form, HTTPException, JSONResponse, Query, RedirectResponse, Request, Response, StaticFiles, UploadFile, WebSocket
from ferrule.testing import TestClient

from support import request, serving

HERE = pathlib.Path(__file__).resolve().parent


def test_a_colon_segment_is_a_parameter_and_a_clash_fails_at_its_decorator() -> None:
    app = App()

    @app.get("/users/:id")
    def user(id: str) -> dict:
        return {"id": id}

    with pytest.raises(ValueError, match=r"GET /users/\{id\} is declared twice"):

        @app.get("/users/{id}")
        def again(id: str) -> str:
            return id

    with pytest.raises(ValueError, match=r"matches the same paths as /users/\{id\}"):

        @app.post("/users/{name}")
        def other(name: str) -> str:
            return name

    with serving(app) as port:
        assert request(port, "GET", "/users/ada").json() == {"id": "ada"}


def test_a_busy_port_is_one_line_and_status_1_with_or_without_workers() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        for workers in ("1", "2"):
            done = subprocess.run(
                [sys.executable, "-m", "ferrule", "workers_app:app", "--port", str(port), "--workers", workers],
                cwd=HERE,
                capture_output=True,
                timeout=60,
                env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])},
            )
            lines = done.stderr.decode().splitlines()
            assert done.returncode == 1, lines
            assert len(lines) == 1 and lines[0].startswith(f"ferrule: cannot listen on 127.0.0.1:{port}: "), lines
            assert "in use" in lines[0], lines


def test_header_lists_repeat_and_what_cannot_be_sent_is_a_bare_500() -> None:
    app = App()

    @app.get("/cookies")
    def cookies() -> Response:
        return Response(200, {"set-cookie": ["a=1; Path=/", "b=2; Path=/"], "x-one": "1"}, "ok")

    @app.get("/wraps")
    def wraps() -> None:
        raise HTTPException(65736, "a 16-bit cast would send 200")

    @app.get("/bad-header")
    def bad_header() -> None:
        raise HTTPException(401, "who?", {"www-authenticate": "a\nb"})

    @app.get("/teapot")
    def teapot() -> None:
        raise HTTPException(418, "short and stout", {"retry-after": ["5"]})

    with serving(app) as port:
        reply = request(port, "GET", "/cookies")
        assert reply.header_values("set-cookie") == ["a=1; Path=/", "b=2; Path=/"]
        assert reply.headers["x-one"] == "1"
        for path in ("/wraps", "/bad-header"):
            failed = request(port, "GET", path)
            assert failed.status == 500, path
            assert b"16-bit" not in failed.body and b"who?" not in failed.body
        teapot = request(port, "GET", "/teapot")
        assert (teapot.status, teapot.headers["retry-after"], teapot.json()["detail"]) == (418, "5", "short and stout")


class Colour(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_fastapi_response_helpers() -> None:
    app = App()

    @app.get("/colours/{colour}")
    def colour(colour: Colour) -> dict:
        return {"colour": colour.value, "member": type(colour).__name__}

    @app.post("/login", status_code=201)
    def login(response: Response) -> dict:
        response.set_cookie("session", "abc", httponly=True, max_age=60)
        response.set_cookie("theme", "dark")
        response.headers = [*response._header_pairs(), ("x-login", "yes")]
        return {"ok": True}

    @app.get("/teapot")
    async def teapot(response: Response) -> str:
        response.status_code = 418
        return "short and stout"

    @app.get("/old")
    def old() -> RedirectResponse:
        return RedirectResponse("/new")

    @app.get("/json-string")
    def json_string() -> JSONResponse:
        return JSONResponse("hi", status_code=202)

    @app.post("/upload")
    async def upload(file: UploadFile = File()) -> dict:
        data = await file.read()
        # Starlette's file position: read again from the start after seek(0), with or without await.
        rest = file.read()
        await file.seek(0)
        return {"size": len(data), "same": data == file.read() and rest == b""}

    @app.post("/raw")
    async def raw(request: Request) -> dict:
        return {"raw": request.raw_body.decode()}

    with serving(app) as port:
        assert request(port, "GET", "/colours/red").json() == {"colour": "red", "member": "Colour"}
        assert request(port, "GET", "/colours/green").status == 422
        login_reply = request(port, "POST", "/login")
        assert login_reply.status == 201 and login_reply.json() == {"ok": True}
        assert login_reply.header_values("set-cookie") == ["session=abc; Max-Age=60; Path=/; HttpOnly; SameSite=Lax", "theme=dark; Path=/; SameSite=Lax"]
        assert login_reply.headers["x-login"] == "yes"
        teapot_reply = request(port, "GET", "/teapot")
        assert (teapot_reply.status, teapot_reply.text) == (418, "short and stout")
        redirect = request(port, "GET", "/old")
        assert (redirect.status, redirect.headers["location"]) == (307, "/new")
        json_reply = request(port, "GET", "/json-string")
        assert (json_reply.status, json_reply.headers["content-type"], json_reply.body) == (202, "application/json", b'"hi"')
        boundary = "XyZ"
        form = f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--{boundary}--\r\n"
        uploaded = request(port, "POST", "/upload", body=form.encode(), headers={"content-type": f"multipart/form-data; boundary={boundary}"})
        assert uploaded.json() == {"size": 5, "same": True}
        assert request(port, "POST", "/raw", body=b"as sent", headers={"content-type": "text/plain"}).json() == {"raw": "as sent"}


def test_headers_cookies_and_details_as_fastapi_code_writes_them() -> None:
    """Found by a README-driven probe: ``response.headers[...] = ...`` was a 500, a cookie value
    could add attributes of its own, and a dict detail was a 500."""
    app = App()

    @app.get("/header")
    def header(response: Response) -> dict:
        response.headers["x-h"] = "v"
        response.set_cookie("k", "x; Domain=evil.example; Max-Age=99999")
        response.headers.append("x-h2", "w")
        return {"ok": True}

    @app.get("/made")
    def made() -> Response:
        made = Response(content="x", media_type="text/plain")
        made.headers["x-c"] = "1"
        return made

    @app.get("/detail")
    def detail() -> None:
        raise HTTPException(400, {"code": 1, "why": ["x"]})

    with pytest.raises(ValueError, match="not a cookie name"):
        Response().set_cookie("a b", "1")
    with pytest.raises(ValueError, match="holds a ';'"):
        Response().set_cookie("a", "1", path="/; Domain=evil")

    with serving(app) as port:
        reply = request(port, "GET", "/header")
        assert (reply.status, reply.headers["x-h"], reply.headers["x-h2"]) == (200, "v", "w")
        assert reply.header_values("set-cookie") == ['k="x\\073 Domain=evil.example\\073 Max-Age=99999"; Path=/; SameSite=Lax']
        made_reply = request(port, "GET", "/made")
        assert (made_reply.text, made_reply.headers["x-c"]) == ("x", "1")
        detail_reply = request(port, "GET", "/detail")
        assert (detail_reply.status, detail_reply.json()["detail"]) == (400, {"code": 1, "why": ["x"]})


def test_a_cookie_set_with_characters_it_cannot_hold_reads_back_as_set() -> None:
    """Found by a README-driven probe: set_cookie quotes and escapes (``"a b\\073c"``), as
    Starlette's does, and the value read back kept the escapes."""
    app = App()

    @app.get("/set")
    def set_it(response: Response) -> None:
        response.set_cookie("s", 'a b;c "q"')

    @app.get("/read")
    def read(s: str = Cookie()) -> dict:
        return {"s": s}

    with TestClient(app) as client:
        client.get("/set")
        assert client.get("/read").json() == {"s": 'a b;c "q"'}


def test_options_are_the_cores_and_a_misspelling_names_the_nearest() -> None:
    import inspect

    from ferrule import _ferrule

    # Besides the core's settings, only the app's own life cycle and dependencies (Python
    # callables), Starlette's middleware list (which sets the core's cors and compression) and
    # FastAPI's default_response_class (which wraps results in Python), and its responses and
    # deprecated (which each route's spec carries). One has uvicorn's name: forwarded_allow_ips
    # is the core's trusted_proxies.
    settings = set(inspect.signature(App.__init__).parameters) - {"self", "lifespan", "on_startup", "on_shutdown", "dependencies", "middleware", "default_response_class", "responses", "deprecated"}
    settings = {"trusted_proxies" if name == "forwarded_allow_ips" else name for name in settings}
    assert settings == set(_ferrule.app_setting_names()), "App's keyword arguments are the core's settings"
    app = App()
    with pytest.raises(TypeError, match=r"^unknown route option body_limt \(did you mean body_limit\?\)$"):
        app.get("/x", body_limt=5)
    with pytest.raises(TypeError, match=r"^unknown route option websocket \(known: "):
        app.get("/ws", websocket=True)


# Found by FastAPI's corpus (test_query.py asks `/query/list/?device_ids=1` of a route declared
# `/query/list`): Starlette answers 307 to the declared path, and Ferrule answered 404.
def test_a_trailing_slash_too_many_or_too_few_is_redirected_as_in_fastapi() -> None:
    from ferrule.testing import TestClient

    app = App()

    @app.get("/query/list")
    def listed(device_ids: list[int]) -> list[int]:
        return device_ids

    @app.post("/items/")
    def create(item: dict) -> dict:
        return item

    with TestClient(app) as client:
        assert client.get("/query/list/?device_ids=1&device_ids=2").json() == [1, 2]
        moved = client.post("/items", json={"a": 1}, follow_redirects=False)
        assert (moved.status_code, moved.headers["location"]) == (307, "/items/")
        assert client.post("/items", json={"a": 1}).json() == {"a": 1}
        assert client.get("/nowhere/").status_code == 404
    with TestClient(App(redirect_slashes=False)) as client:
        assert client.get("/docs/").status_code == 404
    with serving(app) as port:
        reply = request(port, "GET", "/query/list/?device_ids=3")
        assert (reply.status, reply.headers["location"]) == (307, "/query/list?device_ids=3")


def test_request_client_is_the_peer_that_sent_the_request_as_starlettes() -> None:
    import http.client
    import json

    from ferrule.testing import TestClient

    def who_app(**settings: Any) -> App:
        app = App(**settings)

        @app.get("/who")
        def who(request: Request) -> dict:
            client = request.client
            return {"client": None if client is None else [client.host, client.port], "url": str(request.url), "base": str(request.base_url)}

        return app

    def ask(app: App, headers: dict[str, str]) -> tuple[dict, int]:
        with serving(app) as port:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", "/who", headers=headers)
            mine = connection.sock.getsockname()
            seen = json.loads(connection.getresponse().read())
            connection.close()
        return seen, mine[1]

    proxied = {"x-forwarded-for": "198.51.100.1, 203.0.113.9", "x-forwarded-proto": "https", "x-forwarded-host": "shop.example"}
    # The peer is 127.0.0.1, which uvicorn's default forwarded_allow_ips trusts, as here.
    seen, _ = ask(who_app(), proxied)
    assert seen == {"client": ["203.0.113.9", 0], "url": "https://shop.example/who", "base": "https://shop.example/"}
    # A peer not listed, or no list: the peer's, never a header's.
    for settings in ({"forwarded_allow_ips": []}, {"forwarded_allow_ips": "10.0.0.0/8, 192.168.0.1"}):
        seen, mine = ask(who_app(**settings), proxied)
        assert seen["client"] == ["127.0.0.1", mine], settings
        assert seen["url"].startswith("http://127.0.0.1:"), settings
    with TestClient(who_app()) as client:
        assert client.get("/who").json()["client"] == ["127.0.0.1", 0]  # in process: loopback, as Fastify's inject
        assert client.get("/who", headers={"X-Forwarded-Proto": "https"}).json()["url"] == "https://testserver/who"


def test_forwarded_allow_ips_that_do_not_read_are_refused_naming_the_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"^app settings: trusted_proxies: `proxy\.internal` is not an address"):
        App(forwarded_allow_ips=["10.0.0.1", "proxy.internal"])
    with pytest.raises(TypeError, match="forwarded_allow_ips is a list"):
        App(forwarded_allow_ips=10)
    # uvicorn's environment variable, read when the app names none.
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "10.0.0.1,10.0.0.2")
    assert App().config["trusted_proxies"] == ["10.0.0.1,10.0.0.2"]  # as given: the core splits it
    with pytest.raises(ValueError, match=r"^app settings: trusted_proxies: `proxy\.internal` is not an address"):
        App(forwarded_allow_ips="10.0.0.1, proxy.internal")
    assert App(forwarded_allow_ips="*").config["trusted_proxies"] == ["*"]


# Found by a README walk: a wrong-typed option was named in Rust's types (expected usize), and
# a route's named neither the option nor the route.
def test_a_wrong_typed_option_is_named_with_its_route_in_plain_words() -> None:
    with pytest.raises(ValueError, match=r"^app settings: max_connections: invalid type: number `1\.5`, expected a whole number of 0 or more$"):
        App(max_connections=1.5)
    app = App()
    with pytest.raises(ValueError, match=r'^GET /slow: timeout_ms: invalid type: string "x", expected a whole number of 0 or more$'):

        @app.get("/slow", timeout_ms="x")
        def slow() -> str:
            return "x"


# What a FastAPI handler taking a raw Request reaches for first: request.query_params,
# request.url and `await request.json()` (a webhook's payload) were missing.
def test_a_raw_request_has_starlettes_query_params_url_and_json() -> None:
    import json

    app = App()

    @app.post("/hook")
    async def hook(request: Request) -> dict:
        payload = await request.json()
        params = request.query_params
        url = request.url
        return {
            "payload": payload,
            "tag": params.get("tag"),
            "tags": params.getlist("tag"),
            "missing": params.get("nope", "default"),
            "url": [str(url), url.path, url.query, url.hostname, url.port, url.scheme],
        }

    with serving(app) as port:
        reply = request(port, "POST", "/hook?tag=a&tag=b%20c", body=b'{"event": "push", "n": [1, 2]}', headers={"host": f"127.0.0.1:{port}"})
        assert reply.status == 200, reply.body
        assert reply.json() == {
            "payload": {"event": "push", "n": [1, 2]},
            "tag": "b c",
            "tags": ["a", "b c"],
            "missing": "default",
            "url": [f"http://127.0.0.1:{port}/hook?tag=a&tag=b%20c", "/hook", "tag=a&tag=b%20c", "127.0.0.1", port, "http"],
        }
        broken = request(port, "POST", "/hook", body=b"not json")
        assert broken.status == 500 and b"not json" not in broken.body
    with pytest.raises(json.JSONDecodeError):
        from ferrule.request import _json_of

        _json_of(b"{")


# Found by a probe: `f"/page?{request.query_params}"` built `/page?QueryParams([...])`; Starlette's
# text is the query string, and its URL makes the next page's link.
def test_query_params_print_as_a_query_string_and_the_url_makes_links() -> None:
    from ferrule.request import URL, QueryParams

    params = QueryParams([("a", "1"), ("a", "2"), ("b", "x y&z")])
    assert str(params) == "a=1&a=2&b=x+y%26z"
    assert params == QueryParams([("b", "x y&z"), ("a", "1"), ("a", "2")])
    assert params != QueryParams([("a", "1")])
    url = URL("shop.example", "/items", "page=1&sort=name")
    assert str(url.include_query_params(page=2)) == "http://shop.example/items?sort=name&page=2"
    assert str(url.replace_query_params(q="x")) == "http://shop.example/items?q=x"
    assert str(url.remove_query_params("sort")) == "http://shop.example/items?page=1"
    assert str(url.replace(path="/other")) == "http://shop.example/other?page=1&sort=name"
    # As Starlette's: the scheme too (the old test asserted a TypeError; behind a trusted proxy
    # the scheme is no longer always http, so links are made with either).
    assert str(url.replace(scheme="https")) == "https://shop.example/items?page=1&sort=name"
    assert str(URL("shop.example", "/a", "", "https").replace(path="/b")) == "https://shop.example/b"
    with pytest.raises(TypeError, match="takes scheme, netloc, path and query, not colour"):
        url.replace(colour="red")


# A FastAPI handler reads `request.headers.get("user-agent")`, `request.cookies["session"]` and
# `await request.body()` without declaring them: headers and cookies held only the declared
# ones (None for the rest), and `request.body` was the validated body, not Starlette's method.
def test_a_raw_request_has_starlettes_headers_cookies_and_body() -> None:
    import http.client

    from ferrule import Depends, Header

    app = App()

    def count(x_count: int = Header()) -> int:
        return x_count  # a dependency still gets the declared header, typed

    @app.post("/raw")
    async def raw(request: Request, counted: int = Depends(count)) -> dict:
        chunks = [chunk async for chunk in request.stream()]
        return {
            "agent": request.headers.get("User-Agent"),
            "tags": request.headers.getlist("x-tag"),
            "count": [request.headers["X-Count"], counted],
            "missing": request.headers.get("x-nope", "none"),
            "has": ["x-tag" in request.headers, "x-nope" in request.headers],
            "cookies": request.cookies,
            "body": (await request.body()).decode(),
            "chunks": [chunk.decode() for chunk in chunks],
        }

    with serving(app) as port:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.putrequest("POST", "/raw")
            for name, value in [("user-agent", "probe/1"), ("x-tag", "a"), ("x-tag", "b"), ("x-count", "5"), ("cookie", "session=abc; theme=dark; theme=light"), ("content-length", "5")]:
                connection.putheader(name, value)
            connection.endheaders(b"hello")
            response = connection.getresponse()
            body = response.read()
        finally:
            connection.close()
    assert response.status == 200, body
    import json

    assert json.loads(body) == {
        "agent": "probe/1",
        "tags": ["a", "b"],
        "count": ["5", 5],
        "missing": "none",
        "has": [True, False],
        "cookies": {"session": "abc", "theme": "light"},
        "body": "hello",
        "chunks": ["hello", ""],
    }


# A pydantic model holding another model failed at the decorator once wrapped in list[...],
# dict[...] or Optional[...]: its `$defs` stayed inside the wrapper, where its `$ref`s (which
# point at the root) did not reach them.
class Tag(BaseModel):
    name: str


class Note(BaseModel):
    title: str
    tags: list[Tag] = []


def test_nested_pydantic_models_work_inside_lists_dicts_and_optionals() -> None:
    app = App()

    @app.get("/notes")
    def notes() -> list[Note]:
        return [Note(title="a", tags=[Tag(name="x")])]

    @app.post("/notes")
    def by_title(notes: list[Note]) -> dict[str, Note]:
        return {note.title: note for note in notes}

    @app.post("/maybe")
    def maybe(note: Optional[Note] = None) -> Optional[Note]:
        return note

    client = TestClient(app)
    assert client.get("/notes").json() == [{"title": "a", "tags": [{"name": "x"}]}]
    assert client.post("/notes", json=[{"title": "b", "tags": [{"name": "y"}]}]).json() == {"b": {"title": "b", "tags": [{"name": "y"}]}}
    refused = client.post("/notes", json=[{"title": "b", "tags": [{"nam": "y"}]}])
    assert (refused.status_code, refused.json()["errors"][0]["loc"]) == (422, ["body", 0, "tags", 0, "name"])
    assert client.post("/maybe", json={"title": "c"}).json() == {"title": "c", "tags": []}
    assert sorted(client.get("/openapi.json").json()["components"]["schemas"]) == ["Note", "Problem", "Tag"]


# `Query(...)`, FastAPI's older spelling of "required", gave the handler Ellipsis; and the
# markers refused FastAPI's documented `title=`, `examples=`, `deprecated=` and `regex=`.
def test_an_ellipsis_default_is_required_and_fastapis_marker_keywords_are_taken() -> None:
    from ferrule import Header, Path, Query

    app = App()

    @app.get("/items/{item_id}")
    def item(
        item_id: int = Path(title="The ID", ge=1),
        q: str = Query(..., min_length=2, examples=["ab"], deprecated=True),
        code: Optional[str] = Query(None, regex="^[a-z]+$"),
        x_token: str = Header(...),
    ) -> dict:
        return {"id": item_id, "q": q, "code": code, "token": x_token}

    client = TestClient(app)
    missing = client.get("/items/1")
    assert (missing.status_code, sorted(tuple(e["loc"]) for e in missing.json()["errors"])) == (422, [("header", "x-token"), ("query", "q")])
    assert client.get("/items/1?q=ab&code=A1", headers={"x-token": "t"}).status_code == 422
    assert client.get("/items/1?q=ab&code=a", headers={"x-token": "t"}).json() == {"id": 1, "q": "ab", "code": "a", "token": "t"}
    schemas = [p["schema"] for p in client.get("/openapi.json").json()["paths"]["/items/{item_id}"]["get"]["parameters"]]
    assert {"title": "The ID", "minimum": 1}.items() <= schemas[0].items()
    assert {"examples": ["ab"], "deprecated": True}.items() <= schemas[1].items()


class Login(BaseModel):
    username: str
    password: str
    remember: bool = False


# FastAPI's form model (`Annotated[Login, Form()]`) was a 422 `missing` for a valid form, and
# `await request.form()` an AttributeError.
def test_a_form_model_and_request_form_read_as_in_fastapi() -> None:
    app = App()

    @app.post("/login")
    def login(data: Annotated[Login, Form()]) -> dict:
        return {"user": data.username, "remember": data.remember, "model": type(data).__name__}

    @app.post("/hook")
    async def hook(request: Request) -> dict:
        form = await request.form()
        return {"tags": form.getlist("tag"), "last": form["tag"], "none": form.get("nope")}

    @app.post("/declared")
    async def declared(request: Request, title: str = Form(), upload: UploadFile = File()) -> dict:
        form = await request.form()
        return {"title": form["title"], "file": form["upload"].filename}

    # A multipart body the route does not declare is read too (it was a 500: found by a probe),
    # and a malformed one is a 400.
    @app.post("/dynamic")
    async def dynamic(request: Request) -> dict:
        form = await request.form()
        upload = form["upload"]
        return {"note": form["note"], "file": upload.filename, "bytes": (await upload.read()).decode()}

    client = TestClient(app, raise_server_exceptions=False)
    assert client.post("/login", data={"username": "u", "password": "p", "remember": "true"}).json() == {"user": "u", "remember": True, "model": "Login"}
    missing = client.post("/login", data={"username": "u"})
    assert (missing.status_code, missing.json()["errors"][0]["loc"]) == (422, ["body", "password"])
    assert client.post("/hook", content=b"tag=a&tag=b", headers={"content-type": "application/x-www-form-urlencoded"}).json() == {"tags": ["a", "b"], "last": "b", "none": None}
    assert client.post("/declared", data={"title": "t"}, files={"upload": ("a.txt", b"x", "text/plain")}).json() == {"title": "t", "file": "a.txt"}
    # A multipart body the route does not declare is read too, and a malformed one is a 400.
    sent = client.post("/dynamic", data={"note": "n"}, files={"upload": ("../a.txt", b"xyz", "text/plain")})
    assert sent.json() == {"note": "n", "file": "a.txt", "bytes": "xyz"}
    broken = client.post("/dynamic", content=b"--b\r\nno end", headers={"content-type": "multipart/form-data; boundary=b"})
    assert (broken.status_code, broken.headers["content-type"]) == (400, "application/problem+json")


class Filter(BaseModel):
    lo: Optional[int] = None
    hi: Optional[int] = None


# Found by a probe: a form model whose fields all have defaults reached the handler as None for
# an empty form (a 500 on `data.model_dump()`); FastAPI makes the model of no fields.
def test_a_form_model_of_defaults_is_made_from_an_empty_form() -> None:
    app = App()

    @app.post("/filter")
    def filt(data: Annotated[Filter, Form()]) -> dict:
        return data.model_dump()

    client = TestClient(app)
    form = {"content-type": "application/x-www-form-urlencoded"}
    assert client.post("/filter", headers=form).json() == {"lo": None, "hi": None}
    assert client.post("/filter", content=b"lo=1", headers=form).json() == {"lo": 1, "hi": None}


class Alarm(BaseModel):
    at: datetime.time


# Found by a probe: a pydantic `time` field refused `07:30:00`, the text Ferrule itself writes for
# one (the core asked for RFC 3339's offset); pydantic and FastAPI take it.
def test_a_time_field_takes_the_text_it_is_sent_as() -> None:
    app = App()

    @app.get("/alarm")
    def alarm() -> Alarm:
        return Alarm(at=datetime.time(7, 30))

    @app.post("/alarm")
    def set_alarm(alarm: Alarm) -> dict:
        return {"at": alarm.at.isoformat()}

    client = TestClient(app)
    sent = client.get("/alarm").json()
    assert sent == {"at": "07:30:00"}
    for text in ("07:30:00", "07:30", "07:30:00Z"):
        assert client.post("/alarm", json={"at": text}).status_code == 200, text
    assert client.post("/alarm", json={"at": "25:00"}).status_code == 422


# FastAPI serves `@router.get("/")` under `APIRouter(prefix="/items")` at `/items/`; Ferrule
# served only `/items` and answered `/items/` with a 307 there.
def test_a_routers_slash_route_answers_with_and_without_the_slash() -> None:
    from ferrule import APIRouter

    app = App()
    router = APIRouter(prefix="/items")

    @router.get("/")
    def items() -> list[str]:
        return ["a"]

    app.include_router(router)
    client = TestClient(app, follow_redirects=False)
    for path in ("/items", "/items/"):
        assert (client.get(path).status_code, client.get(path).json()) == (200, ["a"]), path
    assert list(client.get("/openapi.json").json()["paths"]) == ["/items"]


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


# Found by a probe of a second week's FastAPI port: `BackgroundTasks` did not exist,
# `app.state.db = ...` was an AttributeError, an IntEnum query parameter was always a 422,
# and `RedirectResponse(f"/search?q={q}")` put raw UTF-8 and spaces in `Location`.
def test_background_tasks_app_state_int_enum_queries_and_quoted_redirects() -> None:
    import time

    app = App()
    app.state.db = "pool"
    done: list[str] = []

    def audit(tasks: BackgroundTasks) -> None:
        tasks.add_task(done.append, "audit")

    async def notify(to: str) -> None:
        done.append(f"sent to {to}")

    @app.post("/send/{to}", dependencies=[Depends(audit)])
    async def send(to: str, tasks: BackgroundTasks) -> dict:
        tasks.add_task(notify, to)
        return {"queued": len(done), "db": app.state["db"]}

    @app.get("/tasks")
    def tasks(priority: Optional[Priority] = None, many: list[Priority] = Query([])) -> dict:
        return {"priority": priority, "many": many}

    @app.get("/go")
    def go(q: str) -> RedirectResponse:
        return RedirectResponse(f"/search?q={q}")

    with TestClient(app, follow_redirects=False) as client:
        assert client.post("/send/ada").json() == {"queued": 0, "db": "pool"}
        deadline = time.monotonic() + 5
        while len(done) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert done == ["audit", "sent to ada"], "after the response, in order"
        assert client.get("/tasks?priority=2&many=1&many=2").json() == {"priority": 2, "many": [1, 2]}
        assert client.get("/tasks?priority=3").status_code == 422
        assert client.get("/go", params={"q": "café au lait"}).headers["location"] == "/search?q=caf%C3%A9%20au%20lait"


# Starlette's `request.app` (`request.app.state.db`) was an AttributeError, and what a lifespan
# yields never reached `request.state`.
def test_request_app_and_the_lifespans_state_reach_each_request() -> None:
    import contextlib
    import gc
    import weakref
    from typing import AsyncIterator

    @contextlib.asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[dict]:
        app.state.db = "pool"
        yield {"client": "http-client"}

    app = App(lifespan=lifespan)

    @app.get("/state")
    async def state(request: Request) -> dict:
        mine_before = hasattr(request.state, "mine")  # a copy per request: the last one's is gone
        request.state.mine = 1
        return {"db": request.app.state.db, "client": request.state.client, "mine_before": mine_before}

    with TestClient(app) as client:
        assert client.get("/state").json() == {"db": "pool", "client": "http-client", "mine_before": False}
        assert client.get("/state").json()["client"] == "http-client"
    held = weakref.ref(app)
    del app, client, state
    gc.collect()
    assert held() is None, "a request's app is a weak reference: the app goes when its owner lets go"


# Found on review: a BackgroundTasks parameter made a `def` handler's route async, so
# `blocking=True` was refused at the decorator.
def test_a_blocking_def_handler_takes_background_tasks() -> None:
    import threading
    import time

    app = App()
    ran: list[str] = []

    @app.post("/work", blocking=True)
    def work(tasks: BackgroundTasks) -> dict:
        tasks.add_task(ran.append, "later")
        return {"thread": threading.get_ident()}

    @app.get("/loop")
    async def loop() -> dict:
        return {"thread": threading.get_ident()}

    with TestClient(app) as client:
        assert client.post("/work").json() != client.get("/loop").json(), "the def handler runs in the pool, not on the loop"
        deadline = time.monotonic() + 5
        while not ran and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ran == ["later"]


def test_an_asgi_server_is_told_at_startup_that_the_app_is_its_own_server() -> None:
    # Found by a FastAPI port: `uvicorn main:app` started, then answered every request with a
    # 500 ("'App' object is not callable"). Its lifespan startup now fails with one line that
    # names the way to serve, which uvicorn prints before it exits.
    import asyncio

    from ferrule import App

    app = App()
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "lifespan.startup"}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(app({"type": "lifespan"}, receive, send))
    assert sent[0]["type"] == "lifespan.startup.failed"
    assert "python -m ferrule module:app" in sent[0]["message"]
    with pytest.raises(TypeError, match="not an ASGI application"):
        asyncio.run(app({"type": "http"}, receive, send))


# Found by a README walk of a FastAPI app: `name=` was an unknown route option, and neither
# `app.url_path_for` nor `request.url_for` existed (a created item's Location is built so).
def test_url_for_builds_a_named_routes_url_as_starlette_does() -> None:
    from ferrule import APIRouter, NoMatchFound, URLPath

    app = App()
    shop = APIRouter(prefix="/shop")

    @shop.get("/items/{item_id:int}")
    def read_item(item_id: int) -> dict:
        return {"item_id": item_id}

    @shop.get("/", name="shop_home")
    def home() -> dict:
        return {}

    @app.get("/files/{rest:path}", name="file")
    def file(rest: str) -> dict:
        return {}

    @app.post("/items", status_code=201)
    def create(request: Request) -> Response:
        return Response(status_code=201, headers={"location": str(request.url_for("read_item", item_id=7))})

    @app.websocket("/rooms/{room}")
    async def room(ws: WebSocket, room: str) -> None:
        await ws.accept()

    app.include_router(shop)
    nested = APIRouter(prefix="/v2/")

    @nested.get("/{id}")
    def by_id(id: int) -> dict:
        return {}

    app.include_router(nested, prefix="/api/")
    app.mount("/static", StaticFiles(directory=str(pathlib.Path(__file__).parent)), name="static")
    assert app.url_path_for("by_id", id=1) == "/api/v2/1", "the prefixes joined as the core joins them"
    assert app.url_path_for("static", path="css/site.css") == "/static/css/site.css"
    assert app.url_path_for("read_item", item_id=3) == "/shop/items/3"
    assert isinstance(app.url_path_for("read_item", item_id=3), URLPath)
    assert app.url_path_for("shop_home") == "/shop"
    assert app.url_path_for("file", rest="a b/c.txt") == "/files/a%20b/c.txt"
    assert str(app.url_path_for("room", room="x").make_absolute_url("https://example.com")) == "wss://example.com/rooms/x"
    with pytest.raises(NoMatchFound, match='No route exists for name "read_item" and params "id".'):
        app.url_path_for("read_item", id=3)
    with pytest.raises(NoMatchFound):
        app.url_path_for("nowhere")
    with TestClient(app) as client:
        created = client.post("/items")
        assert (created.status_code, created.headers["location"]) == (201, "http://testserver/shop/items/7")
        behind = client.post("/items", headers={"x-forwarded-proto": "https", "x-forwarded-host": "shop.example"})
        assert behind.headers["location"] == "https://shop.example/shop/items/7"

