"""Parameter rules: where each argument comes from, read from the handler's signature, and
what the core does with the schema derived from its type hints."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import ipaddress
import pathlib
import pickle
import re
import uuid
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

import pytest

import annotated_types
import pydantic
import typing_extensions

from ferrule import App, Body, Cookie, Depends, Field, File, Form, Header, Query, Request, UploadFile
from ferrule.testing import TestClient


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Address:
    city: str
    zip: str = "00000"


@dataclasses.dataclass
class User:
    name: str
    age: int
    id: uuid.UUID
    born: datetime.date
    address: Address
    tags: list[str] = dataclasses.field(default_factory=list)


class Point(TypedDict):
    x: float
    y: float


class Product(TypedDict):
    id: Annotated[int, Field(ge=1)]
    name: Annotated[str, annotated_types.MinLen(1), annotated_types.MaxLen(5)]
    tags: NotRequired[Annotated[list[str], Field(max_length=2)]]


class Event(TypedDict):
    id: uuid.UUID
    at: datetime.datetime


def make_app() -> App:
    app = App()

    @app.get("/items/{item_id:int}")
    def typed_by_template(item_id, q: Optional[str] = None):
        return {"item_id": item_id, "type": type(item_id).__name__, "q": q}

    @app.get("/orders/{order_id}")
    def typed_by_hint(order_id: uuid.UUID, day: datetime.date, limit: int = 10):
        return {"order_id": order_id, "is_uuid": isinstance(order_id, uuid.UUID), "day": day, "limit": limit}

    @app.get("/search")
    def constrained(
        q: Annotated[str, Query(min_length=2, max_length=5)],
        page: int = Query(1, ge=1, le=50),
        tags: list[str] = Query([]),
        color: Color = Color.RED,
        mode: Literal["fast", "slow"] = "fast",
    ):
        return {"q": q, "page": page, "tags": tags, "color": color, "is_enum": isinstance(color, Color), "mode": mode}

    @app.get("/headers")
    def headers(user_agent: str = Header(), x_count: int = Header(0), session: Optional[str] = Cookie(None)):
        return {"user_agent": user_agent, "x_count": x_count, "session": session}

    @app.post("/users", status_code=201)
    def create_user(user: User):
        return {"is_user": isinstance(user, User), "user": user, "city_type": type(user.address).__name__}

    @app.post("/points")
    def point(p: Point):
        return {"sum": p["x"] + p["y"]}

    @app.post("/products")
    def product(p: Product):
        return p

    @app.post("/raw")
    def raw(payload: dict = Body()):
        return {"keys": sorted(payload)}

    @app.post("/login")
    def login(username: str = Form(), remember: bool = Form(False)):
        return {"username": username, "remember": remember}

    @app.post("/upload")
    def upload(title: str = Form(), file: UploadFile = File()):
        return {"title": title, "filename": file.filename, "size": file.size, "head": file.read()[:4].hex()}

    @app.get("/uuids/{id:uuid}")
    def a_uuid(id: uuid.UUID):
        same = uuid.UUID(str(id))
        return {
            "equal": id == same and hash(id) == hash(same),
            "int": str(id.int),
            "version": id.version,
            "is_safe": id.is_safe.name,
            "round_trip": pickle.loads(pickle.dumps(id)) == same,
            "repr": repr(id),
            "read_only": _refuses_writes(id),
        }

    @app.post("/events")
    def an_event(event: Event):
        return {
            "id_is_uuid": type(event["id"]) is uuid.UUID,
            "id": event["id"].int,
            "at": event["at"].isoformat(),
            "utc": event["at"].tzinfo is datetime.timezone.utc,
        }

    @app.get("/whole/{id:int}")
    def whole(id: int, request: Request):
        return {"id": id, "method": request.method, "agent": request.header("user-agent")}

    return app


@pytest.fixture(scope="module")
def client():
    with TestClient(make_app()) as client:
        yield client


def test_template_type_coerces_without_a_hint(client):
    assert client.get("/items/7", params={"q": "hi"}).json() == {"item_id": 7, "type": "int", "q": "hi"}


def test_hints_type_path_and_query(client):
    response = client.get("/orders/550E8400-E29B-41D4-A716-446655440000", params={"day": "2024-02-29"})
    assert response.status_code == 200, response.text
    assert response.json() == {"order_id": "550e8400-e29b-41d4-a716-446655440000", "is_uuid": True, "day": "2024-02-29", "limit": 10}


def _refuses_writes(value: uuid.UUID) -> bool:
    try:
        value.int = 0  # type: ignore[misc]
    except TypeError:
        return True
    return False


@pytest.mark.parametrize("text", ["550e8400-e29b-41d4-a716-446655440000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "00000000-0000-0000-0000-000000000000"])
def test_a_uuid_parameter_is_a_whole_uuid(client, text):
    """The UUID the handler gets is built without `UUID.__init__`: it must be the same object
    `UUID(text)` is, in every behaviour a handler can see, the upper 64 bits included."""
    response = client.get(f"/uuids/{text}")
    assert response.status_code == 200, response.text
    expected = uuid.UUID(text)
    assert response.json() == {
        "equal": True,
        "int": str(expected.int),
        "version": expected.version,
        "is_safe": "unknown",
        "round_trip": True,
        "repr": repr(expected),
        "read_only": True,
    }


# What `uuid.UUID(text)` accepts and refuses, with the spellings the uuid crate reads and those
# only Python's own code does.
UUID_SPELLINGS = [
    "550e8400-e29b-41d4-a716-446655440000",
    "550E8400-E29B-41D4-A716-446655440000",
    "550e8400e29b41d4a716446655440000",
    "{550e8400-e29b-41d4-a716-446655440000}",
    "urn:uuid:550e8400-e29b-41d4-a716-446655440000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "550e8400-e29b41d4-a716-446655440000",  # hyphens where Python alone allows them
    " 550e8400e29b41d4a716446655440000",
    "550e8400-e29b-41d4-a716-44665544000",  # one digit short
    "550e8400-e29b-41d4-a716-44665544000g",
    "550e8400-e29b-41d4-a716-4466554400\ud800",  # not encodable as UTF-8
    "",
]


@pytest.mark.parametrize("text", UUID_SPELLINGS)
def test_a_body_uuid_is_what_uuid_uuid_makes_of_the_text(text):
    from ferrule import _ferrule

    try:
        expected = uuid.UUID(text)
    except ValueError as error:
        with pytest.raises(ValueError, match=re.escape(str(error))):
            _ferrule.uuid_from_text(text)
        return
    made = _ferrule.uuid_from_text(text)
    assert type(made) is uuid.UUID and made == expected and made.int == expected.int
    assert made.is_safe == expected.is_safe and pickle.loads(pickle.dumps(made)) == expected and _refuses_writes(made)


def test_a_body_that_is_not_text_goes_to_uuid_uuid_for_its_error():
    from ferrule import _ferrule

    with pytest.raises(AttributeError):
        _ferrule.uuid_from_text(5)


@pytest.mark.parametrize("at", ["2024-01-15T10:30:00Z", "2024-01-15T10:30:00z", "2024-01-15T10:30:00+00:00"])
def test_body_uuids_and_date_times_arrive_typed(client, at):
    response = client.post("/events", json={"id": "550e8400-e29b-41d4-a716-446655440000", "at": at})
    assert response.status_code == 200, response.text
    assert response.json() == {"id_is_uuid": True, "id": uuid.UUID("550e8400-e29b-41d4-a716-446655440000").int, "at": "2024-01-15T10:30:00+00:00", "utc": True}


class Shipment(TypedDict):
    id: uuid.UUID
    ships_on: NotRequired[Optional[datetime.date]]
    events: list[Event]
    holidays: NotRequired[dict[str, datetime.date]]
    note: NotRequired[str]


class Tagged(TypedDict):
    at: datetime.datetime
    tags: set[str]


BODY_TYPES = {
    "uuid": (Annotated[uuid.UUID, Body()], "550E8400-E29B-41D4-A716-446655440000"),
    "events": (list[Event], [{"id": "550e8400-e29b-41d4-a716-446655440000", "at": at} for at in (
        "2024-01-15T10:30:00Z",
        "2024-01-15t10:30:00.5z",
        "2024-02-29T23:59:59.123456+05:30",
        "1999-12-31T00:00:00-08:00",
    )]),
    "shipment": (Shipment, {
        "id": "6BA7B810-9DAD-11D1-80B4-00C04FD430C8",
        "ships_on": None,
        "events": [],
        "holidays": {"new year": "2025-01-01", "leap": "2024-02-29"},
        "note": "2024-01-01",  # a string the plan does not name stays a string
        "extra": "550e8400-e29b-41d4-a716-446655440000",
    }),
    "shipment, a date": (Shipment, {"id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "ships_on": "2024-03-01", "events": [{"id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "at": "2024-03-01T08:00:00+00:00"}]}),
    "optional, null": (Optional[Event], None),
    "a set inside: Python converts": (Tagged, {"at": "2024-01-15T10:30:00Z", "tags": ["a", "b"]}),
}


def _typed(value):
    """A value with the exact type of each part, so `str` and `UUID` never compare equal."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, (list, set)):
        return (type(value).__name__, sorted(map(repr, value)) if isinstance(value, set) else [_typed(v) for v in value])
    return (type(value).__name__, value, getattr(value, "tzinfo", None))


@pytest.mark.parametrize("case", BODY_TYPES)
def test_a_body_arrives_as_the_python_converter_makes_it(case):
    # Rust converts a body whose type it can (TypeInfo.native); the handler must see what
    # Python's own converter makes of the same JSON, type for type.
    from ferrule import schema

    annotation, payload = BODY_TYPES[case]
    info = schema.describe(annotation, body=True)
    expected = payload if payload is None or info.convert is None else info.convert(payload)
    seen = []
    app = App()

    def handler(body=None):
        seen.append(body)
        return {}

    # Set, not written: this module's annotations are text, read where `annotation` is unknown.
    handler.__annotations__ = {"body": annotation}
    app.post("/body")(handler)

    with TestClient(app) as client:
        response = client.post("/body", json=payload)
    assert response.status_code == 200, response.text
    assert _typed(seen[0]) == _typed(expected)


def test_which_bodies_rust_converts():
    from ferrule import schema

    def native(annotation):
        return schema.describe(annotation, body=True).native

    assert native(Shipment) == {"id": "uuid", "ships_on": "date", "events": ("list", {"id": "uuid", "at": "datetime"}), "holidays": ("values", "date")}
    assert native(Optional[list[Event]]) == ("list", {"id": "uuid", "at": "datetime"})
    # Nothing to convert, or a part only Python can build: no plan.
    for annotation in (Point, list[str], Tagged, list[Tagged], set[uuid.UUID], tuple[uuid.UUID, ...], User, Color):
        assert native(annotation) is None, annotation
    # Not from a body: the core has already typed the value.
    assert schema.describe(uuid.UUID).native is None


def _event_id(event: Event) -> uuid.UUID:
    return event["id"]


def test_a_dependency_reading_a_converted_body_converts_it_too():
    app = App()

    @app.post("/events")
    def handler(event: Event, id: Annotated[uuid.UUID, Depends(_event_id)]):
        return {"same": id == event["id"], "types": [type(id).__name__, type(event["at"]).__name__]}

    with TestClient(app) as client:
        response = client.post("/events", json={"id": "550e8400-e29b-41d4-a716-446655440000", "at": "2024-01-15T10:30:00Z"})
    assert response.json() == {"same": True, "types": ["UUID", "datetime"]}


def test_hint_type_errors_are_problems_located_in_rust(client):
    response = client.get("/orders/nope", params={"day": "yesterday", "limit": "x"})
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    locs = {tuple(e["loc"]): e["type"] for e in response.json()["errors"]}
    assert locs == {("path", "order_id"): "uuid_parsing", ("query", "day"): "date_parsing", ("query", "limit"): "int_parsing"}


def test_query_constraints_defaults_arrays_and_enums(client):
    response = client.get("/search", params={"q": "abc", "tags": ["a", "b"], "color": "blue", "mode": "slow"})
    assert response.json() == {"q": "abc", "page": 1, "tags": ["a", "b"], "color": "blue", "is_enum": True, "mode": "slow"}
    response = client.get("/search", params={"q": "a", "page": 0, "color": "green", "mode": "warp"})
    assert response.status_code == 422
    types = {e["loc"][-1]: e["type"] for e in response.json()["errors"]}
    assert types == {"q": "string_too_short", "page": "greater_than_equal", "color": "enum", "mode": "enum"}


def test_missing_required_query(client):
    response = client.get("/search")
    assert response.status_code == 422
    assert response.json()["errors"][0]["type"] == "missing"
    assert response.json()["errors"][0]["loc"] == ["query", "q"]


def test_headers_use_hyphens_and_cookies(client):
    response = client.get("/headers", headers={"User-Agent": "probe/1", "X-Count": "3"}, cookies={"session": "abc"})
    assert response.json() == {"user_agent": "probe/1", "x_count": 3, "session": "abc"}


def test_a_header_named_in_capitals_reaches_the_handler_and_optional_without_default_is_required() -> None:
    """Found by a differential run against FastAPI 0.165: a header declared with capitals
    (`alias="X-Token"`, or a parameter `X_Count`) was checked but reached the handler as None,
    and `Optional[int]` with no default was optional, where FastAPI requires it."""
    app = App()

    @app.get("/token")
    def token(token: Annotated[str, Header(alias="X-Token")], X_Count: Annotated[int, Header()] = 0) -> dict:
        return {"token": token, "count": X_Count}

    @app.get("/page")
    def page(page: Optional[int], size: Optional[int] = None) -> dict:
        return {"page": page, "size": size}

    with TestClient(app) as client:
        assert client.get("/token", headers={"x-token": "abc", "X-COUNT": "3"}).json() == {"token": "abc", "count": 3}
        missing = client.get("/token")
        assert missing.status_code == 422 and [e["type"] for e in missing.json()["errors"]] == ["missing"]
        refused = client.get("/page")
        assert refused.status_code == 422
        assert [(e["type"], e["loc"]) for e in refused.json()["errors"]] == [("missing", ["query", "page"])]
        assert client.get("/page?page=2").json() == {"page": 2, "size": None}


class Parcel(pydantic.BaseModel):
    name: str


def test_an_optional_body_without_a_default_must_be_sent_and_may_be_null() -> None:
    """FastAPI answers 422 `missing` at `["body"]` for `item: Optional[Item]` sent no body, and
    takes `null`; Ferrule took the missing body as None (found by a differential run)."""
    app = App()

    @app.post("/must")
    def must(item: Optional[Parcel]) -> dict:
        return {"item": None if item is None else item.model_dump()}

    @app.post("/may")
    def may(item: Optional[Parcel] = None) -> dict:
        return {"item": None if item is None else item.model_dump()}

    with TestClient(app) as client:
        missing = client.post("/must")
        assert missing.status_code == 422 and [(e["type"], e["loc"]) for e in missing.json()["errors"]] == [("missing", ["body"])]
        assert client.post("/must", content=b"null", headers={"content-type": "application/json"}).json() == {"item": None}
        assert client.post("/must", json={"name": "x"}).json() == {"item": {"name": "x"}}
        assert client.post("/may").json() == {"item": None}


def test_a_decimal_parameter_keeps_every_digit_it_was_sent() -> None:
    """Found by a differential run against FastAPI 0.165: a `Decimal` query, header or form value
    went through a float (`12345678901234567.89` arrived as `12345678901234568`, `1.10` as
    `1.1`); FastAPI reads the text. Its bounds still hold, and text that is no number is
    pydantic's `decimal_parsing`."""
    app = App()

    @app.get("/price")
    def price(v: decimal.Decimal, floor: Annotated[Optional[decimal.Decimal], Query(ge=0)] = None, rate: Annotated[Optional[decimal.Decimal], Header()] = None) -> dict:
        return {"v": str(v), "floor": str(floor), "rate": str(rate), "type": type(v).__name__}

    @app.post("/pay")
    def pay(amount: Annotated[decimal.Decimal, Form()]) -> dict:
        return {"amount": str(amount)}

    with TestClient(app) as client:
        sent = client.get("/price?v=12345678901234567.89&floor=0.50", headers={"rate": "3.14159265358979323846"})
        assert sent.json() == {"v": "12345678901234567.89", "floor": "0.50", "rate": "3.14159265358979323846", "type": "Decimal"}
        assert client.get("/price?v=1.10").json()["v"] == "1.10"
        assert client.post("/pay", data={"amount": "19.990"}).json() == {"amount": "19.990"}
        errors = client.get("/price?v=abc&floor=-1").json()["errors"]
        assert [(e["type"], e["loc"]) for e in errors] == [("decimal_parsing", ["query", "v"]), ("greater_than_equal", ["query", "floor"])]


class Filters(pydantic.BaseModel):
    a: int
    b: list[str] = []
    limit: int = pydantic.Field(10, gt=0, le=100)
    tag: Optional[str] = pydantic.Field(None, alias="x-tag")


class Client(pydantic.BaseModel):
    user_agent: str
    x_count: int = 0


def test_a_model_of_query_header_or_cookie_parameters_as_in_fastapi() -> None:
    """FastAPI's parameter models (`Annotated[Filters, Query()]`): each field is a parameter,
    checked and located as one, and the handler gets the model. It was a 422 `missing` at the
    model's own name whatever was sent (found by a differential run; the outcomes below are
    FastAPI 0.165's)."""
    app = App()

    @app.get("/items")
    def items(filters: Annotated[Filters, Query()], client: Annotated[Client, Header()]) -> dict:
        return {"filters": filters.model_dump(), "client": client.model_dump(), "type": type(filters).__name__}

    with TestClient(app) as client:
        sent = client.get("/items?a=1&b=x&b=y&x-tag=t", headers={"user-agent": "probe", "x-count": "3"})
        assert sent.json() == {
            "filters": {"a": 1, "b": ["x", "y"], "limit": 10, "tag": "t"},
            "client": {"user_agent": "probe", "x_count": 3},
            "type": "Filters",
        }
        refused = client.get("/items?limit=0")
        assert [(e["type"], e["loc"]) for e in refused.json()["errors"]] == [("missing", ["query", "a"]), ("greater_than", ["query", "limit"])]
    parameters = app.openapi()["paths"]["/items"]["get"]["parameters"]
    assert [(p["in"], p["name"]) for p in parameters] == [("query", "a"), ("query", "b"), ("query", "limit"), ("query", "x-tag"), ("header", "user-agent"), ("header", "x-count")]


class ClosedFilters(pydantic.BaseModel):
    model_config = {"extra": "forbid"}
    a: int = 0
    b: list[str] = []


def test_a_parameter_model_that_forbids_extras_refuses_undeclared_names() -> None:
    """FastAPI's "forbid extra query parameters": with `extra="forbid"`, each name the route
    does not declare is a 422 `extra_forbidden` at it, a repeated one's values together, after
    the declared parameters' issues (FastAPI 0.165's answers); they were let be. A parameter
    the route declares beside the model is not extra (FastAPI refuses it too)."""
    app = App()

    @app.get("/q")
    def q(m: Annotated[ClosedFilters, Query()], z: int = 0) -> dict:
        return {**m.model_dump(), "z": z}

    @app.get("/c")
    def c(m: Annotated[ClosedFilters, Cookie()]) -> dict:
        return m.model_dump()

    with TestClient(app) as client:
        assert client.get("/q?a=1&b=x&z=5").json() == {"a": 1, "b": ["x"], "z": 5}
        refused = client.get("/q?a=x&zz=2&yy=3&zz=4").json()["errors"]
        assert [(e["type"], e["loc"], e["input"]) for e in refused] == [
            ("int_parsing", ["query", "a"], "x"),
            ("extra_forbidden", ["query", "zz"], ["2", "4"]),
            ("extra_forbidden", ["query", "yy"], "3"),
        ]
        refused = client.get("/c", headers={"cookie": "a=1; other=2"}).json()["errors"]
        assert [(e["type"], e["loc"], e["msg"]) for e in refused] == [("extra_forbidden", ["cookie", "other"], "Extra inputs are not permitted")]

def test_header_cookie_and_form_take_multiple_of_as_query_does() -> None:
    """`Header(multiple_of=3)` (and `Cookie`, `Form`) raised TypeError at the decorator; FastAPI
    takes it (found by a differential run)."""
    app = App()

    @app.get("/h")
    def h(n: Annotated[int, Header(multiple_of=3)], c: Annotated[int, Cookie(multiple_of=2)] = 0) -> dict:
        return {"n": n, "c": c}

    @app.post("/f")
    def f(n: Annotated[int, Form(multiple_of=5)]) -> dict:
        return {"n": n}

    with TestClient(app) as client:
        assert client.get("/h", headers={"n": "9"}, cookies={"c": "4"}).json() == {"n": 9, "c": 4}
        refused = client.get("/h", headers={"n": "4"}, cookies={"c": "3"}).json()["errors"]
        assert [(e["type"], e["loc"]) for e in refused] == [("multiple_of", ["header", "n"]), ("multiple_of", ["cookie", "c"])]
        assert [(e["type"], e["loc"]) for e in client.post("/f", data={"n": "7"}).json()["errors"]] == [("multiple_of", ["body", "n"])]


def test_a_bytes_parameter_is_its_texts_utf8_and_a_bytes_file_its_content() -> None:
    """`v: bytes` from a query, header or form field was refused as "not a file"; FastAPI gives
    the text's UTF-8 (found by a differential run). `File()` still gives a file's bytes."""
    app = App()

    @app.get("/q")
    def q(v: bytes, h: Annotated[Optional[bytes], Header()] = None, many: Annotated[list[bytes], Query()] = []) -> dict:
        return {"v": repr(v), "h": repr(h), "many": repr(many)}

    @app.post("/f")
    def f(name: Annotated[bytes, Form()], upload: Annotated[bytes, File()]) -> dict:
        return {"name": repr(name), "upload": repr(upload)}

    with TestClient(app) as client:
        assert client.get("/q?v=abc&many=x&many=%C3%A9", headers={"h": "hi"}).json() == {"v": "b'abc'", "h": "b'hi'", "many": "[b'x', b'\\xc3\\xa9']"}
        sent = client.post("/f", data={"name": "ada"}, files={"upload": ("a.bin", b"\x00\x01", "application/octet-stream")})
        assert sent.json() == {"name": "b'ada'", "upload": "b'\\x00\\x01'"}


def test_time_timedelta_and_the_types_pydantic_knows_are_parameters() -> None:
    """`time`, `timedelta`, `IPv4Address`, `Path` and `HttpUrl` parameters were a TypeError at
    the decorator, so an app declaring one did not start; FastAPI takes them (found by a probe
    beside FastAPI 0.165, whose answers these are). `time` is read by Ferrule; the rest by
    pydantic's `TypeAdapter`, after the core has checked the format each is described with."""
    app = App()

    @app.get("/at")
    def at(t: datetime.time, d: datetime.timedelta, ip: ipaddress.IPv4Address, p: pathlib.Path, u: pydantic.HttpUrl) -> dict:
        return {"t": repr(t), "d": repr(d), "ip": repr(ip), "p": str(p), "u": str(u)}

    @app.post("/at")
    def at_body(t: datetime.time = Body(embed=True)) -> dict:
        return {"t": repr(t)}

    with TestClient(app) as client:
        sent = client.get("/at?t=07:30&d=-PT1S&ip=10.0.0.1&p=/var/x&u=http://a.example")
        assert sent.json() == {"t": "datetime.time(7, 30)", "d": "datetime.timedelta(days=-1, seconds=86399)", "ip": "IPv4Address('10.0.0.1')", "p": "/var/x", "u": "http://a.example/"}
        sent = client.get("/at", params={"t": "07:30:00.5Z", "d": "1 day, 01:00:00", "ip": "10.0.0.1", "p": "x", "u": "https://b.example/c"})
        assert sent.json()["t"] == "datetime.time(7, 30, 0, 500000, tzinfo=datetime.timezone.utc)"
        assert sent.json()["d"] == "datetime.timedelta(days=1, seconds=3600)"
        refused = client.get("/at?t=25:00&d=3600&ip=256.1.1.1&p=x&u=x").json()["errors"]
        assert [(e["type"], e["loc"]) for e in refused] == [
            ("time_parsing", ["query", "t"]),
            ("time_delta_parsing", ["query", "d"]),
            ("ip_v4_address", ["query", "ip"]),
            ("url_parsing", ["query", "u"]),
        ]
        # A form the core's `uri` format takes, which pydantic's `HttpUrl` refuses: its own 422.
        refused = client.get("/at?t=07:30&d=P1D&ip=10.0.0.1&p=x&u=ftp://a").json()["errors"]
        assert [(e["type"], e["loc"]) for e in refused] == [("url_scheme", ["query", "u"])]
        assert client.post("/at", json={"t": "23:59:59"}).json() == {"t": "datetime.time(23, 59, 59)"}
    parameters = {p["name"]: p["schema"] for p in app.openapi()["paths"]["/at"]["get"]["parameters"]}
    assert (parameters["t"]["format"], parameters["d"]["format"], parameters["ip"]["format"], parameters["u"]["format"]) == ("time", "duration", "ipv4", "uri")


def test_a_path_segment_of_a_type_described_as_text() -> None:
    """`/ip/{addr}` with `addr: IPv4Address`, or a `time`, was a TypeError at the decorator
    ("cannot be a path parameter"); FastAPI takes them (found by a probe beside it)."""
    app = App()

    @app.get("/ip/{addr}")
    def ip(addr: ipaddress.IPv4Address) -> dict:
        return {"addr": repr(addr)}

    @app.get("/at/{t}")
    def at(t: datetime.time) -> dict:
        return {"t": repr(t)}

    with TestClient(app) as client:
        assert client.get("/ip/10.0.0.1").json() == {"addr": "IPv4Address('10.0.0.1')"}
        assert client.get("/at/07:30").json() == {"t": "datetime.time(7, 30)"}
        refused = client.get("/ip/300.0.0.1").json()["errors"]
        assert [(e["type"], e["loc"]) for e in refused] == [("ip_v4_address", ["path", "addr"])]

def test_a_decimal_is_held_to_its_digits_as_pydantic_holds_it() -> None:
    """`Query(max_digits=5, decimal_places=2)` was a TypeError (found by a probe beside FastAPI);
    pydantic's `Field` and `condecimal` limits were ignored. Counted on the normalised number,
    as pydantic counts (`1.230` has two places); FastAPI 0.165's answers."""
    app = App()

    @app.get("/d")
    def d(
        q: Annotated[decimal.Decimal, Query(max_digits=5, decimal_places=2)],
        f: Annotated[Optional[decimal.Decimal], pydantic.Field(max_digits=3)] = None,
        c: Optional[pydantic.condecimal(decimal_places=1)] = None,  # type: ignore[valid-type]
    ) -> dict:
        return {"q": str(q), "f": str(f), "c": str(c)}

    with TestClient(app) as client:
        assert client.get("/d?q=123.45&f=1.00&c=2.0").json() == {"q": "123.45", "f": "1.00", "c": "2.0"}
        assert client.get("/d?q=1.230").json()["q"] == "1.230"
        cases = {
            "q=1234.5": ("decimal_whole_digits", "Decimal input should have no more than 3 digits before the decimal point"),
            "q=0.001": ("decimal_max_places", "Decimal input should have no more than 2 decimal places"),
            "q=100000": ("decimal_max_digits", "Decimal input should have no more than 5 digits in total"),
            "q=1&f=1234": ("decimal_max_digits", "Decimal input should have no more than 3 digits in total"),
            "q=1&c=0.25": ("decimal_max_places", "Decimal input should have no more than 1 decimal place"),
        }
        for query, (kind, msg) in cases.items():
            (error,) = client.get(f"/d?{query}").json()["errors"]
            name = query.split("&")[-1].split("=")[0]
            assert (error["type"], error["loc"], error["msg"]) == (kind, ["query", name], msg), query

def test_a_datetime_or_date_parameter_takes_what_pydantic_reads() -> None:
    """A Unix timestamp, a day alone, `+0100` and `2024-01-15 10:30` for a `datetime`, and a
    midnight date-time for a `date`, were 422s; FastAPI 0.165 takes each, with these values
    (found by a probe beside it). A date-time at another time is no `date`."""
    app = App()

    @app.get("/when")
    def when(at: Optional[datetime.datetime] = None, day: Optional[datetime.date] = None) -> dict:
        return {"at": repr(at), "day": repr(day)}

    utc = datetime.timezone.utc
    with TestClient(app) as client:
        def at(sent: str) -> str:
            return client.get("/when", params={"at": sent}).json()["at"]

        assert at("1700000000.5") == repr(datetime.datetime(2023, 11, 14, 22, 13, 20, 500000, tzinfo=utc))
        assert at("1700000000000") == repr(datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=utc))
        assert at("2024-01-15") == repr(datetime.datetime(2024, 1, 15))
        assert at("2024-01-15T10:30:00+0100") == repr(datetime.datetime(2024, 1, 15, 10, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=1))))
        assert at("2024-01-15 10:30") == repr(datetime.datetime(2024, 1, 15, 10, 30))
        assert client.get("/when", params={"day": "2024-01-15T00:00:00"}).json()["day"] == repr(datetime.date(2024, 1, 15))
        refused = client.get("/when", params={"at": "1e10", "day": "2024-01-15T00:00:01"}).json()["errors"]
        assert [(e["type"], e["loc"]) for e in refused] == [("datetime_parsing", ["query", "at"]), ("date_from_datetime_inexact", ["query", "day"])]

def test_dataclass_body_is_validated_then_built(client):
    user = {"name": "Ada", "age": 36, "id": str(uuid.uuid4()), "born": "1815-12-10", "address": {"city": "London"}}
    response = client.post("/users", json=user)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["is_user"] and body["city_type"] == "Address"
    assert body["user"] == {**user, "address": {"city": "London", "zip": "00000"}, "tags": []}


def test_dataclass_body_errors_point_into_the_body(client):
    response = client.post("/users", json={"name": "Ada", "age": "old", "address": {}})
    assert response.status_code == 422
    locs = {tuple(e["loc"]) for e in response.json()["errors"]}
    assert ("body", "age") in locs and ("body", "address", "city") in locs and ("body", "id") in locs


def test_typeddict_and_dict_bodies(client):
    assert client.post("/points", json={"x": 1.5, "y": 2}).json() == {"sum": 3.5}
    assert client.post("/points", json={"x": 1}).status_code == 422
    assert client.post("/raw", json={"b": 1, "a": 2}).json() == {"keys": ["a", "b"]}
    assert client.post("/raw", json=[1, 2]).status_code == 422


class Pair(typing_extensions.TypedDict):
    a: int
    b: typing_extensions.NotRequired[str]


def test_a_typing_extensions_typeddict_is_a_body_too():
    """Found by a README-driven probe: pydantic asks for typing_extensions' TypedDict before
    Python 3.12, and the decorator refused it."""
    app = App()

    @app.post("/pair")
    def pair(body: Pair) -> dict:
        return {"a": body["a"], "keys": sorted(body)}

    with TestClient(app) as client:
        assert client.post("/pair", json={"a": 1}).json() == {"a": 1, "keys": ["a"]}
        assert client.post("/pair", json={"a": "x"}).status_code == 422


@dataclasses.dataclass
class Category:
    name: str
    children: list[Category] = dataclasses.field(default_factory=list)
    parent: Optional[Category] = None
    count: int = 0


class Comment(TypedDict):
    text: str
    replies: NotRequired[list[Comment]]
    at: NotRequired[datetime.date]


def test_recursive_dataclasses_and_typeddicts_are_bodies_and_responses():
    """Found by a README-driven probe: a tree (``children: list[Category]``) was refused at
    declaration, where FastAPI takes a recursive pydantic model."""
    app = App()

    @app.post("/categories")
    def category(tree: Category) -> Category:
        deepest = tree
        while deepest.children:
            deepest = deepest.children[-1]
        assert isinstance(deepest, Category) and isinstance(deepest.count, int)
        return tree

    @app.post("/comments")
    def comment(body: Comment) -> dict:
        at = body["replies"][0]["replies"][0]["at"]
        return {"at": type(at).__name__, "year": at.year}

    with TestClient(app) as client:
        sent = {"name": "a", "children": [{"name": "b", "children": [{"name": "c", "count": 2.0}], "secret": 1}]}
        answer = client.post("/categories", json=sent)
        assert answer.status_code == 200
        assert answer.json() == {"name": "a", "count": 0, "parent": None, "children": [
            {"name": "b", "count": 0, "parent": None, "children": [{"name": "c", "count": 2, "parent": None, "children": []}]}]}
        deep = client.post("/categories", json={"name": "a", "children": [{"name": "b", "parent": {"name": 5}}]})
        assert deep.status_code == 422
        assert deep.json()["errors"][0]["loc"] == ["body", "children", 0, "parent", "name"]
        nested = client.post("/comments", json={"text": "x", "replies": [{"text": "y", "replies": [{"text": "z", "at": "2024-01-15"}]}]})
        assert nested.json() == {"at": "date", "year": 2024}
        document = client.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    assert schemas["Category"]["properties"]["children"]["items"] == {"$ref": "#/components/schemas/Category"}
    assert "Comment" in schemas


@dataclasses.dataclass
class Labelled:
    tags: set[str]


def test_a_set_drops_repeated_items_as_pydantics_does():
    """Found by running FastAPI's tests: a ``frozenset`` query and a ``set`` body field refused
    a repeated item (``unique_items``) where pydantic keeps one of each."""
    app = App()

    @app.get("/query")
    def query(q: frozenset[int] = Query(frozenset())) -> dict:
        return {"q": sorted(q), "type": type(q).__name__}

    @app.post("/tags")
    def tags(body: Labelled) -> dict:
        return {"tags": sorted(body.tags), "type": type(body.tags).__name__}

    with TestClient(app) as client:
        assert client.get("/query?q=1&q=1&q=2").json() == {"q": [1, 2], "type": "frozenset"}
        assert client.post("/tags", json={"tags": ["a", "a", "b"]}).json() == {"tags": ["a", "b"], "type": "set"}


def test_body_keys_are_one_string_from_request_to_request():
    # Keys are kept for the process (ferrule_core::lasting_keys): each request's dict holds the
    # same key objects, made and hashed once. A key too long to keep, or one never seen before,
    # is an ordinary equal string.
    app = App()
    bodies = []

    @app.post("/keep")
    def keep(payload: dict = Body()):
        bodies.append(payload)
        return {"n": payload["name"]}

    long_key = "k" * 40
    with TestClient(app) as client:
        for n in range(2):
            body = {"name": n, "inner": {"name": -n, "ключ": n}, long_key: n, f"fresh{n}": n}
            assert client.post("/keep", json=body).json() == {"n": n}
    first, second = bodies
    assert first == {"name": 0, "inner": {"name": 0, "ключ": 0}, long_key: 0, "fresh0": 0}
    assert second == {"name": 1, "inner": {"name": -1, "ключ": 1}, long_key: 1, "fresh1": 1}

    def key(d, text):
        return next(k for k in d if k == text)

    assert key(first, "name") is key(second, "name") is key(second["inner"], "name")
    assert key(first["inner"], "ключ") is key(second["inner"], "ключ")
    assert key(second, long_key) == long_key and type(key(second, long_key)) is str


def test_short_body_values_are_one_string_from_request_to_request():
    # Short string values are kept for the process too, in a table of their own: a value sent
    # again is the same str object, not one made again. What is not kept (too long, sent once)
    # and what CPython keeps itself (one character, none) are equal strings all the same.
    app = App()
    bodies = []

    @app.post("/keep-values")
    def keep(payload: dict = Body()):
        bodies.append(payload)
        return payload

    kept_longest, too_long = "v" * 32, "v" * 33
    values = ["active", 'say "hi"\n', "Zürich", "名前", kept_longest, too_long, "x", ""]
    with TestClient(app) as client:
        for n in range(2):
            body = {"status": "active", "tags": values, "inner": {"city": "Zürich", "once": f"only-{n}"}}
            response = client.post("/keep-values", json=body)
            assert response.json() == body, response.text
    first, second = bodies
    assert first["tags"] == second["tags"] == values
    assert first["status"] is second["status"] is second["tags"][0]
    assert first["inner"]["city"] is second["inner"]["city"] is second["tags"][2]
    for at in range(5):
        assert first["tags"][at] is second["tags"][at], values[at]
    assert second["tags"][5] == too_long and type(second["tags"][5]) is str
    assert (first["inner"]["once"], second["inner"]["once"]) == ("only-0", "only-1")


class ArrayBatch(TypedDict):
    ids: list[uuid.UUID]
    rows: list[Any]


def test_arrays_arrive_as_full_lists_nested_and_empty():
    # Lists are made at their length and filled in place: every item is there, in order, and
    # each list is an ordinary one the handler can grow, in the plain walk, the typed walk
    # (list[uuid.UUID] inside a body type) and a query list.
    app = App()
    seen = []

    @app.post("/nested")
    def nested(payload: Any = Body()):
        seen.append(payload)
        payload.append("grown")
        return payload

    @app.post("/batch")
    def batch(payload: ArrayBatch, tags: list[str] = Query([])):
        seen.append((payload, tags))
        return {"ids": [str(i) for i in payload["ids"]], "rows": payload["rows"], "tags": tags}

    nested_body = [[1, [2.5, []]], [], [{"a": [None, True, "x"]}, {"a": []}], "end"]
    ids = [str(uuid.uuid4()) for _ in range(3)]
    rows = [[], [[]], [1, "two", {"three": [3]}]]
    with TestClient(app) as client:
        response = client.post("/nested", json=nested_body)
        assert response.json() == nested_body + ["grown"], response.text
        response = client.post("/batch?tags=a&tags=b&tags=c", json={"ids": ids, "rows": rows})
        assert response.json() == {"ids": ids, "rows": rows, "tags": ["a", "b", "c"]}, response.text
        response = client.post("/batch", json={"ids": [], "rows": []})
        assert response.json() == {"ids": [], "rows": [], "tags": []}, response.text
    (first, (typed, tags), (empty, no_tags)) = seen
    assert type(first) is list and all(type(item) is list for item in first[:3])
    assert first[2][0]["a"] == [None, True, "x"]
    assert [type(i) for i in typed["ids"]] == [uuid.UUID] * 3 and tags == ["a", "b", "c"]
    assert typed["rows"] == rows and empty == {"ids": [], "rows": []} and no_tags == []


def test_constraints_inside_body_types(client):
    assert client.post("/products", json={"id": 1, "name": "pen"}).json() == {"id": 1, "name": "pen"}
    response = client.post("/products", json={"id": 0, "name": "toolong", "tags": ["a", "b", "c"]})
    assert response.status_code == 422
    types = {tuple(e["loc"]): e["type"] for e in response.json()["errors"]}
    assert types == {("body", "id"): "greater_than_equal", ("body", "name"): "string_too_long", ("body", "tags"): "too_long"}


def test_form_fields(client):
    response = client.post("/login", data={"username": "ada", "remember": "on"})
    assert response.json() == {"username": "ada", "remember": True}


def test_multipart_file(client):
    response = client.post("/upload", data={"title": "Report"}, files={"file": ("r.bin", b"\x89PNG\x00\xff", "application/octet-stream")})
    assert response.status_code == 200, response.text
    assert response.json() == {"title": "Report", "filename": "r.bin", "size": 6, "head": "89504e47"}


def test_request_argument_next_to_typed_ones(client):
    response = client.get("/whole/5", headers={"User-Agent": "probe/2"})
    assert response.json() == {"id": 5, "method": "GET", "agent": "probe/2"}


def test_declaration_errors_are_raised_at_decoration():
    app = App()
    with pytest.raises(TypeError, match="has no"):

        @app.get("/x")
        def no_such_path_param(x: int = __import__("ferrule").Path()):
            return x

    with pytest.raises(TypeError, match="cannot be a path parameter"):

        @app.get("/y/{y}")
        def bad_path_type(y: dict):
            return y

    with pytest.raises(ValueError, match="unknown type `integer`"):

        @app.get("/w/{w:integer}")
        def bad_template_type(w):
            return w

    with pytest.raises(TypeError, match=r"\*args"):

        @app.get("/z")
        def var_args(*args):
            return args


class PriceRange(TypedDict, total=False):
    gte: float
    lte: float


@dataclasses.dataclass
class ItemFilter:
    price: Optional[PriceRange] = None
    tags: Optional[list[str]] = None
    since: Optional[datetime.date] = None


def test_a_deep_object_query_parameter_is_built_typed_and_validated():
    app = App()

    @app.get("/items")
    def items(filter: Annotated[Optional[ItemFilter], Query(style="deepObject")] = None) -> dict:
        if filter is None:
            return {"filter": None}
        return {"price": filter.price, "tags": filter.tags, "since": filter.since.isoformat() if filter.since else None}

    spec = app.openapi()["paths"]["/items"]["get"]["parameters"][0]
    assert (spec["style"], spec["explode"]) == ("deepObject", True)
    with TestClient(app) as client:
        response = client.get("/items?filter[price][gte]=10&filter[tags][]=new&filter[tags][]=sale&filter[since]=2024-01-15")
        assert response.json() == {"price": {"gte": 10.0}, "tags": ["new", "sale"], "since": "2024-01-15"}
        assert client.get("/items").json() == {"filter": None}
        bad = client.get("/items?filter[price][gte]=cheap")
        assert bad.status_code == 422
        assert [e["loc"] for e in bad.json()["errors"]] == [["query", "filter", "price", "gte"]]


def test_a_sniffed_upload_must_be_what_it_claims():
    app = App()

    @app.post("/avatar")
    async def avatar(photo: UploadFile = File(media_types=["image/png", "image/gif"], sniff=True)) -> dict:
        return {"type": photo.content_type, "size": photo.size}

    field = app.openapi()["paths"]["/avatar"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert field["properties"]["photo"]["x-sniff"] is True

    def upload(client: TestClient, content_type: str, data: bytes) -> Any:
        return client.post("/avatar", files={"photo": ("a", data, content_type)})

    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    gif = b"GIF89a\x01\x00\x01\x00\x80\x00\x00"
    with TestClient(app) as client:
        assert upload(client, "image/png", png).json() == {"type": "image/png", "size": len(png)}
        refused = upload(client, "image/png", gif)
        assert refused.status_code == 422
        assert [(e["type"], e["ctx"]) for e in refused.json()["errors"]] == [("file_content_mismatch", {"claimed": "image/png", "found": "image/gif"})]


class Gadget(pydantic.BaseModel):
    name: str
    price: float


class Owner(pydantic.BaseModel):
    username: str


def test_several_body_parameters_or_an_embedded_one_are_members_of_the_body_as_in_fastapi() -> None:
    """FastAPI's "Body - Multiple Parameters": each body parameter is the body's member of its
    name, with its own validation and errors located under it; Body(embed=True) does it for one."""
    app = App()

    @app.put("/items/{item_id:int}")
    def update(item_id: int, item: Gadget, user: Owner, importance: int = Body(gt=0), note: Optional[str] = Body(None), when: datetime.date = Body(alias="on")):
        return {"item_id": item_id, "item": item, "user": user, "importance": importance, "note": note, "on": when.isoformat(), "types": [type(item).__name__, type(when).__name__]}

    @app.put("/embed/{item_id:int}")
    async def embed(item_id: int, item: Gadget = Body(embed=True)):
        return {"item_id": item_id, "item": item}

    @app.post("/single")
    def single(importance: int = Body()):
        return {"importance": importance}

    def current_user(user: Owner) -> str:
        return user.username

    @app.post("/by-dependency")
    def by_dependency(name: str = Depends(current_user)):
        return {"name": name}

    full = {"item": {"name": "a", "price": 1}, "user": {"username": "u"}, "importance": 5, "on": "2024-02-29"}
    with TestClient(app) as client:
        answer = client.put("/items/5", json=full)
        assert (answer.status_code, answer.json()) == (200, {
            "item_id": 5, "item": {"name": "a", "price": 1.0}, "user": {"username": "u"}, "importance": 5, "note": None,
            "on": "2024-02-29", "types": ["Gadget", "date"],
        })
        wrong = client.put("/items/5", json={**full, "item": {"name": "a"}, "importance": 0})
        assert wrong.status_code == 422
        # FastAPI's errors, in FastAPI's order: the parameters' declaration order.
        assert [(e["type"], e["loc"]) for e in wrong.json()["errors"]] == [("missing", ["body", "item", "price"]), ("greater_than", ["body", "importance"])]
        assert client.put("/embed/5", json={"item": {"name": "a", "price": 1}}).json() == {"item_id": 5, "item": {"name": "a", "price": 1.0}}
        unwrapped = client.put("/embed/5", json={"name": "a", "price": 1})
        assert [(e["type"], e["loc"]) for e in unwrapped.json()["errors"]] == [("missing", ["body", "item"])]
        assert client.post("/single", json=5).json() == {"importance": 5}
        assert client.post("/by-dependency", json={"username": "ada"}).json() == {"name": "ada"}
    document = app.openapi()
    body = document["paths"]["/items/{item_id}"]["put"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/Body_update_items__item_id__put"}, body
    named = document["components"]["schemas"]["Body_update_items__item_id__put"]
    assert named["required"] == ["item", "user", "importance", "on"]
    assert named["properties"]["item"] == {"$ref": "#/components/schemas/Gadget"}


def test_a_body_description_leaves_the_models_own_schema_alone() -> None:
    app = App()

    @app.post("/described")
    def described(item: Gadget = Body(description="the new gadget")):
        return item

    @app.post("/plain")
    def plain(item: Gadget):
        return item

    components = app.openapi()["components"]["schemas"]
    assert "Gadget" in components and "Gadget2" not in components, sorted(components)


def test_body_parameters_that_cannot_share_a_body_are_refused_where_declared() -> None:
    app = App()
    with pytest.raises(TypeError, match="both the body's 'x'"):
        @app.post("/twice")
        def twice(a: dict = Body(alias="x"), b: dict = Body(alias="x")):
            return {}
    with pytest.raises(TypeError, match="cannot be mixed"):
        @app.post("/mixed")
        def mixed(a: dict = Body(), b: str = Form()):
            return {}


def test_fastapis_upload_forms_optional_files_bytes_and_a_file_position():
    # Found by a README-driven probe: Optional[UploadFile] was refused at the decorator,
    # `bytes = File()` received an UploadFile, and read(n), seek(), close() and .file were missing.
    app = App()

    @app.post("/optional")
    async def optional(file: Optional[UploadFile] = None, note: str = Form("")) -> dict:
        return {"name": None if file is None else file.filename}

    @app.post("/union")
    async def union(files: list[UploadFile] | None = None, note: str = Form("")) -> dict:
        return {"names": None if files is None else [f.filename for f in files]}

    @app.post("/bytes")
    def raw(file: Annotated[bytes, File()], more: list[bytes] = File()) -> dict:
        return {"file": file.decode(), "more": [m.decode() for m in more], "types": [type(file).__name__, type(more[0]).__name__]}

    @app.post("/position")
    async def position(file: UploadFile) -> dict:
        head = await file.read(2)
        rest = file.read()
        await file.seek(1)
        again = await file.read(3)
        await file.close()
        return {"head": head.decode(), "rest": rest.decode(), "again": again.decode(), "io": file.file.read().decode()}

    client = TestClient(app)
    one = {"file": ("a.txt", b"hello", "text/plain")}
    assert client.post("/optional", files=one).json() == {"name": "a.txt"}
    # A multipart form whose file field is absent (another part keeps it multipart).
    absent = {"data": {"note": "no file"}, "files": {"other": ("o.txt", b"o")}}
    assert client.post("/optional", **absent).json() == {"name": None}
    two = [("files", ("a", b"1")), ("files", ("b", b"2"))]
    assert client.post("/union", files=two).json() == {"names": ["a", "b"]}
    assert client.post("/union", **absent).json() == {"names": None}
    sent = [("file", ("a.bin", b"abc")), ("more", ("b", b"d")), ("more", ("c", b"e"))]
    assert client.post("/bytes", files=sent).json() == {"file": "abc", "more": ["d", "e"], "types": ["bytes", "bytes"]}
    assert client.post("/position", files=one).json() == {"head": "he", "rest": "llo", "again": "ell", "io": "hello"}


# Found by a probe: constraints written pydantic's or annotated_types' way on a parameter were
# dropped (`?limit=1000000` answered 200), and ferrule's own Field made a scalar a body member.
def test_a_parameters_constraints_count_however_they_are_written() -> None:
    app = App()

    @app.get("/pydantic")
    def by_pydantic(limit: Annotated[int, pydantic.Field(ge=1, le=100)] = 10, code: Annotated[str, pydantic.StringConstraints(max_length=3)] = "a") -> dict:
        return {"limit": limit, "code": code}

    @app.get("/con")
    def by_con(limit: pydantic.conint(le=100) = 10, positive: pydantic.PositiveInt = 1, tags: Annotated[list[str], pydantic.Field(max_length=2)] = []) -> dict:  # type: ignore[valid-type]
        return {"limit": limit, "positive": positive, "tags": tags}

    @app.get("/at/{n}")
    def by_annotated_types(n: Annotated[int, annotated_types.Ge(1)], x: Annotated[float, annotated_types.Lt(5)] = 0) -> dict:
        return {"n": n, "x": x}

    @app.get("/ours")
    def by_ours(limit: Annotated[int, Field(ge=1, le=100)] = 10) -> dict:
        return {"limit": limit}

    client = TestClient(app)
    refused = [
        ("/pydantic?limit=1000000", ["query", "limit"], "less_than_equal"),
        ("/pydantic?limit=0", ["query", "limit"], "greater_than_equal"),
        ("/pydantic?code=abcd", ["query", "code"], "string_too_long"),
        ("/con?limit=101", ["query", "limit"], "less_than_equal"),
        ("/con?positive=0", ["query", "positive"], "greater_than"),
        ("/con?tags=a&tags=b&tags=c", ["query", "tags"], "too_long"),
        ("/at/-5", ["path", "n"], "greater_than_equal"),
        ("/at/1?x=5", ["query", "x"], "less_than"),
        ("/ours?limit=1000000", ["query", "limit"], "less_than_equal"),
    ]
    for url, loc, kind in refused:
        answer = client.get(url)
        assert answer.status_code == 422, (url, answer.text)
        assert [(e["loc"], e["type"]) for e in answer.json()["errors"]] == [(loc, kind)], url
    assert client.get("/pydantic?limit=100&code=abc").json() == {"limit": 100, "code": "abc"}
    assert client.get("/con?tags=a&tags=b").json() == {"limit": 10, "positive": 1, "tags": ["a", "b"]}
    assert client.get("/ours?limit=7").json() == {"limit": 7}
    query = app.openapi()["paths"]["/pydantic"]["get"]["parameters"]
    assert query[0]["schema"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}


@dataclasses.dataclass
class Booking:
    nights: int

    def __post_init__(self) -> None:
        if self.nights > 30:
            raise ValueError("at most 30 nights")


def test_a_body_classes_own_value_error_is_a_422() -> None:
    # Found by a probe: a dataclass refusing its data in __post_init__ was a 500; FastAPI
    # answers 422 value_error at ["body"].
    app = App()

    @app.post("/book")
    def book(booking: Booking) -> dict:
        return {"nights": booking.nights}

    client = TestClient(app)
    assert client.post("/book", json={"nights": 3}).json() == {"nights": 3}
    answer = client.post("/book", json={"nights": 31})
    assert answer.status_code == 422
    [error] = answer.json()["errors"]
    assert (error["type"], error["loc"], error["msg"]) == ("value_error", ["body"], "Value error, at most 30 nights")


class ClosedLogin(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    username: str


def test_a_form_model_that_forbids_extra_fields_refuses_them() -> None:
    # Found by a probe: the form's schema left out the model's additionalProperties: false.
    app = App()

    @app.post("/login")
    def login(data: Annotated[ClosedLogin, Form()]) -> dict:
        return {"username": data.username}

    client = TestClient(app)
    assert client.post("/login", data={"username": "ada"}).json() == {"username": "ada"}
    answer = client.post("/login", data={"username": "ada", "admin": "1"})
    assert answer.status_code == 422
    assert [(e["type"], e["loc"]) for e in answer.json()["errors"]] == [("extra_forbidden", ["body", "admin"])]


def test_each_file_fields_max_size_is_its_own() -> None:
    # Found by a probe: one field's File(max_size=) limited every file of the route, and the
    # largest limit replaced a smaller one.
    app = App()

    @app.post("/docs")
    def docs(small: Annotated[UploadFile, File(max_size=4)], big: Annotated[UploadFile, File(max_size=64)], free: Optional[UploadFile] = File(None)) -> dict:
        return {"small": small.size, "big": big.size, "free": None if free is None else free.size}

    @app.post("/bounded")
    def bounded(a: Annotated[bytes, File(max_size=4)], b: Annotated[list[UploadFile], File(max_size=8)]) -> dict:
        return {"a": len(a), "b": [f.size for f in b]}

    client = TestClient(app)
    files = {"small": ("s.txt", b"1234"), "big": ("b.txt", b"x" * 60), "free": ("f.txt", b"y" * 500)}
    assert client.post("/docs", files=files).json() == {"small": 4, "big": 60, "free": 500}
    refused = client.post("/docs", files={**files, "small": ("s.txt", b"12345")})
    assert (refused.status_code, refused.json()["detail"]) == (413, "File `small` exceeds the limit of 4 bytes.")
    assert client.post("/docs", files={**files, "big": ("b.txt", b"x" * 65)}).status_code == 413
    assert client.post("/bounded", files=[("a", ("a", b"abcd")), ("b", ("1", b"12345678")), ("b", ("2", b"1"))]).json() == {"a": 4, "b": [8, 1]}
    over = client.post("/bounded", files=[("a", ("a", b"abcd")), ("b", ("1", b"123456789"))])
    assert (over.status_code, over.json()["detail"]) == (413, "File `b` exceeds the limit of 8 bytes.")
    assert app.openapi()  # the route is still documented


def test_an_optional_bytes_file_is_its_bytes() -> None:
    # Found by a probe: `Optional[bytes] = File(None)` was given the UploadFile (FastAPI: bytes),
    # so `len(data)` was a 500.
    app = App()

    @app.post("/opt")
    async def opt(data: Optional[bytes] = File(None), parts: Optional[list[bytes]] = File(None)) -> dict:
        return {"data": None if data is None else data.decode(), "parts": None if parts is None else [p.decode() for p in parts]}

    client = TestClient(app)
    assert client.post("/opt", files=[("data", ("z.txt", b"hello", "text/plain")), ("parts", ("a", b"1")), ("parts", ("b", b"2"))]).json() == {"data": "hello", "parts": ["1", "2"]}
    assert client.post("/opt", files=[("other", ("z.txt", b"x"))]).json() == {"data": None, "parts": None}


def test_a_parameter_beside_text_in_its_segment_is_read_as_starlette_reads_it():
    """Found running Starlette's routing tests: `/files/{name}.{ext}` and `/v{version}/items`
    were refused at declaration."""
    app = App()

    @app.get("/files/{name}.{ext}")
    def file(name: str, ext: str):
        return {"name": name, "ext": ext}

    @app.get("/v{version}/items")
    def items(version: int):
        return {"version": version}

    client = TestClient(app)
    assert client.get("/files/report.tar.gz").json() == {"name": "report.tar", "ext": "gz"}
    assert client.get("/files/report").status_code == 404
    assert client.get("/v2/items").json() == {"version": 2}
    refused = client.get("/vx/items")
    assert (refused.status_code, refused.json()["errors"][0]["loc"]) == (422, ["path", "version"])
    assert list(app.openapi()["paths"]) == ["/files/{name}.{ext}", "/v{version}/items"]


# FastAPI takes any callable as a handler or a dependency: a `functools.partial` (its bound
# arguments are not read from the request) and an object with a `__call__`, whose hints and
# kind (`async def` or not) are read from the function it runs. A partial's hints were not read
# (its parameters were all untyped, and its return annotation raised), and an object whose
# `__call__` is an `async def` was called as a `def`: its coroutine was sent as the answer.
class Item(pydantic.BaseModel):
    id: int
    label: str


def _item(prefix: str, item_id: int, *, upper: bool = False) -> Item:
    label = f"{prefix}-{item_id}"
    return Item(id=item_id, label=label.upper() if upper else label)


async def _item_later(prefix: str, item_id: int) -> Item:
    return Item(id=item_id, label=f"{prefix}-{item_id}")


class ItemView:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    async def __call__(self, item_id: int, limit: int = 10) -> dict:
        return {"prefix": self.prefix, "item_id": item_id, "limit": limit}


class Tenant:
    async def __call__(self, x_tenant: Annotated[str, Header()]) -> str:
        return x_tenant


TENANT = Tenant()


def test_a_partial_or_a_callable_object_is_a_handler_typed_by_the_function_it_runs():
    import functools

    app = App()
    app.get("/sync/{item_id}")(functools.partial(_item, "sync"))
    app.get("/async/{item_id}")(functools.partial(_item_later, "async"))
    app.get("/view/{item_id}")(ItemView("view"))

    @app.get("/tenant")
    async def which(name: Annotated[str, Depends(TENANT)]) -> dict:
        return {"tenant": name}

    client = TestClient(app)
    assert client.get("/sync/7").json() == {"id": 7, "label": "sync-7"}
    assert client.get("/sync/7", params={"upper": "true"}).json() == {"id": 7, "label": "SYNC-7"}
    assert client.get("/async/8").json() == {"id": 8, "label": "async-8"}
    assert client.get("/view/9", params={"limit": "3"}).json() == {"prefix": "view", "item_id": 9, "limit": 3}
    assert client.get("/tenant", headers={"x-tenant": "acme"}).json() == {"tenant": "acme"}
    # Typed from the function each runs: a path value that is no integer is the same 422 as for a def.
    for path in ("/sync/x", "/async/x", "/view/x"):
        problem = client.get(path)
        assert problem.status_code == 422, path
        assert problem.json()["errors"][0]["loc"] == ["path", "item_id"], path
    assert client.get("/tenant").status_code == 422
    # The partial's bound argument is no parameter; the return annotation is the response's schema.
    operation = client.get("/openapi.json").json()["paths"]["/sync/{item_id}"]["get"]
    assert sorted(p["name"] for p in operation["parameters"]) == ["item_id", "upper"]
    assert "Item" in str(operation["responses"]["200"])
