"""Starlette's ``CORSMiddleware``, done by the core (``App(cors=...)``): same options, same
defaults (``allow_methods=("GET",)``, ``max_age=600``, the CORS-safelisted request headers always
allowed). Preflights are answered in Rust, before any hook or handler."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import CoreMiddleware

# Allowed whatever `allow_headers` lists, as Starlette allows them.
SAFELISTED_HEADERS = ("Accept", "Accept-Language", "Content-Language", "Content-Type")


class CORSMiddleware(CoreMiddleware):
    setting = "cors"

    def __init__(
        self,
        app: Any = None,
        allow_origins: Sequence[str] = (),
        allow_methods: Sequence[str] = ("GET",),
        allow_headers: Sequence[str] = (),
        allow_credentials: bool = False,
        allow_origin_regex: Optional[str] = None,
        allow_private_network: bool = False,
        expose_headers: Sequence[str] = (),
        max_age: int = 600,
    ) -> None:
        for name, value in (("allow_origins", allow_origins), ("allow_methods", allow_methods), ("allow_headers", allow_headers), ("expose_headers", expose_headers)):
            if isinstance(value, str):
                # A lone string would be read letter by letter, as a list of one-letter names.
                raise TypeError(f"CORSMiddleware: {name} is a list of strings, not the string {value!r}")
        headers = list(allow_headers)
        if "*" not in headers:
            headers = sorted(set(SAFELISTED_HEADERS) | set(headers), key=str.lower)
        self.value = {
            "allow_origins": list(allow_origins),
            "allow_methods": list(allow_methods),
            "allow_headers": headers,
            "expose_headers": list(expose_headers),
            "allow_credentials": bool(allow_credentials),
            "allow_private_network": bool(allow_private_network),
            "max_age_secs": max_age,
        }
        if allow_origin_regex is not None:
            self.value["allow_origin_regex"] = allow_origin_regex


__all__ = ["CORSMiddleware"]
