"""Strict record/replay of answers for keyless, deterministic CI: the cassette.

``--extractbench-record DIR`` writes ``DIR/cassette.jsonl`` at the end of a run: a header line, then one
line per (model, sample) answer in (model, sample id) order, keys sorted, so two recordings diff line by
line in a pull request. Each line holds the answer's key (model, messages, schema without x-eval keys,
decoding parameters: what can change an answer, except the server, which a replay does not have), the
sample's content hash, and the answer with its origin (who gave it, when).

``--extractbench-replay DIR`` (a directory with a cassette) answers only from it: a (model, sample) whose key
is not in the cassette, because the sample, the prompt, the schema or the decoding changed, or it was never
recorded, is that item's ``replay_miss``; no request is ever sent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..core import jsonio
from ..core.errors import UsageProblem
from ..dataset.identity import dataset_hash, sample_hash
from ..dataset.responses import ModelResponse
from ..dataset.samples import Sample
from .journal import response_from_dict, reused

CASSETTE_FILE = "cassette.jsonl"
CASSETTE_FORMAT = "extractbench-cassette"
CASSETTE_VERSION = 1
MISS = "replay_miss"


def answer_key(model: str, sample: Sample, templates: Any, params: dict[str, Any]) -> str:
    """The key a cassette files an answer under (`dialects.cache_key` without a server)."""
    from .dialects import cache_key
    from .prompts import sample_messages

    return cache_key(model, sample_messages(sample, templates), sample.schema, params)


def _line(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"


def write_cassette(directory: Path, answers: Iterable[tuple[str, Sample, dict[str, Any]]], *, templates: Any,
                   params: dict[str, Any], dataset: str) -> Path:
    """Write ``directory/cassette.jsonl`` atomically from (model, sample, response dict) triples."""
    rows = sorted(answers, key=lambda row: (row[0], row[1].id))
    samples = {sample.id: sample for _, sample, _ in rows}
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / CASSETTE_FILE
    tmp = directory / f".{CASSETTE_FILE}.tmp"
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(_line({"format": CASSETTE_FORMAT, "version": CASSETTE_VERSION, "dataset": dataset,
                            "dataset_hash": dataset_hash(samples.values()), "answers": len(rows)}))
        for model, sample, response in rows:
            handle.write(_line({"model": model, "sample_id": sample.id, "sample_hash": sample_hash(sample),
                                "key": answer_key(model, sample, templates, params), "response": response}))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    return path


class CassetteSource:
    """Answers from a cassette only (an ``OutputSource``); a miss is the item's ``replay_miss``."""

    def __init__(self, directory: Path, *, templates: Any, params: dict[str, Any]) -> None:
        self.path = directory / CASSETTE_FILE
        self.templates, self.params = templates, params
        self.header, self.entries = read_cassette(self.path)

    @property
    def models(self) -> list[str]:
        return sorted({model for model, _ in self.entries.values()})

    def prepare(self, work: Sequence[tuple[str, Sample]]) -> None:
        """Everything is in memory already."""

    def response(self, model: str, sample: Sample) -> ModelResponse:
        found = self.entries.get(answer_key(model, sample, self.templates, self.params))
        if found is None or found[0] != model:
            return ModelResponse(error_class=MISS, error=(
                f"no answer in {self.path} for sample {sample.id!r} (model {model!r}): the sample's text or schema, "
                "the prompt or the decoding parameters changed since it was recorded, or it was never recorded"))
        return reused(response_from_dict(found[1]), "replay")

    def close(self) -> None:
        """Nothing to release."""


def read_cassette(path: Path) -> tuple[dict[str, Any], dict[str, tuple[str, dict[str, Any]]]]:
    """(header, key -> (model, response dict)); a line that is not a cassette entry stops the run with its
    file and line (a cassette is checked in: a broken one is a mistake to fix, not to skip)."""
    if not path.is_file():
        raise UsageProblem(f"extractbench: --extractbench-replay: no {CASSETTE_FILE} in {path.parent}")
    header: dict[str, Any] | None = None
    entries: dict[str, tuple[str, dict[str, Any]]] = {}
    for number, value in jsonio.iter_jsonl(path):
        where = f"extractbench: cassette {path}, line {number}"
        if isinstance(value, Exception):
            raise UsageProblem(f"{where}: {value}")
        if header is None:
            if not isinstance(value, dict) or value.get("format") != CASSETTE_FORMAT:
                raise UsageProblem(f"{where}: not a cassette (its first line has no \"format\": \"{CASSETTE_FORMAT}\")")
            if value.get("version") != CASSETTE_VERSION:
                raise UsageProblem(f"{where}: cassette version {value.get('version')!r}; this version reads "
                                   f"{CASSETTE_VERSION}: record it again")
            header = value
            continue
        fields = ("model", "sample_id", "key")
        if not (isinstance(value, dict) and all(isinstance(value.get(f), str) for f in fields)
                and isinstance(value.get("response"), dict)):
            raise UsageProblem(f"{where}: an entry needs string model, sample_id and key and an object response")
        if value["key"] in entries:
            raise UsageProblem(f"{where}: sample {value['sample_id']!r} (model {value['model']!r}) is recorded twice")
        entries[value["key"]] = (value["model"], value["response"])
    if header is None:
        raise UsageProblem(f"extractbench: cassette {path} is empty")
    return header, entries
