"""``evaluate()``: one whole benchmark run in-process, with no pytest.

from pytest_extractbench import evaluate, load_run
result = evaluate("bundled", predictions="fixtures/predictions/demo.jsonl", output="runs/demo")
result.metric("extraction_quality_score"), result.gate_passed
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from ..config.from_python import settings_from_options
from ..core.errors import UsageProblem
from ..dataset.samples import Dataset
from .context import RunContext, RunEvents
from .finish import finish_run, version
from .heap import HeapFreeze
from .items import run_item
from .result import RunResult
from .rules import configure_rules

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ..dataset.samples import SampleView
    from .keywords import EvaluateOptions

PathText = Union[str, "os.PathLike[str]"]
# a dataset: its name or path, a loaded Dataset (load_dataset()), a HuggingFace datasets.Dataset, or rows
DatasetInput = Union[str, "os.PathLike[str]", Dataset, Iterable[Mapping[str, Any]]]
# predictions: a path, several, {model: path or rows}, or rows ({"id", "output"} dicts) for one model
PredictionsInput = Union[str, "os.PathLike[str]", Sequence[PathText], Mapping[str, Any], Iterable[Mapping[str, Any]]]
# progress(done, total, record): after each (model, sample) is scored
Progress = Callable[[int, int, Any], object]

ROWS_LABEL = "<rows>"


def evaluate(
    dataset: DatasetInput = "bundled",
    *,
    predictions: PredictionsInput | None = None,
    extractor: Callable[[SampleView], Any] | None = None,
    base_url: str | Sequence[str] | None = None,
    model: str | Sequence[str] | None = None,
    output: PathText | None = None,
    rootdir: PathText | None = None,
    events: RunEvents | None = None,
    progress: Progress | None = None,
    **options: Unpack[EvaluateOptions],
) -> RunResult:
    """Benchmark one dataset and return the run's result; the run directory is written as by pytest.

    ``dataset``: ``"bundled"``, a file, folder or ``hf:`` name as on the command line, a loaded
    :class:`~pytest_extractbench.Dataset` (:func:`~pytest_extractbench.load_dataset`), a HuggingFace
    ``datasets.Dataset``, or rows (dicts ``{id, text, schema, expected}``, the bundled file's format).
    Where the answers come from: ``predictions`` (a JSONL file, a list of them, ``{model: path or rows}``, or
    rows ``{"id", "output"}`` in memory), ``extractor`` (any callable ``(SampleView) -> str | dict | ModelResponse``,
    sync or async; it sees a sample's id, text, schema and meta, never its gold, and each call has ``timeout``
    seconds; a lambda needs ``model=``), ``base_url`` of an OpenAI-compatible server with ``model``, or, with
    none of them, the embedded llama-server. ``options`` are the ``--extractbench-*`` options by their
    underscore names (``sla="target"``, ``sample=10``, ``compare="main"``, ``resume="runs/x"``), typed in
    :class:`~pytest_extractbench.run.keywords.EvaluateOptions`. ``progress(done, total, record)`` is called
    after each (model, sample) is scored. ``rootdir`` holds ``.extractbench/`` (default: the current directory).
    A problem with the inputs raises :class:`~pytest_extractbench.core.errors.UsageProblem`.
    """
    check_arguments(
        dataset=dataset,
        extractor=extractor,
        output=output,
        rootdir=rootdir,
        events=events,
        progress=progress,
        model=model,
    )
    root = Path(rootdir) if rootdir is not None else Path.cwd()
    values: dict[str, Any] = dict(options)
    if extractor is not None:  # named like --extractbench-extractor, so it gets an extractor's defaults (timeout)
        from ..live.extractor import ExtractorSource

        values["extractor"] = ExtractorSource.qualified_name(extractor)
    spec, samples = dataset_input(dataset)
    settings = settings_from_options(
        root,
        dataset=spec,
        predictions=predictions,
        base_url=base_url,
        model=model,
        output=None if output is None else Path(output),
        **values,
    )
    configure_rules(settings)
    watcher = ProgressEvents(events, progress)
    context = RunContext(
        settings, base_dir=root, events=watcher, extractor=extractor, samples=samples, from_python=True
    )
    try:
        models = context.models()
        if not models:
            raise UsageProblem("extractbench: no model given (model=NAME)")
        context.check_invalid_policy()
        context.check_baseline_pairing()
        work = [(name, sample) for name in models for sample in context.dataset.samples]
        watcher.total = len(work)
        context.live.start()
        context.source.prepare(work)
        heap = HeapFreeze()  # the dataset stays unchanged: keep the cyclic GC from rescanning it (heap.py)
        heap.freeze()
        try:
            records = [run_item(context, name, sample) for name, sample in work]
        finally:
            heap.release()
            context.close_source()
        return finish_run(
            context, records, pytest_version=version("pytest")
        )  # the installed pytest, as the plugin records its own
    finally:
        context.close()


class ProgressEvents(RunEvents):
    """The caller's events, plus ``progress(done, total, record)`` after each scored sample."""

    def __init__(self, events: RunEvents | None, progress: Progress | None) -> None:
        self.events = events or RunEvents()
        self.progress = progress
        self.done = 0
        self.total = 0

    def request_done(self, model: str, sample_id: str, response: Any) -> None:
        self.events.request_done(model, sample_id, response)

    def sample_scored(self, record: Any) -> None:
        self.events.sample_scored(record)
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total, record)

    def run_finished(self, metrics: dict[str, Any]) -> None:
        self.events.run_finished(metrics)


def is_hf_dataset(dataset: Any) -> bool:
    """A HuggingFace ``datasets.Dataset`` or ``DatasetDict`` (told by its module: ``datasets`` need not be installed)."""
    module = type(dataset).__module__.split(".")[0]
    return module == "datasets" and (callable(getattr(dataset, "to_list", None)) or isinstance(dataset, Mapping))


def dataset_input(dataset: Any) -> tuple[str, Dataset | list[tuple[str, Any]] | None]:
    """The dataset's label for the settings, and the samples given as an object (None: the label is read)."""
    if isinstance(dataset, (str, os.PathLike)):
        return os.fspath(dataset), None
    if isinstance(dataset, Dataset):
        return dataset.source, dataset
    if is_hf_dataset(dataset):  # a Dataset, or a DatasetDict: every split, as hf:NAME without :SPLIT
        from ..dataset.sources import DatasetSourceError, iter_hf_rows

        label = f"<datasets.{type(dataset).__name__}>"
        first = next(iter(dataset), "test") if isinstance(dataset, Mapping) else "test"
        try:
            return label, list(iter_hf_rows(dataset, f"dataset={label}", f"dataset=ds[{first!r}]"))
        except DatasetSourceError as exc:
            raise UsageProblem(f"extractbench: {exc}") from None
    rows = list(dataset)
    bad = next((n for n, row in enumerate(rows, start=1) if not isinstance(row, Mapping)), None)
    if bad is not None:
        raise UsageProblem(
            f"extractbench: dataset row {bad}: expected a dict {{id, text, schema, expected}}, got "
            f"{type(rows[bad - 1]).__name__}"
        )
    return ROWS_LABEL, [(f"row {n}", dict(row)) for n, row in enumerate(rows, start=1)]


def check_arguments(
    *, dataset: Any, extractor: Any, output: Any, rootdir: Any, events: Any, progress: Any = None, model: Any = None
) -> None:
    """evaluate()'s own arguments (the options are checked with the settings), with the message the command
    line would give, before anything is read or written."""

    def problem(name: str, value: Any, expected: str) -> UsageProblem:
        shown = value if isinstance(value, (int, float)) else type(value).__name__
        return UsageProblem(f"extractbench: {name}={shown}: expected {expected}, got {type(value).__name__}")

    allowed = (str, os.PathLike, Dataset, Iterable)
    if not is_hf_dataset(dataset) and (not isinstance(dataset, allowed) or isinstance(dataset, (bytes, Mapping))):
        raise problem("dataset", dataset, "a dataset name or path, a Dataset, or rows (dicts)")
    for name, value in (("output", output), ("rootdir", rootdir)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise problem(name, value, "a directory path (str or Path)")
    if extractor is not None and not callable(extractor):
        raise problem("extractor", extractor, "a callable (SampleView) -> str | dict | ModelResponse")
    shown = str(getattr(extractor, "__name__", None) or type(extractor).__name__)
    if extractor is not None and not model and (not shown.isidentifier() or isinstance(extractor, partial)):
        raise UsageProblem(
            f"extractbench: extractor={shown}: a callable without a name of its own (a lambda, a "
            f"partial) needs model='NAME', the name its results are reported under"
        )
    if progress is not None and not callable(progress):
        raise problem("progress", progress, "a callable (done, total, record)")
    hooks = ("request_done", "sample_scored", "run_finished")
    if events is not None and not all(callable(getattr(events, hook, None)) for hook in hooks):
        raise problem("events", events, "a RunEvents (with request_done, sample_scored and run_finished)")
