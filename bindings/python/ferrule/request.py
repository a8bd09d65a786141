"""The request as handlers see it (``Request``) and uploaded files (``UploadFile``).

Both are built by Rust from data it already parsed and validated; see ``_ferrule.pyi`` for
their attributes.
"""

from ._ferrule import Request, UploadFile

__all__ = ["Request", "UploadFile"]
