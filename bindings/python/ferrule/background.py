"""``BackgroundTasks``: work a handler leaves to run once its response has gone, as FastAPI's.

A handler (or a dependency) that takes a ``BackgroundTasks`` parameter gets one per request;
what it adds with ``add_task`` runs after the response is sent, in order, on the request's
loop (a ``def`` function on Ferrule's thread pool, in the request's context, as Starlette runs it). It rides on the
generator-dependency machinery: the parameter is a dependency whose code after ``yield`` runs
the tasks, so it runs exactly when a generator dependency's teardown does, and not when the
handler raised (as FastAPI skips them then). A task that raises is logged; the rest still run.

A response may carry its own task too, Starlette's ``background=`` (a ``BackgroundTask``, or a
``BackgroundTasks`` made by hand): the binding hands such a response to ``after_response``
before it reads it, which is the only cost the keyword adds to a response without one (an
attribute read, ~20 ns).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from typing import Any, AsyncIterator, Callable, Optional, Sequence

from . import _pool, _tasks
from ._stream_end import EndingAsyncStream, EndingStream
from ._tasks import in_background

__all__ = ["BackgroundTask", "BackgroundTasks"]

_log = logging.getLogger("ferrule.background")


class BackgroundTask:
    """One function to run once the response has gone, Starlette's: ``Response(...,
    background=BackgroundTask(remove, path))``. ``async def`` functions run on the loop, ``def``
    ones on the thread pool."""

    def __init__(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.func = func
        self.args = args
        self.kwargs = kwargs

    async def __call__(self) -> None:
        if inspect.iscoroutinefunction(self.func):
            await self.func(*self.args, **self.kwargs)
        else:
            await _pool.THREADS.run(functools.partial(self.func, *self.args, **self.kwargs))


class BackgroundTasks(BackgroundTask):
    """The tasks of one request: ``tasks.add_task(send_email, to, subject=...)``. Run in order; a
    task that raises is logged and the rest still run."""

    def __init__(self, tasks: Optional[Sequence[BackgroundTask]] = None) -> None:
        self.tasks: list[BackgroundTask] = list(tasks or ())

    def add_task(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.tasks.append(BackgroundTask(func, *args, **kwargs))

    async def __call__(self) -> None:
        for task in self.tasks:
            try:
                await task()
            except Exception as exc:  # noqa: BLE001 - one task's failure does not stop the others
                _log.exception("ferrule: background task %s raised", _name_of(task))
                _tasks.failed(exc)


def _name_of(task: Any) -> Any:
    func = getattr(task, "func", task)
    return getattr(func, "__qualname__", func)


def after_response(response: Any) -> Optional[Callable[[], None]]:
    """Called by the binding with a response whose ``background`` is set, before it reads the
    response: the task is to run once the response has gone. A streamed one (and a
    ``FileResponse``, read here then, whole, so that the task may remove the file) runs it once
    its stream is done: its stream is wrapped here, and None returned. Any other gets back what
    starts its task, which the binding calls once the body is made and the answer is about to
    be handed to the core (a body that cannot be sent starts none); the task then starts on the
    loop after the current callback, while the core sends the answer."""
    task = response.background
    loop = asyncio.get_running_loop()

    def then() -> None:
        # A sync stream ends on a thread of the stream pool: the task goes to the loop.
        try:
            loop.call_soon_threadsafe(_start, task)
        except RuntimeError:  # the loop has closed (the server stopped): nothing runs it now
            _log.warning("ferrule: background task %s not run: the server has stopped", _name_of(task))

    if getattr(response, "_file", None) is not None:
        response._read_here()
    stream = response.stream
    if stream is None or isinstance(stream, (str, bytes)):
        return functools.partial(_start, task)
    if hasattr(stream, "__aiter__"):
        response.stream = EndingAsyncStream(stream, then)
    else:
        try:
            response.stream = EndingStream(stream, then)
        except TypeError:  # not a stream (`StreamingResponse(42)`): the core refuses it, a 500
            pass
    return None


def _start(task: Any) -> None:
    in_background(_run(task))


async def _run(task: Any) -> None:
    try:
        await task()
    except Exception as exc:  # noqa: BLE001 - logged, as a BackgroundTasks task that raises is
        _log.exception("ferrule: background task %s raised", _name_of(task))
        _tasks.failed(exc)


async def tasks_of_request() -> AsyncIterator[BackgroundTasks]:
    """The dependency a ``BackgroundTasks`` parameter stands for."""
    tasks = BackgroundTasks()
    yield tasks
    await tasks()
