"""What a handler may return or raise besides plain data."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["Response", "HTTPException"]

Headers = Union[Mapping[str, str], Sequence[Tuple[str, str]]]


class Response:
    """A response with an explicit status and headers.

    ``body`` may be ``bytes`` (sent as is), ``str`` (``text/plain``), or any JSON-serialisable
    value (serialised by Rust, ``application/json``). ``media_type`` sets ``Content-Type``.
    """

    __slots__ = ("status", "headers", "body", "media_type")

    def __init__(
        self,
        status: int = 200,
        headers: Optional[Headers] = None,
        body: Any = None,
        *,
        media_type: Optional[str] = None,
    ) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.media_type = media_type

    def __repr__(self) -> str:
        return f"Response(status={self.status!r}, headers={self.headers!r}, body={self.body!r})"


class HTTPException(Exception):
    """Raise to answer with an RFC 9457 problem response: ``raise HTTPException(404, "No such user")``."""

    def __init__(self, status: int, detail: Optional[str] = None, headers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(status, detail)
        self.status = status
        self.detail = detail
        self.headers = dict(headers) if headers is not None else None

    def __str__(self) -> str:
        return f"{self.status}: {self.detail}" if self.detail else str(self.status)
