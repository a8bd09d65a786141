"""The OpenAPI document, built by the core from the routes: served at /openapi.json to a real
client, the same as ``app.openapi()`` and ``python -m ferrule openapi``, with docstrings,
route options and class names where FastAPI users expect them."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap
from typing import Optional, TypedDict

import pytest

from ferrule import App, File, Query, UploadFile

from support import request, serving


@dataclasses.dataclass
class Address:
    city: str


@dataclasses.dataclass
class User:
    name: str
    address: Optional[Address] = None


def shop() -> App:
    app = App(title="Shop", version="2.1", description="Sells things.", openapi_tags=[{"name": "users"}])

    @app.get("/users/{user_id:int}", summary="One user", tags=["users"])
    def read_user(user_id: int, verbose: bool = Query(False)) -> dict:
        """Reads a user.

        Unknown ids get a 404."""
        return {"id": user_id}

    @app.post("/users", status_code=201, deprecated=True, operation_id="createUser")
    def create_user(user: User) -> dict:
        return {"name": user.name}

    @app.get("/internal", include_in_schema=False)
    def internal() -> str:
        return "hidden"

    return app


def test_the_served_document_is_the_apps_and_describes_each_route() -> None:
    app = shop()
    document = app.openapi()
    with serving(app) as port:
        reply = request(port, "GET", "/openapi.json")
    assert reply.status == 200
    assert reply.headers["content-type"] == "application/json"
    assert reply.json() == document

    assert document["openapi"] == "3.1.0"
    assert document["info"] == {"title": "Shop", "version": "2.1", "description": "Sells things."}
    assert document["tags"] == [{"name": "users"}]
    assert set(document["paths"]) == {"/users/{user_id}", "/users"}, "include_in_schema=False is left out"

    read = document["paths"]["/users/{user_id}"]["get"]
    assert read["summary"] == "One user"
    assert read["description"] == "Reads a user.\n\nUnknown ids get a 404.", "the docstring, as FastAPI takes it"
    assert read["tags"] == ["users"]
    assert read["parameters"] == [
        {"name": "user_id", "in": "path", "required": True, "schema": {"type": "integer"}},
        {"name": "verbose", "in": "query", "required": False, "schema": {"type": "boolean", "default": False}},
    ]
    problem = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    assert read["responses"]["422"]["content"] == problem

    create = document["paths"]["/users"]["post"]
    assert (create["operationId"], create["deprecated"]) == ("createUser", True)
    assert create["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/User"}
    schemas = document["components"]["schemas"]
    assert schemas["User"]["required"] == ["name"]
    address = schemas["User"]["properties"]["address"]
    assert {"$ref": "#/components/schemas/Address"} in address.get("anyOf", [address]), address
    assert schemas["Address"]["properties"] == {"city": {"type": "string"}}


class Shipment(TypedDict):
    zone: str
    item: str


@dataclasses.dataclass
class Order:
    zone: str
    item: str
    amount: int = 1


def test_the_document_lists_fields_and_routes_in_the_order_they_were_written() -> None:
    # As FastAPI writes them, so the docs page and generated clients read a model as declared;
    # the core kept schemas in sorted maps and wrote `amount, item, zone`.
    app = App()

    @app.post("/orders")
    def place(order: Order) -> dict:
        return {}

    @app.get("/a-status")
    def status(zeta: int = 0, alpha: int = 0) -> dict:
        return {}

    @app.post("/shipments")
    def ship(shipment: Shipment) -> dict:
        return {}

    with serving(app) as port:
        document = request(port, "GET", "/openapi.json").json()
    order = document["components"]["schemas"]["Order"]
    assert list(order["properties"]) == ["zone", "item", "amount"]
    assert order["required"] == ["zone", "item"]
    assert list(document["paths"]) == ["/orders", "/a-status", "/shipments"]
    assert [p["name"] for p in document["paths"]["/a-status"]["get"]["parameters"]] == ["zeta", "alpha"]
    shipment = document["components"]["schemas"]["Shipment"]
    assert (list(shipment["properties"]), shipment["required"]) == (["zone", "item"], ["zone", "item"]), "a TypedDict's too"


def test_openapi_url_moves_or_switches_off_the_document_and_a_route_of_ones_own_wins() -> None:
    moved = App(openapi_url="/api/schema.json")
    off = App(openapi_url=None)
    own = App()

    @own.get("/openapi.json")
    def mine() -> dict:
        return {"mine": True}

    for app, path, expected in ((moved, "/api/schema.json", 200), (moved, "/openapi.json", 404), (off, "/openapi.json", 404)):
        with serving(app) as port:
            assert request(port, "GET", path).status == expected, path
    with serving(own) as port:
        assert request(port, "GET", "/openapi.json").json() == {"mine": True}


def test_the_docs_page_is_served_at_docs_url_unless_switched_off_as_in_fastapi() -> None:
    default, moved, off, no_document = App(title="Shop"), App(docs_url="/api/docs"), App(docs_url=None), App(openapi_url=None)
    with serving(default) as port:
        page = request(port, "GET", "/docs")
    assert (page.status, page.headers["content-type"], page.headers["cache-control"]) == (200, "text/html; charset=utf-8", "no-cache")
    assert "<title>Shop - Swagger UI</title>" in page.text
    assert 'data-openapi-url="./openapi.json"' in page.text
    asset = re.search(r'<script src="\./(docs/assets/[^"]+/swagger-ui-bundle\.js)"', page.text)
    assert asset, page.text
    with serving(default) as port:
        bundle = request(port, "GET", "/" + asset.group(1))
    assert (bundle.status, bundle.headers["cache-control"]) == (200, "public, max-age=31536000, immutable")
    assert b"SwaggerUIBundle" in bundle.body
    for app, path, expected in ((moved, "/api/docs", 200), (moved, "/docs", 404), (off, "/docs", 404), (no_document, "/docs", 404)):
        with serving(app) as port:
            assert request(port, "GET", path).status == expected, path
    with pytest.raises(ValueError, match="docs_url must be a path starting with `/`"):
        App(docs_url="docs")


def test_a_bad_openapi_url_is_refused_in_one_line() -> None:
    try:
        App(openapi_url="openapi.json")
    except ValueError as e:
        assert "openapi_url must be a path starting with `/`" in str(e)
    else:
        raise AssertionError("a relative openapi_url was accepted")


def test_python_m_ferrule_openapi_prints_the_document_without_serving(tmp_path: pathlib.Path) -> None:
    (tmp_path / "shop_app.py").write_text(
        textwrap.dedent(
            """
            from ferrule import App

            app = App(title="Shop")

            @app.get("/items/{item_id:int}")
            def item(item_id: int) -> dict:
                return {"id": item_id}
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "ferrule", "openapi", "shop_app:app"], cwd=tmp_path, capture_output=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["info"]["title"] == "Shop"
    assert list(document["paths"]) == ["/items/{item_id}"]
    missing = subprocess.run([sys.executable, "-m", "ferrule", "openapi", "shop_app:nothing"], cwd=tmp_path, capture_output=True, timeout=60, env=env)
    assert missing.returncode == 1
    assert missing.stderr.decode().strip() == "ferrule: module 'shop_app' has no attribute 'nothing'"


def test_an_arrays_openapi_style_is_how_it_is_read_and_documented() -> None:
    app = App()

    @app.get("/find")
    def find(ids: list[int] = Query([], style="pipeDelimited"), tags: list[str] = Query([], description="any of")) -> dict:
        return {"ids": ids, "tags": tags}

    with serving(app) as port:
        assert request(port, "GET", "/find?ids=1|2&tags[]=a&tags[]=b").json() == {"ids": [1, 2], "tags": ["a", "b"]}
    ids, tags = app.openapi()["paths"]["/find"]["get"]["parameters"]
    assert (ids["style"], ids["schema"]["items"]) == ("pipeDelimited", {"type": "integer"})
    assert tags["description"] == "any of"


def test_file_fields_accept_their_media_types_and_a_list_its_count() -> None:
    app = App()

    @app.post("/avatar")
    async def avatar(
        picture: UploadFile = File(media_types=["image/png", "image/jpeg"]),
        extras: list[UploadFile] = File([], media_types=["image/*"], max_length=1),
    ) -> dict:
        return {"picture": picture.filename, "extras": [e.filename for e in extras]}

    def upload(parts: list[tuple[str, str, str]]) -> tuple[bytes, str]:
        boundary = "ferrule-test"
        body = b"".join(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\nContent-Type: {kind}\r\n\r\nx\r\n'.encode()
            for name, filename, kind in parts
        ) + f"--{boundary}--\r\n".encode()
        return body, f"multipart/form-data; boundary={boundary}"

    with serving(app) as port:
        body, kind = upload([("picture", "me.png", "image/png"), ("extras", "a.gif", "image/gif")])
        assert request(port, "POST", "/avatar", body=body, headers={"content-type": kind}).json() == {"picture": "me.png", "extras": ["a.gif"]}
        body, kind = upload([("picture", "me.txt", "text/plain")])
        reply = request(port, "POST", "/avatar", body=body, headers={"content-type": kind})
        assert reply.status == 422
        assert [(e["type"], e["loc"]) for e in reply.json()["errors"]] == [("file_content_type", ["body", "picture"])]
        body, kind = upload([("picture", "me.png", "image/png"), ("extras", "a.png", "image/png"), ("extras", "b.png", "image/png")])
        reply = request(port, "POST", "/avatar", body=body, headers={"content-type": kind})
        assert [(e["type"], e["loc"]) for e in reply.json()["errors"]] == [("too_long", ["body", "extras"])]
    encoding = app.openapi()["paths"]["/avatar"]["post"]["requestBody"]["content"]["multipart/form-data"]["encoding"]
    assert encoding == {"picture": {"contentType": "image/png, image/jpeg"}, "extras": {"contentType": "image/*"}}


def test_the_documents_are_valid_openapi_3_1() -> None:
    from openapi_spec_validator import validate

    app = shop()

    @app.post("/upload", summary="A form with files")
    def upload(doc: UploadFile = File(media_types=["application/pdf"]), pages: list[UploadFile] = File([], max_length=3)) -> dict:
        return {}

    @app.get("/search")
    def search(ids: list[int] = Query([], style="pipeDelimited"), q: Optional[str] = None) -> dict:
        return {}

    @app.put("/files/{rest:path}")
    async def put_file(rest: str, body: bytes) -> str:
        return rest

    validate(app.openapi())  # raises on anything OpenAPI 3.1 (and its JSON Schema dialect) refuses
    validate(App(servers=[{"url": "https://api.example.com"}]).openapi())


def test_response_description_and_response_model_by_alias_are_fastapis() -> None:
    # Found by a FastAPI port: both were unknown options, a TypeError at the decorator, so
    # the module did not import.
    from pydantic import BaseModel

    from ferrule.testing import TestClient

    class Item(BaseModel):
        name: str

    app = App()

    @app.get("/item", response_description="The item asked for", response_model_by_alias=True, response_model=Item)
    def item():
        return Item(name="pen")

    document = TestClient(app).get("/openapi.json").json()
    assert document["paths"]["/item"]["get"]["responses"]["200"]["description"] == "The item asked for"
    with pytest.raises(ValueError, match="response_model_by_alias=False is not supported"):
        app.get("/other", response_model_by_alias=False, response_model=Item)(item)


def test_responses_document_more_answers_and_filter_none_as_in_fastapi() -> None:
    # Found in the open list of a probe: `responses=` was an unknown option, a TypeError at the
    # decorator, for FastAPI code that documents its 404s.
    from openapi_spec_validator import validate
    from pydantic import BaseModel

    from ferrule import APIRouter, HTTPException
    from ferrule.responses import JSONResponse
    from ferrule.testing import TestClient

    class Message(BaseModel):
        message: str

    class Item(BaseModel):
        id: str
        value: str

    app = App(responses={500: {"description": "Something broke"}})

    @app.get("/items/{item_id}", response_model=Item, responses={404: {"model": Message, "description": "Not there"}, "200": {"content": {"image/png": {}}, "description": "The item, or its picture"}})
    def read_item(item_id: str):
        if item_id == "gone":
            return JSONResponse(status_code=404, content={"message": "Item not found", "hint": "try foo"})
        if item_id == "raised":
            raise HTTPException(status_code=404, detail="no such item")
        return {"id": item_id, "value": "there", "secret": "s"}

    legacy = APIRouter(prefix="/legacy", deprecated=True, responses={404: {"description": "Never there"}})

    @legacy.get("/old", responses={404: {"description": "Not found, ever"}})
    def old() -> dict:
        return {}

    app.include_router(legacy, responses={418: {"description": "A teapot"}})

    client = TestClient(app)
    document = client.get("/openapi.json").json()
    validate(document)
    responses = document["paths"]["/items/{item_id}"]["get"]["responses"]
    assert responses["404"] == {"description": "Not there", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Message"}}}}
    assert document["components"]["schemas"]["Message"]["required"] == ["message"]
    assert responses["200"]["description"] == "The item, or its picture"
    assert set(responses["200"]["content"]) == {"application/json", "image/png"}
    assert responses["200"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Item"}
    assert responses["500"]["description"] == "Something broke"
    old_op = document["paths"]["/legacy/old"]["get"]
    assert old_op["deprecated"] is True
    assert old_op["responses"]["404"]["description"] == "Not found, ever", "the route's own over its router's"
    assert old_op["responses"]["418"]["description"] == "A teapot"
    assert old_op["responses"]["500"]["description"] == "Something broke"

    # Documentation only: the 404's body is what the handler sent, not filtered by Message.
    assert client.get("/items/gone").json() == {"message": "Item not found", "hint": "try foo"}
    assert client.get("/items/raised").status_code == 404
    assert client.get("/items/raised").json()["detail"] == "no such item"
    assert client.get("/items/a").json() == {"id": "a", "value": "there"}


def test_a_response_that_is_not_a_dict_is_refused_naming_it() -> None:
    app = App()
    with pytest.raises(TypeError, match=r"/x: responses\[404\] is str"):
        app.get("/x", responses={404: "Not found"})(lambda: {})
    with pytest.raises(ValueError, match='documented response status "40"'):
        app.get("/y", responses={40: {"description": "?"}})(lambda: {})
        app.openapi()
