"""What a handler may return or raise besides plain data.

The shapes are FastAPI's (Starlette's): ``JSONResponse(content, status_code=...)``,
``RedirectResponse(url)``, ``set_cookie(...)`` on any response, and a ``response: Response``
parameter whose headers, cookies and status join a plain return value. The bytes are written
by Rust: a status outside 200-599 or a header HTTP cannot carry is a bare 500 in every
language (the log says why), and a list of header values is sent as repeated headers.
"""

from __future__ import annotations

import datetime
import email.utils
import functools
import http
import os
import re
import string
import urllib.parse
from typing import TYPE_CHECKING, Any, AsyncIterable, AsyncIterator, Iterable, Iterator, Literal, Mapping, MutableMapping, Optional, Sequence, Tuple, Union, overload

__all__ = [
    "Response",
    "JSONResponse",
    "PlainTextResponse",
    "HTMLResponse",
    "RedirectResponse",
    "StreamingResponse",
    "EventSourceResponse",
    "ServerSentEvent",
    "HTTPException",
    "MutableHeaders",
]

if TYPE_CHECKING:
    from .background import BackgroundTask

HeaderValue = Union[str, Sequence[str]]
Headers = Union[Mapping[str, HeaderValue], Sequence[Tuple[str, str]]]


class MutableHeaders(MutableMapping[str, str]):
    """A response's headers as hooks and middleware change them (Starlette's
    ``MutableHeaders``): names case-insensitive, ``headers[name]`` the first value,
    ``headers[name] = value`` replaces every line of that name, ``append`` adds one (a name may
    repeat, as ``set-cookie`` does), ``getlist`` reads them all. ``raw`` is the list of
    ``(name, value)`` lines, in order."""

    def __init__(self, raw: Optional[Iterable[Tuple[str, str]]] = None) -> None:
        self.raw: list[tuple[str, str]] = list(raw or [])

    def __getitem__(self, name: str) -> str:
        wanted = name.lower()
        for key, value in self.raw:
            if key.lower() == wanted:
                return value
        raise KeyError(name)

    def __setitem__(self, name: str, value: str) -> None:
        wanted = name.lower()
        self.raw = [(key, v) for key, v in self.raw if key.lower() != wanted]
        self.raw.append((name, value))

    def __delitem__(self, name: str) -> None:
        wanted = name.lower()
        kept = [(key, v) for key, v in self.raw if key.lower() != wanted]
        if len(kept) == len(self.raw):
            raise KeyError(name)
        self.raw = kept

    def __iter__(self) -> Iterator[str]:
        seen: dict[str, None] = {}
        for key, _ in self.raw:
            seen.setdefault(key.lower(), None)
        return iter(seen)

    def __len__(self) -> int:
        return len({key.lower() for key, _ in self.raw})

    def append(self, name: str, value: str) -> None:
        self.raw.append((name, value))

    def getlist(self, name: str) -> list[str]:
        wanted = name.lower()
        return [value for key, value in self.raw if key.lower() == wanted]

    def __repr__(self) -> str:
        return f"MutableHeaders({self.raw!r})"


_COOKIE_KEY = re.compile(r"[A-Za-z0-9!#$%&'*+\-.^_`|~]+")
_COOKIE_ATTRIBUTE_BREAK = re.compile(r"[;\x00-\x1f\x7f]")
# What `http.cookies` leaves unquoted; anything else is quoted, with octal escapes.
_COOKIE_PLAIN = frozenset(string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~:")
_COOKIE_QUOTED = frozenset(_COOKIE_PLAIN | set(" ()/<=>?@[]{}"))


def _cookie_value(value: str) -> str:
    """``value`` as a cookie carries it: as it is when every character may stand there, else
    in double quotes with ``"`` and ``\\`` backslashed and every other byte (UTF-8) that may not
    stand there as ``\\ooo``, which ``http.cookies`` reads back."""
    if all(ch in _COOKIE_PLAIN for ch in value):
        return value
    out = []
    for ch in value:
        if ch in _COOKIE_QUOTED:
            out.append(ch)
        elif ch in '"\\':
            out.append("\\" + ch)
        else:
            out.extend(f"\\{byte:03o}" for byte in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


class Response:
    """A response with an explicit status and headers.

    ``body`` (or ``content``) may be ``bytes`` (sent as is), ``str`` (``text/plain``), or any
    JSON-serialisable value (serialised by Rust, ``application/json``). ``media_type`` sets
    ``Content-Type``. A header given a list of values is sent once per value. Starlette's
    order, ``Response(content, status_code, headers, media_type, background)``, works too: a
    first argument that is no ``int`` is the content. ``background`` (a ``BackgroundTask``) runs
    once the response has gone.

    As a handler parameter (``def handler(response: Response)``), it is an empty response
    whose status (when set), headers and cookies are applied to the handler's plain return
    value.
    """

    __slots__ = ("status", "_headers", "body", "media_type", "as_json", "stream", "events", "background", "_call")

    #: The path of the file the core sends as the body (a ``FileResponse``'s), or None.
    _file: Optional[str] = None

    #: The status whose response schema writes this body, when not its own: a plain result a
    #: ``response: Response`` parameter gave another status keeps its route's (see ``app._merged``).
    _answers_as: Optional[int] = None

    @overload
    def __init__(
        self,
        status: Optional[int] = None,
        headers: Optional[Headers] = None,
        body: Any = None,
        *,
        media_type: Optional[str] = None,
        content: Any = None,
        status_code: Optional[int] = None,
        background: Optional[BackgroundTask] = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        content: Union[bytes, str, memoryview, Mapping[str, Any], Sequence[Any], None],
        status_code: Optional[int] = None,
        headers: Optional[Headers] = None,
        media_type: Optional[str] = None,
        background: Optional[BackgroundTask] = None,
        *,
        body: Any = None,
        status: Optional[int] = None,
    ) -> None: ...

    def __init__(
        self,
        *args: Any,
        headers: Optional[Headers] = None,
        body: Any = None,
        media_type: Optional[str] = None,
        content: Any = None,
        status_code: Optional[int] = None,
        status: Optional[int] = None,
        background: Optional[BackgroundTask] = None,
    ) -> None:
        # Two orders by position: Ferrule's Response(status, headers, body), and Starlette's
        # Response(content, status_code, headers, media_type, background), which FastAPI's documentation
        # writes (found by FastAPI's corpus). A status is an int, so a first argument that is
        # none starts Starlette's order; keywords mean the same in both.
        # A leading None is Ferrule's "no status" unless an int status follows it (Starlette's
        # Response(None, 204)). A None given by position gives nothing.
        given = {"status": status, "headers": headers, "body": body, "content": content, "status_code": status_code, "media_type": media_type, "background": background}
        first = args[0] if args else 0
        starlette = not isinstance(first, int) and not (first is None and len(args) > 1 and not isinstance(args[1], int))
        names = ("content", "status_code", "headers", "media_type", "background") if starlette else ("status", "headers", "body")
        if len(args) > len(names):
            raise TypeError(f"Response takes at most {len(names)} positional arguments ({', '.join(names)}), not {len(args)}")
        for name, value in zip(names, args):
            if value is None:
                continue
            if given[name] is not None:
                raise TypeError(f"Response got {name} twice")
            given[name] = value
        status, headers, body, content, status_code, media_type, background = (
            given[k] for k in ("status", "headers", "body", "content", "status_code", "media_type", "background")
        )
        if status is not None and status_code is not None:
            raise TypeError("give the status once: status or status_code")
        if body is not None and content is not None:
            raise TypeError("give the body once: body or content")
        for value in (status, status_code):
            if value is not None and not isinstance(value, int):
                raise TypeError(f"a status is an int, not {type(value).__name__}")
        chosen = status if status is not None else status_code
        self.status: int = 200 if chosen is None else chosen
        self._headers: Union[Headers, MutableHeaders, None] = headers
        self.body: Any = body if body is not None else content
        self.media_type = media_type
        self.as_json = False
        self.stream: Any = None
        self.events = False
        # Run once the response has gone (`background.after_response`), Starlette's.
        self.background: Optional[BackgroundTask] = background
        # The request it answers, when a middleware's `call_next` gave it: its JSON is read
        # as that route writes it (`body_iterator`).
        self._call: Any = None

    # -- the body as it will be sent (Starlette's `body_iterator`) ------------------------

    @property
    def body_iterator(self) -> AsyncIterator[bytes]:
        """The body as bytes, chunk by chunk, as Starlette's: what an ``@app.middleware("http")``
        reads from the response ``call_next`` gave (``b"".join([c async for c in
        response.body_iterator])``). JSON is written as its route sends it, the response schema
        applied, so what is read is what would go out. A streamed body is consumed by reading
        it, as in Starlette; any other can still be sent. It was missing: the usual
        body-logging middleware was a 500 (found by a probe)."""
        return _body_chunks(self)

    @body_iterator.setter
    def body_iterator(self, chunks: Union[Iterable[Any], AsyncIterable[Any]]) -> None:
        """Starlette's way to replace the body with a stream (a middleware's wrapper of it)."""
        self.stream = chunks
        self.body = None
        self.as_json = False
        if self._file is not None:
            self._file = None

    # -- FastAPI's names for the same fields ------------------------------------------------

    @property
    def status_code(self) -> int:
        return self.status

    @status_code.setter
    def status_code(self, value: int) -> None:
        self.status = value

    # -- headers and cookies ----------------------------------------------------------------

    @property
    def headers(self) -> MutableHeaders:
        """The headers as Starlette's ``MutableHeaders`` (``response.headers["x-a"] = "1"``),
        whatever form they were given in. Kept as given until asked for here: the server reads
        the plain form, so a response nobody changes pays for no conversion."""
        headers = self._headers
        if not isinstance(headers, MutableHeaders):
            headers = MutableHeaders(self._header_pairs())
            self._headers = headers
        return headers

    @headers.setter
    def headers(self, value: Union[Headers, MutableHeaders, None]) -> None:
        self._headers = value

    def _header_pairs(self) -> list[tuple[str, str]]:
        """The headers as a list of pairs (from here on, the one form they are kept in)."""
        headers = self._headers
        if isinstance(headers, MutableHeaders):
            return headers.raw
        pairs: list[tuple[str, str]] = []
        if headers is None:
            pass
        elif isinstance(headers, Mapping):
            for name, value in headers.items():
                if isinstance(value, str):
                    pairs.append((name, value))
                else:
                    pairs.extend((name, v) for v in value)
        else:
            pairs.extend((name, value) for name, value in headers)
        self._headers = pairs
        return pairs

    def append_header(self, name: str, value: str) -> None:
        """Adds one header line (a name may repeat)."""
        self._header_pairs().append((name, value))

    def set_header(self, name: str, value: str) -> None:
        """Sets a header, replacing every earlier line of that name."""
        pairs = [(n, v) for n, v in self._header_pairs() if n.lower() != name.lower()]
        pairs.append((name, value))
        if isinstance(self._headers, MutableHeaders):
            self._headers.raw = pairs
        else:
            self._headers = pairs

    def set_cookie(
        self,
        key: str,
        value: str = "",
        max_age: Optional[int] = None,
        expires: Union[datetime.datetime, str, int, None] = None,
        path: Optional[str] = "/",
        domain: Optional[str] = None,
        secure: bool = False,
        httponly: bool = False,
        samesite: Optional[Literal["lax", "strict", "none"]] = "lax",
    ) -> None:
        """Adds a ``Set-Cookie`` header (RFC 6265), with Starlette's parameters and defaults.
        A value with characters a cookie cannot carry as they are (``;``, ``,``, spaces, quotes,
        non-ASCII) is quoted with octal escapes, as ``http.cookies`` (Starlette's) quotes it,
        so it can never add attributes of its own; a key or attribute that would is refused."""
        if not key or not _COOKIE_KEY.fullmatch(key):
            raise ValueError(f"set_cookie: {key!r} is not a cookie name (letters, digits and !#$%&'*+-.^_`|~)")
        for name, attribute in (("path", path), ("domain", domain), ("expires", expires if isinstance(expires, str) else None)):
            if attribute is not None and _COOKIE_ATTRIBUTE_BREAK.search(attribute):
                raise ValueError(f"set_cookie: the {name} {attribute!r} holds a ';' or a control character")
        parts = [f"{key}={_cookie_value(value)}"]
        if max_age is not None:
            parts.append(f"Max-Age={int(max_age)}")
        if expires is not None:
            if isinstance(expires, datetime.datetime):
                parts.append(f"Expires={email.utils.format_datetime(expires.astimezone(datetime.timezone.utc), usegmt=True)}")
            elif isinstance(expires, int):
                when = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=expires)
                parts.append(f"Expires={email.utils.format_datetime(when, usegmt=True)}")
            else:
                parts.append(f"Expires={expires}")
        if path is not None:
            parts.append(f"Path={path}")
        if domain is not None:
            parts.append(f"Domain={domain}")
        if secure:
            parts.append("Secure")
        if httponly:
            parts.append("HttpOnly")
        if samesite is not None:
            if samesite.lower() not in ("lax", "strict", "none"):
                raise ValueError("samesite must be 'lax', 'strict' or 'none'")
            parts.append(f"SameSite={samesite.capitalize()}")
        self.append_header("set-cookie", "; ".join(parts))

    def delete_cookie(self, key: str, path: str = "/", domain: Optional[str] = None, secure: bool = False, httponly: bool = False) -> None:
        """Tells the client to forget a cookie (an expired, empty one)."""
        self.set_cookie(key, "", max_age=0, expires="Thu, 01 Jan 1970 00:00:00 GMT", path=path, domain=domain, secure=secure, httponly=httponly)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, headers={self._headers!r}, body={self.body!r})"


async def _body_chunks(response: Response) -> AsyncIterator[bytes]:
    stream = response.stream
    if stream is not None:
        if hasattr(stream, "__aiter__"):
            async for chunk in stream:
                yield _chunk_bytes(chunk)
            return
        from . import _pool

        # A sync stream's items are made on the thread pool, as the core's producer runs them.
        iterator = iter(stream)
        done = object()
        while (chunk := await _pool.THREADS.run(functools.partial(next, iterator, done))) is not done:
            yield _chunk_bytes(chunk)
        return
    if response._file is not None:
        from . import _pool

        yield await _pool.THREADS.run(functools.partial(_read_whole, response._file))
        return
    body = response.body
    if body is None:
        return
    if isinstance(body, (bytes, bytearray, memoryview)):
        yield bytes(body)
    elif isinstance(body, str):
        yield body.encode()
    elif response._call is not None:
        yield response._call.json_of(body, response.status)
    else:
        from . import _ferrule

        yield _ferrule.json_bytes(body)


def _read_whole(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def _chunk_bytes(chunk: Any) -> bytes:
    if isinstance(chunk, (bytes, bytearray, memoryview)):
        return bytes(chunk)
    if isinstance(chunk, str):
        return chunk.encode()
    raise TypeError(f"a stream chunk is bytes or str, not {type(chunk).__name__}")


class JSONResponse(Response):
    """``content`` serialised as JSON by Rust, whatever its type (a ``str`` too)."""

    def __init__(
        self,
        content: Any = None,
        status_code: int = 200,
        headers: Optional[Headers] = None,
        media_type: Optional[str] = None,
        background: Optional[BackgroundTask] = None,
    ) -> None:
        super().__init__(status=status_code, headers=headers, body=content, media_type=media_type, background=background)
        self.as_json = True


class ORJSONResponse(JSONResponse):
    """FastAPI's ``ORJSONResponse``: the same JSON, written by Rust (no orjson needed); kept so
    that ``default_response_class=ORJSONResponse`` and its imports port as they are."""


class UJSONResponse(JSONResponse):
    """FastAPI's ``UJSONResponse``: the same JSON, written by Rust (see ``ORJSONResponse``)."""


class PlainTextResponse(Response):
    def __init__(
        self,
        content: str = "",
        status_code: int = 200,
        headers: Optional[Headers] = None,
        media_type: str = "text/plain; charset=utf-8",
        background: Optional[BackgroundTask] = None,
    ) -> None:
        super().__init__(status=status_code, headers=headers, body=content, media_type=media_type, background=background)


class HTMLResponse(Response):
    def __init__(
        self,
        content: str = "",
        status_code: int = 200,
        headers: Optional[Headers] = None,
        media_type: str = "text/html; charset=utf-8",
        background: Optional[BackgroundTask] = None,
    ) -> None:
        super().__init__(status=status_code, headers=headers, body=content, media_type=media_type, background=background)


class RedirectResponse(Response):
    """A redirect to ``url`` (307 by default, as Starlette's: the method and body are kept)."""

    def __init__(self, url: str, status_code: int = 307, headers: Optional[Headers] = None, background: Optional[BackgroundTask] = None) -> None:
        super().__init__(status=status_code, headers=headers, background=background)
        # Percent-encoded as Starlette's is: a space or "café" in a URL built from user text
        # cannot stand in a header (what is already escaped, and the URL's delimiters, stay).
        self.set_header("location", urllib.parse.quote(str(url), safe=":/%#?=@[]!$&'()*+,;"))


Chunk = Union[bytes, bytearray, memoryview, str]


class StreamingResponse(Response):
    """Sends ``content`` as it is produced: a generator (or any iterable) of ``bytes`` or
    ``str`` chunks, sync or async. Its chunks go to the client in batches, and it waits while
    64 chunks (64 KiB) wait for the client, so it runs as fast as its client reads; a client that leaves closes it (its ``finally`` runs). A sync generator runs
    on a pool of threads (at most 40, shared by all streams), as in Starlette, so one that blocks
    holds up nothing else. Streams
    are never compressed (a compressor would hold chunks back)."""

    def __init__(
        self,
        content: Union[Iterable[Chunk], AsyncIterable[Chunk]],
        status_code: int = 200,
        headers: Optional[Headers] = None,
        media_type: Optional[str] = None,
        background: Optional[BackgroundTask] = None,
    ) -> None:
        super().__init__(status=status_code, headers=headers, media_type=media_type, background=background)
        self.stream = content


class FileResponse(Response):
    """Starlette's ``FileResponse``: the file at ``path``, sent by the core as a static mount
    sends its files (``app.mount_static``), never read by Python: in chunks as the client takes
    them, with its ``content-length``, ``last-modified`` and ``etag``, a ``Range`` answered
    (206, or 416 past the file's end; ``If-Range`` honoured), and 304 to a client that holds
    the same file. Its type from ``media_type`` or its name; with ``filename``, a
    ``content-disposition`` (``content_disposition_type``, "attachment" by default) naming it.
    A status other than 200 sends the whole file with it. A path that is no file raises here,
    when the response is made (a 500), as Starlette's fails when it is sent. When the request
    has work to do once it is answered (a dependency with ``yield``, ``BackgroundTasks``), the
    file is read by Python instead, whole, and that work runs once it is sent, as in FastAPI
    (a task may remove the file)."""

    chunk_size = 64 * 1024

    def __init__(
        self,
        path: Union[str, "os.PathLike[str]"],
        status_code: int = 200,
        headers: Optional[Headers] = None,
        media_type: Optional[str] = None,
        background: Optional[BackgroundTask] = None,
        filename: Optional[str] = None,
        stat_result: Optional[os.stat_result] = None,
        method: Optional[str] = None,
        content_disposition_type: str = "attachment",
    ) -> None:
        import mimetypes
        import stat

        # `method` is Starlette's way to send a HEAD without a body; the core does that for
        # every HEAD, so it is taken and changes nothing.
        path = os.fspath(path)
        if not stat.S_ISREG((stat_result or os.stat(path)).st_mode):
            raise ValueError(f"FileResponse sends a file, and {path!r} is not one")
        if media_type is None:
            media_type = mimetypes.guess_type(filename or path)[0] or "application/octet-stream"
        super().__init__(status=status_code, headers=headers, media_type=media_type, background=background)
        self.path = path
        self._file = path
        if filename is not None:
            quoted = urllib.parse.quote(filename)
            if quoted != filename:
                disposition = f"{content_disposition_type}; filename*=utf-8''{quoted}"
            else:
                disposition = f'{content_disposition_type}; filename="{filename}"'
            self.headers.setdefault("content-disposition", disposition)

    def _read_here(self) -> None:
        """Sends the file from a stream of its chunks read by Python, not by the core: whole,
        with its length and validators (``dependencies.close_with_stream``). Opened now, before
        any teardown runs: a task that removes the file then leaves this reading it."""
        import hashlib

        file = open(self.path, "rb")
        stat = os.fstat(file.fileno())
        self.headers.setdefault("content-length", str(stat.st_size))
        self.headers.setdefault("last-modified", email.utils.formatdate(stat.st_mtime, usegmt=True))
        self.headers.setdefault("etag", '"' + hashlib.md5(f"{stat.st_mtime}-{stat.st_size}".encode(), usedforsecurity=False).hexdigest() + '"')
        self.stream = self._chunks(file, stat.st_size)
        self._file = None

    @classmethod
    def _chunks(cls, file: Any, size: int) -> Iterator[bytes]:
        # As many bytes as the length said: a file that grows meanwhile (a log) is sent as it
        # was when the response was made, not cut off for running past its length.
        with file:
            while size > 0 and (chunk := file.read(min(cls.chunk_size, size))):
                size -= len(chunk)
                yield chunk


class ServerSentEvent:
    """One Server-Sent Event. ``data`` is sent as it is when a ``str``, else as JSON; line
    breaks in it become separate ``data:`` lines. ``event`` names the event's type, ``id`` is
    what a reconnecting client sends back as ``Last-Event-ID``, ``retry`` (milliseconds) sets
    the client's reconnection delay, and ``comment`` is a line clients ignore."""

    __slots__ = ("data", "event", "id", "retry", "comment")
    __ferrule_event__ = True

    def __init__(
        self,
        data: Any = None,
        *,
        event: Optional[str] = None,
        id: Union[str, int, None] = None,
        retry: Optional[int] = None,
        comment: Optional[str] = None,
    ) -> None:
        self.data = data
        self.event = event
        self.id = id
        self.retry = retry
        self.comment = comment

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__ if getattr(self, name) is not None)
        return f"ServerSentEvent({fields})"


Event = Union[ServerSentEvent, Mapping[str, Any], str]


class EventSourceResponse(Response):
    """A stream of Server-Sent Events (``text/event-stream``) from a generator, sync or async,
    of ``ServerSentEvent``s, dicts of the same fields, or plain data (``str`` as it is,
    anything else as JSON). Read the ``last-event-id`` header to resume after a reconnect. A
    quiet stream gets a keep-alive comment every ``sse_keep_alive_ms`` (an ``App`` setting), or
    every ``ping`` seconds, as sse_starlette's (``0``: none); at shutdown the stream ends and
    the client's ``EventSource`` reconnects."""

    def __init__(
        self,
        content: Union[Iterable[Event], AsyncIterable[Event]],
        status_code: int = 200,
        headers: Optional[Headers] = None,
        ping: Optional[float] = None,
        background: Optional[BackgroundTask] = None,
    ) -> None:
        super().__init__(status=status_code, headers=headers, background=background)
        if ping is not None and (not isinstance(ping, (int, float)) or isinstance(ping, bool) or ping < 0):
            raise ValueError(f"EventSourceResponse: ping is a number of seconds, 0 or more, not {ping!r}")
        self.stream = content
        self.events = True
        self.ping = ping


class HTTPException(Exception):
    """Raise to answer with an RFC 9457 problem response: ``raise HTTPException(404, "No such user")``.
    ``detail`` may also be any JSON-serialisable value (a dict, a list), sent as it is, as
    FastAPI sends it."""

    def __init__(
        self,
        status_code: Optional[int] = None,
        detail: Any = None,
        headers: Optional[Mapping[str, HeaderValue]] = None,
        *,
        status: Optional[int] = None,
    ) -> None:
        # FastAPI's and Starlette's keyword is status_code; `status=` is kept for Ferrule code.
        if (status_code is None) == (status is None):
            raise TypeError("HTTPException takes its status once: HTTPException(404) or HTTPException(status_code=404)")
        status = status_code if status_code is not None else status
        assert status is not None
        super().__init__(status, detail)
        self.status = status
        self._detail = detail
        self.headers = dict(headers) if headers is not None else None

    @property
    def detail(self) -> Any:
        """What was given, or the status's reason phrase (``"Conflict"``) as FastAPI's; the
        problem response carries only a detail that was given."""
        if self._detail is None:
            try:
                return http.HTTPStatus(self.status).phrase
            except ValueError:
                return None
        return self._detail

    @detail.setter
    def detail(self, value: Any) -> None:
        self._detail = value

    @property
    def status_code(self) -> int:
        return self.status

    def __str__(self) -> str:
        return f"{self.status}: {self._detail}" if self._detail else str(self.status)
