"""Several run directories as one document, for ``extractbench compare --runs A,B,C``.

Each (run, model) becomes one model of the merged document: its metrics are the run's own
metrics.json entry, unchanged; the cross-run comparison (ranking, paired tests, win rates)
comes from :func:`~pytest_extractbench.analysis.comparison.comparison_section` on the runs' stored
per-sample records, paired on sample ids, with the first run's scoring and statistics options.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..analysis.comparison import comparison_section
from ..core import rundoc
from ..core.rundir import RunDirError
from ..dataset.records import SampleRecord
from .rows import RunData, read_run, recorded_scoring_options


def labels(runs: Sequence[tuple[Path, RunData]]) -> list[dict[str, str]]:
    """Per run, model name -> label: the model name when it is unique across runs, else ``<run dir>/<model>``."""
    count: dict[str, int] = {}
    for _, run in runs:
        for model in run.document["models"]:
            count[model] = count.get(model, 0) + 1
    out = []
    for path, run in runs:
        out.append({m: (m if count[m] == 1 else f"{path.name or path}/{m}") for m in run.document["models"]})
    return out


def merge_runs(paths: Sequence[Path]) -> RunData:
    """One document over every model of every run, with a comparison section."""
    if len(paths) < 2:
        raise RunDirError("compare needs at least two run directories")
    runs = [(path, read_run(path)) for path in paths]
    names = labels(runs)
    seen: set[str] = set()
    for mapping in names:
        duplicate = seen & set(mapping.values())
        if duplicate:
            raise RunDirError(
                f"two runs give the same label {sorted(duplicate)[0]!r}: name the run directories differently"
            )
        seen |= set(mapping.values())
    options = recorded_scoring_options(runs[0][1].document)  # options of another version: the defaults compare as well
    models: dict[str, Any] = {}
    for (_, run), mapping in zip(runs, names):
        for model, metrics in run.document["models"].items():
            models[mapping[model]] = metrics

    def records() -> Iterable[dict[str, Any]]:
        for (_, run), mapping in zip(runs, names):
            for record in run.records():
                if record["model"] in mapping:
                    yield {**record, "model": mapping[record["model"]]}

    scored = [SampleRecord.from_dict(r, options) for r in records()]
    first = runs[0][1].document
    document = rundoc.complete(
        {
            "format_version": first["format_version"],
            "track": first["track"],
            "run": {**first["run"], "runs": [str(p) for p in paths], "models": list(models)},
            "models": models,
            **comparison_section(models, scored, options),
        }
    )
    return RunData(document, records, None)
