"""Each request's Python code runs in a `contextvars` context of its own
(`src/request_context.rs`): what a handler, a hook or a dependency sets of a `ContextVar` is
never what a later request reads, whichever kind of handler set it."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Annotated

import pytest

from ferrule import App, BackgroundTasks, Depends, Request
from ferrule.responses import StreamingResponse
from ferrule.testing import TestClient

from support import request, serving

user = contextvars.ContextVar("user", default="nobody")


async def returns_at_once() -> None:
    """Awaited so that a handler runs as a task of its own (its code can wait)."""


def from_the_header(request: Request) -> str:
    user.set(request.header("x-user") or "nobody")
    return user.get()


def make_app() -> App:
    app = App()

    @app.get("/def/set")
    def def_sets():
        before = user.get()
        user.set("def")
        return {"before": before}

    @app.get("/async/set")
    async def async_sets():
        before = user.get()
        user.set("async")
        return {"before": before}

    @app.get("/async-task/set")
    async def async_task_sets():
        await returns_at_once()
        before = user.get()
        user.set("async-task")
        return {"before": before}

    @app.get("/dependency/set")
    def dependency_sets(who: Annotated[str, Depends(from_the_header)]):
        return {"who": who, "seen": user.get()}

    @app.get("/def/read")
    def def_reads():
        return {"user": user.get()}

    @app.get("/async/read")
    async def async_reads():
        return {"user": user.get()}

    @app.get("/async-task/read")
    async def async_task_reads():
        await returns_at_once()
        return {"user": user.get()}

    @app.get("/child/{key}")
    async def child_sees_the_handlers_value(key: str):
        user.set(f"handler {key}")

        async def child() -> None:
            seen_by_children[key] = user.get()

        asyncio.create_task(child())
        return {}

    @app.get("/child/{key}/seen")
    async def child_seen(key: str):
        return {"seen": seen_by_children.get(key)}

    return app


seen_by_children: dict[str, str] = {}

READERS = ["/def/read", "/async/read", "/async-task/read"]


@pytest.fixture(scope="module")
def port():
    with serving(make_app()) as p:
        yield p


@pytest.mark.parametrize("setter", ["/def/set", "/async/set", "/async-task/set"])
def test_a_value_a_handler_sets_is_gone_by_the_next_request(port, setter):
    assert request(port, "GET", setter).json() == {"before": "nobody"}
    assert request(port, "GET", setter).json() == {"before": "nobody"}
    for reader in READERS:
        assert request(port, "GET", reader).json() == {"user": "nobody"}, reader


def test_a_value_a_dependency_sets_is_the_handlers_and_gone_by_the_next_request(port):
    assert request(port, "GET", "/dependency/set", headers={"x-user": "ada"}).json() == {"who": "ada", "seen": "ada"}
    for reader in READERS:
        assert request(port, "GET", reader).json() == {"user": "nobody"}, reader


def test_a_value_a_hook_sets_is_the_handlers_and_gone_by_the_next_request():
    app = App()

    @app.on_request
    def remember(request: Request) -> None:
        if request.header("x-user"):
            user.set(request.header("x-user"))

    @app.get("/read")
    def read():
        return {"user": user.get()}

    with serving(app) as p:
        assert request(p, "GET", "/read", headers={"x-user": "grace"}).json() == {"user": "grace"}
        assert request(p, "GET", "/read").json() == {"user": "nobody"}


def test_a_task_a_handler_starts_sees_the_handlers_values(port):
    request(port, "GET", "/child/a")
    for _ in range(100):
        if request(port, "GET", "/child/a/seen").json()["seen"] is not None:
            break
    assert seen_by_children["a"] == "handler a"
    for reader in READERS:
        assert request(port, "GET", reader).json() == {"user": "nobody"}, reader


def test_a_middlewares_context_reaches_sync_streams_background_tasks_and_blocking_handlers() -> None:
    # Found by a FastAPI port: a request id a middleware set read "unset" in a `def` stream
    # producer, a `def` background task and a `blocking=True` handler (run_in_executor copies
    # no context; Starlette's thread pool does).
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")
    app = App()
    seen: dict[str, str] = {}
    done = threading.Event()

    @app.middleware("http")
    async def tag(request, call_next):
        request_id.set(request.headers.get("x-rid", "none"))
        return await call_next(request)

    def chunks():
        yield request_id.get()

    @app.get("/stream")
    def stream():
        return StreamingResponse(chunks())

    def later() -> None:
        seen["task"] = request_id.get()
        done.set()

    @app.get("/task")
    def task(tasks: BackgroundTasks) -> str:
        tasks.add_task(later)
        return "ok"

    @app.get("/blocking", blocking=True)
    def blocking() -> dict:
        return {"id": request_id.get()}

    with TestClient(app) as client:
        assert client.get("/stream", headers={"x-rid": "r-1"}).text == "r-1"
        assert client.get("/task", headers={"x-rid": "r-2"}).text == "ok"
        assert client.get("/blocking", headers={"x-rid": "r-3"}).json() == {"id": "r-3"}
        assert done.wait(5)
    assert seen == {"task": "r-2"}
