"""``StaticFiles``: a directory served by the core, mounted as Starlette's is.

    app.mount("/static", StaticFiles(directory="public"), name="static")

The files never enter Python: the core serves them (ETag and Last-Modified with 304s,
``Range``, precompressed ``.br``/``.gz`` siblings, ``index.html`` for a directory), refuses any
path that climbs out of the directory (``..``, encoded or not, backslashes, NUL, symlinks that
lead outside) and, unless ``dotfiles=True``, hidden files (``.env``, ``.git/``).
"""

from __future__ import annotations

import os
from typing import Any, Optional, Union

__all__ = ["StaticFiles"]


class StaticFiles:
    """A directory to serve: ``directory`` (a path), ``html`` (Starlette's name for serving a
    directory's ``index.html``; on by default here, as in nginx and @fastify/static),
    ``precompressed`` (send a ``.br`` or ``.gz`` sibling to a client that accepts it),
    ``cache_control`` (the files' ``Cache-Control``; none by default, clients revalidate with
    the ETag), ``dotfiles`` (serve hidden files too), ``follow_symlink`` (Starlette's: follow a
    symlink even where it leads outside the directory). ``check_dir`` is Starlette's: the
    directory is always checked when mounted."""

    def __init__(
        self,
        *,
        directory: Union[str, "os.PathLike[str]"],
        html: bool = True,
        precompressed: bool = True,
        cache_control: Optional[str] = None,
        dotfiles: bool = False,
        follow_symlink: bool = False,
        check_dir: bool = True,
    ) -> None:
        self.directory = os.fspath(directory)
        self.html = html
        self.precompressed = precompressed
        self.cache_control = cache_control
        self.dotfiles = dotfiles
        self.follow_symlink = follow_symlink

    def spec(self, prefix: str) -> dict[str, Any]:
        """The core's ``StaticSpec`` for this directory at ``prefix``."""
        spec: dict[str, Any] = {
            "prefix": prefix,
            "directory": self.directory,
            "index": self.html,
            "precompressed": self.precompressed,
            "dotfiles": self.dotfiles,
            "follow_symlinks": self.follow_symlink,
        }
        if self.cache_control is not None:
            spec["cache_control"] = self.cache_control
        return spec
