"""Benchmark tracks: extraction, tool calling, create-by-schema and repair."""

from __future__ import annotations

from .base import EXTRACTION, TRACK_NAMES, Track, TrackSample, TrackSettings
from .breakage import BREAKAGE_KINDS, BreakageError, applicable_kinds, break_json
from .extraction import ExtractionTrack
from .generate import GenerateTrack
from .repair import RepairTrack
from .toolcall import ToolCallTrack

TRACKS: dict[str, type[Track]] = {
    EXTRACTION: ExtractionTrack,
    "toolcall": ToolCallTrack,
    "generate": GenerateTrack,
    "repair": RepairTrack,
}


def get_track(name: str) -> Track:
    """The track object for ``name``."""
    try:
        return TRACKS[name]()
    except KeyError:
        raise ValueError(f"unknown track {name!r}; choose one of {', '.join(TRACK_NAMES)}") from None


__all__ = [
    "BREAKAGE_KINDS",
    "BreakageError",
    "EXTRACTION",
    "ExtractionTrack",
    "GenerateTrack",
    "RepairTrack",
    "TRACKS",
    "TRACK_NAMES",
    "ToolCallTrack",
    "Track",
    "TrackSample",
    "TrackSettings",
    "applicable_kinds",
    "break_json",
    "get_track",
]
