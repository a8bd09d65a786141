"""FastAPI's security dependencies: each reads a credential from the request, answers 401 when
it is missing (``auto_error=False``: gives ``None`` instead), and names its scheme in the OpenAPI
document, so the docs page's Authorize button sends it.

    oauth2_scheme = OAuth2PasswordBearer(tokenUrl="token")

    @app.get("/users/me")
    async def me(token: str = Depends(oauth2_scheme)) -> dict: ...

A route that uses one (directly or through its dependencies) declares the scheme with it
(``RouteSpec.security_schemes``) and the requirement (``RouteSpec.security``, with the scopes
``Security(..., scopes=[...])`` gathered on the way); the core writes both into the document.
Checking the credential itself (a token's signature, a password) is the app's, as in FastAPI.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Optional, Sequence

from .params import Dependency, Form
from .request import Request
from .responses import HTTPException

__all__ = [
    "APIKeyCookie",
    "APIKeyHeader",
    "APIKeyQuery",
    "HTTPAuthorizationCredentials",
    "HTTPBasic",
    "HTTPBasicCredentials",
    "HTTPBearer",
    "HTTPDigest",
    "OAuth2",
    "OAuth2AuthorizationCodeBearer",
    "OAuth2PasswordBearer",
    "OAuth2PasswordRequestForm",
    "OAuth2PasswordRequestFormStrict",
    "OpenIdConnect",
    "Security",
    "SecurityScopes",
]


class SecurityScheme:
    """What a security dependency says about itself: its name in the document
    (``scheme_name``, the class's name by default, as FastAPI names it) and its Security
    Scheme Object (``scheme``)."""

    scheme_name: str
    scheme: dict[str, Any]
    auto_error: bool

    def _not_authenticated(self, challenge: str) -> HTTPException:
        return HTTPException(status_code=401, detail="Not authenticated", headers={"WWW-Authenticate": challenge})


def _with_description(scheme: dict[str, Any], description: Optional[str]) -> dict[str, Any]:
    return {**scheme, "description": description} if description else scheme


def _authorization(request: Request) -> tuple[str, str]:
    """The ``Authorization`` header as (scheme, credentials), split at its first space."""
    value = request.header("authorization") or ""
    scheme, _, credentials = value.partition(" ")
    return scheme, credentials.strip()


class _WholeAuthorization(SecurityScheme):
    """A scheme whose dependency's value is the ``Authorization`` header as sent."""

    async def __call__(self, request: Request) -> Optional[str]:
        authorization = request.header("authorization")
        if not authorization:
            if self.auto_error:
                raise self._not_authenticated("Bearer")
            return None
        return authorization


class OAuth2(_WholeAuthorization):
    """OAuth2 with the ``flows`` given as OpenAPI writes them (``{"password": {"tokenUrl": ...,
    "scopes": {}}}``); the dependency's value is the ``Authorization`` header as sent. The
    classes below are its usual shapes."""

    def __init__(self, *, flows: Optional[dict[str, dict[str, Any]]] = None, scheme_name: Optional[str] = None, description: Optional[str] = None, auto_error: bool = True) -> None:
        self.scheme_name = scheme_name or type(self).__name__
        self.scheme = _with_description({"type": "oauth2", "flows": dict(flows or {})}, description)
        self.auto_error = auto_error


def _flow(scopes: Optional[dict[str, str]], refresh_url: Optional[str], **urls: str) -> dict[str, Any]:
    flow: dict[str, Any] = {**urls, "scopes": dict(scopes or {})}
    if refresh_url:
        flow["refreshUrl"] = refresh_url
    return flow


class _BearerToken(OAuth2):
    async def __call__(self, request: Request) -> Optional[str]:
        scheme, token = _authorization(request)
        if scheme.lower() != "bearer" or not token:
            if self.auto_error:
                raise self._not_authenticated("Bearer")
            return None
        return token


class OAuth2PasswordBearer(_BearerToken):
    """OAuth2's password flow: the token a client got from ``tokenUrl``, sent as
    ``Authorization: Bearer <token>``; the dependency's value is the token."""

    def __init__(
        self,
        tokenUrl: str,
        scheme_name: Optional[str] = None,
        scopes: Optional[dict[str, str]] = None,
        description: Optional[str] = None,
        auto_error: bool = True,
        refreshUrl: Optional[str] = None,
    ) -> None:
        flows = {"password": _flow(scopes, refreshUrl, tokenUrl=tokenUrl)}
        super().__init__(flows=flows, scheme_name=scheme_name, description=description, auto_error=auto_error)


class OAuth2AuthorizationCodeBearer(_BearerToken):
    """OAuth2's authorization code flow (an identity provider's login page at
    ``authorizationUrl``, the code exchanged at ``tokenUrl``): the token sent as
    ``Authorization: Bearer <token>``; the dependency's value is the token."""

    def __init__(
        self,
        authorizationUrl: str,
        tokenUrl: str,
        refreshUrl: Optional[str] = None,
        scheme_name: Optional[str] = None,
        scopes: Optional[dict[str, str]] = None,
        description: Optional[str] = None,
        auto_error: bool = True,
    ) -> None:
        flows = {"authorizationCode": _flow(scopes, refreshUrl, authorizationUrl=authorizationUrl, tokenUrl=tokenUrl)}
        super().__init__(flows=flows, scheme_name=scheme_name, description=description, auto_error=auto_error)


class OpenIdConnect(_WholeAuthorization):
    """OpenID Connect, discovered at ``openIdConnectUrl``; the dependency's value is the
    ``Authorization`` header as sent."""

    def __init__(self, *, openIdConnectUrl: str, scheme_name: Optional[str] = None, description: Optional[str] = None, auto_error: bool = True) -> None:
        self.scheme_name = scheme_name or type(self).__name__
        self.scheme = _with_description({"type": "openIdConnect", "openIdConnectUrl": openIdConnectUrl}, description)
        self.auto_error = auto_error


class _Credentials:
    """Two strings read from a request, the second a secret its ``repr`` (a log line, a
    traceback) never shows."""

    __slots__: tuple[str, ...] = ()  # each kind names its two

    def __init__(self, public: str, secret: str) -> None:
        setattr(self, self.__slots__[0], public)
        setattr(self, self.__slots__[1], secret)

    def _fields(self) -> tuple[str, str]:
        return getattr(self, self.__slots__[0]), getattr(self, self.__slots__[1])

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._fields() == self._fields()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__slots__[0]}={self._fields()[0]!r}, {self.__slots__[1]}=...)"


class HTTPAuthorizationCredentials(_Credentials):
    """The ``Authorization`` header split at its first space: ``scheme`` and ``credentials``."""

    __slots__ = ("scheme", "credentials")
    scheme: str
    credentials: str


class _HTTPScheme(SecurityScheme):
    """``Authorization: <scheme> <credentials>`` for one HTTP scheme; the dependency's value is
    HTTPAuthorizationCredentials."""

    http_scheme = ""

    def __init__(self, *, scheme_name: Optional[str] = None, description: Optional[str] = None, auto_error: bool = True, **extra: str) -> None:
        self.scheme_name = scheme_name or type(self).__name__
        self.scheme = _with_description({"type": "http", "scheme": self.http_scheme, **extra}, description)
        self.auto_error = auto_error

    async def __call__(self, request: Request) -> Optional[HTTPAuthorizationCredentials]:
        scheme, credentials = _authorization(request)
        if scheme.lower() != self.http_scheme or not credentials:
            if self.auto_error:
                raise self._not_authenticated(self.http_scheme.title())
            return None
        return HTTPAuthorizationCredentials(scheme, credentials)


class HTTPBearer(_HTTPScheme):
    """``Authorization: Bearer <token>``; the dependency's value is HTTPAuthorizationCredentials."""

    http_scheme = "bearer"

    def __init__(self, *, bearerFormat: Optional[str] = None, scheme_name: Optional[str] = None, description: Optional[str] = None, auto_error: bool = True) -> None:
        extra = {"bearerFormat": bearerFormat} if bearerFormat else {}
        super().__init__(scheme_name=scheme_name, description=description, auto_error=auto_error, **extra)


class HTTPDigest(_HTTPScheme):
    """``Authorization: Digest <parameters>``, read as HTTPAuthorizationCredentials (checking the
    digest is the app's, as in FastAPI)."""

    http_scheme = "digest"


class HTTPBasicCredentials(_Credentials):
    """What ``HTTPBasic`` read: ``username`` and ``password``."""

    __slots__ = ("username", "password")
    username: str
    password: str


class HTTPBasic(SecurityScheme):
    """``Authorization: Basic <base64 of user:password>``; the dependency's value is
    HTTPBasicCredentials. A header that does not decode is answered as a missing one: 401 with
    ``WWW-Authenticate: Basic`` (with ``realm``, when given), which makes a browser ask."""

    def __init__(self, *, scheme_name: Optional[str] = None, realm: Optional[str] = None, description: Optional[str] = None, auto_error: bool = True) -> None:
        self.scheme_name = scheme_name or type(self).__name__
        self.scheme = _with_description({"type": "http", "scheme": "basic"}, description)
        self.realm = realm
        self.auto_error = auto_error

    async def __call__(self, request: Request) -> Optional[HTTPBasicCredentials]:
        challenge = f'Basic realm="{self.realm}"' if self.realm else "Basic"
        scheme, encoded = _authorization(request)
        if scheme.lower() != "basic":
            if self.auto_error:
                raise self._not_authenticated(challenge)
            return None
        try:
            username, colon, password = base64.b64decode(encoded, validate=True).decode("ascii").partition(":")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            colon = ""
        if not colon:
            # Malformed: refused even without auto_error, as FastAPI refuses it.
            raise self._not_authenticated(challenge)
        return HTTPBasicCredentials(username, password)


class _APIKey(SecurityScheme):
    where = ""

    def __init__(self, *, name: str, scheme_name: Optional[str] = None, description: Optional[str] = None, auto_error: bool = True) -> None:
        self.name = name
        self.scheme_name = scheme_name or type(self).__name__
        self.scheme = _with_description({"type": "apiKey", "in": self.where, "name": name}, description)
        self.auto_error = auto_error

    def _checked(self, key: Optional[str]) -> Optional[str]:
        if not key:
            if self.auto_error:
                raise self._not_authenticated("APIKey")
            return None
        return key


class APIKeyHeader(_APIKey):
    """A key sent in the header ``name``; the dependency's value is the key."""

    where = "header"

    async def __call__(self, request: Request) -> Optional[str]:
        return self._checked(request.header(self.name))


class APIKeyQuery(_APIKey):
    """A key sent as the query parameter ``name``."""

    where = "query"

    async def __call__(self, request: Request) -> Optional[str]:
        return self._checked(request.query_params.get(self.name))


class APIKeyCookie(_APIKey):
    """A key sent as the cookie ``name``."""

    where = "cookie"

    async def __call__(self, request: Request) -> Optional[str]:
        return self._checked(request.cookies.get(self.name))


class SecurityScopes:
    """The scopes the ``Security(...)`` markers on the way to a dependency asked for: a
    dependency that takes one (``security_scopes: SecurityScopes``) checks a token against
    them. ``scope_str`` is them as one space-separated string, for a ``WWW-Authenticate``."""

    def __init__(self, scopes: Optional[Sequence[str]] = None) -> None:
        self.scopes = list(scopes or [])
        self.scope_str = " ".join(self.scopes)


class SecurityDependency(Dependency):
    """What ``Security(dependency, scopes=[...])`` marks: ``Depends`` with scopes."""

    def __init__(self, dependency: Any = None, *, scopes: Optional[Sequence[str]] = None, use_cache: bool = True) -> None:
        super().__init__(dependency, use_cache=use_cache)
        self.scopes = list(scopes or [])


def Security(dependency: Any = None, *, scopes: Optional[Sequence[str]] = None, use_cache: bool = True) -> Any:
    """FastAPI's ``Security``: ``Depends`` that also asks for OAuth2 ``scopes``, which reach the
    document's requirement and every ``SecurityScopes`` parameter below it."""
    return SecurityDependency(dependency, scopes=scopes, use_cache=use_cache)


class OAuth2PasswordRequestForm:
    """The form a client posts to an OAuth2 password flow's ``tokenUrl``: ``username``,
    ``password``, ``scope`` (read as the list ``scopes``), and the optional ``grant_type``
    (``password`` when sent), ``client_id`` and ``client_secret``. Use it as
    ``form: OAuth2PasswordRequestForm = Depends()``."""

    def __init__(
        self,
        username: str = Form(),
        password: str = Form(json_schema_extra={"format": "password"}),
        scope: str = Form(""),
        grant_type: Optional[str] = Form(None, pattern="^password$"),
        client_id: Optional[str] = Form(None),
        client_secret: Optional[str] = Form(None, json_schema_extra={"format": "password"}),
    ) -> None:
        self.username = username
        self.password = password
        self.scopes = scope.split()
        self.grant_type = grant_type
        self.client_id = client_id
        self.client_secret = client_secret


class OAuth2PasswordRequestFormStrict(OAuth2PasswordRequestForm):
    """OAuth2PasswordRequestForm whose ``grant_type`` must be sent, and be ``password``, as the
    OAuth2 specification asks."""

    def __init__(
        self,
        grant_type: str = Form(pattern="^password$"),
        username: str = Form(),
        password: str = Form(json_schema_extra={"format": "password"}),
        scope: str = Form(""),
        client_id: Optional[str] = Form(None),
        client_secret: Optional[str] = Form(None, json_schema_extra={"format": "password"}),
    ) -> None:
        super().__init__(username=username, password=password, scope=scope, grant_type=grant_type, client_id=client_id, client_secret=client_secret)
