"""Moved to :mod:`pytest_extractbench.live.backends.llama_launcher`; console scripts installed from an older
version of the package still point here."""

from .backends.llama_launcher import main

__all__ = ["main"]
