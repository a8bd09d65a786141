"""``python -m ferrule module:app [--host H] [--port P] [--workers N] [--threads T] [--reload]``,
and ``python -m ferrule openapi module:app`` to print its OpenAPI document."""

from __future__ import annotations

import argparse
import importlib
import os
import sys


def load(target: str) -> object:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"ferrule: {target!r} is not MODULE:ATTRIBUTE (for example main:app)")
    sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise SystemExit(f"ferrule: cannot import {module_name!r}: {e}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise SystemExit(f"ferrule: module {module_name!r} has no attribute {attribute!r}") from None


def main(argv: list[str] | None = None) -> None:
    from .app import App

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["openapi"]:
        return print_openapi(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m ferrule",
        description="Serve a Ferrule app.",
        epilog="python -m ferrule openapi MODULE:ATTRIBUTE prints the app's OpenAPI document instead (no server is started).",
    )
    parser.add_argument("app", help="MODULE:ATTRIBUTE, e.g. main:app")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1, help="processes sharing the port (default 1)")
    parser.add_argument("--threads", type=int, default=None, help="runtime threads per process (default: usable CPUs)")
    parser.add_argument("--reload", action="store_true", help="development: restart when a .py file changes")
    parser.add_argument("--reload-dir", action="append", default=None, help="a directory to watch (default: the working directory); repeatable")
    args = parser.parse_args(argv)
    if args.reload:
        if args.workers != 1:
            raise SystemExit("ferrule: --reload runs one process; leave out --workers")
        return reload(argv, args.reload_dir or [os.getcwd()])
    app = load(args.app)
    if not isinstance(app, App):
        raise SystemExit(f"ferrule: {args.app} is a {type(app).__name__}, not a ferrule.App")
    if args.workers < 1:
        raise SystemExit("ferrule: --workers must be at least 1")
    try:
        app.run(args.host, args.port, workers=args.workers, threads=args.threads)
    except OSError as e:
        raise SystemExit(f"ferrule: {e}") from None


def reload(argv: list[str], directories: list[str]) -> None:
    """The core's reload supervisor over this same command without ``--reload``."""
    from . import _ferrule

    child: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--reload":
            pass
        elif arg == "--reload-dir":
            skip = True
        elif not arg.startswith("--reload-dir="):
            child.append(arg)
    import signal

    # The supervisor handles SIGINT and SIGTERM itself; Python's own handling would raise
    # KeyboardInterrupt once it returns. (A no-op handler, not SIG_IGN: the child must not
    # inherit an ignored signal.)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: None)
    raise SystemExit(_ferrule.reload([sys.executable, "-m", "ferrule", *child], [os.path.abspath(d) for d in directories], [".py"], 200))


def print_openapi(argv: list[str]) -> None:
    """``python -m ferrule openapi module:app``: the app's OpenAPI document on standard output,
    without serving (for CI to diff or a client generator to read)."""
    from .app import App

    parser = argparse.ArgumentParser(prog="python -m ferrule openapi", description="Print a Ferrule app's OpenAPI document.")
    parser.add_argument("app", help="MODULE:ATTRIBUTE, e.g. main:app")
    args = parser.parse_args(argv)
    app = load(args.app)
    if not isinstance(app, App):
        raise SystemExit(f"ferrule: {args.app} is a {type(app).__name__}, not a ferrule.App")
    sys.stdout.write(app._native_app.openapi())


if __name__ == "__main__":
    main()
