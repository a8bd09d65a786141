"""Type hints → JSON Schema (validated in Rust) and converters (JSON values → Python types).

Each supported annotation maps to the JSON Schema the core validates the raw input against
before Python is entered, plus, when the handler expects something richer than plain JSON
data (a dataclass, a UUID inside a body, an Enum member), a converter applied to the already
valid value. Schemas are derived once, when a route is declared.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import decimal
import enum
import itertools
import re
import sys
import typing
import uuid
from typing import Any, Callable, Iterable, Iterator, Optional

from . import _ferrule

Converter = Optional[Callable[[Any], Any]]

__all__ = ["TypeInfo", "describe", "strip_annotated", "is_structured"]

_NONE_TYPES = (type(None),)
try:  # Python 3.10+: `int | None`
    from types import UnionType as _UnionType
except ImportError:  # pragma: no cover - 3.9
    _UnionType = None  # type: ignore[assignment,misc]


_REQUIRED_MARKERS = tuple(m for m in (getattr(typing, "Required", None), getattr(typing, "NotRequired", None)) if m is not None)


class TypeInfo(typing.NamedTuple):
    schema: dict
    convert: Converter
    optional: bool  # `X | None`: may be absent / null
    # The same conversion as `convert`, done by Rust while it builds a body from JSON, when
    # every part of it can be (see `bindings/python/src/convert/body_plan.rs`): "uuid",
    # "datetime" or "date" for a string; {key: plan} for an object's members; ("list", plan)
    # for a list's items; ("values", plan) for a dict's values. None: no conversion, or one
    # only `convert` can do.
    native: Any = None


def strip_annotated(tp: Any) -> tuple[Any, list]:
    """``Annotated[T, a, b]`` → ``(T, [a, b])``; anything else → ``(tp, [])``."""
    if typing.get_origin(tp) is typing.Annotated:
        base, *extras = typing.get_args(tp)
        inner, more = strip_annotated(base)
        return inner, more + list(extras)
    return tp, []


def tag_of(extras: list) -> Any:
    """The ``Annotated`` metadata that names a union's tag (pydantic's or ferrule's
    ``Field(discriminator=...)``, ``Body(discriminator=...)``), if any."""
    return next((extra for extra in extras if getattr(extra, "discriminator", None) is not None), None)


def _is_union(tp: Any) -> bool:
    origin = typing.get_origin(tp)
    return origin is typing.Union or (_UnionType is not None and origin is _UnionType)


def _msgspec_struct(tp: Any) -> bool:
    try:
        import msgspec
    except ImportError:
        return False
    return isinstance(tp, type) and issubclass(tp, msgspec.Struct)


def _pydantic_model(tp: Any) -> bool:
    try:
        import pydantic
    except ImportError:
        return False
    return isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)


def _typeddict(tp: Any) -> bool:
    if typing.is_typeddict(tp):
        return True
    # typing_extensions' own TypedDict (what pydantic asks for before Python 3.12), which
    # `typing.is_typeddict` does not know; a program that made one has imported the module.
    extensions = sys.modules.get("typing_extensions")
    return extensions is not None and bool(extensions.is_typeddict(tp))


def is_structured(tp: Any) -> bool:
    """Types that come from a request body rather than from one query value."""
    tp, _ = strip_annotated(tp)
    if _is_union(tp):
        return any(is_structured(a) for a in typing.get_args(tp) if a not in _NONE_TYPES)
    origin = typing.get_origin(tp) or tp
    return (
        dataclasses.is_dataclass(tp)
        or _typeddict(tp)
        or _msgspec_struct(tp)
        or _pydantic_model(tp)
        or origin in (dict, typing.Mapping, list, typing.List, typing.Dict)
        and not _scalar_list(tp)
        # `tuple[Item, Item]`, `set[Item]`: a body, as FastAPI reads a sequence of anything
        # but scalars (it was a query parameter no client could send).
        or origin in _SEQUENCES
        and any(is_structured(a) for a in typing.get_args(tp) if a is not Ellipsis)
    )


_SEQUENCES = (list, tuple, set, frozenset, collections.abc.Sequence)


def _scalar_list(tp: Any) -> bool:
    # `list[int]` as a query parameter is a repeated key, not a body.
    origin = typing.get_origin(tp)
    if origin not in _SEQUENCES:
        return False
    args = [a for a in typing.get_args(tp) if a is not Ellipsis]
    return len(args) == 1 and not is_structured(args[0])


def describe(tp: Any, *, body: bool = False, response: bool = False) -> TypeInfo:
    """The schema and converter of an annotation. ``body=True``: the value comes from JSON
    (strings for UUIDs and dates, ``null`` allowed for optional fields); otherwise from a
    parameter the core has already coerced (a UUID arrives as ``uuid.UUID``). ``response=True``:
    the schema of what is sent, a pydantic model's as it serialises (its ``computed_field``s
    included, read-only), as FastAPI describes a response."""
    describer = _Describer(body, response)
    info = describer.describe(tp)
    if describer.defs:
        # The types that refer to themselves, once each, where their references point (the
        # schema's root), as pydantic writes recursive models.
        info = info._replace(schema={**info.schema, "$defs": describer.defs})
    return info


class _Building:
    """A dataclass or TypedDict whose schema is being described: what a reference to it from
    inside itself needs."""

    __slots__ = ("name", "convert")

    def __init__(self) -> None:
        self.name: Optional[str] = None  # its `$defs` name, once something refers to it
        self.convert: Callable[[Any], Any] = _unchanged


def _unchanged(value: Any) -> Any:
    return value


def _computed_not_required(schema: Any) -> None:
    """A response schema's read-only properties (pydantic's ``computed_field``) taken out of
    ``required``, here and in its ``$defs``: a handler that returns a dict (or an ORM row) for
    such a model sends no ``area``, and the core must not refuse it (found on review: a 500)."""
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict) and isinstance(schema.get("required"), list):
            read_only = {name for name, sub in properties.items() if isinstance(sub, dict) and sub.get("readOnly")}
            if read_only:
                schema["required"] = [name for name in schema["required"] if name not in read_only]
        for value in schema.values():
            _computed_not_required(value)
    elif isinstance(schema, list):
        for value in schema:
            _computed_not_required(value)


class _NeedsPydantic(TypeError):
    """A type Ferrule does not describe itself: a union whose members become objects (models,
    dataclasses), which pydantic describes and picks the member of, as FastAPI has it do (a
    discriminated union too), or a type only pydantic knows (``timedelta``, ``HttpUrl``)."""


class _Describer:
    def __init__(self, body: bool, response: bool = False) -> None:
        self.body = body
        self.response = response
        self.active: dict[int, _Building] = {}
        # Recursive types' schemas by their `$defs` name, and which type holds each name.
        self.defs: dict[str, dict] = {}
        self.named: dict[str, int] = {}

    def describe(self, tp: Any) -> TypeInfo:
        annotated = tp
        tp, extras = strip_annotated(tp)
        tagged = tag_of(extras)
        if tagged is not None and _is_union(tp):
            # A tagged union: pydantic describes it, with the tag's mapping, and picks the
            # member by the tag, as FastAPI has it do.
            return self._tagged(tp, tagged.discriminator)
        try:
            info = self._describe(tp)
        except _NeedsPydantic as needs:
            # Described whole, `Annotated` included: `Field(discriminator="kind")` is pydantic's.
            return self._adapted(annotated, needs)
        constraints = constraint_keywords(extras, info.schema)
        if constraints:
            info = TypeInfo({**info.schema, **constraints}, info.convert, info.optional, info.native)
        checked = digits_checked(info.convert, extras)
        if checked is not info.convert:
            info = TypeInfo(info.schema, checked, info.optional)
        return info

    def _describe(self, tp: Any) -> TypeInfo:
        if typing.get_origin(tp) in _REQUIRED_MARKERS:
            # TypedDict's Required[...] / NotRequired[...]: __required_keys__ already says which.
            return self.describe(typing.get_args(tp)[0])
        if _is_union(tp):
            args = typing.get_args(tp)
            members = [a for a in args if a not in _NONE_TYPES]
            optional = len(members) != len(args)
            if len(members) == 1:
                inner = self.describe(members[0])
                schema = inner.schema
                if optional and self.body:
                    schema = {"anyOf": [schema, {"type": "null"}]}
                convert = inner.convert
                if convert is not None and optional:
                    convert = _none_passes(convert)
                # A null is left as it is by a native plan too.
                return TypeInfo(schema, convert, optional or inner.optional, inner.native)
            infos = [self.describe(m) for m in members]
            schemas = [i.schema for i in infos]
            if optional and self.body:
                schemas.append({"type": "null"})
            if any(i.convert for i in infos):
                raise _NeedsPydantic(f"{tp!r}: a union of types that need conversion needs pydantic installed")
            return TypeInfo({"anyOf": schemas}, None, optional)
        if tp is Any or tp is object or tp is typing.Any:
            return TypeInfo({}, None, False)
        if tp is type(None):
            return TypeInfo({"type": "null"}, None, True)
        if isinstance(tp, type):
            simple = self._simple(tp)
            if simple is not None:
                return simple
        origin = typing.get_origin(tp)
        if origin is typing.Literal:
            values = list(typing.get_args(tp))
            return TypeInfo({"enum": values}, None, False)
        if origin in (list, typing.List, typing.Sequence, set, frozenset, tuple, typing.Set, typing.FrozenSet, typing.Tuple):
            return self._sequence(tp, origin)
        if origin in (dict, typing.Dict, typing.Mapping):
            return self._mapping(tp)
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            return self._guarded(tp, self._dataclass)
        if _typeddict(tp):
            return self._guarded(tp, self._typeddict)
        if _msgspec_struct(tp):
            import msgspec

            return TypeInfo(self._hoisted(_inline_defs(msgspec.json.schema(tp)), tp), lambda v: msgspec.convert(v, tp), False)
        if _pydantic_model(tp):
            mode = "serialization" if self.response else "validation"
            schema = tp.model_json_schema(mode=mode)
            if self.response:
                _computed_not_required(schema)
            return TypeInfo(self._hoisted(schema, tp), tp.model_validate, False)
        # Any other type pydantic knows (`timedelta`, `IPv4Address`, `Path`, `HttpUrl`,
        # `EmailStr`, a class with `__get_pydantic_core_schema__`) is described and converted by
        # its `TypeAdapter`, as FastAPI has it: it was a TypeError at the decorator, so an app
        # declaring one did not start (found by a probe beside FastAPI).
        raise _NeedsPydantic(f"unsupported parameter type {tp!r} (pydantic, when installed, describes other types)")

    def _simple(self, tp: type) -> Optional[TypeInfo]:
        # bool before int: bool is a subclass of int.
        if issubclass(tp, bool):
            return TypeInfo({"type": "boolean"}, None, False)
        if issubclass(tp, enum.Enum):
            values = [m.value for m in tp]
            schema: dict[str, Any] = {"enum": values}
            # With its type, the core reads a parameter's text as that type first: `?prio=2`
            # for an IntEnum was the string "2", never equal to 2 (a 422), as pydantic's reads it.
            if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                schema = {"type": "integer", "enum": values}
            elif values and all(isinstance(v, str) for v in values):
                schema = {"type": "string", "enum": values}
            return TypeInfo(schema, tp, False)
        if tp is int:
            return TypeInfo({"type": "integer"}, None, False)
        if tp is float:
            return TypeInfo({"type": "number"}, None, False)
        if tp is str:
            return TypeInfo({"type": "string"}, None, False)
        if tp is decimal.Decimal:
            if self.body:
                return TypeInfo({"type": "number"}, lambda v: decimal.Decimal(str(v)), False)
            # A parameter's text reaches `Decimal` whole: the core checks it as a number and
            # hands it over as sent (a float made `1.10` `1.1` and lost digits past 17).
            return TypeInfo({"type": "number", "format": "decimal"}, lambda v: decimal.Decimal(v) if isinstance(v, str) else decimal.Decimal(str(v)), False)
        if tp is uuid.UUID:
            if self.body:
                return TypeInfo({"type": "string", "format": "uuid"}, _ferrule.uuid_from_text, False, "uuid")
            return TypeInfo({"type": "string", "format": "uuid"}, None, False)
        if tp is datetime.datetime:
            if self.body:
                return TypeInfo({"type": "string", "format": "date-time"}, _ferrule.datetime_from_text, False, "datetime")
            return TypeInfo({"type": "string", "format": "date-time"}, None, False)
        if tp is datetime.date:
            if self.body:
                return TypeInfo({"type": "string", "format": "date"}, datetime.date.fromisoformat, False, "date")
            return TypeInfo({"type": "string", "format": "date"}, None, False)
        if tp is datetime.time:
            # `07:30`, `07:30:00.5`, with `Z`, an offset or none: the core's `time` format has
            # checked it as pydantic reads one.
            return TypeInfo({"type": "string", "format": "time"}, _time_from_text, False)
        if tp is bytes:
            if self.body:
                return TypeInfo({"type": "string", "format": "binary"}, None, False)
            # A query, header, cookie or form value declared `bytes` is its text's UTF-8, as
            # pydantic makes it (it was refused as "not a file": found by a differential run
            # against FastAPI); `File()` declares an uploaded file's bytes.
            return TypeInfo({"type": "string"}, lambda v: v.encode() if isinstance(v, str) else v, False)
        if tp in (dict,):
            return TypeInfo({"type": "object"}, None, False)
        if tp in (list,):
            return TypeInfo({"type": "array"}, None, False)
        return None

    def _sequence(self, tp: Any, origin: Any) -> TypeInfo:
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        if origin in (tuple, typing.Tuple) and len(args) > 1 and Ellipsis not in typing.get_args(tp):
            items = [self.describe(a) for a in args]
            schema = {"type": "array", "prefixItems": [i.schema for i in items], "minItems": len(items), "maxItems": len(items)}
            converters = [i.convert or _unchanged for i in items]
            if any(i.convert for i in items):
                return TypeInfo(schema, lambda v: tuple(_made_parts(zip(itertools.count(), converters, v))), False)
            return TypeInfo(schema, tuple, False)
        item = self.describe(args[0]) if args else TypeInfo({}, None, False)
        schema = {"type": "array", "items": item.schema}
        container: Optional[Callable[[Any], Any]] = None
        # A repeated item is dropped by the set, as pydantic's set does, not refused.
        if origin in (set, typing.Set):
            container = set
        elif origin in (frozenset, typing.FrozenSet):
            container = frozenset
        elif origin in (tuple, typing.Tuple):
            container = tuple
        convert = item.convert
        if convert is None and container is None:
            return TypeInfo(schema, None, False)
        make = container or list
        if convert is None:
            return TypeInfo(schema, make, False)
        # Only a list can be built natively: sets and tuples are made by Python.
        native = ("list", item.native) if container is None and item.native is not None else None
        # Parts zipped from C iterators: a generator's frame per item cost 10% of a list of
        # a hundred pydantic models' conversion; this costs about 1%.
        each = itertools.repeat(convert)
        if make is list:
            return TypeInfo(schema, lambda v: _made_parts(zip(itertools.count(), each, v)), False, native)
        return TypeInfo(schema, lambda v: make(_made_parts(zip(itertools.count(), each, v))), False, native)

    def _mapping(self, tp: Any) -> TypeInfo:
        """``dict[K, V]``. A JSON object's names are text, so a body's ``K`` other than ``str``
        is what each name is made into, as pydantic makes it: a ``UUID``, a date or an Enum
        member is judged by the core (``propertyNames``, refused at ``[..., name, "[key]"]``)
        and then made here; ``int``, ``float`` or ``bool`` names, which pydantic parses from
        text by rules no JSON Schema says, are pydantic's to parse. A response's names are
        written as text whatever ``K`` is."""
        args = typing.get_args(tp)
        value = self.describe(args[1]) if len(args) == 2 else TypeInfo({}, None, False)
        mapping: dict = {"type": "object", "additionalProperties": value.schema} if args else {"type": "object"}
        key = self.describe(args[0]) if args and self.body and not self.response else TypeInfo({}, None, False)
        if not _admits_only_text(key.schema):
            raise _NeedsPydantic(f"{tp!r}: its keys are parsed from text, which needs pydantic installed")
        if key.schema not in ({}, {"type": "string"}):
            mapping["propertyNames"] = key.schema
        if key.convert is None and value.convert is None:
            return TypeInfo(mapping, None, False, None if value.native is None else ("values", value.native))
        # Names made into objects are Python's to make, so only values alone have a native plan.
        native = None if key.convert is not None or value.native is None else ("values", value.native)
        return TypeInfo(mapping, _mapping_made(key.convert, value.convert or _unchanged), False, native)

    def _guarded(self, tp: type, build: Callable[[type], TypeInfo]) -> TypeInfo:
        """``build(tp)``, or for a type met inside itself (a tree's ``children: list[Node]``) a
        ``$ref`` to it: its schema then goes under ``$defs`` and everywhere it is used is that
        reference; the inner converter is the one the outer build makes."""
        key = id(tp)
        building = self.active.get(key)
        if building is not None:
            if building.name is None:
                building.name = self._def_name(tp)
            outer = building
            return TypeInfo({"$ref": f"#/$defs/{building.name}"}, lambda value: outer.convert(value), False)
        building = _Building()
        self.active[key] = building
        try:
            info = build(tp)
        finally:
            del self.active[key]
        if info.convert is not None:
            building.convert = info.convert
        if building.name is None:
            return info
        self.defs[building.name] = info.schema
        return TypeInfo({"$ref": f"#/$defs/{building.name}"}, info.convert, info.optional)

    def _adapted(self, tp: Any, needs: _NeedsPydantic) -> TypeInfo:
        """``tp`` (a union that needs conversion, or a type only pydantic knows) as pydantic's
        ``TypeAdapter`` describes and validates it: its schema (``$defs`` joining the root's)
        and ``validate_python``, whose refusal is a 422 at the value (``refused_conversion``)."""
        try:
            import pydantic
        except ImportError:
            raise TypeError(str(needs)) from None
        try:
            adapter = pydantic.TypeAdapter(tp)
        except pydantic.PydanticUserError as refused:
            raise TypeError(f"{needs}: {refused}") from None
        schema = adapter.json_schema(mode="serialization" if self.response else "validation")
        if self.response:
            _computed_not_required(schema)
        optional = type(None) in typing.get_args(strip_annotated(tp)[0])
        return TypeInfo(self._hoisted(schema, tp), adapter.validate_python, optional)

    def _tagged(self, tp: Any, tag: Any) -> TypeInfo:
        needs = _NeedsPydantic(f"{tp!r}: a union with a discriminator needs pydantic installed")
        try:
            import pydantic
        except ImportError:
            raise TypeError(str(needs)) from None
        return self._adapted(typing.Annotated[tp, pydantic.Field(discriminator=tag)], needs)

    def _hoisted(self, schema: dict, tp: type) -> dict:
        """``schema`` (pydantic's or msgspec's) without its ``$defs``, which join the root's:
        their ``$ref``s point at the root, so a model inside ``list[...]`` or ``Optional[...]``
        would refer to definitions that are not there."""
        defs = schema.get("$defs")
        if not defs:
            return schema
        for name, definition in defs.items():
            if self.defs.setdefault(name, definition) != definition:
                raise TypeError(f"{tp!r}: two different models are both named {name!r} in one schema; rename one")
        return {key: value for key, value in schema.items() if key != "$defs"}

    def _def_name(self, tp: type) -> str:
        """The class's name, numbered when another class of that name took it."""
        name, number = tp.__name__, 1
        while self.named.setdefault(name, id(tp)) != id(tp):
            number += 1
            name = f"{tp.__name__}{number}"
        return name

    def _dataclass(self, cls: type) -> TypeInfo:
        hints = typing.get_type_hints(cls, include_extras=True)
        properties: dict[str, Any] = {}
        required: list[str] = []
        converters: dict[str, Callable[[Any], Any]] = {}
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            info = self.describe(hints.get(field.name, Any))
            properties[field.name] = info.schema
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                required.append(field.name)
            elif field.default is not dataclasses.MISSING and _json_literal(field.default):
                properties[field.name] = {**info.schema, "default": field.default}
            elif isinstance(field.default, enum.Enum) and _json_literal(field.default.value):
                # As pydantic writes an Enum default in a schema: its value.
                properties[field.name] = {**info.schema, "default": field.default.value}
            if info.convert is not None:
                converters[field.name] = info.convert
        # The class's name is the model's name in the OpenAPI document (its component).
        schema: dict[str, Any] = {"title": cls.__name__, "type": "object", "properties": properties}
        if required:
            schema["required"] = required
        names = tuple(properties)

        def convert(value: dict) -> Any:
            kwargs = {name: value[name] for name in names if name in value}
            made = [name for name in converters if kwargs.get(name) is not None]
            kwargs.update(zip(made, _made_parts((name, converters[name], kwargs[name]) for name in made)))
            try:
                return cls(**kwargs)
            except (ValueError, AssertionError) as refused:
                # The class's own check (`__post_init__` raising ValueError) refuses the data
                # as a pydantic validator's does: FastAPI answers 422 `value_error`, where this
                # was a 500 (found by a probe).
                raise RefusedByModel(refused) from refused

        return TypeInfo(schema, convert, False)

    def _typeddict(self, cls: type) -> TypeInfo:
        hints = typing.get_type_hints(cls, include_extras=True)
        properties = {}
        converters = {}
        natives: Optional[dict[str, Any]] = {}
        for name, hint in hints.items():
            info = self.describe(hint)
            properties[name] = info.schema
            if info.convert is not None:
                converters[name] = info.convert
                if natives is not None and info.native is not None:
                    natives[name] = info.native
                else:
                    natives = None
        schema: dict[str, Any] = {"title": cls.__name__, "type": "object", "properties": properties}
        # With postponed annotations a class sees "NotRequired[...]" only as text; the resolved
        # hints are authoritative.
        required_keys = set(getattr(cls, "__required_keys__", ()))
        for name, hint in hints.items():
            origin = typing.get_origin(hint)
            if origin is getattr(typing, "NotRequired", object()):
                required_keys.discard(name)
            elif origin is getattr(typing, "Required", object()):
                required_keys.add(name)
        # In declaration order, as pydantic writes a TypedDict's (and as errors are reported).
        required = [name for name in hints if name in required_keys]
        if required:
            schema["required"] = required
        if not converters:
            return TypeInfo(schema, None, False)

        def convert(value: dict) -> dict:
            out = dict(value)
            made = [name for name in converters if out.get(name) is not None]
            out.update(zip(made, _made_parts((name, converters[name], out[name]) for name in made)))
            return out

        return TypeInfo(schema, convert, False, natives)


# annotated_types / pydantic-style metadata objects: attribute → JSON Schema keyword.
_CONSTRAINT_ATTRIBUTES = {
    "gt": "exclusiveMinimum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "le": "maximum",
    "multiple_of": "multipleOf",
    "pattern": "pattern",
}


def _constraint_objects(extras: Iterable[Any]) -> Iterator[Any]:
    """``Annotated`` metadata one constraint at a time: a pydantic ``Field(le=100)`` (a
    ``FieldInfo``, whose constraints are in its ``metadata``) and grouped ``annotated_types``
    (``Interval``, pydantic's ``StringConstraints``, what ``conint`` and ``constr`` put in)
    opened up, the rest as it is."""
    for extra in extras:
        if type(extra).__name__ == "FieldInfo" and isinstance(getattr(extra, "metadata", None), list):
            yield from _constraint_objects(extra.metadata)
        elif _grouped(extra):
            yield extra  # its own attributes (`Interval(le=100).le`), then each member
            yield from _constraint_objects(iter(extra))
        else:
            yield extra


def _grouped(extra: Any) -> bool:
    try:
        from annotated_types import GroupedMetadata
    except ImportError:
        return False
    return isinstance(extra, GroupedMetadata)


class RefusedValue(ValueError):
    """A value a type's own rule refused, as pydantic reports it (``decimal_max_digits``): a 422
    at the value, with this error type, message and context."""

    def __init__(self, kind: str, msg: str, ctx: dict) -> None:
        super().__init__(msg)
        self.kind, self.msg, self.ctx = kind, msg, ctx


class Refusals(Exception):
    """What converters refused inside one value (a list's items, a dataclass's fields), each as
    ``(path, refusal, refused value)``, the path from the value to where it stood. pydantic
    reports each refusal in a body where it is (``["body", "items", 1, "n"]``), every one of
    them, so a container goes on past a refused part and reports them all
    (``signature.refused_conversion``). What a converter raised that refuses nothing (a bug)
    stands here too, and is then the app's failure."""

    def __init__(self, found: list) -> None:
        super().__init__(f"{len(found)} part(s) refused")
        self.found = found


def _refused_at(found: Optional[list], step: Any, refused: BaseException, raw: Any) -> list:
    """``found`` with ``refused`` (of part ``step``, sent as ``raw``) added, the parts it
    found refused inside that part each one step deeper."""
    found = [] if found is None else found
    steps = list(step) if isinstance(step, tuple) else [step]
    if isinstance(refused, Refusals):
        found.extend(([*steps, *path], inner, value) for path, inner, value in refused.found)
    else:
        found.append((steps, refused, raw))
    return found


def _made_parts(parts: Iterable[tuple[Any, Callable[[Any], Any], Any]]) -> list:
    """Each ``(step, convert, raw)`` part of a value made, in order, or every refusal among
    them raised together, each at its step (a tuple of steps for a longer path)."""
    made = []
    found: Optional[list] = None
    for step, convert, raw in parts:
        try:
            made.append(convert(raw))
        except Exception as refused:
            found = _refused_at(found, step, refused, raw)
    if found:
        raise Refusals(found)
    return made


def _mapping_made(name_of: Converter, item: Callable[[Any], Any]) -> Callable[[dict], dict]:
    def made(value: dict) -> dict:
        # pydantic's place for a refused name: the name, then "[key]".
        names = list(value) if name_of is None else _made_parts(((name, "[key]"), name_of, name) for name in value)
        return dict(zip(names, _made_parts(zip(value, itertools.repeat(item), value.values()))))

    return made


class RefusedByModel(Exception):
    """A body type's own code refused the request's data (a dataclass's ``__post_init__``
    raised ``ValueError`` or ``AssertionError``): a 422, as pydantic reports a validator's."""

    def __init__(self, refused: BaseException) -> None:
        super().__init__(str(refused))
        self.refused = refused


def constraint_keywords(extras: list, schema: dict) -> dict:
    """JSON Schema keywords from ``Annotated`` metadata: ferrule markers (``Field``, ``Query``,
    …), ``annotated_types`` objects (``Ge(1)``, ``MaxLen(10)``, …) and pydantic's ways of
    writing them (``Field(le=100)``, ``conint``, ``constr``, ``PositiveInt``)."""
    from .params import Param

    out: dict = {}
    array = schema.get("type") == "array"
    for extra in _constraint_objects(extras):
        if isinstance(extra, Param):
            out.update(extra.constraints)
            lengths = (extra.min_length, extra.max_length)
        else:
            for attribute, keyword in _CONSTRAINT_ATTRIBUTES.items():
                value = getattr(extra, attribute, None)
                if isinstance(value, (int, float, str)) and not isinstance(value, bool):
                    out[keyword] = value
            lengths = (getattr(extra, "min_length", None), getattr(extra, "max_length", None))
        if lengths[0] is not None:
            out["minItems" if array else "minLength"] = lengths[0]
        if lengths[1] is not None:
            out["maxItems" if array else "maxLength"] = lengths[1]
    return out


def digits_checked(convert: Optional[Callable[[Any], Any]], extras: Iterable[Any]) -> Optional[Callable[[Any], Any]]:
    """``convert``, then a ``Decimal`` it made held to the ``max_digits`` and ``decimal_places``
    of a marker (``Query(max_digits=5)``) or of pydantic's ``Field``/``condecimal`` among
    ``extras``, as pydantic holds it: counted once normalised (``1.230`` has two places), whole
    digits checked only when both are given. No JSON Schema keyword says these, so the
    conversion checks them; ``convert`` itself when none is given. ``Query(max_digits=…)`` was
    a TypeError (found by a probe beside FastAPI)."""
    max_digits = decimal_places = None
    for extra in _constraint_objects(extra for extra in extras if extra is not None):
        digits, places = getattr(extra, "max_digits", None), getattr(extra, "decimal_places", None)
        max_digits = digits if isinstance(digits, int) else max_digits
        decimal_places = places if isinstance(places, int) else decimal_places
    if convert is None or (max_digits is None and decimal_places is None):
        return convert

    def plural(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    def checked(value: Any) -> Any:
        number = convert(value)
        if not isinstance(number, decimal.Decimal) or not number.is_finite():
            return number
        _, digit_tuple, exponent = number.normalize().as_tuple()
        assert isinstance(exponent, int)  # a finite number's exponent
        digits, decimals = len(digit_tuple) + max(exponent, 0), max(-exponent, 0)
        digits = max(digits, decimals)
        if max_digits is not None and digits > max_digits:
            raise RefusedValue("decimal_max_digits", f"Decimal input should have no more than {plural(max_digits, 'digit')} in total", {"max_digits": max_digits})
        if decimal_places is not None and decimals > decimal_places:
            raise RefusedValue("decimal_max_places", f"Decimal input should have no more than {plural(decimal_places, 'decimal place')}", {"decimal_places": decimal_places})
        if max_digits is not None and decimal_places is not None and digits - decimals > max(max_digits - decimal_places, 0):
            whole = max(max_digits - decimal_places, 0)
            raise RefusedValue("decimal_whole_digits", f"Decimal input should have no more than {plural(whole, 'digit')} before the decimal point", {"whole_digits": whole})
        return number

    return checked


_TIME = re.compile(r"(\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?(?:([Zz])|([+-])(\d\d):(\d\d))?")


def _time_from_text(text: str) -> datetime.time:
    """A time of day the core's `time` format admitted (`07:30`, `07:30:00.5Z`, `…+02:00`),
    read here: Python 3.10's `time.fromisoformat` takes no `Z` and only 3 or 6 digits of a
    fraction. The fraction is cut to microseconds, as pydantic cuts it."""
    found = _TIME.fullmatch(text)
    if found is None:
        raise ValueError(f"not a time: {text!r}")
    hour, minute, second, fraction, utc, sign, offset_hours, offset_minutes = found.groups()
    zone: Optional[datetime.tzinfo] = None
    if utc:
        zone = datetime.timezone.utc
    elif sign:
        offset = datetime.timedelta(hours=int(offset_hours), minutes=int(offset_minutes))
        zone = datetime.timezone(-offset if sign == "-" else offset)
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    return datetime.time(int(hour), int(minute), int(second or 0), micro, tzinfo=zone)


def _admits_only_text(schema: dict) -> bool:
    """Whether a value of ``schema`` is always a string, so a JSON object's name can be one."""
    if schema.get("type") == "string":
        return True
    if "type" in schema:
        return False
    named = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if named is not None:
        return all(isinstance(value, str) for value in named)
    return not schema


def _none_passes(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else convert(v)


def _json_literal(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _inline_defs(schema: dict) -> dict:
    """msgspec puts the struct under ``$defs`` with a top-level ``$ref``; keep the ``$defs`` and
    make the root the referenced schema so the body schema is an object schema."""
    ref = schema.get("$ref")
    defs = schema.get("$defs", {})
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        root = dict(defs.get(ref[len("#/$defs/"):], {}))
        root["$defs"] = defs
        return root
    return schema
