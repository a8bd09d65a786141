"""Return values: what each Python type becomes on the wire, serialised by Rust, for sync and
async handlers alike."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import uuid

import pytest

from ferrule import App, Response

from support import request, serving


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


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
        "date": datetime.date(2024, 1, 15),
        "datetime": datetime.datetime(2024, 1, 15, 10, 30, tzinfo=datetime.timezone.utc),
        "decimal": decimal.Decimal("19.99"),
        "enum": Level.HIGH,
        "set": {7},
        1: "int keys become strings",
    },
    "dataclass": Item("pen", 1.5, datetime.date(2024, 2, 29)),
    "unicode": {"text": "Jürgen \u2603 \"quoted\" \\ \n"},
    "big_int": {"n": 2**70},
}

EXPECTED = {
    "dict": {"a": 1, "nested": {"b": [1, 2.5, None, True, "x"]}},
    "list": [1, "two", {"three": 3}],
    "tuple": [1, 2],
    "none": None,
    "rich": {
        "uuid": "12345678-1234-5678-1234-567812345678",
        "date": "2024-01-15",
        "datetime": "2024-01-15T10:30:00+00:00",
        "decimal": "19.99",
        "enum": 2,
        "set": [7],
        "1": "int keys become strings",
    },
    "dataclass": {"name": "pen", "price": 1.5, "when": "2024-02-29"},
    "unicode": {"text": "Jürgen \u2603 \"quoted\" \\ \n"},
    "big_int": {"n": 2**70},
}


def make_app() -> App:
    app = App()

    @app.get("/sync/{kind}")
    def sync_value(kind: str):
        return VALUES[kind]

    @app.get("/async/{kind}")
    async def async_value(kind: str):
        return VALUES[kind]

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
def port():
    with serving(make_app()) as p:
        yield p


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", sorted(VALUES))
def test_values_are_serialised_by_rust(port, mode, kind):
    reply = request(port, "GET", f"/{mode}/{kind}")
    assert reply.status == 200, reply
    assert reply.headers["content-type"] == "application/json"
    assert reply.json() == EXPECTED[kind]


def test_str_is_text_and_bytes_are_octets(port):
    reply = request(port, "GET", "/text")
    assert (reply.headers["content-type"], reply.text) == ("text/plain; charset=utf-8", "plain words")
    reply = request(port, "GET", "/bytes")
    assert (reply.headers["content-type"], reply.body) == ("application/octet-stream", b"\x00\x01binary")


def test_explicit_response(port):
    reply = request(port, "GET", "/explicit")
    assert reply.status == 201
    assert reply.headers["x-custom"] == "yes" and reply.headers["location"] == "/items/1"
    assert reply.json() == {"created": True}
    reply = request(port, "GET", "/explicit-text")
    assert reply.headers["content-type"] == "text/html"
    assert reply.text == "<b>hi</b>"


def test_no_content_and_route_status(port):
    reply = request(port, "GET", "/no-content")
    assert (reply.status, reply.body) == (204, b"")
    assert request(port, "POST", "/created").status == 201
