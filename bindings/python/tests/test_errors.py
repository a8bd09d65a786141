"""Failures: a handler that raises, one that returns what cannot be sent, a request that fails
validation. Each gets its documented problem response, nothing internal leaks, and the server
keeps serving."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import enum
import uuid
from typing import Optional

import pytest
import typing_extensions
from pydantic import BaseModel, field_validator, model_validator

from ferrule import App, HTTPException

from support import request, serving

# How often each handler ran: proves which requests reached Python.
CALLS = {"ok": 0}

SECRET = "SECRET-TOKEN-42"


class Opaque:
    pass


class ClearsWhenWritten(datetime.date):
    """A date whose isoformat() empties the container it is in: the items already read from
    that container are freed while the response is being written."""

    def __new__(cls, year, month, day, container):
        date = super().__new__(cls, year, month, day)
        date.container = container
        return date

    def isoformat(self):
        self.container.clear()
        return "2024-01-15"


class GrowsWhenCleared:
    """Stands in for the container a ClearsWhenWritten empties: adds a member to it instead."""

    def __init__(self, target: dict):
        self.target = target

    def clear(self):
        self.target["added"] = 1


def make_app() -> App:
    app = App(timeout_ms=2000)

    @app.get("/raise")
    def raises():
        raise ValueError(f"{SECRET} connection string")

    @app.get("/raise-async")
    async def raises_async():
        raise KeyError(SECRET)

    @app.get("/unserialisable")
    def unserialisable():
        return {"thing": Opaque()}

    @app.get("/nan")
    def nan():
        return {"x": float("nan")}

    @app.get("/cycle")
    def cycle():
        d: dict = {}
        d["self"] = d
        return d

    @app.get("/changed-while-written")
    def changed_while_written():
        # Writing the date runs Python code that empties the dict being written.
        answer: dict = {"before": "x", "when": None, "after": "y"}
        answer["when"] = ClearsWhenWritten(2024, 1, 15, answer)
        return answer

    @app.get("/grown-while-written")
    def grown_while_written():
        # Writing the date adds a member to the dict being written.
        answer: dict = {"when": None, "after": "y"}
        answer["when"] = ClearsWhenWritten(2024, 1, 15, answer)
        answer["when"].container = GrowsWhenCleared(answer)
        return answer

    @app.get("/lone-surrogate-key")
    def lone_surrogate_key():
        return {"\ud800": 1}

    @app.get("/lone-surrogate-value")
    def lone_surrogate_value():
        return ["fine", "\udc00"]

    @app.get("/shortened-while-written")
    def shortened_while_written():
        items: list = ["a", None, "b", "c", {"d": 1}]
        items[1] = ClearsWhenWritten(2024, 1, 15, items)
        return items

    @app.get("/not-found/{id:int}")
    def not_found(id: int):
        raise HTTPException(404, f"No item {id}", headers={"X-Reason": "gone"})

    @app.get("/unserialisable-async")
    async def unserialisable_async():
        await asyncio.sleep(0)
        return {"thing": Opaque()}

    @app.get("/not-found-async/{id:int}")
    async def not_found_async(id: int):
        await asyncio.sleep(0)
        raise HTTPException(status_code=404, detail=f"No item {id}", headers={"X-Reason": "gone"})  # FastAPI's keywords

    @app.get("/in-task")
    async def in_task():
        # asyncio.timeout() and friends need the handler to run inside a task.
        return {"in_task": asyncio.current_task() is not None}

    @app.get("/ok/{n:int}")
    def ok(n: int):
        CALLS["ok"] += 1
        return {"n": n}

    return app


@pytest.fixture(scope="module")
def port():
    with serving(make_app()) as p:
        yield p


@pytest.mark.parametrize("path", ["/raise", "/raise-async", "/unserialisable", "/unserialisable-async", "/nan", "/cycle", "/changed-while-written", "/grown-while-written", "/lone-surrogate-key", "/lone-surrogate-value"])
def test_failures_are_bare_500_problems(port, path):
    reply = request(port, "GET", path)
    assert reply.status == 500, reply
    assert reply.headers["content-type"] == "application/problem+json"
    problem = reply.json()
    assert problem["status"] == 500 and problem["title"]
    assert SECRET not in reply.text and "Opaque" not in reply.text and "Traceback" not in reply.text
    # ... and the server is still serving.
    assert request(port, "GET", "/ok/1").json() == {"n": 1}


@pytest.mark.parametrize("path", ["/not-found/9", "/not-found-async/9"])
def test_http_exception_is_a_problem_with_its_status(port, path):
    reply = request(port, "GET", path)
    assert reply.status == 404
    assert reply.headers["x-reason"] == "gone"
    assert reply.json()["detail"] == "No item 9"


def test_validation_failure_never_calls_the_handler(port):
    before = CALLS["ok"]
    reply = request(port, "GET", "/ok/abc")
    assert reply.status == 422
    assert CALLS["ok"] == before, "the handler ran for a request the core refused"
    assert request(port, "GET", "/ok/3").json() == {"n": 3}
    assert CALLS["ok"] == before + 1, "the counter sees the handler's calls"
    assert reply.json()["errors"] == [
        {"type": "int_parsing", "loc": ["path", "n"], "msg": reply.json()["errors"][0]["msg"], "input": "abc"}
    ]


def test_many_failures_in_a_row_do_not_wear_the_server_down(port):
    for _ in range(200):
        assert request(port, "GET", "/raise").status == 500
    assert request(port, "GET", "/ok/2").json() == {"n": 2}


def test_async_handlers_run_inside_a_task(port):
    assert request(port, "GET", "/in-task").json() == {"in_task": True}


def test_a_list_shortened_while_written_ends_where_it_was_cut(port):
    # As json.dumps: the items read before the list was emptied, then the end of the list.
    reply = request(port, "GET", "/shortened-while-written")
    assert reply.status == 200, reply
    assert reply.json() == ["a", "2024-01-15"]
    assert request(port, "GET", "/ok/1").json() == {"n": 1}


def test_http_exception_takes_its_status_once_by_position_or_by_name() -> None:
    assert HTTPException(status_code=409).status_code == HTTPException(409).status == HTTPException(status=409).status == 409
    for wrong in ({}, {"status_code": 400, "status": 400}):
        with pytest.raises(TypeError, match="takes its status once"):
            HTTPException(**wrong)


class ValidatedItem(BaseModel):
    qty: int

    @field_validator("qty")
    @classmethod
    def positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError("must be positive")
        return value


class Window(BaseModel):
    lo: int = 0
    hi: int = 10

    @model_validator(mode="after")
    def ordered(self) -> Window:
        if self.lo > self.hi:
            raise ValueError("lo above hi")
        return self


def test_a_models_own_validator_refusing_is_a_422_located_at_the_argument() -> None:
    # Found by a README-driven probe: a pydantic validator's ValueError escaped as a 500, and a
    # RequestValidationError the handler raised was a 500 unless hooks were declared.
    from ferrule import RequestValidationError
    from ferrule.testing import TestClient

    app = App()

    @app.post("/items")
    def make(item: ValidatedItem) -> dict:
        return {"qty": item.qty}

    @app.post("/both")
    def both(item: ValidatedItem, window: Optional[Window] = None) -> dict:
        return {"qty": item.qty}

    @app.get("/raise")
    def refuse() -> None:
        raise RequestValidationError([{"type": "value_error", "loc": ["query", "x"], "msg": "bad", "input": 1}])

    @app.get("/bug")
    def bug() -> None:
        raise ValueError("a bug, not a refusal")

    client = TestClient(app, raise_server_exceptions=False)
    refused = client.post("/items", json={"qty": 0})
    assert (refused.status_code, refused.headers["content-type"]) == (422, "application/problem+json")
    assert refused.json()["errors"] == [{"type": "value_error", "loc": ["body", "qty"], "msg": "Value error, must be positive", "input": 0, "ctx": {"error": "must be positive"}}]
    assert client.post("/items", json={"qty": 3}).json() == {"qty": 3}
    window = client.post("/both", json={"item": {"qty": 1}, "window": {"lo": 5, "hi": 1}})
    assert window.status_code == 422
    assert [(e["type"], e["loc"]) for e in window.json()["errors"]] == [("value_error", ["body", "window"])]
    raised = client.get("/raise")
    assert (raised.status_code, raised.json()["errors"][0]["loc"]) == (422, ["query", "x"])
    assert client.get("/bug").status_code == 500


@dataclasses.dataclass
class Basket:
    items: list[ValidatedItem]
    by_shelf: dict[str, ValidatedItem]


class Shelf(typing_extensions.TypedDict):
    item: ValidatedItem


def test_a_refusal_inside_a_container_is_located_where_it_stood_and_every_one_is_reported() -> None:
    # Found beside FastAPI 0.165: a model's validator refusing a list's second item was located
    # at ["body", "qty"], not ["body", 1, "qty"]; only the first refusal of a dataclass, and of
    # two body arguments, was reported; and `tuple[Item, Item]` was a query parameter.
    from ferrule.testing import TestClient

    app = App()

    @app.post("/list")
    def many(body: list[ValidatedItem]) -> int:
        return len(body)

    @app.post("/basket")
    def basket(body: Basket) -> int:
        return len(body.items)

    @app.post("/shelf")
    def shelf(body: Shelf) -> int:
        return body["item"].qty

    @app.post("/pair")
    def pair(body: tuple[ValidatedItem, ValidatedItem]) -> int:
        return body[0].qty + body[1].qty

    @app.post("/two")
    def two(a: list[ValidatedItem], b: list[ValidatedItem]) -> int:
        return len(a) + len(b)

    client = TestClient(app)

    def places(path: str, sent: object) -> list:
        answer = client.post(path, json=sent)
        assert answer.status_code == 422, answer.text
        return [(e["type"], e["loc"], e["input"]) for e in answer.json()["errors"]]

    assert places("/list", [{"qty": 1}, {"qty": 0}]) == [("value_error", ["body", 1, "qty"], 0)]
    assert places("/basket", {"items": [{"qty": 2}, {"qty": -1}], "by_shelf": {"top": {"qty": 0}}}) == [
        ("value_error", ["body", "items", 1, "qty"], -1),
        ("value_error", ["body", "by_shelf", "top", "qty"], 0),
    ]
    assert places("/shelf", {"item": {"qty": 0}}) == [("value_error", ["body", "item", "qty"], 0)]
    assert places("/pair", [{"qty": 0}, {"qty": 1}]) == [("value_error", ["body", 0, "qty"], 0)]
    assert places("/two", {"a": [{"qty": 0}], "b": [{"qty": 1}, {"qty": -2}]}) == [
        ("value_error", ["body", "a", 0, "qty"], 0),
        ("value_error", ["body", "b", 1, "qty"], -2),
    ]
    assert client.post("/pair", json=[{"qty": 1}, {"qty": 2}]).json() == 3
    assert client.post("/basket", json={"items": [{"qty": 2}], "by_shelf": {}}).json() == 1


class Color(enum.Enum):
    red = "red"
    blue = "blue"


def test_a_dicts_keys_are_made_into_their_declared_type_and_refused_at_the_key() -> None:
    # Found beside FastAPI 0.165: `dict[int, float]` handed the handler string keys and took
    # `{"x": 1}`; FastAPI makes the keys ints and refuses "x" at ["body", "x", "[key]"].
    from ferrule.testing import TestClient

    app = App()

    def shown(mapping: dict) -> list:
        return sorted([type(key).__name__, str(getattr(key, "value", key)), value] for key, value in mapping.items())

    @app.post("/ints")
    def ints(body: dict[int, float]) -> list:
        return shown(body)

    @app.post("/ids")
    def ids(body: dict[uuid.UUID, int]) -> list:
        return shown(body)

    @app.post("/colors")
    def colors(body: dict[Color, int]) -> list:
        return shown(body)

    @app.post("/days")
    def days(body: list[dict[datetime.date, int]]) -> list:
        return [shown(day) for day in body]

    client = TestClient(app)
    uid = "12345678-1234-5678-1234-567812345678"
    assert client.post("/ints", json={"1": 2, " 07 ": 0.5}).json() == [["int", "1", 2.0], ["int", "7", 0.5]]
    assert client.post("/ids", json={uid: 1}).json() == [["UUID", uid, 1]]
    assert client.post("/colors", json={"red": 1}).json() == [["Color", "red", 1]]
    assert client.post("/days", json=[{"2024-01-02": 1}]).json() == [[["date", "2024-01-02", 1]]]

    def refused(path: str, sent: object) -> list:
        answer = client.post(path, json=sent)
        assert answer.status_code == 422, answer.text
        return [(e["type"], e["loc"], e["input"]) for e in answer.json()["errors"]]

    assert refused("/ints", {"1": 1, "x": 2}) == [("int_parsing", ["body", "x", "[key]"], "x")]
    assert refused("/ids", {"nope": 1}) == [("uuid_parsing", ["body", "nope", "[key]"], "nope")]
    assert refused("/colors", {"green": 1}) == [("enum", ["body", "green", "[key]"], "green")]
    assert refused("/days", [{"2024-01-02": 1}, {"2024-13-02": 1}]) == [("date_parsing", ["body", 1, "2024-13-02", "[key]"], "2024-13-02")]
    # The document says what the names must be, as pydantic's does.
    schema = client.get("/openapi.json").json()["paths"]["/ids"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert schema["propertyNames"] == {"type": "string", "format": "uuid"}


def test_an_http_exception_without_detail_reads_as_its_reason_phrase() -> None:
    # Found by a FastAPI port: `HTTPException(409).detail` was None where FastAPI gives
    # "Conflict", so an exception handler echoing `exc.detail` sent null.
    from ferrule.testing import TestClient

    app = App()

    @app.exception_handler(HTTPException)
    def echo(request, exc: HTTPException):
        return {"detail": exc.detail}

    @app.get("/taken")
    def taken() -> dict:
        raise HTTPException(409)

    assert HTTPException(409).detail == "Conflict"
    assert HTTPException(404, "No such user").detail == "No such user"
    assert TestClient(app).get("/taken").json() == {"detail": "Conflict"}
    # Without a handler, the problem carries only a detail that was given.
    bare = App()

    @bare.get("/taken")
    def bare_taken() -> dict:
        raise HTTPException(409)

    answer = TestClient(bare).get("/taken")
    assert answer.status_code == 409 and "detail" not in answer.json(), answer.json()


class Boom(Exception):
    pass


def test_an_exception_handler_that_raises_hands_its_exception_to_the_last_resort() -> None:
    # Found by a FastAPI port: a handler for Boom that raised gave a bare 500; Starlette hands
    # what it raised to the handler for Exception (its ServerErrorMiddleware).
    from ferrule.responses import JSONResponse
    from ferrule.testing import TestClient

    app = App()

    @app.exception_handler(Boom)
    def on_boom(request, exc):
        raise RuntimeError("the handler failed")

    @app.exception_handler(ValueError)
    async def on_value(request, exc):
        raise KeyError("the async handler failed")

    @app.exception_handler(Exception)
    def last_resort(request, exc):
        return JSONResponse({"oops": type(exc).__name__}, status_code=500)

    @app.get("/sync")
    def sync_route() -> dict:
        raise Boom()

    @app.get("/async")
    async def async_route() -> dict:
        raise ValueError()

    client = TestClient(app, raise_server_exceptions=False)
    assert client.get("/sync").json() == {"oops": "RuntimeError"}
    assert client.get("/async").json() == {"oops": "KeyError"}


def test_a_raised_exception_is_logged_once_with_its_traceback(caplog, capfd) -> None:
    # Found by every probe: each failure was two ERROR records, the binding's traceback and
    # the core's "handler for GET /x failed: RuntimeError raised".
    from ferrule.testing import TestClient

    app = App()

    @app.get("/x")
    def failing() -> dict:
        raise RuntimeError("one record")

    with caplog.at_level("ERROR"):
        assert TestClient(app, raise_server_exceptions=False).get("/x").status_code == 500
    errors = [record for record in caplog.records if record.levelname == "ERROR"]
    assert [record.getMessage() for record in errors] == ["GET /x raised an exception"], [r.getMessage() for r in errors]
    assert errors[0].exc_info is not None and isinstance(errors[0].exc_info[1], RuntimeError)
    assert "handler for GET /x failed" not in capfd.readouterr().err
