"""Moved to :mod:`pytest_extractbench.live.backends.llama_server`; this name keeps old imports working."""

from .backends.llama_server import *  # noqa: F403
from .backends.llama_server import __all__  # noqa: F401
