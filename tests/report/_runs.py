"""Real run directories for report tests: samples scored by the scoring core, aggregated by metrics.py,
written as the plugin writes them (metrics.json, samples.jsonl)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_extractbench import SampleRecord, ScoringOptions, StatsOptions, metrics_by_model, score_sample
from pytest_extractbench.analysis.metrics import run_level_metrics
from pytest_extractbench.analysis.repeats import sample_repeats
from pytest_extractbench.core import files
from pytest_extractbench.core.rundoc import iter_samples, write_samples
from pytest_extractbench.dataset import load_dataset

ROOT = Path(__file__).resolve().parents[2]
DATASET = load_dataset()
OPTIONS = ScoringOptions(statistics=StatsOptions(resamples=500))


def fixture_outputs(name: str) -> dict[str, Any]:
    rows = map(json.loads, (ROOT / "fixtures" / "predictions" / name).read_text(encoding="utf-8").splitlines())
    return {row["id"]: row["output"] for row in rows}


def gold_outputs() -> dict[str, Any]:
    return {s.id: json.dumps(s.expected) for s in DATASET.samples}


def make_run(
    path: Path,
    outputs: dict[str, dict[str, Any] | Callable[[Any], Any]],
    *,
    timed: bool = False,
    samples: list | None = None,
    extra: Callable[[str, dict], None] | None = None,
    options: ScoringOptions = OPTIONS,
) -> Path:
    """A run directory with one model per entry of ``outputs`` (sample id -> raw output), scored with ``options``."""
    samples = DATASET.samples if samples is None else samples
    records = []
    for m, (model, predictions) in enumerate(outputs.items()):
        for i, sample in enumerate(samples):
            output = predictions(sample) if callable(predictions) else predictions.get(sample.id)
            response: dict[str, Any] = {"content": output, "error_class": None if output is not None else "missing"}
            if timed:  # a live-like run: latencies and completion times
                response.update(
                    latency_s=0.2 + 0.01 * ((i * 7 + m * 3) % 50),
                    started_at=1000.0 + i * 0.1,
                    finished_at=1000.3 + i * 0.1 + 0.01 * (i % 5),
                )
            score = score_sample(output, sample.expected, sample.schema, options=options, sample_id=sample.id)
            records.append(
                SampleRecord(
                    model=model,
                    sample_id=sample.id,
                    score=score,
                    meta=dict(sample.meta),
                    response=response,
                    passed=score.valid,
                    failure=None if score.valid else "invalid",
                )
            )
    metrics = metrics_by_model(records, options)
    if extra:
        for model, entry in metrics.items():
            extra(model, entry)
    document = {
        "format_version": 1,
        "run": {
            "started_at": "2026-11-23T10:00:00+00:00",
            "finished_at": "2026-11-23T10:01:00+00:00",
            "duration_s": 60.0,
            "dataset": {"name": "bundled", "source": "bundled", "num_samples": len(samples), "num_skipped": 0},
            "models": list(metrics),
            "options": {"scoring": options.to_dict(), "sla": "minimum"},
            "problems": [],
        },
        "models": metrics,
        **run_level_metrics(metrics, records, options),
    }
    path.mkdir(parents=True, exist_ok=True)
    files.write_json(path / files.METRICS_FILE, document)
    files.write_jsonl(path / files.SAMPLES_FILE, (r.to_dict() for r in records))
    return path


class Page:
    """The tags and attributes of an HTML document (stdlib parser), to check what a browser would see."""

    def __init__(self, text: str) -> None:
        from html.parser import HTMLParser

        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        page = self

        class Parser(HTMLParser):
            def handle_starttag(self, tag: str, attrs: list) -> None:
                page.tags.append((tag, dict(attrs)))

            def handle_data(self, data: str) -> None:
                page.text.append(data)

        Parser().feed(text)

    def count(self, tag: str) -> int:
        return sum(1 for t, _ in self.tags if t == tag)

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if a.get("id")}

    def event_handlers(self) -> list[tuple[str, str]]:
        return [(t, k) for t, attrs in self.tags for k in attrs if k.lower().startswith("on")]


def replicate_run(source: Path, path: Path, samples: int) -> Path:
    """A run directory of ``samples`` samples per model, cycling through ``source``'s records with ids
    ``ID~N``, beside a dataset file of the matching rows (so the viewer finds every source text). Its
    metrics.json is ``source``'s: a page-size and load-time workload, not a run to read numbers from."""
    records = list(iter_samples(source / "samples.jsonl"))
    lines = Path(records[0]["meta"]["source"]).read_text(encoding="utf-8").splitlines()
    by_id = {row["id"]: row for row in map(json.loads, filter(None, lines))}
    ids = list(dict.fromkeys(r["sample_id"] for r in records))
    path.mkdir(parents=True, exist_ok=True)
    dataset = path / "dataset.jsonl"
    with dataset.open("w", encoding="utf-8") as handle:
        for n in range(samples):
            handle.write(json.dumps({**by_id[ids[n % len(ids)]], "id": f"{ids[n % len(ids)]}~{n}"}) + "\n")
    scaled = []
    for model in dict.fromkeys(r["model"] for r in records):
        mine = {r["sample_id"]: r for r in records if r["model"] == model}
        for n in range(samples):
            sid = ids[n % len(ids)]
            record = mine[sid]
            scaled.append({**record, "sample_id": f"{sid}~{n}", "meta": {**record["meta"], "source": str(dataset)}})
    (path / files.METRICS_FILE).write_bytes((source / files.METRICS_FILE).read_bytes())
    files.write_jsonl(path / files.SAMPLES_FILE, scaled)
    return path


def repeated_run(path: Path, counts: dict[str, tuple[int, int]]) -> Path:
    """A run of model "m" over the first 8 bundled samples (gold outputs) whose samples.jsonl says how many of its
    runs passed (``counts``: sample id -> (runs, passed)), as a run with --extractbench-repeats keeps it."""
    samples = DATASET.samples[:8]
    made = make_run(path, {"m": {s.id: json.dumps(s.expected) for s in samples}}, samples=samples)
    rows = list(iter_samples(made / "samples.jsonl"))
    for row in rows:
        if row["sample_id"] in counts:
            n, c = counts[row["sample_id"]]
            row["diagnostics"]["repeats"] = sample_repeats([True] * c + [False] * (n - c), [None] * n)
    write_samples(made / "samples.jsonl", rows)
    return made
