"""Prometheus metrics (``metrics_url``) and the caller's W3C trace (``traceparent``)."""

from __future__ import annotations

from ferrule import App, Request
from ferrule.testing import TestClient

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_metrics_count_requests_by_route_and_show_the_interpreter_queue() -> None:
    app = App(metrics_url="/metrics")

    @app.get("/users/{user_id:int}")
    def user(user_id: int) -> dict:
        return {"id": user_id}

    with TestClient(app) as client:
        client.get("/users/1")
        client.get("/users/2")
        client.get("/users/x")
        scraped = client.get("/metrics")
    assert scraped.headers["content-type"].startswith("application/openmetrics-text")
    text = scraped.text
    assert 'ferrule_requests_total{route="/users/{user_id:int}",method="GET",status="200"} 2' in text
    assert 'ferrule_requests_total{route="/users/{user_id:int}",method="GET",status="422"} 1' in text
    assert "ferrule_interpreter_queue_depth 0" in text
    assert "ferrule_request_duration_seconds_bucket" in text


def test_hooks_and_the_built_in_layers_add_no_call_into_python() -> None:
    app = App(metrics_url="/metrics", cors={"allow_origins": ["*"]}, compression={"min_size": 10}, request_id=True)
    seen: list[str] = []

    @app.pre_handler
    def note(request: Request) -> None:
        seen.append(request.path)

    @app.get("/users/{user_id:int}")
    def user(user_id: int) -> dict:
        return {"id": user_id, "padding": "x" * 100}

    with TestClient(app) as client:
        for user_id in range(3):
            served = client.get(f"/users/{user_id}", headers={"origin": "https://a.example", "accept-encoding": "gzip"})
            assert served.headers["content-encoding"] == "gzip"
            assert served.headers["access-control-allow-origin"] == "*"
        preflight = client.options("/users/1", headers={"origin": "https://a.example", "access-control-request-method": "GET"})
        assert preflight.status_code == 200
        assert client.get("/users/x").status_code == 422
        text = client.get("/metrics").text
    assert seen == ["/users/0", "/users/1", "/users/2"]
    # One call per handled request, the pre-handler hook within it; the preflight, the refusal
    # and the scrape were the core's alone.
    assert "ferrule_interpreter_calls_total 3\n" in text, text


def test_no_metrics_unless_asked_for() -> None:
    with TestClient(App()) as client:
        assert client.get("/metrics").status_code == 404


def test_the_callers_trace_reaches_the_handler() -> None:
    app = App()

    @app.get("/traced")
    def traced(request: Request) -> dict:
        return {"trace_id": request.trace_id, "traceparent": request.traceparent}

    with TestClient(app) as client:
        assert client.get("/traced", headers={"traceparent": TRACEPARENT}).json() == {
            "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
            "traceparent": TRACEPARENT,
        }
        assert client.get("/traced", headers={"traceparent": "garbage"}).json() == {"trace_id": None, "traceparent": None}
