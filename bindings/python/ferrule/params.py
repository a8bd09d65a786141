"""Parameter markers: where a handler argument comes from, and its constraints.

Used as a default value (``q: int = Query(10, ge=1)``) or inside ``Annotated``
(``q: Annotated[int, Query(ge=1)] = 10``), as in FastAPI. Like FastAPI's, the markers are
functions typed as returning ``Any``, so ``page: int = Query(1)`` type-checks. Without a marker, an argument named in
the path template is a path parameter, one annotated with a structured type (dataclass,
TypedDict, msgspec Struct, pydantic model, dict, list) is the JSON body, ``Request`` gets the
request itself, and anything else is a query parameter.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

__all__ = ["Param", "Path", "Query", "Header", "Cookie", "Body", "Form", "File", "Field", "Depends", "Dependency", "MISSING"]




class _Missing:
    """The absence of a default (``None`` is a valid default)."""

    _instance: Optional["_Missing"] = None

    def __new__(cls) -> "_Missing":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


class Param:
    """A declared input. Constraints become JSON Schema keywords, checked in Rust."""

    source = "query"

    def __init__(
        self,
        default: Any = MISSING,
        *,
        alias: Optional[str] = None,
        gt: Optional[float] = None,
        ge: Optional[float] = None,
        lt: Optional[float] = None,
        le: Optional[float] = None,
        multiple_of: Optional[float] = None,
        min_length: Optional[int] = None,
        max_length: Optional[int] = None,
        pattern: Optional[str] = None,
        enum: Optional[Sequence[Any]] = None,
        description: Optional[str] = None,
        title: Optional[str] = None,
        examples: Optional[Sequence[Any]] = None,
        deprecated: Optional[bool] = None,
        regex: Optional[str] = None,
        json_schema_extra: Optional[dict[str, Any]] = None,
        discriminator: Optional[str] = None,
        max_digits: Optional[int] = None,
        decimal_places: Optional[int] = None,
    ) -> None:
        # `Query(...)`: FastAPI's older spelling of "required".
        self.default = MISSING if default is Ellipsis else default
        # A union's tag (`Body(discriminator="kind")`, `Field(...)`), as pydantic's Field has it.
        self.discriminator = discriminator
        self.alias = alias
        self.description = description
        # What the OpenAPI document shows beside the description (JSON Schema annotations,
        # which validation ignores), as FastAPI's markers take them.
        self.annotations: dict[str, Any] = {**(json_schema_extra or {})}
        for keyword, value in (("title", title), ("examples", None if examples is None else list(examples)), ("deprecated", deprecated)):
            if value is not None:
                self.annotations[keyword] = value
        pattern = regex if pattern is None else pattern  # `regex=`: FastAPI's older name
        self.constraints: dict[str, Any] = {}
        for keyword, value in (
            ("exclusiveMinimum", gt),
            ("minimum", ge),
            ("exclusiveMaximum", lt),
            ("maximum", le),
            ("multipleOf", multiple_of),
            ("pattern", pattern),
        ):
            if value is not None:
                self.constraints[keyword] = value
        # Lengths apply to strings and to arrays (repeated query keys) alike.
        self.min_length = min_length
        self.max_length = max_length
        # A `Decimal`'s digits, which no JSON Schema keyword says: checked as it is converted.
        self.max_digits = max_digits
        self.decimal_places = decimal_places
        if enum is not None:
            self.constraints["enum"] = list(enum)

    def __repr__(self) -> str:
        default = "" if self.default is MISSING else repr(self.default)
        return f"{type(self).__name__}({default})"


class PathParam(Param):
    """A path parameter: ``{name}`` or ``{name:type}`` in the route's template."""

    source = "path"


class QueryParam(Param):
    """A query parameter. An array's ``style`` is OpenAPI's: ``"form"`` (``tag=a&tag=b``, the
    default; with ``explode=False``, ``tag=a,b``), ``"pipeDelimited"`` (``tag=a|b``) or
    ``"spaceDelimited"`` (``tag=a%20b``); ``tag[]=a&tag[]=b`` is read in every style. An object
    (a TypedDict, a dataclass, …) is ``"deepObject"``: ``filter[price][gte]=10``."""

    source = "query"

    def __init__(self, default: Any = MISSING, *, style: Optional[str] = None, explode: Optional[bool] = None, **kwargs: Any) -> None:
        super().__init__(default, **kwargs)
        self.styles: dict[str, Any] = {}
        if style is not None:
            self.styles["style"] = style
        if explode is not None:
            self.styles["explode"] = explode


class HeaderParam(Param):
    """A request header. ``user_agent`` reads ``User-Agent``: underscores become hyphens unless
    ``convert_underscores=False`` (FastAPI's rule)."""

    source = "header"

    def __init__(self, default: Any = MISSING, *, convert_underscores: bool = True, **kwargs: Any) -> None:
        super().__init__(default, **kwargs)
        self.convert_underscores = convert_underscores


class CookieParam(Param):
    source = "cookie"


class BodyParam(Param):
    """The JSON request body, or with ``embed=True`` (or beside another body parameter) its
    member named after the parameter (or its ``alias``), as in FastAPI."""

    source = "body"

    def __init__(self, default: Any = MISSING, *, embed: bool = False, **kwargs: Any) -> None:
        super().__init__(default, **kwargs)
        self.embed = embed


class FormParam(Param):
    """One field of a url-encoded (or, next to a ``File``, multipart) form body."""

    source = "form"


class FileParam(FormParam):
    """One uploaded file of a multipart body; the argument receives an ``UploadFile``."""

    source = "file"

    def __init__(
        self, default: Any = MISSING, *, max_size: Optional[int] = None, media_types: Optional[Sequence[str]] = None,
        sniff: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(default, **kwargs)
        self.max_size = max_size
        self.media_types = list(media_types) if media_types is not None else None
        self.sniff = sniff


class FieldParam(Param):
    """Constraints on a field of a body type: ``id: Annotated[int, Field(ge=1)]`` in a
    TypedDict or dataclass. (``annotated_types`` constraints such as ``Ge(1)`` work too.)"""

    source = "body"


class Dependency:
    """What ``Depends(dependency)`` marks: a callable whose result the handler gets."""

    def __init__(self, dependency: Any = None, *, use_cache: bool = True) -> None:
        if dependency is not None and not callable(dependency):
            raise TypeError(f"Depends takes a callable, not {dependency!r}")
        self.dependency = dependency
        self.use_cache = use_cache

    def __repr__(self) -> str:
        return f"Depends({getattr(self.dependency, '__qualname__', self.dependency)!r})"


def Depends(dependency: Any = None, *, use_cache: bool = True) -> Any:
    """FastAPI's ``Depends``: the argument is what ``dependency`` returns (or yields) for this
    request (``commons: Commons = Depends()``: the annotated class is the dependency). Its own parameters are read from the request as a handler's are — they join the
    route's declared inputs and are validated in Rust before any Python runs — and may be
    dependencies too. Called once per request (``use_cache=False``: once per use); a generator
    dependency's code after ``yield`` runs once the response is sent (and sees the handler's
    exception, if any). ``def`` or ``async def``."""
    return Dependency(dependency, use_cache=use_cache)


def Path(
    default: Any = MISSING, *, gt: Optional[float] = None, ge: Optional[float] = None, lt: Optional[float] = None,
    le: Optional[float] = None, multiple_of: Optional[float] = None, min_length: Optional[int] = None,
    max_length: Optional[int] = None, pattern: Optional[str] = None, enum: Optional[Sequence[Any]] = None,
    description: Optional[str] = None,
    title: Optional[str] = None, examples: Optional[Sequence[Any]] = None, deprecated: Optional[bool] = None,
    json_schema_extra: Optional[dict[str, Any]] = None, regex: Optional[str] = None,
    max_digits: Optional[int] = None, decimal_places: Optional[int] = None,
) -> Any:
    """A path parameter's constraints (its type comes from the template or the annotation)."""
    return PathParam(default, gt=gt, ge=ge, lt=lt, le=le, multiple_of=multiple_of, min_length=min_length,
                     max_length=max_length, pattern=pattern, enum=enum, description=description,
                     title=title, examples=examples, deprecated=deprecated, json_schema_extra=json_schema_extra, regex=regex,
                     max_digits=max_digits, decimal_places=decimal_places)


def Query(
    default: Any = MISSING, *, alias: Optional[str] = None, gt: Optional[float] = None, ge: Optional[float] = None,
    lt: Optional[float] = None, le: Optional[float] = None, multiple_of: Optional[float] = None,
    min_length: Optional[int] = None, max_length: Optional[int] = None, pattern: Optional[str] = None,
    enum: Optional[Sequence[Any]] = None, description: Optional[str] = None, style: Optional[str] = None,
    explode: Optional[bool] = None,
    title: Optional[str] = None, examples: Optional[Sequence[Any]] = None, deprecated: Optional[bool] = None,
    json_schema_extra: Optional[dict[str, Any]] = None, regex: Optional[str] = None,
    max_digits: Optional[int] = None, decimal_places: Optional[int] = None,
) -> Any:
    """A query parameter (the default source of a scalar argument); ``style``/``explode`` say how
    an array is written, and ``style="deepObject"`` takes an object (see ``QueryParam``)."""
    return QueryParam(default, alias=alias, gt=gt, ge=ge, lt=lt, le=le, multiple_of=multiple_of, min_length=min_length,
                      max_length=max_length, pattern=pattern, enum=enum, description=description, style=style, explode=explode,
                      title=title, examples=examples, deprecated=deprecated, json_schema_extra=json_schema_extra, regex=regex,
                      max_digits=max_digits, decimal_places=decimal_places)


def Header(
    default: Any = MISSING, *, alias: Optional[str] = None, convert_underscores: bool = True, gt: Optional[float] = None,
    ge: Optional[float] = None, lt: Optional[float] = None, le: Optional[float] = None, multiple_of: Optional[float] = None,
    min_length: Optional[int] = None,
    max_length: Optional[int] = None, pattern: Optional[str] = None, enum: Optional[Sequence[Any]] = None,
    description: Optional[str] = None,
    title: Optional[str] = None, examples: Optional[Sequence[Any]] = None, deprecated: Optional[bool] = None,
    json_schema_extra: Optional[dict[str, Any]] = None, regex: Optional[str] = None,
    max_digits: Optional[int] = None, decimal_places: Optional[int] = None,
) -> Any:
    """A request header; ``user_agent`` reads ``User-Agent`` unless ``convert_underscores=False``."""
    return HeaderParam(default, alias=alias, convert_underscores=convert_underscores, gt=gt, ge=ge, lt=lt, le=le,
                       multiple_of=multiple_of, min_length=min_length, max_length=max_length, pattern=pattern, enum=enum, description=description,
                       title=title, examples=examples, deprecated=deprecated, json_schema_extra=json_schema_extra, regex=regex,
                       max_digits=max_digits, decimal_places=decimal_places)


def Cookie(
    default: Any = MISSING, *, alias: Optional[str] = None, gt: Optional[float] = None, ge: Optional[float] = None,
    lt: Optional[float] = None, le: Optional[float] = None, multiple_of: Optional[float] = None,
    min_length: Optional[int] = None,
    max_length: Optional[int] = None, pattern: Optional[str] = None, enum: Optional[Sequence[Any]] = None,
    description: Optional[str] = None,
    title: Optional[str] = None, examples: Optional[Sequence[Any]] = None, deprecated: Optional[bool] = None,
    json_schema_extra: Optional[dict[str, Any]] = None, regex: Optional[str] = None,
    max_digits: Optional[int] = None, decimal_places: Optional[int] = None,
) -> Any:
    """A cookie."""
    return CookieParam(default, alias=alias, gt=gt, ge=ge, lt=lt, le=le, multiple_of=multiple_of, min_length=min_length,
                       max_length=max_length, pattern=pattern, enum=enum, description=description,
                       title=title, examples=examples, deprecated=deprecated, json_schema_extra=json_schema_extra, regex=regex,
                       max_digits=max_digits, decimal_places=decimal_places)


def Body(
    default: Any = MISSING, *, embed: bool = False, alias: Optional[str] = None, gt: Optional[float] = None,
    ge: Optional[float] = None, lt: Optional[float] = None, le: Optional[float] = None,
    multiple_of: Optional[float] = None, min_length: Optional[int] = None, max_length: Optional[int] = None,
    pattern: Optional[str] = None, enum: Optional[Sequence[Any]] = None, description: Optional[str] = None,
    title: Optional[str] = None, examples: Optional[Sequence[Any]] = None, deprecated: Optional[bool] = None,
    json_schema_extra: Optional[dict[str, Any]] = None, regex: Optional[str] = None,
    discriminator: Optional[str] = None,
    max_digits: Optional[int] = None, decimal_places: Optional[int] = None,
) -> Any:
    """The JSON request body. Two body parameters or more, or one with ``embed=True``, are each
    the body's member of their name (``{"item": {...}, "user": {...}}``), as in FastAPI. A union
    with ``discriminator`` is chosen by that member's value, as pydantic chooses it."""
    return BodyParam(default, embed=embed, alias=alias, gt=gt, ge=ge, lt=lt, le=le, multiple_of=multiple_of,
                     min_length=min_length, max_length=max_length, pattern=pattern, enum=enum, description=description,
                     title=title, examples=examples, deprecated=deprecated, json_schema_extra=json_schema_extra, regex=regex,
                     discriminator=discriminator,
                     max_digits=max_digits, decimal_places=decimal_places)


def Form(
    default: Any = MISSING, *, alias: Optional[str] = None, gt: Optional[float] = None, ge: Optional[float] = None,
    lt: Optional[float] = None, le: Optional[float] = None, multiple_of: Optional[float] = None,
    min_length: Optional[int] = None,
    max_length: Optional[int] = None, pattern: Optional[str] = None, enum: Optional[Sequence[Any]] = None,
    description: Optional[str] = None,
    title: Optional[str] = None, examples: Optional[Sequence[Any]] = None, deprecated: Optional[bool] = None,
    json_schema_extra: Optional[dict[str, Any]] = None, regex: Optional[str] = None,
    max_digits: Optional[int] = None, decimal_places: Optional[int] = None,
) -> Any:
    """One field of a url-encoded (or, next to a File, multipart) form body."""
    return FormParam(default, alias=alias, gt=gt, ge=ge, lt=lt, le=le, multiple_of=multiple_of, min_length=min_length,
                     max_length=max_length, pattern=pattern, enum=enum, description=description,
                     title=title, examples=examples, deprecated=deprecated, json_schema_extra=json_schema_extra, regex=regex,
                     max_digits=max_digits, decimal_places=decimal_places)


def File(
    default: Any = MISSING, *, alias: Optional[str] = None, max_size: Optional[int] = None,
    media_types: Optional[Sequence[str]] = None, min_length: Optional[int] = None, max_length: Optional[int] = None,
    description: Optional[str] = None, sniff: bool = False,
    title: Optional[str] = None, examples: Optional[Sequence[Any]] = None, deprecated: Optional[bool] = None,
    json_schema_extra: Optional[dict[str, Any]] = None,
) -> Any:
    """One uploaded file of a multipart body; the argument receives an ``UploadFile``.
    ``media_types`` lists the content types accepted (``"image/*"`` wildcards too); another is a
    422 ``file_content_type``. ``sniff=True`` also reads the file's first bytes for its real
    type: a known type other than the one it claims is a 422 ``file_content_mismatch``. For a
    ``list[UploadFile]``, ``max_length`` bounds how many."""
    return FileParam(default, alias=alias, max_size=max_size, media_types=media_types, min_length=min_length,
                     max_length=max_length, description=description, sniff=sniff,
                     title=title, examples=examples, deprecated=deprecated, json_schema_extra=json_schema_extra)


def Field(
    *, gt: Optional[float] = None, ge: Optional[float] = None, lt: Optional[float] = None, le: Optional[float] = None,
    multiple_of: Optional[float] = None, min_length: Optional[int] = None, max_length: Optional[int] = None,
    pattern: Optional[str] = None, enum: Optional[Sequence[Any]] = None, description: Optional[str] = None,
    discriminator: Optional[str] = None,
    max_digits: Optional[int] = None, decimal_places: Optional[int] = None,
) -> Any:
    """Constraints on a field of a body type: ``id: Annotated[int, Field(ge=1)]``; a union's
    tag: ``pet: Annotated[Union[Cat, Dog], Field(discriminator="pet_type")]``."""
    return FieldParam(gt=gt, ge=ge, lt=lt, le=le, multiple_of=multiple_of, min_length=min_length,
                      max_length=max_length, pattern=pattern, enum=enum, description=description,
                      discriminator=discriminator,
                      max_digits=max_digits, decimal_places=decimal_places)
