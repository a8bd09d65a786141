"""FastAPI's ``jsonable_encoder``: any value as the plain data JSON can hold (dicts with text
keys, lists, text, numbers, booleans, ``None``), for storing it (the tutorial's ``PUT`` that
merges a model into a stored dict), comparing it, or answering with it.

A response does not need it: Rust writes models, dataclasses, datetimes, UUIDs, Decimals and
Enums itself. It is here so that code written for FastAPI keeps working, with FastAPI's rules:
a pydantic model as ``model_dump(mode="json")`` with the options given, a dataclass as its
fields, a datetime, date or time as ``isoformat()``, a ``timedelta`` as its seconds, a
``Decimal`` as an ``int`` when it is whole and a ``float`` otherwise, an Enum as its value, bytes
decoded, a set, tuple or generator as a list, paths, UUIDs, IP addresses and patterns as text,
and anything else through ``dict(obj)`` or ``vars(obj)``.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import ipaddress
import pathlib
import re
import types
import uuid
from typing import Any, Callable, Mapping, Optional, Union

IncEx = Union[set[int], set[str], Mapping[int, Any], Mapping[str, Any]]


def _whole_or_float(value: decimal.Decimal) -> Union[int, float]:
    # A Decimal with no digits after the point is whole (`Decimal("1")`, `Decimal("1E+2")`).
    exponent = value.as_tuple().exponent
    return int(value) if isinstance(exponent, int) and exponent >= 0 else float(value)


def _as_text(value: Any) -> str:
    return str(value)


# By exact type first, then by the first base class that has one (a subclass of `date`).
_BY_TYPE: dict[type, Callable[[Any], Any]] = {
    bytes: lambda value: value.decode(),
    datetime.date: lambda value: value.isoformat(),
    datetime.datetime: lambda value: value.isoformat(),
    datetime.time: lambda value: value.isoformat(),
    datetime.timedelta: lambda value: value.total_seconds(),
    decimal.Decimal: _whole_or_float,
    enum.Enum: lambda value: value.value,
    uuid.UUID: _as_text,
    pathlib.PurePath: _as_text,
    re.Pattern: lambda value: value.pattern,
    ipaddress.IPv4Address: _as_text,
    ipaddress.IPv4Interface: _as_text,
    ipaddress.IPv4Network: _as_text,
    ipaddress.IPv6Address: _as_text,
    ipaddress.IPv6Interface: _as_text,
    ipaddress.IPv6Network: _as_text,
}

# pydantic's own value types (SecretStr, AnyUrl, NameEmail, Color, …) are text, as FastAPI's
# `str(value)` makes them; looked up by name so pydantic stays optional.
_PYDANTIC_TEXT = {"SecretStr", "SecretBytes", "AnyUrl", "Url", "NameEmail", "Color", "HttpUrl", "AnyHttpUrl", "MultiHostUrl"}

_SEQUENCES = (list, set, frozenset, tuple, collections.deque, types.GeneratorType)


def jsonable_encoder(
    obj: Any,
    include: Optional[IncEx] = None,
    exclude: Optional[IncEx] = None,
    by_alias: bool = True,
    exclude_unset: bool = False,
    exclude_defaults: bool = False,
    exclude_none: bool = False,
    custom_encoder: Optional[dict[Any, Callable[[Any], Any]]] = None,
    sqlalchemy_safe: bool = True,
) -> Any:
    """``obj`` as plain JSON-able data (see the module). ``include`` / ``exclude`` name the keys
    or fields kept or left out at the top level; ``exclude_none`` drops ``None`` values at every
    depth; ``custom_encoder`` maps a type (or a base class) to the function that encodes it,
    asked before anything else; ``sqlalchemy_safe`` leaves out a dict's ``_sa…`` keys
    (SQLAlchemy's instance state)."""
    custom_encoder = custom_encoder or {}
    if custom_encoder:
        if type(obj) in custom_encoder:
            return custom_encoder[type(obj)](obj)
        for kind, encode in custom_encoder.items():
            if isinstance(obj, kind):
                return encode(obj)
    include = set(include) if isinstance(include, (list, tuple)) else include
    exclude = set(exclude) if isinstance(exclude, (list, tuple)) else exclude
    again = dict(exclude_none=exclude_none, exclude_defaults=exclude_defaults, custom_encoder=custom_encoder, sqlalchemy_safe=sqlalchemy_safe)

    if hasattr(type(obj), "model_dump") and hasattr(type(obj), "model_fields"):
        dumped = obj.model_dump(mode="json", include=include, exclude=exclude, by_alias=by_alias, exclude_unset=exclude_unset, exclude_none=exclude_none, exclude_defaults=exclude_defaults)
        return jsonable_encoder(dumped, **again)  # type: ignore[arg-type]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {field.name: getattr(obj, field.name) for field in dataclasses.fields(obj)}
        return jsonable_encoder(fields, include=include, exclude=exclude, by_alias=by_alias, exclude_unset=exclude_unset, **again)  # type: ignore[arg-type]
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, pathlib.PurePath):
        return str(obj)
    if obj is None or isinstance(obj, (str, int, float)):
        return obj
    if isinstance(obj, dict):
        keys = set(obj)
        if include is not None:
            keys &= set(include)
        if exclude is not None:
            keys -= set(exclude)
        encoded = {}
        for key, value in obj.items():
            if key not in keys or (value is None and exclude_none):
                continue
            if sqlalchemy_safe and isinstance(key, str) and key.startswith("_sa"):
                continue
            encoded[jsonable_encoder(key, by_alias=by_alias, exclude_unset=exclude_unset, **again)] = jsonable_encoder(value, by_alias=by_alias, exclude_unset=exclude_unset, **again)  # type: ignore[arg-type]
        return encoded
    if isinstance(obj, _SEQUENCES):
        return [jsonable_encoder(item, include=include, exclude=exclude, by_alias=by_alias, exclude_unset=exclude_unset, **again) for item in obj]  # type: ignore[arg-type]
    encode = _BY_TYPE.get(type(obj)) or next((by for kind, by in _BY_TYPE.items() if isinstance(obj, kind)), None)
    if encode is not None:
        return encode(obj)
    if type(obj).__name__ in _PYDANTIC_TEXT or any(kind.__name__ in _PYDANTIC_TEXT for kind in type(obj).__mro__):
        return str(obj)
    return jsonable_encoder(_fields_of(obj), include=include, exclude=exclude, by_alias=by_alias, exclude_unset=exclude_unset, **again)  # type: ignore[arg-type]


def known_value(obj: Any) -> Any:
    """``obj`` as ``jsonable_encoder`` writes it when one of its rules names its kind (a
    timedelta, a path, a deque, an IP address, a pattern, a mapping proxy, pydantic's text
    types), else ``NotImplemented``: what the response writer asks of a value it does not know
    itself. Never the ``dict(obj)``/``vars(obj)`` fallback: an object of no known kind stays a
    500, its attributes unsent."""
    kind = type(obj)
    known = (
        isinstance(obj, (_SEQUENCES, types.MappingProxyType))
        or kind in _BY_TYPE
        or any(isinstance(obj, rule) for rule in _BY_TYPE)
        or any(base.__name__ in _PYDANTIC_TEXT for base in kind.__mro__)
    )
    if not known:
        return NotImplemented
    return jsonable_encoder(dict(obj) if isinstance(obj, types.MappingProxyType) else obj)


def _fields_of(obj: Any) -> dict[Any, Any]:
    """An object no rule names, as ``dict(obj)`` (pairs, a mapping) or else ``vars(obj)``;
    a ``ValueError`` naming both failures when neither works."""
    failures: list[Exception] = []
    try:
        return dict(obj)
    except Exception as e:  # noqa: BLE001 - tried in turn, reported together
        failures.append(e)
    try:
        return vars(obj)
    except Exception as e:  # noqa: BLE001
        failures.append(e)
    raise ValueError(failures)


__all__ = ["jsonable_encoder"]
