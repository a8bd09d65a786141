"""Handler deadlines free the interpreter: requests given up while they waited behind a blocking
handler are never started, a deadline is a 504, and a full queue is a 503 at once."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

from ferrule import App, Request

from support import request, serving


def test_overruns_of_a_blocking_handler_cost_one_run_not_one_each() -> None:
    app = App(timeout_ms=200)
    runs: list[float] = []
    release = threading.Event()

    @app.get("/block")
    def block() -> dict:
        runs.append(time.monotonic())
        # Held until every client has its 504, not for a guessed 0.6 s: then all four arrived
        # while this one run held the thread, however late a loaded machine started a client.
        release.wait(10)
        return {"done": True}

    @app.get("/health", timeout_ms=5000)
    def health() -> str:
        return "ok"

    with serving(app) as port:
        statuses: list[int] = []
        clients = [threading.Thread(target=lambda: statuses.append(request(port, "GET", "/block").status)) for _ in range(4)]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        release.set()
        started = time.monotonic()
        assert request(port, "GET", "/health").status == 200
        waited = time.monotonic() - started
    assert statuses == [504] * 4
    # Before: every abandoned call still ran, one after another (4 × 0.6 s).
    assert len(runs) == 1, f"{len(runs)} handler runs for one that nobody waited for"
    # The one run ends when released; abandoned runs would have run (and been counted) before it.
    assert waited < 1.5, f"/health waited {waited:.2f} s behind abandoned handlers"


def test_an_async_handler_past_its_deadline_is_a_504_and_is_cancelled() -> None:
    app = App(timeout_ms=100)
    cancelled = threading.Event()

    @app.get("/slow")
    async def slow() -> str:
        try:
            await asyncio.sleep(2)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    @app.get("/quick", timeout_ms=1000)
    async def quick() -> str:
        await asyncio.sleep(0.01)
        return "in time"

    with serving(app) as port:
        reply = request(port, "GET", "/slow")
        assert cancelled.wait(10), "the task ran on after its 504"
        assert request(port, "GET", "/quick").body == b"in time"
    assert reply.status == 504
    assert reply.json()["detail"] == "The handler did not finish within 100 ms."


def test_beyond_the_queue_limit_requests_get_503_at_once() -> None:
    app = App(max_queued_requests=1)
    release = threading.Event()
    entered = threading.Event()

    @app.get("/wait", blocking=True)
    def wait() -> str:
        entered.set()
        release.wait(5)
        return "released"

    with serving(app) as port:
        first: list[int] = []
        holder = threading.Thread(target=lambda: first.append(request(port, "GET", "/wait").status))
        holder.start()
        # The holder's request is in its handler, so the next one is beyond the queue.
        assert entered.wait(10)
        started = time.monotonic()
        refused = request(port, "GET", "/wait")
        # At once, not when the holder is released (after this line) or at the 5 s it waits.
        assert time.monotonic() - started < 3
        release.set()
        holder.join()
    assert refused.status == 503
    assert refused.headers["retry-after"] == "1"
    assert first == [200]


def test_settings_are_checked_where_the_app_is_made() -> None:
    import pytest

    with pytest.raises(ValueError, match="max_json_depth must be between 1 and 127"):
        App(max_json_depth=500)
    with pytest.raises(ValueError, match="max_connections must be at least 1"):
        App(max_connections=0)
    with pytest.raises(TypeError):
        App(keep_alive_timeout=5)  # type: ignore[call-arg]  # the name is keep_alive_timeout_ms
    App(keep_alive_timeout_ms=5000, send_timeout_ms=1000)


def test_a_task_is_cancelled_only_after_the_cores_deadline() -> None:
    # Cancelled first (uvloop's timers may fire a millisecond early), the task dropped its
    # request and the client got a 500 instead of the core's 504.
    from ferrule.server import cancel_at_deadline

    asked: list = []

    class Loop:
        def call_later(self, delay: float, callback: object) -> object:
            asked.append(delay)
            return type("Timer", (), {"cancel": lambda self: None})()

    class Task:
        def cancel(self) -> None:
            pass

        def add_done_callback(self, callback: object) -> None:
            pass

    cancel_at_deadline(Loop(), Task(), 0.5)  # type: ignore[arg-type]
    assert asked and asked[0] > 0.5


def test_a_pool_job_whose_waiter_was_cancelled_before_it_started_never_runs() -> None:
    # Found on review: a `blocking=True` handler past its deadline (the client has its 504)
    # still ran once a pool thread was free, where run_in_executor skips a cancelled job.
    import asyncio
    import time

    from ferrule import _pool

    ran: list[int] = []

    def job(n: int):
        def run() -> None:
            time.sleep(0.1)
            ran.append(n)

        return run

    async def main() -> None:
        pool = _pool.ThreadPool(limit=1)
        first = pool.run(job(1))
        second = pool.run(job(2))
        second.cancel()
        await first
        await asyncio.sleep(0.3)

    asyncio.run(main())
    assert ran == [1]


def test_a_long_poll_learns_that_its_client_has_gone() -> None:
    """Starlette's `await request.is_disconnected()`, as a long poll's loop uses it: it was an
    AttributeError (a 500 nobody saw), so a poll whose client had gone ran to its deadline."""
    app = App(timeout_ms=10_000)
    seen: list[tuple[bool, float]] = []
    ended = threading.Event()

    @app.get("/poll")
    async def poll(request: Request) -> dict:
        started = time.monotonic()
        first = await request.is_disconnected()
        while not await request.is_disconnected() and time.monotonic() - started < 8:
            await asyncio.sleep(0.02)
        seen.append((first, time.monotonic() - started))
        ended.set()
        return {"polled": True}

    @app.get("/quick")
    async def quick(request: Request) -> dict:
        await asyncio.sleep(0)
        return {"gone": await request.is_disconnected()}

    with serving(app) as port:
        assert request(port, "GET", "/quick").json() == {"gone": False}
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(b"GET /poll HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        time.sleep(0.3)
        client.close()
        assert ended.wait(10), "the handler never ended"
    first, took = seen[0]
    assert first is False, "the client was there when the poll began"
    assert 0.25 < took < 5, f"the poll ended {took:.2f} s after it began; the client left after 0.3 s"
