"""`ferrule.encoders.jsonable_encoder` against FastAPI's own, value by value."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import ipaddress
import pathlib
import re
import uuid
from typing import Any, Optional

import pydantic
import pytest
from fastapi.encoders import jsonable_encoder as fastapis

from ferrule.encoders import jsonable_encoder


class Size(enum.Enum):
    SMALL = "s"
    LARGE = 3


class Item(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(populate_by_name=True)

    name: str
    price: decimal.Decimal
    tags: set[str] = set()
    made: Optional[datetime.datetime] = None
    sku: str = pydantic.Field("none", alias="SKU")
    secret: pydantic.SecretStr = pydantic.SecretStr("hush")


@dataclasses.dataclass
class Point:
    x: int
    when: datetime.date
    inner: Optional["Point"] = None


class Slots:
    def __init__(self) -> None:
        self.a = 1
        self.b = uuid.UUID(int=7)


class Unreadable:
    __slots__ = ()


item = Item(name="pen", price=decimal.Decimal("1.50"), tags={"a"}, made=datetime.datetime(2024, 1, 15, 10, 30, tzinfo=datetime.timezone.utc), SKU="P-1")

VALUES: list[Any] = [
    None,
    True,
    3,
    2.5,
    "text",
    b"bytes",
    decimal.Decimal("10"),
    decimal.Decimal("1E+2"),
    decimal.Decimal("2.50"),
    datetime.datetime(2024, 1, 15, 10, 30, 5, 123000),
    datetime.date(2024, 1, 15),
    datetime.time(10, 30),
    datetime.timedelta(hours=1, milliseconds=5),
    uuid.UUID(int=1),
    Size.SMALL,
    Size.LARGE,
    pathlib.PurePosixPath("/tmp/x"),
    re.compile(r"^a+$"),
    ipaddress.ip_address("10.0.0.1"),
    ipaddress.ip_network("10.0.0.0/8"),
    {1, 2},
    frozenset(["f"]),
    (1, "two"),
    collections.deque([1, 2]),
    {"a": None, "b": [1, {"c": None}], 3: "int key", "_sa_instance_state": "x", Size.SMALL: "enum key"},
    item,
    [item, Point(1, datetime.date(2024, 2, 1), Point(2, datetime.date(2024, 2, 2)))],
    Slots(),
    [("pairs", 1), ("as", 2)],
]


@pytest.mark.parametrize("value", VALUES, ids=[type(v).__name__ for v in VALUES])
def test_a_value_is_encoded_as_fastapi_encodes_it(value: Any) -> None:
    assert jsonable_encoder(value) == fastapis(value)


@pytest.mark.parametrize(
    "options",
    [
        {"include": {"name", "price"}},
        {"exclude": {"tags", "secret"}},
        {"exclude_unset": True},
        {"exclude_defaults": True},
        {"exclude_none": True},
        {"by_alias": False},
    ],
    ids=lambda options: next(iter(options)),
)
def test_a_models_options_are_fastapis(options: dict[str, Any]) -> None:
    bare = Item(name="cap", price=decimal.Decimal("2"))
    for value in (item, bare, {"items": [bare], "gone": None}):
        assert jsonable_encoder(value, **options) == fastapis(value, **options), (value, options)


def test_a_custom_encoder_and_generators_and_sqlalchemy_keys_are_fastapis() -> None:
    custom = {datetime.datetime: lambda d: d.strftime("%Y"), Size: lambda s: s.name}
    values = [datetime.datetime(2030, 5, 1), Size.LARGE, {"when": datetime.datetime(2031, 1, 1)}]
    assert jsonable_encoder(values, custom_encoder=custom) == fastapis(values, custom_encoder=custom)
    assert jsonable_encoder(n * 2 for n in range(3)) == [0, 2, 4]
    state = {"_sa_instance_state": 1, "kept": 2}
    assert jsonable_encoder(state, sqlalchemy_safe=False) == fastapis(state, sqlalchemy_safe=False)
    with pytest.raises(ValueError):
        jsonable_encoder(Unreadable())
