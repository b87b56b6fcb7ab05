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

__all__ = ["STATIC_KEY", "StaticScheduling"]


class StaticScheduling(LoadScheduling):  # type: ignore[misc]  # xdist ships no type information
    """Round-robin by index over the workers, all at once; otherwise xdist's load scheduling."""

    collection: list[str] | None  # the node ids every worker collected (set by LoadScheduling, None until then)

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
        count = next(iter(self.nodes)).workerinput["workercount"]
        total = len(self.collection)
        # the very partition each worker computes for itself (own_indices), so it requests what it runs
        batches: dict[Any, list[int]] = {node: own_indices(total, node.gateway.id, count) for node in self.nodes}
        assigned = {index for indices in batches.values() for index in indices}
        batches[self.nodes[0]].extend(i for i in range(total) if i not in assigned)  # workers that are missing
        self.pending[:] = []
        for node, indices in batches.items():
            if indices:
                self.node2pending[node].extend(indices)
                node.send_runtest_some(indices)
        for node in self.nodes:
            node.shutdown()
