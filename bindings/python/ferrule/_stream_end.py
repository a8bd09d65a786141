"""A response's stream that says when it is done: once, when it ends, fails or is closed (a
client that left), and also when it is closed before its first chunk, which a generator's
``finally`` would miss. Work that must wait until a streamed response has gone hangs on it: the
request's generator dependencies (``dependencies.close_with_stream``) and a response's
``background`` task (``background.after_response``)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Optional

#: What runs once the stream is done; an awaitable it returns is awaited by an async stream.
Then = Callable[[], Optional[Awaitable[None]]]


class EndingStream:
    """A sync stream, iterated on a thread of the stream pool."""

    def __init__(self, stream: Any, then: Then) -> None:
        self._iterator = iter(stream)
        self._then = then
        self._closed = False

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        try:
            return next(self._iterator)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            close = getattr(self._iterator, "close", None)
            if close is not None:
                close()
        finally:
            self._then()


class EndingAsyncStream:
    """``EndingStream`` for an async stream, iterated on the loop."""

    def __init__(self, stream: Any, then: Then) -> None:
        self._iterator = stream.__aiter__()
        self._then = then
        self._closed = False

    def __aiter__(self) -> Any:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._iterator.__anext__()
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            close = getattr(self._iterator, "aclose", None)
            if close is not None:
                await close()
        finally:
            ending = self._then()
            if ending is not None:
                await ending
