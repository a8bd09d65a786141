"""Starlette's ``SessionMiddleware``: ``request.session``, a dict kept in a signed cookie.

``app.add_middleware(SessionMiddleware, secret_key=os.environ["SESSION_SECRET"])``, then
``request.session["user"] = "ada"`` in a handler (an OAuth login flow keeps its state there).
The cookie holds the session's JSON, with the time it was written, signed with HMAC-SHA256: a
client can read it but not change it, and a cookie that does not verify, or is older than
``max_age``, is an empty session. Unlike CORS and compression this is Python's work (the
session is a Python dict): an ``on_request`` hook loads it and an ``on_send`` hook writes it
back, so only an app with the middleware pays, one hook call at each end of a request.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import time
from typing import Any, Literal, Optional, Union

from . import HookMiddleware

# Browsers keep a cookie of at most 4096 bytes, name and attributes included.
MAX_COOKIE_BYTES = 4096

_log = logging.getLogger("ferrule")


class SessionMiddleware(HookMiddleware):
    def __init__(
        self,
        app: Any = None,
        secret_key: Union[str, bytes, Any, None] = None,
        session_cookie: str = "session",
        max_age: Optional[int] = 14 * 24 * 60 * 60,
        path: str = "/",
        same_site: Literal["lax", "strict", "none"] = "lax",
        https_only: bool = False,
        domain: Optional[str] = None,
    ) -> None:
        if not secret_key:
            raise ValueError("SessionMiddleware: secret_key is required (secrets.token_hex(32)); sessions signed with no secret could be forged")
        # Starlette also takes its config's `Secret`, whose str() is the secret.
        self.secret = secret_key if isinstance(secret_key, bytes) else str(secret_key).encode()
        self.cookie_name = session_cookie
        self.max_age = max_age
        self.path = path
        self.same_site = same_site
        self.https_only = https_only
        self.domain = domain

    def install(self, app: Any) -> None:
        app.on_request(self._load)
        app.on_send(self._save)

    # -- the cookie ------------------------------------------------------------------------------

    def _sign(self, payload: bytes) -> str:
        return hmac.new(self.secret, payload, hashlib.sha256).hexdigest()

    def dumps(self, session: dict[str, Any], now: Optional[float] = None) -> str:
        """The cookie value that keeps ``session``."""
        data = base64.urlsafe_b64encode(json.dumps(session, separators=(",", ":")).encode()).rstrip(b"=")
        payload = data + b"." + str(int(time.time() if now is None else now)).encode()
        return f"{payload.decode()}.{self._sign(payload)}"

    def loads(self, value: Optional[str], now: Optional[float] = None) -> dict[str, Any]:
        """The session a cookie value holds: empty when it is absent, altered, not signed with
        this secret, or older than ``max_age``."""
        if not value:
            return {}
        payload, _, signature = value.rpartition(".")
        data, _, written = payload.partition(".")
        if not hmac.compare_digest(self._sign(payload.encode()), signature) or not written.isdigit():
            return {}
        if self.max_age is not None and (time.time() if now is None else now) - int(written) > self.max_age:
            return {}
        try:
            session = json.loads(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
        except (binascii.Error, ValueError):
            return {}
        return session if isinstance(session, dict) else {}

    # -- the hooks -------------------------------------------------------------------------------

    def _load(self, request: Any) -> None:
        session = self.loads(request.cookies.get(self.cookie_name))
        request._load_session(session)
        # Whether the client sent one: an emptied session is then cleared, as Starlette does.
        request.state._ferrule_session_sent = bool(session)

    def _save(self, request: Any, response: Any) -> None:
        try:
            session = request.session
        except AssertionError:
            return  # a request the core refused before any hook ran
        if session:
            value = self.dumps(session)
            if len(value) + len(self.cookie_name) + 100 > MAX_COOKIE_BYTES:
                _log.warning("ferrule: the session is %d bytes, more than a cookie holds (%d); it was not saved", len(value), MAX_COOKIE_BYTES)
                return
            response.set_cookie(self.cookie_name, value, max_age=self.max_age, path=self.path, domain=self.domain, secure=self.https_only, httponly=True, samesite=self.same_site)
        elif getattr(request.state, "_ferrule_session_sent", False):
            response.delete_cookie(self.cookie_name, path=self.path, domain=self.domain)


__all__ = ["SessionMiddleware"]
