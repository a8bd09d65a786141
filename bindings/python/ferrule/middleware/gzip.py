"""Starlette's ``GZipMiddleware``, done by the core (``App(compression=...)``): a response of at
least ``minimum_size`` bytes is gzipped at ``compresslevel`` for a client that accepts gzip.
Only gzip, as Starlette's; ``App(compression={...})`` adds brotli and zstd. Streams and event
streams are sent as they are made, never held back to be compressed."""

from __future__ import annotations

from typing import Any

from . import CoreMiddleware


class GZipMiddleware(CoreMiddleware):
    setting = "compression"

    def __init__(self, app: Any = None, minimum_size: int = 500, compresslevel: int = 9) -> None:
        if not 1 <= compresslevel <= 9:
            raise ValueError(f"GZipMiddleware: compresslevel is 1 to 9, not {compresslevel!r}")
        self.value = {"enabled": True, "min_size": minimum_size, "gzip": True, "br": False, "zstd": False, "level": compresslevel}


__all__ = ["GZipMiddleware"]
