"""The threads sync code runs on off the loop: stream producers, ``blocking=True`` handlers
and ``def`` background tasks. At most ``LIMIT``, reused, started on demand; each job runs in a
copy of the context it was handed over from, as anyio's ``to_thread`` runs one, so a
``ContextVar`` a middleware set (a request id for the log) reads the same there.

A thread of its own per sync generator cost 384 CPU-µs per event and 490 MB at 1,000 event
streams (bench ``sse-1000``, ferrule-python-sync): a thousand threads taking turns at the GIL.
Starlette runs each ``next()`` of a sync iterator in anyio's pool of 40 threads; this pool has
the same bound, and a job here is one *batch* of items (until the stream's batch is full), so a
fast generator crosses to a thread once per batch, not once per item, while one that blocks
holds a single thread, as it would in Starlette.

The threads are daemons, as anyio's are: a generator blocked for good (a queue nobody feeds)
cannot hold up the interpreter's exit. ``concurrent.futures`` joins its workers at exit.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import queue
import threading
from typing import Any, Callable, Tuple

LIMIT = 40

_Job = Tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[[], Any]]


class ThreadPool:
    def __init__(self, limit: int = LIMIT) -> None:
        self._limit = limit
        self._jobs: "queue.SimpleQueue[_Job]" = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        # Jobs queued and not yet taken, threads waiting for one: a thread is started only
        # when the first outnumber the second (and the limit allows).
        self._waiting_jobs = 0
        self._idle_threads = 0

    @property
    def threads(self) -> int:
        return self._threads

    def run(self, job: Callable[[], Any]) -> "asyncio.Future[Any]":
        """Runs ``job`` on a pool thread, in a copy of the current context; the returned future
        (of the running loop) gets its result or exception."""
        loop = asyncio.get_running_loop()
        job = functools.partial(contextvars.copy_context().run, job)
        future = loop.create_future()
        with self._lock:
            self._waiting_jobs += 1
            start = self._waiting_jobs > self._idle_threads and self._threads < self._limit
            if start:
                self._threads += 1
        if start:
            threading.Thread(target=self._work, name="ferrule-worker", daemon=True).start()
        self._jobs.put((loop, future, job))
        return future

    def _work(self) -> None:
        _here.worker = True
        while True:
            with self._lock:
                self._idle_threads += 1
            loop, future, job = self._jobs.get()
            with self._lock:
                self._idle_threads -= 1
                self._waiting_jobs -= 1
            # Its awaiting task was cancelled while it waited (a handler past its deadline, the
            # client has its 504): never started, as run_in_executor skips it (found on review:
            # a POST answered 504 ran later all the same). A read of the future's state from
            # here races only with a cancel that comes too late to matter.
            if future.cancelled():
                del future, job
                continue
            try:
                outcome: Tuple[bool, Any] = (True, job())
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                outcome = (False, exc)
            try:
                loop.call_soon_threadsafe(_settle, future, outcome)
            except RuntimeError:
                pass  # the loop is closed: nobody awaits the outcome any more
            del future, job, outcome


def _settle(future: "asyncio.Future[Any]", outcome: Tuple[bool, Any]) -> None:
    if future.cancelled():
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class _Here(threading.local):
    # A class default: a thread that never set it reads False without a failed lookup.
    worker = False


_here = _Here()


def in_worker() -> bool:
    """Whether the calling thread is one of this pool's."""
    return _here.worker


THREADS = ThreadPool()
