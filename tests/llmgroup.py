"""The llm tests on one xdist worker, whatever pytest's version.

``--dist loadgroup`` groups tests by an ``xdist_group`` mark that each worker writes into the test's node id, but
pytest 9.2 derives ``Item.nodeid`` from another field, so the suffix is lost and xdist 3.8 spreads the group over
every worker: each then starts its own llama-servers and two model servers share the same two cores (a CI run's
slowest test took 22 minutes that way). Here each worker writes the node ids of its llm tests to a file beside the
controller's, and the controller's scheduler reads them: those tests are one unit of work, every other test its
own, as loadgroup means.
"""

from __future__ import annotations

import glob
import os
import tempfile
from collections.abc import Iterable
from typing import Any

import pytest

GROUP = "llama-server"
_FILE_VARIABLE = "EXTRACTBENCH_LLM_GROUP_FILE"


def start(config: pytest.Config) -> None:
    """On the controller of a ``--dist loadgroup`` run: where the workers will write (workers inherit it)."""
    if hasattr(config, "workerinput") or config.getoption("dist", None) != "loadgroup":
        return
    fd, path = tempfile.mkstemp(prefix="extractbench-llm-group-")
    os.close(fd)
    os.environ[_FILE_VARIABLE] = path


def finish(config: pytest.Config) -> None:
    path = os.environ.pop(_FILE_VARIABLE, None) if not hasattr(config, "workerinput") else None
    for name in glob.glob(f"{path}*") if path else ():
        os.unlink(name)


def record(config: pytest.Config, node_ids: Iterable[str]) -> None:
    """On a worker: the node ids of its llm tests, written whole before the worker reports its collection."""
    path = os.environ.get(_FILE_VARIABLE)
    if not path or not hasattr(config, "workerinput"):
        return
    mine = f"{path}.{config.workerinput['workerid']}"
    with open(f"{mine}.tmp", "w", encoding="utf-8") as fh:
        fh.write("".join(f"{node_id}\n" for node_id in node_ids))
    os.replace(f"{mine}.tmp", mine)


def scheduler(config: pytest.Config, log: Any) -> Any:
    """loadgroup's scheduler with the llm group read from the workers' files."""
    from xdist.scheduler import LoadGroupScheduling

    class LlmGroupScheduling(LoadGroupScheduling):
        _llm: frozenset[str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._llm is None:  # asked only once every worker has reported its collection
                path = os.environ.get(_FILE_VARIABLE, "")
                found: set[str] = set()
                for name in glob.glob(f"{path}.*") if path else ():
                    if not name.endswith(".tmp"):
                        with open(name, encoding="utf-8") as fh:
                            found.update(fh.read().split("\n"))
                self._llm = frozenset(found - {""})
            return GROUP if nodeid in self._llm else super()._split_scope(nodeid)

    return LlmGroupScheduling(config, log)
