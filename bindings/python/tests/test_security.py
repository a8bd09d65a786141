"""FastAPI's security dependencies (``ferrule.security``): the credential each reads, the 401 it
answers without one, and the scheme and requirement it puts in the OpenAPI document. Before them
a FastAPI app's `from fastapi.security import OAuth2PasswordBearer` had nothing to port to."""

import base64
from typing import Annotated, Iterator, Optional

import pytest

from ferrule import App, Depends, HTTPException, Security
from ferrule.security import (
    APIKeyCookie,
    APIKeyHeader,
    APIKeyQuery,
    HTTPAuthorizationCredentials,
    HTTPBasic,
    HTTPBasicCredentials,
    HTTPBearer,
    OAuth2PasswordBearer,
    OAuth2PasswordRequestForm,
    SecurityScopes,
)
from ferrule.testing import TestClient

from support import request, serving

USERS = {"alice": {"password": "wonder", "scopes": ["me"]}}


def shop() -> App:
    app = App(title="Shop")
    oauth2 = OAuth2PasswordBearer(tokenUrl="token", scopes={"me": "Read yourself", "items": "Read the items"})

    @app.post("/token")
    def login(form: OAuth2PasswordRequestForm = Depends()) -> dict:
        user = USERS.get(form.username)
        if not user or user["password"] != form.password:
            raise HTTPException(400, "Incorrect username or password")
        granted = [scope for scope in form.scopes if scope in user["scopes"]]
        return {"access_token": f"{form.username}:{'+'.join(granted)}", "token_type": "bearer"}

    async def current_user(security_scopes: SecurityScopes, token: str = Depends(oauth2)) -> dict:
        name, _, granted = token.partition(":")
        missing = [scope for scope in security_scopes.scopes if scope not in granted.split("+")]
        if name not in USERS or missing:
            raise HTTPException(401, "Not enough permissions", headers={"WWW-Authenticate": f'Bearer scope="{security_scopes.scope_str}"'})
        return {"name": name, "scopes": security_scopes.scopes}

    @app.get("/users/me")
    async def me(user: dict = Security(current_user, scopes=["me"])) -> dict:
        return user

    @app.get("/items")
    async def items(user: Annotated[dict, Security(current_user, scopes=["items"])]) -> list:
        return [user["name"]]

    return app


def test_the_password_flow_from_the_token_to_a_scoped_route() -> None:
    with TestClient(shop()) as client:
        missing = client.get("/users/me")
        assert (missing.status_code, missing.headers["www-authenticate"], missing.json()["detail"]) == (401, "Bearer", "Not authenticated")
        assert client.get("/users/me", headers={"Authorization": "Basic abc"}).status_code == 401, "a bearer scheme wants Bearer"
        refused = client.post("/token", data={"username": "alice", "password": "nope"})
        assert (refused.status_code, refused.json()["detail"]) == (400, "Incorrect username or password")
        assert client.post("/token", data={"password": "wonder"}).status_code == 422, "the form's username is required"
        token = client.post("/token", data={"username": "alice", "password": "wonder", "scope": "me items"}).json()
        assert token == {"access_token": "alice:me", "token_type": "bearer"}
        headers = {"Authorization": f"Bearer {token['access_token']}"}
        assert client.get("/users/me", headers=headers).json() == {"name": "alice", "scopes": ["me"]}
        scoped = client.get("/items", headers=headers)
        assert (scoped.status_code, scoped.headers["www-authenticate"]) == (401, 'Bearer scope="items"')


def test_the_document_names_each_scheme_and_what_each_route_needs_of_it() -> None:
    document = shop().openapi()
    scheme = document["components"]["securitySchemes"]["OAuth2PasswordBearer"]
    assert scheme == {"type": "oauth2", "flows": {"password": {"tokenUrl": "token", "scopes": {"me": "Read yourself", "items": "Read the items"}}}}
    assert document["paths"]["/users/me"]["get"]["security"] == [{"OAuth2PasswordBearer": ["me"]}]
    assert document["paths"]["/items"]["get"]["security"] == [{"OAuth2PasswordBearer": ["items"]}]
    assert "security" not in document["paths"]["/token"]["post"]
    form = document["paths"]["/token"]["post"]["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"]
    assert form["required"] == ["username", "password"] and "grant_type" in form["properties"]
    assert form["properties"]["password"]["format"] == "password", "the docs page masks it, as FastAPI's"


def test_http_basic_bearer_and_api_keys_read_their_credential_or_answer_401() -> None:
    app = App()
    basic = HTTPBasic(realm="shop")
    bearer = HTTPBearer(bearerFormat="JWT", auto_error=False)

    @app.get("/basic")
    def basic_route(credentials: HTTPBasicCredentials = Depends(basic)) -> dict:
        return {"user": credentials.username, "password": credentials.password}

    @app.get("/maybe")
    async def maybe(credentials: Optional[HTTPAuthorizationCredentials] = Depends(bearer)) -> dict:
        return {"scheme": credentials.scheme, "token": credentials.credentials} if credentials else {"token": None}

    @app.get("/keys")
    async def keys(
        header: str = Depends(APIKeyHeader(name="x-api-key")),
        query: Optional[str] = Depends(APIKeyQuery(name="key", auto_error=False)),
        cookie: Optional[str] = Depends(APIKeyCookie(name="session", auto_error=False)),
    ) -> dict:
        return {"header": header, "query": query, "cookie": cookie}

    with TestClient(app) as client:
        encoded = base64.b64encode(b"alice:s3:cret").decode()
        assert client.get("/basic", headers={"Authorization": f"Basic {encoded}"}).json() == {"user": "alice", "password": "s3:cret"}
        for sent in (None, "Bearer x", "Basic !!!", f"Basic {base64.b64encode(b'no-colon').decode()}"):
            reply = client.get("/basic", headers={"Authorization": sent} if sent else {})
            assert (reply.status_code, reply.headers["www-authenticate"]) == (401, 'Basic realm="shop"'), sent
        assert client.get("/maybe").json() == {"token": None}, "auto_error=False gives None"
        assert client.get("/maybe", headers={"Authorization": "bearer abc"}).json() == {"scheme": "bearer", "token": "abc"}
        refused = client.get("/keys")
        assert (refused.status_code, refused.headers["www-authenticate"]) == (401, "APIKey")
        both = client.get("/keys?key=q1", headers={"x-api-key": "h1", "cookie": "session=c1"})
        assert both.json() == {"header": "h1", "query": "q1", "cookie": "c1"}
    document = app.openapi()
    assert document["components"]["securitySchemes"] == {
        "HTTPBasic": {"type": "http", "scheme": "basic"},
        "HTTPBearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
        "APIKeyHeader": {"type": "apiKey", "in": "header", "name": "x-api-key"},
        "APIKeyQuery": {"type": "apiKey", "in": "query", "name": "key"},
        "APIKeyCookie": {"type": "apiKey", "in": "cookie", "name": "session"},
    }
    assert document["paths"]["/keys"]["get"]["security"] == [{"APIKeyHeader": []}, {"APIKeyQuery": []}, {"APIKeyCookie": []}]


def test_one_scheme_name_for_two_schemes_is_refused_at_the_decorator() -> None:
    app = App()
    first, second = APIKeyHeader(name="x-a"), APIKeyHeader(name="x-b")

    with pytest.raises(TypeError, match="security scheme 'APIKeyHeader' is two different schemes"):

        @app.get("/both")
        def both(a: str = Depends(first), b: str = Depends(second)) -> dict:
            return {}

    @app.get("/named")
    def named(a: str = Depends(first), b: str = Depends(APIKeyHeader(name="x-b", scheme_name="second"))) -> dict:
        return {}

    assert set(app.openapi()["components"]["securitySchemes"]) == {"APIKeyHeader", "second"}


def test_a_real_client_gets_the_401_and_its_challenge() -> None:
    with serving(shop()) as port:
        reply = request(port, "GET", "/users/me")
        assert (reply.status, reply.headers["www-authenticate"]) == (401, "Bearer")
        assert request(port, "GET", "/users/me", headers={"Authorization": "Bearer alice:me"}).json() == {"name": "alice", "scopes": ["me"]}


def admin_app() -> App:
    app = App(security_schemes={"apiKey": {"type": "apiKey", "in": "header", "name": "x-key"}})
    oauth2 = OAuth2PasswordBearer(tokenUrl="token", scopes={"me": "Read yourself", "admin": "Change anything"})

    async def current_user(security_scopes: SecurityScopes, token: str = Depends(oauth2)) -> str:
        granted = token.split("+")
        if any(scope not in granted for scope in security_scopes.scopes):
            raise HTTPException(403, "Not enough permissions")
        return token

    @app.get("/admin", dependencies=[Security(current_user, scopes=["admin"])])
    async def admin() -> dict:
        return {"admin": True}

    @app.get("/two")
    async def two(a: str = Security(current_user, scopes=["me"]), b: str = Security(current_user, scopes=["admin"])) -> dict:
        return {"a": a, "b": b}

    @app.get("/keyed", security=[{"apiKey": []}])
    def keyed() -> dict:
        return {}

    return app


# Found on review: scopes given in `dependencies=` never reached SecurityScopes (a token without
# them passed), nor did the scheme reach the document; and one request's cache answered the
# second Security() of a dependency with the first's value, skipping its scope check.
def test_scopes_in_route_dependencies_and_a_second_security_use_are_checked() -> None:
    with TestClient(admin_app()) as client:
        me_only = {"Authorization": "Bearer me"}
        assert client.get("/admin", headers=me_only).status_code == 403
        assert client.get("/admin", headers={"Authorization": "Bearer me+admin"}).json() == {"admin": True}
        assert client.get("/two", headers=me_only).status_code == 403
        assert client.get("/two", headers={"Authorization": "Bearer admin+me"}).json() == {"a": "admin+me", "b": "admin+me"}


def test_one_requirement_per_scheme_with_every_scope_and_a_routes_own_security() -> None:
    document = admin_app().openapi()
    assert document["paths"]["/admin"]["get"]["security"] == [{"OAuth2PasswordBearer": ["admin"]}]
    assert document["paths"]["/two"]["get"]["security"] == [{"OAuth2PasswordBearer": ["me", "admin"]}]
    assert document["paths"]["/keyed"]["get"]["security"] == [{"apiKey": []}]
    assert set(document["components"]["securitySchemes"]) == {"apiKey", "OAuth2PasswordBearer"}


def test_the_rest_of_fastapis_schemes_read_their_credentials_and_document_themselves() -> None:
    from ferrule.security import HTTPDigest, OAuth2, OAuth2AuthorizationCodeBearer, OAuth2PasswordRequestFormStrict, OpenIdConnect

    app = App()
    code = OAuth2AuthorizationCodeBearer(authorizationUrl="https://id.example/auth", tokenUrl="https://id.example/token", scopes={"openid": "Who you are"})
    oidc = OpenIdConnect(openIdConnectUrl="https://id.example/.well-known/openid-configuration")
    digest = HTTPDigest(auto_error=False)
    custom = OAuth2(flows={"clientCredentials": {"tokenUrl": "token", "scopes": {}}}, scheme_name="machines")

    @app.get("/code")
    async def with_code(token: str = Depends(code)) -> dict:
        return {"token": token}

    @app.get("/oidc")
    async def with_oidc(header: str = Depends(oidc), machine: str = Depends(custom)) -> dict:
        return {"header": header, "machine": machine}

    @app.get("/digest")
    async def with_digest(credentials: Optional[HTTPAuthorizationCredentials] = Depends(digest)) -> dict:
        return {"scheme": credentials.scheme if credentials else None}

    @app.post("/token")
    def token(form: OAuth2PasswordRequestFormStrict = Depends()) -> dict:
        return {"user": form.username, "grant": form.grant_type}

    with TestClient(app) as client:
        refused = client.get("/code")
        assert (refused.status_code, refused.headers["www-authenticate"]) == (401, "Bearer")
        assert client.get("/code", headers={"Authorization": "Bearer abc"}).json() == {"token": "abc"}
        assert client.get("/oidc", headers={"Authorization": "Bearer xyz"}).json() == {"header": "Bearer xyz", "machine": "Bearer xyz"}
        assert client.get("/digest").json() == {"scheme": None}
        assert client.get("/digest", headers={"Authorization": 'Digest username="a"'}).json() == {"scheme": "Digest"}
        assert client.post("/token", data={"username": "a", "password": "b"}).status_code == 422, "the strict form wants grant_type"
        assert client.post("/token", data={"grant_type": "password", "username": "a", "password": "b"}).json() == {"user": "a", "grant": "password"}
    schemes = app.openapi()["components"]["securitySchemes"]
    assert schemes["OAuth2AuthorizationCodeBearer"]["flows"]["authorizationCode"] == {
        "authorizationUrl": "https://id.example/auth", "tokenUrl": "https://id.example/token", "scopes": {"openid": "Who you are"}}
    assert schemes["OpenIdConnect"] == {"type": "openIdConnect", "openIdConnectUrl": "https://id.example/.well-known/openid-configuration"}
    assert schemes["HTTPDigest"] == {"type": "http", "scheme": "digest"}
    assert schemes["machines"]["flows"] == {"clientCredentials": {"tokenUrl": "token", "scopes": {}}}


# Found by a probe against FastAPI 0.165: a dependency below Security(..., scopes=[...]) that
# does not read the scopes (a `get_db`) was cached per scope set, so the user and the handler
# got two sessions in one request.
def test_a_dependency_that_reads_no_scopes_is_one_per_request_under_security() -> None:
    from ferrule import Security
    from ferrule.security import OAuth2PasswordBearer, SecurityScopes

    oauth2 = OAuth2PasswordBearer(tokenUrl="token", scopes={"me": "", "items": ""})
    opened: list[int] = []
    seen_scopes: list[list[str]] = []

    def get_db() -> Iterator[int]:
        opened.append(len(opened) + 1)
        yield opened[-1]

    def current_user(security_scopes: SecurityScopes, token: Annotated[str, Depends(oauth2)], db: Annotated[int, Depends(get_db)]) -> dict:
        seen_scopes.append(security_scopes.scopes)
        return {"session": db}

    app = App()

    @app.get("/items")
    def items(user: Annotated[dict, Security(current_user, scopes=["items"])], db: Annotated[int, Depends(get_db)]) -> dict:
        return {"user": user["session"], "handler": db}

    @app.get("/both")
    def both(a: Annotated[dict, Security(current_user, scopes=["me"])], b: Annotated[dict, Security(current_user, scopes=["items"])]) -> dict:
        return {"a": a["session"], "b": b["session"]}

    client = TestClient(app)
    assert client.get("/items", headers={"authorization": "Bearer t"}).json() == {"user": 1, "handler": 1}
    opened.clear()
    seen_scopes.clear()
    assert client.get("/both", headers={"authorization": "Bearer t"}).json() == {"a": 1, "b": 1}
    assert opened == [1], "one session"
    assert seen_scopes == [["me"], ["items"]], "what reads the scopes still runs once per scope set"
