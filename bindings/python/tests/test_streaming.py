"""Streamed responses and Server-Sent Events with a real client: chunks leave as a generator
yields them (sync and async), a client that leaves closes the generator, a generator that
raises part-way is logged and the response is cut off, and events are framed by the core."""

from __future__ import annotations

import asyncio
import http.client
import logging
import os
import threading
import time
from typing import AsyncIterator, Iterator

import pytest

from ferrule import App, BackgroundTasks, EventSourceResponse, FileResponse, Request, ServerSentEvent, StreamingResponse

from support import request, serving


def open_stream(port: int, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path, headers=headers or {})
    return connection.getresponse()


def test_a_sync_generator_is_sent_chunk_by_chunk_as_it_yields() -> None:
    app = App()
    step = threading.Event()

    @app.get("/count/{n:int}")
    def count(n: int) -> StreamingResponse:
        def numbers() -> Iterator[str]:
            yield "first\n"
            step.wait(10)  # the client must have the first chunk before the rest is made
            for i in range(n):
                yield f"{i}\n"

        return StreamingResponse(numbers(), media_type="text/plain")

    with serving(app) as port:
        reply = open_stream(port, "/count/3")
        assert reply.status == 200
        assert reply.getheader("transfer-encoding") == "chunked"
        assert reply.getheader("content-type") == "text/plain; charset=utf-8"
        assert reply.readline() == b"first\n"
        step.set()
        assert reply.read() == b"0\n1\n2\n"


def test_an_async_generator_streams_and_bytes_and_str_mix() -> None:
    app = App()

    @app.get("/ticks")
    async def ticks() -> StreamingResponse:
        async def produce() -> AsyncIterator[bytes | str]:
            for i in range(3):
                await asyncio.sleep(0.01)
                yield f"tick {i};" if i % 2 else f"tick {i};".encode()

        return StreamingResponse(produce())

    with serving(app) as port:
        reply = request(port, "GET", "/ticks")
    assert (reply.status, reply.body) == (200, b"tick 0;tick 1;tick 2;")
    assert reply.headers["content-type"] == "application/octet-stream"


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_client_that_leaves_closes_the_generator(kind: str) -> None:
    app = App()
    closed = threading.Event()
    yielded = []

    def endless() -> Iterator[bytes]:
        try:
            while True:
                yielded.append(1)
                yield b"x" * 65536
        finally:
            closed.set()

    async def endless_async() -> AsyncIterator[bytes]:
        try:
            while True:
                yielded.append(1)
                await asyncio.sleep(0)
                yield b"x" * 65536
        finally:
            closed.set()

    @app.get("/endless")
    def stream() -> StreamingResponse:
        return StreamingResponse(endless() if kind == "sync" else endless_async())

    with serving(app) as port:
        reply = open_stream(port, "/endless")
        reply.read(65536)
        time.sleep(0.3)
        made = len(yielded)
        # Nothing read meanwhile: the generator was held back by the client, not run ahead.
        assert made * 65536 < 64 * 1024 * 1024, made
        reply.close()
        assert closed.wait(10), "the generator's finally ran when its client left"


def test_a_generator_that_raises_is_logged_and_the_response_cut_off(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ferrule")
    app = App()

    @app.get("/broken")
    def broken() -> StreamingResponse:
        def chunks() -> Iterator[str]:
            yield "partial"
            raise ValueError("secret-detail")

        return StreamingResponse(chunks())

    with serving(app) as port:
        reply = open_stream(port, "/broken")
        assert reply.status == 200
        with pytest.raises(http.client.IncompleteRead) as cut:
            reply.read()
        assert cut.value.partial == b"partial"
    raised = [r for r in caplog.records if r.name == "ferrule.handler" and r.exc_info]
    assert raised and raised[0].exc_info[0] is ValueError  # type: ignore[index]


def test_an_item_that_is_not_bytes_or_str_ends_the_stream_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ferrule")
    app = App()

    @app.get("/odd")
    def odd() -> StreamingResponse:
        return StreamingResponse(iter(["fine", 42]))  # type: ignore[list-item]

    @app.get("/not-iterable")
    def not_iterable() -> StreamingResponse:
        return StreamingResponse(42)  # type: ignore[arg-type]

    with serving(app) as port:
        reply = open_stream(port, "/odd")
        with pytest.raises(http.client.IncompleteRead):
            reply.read()
        assert request(port, "GET", "/not-iterable").status == 500
    # A record's message, with its exception's (the producer's TypeError says what it got).
    messages = [r.getMessage() + (f" {r.exc_info[1]}" if r.exc_info else "") for r in caplog.records if r.name == "ferrule.handler"]
    assert any("must be bytes or str, not int" in m for m in messages), messages
    assert any("iterable or async iterable, not int" in m for m in messages), messages


def test_server_sent_events_are_framed_by_the_core_and_resume_from_last_event_id() -> None:
    app = App()

    @app.get("/feed")
    async def feed(request: Request) -> EventSourceResponse:
        start = int(request.header("last-event-id") or 0) + 1

        async def events() -> AsyncIterator[object]:
            yield ServerSentEvent({"n": start}, event="tick", id=start, retry=1500)
            yield {"data": "two\nlines", "id": start + 1}
            yield "plain"

        return EventSourceResponse(events())

    with serving(app) as port:
        reply = request(port, "GET", "/feed", headers={"last-event-id": "41"})
    assert reply.status == 200
    assert reply.headers["content-type"] == "text/event-stream"
    assert reply.headers["cache-control"] == "no-cache"
    assert reply.text == (
        'event: tick\nid: 42\nretry: 1500\ndata: {"n":42}\n\n'
        "id: 43\ndata: two\ndata: lines\n\n"
        "data: plain\n\n"
    )


def test_an_event_dict_with_a_key_that_is_no_event_field_ends_the_stream_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    """Before: ``{"d": 1}`` was sent as an empty event, its value lost without a word."""
    caplog.set_level(logging.INFO, logger="ferrule")
    app = App()

    @app.get("/feed")
    def feed() -> EventSourceResponse:
        def events() -> Iterator[object]:
            yield {"data": "first"}
            yield {"d": 1}
            yield "never sent"

        return EventSourceResponse(events())

    with serving(app) as port:
        assert request(port, "GET", "/feed").text == "data: first\n\n"
    messages = [r.getMessage() + (f" {r.exc_info[1]}" if r.exc_info else "") for r in caplog.records if r.name == "ferrule.handler"]
    assert any('an event has no field "d"' in m for m in messages), messages


def test_a_quiet_event_stream_is_kept_alive_and_ends_at_shutdown() -> None:
    app = App(sse_keep_alive_ms=50, shutdown_timeout_ms=20_000)
    never = asyncio.Event()

    @app.get("/quiet")
    async def quiet() -> EventSourceResponse:
        async def events() -> AsyncIterator[str]:
            yield "hello"
            await never.wait()
            yield "never sent"

        return EventSourceResponse(events())

    with serving(app) as port:
        reply = open_stream(port, "/quiet")
        assert reply.readline() == b"data: hello\n"
        assert reply.readline() == b"\n"
        assert reply.readline() == b":\n", "a keep-alive comment while the stream is quiet"
    # Leaving `serving` drained the server (a drain cut off at its deadline would raise
    # DrainTimeout there): the stream ended with its last chunk (no IncompleteRead), after
    # nothing but keep-alive comments.
    assert set(reply.read().split(b"\n")) <= {b"", b":"}


def test_a_sync_generator_that_blocks_holds_up_nothing_else() -> None:
    app = App()
    release = threading.Event()

    @app.get("/waits")
    def waits() -> StreamingResponse:
        def chunks() -> Iterator[str]:
            yield "before\n"
            release.wait(10)  # a blocking queue, file or socket read
            yield "after\n"

        return StreamingResponse(chunks())

    @app.get("/ping")
    def ping() -> str:
        return "pong"

    with serving(app) as port:
        reply = open_stream(port, "/waits")
        assert reply.readline() == b"before\n"
        # The generator blocks on its own thread: the event loop answers at once, not when the
        # generator's 10 s wait ends (as it did when generators ran on the loop's thread).
        asked = time.monotonic()
        assert request(port, "GET", "/ping").text == "pong"
        assert time.monotonic() - asked < 5
        release.set()
        assert reply.read() == b"after\n"


def test_many_sync_streams_share_a_bounded_pool_of_threads() -> None:
    # A thread per sync generator made 1,000 event streams a thousand threads (bench sse-1000:
    # 384 CPU-µs per event, 490 MB); they now take turns on a pool of at most 40.
    app = App()
    closed = []

    @app.get("/endless")
    def endless() -> StreamingResponse:
        def chunks() -> Iterator[bytes]:
            try:
                while True:
                    yield b"x" * 16384
            finally:
                closed.append(1)

        return StreamingResponse(chunks())

    with serving(app) as port:
        before = threading.active_count()
        replies = [open_stream(port, "/endless") for _ in range(100)]
        for reply in replies:
            assert len(reply.read(16384)) == 16384
        # Every generator is now waiting for a client that reads no more.
        time.sleep(0.3)
        assert threading.active_count() - before <= 40
        for reply in replies:
            reply.close()
        deadline = time.monotonic() + 10
        while len(closed) < 100 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(closed) == 100, "every generator was closed when its client left"


def test_a_file_response_streams_the_file_with_its_length_type_and_validators(tmp_path) -> None:
    # Found by a FastAPI port: there was no FileResponse, so a download was read whole into
    # memory (`Response(open(p, "rb").read())`) and went without validators.
    from ferrule.testing import TestClient

    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF" + bytes(range(256)) * 1000)
    app = App()

    @app.get("/report")
    def get_report() -> FileResponse:
        return FileResponse(report, filename="report.pdf")

    @app.get("/inline")
    def inline() -> FileResponse:
        return FileResponse(str(report), media_type="application/x-report", filename="résumé.pdf", content_disposition_type="inline")

    client = TestClient(app)
    answer = client.get("/report")
    assert answer.status_code == 200 and answer.content == report.read_bytes()
    assert answer.headers["content-length"] == str(report.stat().st_size)
    assert answer.headers["content-type"] == "application/pdf"
    assert answer.headers["content-disposition"] == 'attachment; filename="report.pdf"'
    assert answer.headers["etag"].startswith('"') and "last-modified" in answer.headers
    named = client.get("/inline")
    assert named.headers["content-type"] == "application/x-report"
    assert named.headers["content-disposition"] == "inline; filename*=utf-8''r%C3%A9sum%C3%A9.pdf"


def test_a_file_response_answers_ranges_and_validators_as_a_mount_does(tmp_path) -> None:
    # A video player asks for ranges; the file was read by Python and sent whole, 200.
    movie = tmp_path / "clip.mp4"
    movie.write_bytes(bytes(range(256)) * 400)
    app = App()

    @app.get("/clip")
    def clip() -> FileResponse:
        return FileResponse(movie)

    @app.post("/clip", status_code=201)
    def saved() -> FileResponse:
        return FileResponse(movie, status_code=201)

    with serving(app) as port:
        part = open_stream(port, "/clip", {"range": "bytes=256-259"})
        assert part.status == 206 and part.read() == bytes([0, 1, 2, 3])
        assert part.getheader("content-range") == "bytes 256-259/102400"
        assert part.getheader("content-type") == "video/mp4"
        whole = open_stream(port, "/clip")
        etag = whole.getheader("etag")
        assert whole.status == 200 and whole.getheader("accept-ranges") == "bytes" and len(whole.read()) == 102400
        unchanged = open_stream(port, "/clip", {"if-none-match": etag})
        assert unchanged.status == 304 and unchanged.read() == b""
        stale = open_stream(port, "/clip", {"range": "bytes=0-1", "if-range": '"older"'})
        assert stale.status == 200 and len(stale.read()) == 102400
        beyond = open_stream(port, "/clip", {"range": "bytes=200000-"})
        assert beyond.status == 416 and beyond.getheader("content-range") == "bytes */102400"
        beyond.read()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("HEAD", "/clip")
        head = connection.getresponse()
        assert head.status == 200 and head.getheader("content-length") == "102400" and head.read() == b""
        connection.request("POST", "/clip", headers={"range": "bytes=0-1"})
        created = connection.getresponse()
        assert created.status == 201 and len(created.read()) == 102400


def test_a_background_task_may_remove_the_file_it_answered_with(tmp_path) -> None:
    # FastAPI's idiom for a generated file. The file was opened after the task had removed it:
    # by the old Python stream (cut off) and by the core (a 404). It is now opened first.
    app = App()
    made = tmp_path / "export.csv"

    @app.get("/export")
    def export(tasks: BackgroundTasks) -> FileResponse:
        made.write_bytes(b"a,b\n" * 50_000)
        tasks.add_task(os.remove, made)
        return FileResponse(made, filename="export.csv")

    with serving(app) as port:
        reply = open_stream(port, "/export", {"range": "bytes=0-3"})
        assert reply.status == 200 and reply.read() == b"a,b\n" * 50_000
        assert reply.getheader("content-length") == "200000" and reply.getheader("etag")
        assert reply.getheader("content-disposition") == 'attachment; filename="export.csv"'
    for _ in range(100):
        if not made.exists():
            break
        time.sleep(0.05)
    assert not made.exists(), "the task ran once the file was sent"


def test_a_file_response_for_no_file_is_a_500_that_names_no_path(tmp_path) -> None:
    from ferrule.testing import TestClient

    app = App()

    @app.get("/missing")
    def missing() -> FileResponse:
        return FileResponse(tmp_path / "gone.txt")

    @app.get("/folder")
    def folder() -> FileResponse:
        return FileResponse(tmp_path)

    client = TestClient(app, raise_server_exceptions=False)
    for path in ("/missing", "/folder"):
        answer = client.get(path)
        assert answer.status_code == 500 and str(tmp_path) not in answer.text


def test_an_event_source_response_takes_sse_starlettes_ping() -> None:
    # Found by a FastAPI port: `EventSourceResponse(gen(), ping=5)` was a TypeError, a 500.
    app = App(sse_keep_alive_ms=3_600_000)

    @app.get("/events")
    async def events() -> EventSourceResponse:
        async def quiet() -> AsyncIterator[ServerSentEvent]:
            yield ServerSentEvent("hello")
            await asyncio.sleep(3)

        return EventSourceResponse(quiet(), ping=0.05)

    with serving(app) as port:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/events")
        response = connection.getresponse()
        seen = b""
        while b":\n\n" not in seen:
            seen += response.read1(1024)
        assert seen.startswith(b"data: hello\n\n"), seen
        connection.close()
    with pytest.raises(ValueError, match="ping is a number of seconds"):
        EventSourceResponse(iter([]), ping=-1)
