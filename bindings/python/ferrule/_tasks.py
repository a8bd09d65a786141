"""Coroutines Ferrule starts on the request's loop and nobody awaits (a hook chain finished
after its handler, a response's background task): held here until they end, because the loop
keeps only a weak reference to a task, so one awaiting what nothing else holds could be
collected mid-way."""

from __future__ import annotations

import asyncio
from typing import Any, Coroutine, Optional

_running: set[asyncio.Future[None]] = set()


def in_background(coroutine: Coroutine[Any, Any, None]) -> None:
    task = asyncio.ensure_future(coroutine)
    _running.add(task)
    task.add_done_callback(_running.discard)


async def settled(timeout: Optional[float] = None) -> bool:
    """Waits until none of these runs on this loop, those they start included (a response's
    background task starts one turn after its answer); False when ``timeout`` seconds passed
    first. The test client waits here after each request, as Starlette's returns only once
    the background tasks have run; a server before its lifespan's shutdown, which may close
    what they use."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    while True:
        await asyncio.sleep(0)
        pending = [task for task in _running if task.get_loop() is loop and not task.done()]
        if not pending:
            return True
        left = None if deadline is None else deadline - loop.time()
        if left is not None and left <= 0:
            return False
        await asyncio.wait(pending, timeout=left)


# The failures of background work, for the loops of test clients that raise them (a server's
# loop keeps none: they are logged, and would only pile up).
_failures: dict[asyncio.AbstractEventLoop, list[BaseException]] = {}


def keep_failures(loop: asyncio.AbstractEventLoop) -> None:
    """From now on, what a background task on ``loop`` raises is kept for ``take_failure``."""
    _failures.setdefault(loop, [])


def forget_failures(loop: asyncio.AbstractEventLoop) -> None:
    _failures.pop(loop, None)


def failed(exception: BaseException) -> None:
    """A background task raised ``exception`` (already logged): kept when its loop asks."""
    try:
        kept = _failures.get(asyncio.get_running_loop())
    except RuntimeError:
        return
    if kept is not None:
        kept.append(exception)


def take_failure(loop: asyncio.AbstractEventLoop) -> Optional[BaseException]:
    """The first failure kept since the last take; the rest are dropped (each was logged)."""
    kept = _failures.get(loop)
    if not kept:
        return None
    first = kept[0]
    kept.clear()
    return first
