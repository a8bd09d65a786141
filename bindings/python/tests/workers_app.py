"""The app the worker tests run with `python -m ferrule workers_app:app --workers 2`."""

import asyncio
import os
import time

from ferrule import App

# The drain deadline is shortened by the test that watches a drain being cut off.
app = App(shutdown_timeout_ms=int(os.environ.get("FERRULE_TEST_DRAIN_MS", "10000")))


@app.get("/pid")
def pid():
    return {"pid": os.getpid()}


# A test waits for this file to name a worker before it signals: then the request is in flight.
STARTED = os.environ.get("FERRULE_TEST_STARTED")


@app.get("/slow")
async def slow(ms: int = 500):
    if STARTED:
        with open(STARTED, "a") as started:
            started.write(f"{os.getpid()}\n")
    await asyncio.sleep(ms / 1000)
    return {"pid": os.getpid(), "slept_ms": ms}


@app.get("/slow-sync")
def slow_sync(ms: int = 500):
    """A `def` handler: it holds the event loop's thread while it sleeps."""
    if STARTED:
        with open(STARTED, "a") as started:
            started.write(f"{os.getpid()}\n")
    time.sleep(ms / 1000)
    return {"pid": os.getpid(), "slept_ms": ms}
