"""The response schema of a route: its ``response_model=``, else its return annotation, as in
FastAPI. The core compiles it into the shape the JSON writer follows (fields the model does not
declare are left out) and documents it in the OpenAPI document."""

from __future__ import annotations

import collections.abc
import datetime
import typing
from typing import Any, Callable, Optional

from . import schema as schemas
from .responses import Response
from .signature import what_runs

#: ``response_model``'s default: take the return annotation.
FROM_ANNOTATION: Any = object()

# Return annotations that say how a response is made rather than what JSON it holds.
_NOT_JSON = (str, bytes, bytearray, type(None))
_STREAMS = (
    collections.abc.Iterator,
    collections.abc.Iterable,
    collections.abc.Generator,
    collections.abc.AsyncIterator,
    collections.abc.AsyncIterable,
    collections.abc.AsyncGenerator,
)


def response_schema(handler: Callable[..., Any], response_model: Any = FROM_ANNOTATION) -> Optional[dict]:
    """The JSON Schema of what ``handler`` answers, or ``None`` when it declares none
    (``response_model=None``, no annotation, or one that is not JSON: ``str``, ``bytes``, a
    ``Response``, a generator)."""
    if response_model is None:
        return None
    if response_model is FROM_ANNOTATION:
        # The hints were already read for the parameters, so this cannot fail here.
        annotation = typing.get_type_hints(what_runs(handler), include_extras=True).get("return")
        if annotation is None or not _describes_json(annotation):
            return None
        where = "return annotation"
    else:
        annotation = response_model
        where = "response_model"
    try:
        return schemas.describe(annotation, body=True, response=True).schema
    except TypeError as e:
        name = getattr(handler, "__qualname__", repr(handler))
        raise TypeError(f"{name}: {where} {annotation!r} cannot describe a JSON response ({e}); response_model=None declares none") from None


def computing(handler: Callable[..., Any], declared_by: Callable[..., Any], response_model: Any, schema: Optional[dict]) -> Callable[..., Any]:
    """``handler`` (the route's function as called, ``declared_by``'s return annotation or
    ``response_model`` naming what it answers), whose result is made into its response model
    first when the model writes something otherwise than as the result holds it: a
    ``computed_field`` (a read-only property in ``schema``), a ``field_serializer`` or an
    ``Annotated`` serializer, a ``SecretStr``, a ``serialization_alias`` (see
    ``_serializes_fields``). FastAPI validates every result into its model, so those are sent
    as the model writes them; written from what the handler returned, a masked card number or a
    password went out as given, a computed field was absent (found by probes). Any result but
    a ``Response``, text or ``None`` is made so: a dict, a list, a dataclass, a msgspec Struct,
    an ORM row (read by its attributes), an instance of another model. Data the model refuses
    is the handler's failure (a 500), as FastAPI's ``ResponseValidationError`` is. Only routes
    whose model needs it pay; an ORM row under any other model is read by the JSON writer,
    which reads only the attributes the schema declares."""
    if schema is None:
        return handler
    annotation = _model_of(declared_by, response_model)
    if not (_has_read_only(schema) or _serializes_fields(annotation)):
        return handler
    made = _making(annotation)
    if made is None:
        # A type pydantic will not read (typing.TypedDict before Python 3.12): written as the
        # handler returns it, as before; the writer still keeps only what the schema declares.
        return handler
    return _applied(handler, made)


def remaking(declared_by: Callable[..., Any], response_model: Any, schema: Optional[dict]) -> Optional[Callable[[Any], Any]]:
    """What makes a result into the route's response model, for the JSON writer to call on a
    result that holds a scalar of a kind the model does not declare: a ``Decimal`` or ``"7"``
    for an ``int``, ``2.5`` for an ``int``, ``True`` for a ``float``. FastAPI validates every
    result against its model, so it converts what pydantic converts (``"7"`` is 7, a
    ``Decimal`` for a ``float`` is a float) and refuses the rest with a 500; a result of the
    declared kinds is written as it is, and this is never called. ``None`` without a schema or
    without pydantic. The model's ``TypeAdapter`` is made when it is first needed, so declaring
    a route costs nothing more, and a model pydantic will not read (a forward reference it
    cannot resolve, an ORM class) fails no declaration: its results are written as they are."""
    if schema is None:
        return None
    try:
        import pydantic  # noqa: F401
    except ImportError:
        return None
    annotation = _model_of(declared_by, response_model)
    made: Optional[Callable[[Any], Any]] = None

    def remake(value: Any) -> Any:
        nonlocal made
        if made is None:
            try:
                made = _making(annotation) or _as_given
            except Exception:  # noqa: BLE001 - any type pydantic cannot adapt: written as given
                made = _as_given
        return made(value)

    return remake


def _as_given(value: Any) -> Any:
    return value


def reported_by_core(made: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``made`` (``remaking``'s), giving back a result its model refuses as it was."""
    import pydantic

    def made_or_given(value: Any) -> Any:
        try:
            return made(value)
        except pydantic.ValidationError:
            return value

    return made_or_given


def _model_of(declared_by: Callable[..., Any], response_model: Any) -> Any:
    """The route's response model: ``response_model``, else its return annotation."""
    if response_model is FROM_ANNOTATION:
        return typing.get_type_hints(what_runs(declared_by), include_extras=True).get("return")
    return response_model


def _making(annotation: Any) -> Optional[Callable[[Any], Any]]:
    """Validates a result into ``annotation`` (read by attributes, as FastAPI reads an ORM row),
    or ``None`` when pydantic will not read the type. A ``Response``, text or ``None`` is left
    as it is."""
    import pydantic

    try:
        adapter = pydantic.TypeAdapter(annotation)
    except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError):
        return None

    def made(value: Any) -> Any:
        if value is None or isinstance(value, (str, bytes, bytearray, Response)):
            return value
        return adapter.validate_python(value, from_attributes=True)

    return made


def _serializes_fields(annotation: Any, seen: Optional[set] = None) -> bool:
    """Whether pydantic writes a value of ``annotation`` (at any depth: models, pydantic and
    stdlib dataclasses, TypedDicts, containers) otherwise than the handler holds it, so that
    FastAPI, which validates a result into its model and dumps that, sends something else than
    its fields as given: a ``field_serializer``, an ``Annotated`` serializer or validator, a
    field or model validator (its output is what goes out), ``json_encoders``, a secret
    (``SecretStr``, ``Secret[...]``: masked), a ``timedelta`` (ISO 8601), a type that writes
    itself (``__get_pydantic_core_schema__``), or a field written under another name than its
    own (``serialization_alias``, an alias generator's: a dict keyed by field names is read into
    the model, which FastAPI writes by alias). Found by probes, each a value sent as given."""
    seen = set() if seen is None else seen
    tp, metadata = schemas.strip_annotated(annotation)
    if any(_changes_value(meta) for meta in metadata):
        return True
    if id(tp) in seen:
        return False
    seen.add(id(tp))
    fields = _fields_of(tp)
    if fields is not None:
        decorators = getattr(tp, "__pydantic_decorators__", None)
        if decorators is not None and (decorators.field_serializers or decorators.model_serializers or decorators.field_validators or decorators.model_validators):
            return True
        config = getattr(tp, "model_config", None) or getattr(tp, "__pydantic_config__", None) or {}
        if config.get("json_encoders"):
            return True
        for name, (_, info) in fields.items():
            if info is not None and (info.serialization_alias not in (None, name) or any(_changes_value(meta) for meta in info.metadata)):
                return True
        return any(_serializes_fields(field_annotation, seen) for field_annotation, _ in fields.values())
    # `Secret[str]` is a generic alias of its class.
    origin = typing.get_origin(tp)
    if isinstance(origin, type) and _is_secret(origin):
        return True
    if isinstance(tp, type):
        if tp is datetime.timedelta or _is_secret(tp):
            return True
        if hasattr(tp, "__get_pydantic_core_schema__") and tp.__module__.split(".")[0] not in ("pydantic", "pydantic_core"):
            return True
    return any(_serializes_fields(arg, seen) for arg in typing.get_args(tp))


def _fields_of(tp: Any) -> Optional[dict[str, tuple[Any, Any]]]:
    """A structured type's fields, ``{name: (annotation, pydantic FieldInfo or None)}``: a
    pydantic model's or dataclass's, a stdlib dataclass's, a TypedDict's; ``None`` for others."""
    import dataclasses

    if not isinstance(tp, type):
        return None
    if hasattr(tp, "model_fields") and hasattr(tp, "__pydantic_decorators__"):
        return {name: (field.annotation, field) for name, field in tp.model_fields.items()}
    if dataclasses.is_dataclass(tp) and hasattr(tp, "__pydantic_fields__"):
        return {name: (field.annotation, field) for name, field in tp.__pydantic_fields__.items()}
    if dataclasses.is_dataclass(tp) or _is_typeddict(tp):
        try:
            hints = typing.get_type_hints(tp, include_extras=True)
        except Exception:  # noqa: BLE001 - an unresolvable annotation: nothing to tell
            return {}
        names = [field.name for field in dataclasses.fields(tp)] if dataclasses.is_dataclass(tp) else list(hints)
        return {name: (hints[name], None) for name in names if name in hints}
    return None


def _is_typeddict(tp: Any) -> bool:
    """``typing``'s TypedDict or ``typing_extensions``' (its own class before Python 3.12)."""
    return typing.is_typeddict(tp) or (isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__"))


def _is_secret(tp: type) -> bool:
    """pydantic's ``SecretStr``, ``SecretBytes`` or ``Secret[...]``."""
    return any(base.__module__.startswith("pydantic") and base.__name__ in ("SecretStr", "SecretBytes", "Secret", "_SecretBase", "_SecretField") for base in tp.__mro__)


def _changes_value(meta: Any) -> bool:
    """A pydantic serializer or validator in ``Annotated`` metadata: what goes out is its output."""
    return type(meta).__name__ in ("PlainSerializer", "WrapSerializer", "AfterValidator", "BeforeValidator", "WrapValidator", "PlainValidator") and type(meta).__module__.startswith("pydantic")


def _has_read_only(schema: Any) -> bool:
    if isinstance(schema, dict):
        return schema.get("readOnly") is True or any(_has_read_only(value) for value in schema.values())
    if isinstance(schema, list):
        return any(_has_read_only(value) for value in schema)
    return False


def _describes_json(annotation: Any) -> bool:
    tp, _ = schemas.strip_annotated(annotation)
    if tp is Any or tp in _NOT_JSON:
        return False
    if isinstance(tp, type) and issubclass(tp, Response):
        return False
    # An iterator or generator type (what a streaming handler says it returns); not any class
    # that happens to be iterable (a pydantic model is).
    if typing.get_origin(tp) in _STREAMS or tp in _STREAMS:
        return False
    if typing.get_origin(tp) is typing.Union or type(tp).__name__ == "UnionType":
        return all(_describes_json(member) for member in typing.get_args(tp) if member is not type(None))
    return True


def excluding(handler: Callable[..., Any], declared_by: Callable[..., Any], response_model: Any, *, unset: bool, none: bool, defaults: bool) -> Callable[..., Any]:
    """``handler`` whose JSON result leaves out what FastAPI's ``response_model_exclude_unset``
    (fields a model was not given), ``_exclude_none`` (``None`` values, at any depth) and
    ``_exclude_defaults`` (fields at their default) leave out. The result is read into the
    route's response model (a dict, a row, a list of them) and dumped with those flags, as
    FastAPI does (found by a probe: a dict's defaults stayed, and with exclude_none alone its
    defaulted fields went missing); under a type pydantic cannot read, a pydantic model is
    dumped with them, a dataclass or a dict has its ``None`` values dropped. A ``Response``,
    text or a stream is sent as it is. Only routes with one of the options pay."""
    import dataclasses

    annotation = None
    if response_model is FROM_ANNOTATION:
        annotation = typing.get_type_hints(what_runs(declared_by), include_extras=True).get("return")
    elif response_model is not None:
        annotation = response_model
    adapter = None
    if annotation is not None and _describes_json(annotation):
        import pydantic

        try:
            adapter = pydantic.TypeAdapter(annotation)
        except Exception:  # noqa: BLE001 - a type pydantic cannot read (a msgspec Struct): trimmed below
            adapter = None
    if adapter is not None:

        def dumped(value: Any) -> Any:
            if value is None or isinstance(value, (str, bytes, bytearray, Response)):
                return value
            model = adapter.validate_python(value, from_attributes=True)
            return adapter.dump_python(model, mode="json", by_alias=True, exclude_unset=unset, exclude_none=none, exclude_defaults=defaults)

        return _applied(handler, dumped)

    def trimmed(value: Any) -> Any:
        if hasattr(type(value), "model_dump"):
            # By alias and in JSON mode, as the core writes a model otherwise.
            return trimmed(value.model_dump(mode="json", by_alias=True, exclude_unset=unset, exclude_none=none, exclude_defaults=defaults))
        if dataclasses.is_dataclass(value) and not isinstance(value, type) and none:
            return trimmed({field.name: getattr(value, field.name) for field in dataclasses.fields(value)})
        if isinstance(value, dict):
            return {key: trimmed(item) for key, item in value.items() if not (none and item is None)}
        if isinstance(value, (list, tuple)):
            return [trimmed(item) for item in value]
        return value

    return _applied(handler, trimmed)


def is_json_class(response_class: type) -> bool:
    """Whether a route's ``response_class`` sends its results as JSON (``JSONResponse``,
    ``ORJSONResponse``, ``UJSONResponse``, or a subclass): then a plain result goes the usual
    way, written by Rust through the route's ``response_model``, and nothing is wrapped."""
    from .responses import JSONResponse

    if not isinstance(response_class, type):
        raise TypeError(f"response_class is a Response class, not {response_class!r}")
    return issubclass(response_class, JSONResponse)


def as_response_class(handler: Callable[..., Any], response_class: type, status_code: Optional[int]) -> Callable[..., Any]:
    """``handler`` whose result, unless it is a ``Response`` already, is sent as
    ``response_class(result)`` (FastAPI's ``response_class=HTMLResponse``: a returned ``str`` is
    the page), with ``status_code`` when the route gives one, else the class's own (a
    ``RedirectResponse``'s 307). Only routes with a class other than JSON pay for it."""
    from .responses import Response

    if not (isinstance(response_class, type) and issubclass(response_class, Response)):
        raise TypeError(f"response_class is a ferrule Response class (HTMLResponse, PlainTextResponse, RedirectResponse, ...), not {response_class!r}")
    status = {} if status_code is None else {"status_code": status_code}

    def made(value: Any) -> Any:
        return value if isinstance(value, Response) else response_class(value, **status)

    return _applied(handler, made)


def _applied(handler: Callable[..., Any], change: Callable[[Any], Any]) -> Callable[..., Any]:
    """``handler`` whose result goes through ``change``, for a sync or an async handler, and for
    a dependency wrapper that answers with a coroutine."""
    import functools
    import inspect

    from .signature import is_async

    if is_async(handler):

        @functools.wraps(handler)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            return change(await handler(*args, **kwargs))

        return run_async

    @functools.wraps(handler)
    def run(*args: Any, **kwargs: Any) -> Any:
        result = handler(*args, **kwargs)
        if inspect.isawaitable(result):

            async def later() -> Any:
                return change(await result)

            return later()
        return change(result)

    return run


def without_defaults(schema: Any) -> Any:
    """``schema`` with no ``default`` keyword at any depth: the core fills a missing field with
    its default as it writes a result, which would put back what ``response_model_exclude_*``
    left out. A property *named* ``default`` stays (only the keyword goes)."""
    if isinstance(schema, list):
        return [without_defaults(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "default":
            continue
        if key in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas") and isinstance(value, dict):
            out[key] = {name: without_defaults(sub) for name, sub in value.items()}
        else:
            out[key] = without_defaults(value)
    return out


def documented_responses(responses: Optional[typing.Mapping[Any, Any]], where: str) -> dict[str, dict]:
    """FastAPI's ``responses=`` (a route's, a router's, an ``include_router``'s): by status
    (``404``, ``"4XX"``, ``"default"``), a dict of an OpenAPI response's fields (``description``,
    ``content``, ``headers``, …) and a ``model``, whose schema becomes the response's
    ``application/json`` content. They go to the core's ``documented_responses``: written into
    the OpenAPI document only, filtering nothing (a 404 documented with a model is still what
    the handler sends), as in FastAPI."""
    from .encoders import jsonable_encoder

    documented: dict[str, dict] = {}
    for status, response in (responses or {}).items():
        if not isinstance(response, collections.abc.Mapping):
            raise TypeError(f"{where}: responses[{status!r}] is {type(response).__name__}, not a dict of the response's fields (model, description, content, headers)")
        fields = jsonable_encoder({name: value for name, value in response.items() if name != "model"})
        model = response.get("model")
        if model is not None:
            try:
                schema = schemas.describe(model, body=True, response=True).schema
            except TypeError as e:
                raise TypeError(f"{where}: responses[{status!r}]: model {model!r} cannot describe a JSON response ({e})") from None
            content = fields.setdefault("content", {})
            if not isinstance(content, dict):
                raise TypeError(f"{where}: responses[{status!r}]: content is {type(content).__name__}, not a dict by media type")
            content.setdefault("application/json", {})["schema"] = schema
        documented[str(status)] = fields
    return documented
