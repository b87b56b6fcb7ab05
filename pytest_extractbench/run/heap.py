"""The one process-wide setting a run touches: the cyclic GC's permanent generation, and only when it is free.

Why: a run keeps its dataset, records and reports alive until it ends, and every full collection rescans them
(30% of scoring time on 10,000 samples; a third of a large run's time after the last item, when aggregation,
the reports and pytest's summary allocate heavily). ``gc.freeze()`` moves what exists out of the collector's
sight; frozen objects are still freed when their last reference goes.

The rule: a run freezes only when the GC is enabled and nothing is frozen yet (a process that freezes its own
objects, a pre-fork server say, or one that disabled the GC, manages collections itself), and at its end it
unfreezes only if it was the one to freeze (``gc.unfreeze()`` thaws everything). The collector is never
disabled and no threshold is changed, so the user's interpreter leaves a run as it entered it.
"""

from __future__ import annotations

import gc

__all__ = ["HeapFreeze"]


class HeapFreeze:
    """Freezes the heap for one run when the rule allows, and gives back what it took."""

    def __init__(self) -> None:
        self.owned: bool | None = None  # decided at the first freeze: may this run use the permanent generation?

    def freeze(self, *, collect: bool = False) -> bool:
        """Freeze every object alive now (after collecting the garbage cycles, with ``collect``); False when
        the GC is not this run's to manage."""
        if self.owned is None:
            self.owned = gc.isenabled() and gc.get_freeze_count() == 0
        if not self.owned or not gc.isenabled():
            return False
        if collect:
            gc.collect()
        gc.freeze()
        return True

    def release(self) -> None:
        """Unfreeze, if this run froze; the GC then sees everything again (pytest's final collection)."""
        if self.owned:
            gc.unfreeze()
        self.owned = None
