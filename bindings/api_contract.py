"""Schemathesis against each binding's README app (//bindings:api_contract).

Each app is the first code block of its language's section of the README, served as written
except for its port (and one worker). Schemathesis loads the app's own /openapi.json and
generates requests for every operation — the documents' examples, their boundaries, then
random valid and invalid data — with two checks, the issue's: no response is a server error,
and every response matches the schema the document gives it for its status (the problem
schema for 4XX and 5XX, a declared response schema for a success). A fixed seed and a bounded
number of examples keep the run reproducible and cacheable. Before that, the served document is
checked to be valid OpenAPI 3.1 (openapi-spec-validator) and to equal the one the language's
export prints without serving (`python -m ferrule openapi`, `FERRULE_PRINT_OPENAPI=1 node app.js`
(what `npx ferrule openapi` sets), `ferrule openapi app.rb`).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

README = Path(os.environ["FERRULE_README"]).read_text()
WORK = Path(os.environ["TEST_TMPDIR"])

# Operations left out, each with its reason.
EXCLUDED = {
    # The README's proxy example fetches from 127.0.0.1:9000, where nothing listens here: its
    # 500 is the answer the README means (the upstream failed), not a defect of the server.
    "node": ["/upstream"],
}


def readme_block(heading: str, language: str) -> str:
    """The first ``language`` block after the heading that starts with ``heading``."""
    start = README.index(f"\n{heading}")
    match = re.compile(rf"```{language}\n(.*?)```", re.S).search(README, start)
    assert match, f"no {language} block after {heading!r}"
    return match.group(1)


def served_on(source: str, port: int, pattern: str, replacement: str) -> str:
    changed, count = re.subn(pattern, replacement, source)
    assert count == 1, f"the README app's listen line ({pattern}) changed: update api_contract.py"
    return changed


# Each app binds port 0 and names its port in the startup line every binding prints (a port
# picked here and closed again could be taken by another program before the app binds it).
SERVING_ON = re.compile(r"serving on http://127\.0\.0\.1:(\d+) \(pid")


# Each app: (the command that serves it on a port, the command that exports its document).
def python_app(port: int) -> tuple[list[str], list[str]]:
    path = WORK / "app.py"
    path.write_text(readme_block("### Python", "python"))
    site = os.environ["FERRULE_PYTHON_SITE"]
    launcher = (
        f"import sys; sys.path.insert(0, {site!r}); import runpy; "
        f"runpy.run_path({str(path)!r})['app'].run(host='127.0.0.1', port={port})"
    )
    export = f"import sys, runpy; sys.path[:0] = [{site!r}, {str(WORK)!r}]; sys.argv = ['ferrule', 'openapi', 'app:app']; runpy.run_module('ferrule', run_name='__main__')"
    return [sys.executable, "-c", launcher], [sys.executable, "-c", export]


def node_app(port: int) -> tuple[list[str], list[str]]:
    source = readme_block("### Node.js", "js")
    source = served_on(source, port, r"port: 8000, workers: 2", f"port: {port}")
    path = Path(os.environ["FERRULE_NODE_PROJECT"]) / "app.js"
    path.write_text(source)
    # An ES module that listens when loaded: listen() prints the document instead.
    return ["node", str(path)], ["env", "FERRULE_PRINT_OPENAPI=1", "node", str(path)]


def ruby_app(port: int) -> tuple[list[str], list[str]]:
    source = readme_block("### Ruby", "ruby")
    source = served_on(source, port, r"port: 8000, workers: 2", f"port: {port}")
    path = WORK / "app.rb"
    path.write_text(source)
    return ["ruby", str(path)], [str(Path(os.environ["GEM_HOME"]) / "bin" / "ferrule"), "openapi", str(path)]


def check_document(name: str, port: int, export: list[str]) -> None:
    """The served document is valid OpenAPI 3.1 and is the one the export prints."""
    from openapi_spec_validator import validate

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/openapi.json")
    served = json.loads(connection.getresponse().read())
    validate(served)
    printed = subprocess.run(export, capture_output=True, text=True, timeout=60, cwd=WORK)
    assert printed.returncode == 0, f"{name}: {' '.join(export)} failed:\n{printed.stderr}"
    assert json.loads(printed.stdout) == served, f"{name}: the exported document differs from the served one"
    print(f"== {name}: /openapi.json is valid OpenAPI 3.1 and equals the exported document", flush=True)


def wait_for_document(log: Path, server: subprocess.Popen) -> int:
    """The port the app said it serves on, once /openapi.json answers there."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"the app exited with {server.returncode} before serving")
        serving = SERVING_ON.search(log.read_text(errors="replace"))
        try:
            if serving:
                port = int(serving.group(1))
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                connection.request("GET", "/openapi.json")
                if connection.getresponse().status == 200:
                    return port
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("the app did not serve /openapi.json within 60 s")


def check(name: str, commands: tuple[list[str], list[str]]) -> bool:
    command, export = commands
    log = open(WORK / f"{name}-server.log", "w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        port = wait_for_document(WORK / f"{name}-server.log", server)
        check_document(name, port, export)
        arguments = [
            sys.executable, "-c", "import sys; from schemathesis.cli import schemathesis; sys.exit(schemathesis())",
            "run", f"http://127.0.0.1:{port}/openapi.json",
            "--checks", "not_a_server_error,response_schema_conformance",
            "--phases", "examples,coverage,fuzzing",
            "--max-examples", "300",
            "--seed", "20261125",
            "--generation-database", "none",
            "--workers", "1",
            "--request-timeout", "10",
            "--no-color",
        ]
        for path in EXCLUDED.get(name, []):
            arguments += ["--exclude-path", path]
        result = subprocess.run(arguments, capture_output=True, text=True, timeout=300, cwd=WORK)
        print(f"== {name}: schemathesis exit {result.returncode}\n{result.stdout}{result.stderr}", flush=True)
        return result.returncode == 0
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
        print(f"-- {name} server log:\n{(WORK / f'{name}-server.log').read_text()[-4000:]}", flush=True)


def main() -> int:
    failed = []
    for name, app in (("python", python_app), ("node", node_app), ("ruby", ruby_app)):
        if not check(name, app(0)):
            failed.append(name)
    if failed:
        print(f"api_contract: Schemathesis found failures in: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
