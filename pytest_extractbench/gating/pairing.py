"""Which samples a baseline comparison may pair: those whose content hash is the same in both runs.

A sample whose text, schema or gold changed since the baseline was saved measures something else: comparing its
scores would blame (or credit) the model for an edit to the data. Pure functions, no pytest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Pairing", "pair_samples", "too_few_unchanged"]


@dataclass(frozen=True)
class Pairing:
    """The baseline's samples against this run's dataset, by id and content hash.

    ``checked`` is False for a baseline saved without content hashes: then every id both hold counts as unchanged,
    as before hashes were recorded, and the comparison says it could not check.
    """

    checked: bool
    unchanged: tuple[str, ...]
    changed: tuple[str, ...]  # same id, different content: never compared
    added: tuple[str, ...]  # in this run's dataset only
    removed: tuple[str, ...]  # in the baseline only

    @property
    def baseline_total(self) -> int:
        return len(self.unchanged) + len(self.changed) + len(self.removed)

    @property
    def unchanged_fraction(self) -> float:
        """Share of the baseline's samples that are unchanged here (1.0 for an empty baseline: nothing was lost)."""
        return len(self.unchanged) / self.baseline_total if self.baseline_total else 1.0

    def counts(self) -> str:
        """``3 unchanged, 1 changed, 0 added, 0 removed``."""
        return (
            f"{len(self.unchanged)} unchanged, {len(self.changed)} changed, {len(self.added)} added, "
            f"{len(self.removed)} removed"
        )

    def describe(self) -> str:
        """One line for the terminal and summary.md."""
        if not self.checked:
            return (
                "could not be checked: the baseline has no per-sample content hashes (saved by an older version), "
                f"so its samples are paired by id alone ({len(self.unchanged)} ids in common); save it again to "
                "pair only unchanged samples"
            )
        return (
            f"{self.counts()} of the baseline's {self.baseline_total} samples by content hash; "
            "only the unchanged are compared"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "baseline_samples": self.baseline_total,
            "unchanged": len(self.unchanged),
            "changed": len(self.changed),
            "added": len(self.added),
            "removed": len(self.removed),
            "unchanged_fraction": self.unchanged_fraction,
            "changed_samples": list(self.changed),
        }


def pair_samples(baseline: Mapping[str, str | None], current: Mapping[str, str], *, checked: bool = True) -> Pairing:
    """Pair the baseline's samples (id -> content hash) with this run's (id -> content hash).

    With ``checked`` False (a baseline without hashes) the hashes are not compared: every shared id is unchanged.
    """
    shared = sorted(set(baseline) & set(current))
    changed = tuple(i for i in shared if checked and baseline[i] != current[i])
    gone = set(changed)
    return Pairing(
        checked=checked,
        unchanged=tuple(i for i in shared if i not in gone),
        changed=changed,
        added=tuple(sorted(set(current) - set(baseline))),
        removed=tuple(sorted(set(baseline) - set(current))),
    )


def too_few_unchanged(pairing: Pairing, minimum: float) -> str | None:
    """Why a regression check cannot stand on this pairing (fewer than ``minimum`` of the baseline's samples are
    unchanged), or None. A pairing that could not be checked is not refused: it is reported as such."""
    if not pairing.checked or pairing.unchanged_fraction >= minimum:
        return None
    return (
        f"only {len(pairing.unchanged)} of the baseline's {pairing.baseline_total} samples are unchanged in this "
        f"dataset ({pairing.counts()}; by content hash of text, schema and gold), under the "
        f"{minimum:.0%} a regression check needs (--extractbench-baseline-min-unchanged {minimum:g})"
    )
