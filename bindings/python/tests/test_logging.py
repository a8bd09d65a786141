"""The core's log records reach Python's ``logging``: the access log, a handler's exception with
its traceback, the startup line under ``app.run()``, and ``log_level``."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import textwrap
import traceback

import pytest

from ferrule import App

from support import request, serving


def test_the_access_log_is_a_record_per_request_with_its_values_as_attributes(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ferrule")
    app = App(access_log=True)

    @app.get("/items/{n:int}")
    def item(n: int) -> dict:
        return {"n": n}

    with serving(app) as port:
        assert request(port, "GET", "/items/7", headers={"x-request-id": "rid-1"}).status == 200
        assert request(port, "GET", "/items/x").status == 422
    records = [r for r in caplog.records if r.name == "ferrule.access"]
    assert len(records) == 2, [r.getMessage() for r in caplog.records]
    ok, refused = records
    assert ok.levelno == logging.INFO
    assert re.fullmatch(r"GET /items/7 200 7B \d+\.\d\dms id=rid-1", ok.getMessage()), ok.getMessage()
    assert (ok.method, ok.path, ok.status, ok.bytes, ok.request_id) == ("GET", "/items/7", 200, 7, "rid-1")  # type: ignore[attr-defined]
    assert isinstance(ok.duration_ms, float)  # type: ignore[attr-defined]
    assert (refused.status, refused.path) == (422, "/items/x")  # type: ignore[attr-defined]
    assert re.fullmatch(r"[0-9a-f-]{36}", refused.request_id)  # type: ignore[attr-defined]


def test_a_handler_exception_is_logged_with_its_traceback_and_the_client_learns_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ferrule")
    app = App()

    def lookup() -> dict:
        raise KeyError("secret-detail")

    @app.get("/boom")
    def boom() -> dict:
        return lookup()

    with serving(app) as port:
        reply = request(port, "GET", "/boom")
    assert reply.status == 500
    assert b"secret-detail" not in reply.body
    raised = [r for r in caplog.records if r.name == "ferrule.handler" and r.exc_info]
    assert len(raised) == 1, [(r.name, r.getMessage()) for r in caplog.records]
    assert raised[0].levelno == logging.ERROR
    assert raised[0].getMessage() == "GET /boom raised an exception"
    assert raised[0].exc_info[0] is KeyError  # type: ignore[index]
    assert raised[0].route == "GET /boom"  # type: ignore[attr-defined]
    # The handler's own frames, down to where it raised (a README-driven probe found none).
    frames = [frame.name for frame in traceback.extract_tb(raised[0].exc_info[2])]  # type: ignore[index]
    assert frames[-2:] == ["boom", "lookup"], frames


def test_log_level_leaves_out_what_is_below_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="ferrule")
    app = App(access_log=True, log_level="warn")

    @app.get("/fine")
    def fine() -> str:
        return "ok"

    with serving(app) as port:
        assert request(port, "GET", "/fine").status == 200
    assert [r.getMessage() for r in caplog.records if r.name.startswith("ferrule")] == []


def test_an_unknown_log_level_names_the_setting() -> None:
    with pytest.raises(ValueError, match="log_level"):
        App(log_level="loud")


def _run(program: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Runs ``program`` (which starts an app and stops it with SIGTERM once serving)."""
    return subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True, timeout=60)


_SERVE_AND_STOP = textwrap.dedent("""
    import os, signal, threading, time, urllib.request
    from ferrule import App
    app = App(access_log=True)

    @app.get("/hi")
    def hi() -> str:
        return "hi"

    def client():
        while app.port is None:
            time.sleep(0.01)
        urllib.request.urlopen(f"http://127.0.0.1:{app.port}/hi").read()
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=client, daemon=True).start()
    """)


def test_app_run_writes_ferrule_lines_to_stderr_when_logging_is_not_configured() -> None:
    done = _run(_SERVE_AND_STOP + "app.run(port=0)\n")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert re.fullmatch(r"ferrule: serving on http://127\.0\.0\.1:\d+ \(pid \d+\)", lines[0]), lines
    assert re.fullmatch(r"ferrule: GET /hi 200 2B \d+\.\d\dms id=[0-9a-f-]{36}", lines[1]), lines
    assert len(lines) == 2, lines


def test_app_run_leaves_a_programs_own_logging_configuration_alone() -> None:
    program = "import logging, sys\nlogging.basicConfig(stream=sys.stdout, level=logging.INFO, format='%(name)s|%(levelname)s|%(message)s')\n"
    done = _run(program + _SERVE_AND_STOP + "app.run(port=0)\n")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", "nothing bypasses the program's handlers"
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ferrule.server|INFO|serving on http://127.0.0.1:"), lines
    assert lines[1].startswith("ferrule.access|INFO|GET /hi 200 2B "), lines


def test_a_field_named_like_a_record_attribute_is_renamed_not_lost(caplog: pytest.LogCaptureFixture) -> None:
    from ferrule import _logging

    caplog.set_level(logging.INFO, logger="ferrule")
    _logging.emit("ferrule.server", "info", "hello", {"name": "x", "status": 1})
    (record,) = [r for r in caplog.records if r.name == "ferrule.server"]
    assert (record.getMessage(), record.ferrule_name, record.status) == ("hello", "x", 1)  # type: ignore[attr-defined]
