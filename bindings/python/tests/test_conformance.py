"""The shared fixture corpus, served by the Python API and checked by the same checker
(`ferrule-conformance`, a real HTTP client) that checks the Rust API: once with sync
handlers, once with async ones; then the same cases once more through the in-process
`TestClient` (the checker hands it each request over a pipe), which must answer as the
socket did."""

from __future__ import annotations

import base64
import json
import os
import pathlib
import subprocess

import pytest

from ferrule import App
from ferrule.testing import TestClient

from fixture_handlers import ASYNC, SYNC, install_hooks
from support import serving

FIXTURES = pathlib.Path(os.environ.get("FERRULE_FIXTURES_DIR", pathlib.Path(__file__).resolve().parents[3] / "fixtures"))
CHECKER = os.environ.get("FERRULE_CONFORMANCE", "ferrule-conformance")
CATEGORIES = sorted(p.stem for p in (FIXTURES / "conformance").glob("*.json"))


def build(category: str, handlers: dict) -> App:
    fixture = json.loads((FIXTURES / "conformance" / f"{category}.json").read_text())
    # The corpus states the core's defaults; Python's own differs in one setting (FastAPI's
    # trailing-slash redirect), which a fixture turns on where it judges it.
    settings = dict(fixture.get("app") or {})
    # The core's name for uvicorn's forwarded_allow_ips; none trusted unless the fixture says.
    settings["forwarded_allow_ips"] = settings.pop("trusted_proxies", [])
    app = App(**{"redirect_slashes": False, **settings})
    for route in fixture["routes"]:
        spec = dict(route)
        kind = spec.pop("handler")
        # A def handler that sleeps is a blocking handler, and is declared as one.
        app.add_route(spec, handlers[kind], blocking=kind == "sleep" and handlers is SYNC)
    install_hooks(app, fixture.get("hooks", []), asynchronous=handlers is ASYNC)
    return app


def test_the_corpus_is_there() -> None:
    assert len(CATEGORIES) >= 14, f"only {CATEGORIES} in {FIXTURES}"


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("category", CATEGORIES)
def test_category(category: str, mode: str) -> None:
    app = build(category, SYNC if mode == "sync" else ASYNC)
    with serving(app) as port:
        result = subprocess.run(
            [CHECKER, "check", "--fixtures", str(FIXTURES), "--category", category, "--base", f"http://127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 0, f"{category} ({mode}):\n{result.stdout}\n{result.stderr}"


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("category", CATEGORIES)
def test_category_in_process(category: str, mode: str) -> None:
    app = build(category, SYNC if mode == "sync" else ASYNC)
    command = [CHECKER, "check", "--via", "stdio", "--fixtures", str(FIXTURES), "--category", category]
    with TestClient(app, raise_server_exceptions=False) as client:
        checker = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert checker.stdin is not None and checker.stdout is not None and checker.stderr is not None
        for line in checker.stdout:
            request = json.loads(line)
            headers = [(name, base64.b64decode(value)) for name, value in request["headers"]]
            status, answer_headers, body, cut_off = client.send_raw(request["method"], request["path"], headers, base64.b64decode(request["body"]))
            answer = {
                "status": status,
                "headers": [[name, base64.b64encode(value).decode()] for name, value in answer_headers],
                "body": base64.b64encode(body).decode(),
                "cut_off": cut_off,
            }
            checker.stdin.write(json.dumps(answer) + "\n")
            checker.stdin.flush()
        checker.stdin.close()
        report = checker.stderr.read()
        assert checker.wait(300) == 0, f"{category} ({mode}, in process):\n{report}"
