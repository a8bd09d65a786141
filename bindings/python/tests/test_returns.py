"""Return values: what each Python type becomes on the wire, serialised by Rust, for sync and
async handlers alike."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import uuid

import pytest

from ferrule import App, JSONResponse, Response
from ferrule.testing import TestClient


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class TaggedUUID(uuid.UUID):
    """A subclass that prints itself its own way: sent as its str(), not as a plain UUID."""

    def __str__(self) -> str:
        return "order-" + self.hex


class Name(str):
    """A str subclass, as a key and as a value: written as its text."""


class Count(int):
    """An int subclass (and so not written on the exact-int fast path)."""


class Day(datetime.date):
    """A date subclass with its own isoformat(): written with it (the exact-date path is not its)."""

    def isoformat(self) -> str:
        return "day " + super().isoformat()


class Stamp(datetime.datetime):
    """A datetime subclass with its own isoformat(): written with it."""

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        return "stamp " + super().isoformat(sep, timespec)


class Unknown(datetime.tzinfo):
    """A zone that does not know its offset: its datetimes print as naive ones."""

    def utcoffset(self, dt):
        return None


class ByMonth(datetime.tzinfo):
    """A zone whose offset changes with the date, as daylight saving time's does."""

    def utcoffset(self, dt):
        return datetime.timedelta(hours=-dt.month, seconds=-dt.day)


def _zone(**offset) -> datetime.timezone:
    return datetime.timezone(datetime.timedelta(**offset))


# Exact datetimes are written from their fields, not by isoformat(): every part of its text,
# naive and aware, against isoformat() itself.
DATETIMES = [
    datetime.datetime(2024, 1, 15, 10, 30),
    datetime.datetime(2024, 1, 15, 10, 30, 0, 5),
    datetime.datetime(2024, 12, 31, 23, 59, 59, 999999),
    datetime.datetime.min,
    datetime.datetime.max,
    datetime.datetime(987, 6, 5, 4, 3, 2, 10),
    datetime.datetime(2024, 11, 3, 1, 30, fold=1),
    datetime.datetime(2024, 1, 15, 10, 30, tzinfo=datetime.timezone.utc),
    datetime.datetime(2024, 1, 15, 10, 30, 0, 120000, tzinfo=_zone(hours=5, minutes=30)),
    datetime.datetime(2024, 1, 15, 10, 30, tzinfo=_zone(hours=-3)),
    datetime.datetime(2024, 1, 15, 10, 30, tzinfo=_zone(hours=-1, seconds=-7)),
    datetime.datetime(2024, 1, 15, 10, 30, tzinfo=_zone(minutes=1, microseconds=5)),
    datetime.datetime(2024, 1, 15, 10, 30, tzinfo=_zone(hours=-23, minutes=-59, seconds=-59, microseconds=-999999)),
    datetime.datetime(2024, 1, 15, 10, 30, tzinfo=_zone(hours=23, minutes=59)),
    datetime.datetime(2024, 1, 15, 10, 30, tzinfo=Unknown()),
    datetime.datetime(2024, 7, 9, 10, 30, tzinfo=ByMonth()),
    Stamp(2024, 1, 15, 10, 30, tzinfo=datetime.timezone.utc),
]


@dataclasses.dataclass
class Item:
    name: str
    price: float
    when: datetime.date


VALUES = {
    "dict": {"a": 1, "nested": {"b": [1, 2.5, None, True, "x"]}},
    "list": [1, "two", {"three": 3}],
    "tuple": (1, 2),
    "none": None,
    "rich": {
        "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "uuid_high_bits": uuid.UUID("ffffffff-0000-8000-8000-00000000000f"),
        "uuid_subclass": TaggedUUID("12345678-1234-5678-1234-567812345678"),
        "date": datetime.date(2024, 1, 15),
        "datetime": datetime.datetime(2024, 1, 15, 10, 30, tzinfo=datetime.timezone.utc),
        "decimal": decimal.Decimal("19.99"),
        "enum": Level.HIGH,
        "set": {7},
        1: "int keys become strings",
    },
    "dataclass": Item("pen", 1.5, datetime.date(2024, 2, 29)),
    # Dates are written from their ordinal: the first and last, a leap day, a year under 1000.
    "dates": [datetime.date.min, datetime.date.max, datetime.date(2000, 2, 29), datetime.date(987, 6, 5), datetime.date(1900, 3, 1), Day(2024, 1, 15)],
    "unicode": {"text": "Jürgen \u2603 \"quoted\" \\ \n"},
    "big_int": {"n": 2**70},
    "datetimes": DATETIMES,
    # Each integer at the edges of 64 bits, in a list and in a dict (the two borrowed walks).
    "int_edges": {"list": [2**63 - 1, -(2**63), 2**63, -(2**63) - 1, -(2**127)], "dict": {"max": 2**63 - 1, "past": 2**64}},
    "subclasses": {Name("key"): Name("value"), "count": Count(7), Level.HIGH: "enum key", 2.5: "float key", True: "bool key", None: "none key"},
}

EXPECTED = {
    "dict": {"a": 1, "nested": {"b": [1, 2.5, None, True, "x"]}},
    "list": [1, "two", {"three": 3}],
    "tuple": [1, 2],
    "none": None,
    "rich": {
        "uuid": "12345678-1234-5678-1234-567812345678",
        "uuid_high_bits": "ffffffff-0000-8000-8000-00000000000f",
        "uuid_subclass": "order-12345678123456781234567812345678",
        "date": "2024-01-15",
        "datetime": "2024-01-15T10:30:00+00:00",
        "decimal": "19.99",
        "enum": 2,
        "set": [7],
        "1": "int keys become strings",
    },
    "dataclass": {"name": "pen", "price": 1.5, "when": "2024-02-29"},
    "dates": ["0001-01-01", "9999-12-31", "2000-02-29", "0987-06-05", "1900-03-01", "day 2024-01-15"],
    "unicode": {"text": "Jürgen \u2603 \"quoted\" \\ \n"},
    "big_int": {"n": 2**70},
    "datetimes": [moment.isoformat() for moment in DATETIMES],
    "int_edges": {"list": [2**63 - 1, -(2**63), 2**63, -(2**63) - 1, -(2**127)], "dict": {"max": 2**63 - 1, "past": 2**64}},
    "subclasses": {"key": "value", "count": 7, "2": "enum key", "2.5": "float key", "true": "bool key", "null": "none key"},
}

# The exact bytes, where parsing the JSON back would hide a difference (escapes, number text).
EXACT = {"text": ["tab\t", "quote\"", "nul\u0000", "del\x7f", "é"], "numbers": [1.5, -0.0, 1e100, 2.5e-8, 0.1, -7]}
EXACT_TEXT = '{"text":["tab\\t","quote\\"","nul\\u0000","del\x7f","é"],"numbers":[1.5,-0.0,1e+100,2.5e-8,0.1,-7]}'

# Records whose keys repeat (as a list of records' keys do), more distinct keys than the
# writer's key table has slots, keys that need escapes, and keys too long to be kept there.
ODD_KEYS = ["quote\"d", "tab\there", "nul\u0000", "é ☃", "", "a key well past thirty bytes of text, never kept"]
KEYED_RECORDS = [{"".join(["field", str(i % 100)]): i, "shared": [i], ODD_KEYS[i % len(ODD_KEYS)]: {"nested": i}} for i in range(300)]


def make_app() -> App:
    app = App()

    @app.get("/sync/{kind}")
    def sync_value(kind: str):
        return VALUES[kind]

    @app.get("/async/{kind}")
    async def async_value(kind: str):
        return VALUES[kind]

    @app.get("/exact")
    def exact():
        return EXACT

    @app.get("/keys")
    def keys():
        return KEYED_RECORDS

    @app.get("/freed-key")
    def freed_key():
        first = {"".join(["key-", "one"]): 1}
        third = {}

        class FreesAKey(datetime.date):
            """Written between the two dicts, by Python code of its own (its isoformat)."""

            def isoformat(self) -> str:
                first.clear()  # the key already written is freed here...
                third["".join(["key-", "two"])] = 2  # ...and a str of its size is likely given its address
                return "between"

        return [first, FreesAKey(2024, 1, 15), third]

    @app.get("/text")
    def text():
        return "plain words"

    @app.get("/bytes")
    async def raw():
        return b"\x00\x01binary"

    @app.get("/explicit")
    def explicit():
        return Response(201, {"X-Custom": "yes", "Location": "/items/1"}, {"created": True})

    @app.get("/explicit-text")
    def explicit_text():
        return Response(200, [("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")], "<b>hi</b>", media_type="text/html")

    @app.get("/no-content")
    def no_content():
        return Response(204)

    @app.post("/created", status_code=201)
    def created():
        return {"ok": True}

    return app


@pytest.fixture(scope="module")
def client():
    with TestClient(make_app()) as client:
        yield client


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", sorted(VALUES))
def test_values_are_serialised_by_rust(client, mode, kind):
    response = client.get(f"/{mode}/{kind}")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json() == EXPECTED[kind]


def test_json_text_is_written_exactly(client):
    response = client.get("/exact")
    assert response.content.decode() == EXACT_TEXT


def test_str_is_text_and_bytes_are_octets(client):
    response = client.get("/text")
    assert (response.headers["content-type"], response.text) == ("text/plain; charset=utf-8", "plain words")
    response = client.get("/bytes")
    assert (response.headers["content-type"], response.content) == ("application/octet-stream", b"\x00\x01binary")


def test_explicit_response(client):
    response = client.get("/explicit")
    assert response.status_code == 201
    assert response.headers["x-custom"] == "yes" and response.headers["location"] == "/items/1"
    assert response.json() == {"created": True}
    response = client.get("/explicit-text")
    assert response.headers["content-type"] == "text/html; charset=utf-8"  # Starlette adds the charset to a text type
    assert response.text == "<b>hi</b>"


def test_no_content_and_route_status(client):
    response = client.get("/no-content")
    assert (response.status_code, response.content) == (204, b"")
    assert client.post("/created").status_code == 201


def test_keys_are_written_from_the_key_table_as_the_long_way_writes_them(client):
    expected = json.dumps(KEYED_RECORDS, separators=(",", ":"), ensure_ascii=False)
    for _ in range(3):
        assert client.get("/keys").content.decode() == expected


def test_a_freed_key_is_not_mistaken_for_a_new_one_at_its_address(client):
    # The key table knows keys by their address and owns each key it keeps, so no new str can
    # be given a kept key's address while it is kept.
    for _ in range(3):
        assert client.get("/freed-key").content.decode() == '[{"key-one":1},"between",{"key-two":2}]'


# Found by FastAPI's corpus: Starlette's Response(content, status_code, headers), the order
# FastAPI's documentation writes it in, was read as Ferrule's Response(status, headers, body),
# so Response(b"...", status_code=202) was refused as a second status.
def test_a_response_also_takes_starlettes_order() -> None:
    app = App()

    @app.get("/starlette")
    def starlette():
        return Response(b"<x/>", 202, {"x-order": "starlette"}, media_type="application/xml")

    @app.get("/keywords")
    def keywords():
        return Response("plain", status_code=201)

    @app.get("/mixed")
    def mixed():
        return Response(b"x", status_code=202, headers={"x-mixed": "1"})

    @app.get("/positional-status")
    def positional_status():
        return Response("x", 203, headers={"x-mixed": "2"}, media_type="text/csv")

    with TestClient(app) as client:
        reply = client.get("/starlette")
        assert (reply.status_code, reply.content, reply.headers["x-order"]) == (202, b"<x/>", "starlette")
        assert reply.headers["content-type"] == "application/xml"
        assert (client.get("/keywords").status_code, client.get("/keywords").text) == (201, "plain")
        mixed = client.get("/mixed")
        assert (mixed.status_code, mixed.content, mixed.headers["x-mixed"]) == (202, b"x", "1")
        positional = client.get("/positional-status")
        assert (positional.status_code, positional.headers["x-mixed"], positional.headers["content-type"]) == (203, "2", "text/csv; charset=utf-8")
    assert Response(None, 204).status == 204
    # Found on the second review: a None first or given by position.
    assert (Response(None, {"a": "1"}, "x").body, Response(200, None, headers={"a": "1"})._headers) == ("x", {"a": "1"})
    assert JSONResponse({"detail": "x"}, status_code=None).body == {"detail": "x"}
    with pytest.raises(TypeError, match="content twice"):
        Response(b"x", content=b"y")
    with pytest.raises(TypeError, match="a status is an int, not str"):
        Response(b"x", "201")
    with pytest.raises(TypeError, match="headers twice"):
        Response(200, {"a": "1"}, headers={"b": "2"})


def test_a_routes_response_class_sends_a_plain_result_as_fastapi_does(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # FastAPI apps write `response_class=HTMLResponse` and return the page as a `str`; the
    # option was refused at the decorator, so such an app did not import.
    from ferrule import Depends, FileResponse, HTMLResponse, ORJSONResponse, PlainTextResponse, RedirectResponse

    from support import request, serving

    notes = tmp_path / "notes.txt"
    notes.write_text("kept")
    app = App()

    def viewer() -> str:
        return "ada"

    @app.get("/page", response_class=HTMLResponse)
    def page() -> str:
        return "<h1>hi</h1>"

    @app.get("/mine", response_class=HTMLResponse)
    def mine(user: str = Depends(viewer)) -> str:
        return f"<p>{user}</p>"

    @app.post("/text", response_class=PlainTextResponse, status_code=201)
    async def text() -> str:
        return "made"

    @app.get("/go", response_class=RedirectResponse)
    def go() -> str:
        return "/page"

    @app.get("/file", response_class=FileResponse)
    def file() -> str:
        return str(notes)

    @app.get("/fast", response_class=ORJSONResponse)
    def fast() -> dict:
        return {"a": 1}

    @app.get("/own", response_class=HTMLResponse)
    def own() -> JSONResponse:
        return JSONResponse({"b": 2}, status_code=202)

    with serving(app) as port:
        answers = {path: request(port, "POST" if path == "/text" else "GET", path) for path in ["/page", "/mine", "/text", "/go", "/file", "/fast", "/own"]}
        document = request(port, "GET", "/openapi.json").json()
    seen = {path: (a.status, a.headers["content-type"].split(";")[0], a.body) for path, a in answers.items() if path != "/go"}
    assert seen == {
        "/page": (200, "text/html", b"<h1>hi</h1>"),
        "/mine": (200, "text/html", b"<p>ada</p>"),
        "/text": (201, "text/plain", b"made"),
        "/file": (200, "text/plain", b"kept"),
        "/fast": (200, "application/json", b'{"a":1}'),
        "/own": (202, "application/json", b'{"b":2}'),
    }
    # A RedirectResponse keeps its own 307 when the route names no status.
    assert (answers["/go"].status, answers["/go"].headers["location"]) == (307, "/page")
    # A page is not documented as JSON; a JSON class still is.
    assert "content" not in document["paths"]["/page"]["get"]["responses"]["200"]
    assert "application/json" in document["paths"]["/fast"]["get"]["responses"]["200"]["content"]
    with pytest.raises(TypeError, match="response_class is a ferrule Response class"):
        app.get("/bad", response_class=dict)(page)


def test_default_response_class_comes_from_the_route_its_router_include_router_then_the_app() -> None:
    from ferrule import APIRouter, HTMLResponse, PlainTextResponse

    app = App(default_response_class=HTMLResponse)

    @app.get("/a")
    def a() -> str:
        return "<p>a</p>"

    inherits = APIRouter(prefix="/r")

    @inherits.get("/b")
    def b() -> str:
        return "<p>b</p>"

    plain = APIRouter(prefix="/p", default_response_class=PlainTextResponse)

    @plain.get("/c")
    def c() -> str:
        return "c"

    @plain.get("/d", response_class=JSONResponse)
    def d() -> dict:
        return {"d": 1}

    included = APIRouter(prefix="/i")

    @included.get("/e")
    def e() -> str:
        return "e"

    outer = APIRouter(prefix="/o")
    outer.include_router(included)
    app.include_router(inherits)
    app.include_router(plain, default_response_class=HTMLResponse)
    app.include_router(outer, default_response_class=PlainTextResponse)
    client = TestClient(app)
    kinds = {path: client.get(path).headers["content-type"].split(";")[0] for path in ["/a", "/r/b", "/p/c", "/p/d", "/o/i/e"]}
    assert kinds == {"/a": "text/html", "/r/b": "text/html", "/p/c": "text/plain", "/p/d": "application/json", "/o/i/e": "text/plain"}
