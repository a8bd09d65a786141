"""An `async def` handler runs inside an asyncio task of its own (`src/handler_task.rs`, started
from `src/dispatch.rs`), or, when its code has no `await`, runs to its end at once inside its
route's stand-in task (`src/inline_run.rs`): what a handler can see and do of its task is what
any asyncio code expects of one."""

from __future__ import annotations

import asyncio
import collections.abc
import concurrent.futures
import functools
import inspect
import io
import threading

import pytest

from ferrule import App
from ferrule.testing import TestClient

from support import request, serving


async def returns_at_once() -> None:
    """Awaited by a handler that must run as a task of its own: its `await` makes the handler's
    code one that can wait, though this returns without suspending."""


def reenter_the_current_tasks_coroutine() -> dict:
    """Steps the current task's coroutine from inside it: refused, as a running one is."""
    coroutine = asyncio.current_task().get_coro()
    try:
        coroutine.send(None)
    except ValueError as error:
        refused = str(error)
    return {"is_coroutine": isinstance(coroutine, collections.abc.Coroutine), "reentry": refused}


def make_app() -> App:
    app = App(timeout_ms=5000)

    @app.get("/task")
    async def task_facts():
        task = asyncio.current_task()
        assert task is not None
        return {"is_task": isinstance(task, asyncio.Task), "running": not task.done()}

    @app.get("/task/own")
    async def own_task_facts():
        await returns_at_once()
        task = asyncio.current_task()
        assert task is not None
        return {"is_task": isinstance(task, asyncio.Task), "running": not task.done()}

    @app.get("/task-name")
    async def task_name():
        return {"name": asyncio.current_task().get_name()}

    @app.get("/task-name/after-a-wait")
    async def task_name_after_a_wait():
        # Read once tasks started after this one have run their first step.
        await asyncio.sleep(0.001)
        return {"name": asyncio.current_task().get_name()}

    @app.get("/own-coroutine")
    async def own_coroutine():
        return reenter_the_current_tasks_coroutine()

    @app.get("/own-coroutine/own-task")
    async def own_task_coroutine():
        await returns_at_once()
        return reenter_the_current_tasks_coroutine()

    @app.get("/stack")
    async def stack():
        await asyncio.sleep(0)
        printed = io.StringIO()
        asyncio.current_task().print_stack(file=printed)
        return {"stack": printed.getvalue()}

    @app.get("/timeout")
    async def with_timeout():
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(5)
        except TimeoutError:
            return {"timed_out": True}
        return {"timed_out": False}

    @app.get("/many-waits/{n:int}")
    async def many_waits(n: int):
        loop = asyncio.get_running_loop()
        total = 0
        for i in range(n):
            future = loop.create_future()
            loop.call_later(0.001, future.set_result, i)
            total += await future
            await asyncio.sleep(0)
        return {"total": total}

    @app.get("/caught-cancel")
    async def caught_cancel():
        # A cancellation is thrown into the handler where it waits; one it catches is over.
        asyncio.current_task().cancel()
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            return {"caught": True}
        return {"caught": False}

    @app.get("/failed-child")
    async def failed_child():
        async def child():
            await asyncio.sleep(0)
            raise ValueError("from the child")

        try:
            await asyncio.create_task(child())
        except ValueError as error:
            return {"child": str(error)}

    @app.get("/fails-late")
    async def fails_late():
        await asyncio.sleep(0.001)
        raise RuntimeError("late failure")

    @app.get("/answered-before-queued-work")
    async def answered_before_queued_work():
        # Queued by the handler, this runs after whatever the loop had queued before the
        # handler's step; it holds the loop until the client has the answer, or 10 s (a loaded
        # machine may take a while to hand the answer over; a failure costs the wait).
        def hold_the_loop() -> None:
            queued_work["saw_the_answer"] = client_has_answer.wait(10)
            queued_work_finished.set()

        await returns_at_once()
        asyncio.get_running_loop().call_soon(hold_the_loop)
        return {"answered": True}

    @app.get("/cancels-its-task")
    async def cancels_its_task():
        task = asyncio.current_task()
        seen = {"cancelling": task.cancelling(), "done": task.done()}
        task.cancel()
        return seen

    @app.get("/fails-at-once")
    async def fails_at_once():
        raise RuntimeError("at once")

    @app.get("/cancels-and-uncancels")
    async def cancels_and_uncancels():
        # Its stand-in's future is cancelled all the same: the stand-in ends next turn.
        task = asyncio.current_task()
        seen = {"done": task.done()}
        task.cancel()
        task.uncancel()
        return seen

    @app.get("/child-task/{key}")
    async def child_task(key: str):
        # Started by a handler that cannot wait, the child runs once the handler has returned.
        async def child() -> None:
            await asyncio.sleep(0)
            children[key] = "ran"

        asyncio.create_task(child())
        return {"started": True}

    @app.get("/child-task/{key}/result")
    async def child_task_result(key: str):
        return {"result": children.get(key)}

    return app


# What the child tasks of `/child-task/{key}` did, by key.
children: dict[str, str] = {}


# What the loop callback queued by `/answered-before-queued-work` saw, and when it is done.
queued_work: dict[str, bool] = {}
client_has_answer = threading.Event()
queued_work_finished = threading.Event()


@pytest.fixture(scope="module")
def port():
    with serving(make_app()) as p:
        yield p


@pytest.mark.parametrize("path", ["/task", "/task/own"])
def test_the_handler_runs_inside_a_running_task(port, path):
    assert request(port, "GET", path).json() == {"is_task": True, "running": True}


def test_a_handler_task_is_named_after_its_route(port):
    assert request(port, "GET", "/task-name").json() == {"name": "GET /task-name"}


def test_tasks_of_two_routes_started_together_keep_their_own_names(port):
    # The dispatcher calls `asyncio.Task` with one keywords dict it reuses (`TaskStarter`).
    paths = ["/task-name", "/task-name/after-a-wait"] * 10
    with concurrent.futures.ThreadPoolExecutor(len(paths)) as pool:
        names = list(pool.map(lambda path: request(port, "GET", path).json()["name"], paths))
    assert names == [f"GET {path}" for path in paths]


@pytest.mark.parametrize("path", ["/own-coroutine", "/own-coroutine/own-task"])
def test_a_handler_task_runs_a_coroutine_that_cannot_be_reentered(port, path):
    assert request(port, "GET", path).json() == {"is_coroutine": True, "reentry": "coroutine already executing"}


def test_a_handler_task_prints_the_handler_in_its_stack(port):
    stack = request(port, "GET", "/stack").json()["stack"]
    assert "in stack" in stack and "print_stack(file=printed)" in stack


def app_keeping_its_tasks() -> tuple[App, list[asyncio.Task]]:
    """An app whose loop makes every task through a factory set at startup, which keeps them."""
    app = App()
    made: list[asyncio.Task] = []

    def factory(loop, coroutine, **kwargs):
        task = asyncio.Task(coroutine, loop=loop, **kwargs)
        made.append(task)
        return task

    @app.on_event("startup")
    async def install_factory():
        asyncio.get_running_loop().set_task_factory(factory)

    return app, made


def app_raising(exception: type[BaseException]) -> App:
    """`/at-once` and `/after-a-wait` raise `exception`: one handler run at once, one as a task."""
    app = App()

    @app.get("/at-once")
    async def at_once():
        raise exception(7)

    @app.get("/after-a-wait")
    async def after_a_wait():
        await returns_at_once()
        raise exception(7)

    return app


def test_a_task_factory_set_at_startup_makes_the_handlers_tasks():
    app, made = app_keeping_its_tasks()

    @app.get("/made")
    async def made_by_factory():
        return {"name": asyncio.current_task().get_name()}

    with serving(app) as p:
        assert request(p, "GET", "/made").json() == {"name": "GET /made"}
    assert "GET /made" in [task.get_name() for task in made]


def test_asyncio_timeout_works_inside_a_handler(port):
    assert request(port, "GET", "/timeout").json() == {"timed_out": True}


def test_a_handler_that_waits_many_times_gets_each_result(port):
    assert request(port, "GET", "/many-waits/20").json() == {"total": sum(range(20))}


def test_a_cancellation_the_handler_catches_is_its_own_to_answer(port):
    assert request(port, "GET", "/caught-cancel").json() == {"caught": True}


def test_a_failed_child_task_raises_where_the_handler_awaits_it(port):
    assert request(port, "GET", "/failed-child").json() == {"child": "from the child"}


def test_an_exception_after_a_wait_is_a_500_and_the_server_goes_on(port):
    reply = request(port, "GET", "/fails-late")
    assert reply.status == 500 and "late failure" not in reply.text
    assert request(port, "GET", "/task").status == 200


def test_concurrent_handlers_each_get_their_own_answer(port):
    answers: dict[int, object] = {}

    def ask(n: int) -> None:
        answers[n] = request(port, "GET", f"/many-waits/{n}").json()

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert answers == {n: {"total": sum(range(n))} for n in range(1, 9)}


def test_an_answer_goes_back_in_the_turn_its_task_first_steps_in(port):
    # The flush of a batch's answers is queued behind the tasks the batch starts, so an
    # answer is not held back by work its handler queued: were the flush queued by the
    # answer, it would wait behind `hold_the_loop`.
    client_has_answer.clear()
    queued_work_finished.clear()
    queued_work.clear()
    assert request(port, "GET", "/answered-before-queued-work").json() == {"answered": True}
    client_has_answer.set()
    # Read once the callback has written. A request asking for it raced the callback: the
    # answer leaves before the callback runs, and uvloop may run the doorbell of the next
    # request (its I/O callback) ahead of a callback queued with `call_soon` earlier.
    assert queued_work_finished.wait(10)
    assert queued_work == {"saw_the_answer": True}


def test_a_handler_that_cannot_wait_runs_without_a_task_of_its_own():
    # Every task made on the loop goes through its factory: five requests to a handler without
    # `await` make one task, its route's stand-in; five to one with `await` make five.
    app, made = app_keeping_its_tasks()

    @app.get("/at-once")
    async def at_once():
        return {"name": asyncio.current_task().get_name()}

    @app.get("/waits")
    async def waits():
        await returns_at_once()
        return {"name": asyncio.current_task().get_name()}

    with serving(app) as p:
        for _ in range(5):
            assert request(p, "GET", "/at-once").json() == {"name": "GET /at-once"}
            assert request(p, "GET", "/waits").json() == {"name": "GET /waits"}
    # Named once made (uvloop names a factory's task after the factory returns it).
    names = [task.get_name() for task in made]
    assert (names.count("GET /at-once"), names.count("GET /waits")) == (1, 5)


def test_a_handler_that_cancels_its_stand_in_task_is_answered_and_the_next_gets_a_fresh_one(port):
    for _ in range(3):
        assert request(port, "GET", "/cancels-its-task").json() == {"cancelling": 0, "done": False}


def test_a_stand_in_cancelled_then_uncancelled_is_not_the_next_requests_task(port):
    for _ in range(3):
        assert request(port, "GET", "/cancels-and-uncancels").json() == {"done": False}


def test_an_exception_from_a_handler_that_cannot_wait_is_a_500_and_the_server_goes_on(port):
    reply = request(port, "GET", "/fails-at-once")
    assert reply.status == 500 and "at once" not in reply.text
    assert request(port, "GET", "/task").json() == {"is_task": True, "running": True}


def test_a_task_started_by_a_handler_that_cannot_wait_runs(port):
    assert request(port, "GET", "/child-task/a").json() == {"started": True}
    for _ in range(100):
        if request(port, "GET", "/child-task/a/result").json() == {"result": "ran"}:
            break
    assert children == {"a": "ran"}


def test_a_stand_in_lets_go_of_what_requests_attached_to_it_after_its_share_of_them():
    # A done callback per request: kept by the stand-in until it is retired, after 1,024
    # requests, then run, as a task of its own would have run it at its end.
    app = App()
    fired: list[str] = []

    @app.get("/attaches")
    async def attaches():
        asyncio.current_task().add_done_callback(lambda task: fired.append(task.get_name()))
        return {}

    with TestClient(app) as client:
        for _ in range(1025):
            assert client.get("/attaches").status_code == 200
        client.get("/attaches")  # a turn of the loop after the retired one was cancelled
        assert fired[:1024] == ["GET /attaches"] * 1024


@pytest.mark.parametrize("in_process", [False, True])
def test_a_shutdown_step_waiting_for_every_other_task_finds_no_stand_in(in_process):
    app = App()
    still_running: list[list[str]] = []

    @app.get("/at-once")
    async def at_once():
        return {}

    @app.on_event("shutdown")
    async def wait_for_the_rest():
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        still_running.append(sorted(task.get_name() for task in others if not task.done()))
        await asyncio.wait_for(asyncio.gather(*others, return_exceptions=True), 5)

    if in_process:
        with TestClient(app) as client:
            assert client.get("/at-once").status_code == 200
    else:
        with serving(app) as p:
            assert request(p, "GET", "/at-once").status == 200
    assert still_running == [[]]


@pytest.mark.parametrize("path", ["/at-once", "/after-a-wait"])
def test_system_exit_in_a_handler_is_answered_and_stops_the_server_however_it_runs(path):
    app = app_raising(SystemExit)

    ready = threading.Event()
    port: list[int] = []
    ended: list[BaseException] = []
    loop = asyncio.new_event_loop()

    def main() -> None:
        def on_ready(bound: int) -> None:
            port.append(bound)
            ready.set()

        try:
            loop.run_until_complete(app.serve("127.0.0.1", 0, threads=1, on_ready=on_ready))
        except BaseException as e:  # noqa: BLE001 - what stopped the server
            ended.append(e)

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    assert ready.wait(30)
    assert request(port[0], "GET", path).status == 500
    thread.join(10)
    assert not thread.is_alive() and [type(e) for e in ended] == [SystemExit]


@pytest.mark.parametrize("path", ["/at-once", "/after-a-wait"])
def test_system_exit_in_a_handler_is_raised_in_the_test_of_a_test_client_however_it_runs(path):
    # It stops the client's loop as it stops a server's: the test gets it, and does not wait
    # for an answer that can no longer come.
    app = app_raising(SystemExit)

    with TestClient(app) as client:
        with pytest.raises(SystemExit):
            client.get(path)
        with pytest.raises(RuntimeError, match="closed"):
            client.get(path)


@pytest.mark.parametrize("path", ["/at-once", "/after-a-wait"])
def test_a_cancelled_error_a_handler_raises_is_a_500_however_it_runs(path):
    app = app_raising(asyncio.CancelledError)

    with TestClient(app) as client:
        assert client.get(path).status_code == 500


def test_only_an_async_def_whose_own_code_never_yields_is_run_at_once():
    from ferrule.app import _cannot_wait

    async def returns():
        async def inner():  # a nested coroutine's awaits are its own
            await asyncio.sleep(0)

        return [x for x in range(3)], inner

    async def awaits():
        await asyncio.sleep(0)

    async def loops(source):
        async for _ in source:
            pass

    async def enters(manager):
        async with manager:
            pass

    async def comprehends(source):
        return [x async for x in source]

    class Callable:
        async def __call__(self):
            return 1

    def returns_a_coroutine():
        return awaits()

    if hasattr(inspect, "markcoroutinefunction"):  # Python 3.12+
        inspect.markcoroutinefunction(returns_a_coroutine)

    assert _cannot_wait(returns)
    assert not any(_cannot_wait(f) for f in (awaits, loops, enters, comprehends, Callable(), functools.partial(returns), returns_a_coroutine))
