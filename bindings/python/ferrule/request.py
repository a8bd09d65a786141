"""The request as handlers see it (``Request``) and uploaded files (``UploadFile``).

Both are built by Rust from data it already parsed and validated; see ``_ferrule.pyi`` for
their attributes.
"""

from __future__ import annotations

from typing import Any, Generator, NamedTuple

from ._ferrule import Request, UploadFile

__all__ = ["Address", "Request", "UploadFile", "AwaitableBytes"]


class Address(NamedTuple):
    """``request.client``, as Starlette's: the peer's ``host`` (an IP address) and ``port``."""

    host: str
    port: int


class AwaitableBytes(bytes):
    """What ``UploadFile.read()`` returns: the file's bytes, which may also be awaited, as
    Starlette's ``await file.read()`` is (the bytes are already in memory: nothing waits)."""

    def __await__(self) -> Generator[Any, None, bytes]:
        if False:  # pragma: no cover - makes this a generator that returns at once
            yield None
        return bytes(self)
