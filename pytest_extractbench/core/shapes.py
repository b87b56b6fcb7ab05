"""The filler behind the typed sections of metrics.json (:mod:`.sections`, :mod:`.modelsections`): a section's
shape says which keys it requires and what it nests, and :func:`filled` gives a section the keys it lacks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Shape:
    """What a section needs: the defaults of its required keys, and the shapes of what it nests (one object, a
    mapping of objects, or a list of objects under a key). A nested key with a default is required: a malformed
    value becomes the default; one without is dropped."""

    defaults: Mapping[str, Any] = field(default_factory=dict)
    objects: Mapping[str, Shape] = field(default_factory=dict)
    maps: Mapping[str, Shape] = field(default_factory=dict)
    lists: Mapping[str, Shape] = field(default_factory=dict)


def _copy(value: Any) -> Any:
    return value.copy() if type(value) in (dict, list) else value


def filled(shape: Shape, found: Any) -> dict[str, Any] | None:
    """``found`` with what ``shape`` requires, or None when it is not an object. Copies what it changes."""
    if not isinstance(found, Mapping):
        return None
    out = dict(found)
    for key, value in shape.defaults.items():
        if key not in out or (type(value) in (dict, list) and not isinstance(out[key], type(value))):
            out[key] = _copy(value)  # a container where the type says one: null or a number there reads as empty
    for key, inner in shape.objects.items():
        if key in out and not (out[key] is None and key in shape.defaults and shape.defaults[key] is None):
            _put(out, key, shape, filled(inner, out[key]))
    for key, inner in shape.maps.items():
        if key in out:
            entries = out[key]
            _put(out, key, shape, each(inner, entries.items()) if isinstance(entries, Mapping) else None)
    for key, inner in shape.lists.items():
        if key in out:
            entries = out[key]
            kept = each(inner, enumerate(entries)) if isinstance(entries, list) else None
            _put(out, key, shape, None if kept is None else list(kept.values()))
    return out


def each(shape: Shape, items: Any) -> dict[Any, Any]:
    """The ``(key, value)`` items whose value is an object, each filled; the others left out."""
    return {k: v for k, v in ((k, filled(shape, v)) for k, v in items) if v is not None}


def _put(out: dict[str, Any], key: str, shape: Shape, value: Any) -> None:
    if value is not None:
        out[key] = value
    elif key not in shape.defaults:
        del out[key]
    elif shape.defaults[key] is not None and key in shape.objects:
        out[key] = filled(shape.objects[key], {})
    else:
        out[key] = _copy(shape.defaults[key])
