"""The app the worker tests run with `python -m ferrule workers_app:app --workers 2`."""

import asyncio
import os

from ferrule import App

app = App()


@app.get("/pid")
def pid():
    return {"pid": os.getpid()}


@app.get("/slow")
async def slow(ms: int = 500):
    await asyncio.sleep(ms / 1000)
    return {"pid": os.getpid(), "slept_ms": ms}
