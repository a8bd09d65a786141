"""Worker processes: `python -m ferrule module:app --workers 2` shares one port between two
processes, and SIGTERM/SIGINT drain in-flight requests before a clean exit."""

from __future__ import annotations

import os
import pathlib
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from support import request

HERE = pathlib.Path(__file__).resolve().parent


SERVING_ON = re.compile(rb"serving on http://127\.0\.0\.1:(\d+) ")


def reported_port(process: subprocess.Popen, deadline: float) -> int:
    """The port in the server's startup line. It binds port 0 itself: a port picked here and
    closed again could be taken by another program before the server binds it. Read a byte at a
    time (unbuffered), so what follows the line is left for `communicate()`."""
    line = b""
    while time.monotonic() < deadline:
        if not select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))[0]:
            break
        byte = process.stderr.read(1)
        if not byte:
            raise AssertionError(f"the server exited early: {process.communicate()}")
        line += byte
        if byte == b"\n":
            if match := SERVING_ON.search(line):
                return int(match.group(1))
            line = b""
    process.kill()
    raise TimeoutError("the server did not report its port within 30 s")


def start(workers: int, started: pathlib.Path, drain_ms: int = 10_000) -> tuple[subprocess.Popen, int]:
    """`started`: a file each `/slow` request appends its worker's pid to when its handler runs."""
    process = subprocess.Popen(
        [sys.executable, "-m", "ferrule", "workers_app:app", "--port", "0", "--workers", str(workers), "--threads", "1"],
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]), "FERRULE_TEST_DRAIN_MS": str(drain_ms), "FERRULE_TEST_STARTED": str(started)},
    )
    deadline = time.monotonic() + 30
    port = reported_port(process, deadline)
    while time.monotonic() < deadline:
        try:
            if request(port, "GET", "/pid").status == 200:
                return process, port
        except OSError:
            time.sleep(0.05)
        if process.poll() is not None:
            raise AssertionError(f"the server exited early: {process.communicate()}")
    process.kill()
    raise TimeoutError("the server did not answer within 30 s")


def wait_until_started(started: pathlib.Path) -> None:
    """Returns once a `/slow` request is in its handler: a signal sent before a request was read
    would find nothing in flight, however long a guessed sleep was."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if started.exists() and started.read_text().strip():
            return
        time.sleep(0.01)
    raise AssertionError("the slow request never reached its handler")


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_two_workers_share_the_port_and_drain_on_signal(stop_signal, tmp_path):
    started = tmp_path / "started"
    process, port = start(2, started)
    try:
        pids = set()
        deadline = time.monotonic() + 20
        while len(pids) < 2 and time.monotonic() < deadline:
            pids.add(request(port, "GET", "/pid").json()["pid"])
        assert len(pids) == 2, f"only worker(s) {pids} answered"
        assert process.pid not in pids, "the supervisor itself must not serve"

        slow: list = []
        in_flight = threading.Thread(target=lambda: slow.append(request(port, "GET", "/slow?ms=800")))
        in_flight.start()
        wait_until_started(started)
        process.send_signal(stop_signal)
        in_flight.join(10)
        assert slow and slow[0].status == 200, "the in-flight request was cut off instead of drained"
        assert process.wait(15) == 0
        with pytest.raises(OSError):
            request(port, "GET", "/pid")
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_single_process_drains_on_sigterm(tmp_path):
    started = tmp_path / "started"
    process, port = start(1, started)
    try:
        slow: list = []
        in_flight = threading.Thread(target=lambda: slow.append(request(port, "GET", "/slow?ms=600")))
        in_flight.start()
        wait_until_started(started)
        process.send_signal(signal.SIGTERM)
        in_flight.join(10)
        assert slow and slow[0].json()["slept_ms"] == 600
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_a_half_sent_request_does_not_hold_the_drain(tmp_path):
    started = tmp_path / "started"
    process, port = start(1, started)
    try:
        stalled = socket.create_connection(("127.0.0.1", port))
        stalled.sendall(b"GET /pid HTTP/1.1\r\nHost: a\r\n")
        slow: list = []
        in_flight = threading.Thread(target=lambda: slow.append(request(port, "GET", "/slow?ms=300")))
        in_flight.start()
        wait_until_started(started)
        process.send_signal(signal.SIGTERM)
        in_flight.join(10)
        finished = time.monotonic()
        assert process.wait(15) == 0
        # Before: the half-sent request held the drain for its whole 10 s deadline.
        assert time.monotonic() - finished < 5.0
        assert slow and slow[0].status == 200
        assert slow[0].headers["connection"] == "close"
        assert stalled.recv(100) == b"", "the stalled connection is closed unanswered"
        stalled.close()
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_a_drain_cut_off_is_one_line_and_status_1(tmp_path):
    started = tmp_path / "started"
    process, port = start(1, started, drain_ms=300)
    try:
        in_flight = threading.Thread(target=lambda: _ignore_errors(lambda: request(port, "GET", "/slow?ms=5000")))
        in_flight.start()
        wait_until_started(started)
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 1
        _, stderr = process.communicate()
        lines = [line for line in stderr.decode().splitlines() if not line.startswith("ferrule: serving on")]
        assert lines == ["ferrule: 1 connection(s) still had requests running after the 300 ms drain deadline and were cut off"], lines
        in_flight.join(10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_a_def_handler_running_at_the_signal_is_cut_off_at_the_drain_deadline(tmp_path):
    """Before: the signal's handler ran on the event loop, which the `def` handler held, so the
    drain began when the handler returned (4 s later) and the request was answered in full,
    exit 0, whatever `shutdown_timeout_ms` said."""
    started = tmp_path / "started"
    process, port = start(1, started, drain_ms=300)
    try:
        ended: list = []

        def client() -> None:
            sent = time.monotonic()
            try:
                ended.append(("answered", request(port, "GET", "/slow-sync?ms=4000").status, time.monotonic() - sent))
            except OSError as e:
                ended.append(("cut off", type(e).__name__, time.monotonic() - sent))

        in_flight = threading.Thread(target=client)
        in_flight.start()
        wait_until_started(started)
        process.send_signal(signal.SIGTERM)
        in_flight.join(10)
        assert ended and ended[0][0] == "cut off", ended
        assert ended[0][2] < 3.0, f"cut off at the 300 ms deadline, not when the 4 s handler ended: {ended}"
        assert process.wait(15) == 1
        _, stderr = process.communicate()
        assert "were cut off" in stderr.decode(), stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def _ignore_errors(call) -> None:
    try:
        call()
    except OSError:
        pass


def test_cli_reports_a_bad_target_in_one_line():
    result = subprocess.run([sys.executable, "-m", "ferrule", "no_such_module:app"], capture_output=True, text=True, cwd=HERE, timeout=30)
    assert result.returncode != 0
    assert result.stderr.strip().startswith("ferrule: cannot import 'no_such_module'")
    assert len(result.stderr.strip().splitlines()) == 1
