"""Parameter markers: where a handler argument comes from, and its constraints.

Used as a default value (``q: int = Query(10, ge=1)``) or inside ``Annotated``
(``q: Annotated[int, Query(ge=1)] = 10``), as in FastAPI. Without a marker, an argument named in
the path template is a path parameter, one annotated with a structured type (dataclass,
TypedDict, msgspec Struct, pydantic model, dict, list) is the JSON body, ``Request`` gets the
request itself, and anything else is a query parameter.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

__all__ = ["Param", "Path", "Query", "Header", "Cookie", "Body", "Form", "File", "Field", "MISSING"]


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
    ) -> None:
        self.default = default
        self.alias = alias
        self.description = description
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
        if enum is not None:
            self.constraints["enum"] = list(enum)

    def __repr__(self) -> str:
        default = "" if self.default is MISSING else repr(self.default)
        return f"{type(self).__name__}({default})"


class Path(Param):
    """A path parameter: ``{name}`` or ``{name:type}`` in the route's template."""

    source = "path"


class Query(Param):
    source = "query"


class Header(Param):
    """A request header. ``user_agent`` reads ``User-Agent``: underscores become hyphens unless
    ``convert_underscores=False`` (FastAPI's rule)."""

    source = "header"

    def __init__(self, default: Any = MISSING, *, convert_underscores: bool = True, **kwargs: Any) -> None:
        super().__init__(default, **kwargs)
        self.convert_underscores = convert_underscores


class Cookie(Param):
    source = "cookie"


class Body(Param):
    """The JSON request body (``media_type`` may name another ``+json`` type)."""

    source = "body"


class Form(Param):
    """One field of a url-encoded (or, next to a ``File``, multipart) form body."""

    source = "form"


class File(Form):
    """One uploaded file of a multipart body; the argument receives an ``UploadFile``."""

    source = "file"

    def __init__(self, default: Any = MISSING, *, max_size: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(default, **kwargs)
        self.max_size = max_size


class Field(Param):
    """Constraints on a field of a body type: ``id: Annotated[int, Field(ge=1)]`` in a
    TypedDict or dataclass. (``annotated_types`` constraints such as ``Ge(1)`` work too.)"""

    source = "body"
