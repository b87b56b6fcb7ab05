"""A fixed xdist schedule for live runs, so that every worker knows its items before they arrive.

xdist's ``load`` scheduler hands out items in small batches as workers finish, so a worker cannot
request its answers ahead (DESIGN decision 2). Here item ``i`` always runs on worker
``gw{i % workercount}``, sent in one batch; the worker computes the same partition
(:func:`own_indices`) and pipelines those requests. Items of a worker that crashes are re-sent to
the others like xdist does, and are requested when they run.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScheduling

from .session import STATIC_KEY, own_indices

__all__ = ["STATIC_KEY", "StaticScheduling", "own_indices"]


class StaticScheduling(LoadScheduling):
    """Round-robin by index over the workers, all at once; otherwise xdist's load scheduling."""

    def schedule(self) -> None:
        assert self.collection_is_completed
        if self.collection is not None:
            for node in self.nodes:
                self.check_schedule(node)
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = next(iter(self.node2collection.values()))
        if not self.collection:
            return
        by_id: dict[str, Any] = {node.gateway.id: node for node in self.nodes}
        count = next(iter(self.nodes)).workerinput["workercount"]
        first = self.nodes[0]
        batches: dict[Any, list[int]] = {node: [] for node in self.nodes}
        for index in range(len(self.collection)):
            batches[by_id.get(f"gw{index % count}", first)].append(index)
        self.pending[:] = []
        for node, indices in batches.items():
            if indices:
                self.node2pending[node].extend(indices)
                node.send_runtest_some(indices)
        for node in self.nodes:
            node.shutdown()
