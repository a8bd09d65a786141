"""Worker processes: `python -m ferrule module:app --workers 2` shares one port between two
processes, and SIGTERM/SIGINT drain in-flight requests before a clean exit."""

from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from support import request

HERE = pathlib.Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(workers: int) -> tuple[subprocess.Popen, int]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "ferrule", "workers_app:app", "--port", str(port), "--workers", str(workers), "--threads", "1"],
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])},
    )
    deadline = time.monotonic() + 30
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


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_two_workers_share_the_port_and_drain_on_signal(stop_signal):
    process, port = start(2)
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
        time.sleep(0.3)
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


def test_single_process_drains_on_sigterm():
    process, port = start(1)
    try:
        slow: list = []
        in_flight = threading.Thread(target=lambda: slow.append(request(port, "GET", "/slow?ms=600")))
        in_flight.start()
        time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        in_flight.join(10)
        assert slow and slow[0].json()["slept_ms"] == 600
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_cli_reports_a_bad_target_in_one_line():
    result = subprocess.run([sys.executable, "-m", "ferrule", "no_such_module:app"], capture_output=True, text=True, cwd=HERE, timeout=30)
    assert result.returncode != 0
    assert result.stderr.strip().startswith("ferrule: cannot import 'no_such_module'")
    assert len(result.stderr.strip().splitlines()) == 1
