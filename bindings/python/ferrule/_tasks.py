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
