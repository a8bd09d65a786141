"""Starlette's `add_middleware(CORSMiddleware | GZipMiddleware, ...)` and `App(middleware=[...])`:
the core's CORS and compression, set with Starlette's options, checked over a real socket."""

from __future__ import annotations

import gzip
from typing import Any

import pytest

from ferrule import App, Request
from ferrule.middleware import Middleware
from ferrule.middleware.cors import CORSMiddleware
from ferrule.middleware.gzip import GZipMiddleware
from ferrule.middleware.sessions import SessionMiddleware
from ferrule.middleware.trustedhost import TrustedHostMiddleware
from ferrule.testing import TestClient
from support import request, serving


def shop(**settings: Any) -> App:
    app = App(**settings)

    @app.get("/items")
    def items() -> dict:
        return {"items": ["pen"] * 400}

    @app.get("/small")
    def small() -> dict:
        return {"n": 1}

    return app


def test_cors_middleware_added_below_the_routes_answers_as_starlettes() -> None:
    app = shop()
    # Below the routes, as many FastAPI apps write it.
    app.add_middleware(CORSMiddleware, allow_origins=["https://shop.example"], allow_origin_regex=r"https://.*\.preview\.example", allow_methods=["GET", "POST"], allow_credentials=True, expose_headers=["x-total"])
    with serving(app) as port:
        preflight = request(port, "OPTIONS", "/items", headers={"origin": "https://pr-7.preview.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type"})
        simple = request(port, "GET", "/items", headers={"origin": "https://shop.example"})
        stranger = request(port, "GET", "/items", headers={"origin": "https://pr-7.preview.example.evil.test"})
    assert preflight.status == 200
    assert preflight.headers["access-control-allow-origin"] == "https://pr-7.preview.example"
    assert set(preflight.headers["access-control-allow-methods"].split(",")) == {"GET", "POST"}
    # Starlette's default: the safelisted headers are allowed whatever the list says.
    assert "content-type" in preflight.headers["access-control-allow-headers"].lower()
    assert preflight.headers["access-control-max-age"] == "600"
    assert preflight.headers["access-control-allow-credentials"] == "true"
    assert (simple.status, simple.headers["access-control-allow-origin"], simple.headers["access-control-expose-headers"]) == (200, "https://shop.example", "x-total")
    assert stranger.status == 200 and "access-control-allow-origin" not in stranger.headers


def test_gzip_middleware_compresses_what_is_large_enough_with_gzip_only() -> None:
    app = shop(middleware=[Middleware(GZipMiddleware, minimum_size=1000, compresslevel=1)])
    with serving(app) as port:
        large = request(port, "GET", "/items", headers={"accept-encoding": "br, zstd, gzip"})
        small_one = request(port, "GET", "/small", headers={"accept-encoding": "gzip"})
    assert large.headers["content-encoding"] == "gzip", "Starlette's middleware is gzip alone"
    assert gzip.decompress(large.body) == b'{"items":[' + b",".join([b'"pen"'] * 400) + b"]}"
    assert "content-encoding" not in small_one.headers


def test_the_in_process_client_sees_the_middleware_too() -> None:
    app = shop()
    app.add_middleware(GZipMiddleware)
    app.add_middleware(CORSMiddleware, allow_origins=["*"])
    client = TestClient(app)
    answer = client.get("/items", headers={"origin": "https://any.example", "accept-encoding": "gzip"})
    assert (answer.headers["access-control-allow-origin"], answer.headers["content-encoding"]) == ("*", "gzip")


def test_a_middleware_the_core_cannot_do_or_set_twice_is_refused_in_one_line() -> None:
    app = shop()

    class Timing:
        def __init__(self, app: object) -> None:
            self.app = app

    with pytest.raises(TypeError, match=r'add_middleware\(.*Timing\): only ferrule.middleware.cors.CORSMiddleware, .*SessionMiddleware; .*@app.middleware\("http"\)'):
        app.add_middleware(Timing)
    with pytest.raises(TypeError, match="allow_origin"):
        app.add_middleware(CORSMiddleware, allow_origin=["*"])
    with pytest.raises(TypeError, match="allow_origins is a list of strings"):
        app.add_middleware(CORSMiddleware, allow_origins="https://a.example")
    with pytest.raises(ValueError, match="compresslevel is 1 to 9"):
        app.add_middleware(GZipMiddleware, compresslevel=11)
    with pytest.raises(ValueError, match="is not a regular expression"):
        app.add_middleware(CORSMiddleware, allow_origin_regex="(")
    app.add_middleware(CORSMiddleware, allow_origins=["*"])
    with pytest.raises(ValueError, match=r"cors is already set by add_middleware\(CORSMiddleware\)"):
        app.add_middleware(CORSMiddleware, allow_origins=["https://b.example"])
    configured = App(compression={"min_size": 10})
    with pytest.raises(ValueError, match=r"compression is already set by App\(compression=...\)"):
        configured.add_middleware(GZipMiddleware)


def test_trusted_host_middleware_serves_its_hosts_only_and_redirects_to_a_listed_www_name() -> None:
    app = shop()
    called: list[str] = []

    @app.get("/host")
    def host(request: Request) -> dict:
        called.append(request.headers["host"])
        return {"host": request.url.hostname}

    app.add_middleware(TrustedHostMiddleware, allowed_hosts=["shop.example", "*.shop.example", "www.brand.example"])
    with serving(app) as port:
        served = request(port, "GET", "/host", headers={"host": "Shop.Example:8000"})
        under = request(port, "GET", "/host", headers={"host": "eu.shop.example"})
        refused = request(port, "GET", "/host", headers={"host": "evil.example"})
        unlisted_address = request(port, "GET", "/host")
        moved = request(port, "GET", "/host?x=1", headers={"host": "brand.example"})
    assert (served.status, under.status) == (200, 200)
    assert (refused.status, refused.headers["content-type"]) == (400, "application/problem+json")
    assert b"evil.example" not in refused.body, "an attacker's host is not echoed"
    assert unlisted_address.status == 400, "127.0.0.1 is served only when listed"
    assert (moved.status, moved.headers["location"]) == (307, "http://www.brand.example/host?x=1")
    assert called == ["Shop.Example:8000", "eu.shop.example"], "a refused request never reaches the handler"


def test_allowed_hosts_reach_the_test_client_and_www_redirect_can_be_off() -> None:
    app = shop(allowed_hosts=["testserver", "www.brand.example"], www_redirect=False)
    client = TestClient(app)
    assert client.get("/small").status_code == 200
    assert client.get("/small", headers={"host": "brand.example"}).status_code == 400
    assert TestClient(shop(allowed_hosts=["api.example"])).get("/small").status_code == 400
    # Starlette's default list is every host.
    everyone = shop()
    everyone.add_middleware(TrustedHostMiddleware)
    assert TestClient(everyone).get("/small", headers={"host": "anything.example"}).status_code == 200


def test_a_host_pattern_that_is_no_pattern_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"allowed_hosts: `\*example.com` is no pattern"):
        shop().add_middleware(TrustedHostMiddleware, allowed_hosts=["*example.com"])
    with pytest.raises(TypeError, match="allowed_hosts is a list of host names, not the string 'example.com'"):
        shop().add_middleware(TrustedHostMiddleware, allowed_hosts="example.com")
    with pytest.raises(ValueError, match=r"allowed_hosts: `a.\*.example` is no pattern"):
        App(allowed_hosts=["a.*.example"])


def test_middleware_cannot_change_while_the_app_serves() -> None:
    app = shop()
    with serving(app):
        with pytest.raises(ValueError, match="the app is serving"):
            app.add_middleware(GZipMiddleware)


def accounts(**options: Any) -> App:
    app = App()
    app.add_middleware(SessionMiddleware, secret_key="k" * 64, **options)

    @app.post("/login")
    def login(request: Request) -> dict:
        request.session["user"] = "ada"
        request.session["visits"] = 0
        return {"ok": True}

    @app.get("/me")
    def me(request: Request) -> dict:
        if "visits" in request.session:
            request.session["visits"] += 1
        return dict(request.session)

    @app.post("/logout")
    def logout(request: Request) -> dict:
        request.session.clear()
        return {"ok": True}

    return app


def test_session_middleware_keeps_request_session_in_a_signed_cookie() -> None:
    app = accounts()
    with serving(app) as port:
        login = request(port, "POST", "/login")
        cookie = login.headers["set-cookie"]
        assert cookie.startswith("session=") and "HttpOnly" in cookie and "Max-Age=1209600" in cookie and "SameSite=Lax" in cookie
        value = cookie.split(";")[0].split("=", 1)[1]
        me = request(port, "GET", "/me", headers={"cookie": f"session={value}"})
        assert me.json() == {"user": "ada", "visits": 1}
        assert me.headers["set-cookie"].startswith("session="), "a changed session is written back"
        # A cookie the client changed, or one signed with another secret, is an empty session.
        data, written, signature = value.split(".")
        forged = SessionMiddleware(secret_key="x" * 64).dumps({"user": "root"})
        for bad in [f"{data}.{written}.{'0' * len(signature)}", forged, "garbage"]:
            assert request(port, "GET", "/me", headers={"cookie": f"session={bad}"}).json() == {}, bad
        anonymous = request(port, "GET", "/me")
        assert anonymous.json() == {} and "set-cookie" not in anonymous.headers
        # Emptied, the session's cookie is cleared.
        out = request(port, "POST", "/logout", headers={"cookie": f"session={value}"})
        assert out.headers["set-cookie"].startswith('session=""') or "Max-Age=0" in out.headers["set-cookie"]


def test_a_session_older_than_max_age_is_empty_and_the_test_client_carries_the_cookie() -> None:
    from starlette.datastructures import Secret

    middleware = SessionMiddleware(secret_key=Secret("k" * 64), max_age=60)
    stale = middleware.dumps({"user": "ada"}, now=1_000)
    assert middleware.loads(stale, now=1_030) == {"user": "ada"}
    assert middleware.loads(stale, now=1_061) == {}
    client = TestClient(accounts(session_cookie="sid", https_only=True))
    assert client.post("/login").cookies["sid"]
    assert client.get("/me").json() == {"user": "ada", "visits": 1}
    assert "Secure" in client.get("/me").headers["set-cookie"]


def test_request_session_without_the_middleware_is_starlettes_assertion() -> None:
    app = App()

    @app.get("/")
    def root(request: Request) -> dict:
        try:
            return {"session": request.session}
        except AssertionError as e:
            return {"error": str(e)}

    assert TestClient(app).get("/").json() == {"error": "SessionMiddleware must be installed to access request.session"}
    with pytest.raises(ValueError, match="secret_key is required"):
        App().add_middleware(SessionMiddleware)
    twice = accounts()
    with pytest.raises(ValueError, match=r"add_middleware\(SessionMiddleware\): it is added already"):
        twice.add_middleware(SessionMiddleware, secret_key="k" * 64)
