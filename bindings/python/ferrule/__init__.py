"""Ferrule: a Rust HTTP core (axum + tokio) with Python handlers.

    from ferrule import App

    app = App()

    @app.get("/users/{user_id:int}")
    def get_user(user_id: int, verbose: bool = False):
        return {"id": user_id, "verbose": verbose}

    app.run(port=8000)

Routing, parameter parsing and coercion, JSON Schema validation (derived from the type hints
once), body limits and content types are all handled in Rust before the handler runs; a bad
request gets an RFC 9457 problem response without entering Python.
"""

from ._ferrule import PROBLEM_JSON, __version__
from .app import App, DrainTimeout
from .params import Body, Cookie, Field, File, Form, Header, Path, Query
from .request import Request, UploadFile
from .websocket import WebSocket, WebSocketDisconnect
from .responses import (
    EventSourceResponse,
    HTMLResponse,
    HTTPException,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    ServerSentEvent,
    StreamingResponse,
)

__all__ = [
    "App",
    "Body",
    "Cookie",
    "DrainTimeout",
    "EventSourceResponse",
    "Field",
    "File",
    "Form",
    "HTMLResponse",
    "HTTPException",
    "Header",
    "JSONResponse",
    "PROBLEM_JSON",
    "Path",
    "PlainTextResponse",
    "Query",
    "RedirectResponse",
    "Request",
    "Response",
    "ServerSentEvent",
    "StreamingResponse",
    "UploadFile",
    "WebSocket",
    "WebSocketDisconnect",
    "__version__",
]
