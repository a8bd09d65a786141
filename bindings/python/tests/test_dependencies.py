"""``Depends``: FastAPI's dependencies, with their inputs validated in Rust as the route's own.

(No ``from __future__ import annotations`` here: the dependencies are local functions, which an
annotation read later as a string could not name — as in FastAPI.)"""

import asyncio
from dataclasses import dataclass
from typing import Annotated, Any, AsyncIterator, Iterator, Optional

import pytest

from ferrule import App, Depends, Header, HTTPException, Query, Request, Router
from ferrule.testing import TestClient


@dataclass
class Page:
    limit: int
    offset: int


def paging(limit: Annotated[int, Query(ge=1, le=100)] = 10, offset: int = 0) -> Page:
    return Page(limit, offset)


def test_a_dependencys_parameters_are_the_routes_and_validated_in_rust() -> None:
    app = App()
    calls: list[str] = []

    def counted(limit: Annotated[int, Query(ge=1, le=100)] = 10, offset: int = 0) -> Page:
        calls.append("paging")
        return Page(limit, offset)

    @app.get("/items")
    def items(page: Annotated[Page, Depends(counted)], q: Optional[str] = None) -> dict:
        return {"limit": page.limit, "offset": page.offset, "q": q}

    with TestClient(app) as client:
        assert client.get("/items", params={"limit": 5, "q": "pen"}).json() == {"limit": 5, "offset": 0, "q": "pen"}
        invalid = client.get("/items", params={"limit": 500})
        assert invalid.status_code == 422
        assert invalid.json()["errors"][0]["loc"] == ["query", "limit"]
    assert calls == ["paging"], "the invalid request never entered Python"
    parameters = {p["name"] for p in app.openapi()["paths"]["/items"]["get"]["parameters"]}
    assert parameters == {"limit", "offset", "q"}


def test_sub_dependencies_are_called_once_per_request() -> None:
    app = App()
    calls: list[str] = []

    def token(authorization: Annotated[str, Header()]) -> str:
        calls.append("token")
        return authorization.removeprefix("Bearer ")

    def user(token: Annotated[str, Depends(token)]) -> dict:
        calls.append("user")
        if token != "good":
            raise HTTPException(401, "bad token")
        return {"name": "ada"}

    def admin(user: Annotated[dict, Depends(user)], token: Annotated[str, Depends(token)]) -> dict:
        return {**user, "admin": True, "token": token}

    @app.get("/me")
    def me(user: Annotated[dict, Depends(user)], admin: Annotated[dict, Depends(admin)]) -> dict:
        return {"user": user, "admin": admin}

    with TestClient(app) as client:
        ok = client.get("/me", headers={"authorization": "Bearer good"})
        assert ok.json() == {"user": {"name": "ada"}, "admin": {"name": "ada", "admin": True, "token": "good"}}
        assert calls == ["token", "user"], "each dependency ran once"
        assert client.get("/me", headers={"authorization": "Bearer bad"}).status_code == 401
        assert client.get("/me").json()["errors"][0]["loc"] == ["header", "authorization"]


def test_yield_dependencies_tear_down_after_the_response_and_see_errors() -> None:
    app = App()
    events: list[str] = []

    def session() -> Iterator[str]:
        events.append("open")
        try:
            yield "session"
        except ZeroDivisionError:
            events.append("rolled back")
            raise
        finally:
            events.append("closed")

    async def pool() -> AsyncIterator[str]:
        events.append("pool in")
        yield "pool"
        await asyncio.sleep(0)
        events.append("pool out")

    @app.get("/ok")
    def ok(db: Annotated[str, Depends(session)]) -> dict:
        events.append("handler")
        return {"db": db}

    @app.get("/fail")
    def fail(db: Annotated[str, Depends(session)]) -> dict:
        return {"x": 1 / 0}

    @app.get("/async")
    async def with_pool(db: Annotated[str, Depends(session)], p: Annotated[str, Depends(pool)]) -> dict:
        return {"db": db, "pool": p}

    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/ok").json() == {"db": "session"}
        assert events == ["open", "handler", "closed"]
        events.clear()
        assert client.get("/fail").status_code == 500
        assert events == ["open", "rolled back", "closed"]
        events.clear()
        assert client.get("/async").json() == {"db": "session", "pool": "pool"}
        assert events == ["open", "pool in", "pool out", "closed"]


# Found by a probe: a `def` generator's teardown ran before the answer was handed over, so 1.5 s
# of it held the response back as long, and for a `blocking=True` route it ran on the loop's
# thread, holding every other request too; and the request's background tasks ran after the
# teardowns, seeing a closed session. FastAPI answers first, then runs the tasks, then the
# teardowns (a `def` one on its thread pool).
def test_a_sync_teardown_runs_after_the_answer_off_the_loop_and_after_the_background_tasks() -> None:
    import threading

    from ferrule import BackgroundTasks

    from support import request, serving

    released = threading.Event()
    events: list[str] = []

    def session() -> Iterator[dict]:
        db = {"open": True}
        try:
            yield db
        finally:
            events.append(f"teardown on {threading.current_thread().name}")
            if threading.current_thread().name == "ferrule-worker":
                released.wait(10)
            db["open"] = False

    def send_mail(db: dict) -> None:
        events.append(f"task saw open={db['open']}")

    app = App()

    # Its sync code, the dependency's included, runs on the thread pool: so does the teardown.
    @app.post("/save", blocking=True)
    def save(db: Annotated[dict, Depends(session)]) -> dict:
        return {"saved": db["open"]}

    @app.get("/other")
    def other() -> str:
        return "other"

    @app.post("/signup")
    def signup(tasks: BackgroundTasks, db: Annotated[dict, Depends(session)]) -> dict:
        tasks.add_task(send_mail, db)
        return {"ok": True}

    with serving(app) as port:
        # Answered while the teardown still waits: before, this waited the 10 s, on the loop.
        assert request(port, "POST", "/save").json() == {"saved": True}
        assert request(port, "GET", "/other").text == "other", "the loop is free while a teardown waits"
        assert not released.is_set()
        released.set()
        eventually(lambda: len(events) == 1, f"the teardown ran: {events}")
    assert events == ["teardown on ferrule-worker"], events
    events.clear()
    with TestClient(app) as client:
        assert client.post("/signup").json() == {"ok": True}
    assert [event.split(" on ")[0] for event in events] == ["task saw open=True", "teardown"]


def eventually(condition: Any, message: str) -> None:
    import time

    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, message
        time.sleep(0.01)


def test_route_and_router_dependencies_run_without_passing_a_value() -> None:
    seen: list[str] = []

    def verify_key(x_key: Annotated[str, Header()]) -> None:
        if x_key != "secret":
            raise HTTPException(403, "bad key")
        seen.append("verified")

    class Tenant:
        def __init__(self, tenant: str = "main") -> None:
            self.name = tenant

    app = App()
    admin = Router(prefix="/admin", dependencies=[Depends(verify_key)])

    @admin.get("/stats")
    def stats(tenant: Annotated[Tenant, Depends(Tenant)]) -> dict:
        return {"tenant": tenant.name}

    @app.get("/open", dependencies=[Depends(verify_key)])
    def opened() -> str:
        return "open"

    app.include_router(admin)
    with TestClient(app) as client:
        assert client.get("/admin/stats", headers={"x-key": "secret"}, params={"tenant": "acme"}).json() == {"tenant": "acme"}
        assert client.get("/admin/stats", headers={"x-key": "nope"}).status_code == 403
        assert client.get("/open", headers={"x-key": "secret"}).text == "open"
    assert seen == ["verified", "verified"]


def test_conflicting_declarations_are_refused_at_the_decorator() -> None:
    app = App()

    def a(limit: int = 10) -> int:
        return limit

    def b(limit: str = "x") -> str:
        return limit

    with pytest.raises(TypeError, match="declared twice, differently"):

        @app.get("/clash")
        def clash(x: Annotated[Any, Depends(a)], y: Annotated[Any, Depends(b)]) -> dict:
            return {}


class Paging:
    def __init__(self, skip: int = 0, limit: int = 10) -> None:
        self.skip = skip
        self.limit = limit


class PrefixChecker:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __call__(self, q: str = "") -> bool:
        return q.startswith(self.prefix)


def test_depends_without_a_callable_calls_the_annotated_class_and_instances_are_dependencies() -> None:
    """Found by running FastAPI's own tutorial tests: ``commons: Paging = Depends()`` and a
    callable instance (``Depends(checker)``) were refused when the route was declared."""
    app = App()

    @app.get("/items")
    def items(paging: Paging = Depends(), matches: bool = Depends(PrefixChecker("ab"))) -> dict:
        return {"skip": paging.skip, "limit": paging.limit, "matches": matches}

    with TestClient(app) as client:
        assert client.get("/items?skip=5&q=abc").json() == {"skip": 5, "limit": 10, "matches": True}
        assert client.get("/items?limit=x").status_code == 422
    with pytest.raises(TypeError, match="needs a class annotation"):

        @app.get("/untyped")
        def untyped(thing=Depends()) -> None:  # noqa: ANN001 - the missing annotation is the point
            return None


# Found by FastAPI's corpus (test_response_change_status_code.py): a dependency taking
# `response: Response` was refused at the decorator ("unsupported parameter type").
def test_dependencies_and_the_handler_share_one_response() -> None:
    from ferrule import Response
    from ferrule.testing import TestClient

    app = App()

    def created(response: Response) -> None:
        response.status_code = 201
        response.headers["x-dependency"] = "1"

    def remembered(response: Response, _: None = Depends(created)) -> str:
        response.set_cookie("seen", "yes")
        return "remembered"

    @app.get("/async")
    async def async_route(response: Response, note: str = Depends(remembered)) -> dict:
        response.headers["x-handler"] = "1"
        return {"note": note}

    @app.get("/route-level", dependencies=[Depends(created)])
    def route_level() -> dict:
        return {"ok": True}

    @app.get("/explicit")
    def explicit(_: None = Depends(created)) -> Response:
        return Response(b"as returned", status_code=202)

    with TestClient(app) as client:
        reply = client.get("/async")
        assert (reply.status_code, reply.json()) == (201, {"note": "remembered"})
        assert (reply.headers["x-dependency"], reply.headers["x-handler"]) == ("1", "1")
        assert "seen=yes" in reply.headers["set-cookie"]
        level = client.get("/route-level")
        assert (level.status_code, level.headers["x-dependency"]) == (201, "1")
        assert client.get("/explicit").status_code == 202, "a returned Response is sent as it is"


def test_a_generator_dependency_stays_open_while_its_response_streams() -> None:
    """Found by a README-driven probe: the code after ``yield`` ran when the head was sent, so
    a streamed body read a closed session. It runs once the producer has ended, sync or async,
    streamed or as events; and once when the client leaves before the first chunk."""
    from ferrule import EventSourceResponse, StreamingResponse

    log: list[str] = []

    class Session:
        open = False

    def session() -> Iterator[Session]:
        made = Session()
        made.open = True
        yield made
        made.open = False
        log.append("closed")

    async def async_session() -> AsyncIterator[Session]:
        made = Session()
        made.open = True
        yield made
        made.open = False
        log.append("closed")

    app = App()

    @app.get("/sync")
    def sync_rows(db: Session = Depends(session)) -> StreamingResponse:
        def rows() -> Iterator[str]:
            for n in range(2):
                log.append(f"row {n} open={db.open}")
                yield f"{n}\n"
        return StreamingResponse(rows(), media_type="text/plain")

    @app.get("/async")
    async def async_rows(db: Session = Depends(async_session)) -> StreamingResponse:
        async def rows() -> AsyncIterator[str]:
            for n in range(2):
                log.append(f"row {n} open={db.open}")
                yield f"{n}\n"
        return StreamingResponse(rows(), media_type="text/plain")

    @app.get("/events")
    async def events(db: Session = Depends(session)) -> EventSourceResponse:
        async def feed() -> AsyncIterator[dict]:
            log.append(f"event open={db.open}")
            yield {"data": "one"}
        return EventSourceResponse(feed())

    @dataclass
    class Camera:
        name: str
        stream: list

    @app.get("/model")
    def model(db: Session = Depends(session)) -> Camera:
        # A result whose field is named `stream` is no streamed response (found by review).
        return Camera("front", [1, 2])

    @app.get("/not-a-stream")
    async def not_a_stream(db: Session = Depends(async_session)) -> StreamingResponse:
        return StreamingResponse(42)  # type: ignore[arg-type]

    with TestClient(app, raise_server_exceptions=False) as client:
        log.clear()
        assert client.get("/model").json() == {"name": "front", "stream": [1, 2]}
        assert log == ["closed"]
        log.clear()
        assert client.get("/not-a-stream").status_code == 500
        assert log == ["closed"]
    with TestClient(app) as client:
        for path in ("/sync", "/async"):
            log.clear()
            assert client.get(path).text == "0\n1\n"
            assert log == ["row 0 open=True", "row 1 open=True", "closed"], path
        log.clear()
        assert client.get("/events").text == "data: one\n\n"
        assert log == ["event open=True", "closed"]


# FastAPI's "Bigger Applications" and "Global Dependencies": `include_router(...,
# dependencies=[...])` and `FastAPI(dependencies=[...])` were TypeErrors.
def test_app_and_include_router_dependencies_run_before_every_route() -> None:
    from ferrule import APIRouter, Header, HTTPException

    calls: list[str] = []

    def verify_key(x_key: str = Header()) -> None:
        calls.append("key")
        if x_key != "k":
            raise HTTPException(400, "bad key")

    def verify_token(x_token: str = Header()) -> None:
        calls.append("token")
        if x_token != "t":
            raise HTTPException(400, "bad token")

    app = App(dependencies=[Depends(verify_key)])
    items = APIRouter(prefix="/items")

    @items.get("/{item_id}")
    def item(item_id: int) -> dict:
        return {"id": item_id}

    @app.get("/open")
    def open_route() -> str:
        return "open"

    app.include_router(items, dependencies=[Depends(verify_token)])
    client = TestClient(app, raise_server_exceptions=False)
    assert client.get("/open").status_code == 422
    assert client.get("/open", headers={"x-key": "nope"}).status_code == 400
    assert client.get("/open", headers={"x-key": "k"}).text == "open"
    assert client.get("/items/1", headers={"x-key": "k", "x-token": "nope"}).status_code == 400
    calls.clear()
    assert client.get("/items/1", headers={"x-key": "k", "x-token": "t"}).json() == {"id": 1}
    assert calls == ["key", "token"], "the app's first, then the include's"


# A router's own `dependencies=` and `tags=` reached its own routes but not those of a router it
# included: an admin check did not guard `/admin/users/{uid}` (found by a probe; FastAPI runs it).
def test_a_routers_own_dependencies_and_tags_reach_the_routers_it_includes() -> None:
    from ferrule import APIRouter

    calls: list[str] = []

    def require_admin(x_admin: Optional[str] = Header(None)) -> None:
        calls.append("admin")
        if x_admin != "yes":
            raise HTTPException(403, "admins only")

    def audit() -> None:
        calls.append("audit")

    admin = APIRouter(prefix="/admin", tags=["admin"], dependencies=[Depends(require_admin)])
    users = APIRouter(prefix="/users", tags=["users"], dependencies=[Depends(audit)])

    @users.delete("/{uid}")
    def delete_user(uid: int) -> dict:
        return {"deleted": uid}

    admin.include_router(users, tags=["included"])
    app = App()
    app.include_router(admin)
    client = TestClient(app, raise_server_exceptions=False)
    assert client.delete("/admin/users/7").status_code == 403
    calls.clear()
    assert client.delete("/admin/users/7", headers={"x-admin": "yes"}).json() == {"deleted": 7}
    assert calls == ["admin", "audit"], "the including router's first, as in FastAPI"
    operation = client.get("/openapi.json").json()["paths"]["/admin/users/{uid}"]["delete"]
    assert operation["tags"] == ["admin", "included", "users"]


def test_dependency_overrides_replace_a_dependency_everywhere_until_cleared() -> None:
    # Found by a FastAPI port: `app.dependency_overrides` did not exist, so no test suite
    # could fake its database or its current user.
    app = App()

    def get_db() -> str:
        return "real-db"

    def current_user(db: Annotated[str, Depends(get_db)], token: Annotated[str, Header()] = "anon") -> dict:
        return {"db": db, "token": token}

    @app.get("/db")
    def db_route(db: Annotated[str, Depends(get_db)]) -> dict:
        return {"db": db}

    @app.get("/me")
    async def me(user: Annotated[dict, Depends(current_user)]) -> dict:
        return user

    router = Router(prefix="/r")

    @router.get("/x")
    def in_router(db: Annotated[str, Depends(get_db)]) -> dict:
        return {"db": db}

    app.include_router(router)
    closed: list[str] = []

    def fake_db() -> Iterator[str]:
        yield "fake-db"
        closed.append("fake-db")

    async def fake_user(token: Annotated[str, Header()] = "none") -> dict:
        return {"fake": True, "token": token}

    with TestClient(app) as client:
        assert client.get("/db").json() == {"db": "real-db"}
        app.dependency_overrides[get_db] = fake_db
        assert client.get("/db").json() == {"db": "fake-db"}
        assert client.get("/r/x").json() == {"db": "fake-db"}
        # A dependency of a dependency is replaced too; the replacement reads the declared header.
        assert client.get("/me", headers={"token": "t"}).json() == {"db": "fake-db", "token": "t"}
        assert closed == ["fake-db"] * 3, "the replacement's teardown runs as a dependency's does"
        app.dependency_overrides[current_user] = fake_user
        assert client.get("/me", headers={"token": "t"}).json() == {"fake": True, "token": "t"}
        app.dependency_overrides = {}
        assert client.get("/db").json() == {"db": "real-db"}
        assert client.get("/me").json() == {"db": "real-db", "token": "anon"}

        # A replacement that requires an input the route never declared would get None for it,
        # unparsed (found by a README check): refused by name instead.
        def needs_more(other: Annotated[str, Header()]) -> dict:
            return {"other": other}

        app.dependency_overrides[current_user] = needs_more
        with pytest.raises(TypeError, match=r"requires header 'other', which .*current_user does not declare"):
            client.get("/me", headers={"other": "o"})
        app.dependency_overrides.clear()
