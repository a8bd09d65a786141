"""Ferrule: a Rust HTTP core (axum + tokio) with Python handlers."""

from ferrule._ferrule import PROBLEM_JSON, __version__

__all__ = ["PROBLEM_JSON", "__version__"]
