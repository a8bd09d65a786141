"""``BackgroundTasks``: work a handler leaves to run once its response has gone, as FastAPI's.

A handler (or a dependency) that takes a ``BackgroundTasks`` parameter gets one per request;
what it adds with ``add_task`` runs after the response is sent, in order, on the request's
loop (a ``def`` function on Ferrule's thread pool, in the request's context, as Starlette runs it). It rides on the
generator-dependency machinery: the parameter is a dependency whose code after ``yield`` runs
the tasks, so it runs exactly when a generator dependency's teardown does, and not when the
handler raised (as FastAPI skips them then). A task that raises is logged; the rest still run.
"""

from __future__ import annotations

import functools
import inspect
import logging
from typing import Any, AsyncIterator, Callable

from . import _pool

__all__ = ["BackgroundTasks"]

_log = logging.getLogger("ferrule.background")


class BackgroundTasks:
    """The tasks of one request: ``tasks.add_task(send_email, to, subject=...)``."""

    def __init__(self) -> None:
        self.tasks: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []

    def add_task(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.tasks.append((func, args, kwargs))

    async def __call__(self) -> None:
        for func, args, kwargs in self.tasks:
            try:
                if inspect.iscoroutinefunction(func):
                    await func(*args, **kwargs)
                else:
                    await _pool.THREADS.run(functools.partial(func, *args, **kwargs))
            except Exception:  # noqa: BLE001 - one task's failure does not stop the others
                _log.exception("ferrule: background task %s raised", getattr(func, "__qualname__", func))


async def tasks_of_request() -> AsyncIterator[BackgroundTasks]:
    """The dependency a ``BackgroundTasks`` parameter stands for."""
    tasks = BackgroundTasks()
    yield tasks
    await tasks()
