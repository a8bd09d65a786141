"""Starlette's ``TrustedHostMiddleware``, done by the core (``App(allowed_hosts=[...])``): a
request whose ``Host`` names none of ``allowed_hosts`` (``example.com``, ``*.example.com``, ``*``)
is a 400 before any hook or handler; with ``www_redirect``, one for ``example.com`` where
``www.example.com`` is listed is redirected there (307). Names match in any case, without the
port. The answer is a problem document (``application/problem+json``), not Starlette's plain
``Invalid host header``."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import CoreMiddleware


class TrustedHostMiddleware(CoreMiddleware):
    setting = "allowed_hosts"

    def __init__(self, app: Any = None, allowed_hosts: Optional[Sequence[str]] = None, www_redirect: bool = True) -> None:
        hosts = ["*"] if allowed_hosts is None else allowed_hosts
        if isinstance(hosts, str):
            raise TypeError(f"TrustedHostMiddleware: allowed_hosts is a list of host names, not the string {hosts!r}")
        self.value = list(hosts)
        self.also = {"www_redirect": www_redirect}


__all__ = ["TrustedHostMiddleware"]
