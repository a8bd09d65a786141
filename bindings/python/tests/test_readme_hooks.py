"""The README's hooks example, run as written through the TestClient: an unauthenticated request
is refused by the on_request hook, the on_send hook and the middleware stamp every response (404s
included), the router's route sees what the hook left, and validation failures reach the
exception handler."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ferrule.testing import TestClient


def readme_block() -> str:
    text = Path(os.environ["FERRULE_README"]).read_text()
    start = text.index("### Hooks, error handlers, groups and the app's life cycle")
    section = text[start : text.index("\n### ", start + 1)]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "no python block in the README's hooks section"
    return found.group(1)


def test_the_readme_hooks_example_as_written() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(readme_block(), "README.md", "exec"), namespace)
    app = namespace["app"]

    @app.get("/items/{item_id:int}")
    def item(item_id: int) -> dict:
        return {"id": item_id}

    with TestClient(app) as client:
        assert app.state == {"pool": "opened"}  # the lifespan ran
        refused = client.get("/admin/stats")
        assert (refused.status_code, refused.json()["detail"]) == (401, "who are you?")
        allowed = client.get("/admin/stats", headers={"authorization": "Bearer x"})
        assert allowed.json() == {"by": "ada"}
        assert (allowed.headers["x-served-by"], allowed.headers["x-route"]) == ("ferrule", "/admin/stats")
        missing = client.get("/nowhere", headers={"authorization": "Bearer x"})
        assert (missing.status_code, missing.headers["x-route"]) == (404, "/nowhere")
        invalid = client.get("/items/seven", headers={"authorization": "Bearer x"})
        assert (invalid.status_code, invalid.json()) == (400, {"invalid": [["path", "item_id"]]})
    assert app.state == {}  # and ended after
