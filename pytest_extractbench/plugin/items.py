"""Test items: one :class:`SampleItem` per (model, sample), under one collector per dataset.

Ids are stable and sorted (dataset order, models in name order), so every xdist
worker collects exactly the same items.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from ..core import textsafe
from ..core.errors import ExtractbenchError
from ..dataset.rowfile import DatasetChangedError
from ..dataset.samples import Sample
from .stash import BENCH_KEY

if TYPE_CHECKING:
    from ..dataset.records import SampleRecord, TrackRecord


class SampleFailure(ExtractbenchError):
    """A sample item failed: its output is unusable or below the per-sample quality bar."""

    def __init__(self, record: SampleRecord | TrackRecord) -> None:
        super().__init__(record.failure)
        self.record = record


NAME_PART = 120  # longest model name or sample id shown in an item name


def _name_part(text: str) -> str:
    """A model name or sample id made safe for the terminal; a clipped one keeps a hash, so names stay distinct.

    Backslashes are doubled, as pytest does in parametrize ids: pytest-html decodes node ids as
    ``unicode_escape``, and a lone ``\\x`` or ``\\N`` in an id would stop its report with a traceback.
    """
    shown = textsafe.terminal(text[:NAME_PART].replace("\\", "\\\\"), None)
    if len(text) <= NAME_PART and len(shown) <= NAME_PART:
        return shown
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{shown[: NAME_PART - 14]}…{digest}"


def take_item_ids(args: list[str]) -> list[str]:
    """Remove the items' node ids (``<dataset>::extractbench[<model>-<id>]``) from pytest's arguments, in
    place, and return them: pytest would look for a file named like the dataset and stop."""
    found = [arg for arg in args if ITEM_ID_MARK in arg]
    args[:] = [arg for arg in args if ITEM_ID_MARK not in arg]
    return found


ITEM_ID_MARK = "::extractbench["


def item_name(model: str, sample_id: str, shown_model: str | None = None) -> str:
    """The item name shown by pytest: ``extractbench[<model>-<sample_id>]`` (untrusted parts escaped, clipped;
    ``shown_model``: the model's part already made, when many items of one model are named)."""
    return f"extractbench[{_name_part(model) if shown_model is None else shown_model}-{_name_part(sample_id)}]"


# pytest's own markers and -m keywords: a topic named like one gets a prefix (a "skip" topic must not skip)
_BUILTIN_MARKS = {
    "skip",
    "skipif",
    "xfail",
    "parametrize",
    "usefixtures",
    "filterwarnings",
    "tryfirst",
    "trylast",
    "and",
    "or",
    "not",
    "true",
    "false",
    "none",
}


@functools.lru_cache(maxsize=1024)  # a few topics and bins, asked once a sample: a pure function of its arguments
def marker_name(text: str, taken: frozenset[str] = frozenset()) -> str:
    """A topic or complexity bin as a marker name: lower case, an identifier, clear of pytest's and other
    plugins' markers (``taken``)."""
    name = re.sub(r"\W+", "_", text.strip().lower()).strip("_")[:NAME_PART]
    if not name.isidentifier() or name in _BUILTIN_MARKS or name in taken:
        name = f"topic_{name}"
    return name


def sample_markers(sample: Sample, taken: frozenset[str] = frozenset()) -> dict[str, str]:
    """The markers of a sample's items (name -> what it marks): its topic and its schema's complexity bin."""
    complexity = sample.meta.get("complexity")
    level = complexity.get("complexity_bin") if isinstance(complexity, Mapping) else None
    found = {"topic": sample.topic, "schema complexity bin": level}
    return {marker_name(str(v), taken): what for what, v in found.items() if v and str(v).strip()}


def taken_markers(config: pytest.Config) -> frozenset[str]:
    """Marker names registered before the samples' (pytest's, other plugins', the project's)."""
    return frozenset(re.split(r"[:(]", line, maxsplit=1)[0].strip() for line in config.getini("markers"))


def register_markers(config: pytest.Config, markers: Iterable[Mapping[str, str]]) -> None:
    """Register the markers the samples will carry (name -> what it marks), so --strict-markers accepts them."""
    seen: dict[str, str] = {}
    for found in markers:
        for name, what in found.items():
            seen.setdefault(name, what)
    for name, what in sorted(seen.items()):
        config.addinivalue_line("markers", f"{name}: extractbench samples of one {what}")


class DatasetCollector(pytest.Collector):
    """The dataset as a pytest collector; its children are the sample items."""

    def __init__(self, *, work: Iterable[tuple[str, Sample]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._work = list(work)

    def collect(self) -> list[SampleItem]:
        taken = taken_markers(self.config)
        markers = {id(sample): sample_markers(sample, taken) for _, sample in self._work}
        register_markers(self.config, markers.values())
        # one mark per marker name, shared by the items that carry it (marks are immutable, as a module's
        # pytestmark is shared by its tests): not a mark object and its kwargs dict per item and marker
        by_name = {name: getattr(pytest.mark, name) for name in {name for found in markers.values() for name in found}}
        marks = {i: [by_name[name] for name in found] for i, found in markers.items()}
        shown_models = {model: _name_part(model) for model in {model for model, _ in self._work}}
        items = []
        for model, sample in self._work:
            name = item_name(model, sample.id, shown_models[model])
            # The id given as a string, parsed as pytest parses the ids it reads back from its cache: built from the
            # name, pytest 9 keeps "[...]" inside the name, and --lf/--ff/--sw would never find the item again.
            item = SampleItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", model=model, sample=sample)
            for mark in marks[id(sample)]:
                item.add_marker(mark)  # -m "medical and complex"
            items.append(item)
        return items


class SampleItem(pytest.Item):
    """Asks the model for one sample's output (or reads it), scores it, and passes or fails."""

    def __init__(self, *, model: str, sample: Sample, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.sample = sample
        self.record: SampleRecord | TrackRecord | None = None
        # -k selects on sample id, topic and model as well as on the item name.
        self.extra_keyword_matches.update(k for k in (sample.id, sample.topic, model) if k)

    def runtest(self) -> None:
        # a dataset line edited since it was loaded raises DatasetChangedError: this item fails naming it and the
        # run goes on, each later sample checked against its own line
        record = self.record = self.config.stash[BENCH_KEY].run_item(self)
        if not record.passed:
            raise SampleFailure(record)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, SampleFailure):
            return self.config.stash[BENCH_KEY].explain_failure(excinfo.value.record)
        if isinstance(excinfo.value, DatasetChangedError):
            return textsafe.text_lines(str(excinfo.value))
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{textsafe.terminal(self.model)} on sample {textsafe.terminal(self.sample.id)}"
