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

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..core import rundoc
from ..dataset.identity import dataset_hash, sample_hash
from ..dataset.responses import ModelResponse
from ..dataset.samples import Sample
from .journal import response_from_dict, reused

CASSETTE_FILE = "cassette.jsonl"
MISS = "replay_miss"


def answer_key(model: str, sample: Sample, templates: Any, params: dict[str, Any]) -> str:
    """The key a cassette files an answer under (`dialects.cache_key` without a server)."""
    from .dialects import cache_key
    from .prompts import sample_messages

    return cache_key(model, sample_messages(sample, templates), sample.schema, params)


def write_cassette(
    directory: Path,
    answers: Iterable[tuple[str, Sample, dict[str, Any]]],
    *,
    templates: Any,
    params: dict[str, Any],
    dataset: str,
) -> Path:
    """Write ``directory/cassette.jsonl`` atomically from (model, sample, response dict) triples."""
    rows = sorted(answers, key=lambda row: (row[0], row[1].id))
    samples = {sample.id: sample for _, sample, _ in rows}
    path = directory / CASSETTE_FILE
    header = {"dataset": dataset, "dataset_hash": dataset_hash(samples.values()), "answers": len(rows)}
    rundoc.write_cassette(
        path,
        header,
        (
            {
                "model": model,
                "sample_id": sample.id,
                "sample_hash": sample_hash(sample),
                "key": answer_key(model, sample, templates, params),
                "response": response,
            }
            for model, sample, response in rows
        ),
    )
    return path


class CassetteSource:
    """Answers from a cassette only (an ``OutputSource``); a miss is the item's ``replay_miss``."""

    def __init__(self, directory: Path, *, templates: Any, params: dict[str, Any]) -> None:
        self.path = directory / CASSETTE_FILE
        self.templates, self.params = templates, params
        self.header, self.entries = rundoc.read_cassette(self.path)

    @property
    def models(self) -> list[str]:
        return sorted({entry["model"] for entry in self.entries.values()})

    def prepare(self, work: Sequence[tuple[str, Sample]]) -> None:
        """Everything is in memory already."""

    def response(self, model: str, sample: Sample) -> ModelResponse:
        found = self.entries.get(answer_key(model, sample, self.templates, self.params))
        if found is None or found["model"] != model:
            return ModelResponse(
                error_class=MISS,
                error=(
                    f"no answer in {self.path} for sample {sample.id!r} (model {model!r}): the sample's text or "
                    "schema, the prompt or the decoding parameters changed since it was recorded, or it was never "
                    "recorded"
                ),
            )
        return reused(response_from_dict(found["response"]), "replay")

    def close(self) -> None:
        """Nothing to release."""
