"""What a FastAPI user tries on the first day, each of which once went wrong: Express-style
``:id`` segments, a route declared twice, a busy port, header lists, and statuses or headers
that cannot be sent."""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys

import pytest

from ferrule import App, HTTPException, Response

from support import request, serving

HERE = pathlib.Path(__file__).resolve().parent


def test_a_colon_segment_is_a_parameter_and_a_clash_fails_at_its_decorator() -> None:
    app = App()

    @app.get("/users/:id")
    def user(id: str) -> dict:
        return {"id": id}

    with pytest.raises(ValueError, match=r"GET /users/\{id\} is declared twice"):

        @app.get("/users/{id}")
        def again(id: str) -> str:
            return id

    with pytest.raises(ValueError, match=r"matches the same paths as /users/\{id\}"):

        @app.post("/users/{name}")
        def other(name: str) -> str:
            return name

    with serving(app) as port:
        assert request(port, "GET", "/users/ada").json() == {"id": "ada"}


def test_a_busy_port_is_one_line_and_status_1_with_or_without_workers() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        for workers in ("1", "2"):
            done = subprocess.run(
                [sys.executable, "-m", "ferrule", "workers_app:app", "--port", str(port), "--workers", workers],
                cwd=HERE,
                capture_output=True,
                timeout=60,
                env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])},
            )
            lines = done.stderr.decode().splitlines()
            assert done.returncode == 1, lines
            assert len(lines) == 1 and lines[0].startswith(f"ferrule: cannot listen on 127.0.0.1:{port}: "), lines
            assert "in use" in lines[0], lines


def test_header_lists_repeat_and_what_cannot_be_sent_is_a_bare_500() -> None:
    app = App()

    @app.get("/cookies")
    def cookies() -> Response:
        return Response(200, {"set-cookie": ["a=1; Path=/", "b=2; Path=/"], "x-one": "1"}, "ok")

    @app.get("/wraps")
    def wraps() -> None:
        raise HTTPException(65736, "a 16-bit cast would send 200")

    @app.get("/bad-header")
    def bad_header() -> None:
        raise HTTPException(401, "who?", {"www-authenticate": "a\nb"})

    @app.get("/teapot")
    def teapot() -> None:
        raise HTTPException(418, "short and stout", {"retry-after": ["5"]})

    with serving(app) as port:
        reply = request(port, "GET", "/cookies")
        assert reply.header_values("set-cookie") == ["a=1; Path=/", "b=2; Path=/"]
        assert reply.headers["x-one"] == "1"
        for path in ("/wraps", "/bad-header"):
            failed = request(port, "GET", path)
            assert failed.status == 500, path
            assert b"16-bit" not in failed.body and b"who?" not in failed.body
        teapot = request(port, "GET", "/teapot")
        assert (teapot.status, teapot.headers["retry-after"], teapot.json()["detail"]) == (418, "5", "short and stout")
