"""Ferrule's log records in Python's ``logging``.

The core's records arrive on the event loop's thread in batches (``_ferrule.LogDrain``) and go
to the loggers ``ferrule.server`` (the startup line, a drain that cut requests off),
``ferrule.handler`` (a handler that raised or returned what cannot be sent) and
``ferrule.access`` (``access_log=True``), with their values as record attributes
(``record.status``, ``record.duration_ms``, ``record.request_id``, ``record.route``). Configure
them as any library's loggers; ``log_level`` (the core's setting) decides what is sent at all.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

__all__ = ["emit", "handler_raised", "use_default_handler"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}
# A field named like a LogRecord attribute would make `logging` raise KeyError: it is renamed.
_RESERVED = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


def emit(name: str, level: str, message: str, fields: dict[str, Any]) -> None:
    """One core record, given to the logger named after its target."""
    logger = logging.getLogger(name)
    levelno = _LEVELS.get(level, logging.INFO)
    if logger.isEnabledFor(levelno):
        extra = {("ferrule_" + key if key in _RESERVED else key): value for key, value in fields.items()}
        logger.log(levelno, message, extra=extra)


def handler_raised(route: str, exception: BaseException) -> None:
    """A handler's exception, with its traceback (the client gets a bare 500)."""
    logging.getLogger("ferrule.handler").error("%s raised an exception", route, exc_info=exception, extra={"route": route})


def use_default_handler() -> None:
    """What ``app.run()`` sets up when the program configured no logging (as uvicorn does):
    the ``ferrule`` loggers write ``ferrule: <message>`` lines to stderr. A program that adds
    handlers of its own (``logging.basicConfig``, ``dictConfig``) before ``run()`` keeps them."""
    logger = logging.getLogger("ferrule")
    if logger.handlers or logging.getLogger().handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("ferrule: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)  # the core's log_level has already chosen
    logger.propagate = False
