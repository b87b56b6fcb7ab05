"""``evaluate()``: one whole benchmark run in-process, with no pytest.

    from pytest_extractbench import evaluate, load_run
    result = evaluate("bundled", predictions="fixtures/predictions/demo.jsonl", output="runs/demo")
    result.metric("extraction_quality_score"), result.gate_passed
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable


from ..config.from_python import settings_from_options
from ..core.errors import UsageProblem
from .context import RunContext, RunEvents
from .finish import finish_run, version
from .heap import HeapFreeze
from .items import run_item
from .result import RunResult
from .rules import configure_rules


def evaluate(dataset: str | Path = "bundled", *, predictions: Any = None, extractor: Callable[..., Any] | None = None,
             base_url: str | list[str] | None = None, model: str | list[str] | None = None,
             output: str | Path | None = None, rootdir: str | Path | None = None,
             events: RunEvents | None = None, **options: Any) -> RunResult:
    """Benchmark one dataset and return the run's result; the run directory is written as by pytest.

    Where the answers come from: ``predictions`` (a JSONL file, a list of them, or ``{model: path}``),
    ``extractor`` (any callable ``(SampleView) -> str | dict | ModelResponse``, sync or async; it sees a sample's
    id, text, schema and meta, never its gold, and each call has ``timeout`` seconds), ``base_url`` of
    an OpenAI-compatible server with ``model``, or, with none of them, the embedded llama-server.
    ``options`` are the ``--extractbench-*`` options by their underscore names (``sla="target"``,
    ``sample=10``, ``compare="main"``). ``rootdir`` holds ``.extractbench/`` (default: the current directory).
    A problem with the inputs raises :class:`~pytest_extractbench.core.errors.UsageProblem`.
    """
    check_arguments(dataset=dataset, extractor=extractor, output=output, rootdir=rootdir, events=events)
    root = Path(rootdir) if rootdir is not None else Path.cwd()
    if extractor is not None:  # named like --extractbench-extractor, so it gets an extractor's defaults (timeout)
        from ..live.extractor import ExtractorSource

        options["extractor"] = ExtractorSource.qualified_name(extractor)
    settings = settings_from_options(
        root, dataset=str(dataset), predictions=predictions, base_url=base_url, model=model,
        output=None if output is None else Path(output), **options,
    )  # fmt: skip
    configure_rules(settings)
    context = RunContext(settings, base_dir=root, events=events, extractor=extractor)
    try:
        models = context.models()
        if not models:
            raise UsageProblem("extractbench: no model given (model=NAME)")
        context.check_invalid_policy()
        context.check_baseline_pairing()
        work = [(name, sample) for name in models for sample in context.dataset.samples]
        context.live.start()
        context.source.prepare(work)
        heap = HeapFreeze()  # the dataset stays unchanged: keep the cyclic GC from rescanning it (heap.py)
        heap.freeze()
        try:
            records = [run_item(context, name, sample) for name, sample in work]
        finally:
            heap.release()
            context.close_source()
        return finish_run(context, records, pytest_version=version("pytest"))  # the installed pytest, as the plugin records its own
    finally:
        context.close()


def check_arguments(*, dataset: Any, extractor: Any, output: Any, rootdir: Any, events: Any) -> None:
    """evaluate()'s own arguments (the options are checked with the settings), with the message the command
    line would give, before anything is read or written."""
    def problem(name: str, value: Any, expected: str) -> UsageProblem:
        shown = value if isinstance(value, (int, float)) else type(value).__name__
        return UsageProblem(f"extractbench: {name}={shown}: expected {expected}, got {type(value).__name__}")

    if not isinstance(dataset, (str, os.PathLike)):
        raise problem("dataset", dataset, "a dataset name or path (str or Path)")
    for name, value in (("output", output), ("rootdir", rootdir)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise problem(name, value, "a directory path (str or Path)")
    if extractor is not None and not callable(extractor):
        raise problem("extractor", extractor, "a callable (SampleView) -> str | dict | ModelResponse")
    hooks = ("request_done", "sample_scored", "run_finished")
    if events is not None and not all(callable(getattr(events, hook, None)) for hook in hooks):
        raise problem("events", events, "a RunEvents (with request_done, sample_scored and run_finished)")
