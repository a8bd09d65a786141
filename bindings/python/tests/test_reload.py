"""``python -m ferrule module:app --reload``: the app is served again when its source changes,
and the supervisor stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

APP = '''from ferrule import App

app = App()


@app.get("/version")
def version() -> str:
    return "{version}"
'''


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answer(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/version", timeout=2) as response:
            return response.read().decode()
    except OSError:
        return ""


def wait_for(port: int, wanted: str) -> bool:
    until = time.monotonic() + 20
    while time.monotonic() < until:
        if answer(port) == wanted:
            return True
        time.sleep(0.1)
    return False


def test_a_changed_source_is_served_again(tmp_path: Path) -> None:
    (tmp_path / "reloadable.py").write_text(APP.format(version="one"))
    port = free_port()
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "ferrule", "reloadable:app", "--port", str(port), "--reload"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for(port, "one"), "the app started"
        (tmp_path / "notes.txt").write_text("not a source")
        (tmp_path / "reloadable.py").write_text(APP.format(version="two"))
        assert wait_for(port, "two"), "the changed app is served"
    finally:
        supervisor.send_signal(signal.SIGTERM)
        _, stderr = supervisor.communicate(timeout=20)
    assert supervisor.returncode == 0, stderr
    assert "reloadable.py changed; restarting" in stderr
    assert answer(port) == "", "the app stopped with its supervisor"
