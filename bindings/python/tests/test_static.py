"""``app.mount("/static", StaticFiles(directory=...))``: files served by the core, with the
validators, ranges and refusals users of Starlette's StaticFiles expect."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ferrule import App, JSONResponse, Request, StaticFiles
from ferrule.testing import TestClient


@pytest.fixture()
def public(tmp_path: Path) -> Path:
    (tmp_path / "public" / "css").mkdir(parents=True)
    (tmp_path / "public" / "css" / "site.css").write_text("body { color: red; }\n")
    (tmp_path / "public" / "index.html").write_text("<h1>home</h1>")
    (tmp_path / "public" / ".env").write_text("SECRET=1")
    (tmp_path / "secret.txt").write_text("outside")
    os.symlink(tmp_path / "secret.txt", tmp_path / "public" / "link.txt")
    return tmp_path / "public"


def test_files_are_served_with_validators_and_ranges(public: Path) -> None:
    app = App()
    app.mount("/static", StaticFiles(directory=public, cache_control="public, max-age=300"), name="static")
    with TestClient(app) as client:
        css = client.get("/static/css/site.css")
        assert (css.status_code, css.text, css.headers["content-type"]) == (200, "body { color: red; }\n", "text/css; charset=utf-8")
        assert css.headers["cache-control"] == "public, max-age=300"
        assert client.get("/static/css/site.css", headers={"if-none-match": css.headers["etag"]}).status_code == 304
        part = client.get("/static/css/site.css", headers={"range": "bytes=0-3"})
        assert (part.status_code, part.text, part.headers["content-range"]) == (206, "body", "bytes 0-3/21")
        assert client.get("/static/").text == "<h1>home</h1>"


def test_climbing_out_and_hidden_files_are_refused(public: Path) -> None:
    app = App()
    app.mount("/static", StaticFiles(directory=public))
    with TestClient(app) as client:
        for path in ["/static/../secret.txt", "/static/%2e%2e/secret.txt", "/static/..%5csecret.txt", "/static/link.txt", "/static/.env", "/static/index.html%00.css"]:
            response = client.get(path)
            assert response.status_code == 404, path
            assert "outside" not in response.text and "SECRET" not in response.text


# Found on review: under a mount the not-found path had lost the mount's prefix, so
# /static/items/ (no such file) was redirected to the app's /items.
def test_a_missing_file_under_a_mount_is_not_redirected_to_a_route(public: Path) -> None:
    app = App()
    app.mount("/static", StaticFiles(directory=public))

    @app.get("/items")
    def items() -> list:
        return []

    @app.exception_handler(404)
    def missing(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"missing": request.path}, status_code=404)

    with TestClient(app, follow_redirects=False) as client:
        assert client.get("/static/items/").status_code == 404
        # The handler sees the path as sent, not the one below the mount.
        assert client.get("/static/items").json() == {"missing": "/static/items"}
        moved = client.get("/items/")
        assert (moved.status_code, moved.headers["location"]) == (307, "/items")


def test_a_missing_file_goes_the_apps_not_found_way(public: Path) -> None:
    app = App()
    app.mount("/", StaticFiles(directory=public))

    @app.get("/api/ping")
    def ping() -> dict:
        return {"pong": True}

    @app.exception_handler(404)
    def missing(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"missing": request.path}, status_code=404)

    with TestClient(app) as client:
        assert client.get("/api/ping").json() == {"pong": True}
        assert client.get("/css/site.css").status_code == 200
        assert client.get("/nope.js").json() == {"missing": "/nope.js"}


def test_a_mount_that_cannot_work_is_refused_at_once(tmp_path: Path) -> None:
    app = App()
    with pytest.raises(ValueError, match="cannot open directory"):
        app.mount("/static", StaticFiles(directory=tmp_path / "nope"))
    with pytest.raises(TypeError, match="only StaticFiles"):
        app.mount("/sub", object())
