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
from .app import APIRouter, App, DrainTimeout, Router, StartupFailed
from .background import BackgroundTask, BackgroundTasks
from .hooks import RequestValidationError
from .params import Body, Cookie, Depends, Field, File, Form, Header, Path, Query
from .request import NoMatchFound, Request, UploadFile, URLPath
from .security import Security
from .staticfiles import StaticFiles
from .websocket import WebSocket, WebSocketDisconnect, WebSocketException
from .responses import (
    EventSourceResponse,
    FileResponse,
    HTMLResponse,
    HTTPException,
    JSONResponse,
    MutableHeaders,
    ORJSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    ServerSentEvent,
    StreamingResponse,
    UJSONResponse,
)

__all__ = [
    "APIRouter",
    "App",
    "BackgroundTask",
    "BackgroundTasks",
    "Body",
    "Cookie",
    "Depends",
    "DrainTimeout",
    "EventSourceResponse",
    "FileResponse",
    "Field",
    "File",
    "Form",
    "HTMLResponse",
    "HTTPException",
    "MutableHeaders",
    "NoMatchFound",
    "Header",
    "ORJSONResponse",
    "JSONResponse",
    "PROBLEM_JSON",
    "Path",
    "PlainTextResponse",
    "Query",
    "RedirectResponse",
    "Request",
    "RequestValidationError",
    "Response",
    "Router",
    "Security",
    "ServerSentEvent",
    "StartupFailed",
    "StaticFiles",
    "StreamingResponse",
    "UJSONResponse",
    "UploadFile",
    "URLPath",
    "WebSocket",
    "WebSocketDisconnect",
    "WebSocketException",
    "__version__",
]
