"""Running an app: one process, or N forked worker processes sharing one listening socket.

Each process runs one event loop (uvloop when installed) that executes every handler of
that process; the Rust runtime serves HTTP on threads of its own. SIGINT and SIGTERM stop
accepting, close idle connections, drain in-flight requests, and exit with status 0; when the
drain deadline (``shutdown_timeout_ms``) cuts requests off, one line says so and the status is 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import time
import traceback
from typing import TYPE_CHECKING, Any, Iterator, Optional

from . import _pool
from ._logging import use_default_handler
from .app import DrainTimeout, StartupFailed

if TYPE_CHECKING:
    from . import _ferrule
    from .app import App

__all__ = ["run", "new_event_loop", "run_until_complete"]

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The exit status of a process whose startup (callbacks, lifespan) raised: the supervisor of
# worker processes stops instead of starting another that would fail the same way.
STARTUP_FAILED = 3


@contextlib.contextmanager
def _ending(sink: "_ferrule.StreamSink") -> Iterator[None]:
    """Tells ``sink`` how its producer ended: ``finish()`` when it ran out, ``fail(exc)`` (logged
    with its traceback) when it raised. A cancellation passes through untold (the client left,
    or the loop is closing); interpreter exits keep propagating after ``fail``."""
    try:
        yield
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        sink.fail(exc)
        if not isinstance(exc, Exception):
            raise
    else:
        sink.finish()


async def produce(sink: "_ferrule.StreamSink") -> None:
    """Runs an async stream producer as a task on the loop, pushing its items into the
    stream's batch (``sink`` is a ``_ferrule.StreamSink``); a full batch waits for the client.
    Cancelled when the client leaves: the cancellation is thrown into the generator where it
    waits, its ``finally`` runs, and it is closed."""
    iterator = sink.iterator
    try:
        with _ending(sink):
            async for item in iterator:
                if not sink.push(item):
                    if not sink.open:
                        break  # the client left; the task's cancellation is on its way
                    await sink.room()
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()


async def produce_in_pool(sink: "_ferrule.StreamSink") -> None:
    """Runs a sync stream producer (``sink.iterator``) in batches on the stream threads
    (``ferrule._pool``), as Starlette runs one in its thread pool: a generator that blocks
    holds up neither the event loop nor other streams. Each job pushes items until the batch
    is full; then this task waits on the loop (no thread held) for the client to take it. A
    client that leaves stops it at its next item or wait, and the generator is closed (its
    ``finally`` runs) on a pool thread.

    The task is not cancelled when the client leaves, unlike ``produce``'s: a job may be
    inside the generator on another thread, and a generator cannot be closed while it runs."""
    iterator = sink.iterator

    def fill() -> bool:
        """Pushes items until the batch is full (true) or the generator is done (false)."""
        for item in iterator:
            if not sink.push(item):
                return True
        return False

    # A cancellation (the loop closing) skips the close: a pool thread may still be in the
    # generator.
    with _ending(sink):
        while await _pool.THREADS.run(fill) and sink.open:
            await sink.room()
            if not sink.open:
                break
    close = getattr(iterator, "close", None)
    if close is not None:
        await _pool.THREADS.run(close)


_AFTER_THE_CORE = 0.005


def cancel_at_deadline(loop: asyncio.AbstractEventLoop, task: "asyncio.Task[None]", seconds: float) -> None:
    """Cancels an ``async def`` handler's task once its request is past the route's
    ``timeout_ms`` (the client already has its 504); the timer goes when the task ends first.

    The event loop's timers may fire a little early (uvloop counts in whole milliseconds of a
    cached clock): cancelled before the core's own deadline, the task would drop its request
    and the client would get a 500 instead of the 504. A few milliseconds after it, the core
    has answered."""
    timer = loop.call_later(seconds + _AFTER_THE_CORE, task.cancel)
    task.add_done_callback(lambda _: timer.cancel())


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop when it is installed, else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run_until_complete(loop: asyncio.AbstractEventLoop, main: "asyncio.Future[None] | Any") -> None:
    """``loop.run_until_complete(main)``, then what ``asyncio.run`` does on the way out: cancel
    the tasks still running (handlers the core already answered with a timeout), let them
    finish, and stop the default thread pool (a handler's own ``run_in_executor``). Ferrule's
    pool (``ferrule._pool``) is daemon threads: the drain has waited for its requests already."""
    try:
        loop.run_until_complete(main)
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())


def serve_until_signalled(app: "App", host: str, port: int, fd: Optional[int], threads: Optional[int]) -> None:
    use_default_handler()
    loop = new_event_loop()
    asyncio.set_event_loop(loop)
    # A plain handler, not `loop.add_signal_handler`: that one runs on the loop, which a `def`
    # handler blocks (the dispatcher calls it on the loop's thread), so a SIGTERM during a
    # 9 s handler started the drain 9 s late and `shutdown_timeout_ms` cut nothing off.
    # Python runs this one between two bytecodes of whatever is running, `time.sleep` included
    # (PEP 475), and `shutdown()` only tells the core to stop, from any thread. An idle loop
    # wakes for it too: asyncio's epoll retries after running handlers, uvloop runs them from
    # its wake-up pipe.
    previous = {sig: signal.signal(sig, lambda _signum, _frame: app.shutdown()) for sig in _STOP_SIGNALS}
    try:

        try:
            run_until_complete(loop, app.serve(host, port, fd=fd, threads=threads, on_ready=lambda _: app._announce()))
        except DrainTimeout:
            # The core has said which requests were cut off; the exit status says so too.
            raise SystemExit(1) from None
        except StartupFailed as e:
            # As uvicorn does: the traceback of what raised, then one line saying what failed.
            traceback.print_exception(e.__cause__ or e, file=sys.stderr)
            print(f"ferrule: {e}", file=sys.stderr, flush=True)
            raise SystemExit(STARTUP_FAILED) from None
        except OSError as e:
            # A port in use (or an address not this machine's): one line, not a traceback.
            raise SystemExit(f"ferrule: {e.strerror or e}") from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        loop.close()
        asyncio.set_event_loop(None)


def run(app: "App", *, host: str, port: int, workers: int = 1, threads: Optional[int] = None) -> None:
    if workers < 1:
        raise ValueError("workers must be at least 1")
    if workers == 1:
        serve_until_signalled(app, host, port, None, threads)
        return
    # The parent binds once (so "address in use" is reported once, before any fork) and
    # never starts a runtime or a thread: forking a threaded process is unsafe.
    try:
        listener = socket.create_server((host, port), backlog=1024)
    except OSError as e:
        raise SystemExit(f"ferrule: cannot listen on {host}:{port}: {e.strerror or e}") from None
    listener.set_inheritable(True)
    try:
        _supervise(app, listener, workers, host, threads)
    finally:
        listener.close()


def _supervise(app: "App", listener: socket.socket, workers: int, host: str, threads: Optional[int]) -> None:
    port = listener.getsockname()[1]
    stopping = False
    children: set[int] = set()

    def spawn() -> None:
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                for sig in _STOP_SIGNALS:
                    signal.signal(sig, signal.SIG_DFL)
                serve_until_signalled(app, host, port, listener.fileno(), threads)
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else 1
            except BaseException as e:  # noqa: BLE001 - a worker reports and exits, always
                print(f"ferrule: worker {os.getpid()} failed: {e!r}", file=sys.stderr, flush=True)
                status = 1
            finally:
                os._exit(status)
        children.add(pid)

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    previous = {sig: signal.signal(sig, stop) for sig in _STOP_SIGNALS}
    exit_status = 0
    try:
        for _ in range(workers):
            spawn()
        last_restart = 0.0
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            except InterruptedError:  # pragma: no cover - PEP 475 retries os.wait itself
                continue
            children.discard(pid)
            if stopping:
                continue
            code = os.waitstatus_to_exitcode(status)
            if code == STARTUP_FAILED:
                # Another worker would fail its startup the same way: stop them all.
                print(f"ferrule: worker {pid} failed its startup; stopping", file=sys.stderr, flush=True)
                stop(signal.SIGTERM, None)
                exit_status = STARTUP_FAILED
                continue
            print(f"ferrule: worker {pid} exited ({code}); starting another", file=sys.stderr, flush=True)
            # A worker that dies at once would otherwise be restarted in a tight loop.
            if time.monotonic() - last_restart < 1.0:
                time.sleep(1.0)
            last_restart = time.monotonic()
            spawn()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if exit_status:
        raise SystemExit(exit_status)
