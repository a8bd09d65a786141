"""Serves the README's Python example for the docs page test (docs_page.js): the first
```python block of the README, as written, on 127.0.0.1 and a free port.

Prints `{"listening": PORT}` once serving, then `{"seen": {...}}` for every request the server
answered (its access log: method, path, status, request id), one JSON object a line, and stops
when standard input closes. The one change to the example: its App logs every request, so the
test can tell a request the server really saw from one the page only claims to have made.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
import types
from pathlib import Path
from typing import Any

import ferrule
from ferrule.server import new_event_loop, run_until_complete


def say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


class Seen(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        fields = ("method", "path", "status", "request_id")
        say({"seen": {name: getattr(record, name, None) for name in fields}})


class LoggedApp(ferrule.App):
    def __init__(self, **settings: Any) -> None:
        super().__init__(**{**settings, "access_log": True})


def readme_app(readme: Path) -> ferrule.App:
    found = re.search(r"^```python\n(.*?)^```$", readme.read_text(), re.S | re.M)
    assert found, "no ```python block in the README"
    ferrule.App = LoggedApp  # type: ignore[misc]  # what the example's `from ferrule import App` gets
    # A module of its own (dataclasses look their module up), not __main__: its app.run() stays out.
    module = types.ModuleType("readme_example")
    sys.modules[module.__name__] = module
    exec(compile(found.group(1), "README.md", "exec"), module.__dict__)
    app = module.app
    assert isinstance(app, LoggedApp), type(app)
    return app


def main() -> None:
    access = logging.getLogger("ferrule.access")
    access.addHandler(Seen())
    access.setLevel(logging.INFO)
    access.propagate = False
    app = readme_app(Path(sys.argv[1]))
    loop = new_event_loop()
    asyncio.set_event_loop(loop)

    def stop_when_stdin_closes() -> None:
        sys.stdin.buffer.read()
        loop.call_soon_threadsafe(app.shutdown)

    threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
    run_until_complete(loop, app.serve("127.0.0.1", 0, threads=2, on_ready=lambda port: say({"listening": port})))


if __name__ == "__main__":
    main()
