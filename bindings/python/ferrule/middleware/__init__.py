"""Starlette's middleware, as far as an app on Ferrule's core can have it.

``app.add_middleware(CORSMiddleware, allow_origins=[...])`` and ``App(middleware=[Middleware(
GZipMiddleware, minimum_size=1000)])`` are the lines a FastAPI or Starlette app opens with. Their
work is the core's here (CORS, compression and the host allow-list run in Rust, before and after
the handler, and never enter Python), so these classes carry the options over to the core's
settings rather than wrap an ASGI app: ``cors``, ``compression`` and ``allowed_hosts``, as
``App(cors=..., compression=..., allowed_hosts=...)`` sets them.
``SessionMiddleware`` is Python's work (the session is a dict), done by two hooks on the app.
Any other ASGI middleware cannot wrap the core; ``@app.middleware("http")`` is the place for a
request's own code.
"""

from __future__ import annotations

import abc
from typing import Any, Callable, Iterator, Union


class CoreMiddleware:
    """A middleware whose work is one of the core's settings: ``setting`` (``cors``,
    ``compression`` or ``allowed_hosts``) given ``value``, the core's JSON for it, and ``also``
    the settings that go with it (``TrustedHostMiddleware``'s ``www_redirect``)."""

    setting: str
    value: Any
    also: dict[str, Any] = {}


class HookMiddleware(abc.ABC):
    """A middleware that is Python's work, done by hooks on the app (``SessionMiddleware``)."""

    @abc.abstractmethod
    def install(self, app: Any) -> None:
        """Registers its hooks on ``app``."""


class Middleware:
    """Starlette's ``Middleware(cls, *args, **options)``, for ``App(middleware=[...])``."""

    def __init__(self, cls: type, *args: Any, **kwargs: Any) -> None:
        self.cls = cls
        self.args = args
        self.kwargs = kwargs

    def __iter__(self) -> Iterator[Any]:
        return iter((self.cls, self.args, self.kwargs))

    def __repr__(self) -> str:
        options = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"Middleware({', '.join([getattr(self.cls, '__name__', repr(self.cls)), *options])})"


def core_middleware(cls: Any, args: tuple[Any, ...], options: dict[str, Any]) -> Union[CoreMiddleware, HookMiddleware]:
    """``cls(*args, **options)`` when it is one of Ferrule's; a ``TypeError`` saying what to
    write instead otherwise. An option the class does not take is Python's own ``TypeError``,
    naming it."""
    if not (isinstance(cls, type) and issubclass(cls, (CoreMiddleware, HookMiddleware))):
        name = getattr(cls, "__qualname__", repr(cls))
        raise TypeError(
            f"ferrule: add_middleware({name}): only ferrule.middleware.cors.CORSMiddleware, "
            "ferrule.middleware.gzip.GZipMiddleware, ferrule.middleware.trustedhost.TrustedHostMiddleware "
            "(whose work Ferrule's core does) and "
            "ferrule.middleware.sessions.SessionMiddleware; an ASGI middleware cannot wrap the "
            'core: write it as @app.middleware("http")'
        )
    # Starlette hands the wrapped app first; there is none to wrap, and a positional option
    # after it keeps its place.
    make: Callable[..., Union[CoreMiddleware, HookMiddleware]] = cls
    return make(None, *args, **options)


__all__ = ["Middleware"]
