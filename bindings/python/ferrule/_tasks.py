"""Coroutines Ferrule starts on the request's loop and nobody awaits (a hook chain finished
after its handler, a response's background task): held here until they end, because the loop
keeps only a weak reference to a task, so one awaiting what nothing else holds could be
collected mid-way."""

from __future__ import annotations

import asyncio
from typing import Any, Coroutine

_running: set[asyncio.Future[None]] = set()


def in_background(coroutine: Coroutine[Any, Any, None]) -> None:
    task = asyncio.ensure_future(coroutine)
    _running.add(task)
    task.add_done_callback(_running.discard)
