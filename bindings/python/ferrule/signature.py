"""A handler's signature → its route's declared inputs and the plan Rust follows to call it.

Done once per route. The result is plain data: a ``RouteSpec`` (the core's route description,
with the JSON Schemas Rust validates against) and a call plan — for each argument, where its
value comes from and the converter (if any) to apply — so per request Rust builds the
arguments from its own typed values with no Python-side parsing.
"""

from __future__ import annotations

import enum
import functools
import inspect
import re
import typing
import urllib.parse
from typing import Any, Callable, NamedTuple, Optional

from . import _ferrule
from . import schema as schemas
from .background import BackgroundTasks, tasks_of_request
from .params import MISSING, BodyParam, Dependency, FieldParam, FileParam, Param, QueryParam
from .security import SecurityDependency, SecurityScheme, SecurityScopes

__all__ = ["Argument", "Analysis", "DependencyUse", "analyse", "template_params"]

_TEMPLATE_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::([a-z]+))?\}")

# Path types the core's template understands, by Python annotation.
_PATH_TYPES: dict[Any, str] = {}


def _path_types() -> dict[Any, str]:
    if not _PATH_TYPES:
        import datetime
        import uuid

        _PATH_TYPES.update({
            int: "int",
            float: "float",
            bool: "bool",
            str: "str",
            uuid.UUID: "uuid",
            datetime.date: "date",
            datetime.datetime: "datetime",
        })
    return _PATH_TYPES


class Argument(NamedTuple):
    """How Rust fills one handler argument (the tuple layout the extension reads)."""

    name: str
    positional: bool
    source: str  # path | query | header | cookie | body | form | request | socket
    key: str  # the name in that source
    convert: Optional[Callable[[Any], Any]]
    default: Any  # used when the source has no value (MISSING: the core guarantees one)
    # A body's conversion done by Rust as it builds the body (TypeInfo.native); `convert` is
    # then not called. Dependencies, which read `request._validated_body`, still call `convert`.
    native: Any = None


class DependencyUse(NamedTuple):
    """One ``Depends(...)``: the marker, and its callable's own analysis (its parameters joined
    the route's spec)."""

    marker: Dependency
    analysis: "Analysis"


class Analysis(NamedTuple):
    path: str  # the template, with types filled in from annotations
    spec: dict  # RouteSpec fields except method/path
    arguments: list[Argument]
    response_param: Optional[str] = None  # a `response: Response` parameter, filled in Python
    # The `Depends` arguments, by index: an argument of source "depends" names one by its key.
    dependencies: list[DependencyUse] = []
    # Whether the JSON body is an object of the body parameters (FastAPI's embedded body),
    # whose schema is then titled after the route, as FastAPI names it.
    embedded_body: bool = False
    # The OAuth2 scopes the `Security(...)` markers above this dependency asked for: one
    # request resolves it once per set of them (FastAPI's cache key).
    scopes: tuple[str, ...] = ()


def takes_response(analysis: Analysis) -> bool:
    """Whether the handler or any of its dependencies, at any depth, takes a ``Response``."""
    return (
        analysis.response_param is not None
        or any(argument.source == "response" for argument in analysis.arguments)
        or any(takes_response(use.analysis) for use in analysis.dependencies)
    )


def template_params(path: str) -> dict[str, Optional[str]]:
    return {m.group(1): m.group(2) for m in _TEMPLATE_PARAM.finditer(path)}


# What a path may carry as it is, beside letters and digits (RFC 3986's pchar, `%` aside).
_PATH_SAFE = "-._~!$&'()*+,;=:@"


def fill_template(template: str, values: dict[str, Any]) -> Optional[str]:
    """``template`` (in the core's braced spelling) with ``values`` in place of its
    parameters, or None unless ``values`` names exactly its parameters (Starlette's rule for
    ``url_path_for``). Each value is written as ``str`` writes it (an Enum member as its value,
    a bool as ``true``/``false``, as the core reads them) and percent-encoded; a
    ``{rest:path}`` keeps its slashes."""
    if set(template_params(template)) != set(values):
        return None

    def written(match: "re.Match[str]") -> str:
        value = values[match.group(1)]
        if isinstance(value, enum.Enum):
            value = value.value
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        return urllib.parse.quote(text, safe=_PATH_SAFE + ("/" if match.group(2) == "path" else ""))

    return _TEMPLATE_PARAM.sub(written, template)


def analyse(
    func: Callable[..., Any],
    path: str,
    *,
    request_type: type,
    response_type: Optional[type] = None,
    socket_type: Optional[type] = None,
    as_dependency: bool = False,
    security_scopes: tuple[str, ...] = (),
) -> Analysis:
    """``security_scopes``: what the ``Security(..., scopes=)`` markers above ``func`` asked for."""
    path = _ferrule.normalize_path(path)
    in_template = template_params(path)
    hinted = what_runs(func)
    try:
        hints = typing.get_type_hints(hinted, include_extras=True)
    except Exception as e:  # unresolved forward references etc.
        raise TypeError(f"{_name(func)}: cannot read type hints: {e}") from e
    signature = inspect.signature(func)
    dependencies: list[DependencyUse] = []
    spec: dict[str, Any] = {}
    arguments: list[Argument] = []
    form_fields: dict[str, Any] = {}
    form_required: list[str] = []
    form_model_needed = False
    form_defs: dict[str, Any] = {}
    form_closed = False
    # Each file field's `File(max_size=)` (None: no limit of its own).
    file_limits: dict[str, Optional[int]] = {}
    bodies: list[_BodyPart] = []
    has_file = False
    positional = True
    response_param: Optional[str] = None
    for parameter in signature.parameters.values():
        where = f"{_name(func)}: parameter {parameter.name!r}"
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"{where}: *args/**kwargs cannot be filled from a request")
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise TypeError(f"{where}: positional-only parameters are not supported")
        positional = positional and parameter.kind is parameter.POSITIONAL_OR_KEYWORD
        annotation = hints.get(parameter.name, Any)
        base, extras = schemas.strip_annotated(annotation)
        base = _upload_of_optional(base)
        dependency = parameter.default if isinstance(parameter.default, Dependency) else next((e for e in extras if isinstance(e, Dependency)), None)
        if dependency is None and isinstance(base, type) and issubclass(base, BackgroundTasks):
            # Run after the response, as a generator dependency's teardown is (see `background`).
            dependency = Dependency(tasks_of_request)
        if dependency is None and base is SecurityScopes:
            dependency = Dependency(_scopes_given(security_scopes), use_cache=False)
        if dependency is not None and dependency.dependency is None:
            if not callable(base) or base is Any:
                raise TypeError(f"{where}: Depends() without a callable needs a class annotation to call")
            dependency = Dependency(base, use_cache=dependency.use_cache)
        if dependency is not None:
            sub = analyse_dependency(dependency, path, request_type=request_type, response_type=response_type, socket_type=socket_type, security_scopes=security_scopes)
            path = sub.path
            dependencies.append(DependencyUse(dependency, sub))
            arguments.append(Argument(parameter.name, positional, "depends", str(len(dependencies) - 1), None, MISSING))
            continue
        marker = next((e for e in extras if isinstance(e, Param)), None)
        if isinstance(parameter.default, Param):
            marker = parameter.default
            default = marker.default
        elif parameter.default is not inspect.Parameter.empty:
            default = parameter.default
            if marker is not None and marker.default is not MISSING:
                raise TypeError(f"{where}: give the default either in the marker or after '=', not both")
        else:
            default = marker.default if marker is not None else MISSING

        if isinstance(base, type) and issubclass(base, request_type):
            arguments.append(Argument(parameter.name, positional, "request", "", None, MISSING))
            continue
        if socket_type is not None and isinstance(base, type) and issubclass(base, socket_type):
            arguments.append(Argument(parameter.name, positional, "socket", "", None, MISSING))
            continue
        if response_type is not None and isinstance(base, type) and issubclass(base, response_type):
            if as_dependency:
                # The request's one Response, shared with the handler (FastAPI's sub-response).
                arguments.append(Argument(parameter.name, positional, "response", "", None, MISSING))
            else:
                response_param = parameter.name
            continue

        # `Annotated[int, Field(le=100)]` on a scalar is a query (or path) parameter with that
        # constraint, as in FastAPI; a probe found it made a body member, so `?limit=` was
        # never read.
        if marker is not None and not (isinstance(marker, FieldParam) and not schemas.is_structured(base) and not _is_upload(base)):
            source = marker.source
        elif parameter.name in in_template:
            source = "path"
        elif schemas.is_structured(base) or _is_upload(base):
            source = "file" if _is_upload(base) else "body"
        else:
            source = "query"

        if source == "path":
            if parameter.name not in in_template:
                raise TypeError(f"{where}: declared as a path parameter but {path!r} has no {{{parameter.name}}}")
            path = _typed_template(path, parameter.name, in_template[parameter.name], base, where)
            constraints = _constraints(marker, schemas.describe(base).schema)
            constraints.update(_extra_constraints(extras, schemas.describe(base).schema))
            if _enum_path_type(base) is not None:
                constraints["enum"] = [member.value for member in base]
            text = _described_as_text(base) if base not in _path_types() else None
            if text is not None:
                # A segment of a type described as text (`time`, `IPv4Address`): its format is
                # checked by the core, and the text converted as a query value of it would be.
                constraints = {**{k: v for k, v in text.items() if k != "title"}, **constraints}
            if constraints:
                spec.setdefault("path_params", []).append({"name": parameter.name, "schema": constraints})
            info = schemas.describe(base)
            convert = schemas.digits_checked(info.convert, [marker, *extras])
            arguments.append(Argument(parameter.name, positional, "path", parameter.name, convert, MISSING))
            continue

        if source in ("body",):
            # A union's tag (`Annotated[Union[Cat, Dog], Field(discriminator="kind")]`) is read
            # with the type: the rest of the metadata is the marker's, read below.
            tagged = schemas.tag_of(extras)
            info = schemas.describe(base if tagged is None else typing.Annotated[base, tagged], body=True)
            key = marker.alias if marker is not None and marker.alias else parameter.name
            embed = isinstance(marker, BodyParam) and marker.embed
            # A description stays out of a named model's schema, whose OpenAPI component would
            # otherwise change per route.
            schema = _with_constraints(info.schema, marker, describe="title" not in info.schema)
            # Required without a default, `Optional` or not, as in FastAPI (an `Optional[Item]`
            # body may be `null`, but must be sent: found by a differential run).
            bodies.append(_BodyPart(key, schema, default is MISSING, default, embed, len(arguments)))
            arguments.append(Argument(parameter.name, positional, "body", "", info.convert, None if default is MISSING else default, info.native))
            continue

        if source == "form" and schemas.is_structured(base):
            # `data: Annotated[Login, Form()]` (FastAPI's form model): the model's fields are the
            # form's, and the argument is the model made from all of them.
            info = schemas.describe(base)
            form_fields.update(info.schema.get("properties", {}))
            form_required.extend(name for name in info.schema.get("required", []) if name not in form_required)
            form_defs.update(info.schema.get("$defs", {}))
            # `extra="forbid"`: a field the model does not declare is refused (422
            # `extra_forbidden`), as for the same model as a JSON body (found by a probe).
            form_closed = form_closed or info.schema.get("additionalProperties") is False
            # A model the handler needs is made from the form even when no field is required
            # and none was sent, as FastAPI makes it: the body is required, and the core gives
            # an empty one the fields' defaults (it reached the handler as None, a 500 on
            # `data.model_dump()`: found by a probe).
            form_model_needed = form_model_needed or default is MISSING
            arguments.append(Argument(parameter.name, positional, "body", "", info.convert, None if default is MISSING else default))
            continue

        if source in ("form", "file"):
            key = (marker.alias if marker is not None and marker.alias else parameter.name)
            if source == "file" or _is_upload(base):
                has_file = True
                field_schema: dict[str, Any] = {"type": "string", "format": "binary"}
                if isinstance(marker, FileParam) and marker.media_types:
                    field_schema["contentMediaType"] = ", ".join(marker.media_types)
                if isinstance(marker, FileParam) and marker.description:
                    field_schema["description"] = marker.description
                if isinstance(marker, FileParam) and marker.sniff:
                    field_schema["x-sniff"] = True
                # `Optional[bytes] = File(None)` is read as `bytes` is (it was given the
                # UploadFile: found by a probe), and an optional list as a list.
                wanted = _inner_of_optional(base)
                if _is_list(wanted):
                    field_schema = {"type": "array", "items": field_schema}
                    if marker is not None:
                        _lengths(field_schema, marker, field_schema)
                # `file: bytes = File()` (FastAPI's): the file's bytes, not an UploadFile.
                if wanted is bytes:
                    convert = _file_bytes
                elif _is_list(wanted) and typing.get_args(wanted) == (bytes,):
                    convert = _files_bytes
                else:
                    convert = None
                limit = marker.max_size if isinstance(marker, FileParam) else None
                file_limits[key] = limit
                if limit is not None:
                    convert = _within(limit, key, convert)
            else:
                info = schemas.describe(base)
                field_schema = {**_with_constraints(info.schema, marker), **_extra_constraints(extras, info.schema)}
                convert = schemas.digits_checked(info.convert, [marker, *extras])
            form_fields[key] = field_schema
            if default is MISSING:
                form_required.append(key)
            elif _json_default(default):
                form_fields[key] = {**field_schema, "default": default}
            arguments.append(Argument(parameter.name, positional, "form", key, convert, None if default is MISSING else default))
            continue

        # query, header, cookie
        deep_object = isinstance(marker, QueryParam) and marker.styles.get("style") == "deepObject"
        if not deep_object and schemas._pydantic_model(base):
            # FastAPI's query, header and cookie models: each field is a parameter of its own,
            # and the model is made from them, as a dependency of the route that declares them
            # (it was a 422 `missing` at the model's name, whatever was sent: found by a
            # differential run).
            # `extra="forbid"`: a name the route does not declare in that source is refused
            # (422 `extra_forbidden`), as FastAPI refuses it (it was let be: found by a probe).
            if getattr(base, "model_config", {}).get("extra") == "forbid":
                closed = spec.setdefault("refuse_undeclared", [])
                if source not in closed:
                    closed.append(source)
            dependency = Dependency(_parameters_model(base, source))
            sub = analyse_dependency(dependency, path, request_type=request_type, response_type=response_type, socket_type=socket_type, security_scopes=security_scopes)
            path = sub.path
            dependencies.append(DependencyUse(dependency, sub))
            arguments.append(Argument(parameter.name, positional, "depends", str(len(dependencies) - 1), None, MISSING))
            continue
        # A deepObject arrives as typed JSON, as a body does (UUIDs and dates as text).
        info = schemas.describe(base, body=deep_object)
        key = parameter.name
        if marker is not None and marker.alias:
            key = marker.alias
        elif source == "header" and getattr(marker, "convert_underscores", True):
            key = parameter.name.replace("_", "-")
        param_schema = {**_with_constraints(info.schema, marker), **_extra_constraints(extras, info.schema)}
        # Without a default it is required, `Optional` or not, as in FastAPI with pydantic 2
        # (`q: Optional[int]` is a 422 `missing` when not sent; it reached the handler as None:
        # found by a differential run). `Optional[int] = None` is the optional one.
        required = default is MISSING
        entry: dict[str, Any] = {"name": key, "schema": param_schema}
        if isinstance(marker, QueryParam):
            entry.update(marker.styles)
        if not required:
            entry["required"] = False
            if _json_default(default) and default is not None:
                entry["schema"] = {**param_schema, "default": default}
        spec.setdefault({"query": "query", "header": "headers", "cookie": "cookies"}[source], []).append(entry)
        fallback = None if default is MISSING else default
        # The core matches header names in lower case and hands them over so: `Header(alias=
        # "X-Token")` read "X-Token" and found nothing, so the handler got None for a header
        # that was sent and checked (found by a differential run against FastAPI).
        read_as = key.lower() if source == "header" else key
        arguments.append(Argument(parameter.name, positional, source, read_as, schemas.digits_checked(info.convert, [marker, *extras]), fallback))

    embedded = len(bodies) > 1 or any(part.embed for part in bodies)
    if bodies:
        spec["body"] = _json_body(bodies, embedded, _name(func))
        if embedded:
            for part in bodies:
                arguments[part.argument] = arguments[part.argument]._replace(key=part.key)
    if form_fields:
        if "body" in spec:
            raise TypeError(f"{_name(func)}: a JSON body and form fields cannot be mixed")
        form_schema: dict[str, Any] = {"type": "object", "properties": form_fields}
        if form_required:
            form_schema["required"] = form_required
        if form_defs:
            form_schema["$defs"] = form_defs
        if form_closed:
            form_schema["additionalProperties"] = False
        spec["body"] = {"kind": "multipart" if has_file else "form", "schema": form_schema, "required": bool(form_required) or form_model_needed}
        # The core refuses a file over its one limit before the body is kept, so it gets one
        # only when every file field has its own (the largest); each field's own is checked
        # as its argument is made. A limit on one field limited every other, and the largest
        # replaced a smaller one (found by a probe).
        limits = list(file_limits.values())
        if limits and all(limit is not None for limit in limits):
            spec["body"]["max_file_size"] = max(typing.cast(list[int], limits))
    # A dependency's own inputs are the route's too: validated in Rust with the handler's.
    for use in dependencies:
        merge_spec(spec, use.analysis.spec, _name(func))
    # A template parameter the handler does not take is still parsed and validated by the core.
    if response_param is not None:
        # The wrapper that supplies the response passes every other argument by keyword.
        arguments = [a._replace(positional=False) for a in arguments]
    return Analysis(path, spec, arguments, response_param, dependencies, embedded)


class _BodyPart(NamedTuple):
    key: str
    schema: dict[str, Any]
    required: bool
    default: Any
    embed: bool
    argument: int  # its index in the arguments


def _json_body(parts: list[_BodyPart], embedded: bool, where: str) -> dict[str, Any]:
    """The route's JSON body: the one body parameter's schema, or an object with a member per
    parameter (each model's ``$defs`` gathered at the root, where their ``$ref``s point)."""
    if not embedded:
        (part,) = parts
        return {"kind": "json", "schema": part.schema, "required": part.required}
    properties: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for part in parts:
        if part.key in properties:
            raise TypeError(f"{where}: two body parameters are both the body's {part.key!r}")
        schema = dict(part.schema)
        for name, definition in schema.pop("$defs", {}).items():
            if definitions.setdefault(name, definition) != definition:
                raise TypeError(f"{where}: two different models named {name!r} in the body")
        if not part.required and part.default is not MISSING and part.default is not None and _json_default(part.default):
            schema["default"] = part.default
        properties[part.key] = schema
    schema = {"type": "object", "properties": properties}
    required = [part.key for part in parts if part.required]
    if required:
        schema["required"] = required
    if definitions:
        schema["$defs"] = definitions
    return {"kind": "json", "schema": schema, "required": bool(required)}


def body_title(handler: Callable[..., Any], path: str, method: str) -> str:
    """An embedded body's schema name in the OpenAPI document, FastAPI's: ``Body_`` and the
    operation's generated id (``update_items__item_id__put``)."""
    untyped = re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*):[a-z]+\}", r"{\1}", path)
    return "Body_" + re.sub(r"\W", "_", f"{getattr(handler, '__name__', 'handler')}{untyped}") + f"_{method.lower()}"


def analyse_dependency(
    marker: Dependency,
    path: str,
    *,
    request_type: type,
    response_type: Optional[type] = None,
    socket_type: Optional[type] = None,
    security_scopes: tuple[str, ...] = (),
) -> Analysis:
    """The analysis of what ``marker`` (``Depends``/``Security``, a parameter's or one of a
    route's ``dependencies=``) calls, below the ``security_scopes`` asked for above it: its
    scopes join them, and a security scheme (``ferrule.security``) puts itself and what the
    route needs of it into the spec, for the document."""
    scopes = security_scopes + tuple(marker.scopes if isinstance(marker, SecurityDependency) else ())
    sub = analyse(marker.dependency, path, request_type=request_type, response_type=response_type, socket_type=socket_type, as_dependency=True, security_scopes=scopes)
    if isinstance(marker.dependency, SecurityScheme):
        scheme = marker.dependency
        sub.spec["security"] = [{scheme.scheme_name: list(dict.fromkeys(scopes))}]
        sub.spec["security_schemes"] = {scheme.scheme_name: scheme.scheme}
    return sub._replace(scopes=scopes)


def merge_spec(spec: dict, other: dict, where: str) -> None:
    """Adds ``other``'s declared inputs (a dependency's) to ``spec``: a parameter both declare
    alike is one parameter, as in FastAPI; declared differently, or two bodies, is refused."""
    for key in ("path_params", "query", "headers", "cookies"):
        for entry in other.get(key, []):
            existing = next((e for e in spec.get(key, []) if e["name"] == entry["name"]), None)
            if existing is None:
                spec.setdefault(key, []).append(entry)
            elif existing != entry:
                raise TypeError(f"{where}: {key} parameter {entry['name']!r} is declared twice, differently ({existing} and {entry})")
    # One requirement per scheme, with every scope any use of it asks for (FastAPI's: two
    # entries would read "either one suffices"); a scheme name is one scheme.
    for requirement in other.get("security", []):
        for name, scopes in requirement.items():
            entries = spec.setdefault("security", [])
            entry = next((e for e in entries if list(e) == [name]), None)
            if entry is None:
                entries.append({name: list(scopes)})
            else:
                entry[name] = list(dict.fromkeys([*entry[name], *scopes]))
    for name, scheme in other.get("security_schemes", {}).items():
        known = spec.setdefault("security_schemes", {}).setdefault(name, scheme)
        if known != scheme:
            raise TypeError(f"{where}: security scheme {name!r} is two different schemes ({known} and {scheme}); give one a scheme_name")
    for source in other.get("refuse_undeclared", []):
        closed = spec.setdefault("refuse_undeclared", [])
        if source not in closed:
            closed.append(source)
    if "body" in other:
        if "body" in spec and spec["body"] != other["body"]:
            raise TypeError(f"{where}: the handler and its dependencies declare more than one body")
        spec["body"] = other["body"]


def _scopes_given(scopes: tuple[str, ...]) -> Callable[[], SecurityScopes]:
    """A ``SecurityScopes`` parameter's dependency: the scopes asked for above it."""

    def security_scopes() -> SecurityScopes:
        return SecurityScopes(list(dict.fromkeys(scopes)))

    security_scopes.gives_scopes = True  # type: ignore[attr-defined]  # see Resolver.uses_scopes
    return security_scopes


def _name(func: Callable[..., Any]) -> str:
    return getattr(func, "__qualname__", repr(func))


def what_runs(func: Callable[..., Any]) -> Callable[..., Any]:
    """The function a callable runs, which its type hints and its kind (``async def``, a
    generator) are read from, as FastAPI reads them: a ``functools.partial``'s function, a class's
    ``__init__`` (a class used as a dependency), a callable object's ``__call__``, else
    ``func``. Its parameters are ``inspect.signature(func)``'s: a partial's bound ones are not
    filled from the request."""
    while isinstance(func, functools.partial):
        func = func.func
    if isinstance(func, type):
        return func.__init__
    if inspect.isroutine(func):
        return func
    return getattr(func, "__call__", func)


def is_async(func: Callable[..., Any]) -> bool:
    """Whether calling ``func`` returns a coroutine: an ``async def``, a partial of one, or an
    object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(what_runs(func))


def _inner_of_optional(tp: Any) -> Any:
    """``Optional[X]`` (``X | None``) → ``X``; any other type as it is."""
    if schemas._is_union(tp):
        rest = [member for member in typing.get_args(tp) if member is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return tp


def _upload_of_optional(tp: Any) -> Any:
    """``Optional[UploadFile]`` (``UploadFile | None``, or the same of a list) → the upload type:
    its ``None`` is what the argument gets when no file came (FastAPI's optional file)."""
    inner = _inner_of_optional(tp)
    return inner if inner is not tp and _is_upload(inner) else tp


class _Unsent:
    """A model field's parameter that was not sent: left out, so the model's own default
    (a `default_factory` included) fills it."""

    def __repr__(self) -> str:
        return "<not sent>"


_UNSENT = _Unsent()


def _parameters_model(model: type, source: str) -> Callable[..., Any]:
    """A function whose parameters are ``model``'s fields, each read from ``source`` (under its
    alias; a header's underscores as hyphens), returning the model made from those sent."""
    from .params import Cookie, Header, Query

    marker_of = {"query": Query, "header": Header, "cookie": Cookie}[source]
    parameters = []
    annotations: dict[str, Any] = {}
    # The model is validated by its aliases, as FastAPI hands it what was sent.
    keys = {name: field.alias or name for name, field in model.model_fields.items()}  # type: ignore[attr-defined]
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        marker = marker_of(alias=field.alias) if field.alias else marker_of()
        annotation = typing.Annotated[(field.annotation, *field.metadata, marker)] if field.metadata else typing.Annotated[field.annotation, marker]
        default = inspect.Parameter.empty if field.is_required() else _UNSENT
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
        annotations[name] = annotation

    def made(**values: Any) -> Any:
        return model.model_validate({keys[name]: value for name, value in values.items() if value is not _UNSENT})  # type: ignore[attr-defined]

    made.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    made.__annotations__ = annotations
    made.__name__ = made.__qualname__ = f"{model.__name__}_from_{source}"
    return made


def _within(limit: int, key: str, convert: Optional[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    """The file (or each file of a list) of field ``key`` refused past ``limit`` bytes, with
    the core's own 413, then converted as ``convert`` says."""
    from .responses import HTTPException

    def checked(value: Any) -> Any:
        for file in value if isinstance(value, list) else [value]:
            if file is not None and file.size > limit:
                raise HTTPException(413, f"File `{key}` exceeds the limit of {limit} bytes.")
        return value if convert is None else convert(value)

    return checked


def _file_bytes(file: Any) -> bytes:
    return bytes(file.read())


def _files_bytes(files: Any) -> list[bytes]:
    return [bytes(file.read()) for file in files]


def _is_upload(tp: Any) -> bool:
    from .request import UploadFile

    if _is_list(tp):
        args = typing.get_args(tp)
        return bool(args) and args[0] is UploadFile
    return tp is UploadFile


def _is_list(tp: Any) -> bool:
    return typing.get_origin(tp) in (list, typing.List)


def _described_as_text(base: Any) -> Optional[dict]:
    """The schema of a type described as a string (``time``, or a type pydantic describes so:
    ``IPv4Address``, ``timedelta``), else None."""
    try:
        schema = schemas.describe(base).schema
    except TypeError:
        return None
    return schema if schema.get("type") == "string" else None


def _enum_path_type(base: Any) -> Optional[str]:
    """An Enum whose values are all strings (or all integers) is a path parameter of that type,
    limited to its values; the handler gets the member."""
    if not (isinstance(base, type) and issubclass(base, enum.Enum)):
        return None
    values = [member.value for member in base]
    if values and all(isinstance(v, str) for v in values):
        return "str"
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int"
    return None


def _typed_template(path: str, name: str, declared: Optional[str], base: Any, where: str) -> str:
    wanted = _path_types().get(base) or _enum_path_type(base)
    if base is Any:
        return path
    if wanted is None and _described_as_text(base) is not None:
        # `time`, `timedelta`, `IPv4Address`, `Path`: a segment of text, as FastAPI takes them
        # (each was a TypeError here: found by a probe).
        wanted = "str"
    if wanted is None:
        raise TypeError(f"{where}: {base!r} cannot be a path parameter (use int, float, bool, str, UUID, date, datetime, an Enum of str or int values, or a type described as text such as time or IPv4Address)")
    if declared is None:
        return path.replace("{%s}" % name, "{%s:%s}" % (name, wanted)) if wanted != "str" else path
    if declared == "path" and base is str:
        return path
    if declared != wanted:
        raise TypeError(f"{where}: annotated {base.__name__} but the template says {{{name}:{declared}}}")
    return path


def _extra_constraints(extras: list, schema: dict) -> dict:
    """A parameter's constraints written pydantic's way or annotated_types' (``Field(le=100)``,
    ``conint(le=100)``, ``PositiveInt``, ``Le(100)``) rather than in its ``Query(...)``: found
    by a probe, they were dropped, and ``?limit=1000000`` reached the handler."""
    return schemas.constraint_keywords([extra for extra in extras if not isinstance(extra, Param)], schema)


def _constraints(marker: Optional[Param], base_schema: dict) -> dict:
    if marker is None:
        return {}
    out = {**marker.constraints, **marker.annotations}
    _lengths(out, marker, base_schema)
    return out


def _with_constraints(schema: dict, marker: Optional[Param], *, describe: bool = True) -> dict:
    if marker is None:
        return schema
    out = {**schema, **marker.constraints}
    _lengths(out, marker, schema)
    if describe and marker.description:
        out["description"] = marker.description  # the parameter's description in the OpenAPI document
    if describe:
        out.update(marker.annotations)
    return out


def _lengths(out: dict, marker: Param, schema: dict) -> None:
    array = schema.get("type") == "array"
    if marker.min_length is not None:
        out["minItems" if array else "minLength"] = marker.min_length
    if marker.max_length is not None:
        out["maxItems" if array else "maxLength"] = marker.max_length


def _json_default(value: Any) -> bool:
    if isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_json_default(v) for v in value)
    return False


def refused_conversion(exc: BaseException, source: str, key: str, value: Any) -> BaseException:
    """What a converter's failure is to the client (called from Rust as an argument is
    converted): a model's own validation — pydantic's ``ValidationError``, a validator's
    ``ValueError`` among its errors, or msgspec's, or a body class's own ``ValueError``
    (``RefusedByModel``) — is a ``RequestValidationError`` (422)
    located where the value came from, as FastAPI answers, and for a part of a container (a
    list's item, a dataclass's field: ``Refusals``) where the part stood in it; anything else
    is returned as it is, the app's failure (a 500)."""
    from .hooks import RequestValidationError

    where: list[Any] = [source, key] if key else [source]
    if isinstance(exc, schemas.Refusals):
        errors = []
        for path, refused, raw in exc.found:
            found = _validation_errors(refused, [*where, *path], raw)
            if found is None:
                return refused
            errors.extend(found)
        return RequestValidationError(errors)
    found = _validation_errors(exc, where, value)
    return exc if found is None else RequestValidationError(found)


def refusals_joined(earlier: BaseException, later: BaseException) -> BaseException:
    """Two arguments' failures as one (called from Rust): two 422s are one with both's errors,
    in the arguments' order; otherwise the one that is the app's failure (a 500)."""
    from .hooks import RequestValidationError

    if not isinstance(earlier, RequestValidationError):
        return earlier
    if not isinstance(later, RequestValidationError):
        return later
    return RequestValidationError([*earlier.errors(), *later.errors()])


def _validation_errors(exc: BaseException, where: list, value: Any) -> Optional[list]:
    """``exc`` as the errors of a 422 at ``where``, or None when it refuses nothing."""
    import sys

    pydantic_core = sys.modules.get("pydantic_core")
    if isinstance(exc, schemas.RefusedByModel):
        refused = exc.refused
        if pydantic_core is not None and isinstance(refused, pydantic_core.ValidationError):
            return _validation_errors(refused, where, value)
        assertion = isinstance(refused, AssertionError)
        kind, prefix = ("assertion_error", "Assertion failed") if assertion else ("value_error", "Value error")
        return [{"type": kind, "loc": where, "msg": f"{prefix}, {refused}", "input": value, "ctx": {"error": str(refused)}}]
    if isinstance(exc, schemas.RefusedValue):
        return [{"type": exc.kind, "loc": where, "msg": exc.msg, "input": value, "ctx": exc.ctx}]
    if pydantic_core is not None and isinstance(exc, pydantic_core.ValidationError):
        errors = []
        for error in exc.errors(include_url=False):
            item: dict[str, Any] = {"type": error["type"], "loc": [*where, *error["loc"]], "msg": error["msg"], "input": error.get("input")}
            if error.get("ctx"):
                # A validator's exception stands in `ctx` as itself: its message is what is sent.
                item["ctx"] = {name: str(v) if isinstance(v, BaseException) else v for name, v in error["ctx"].items()}
            errors.append(item)
        return errors
    msgspec = sys.modules.get("msgspec")
    if msgspec is not None and isinstance(exc, msgspec.ValidationError):
        return [{"type": "value_error", "loc": where, "msg": str(exc), "input": value}]
    return None
