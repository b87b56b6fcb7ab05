"""A real-world corpus of JSON Schemas (JSONSchemaBench, read from ../shared, never copied) goes through the
loader's checks without crashing or hanging; the count of accepted schemas is printed for the report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from _require import require_or_skip
from pytest_extractbench.dataset.complexity import complexity_features
from pytest_extractbench.dataset.samples import sample_from_row

CORPUS = Path(
    os.environ.get(
        "EXTRACTBENCH_JSONSCHEMABENCH",
        Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "jsonschemabench",
    )
)

pytestmark = pytest.mark.slow


def test_every_corpus_schema_loads_validates_and_gets_complexity_features() -> None:
    require_or_skip(
        CORPUS.is_dir(),
        f"JSONSchemaBench corpus not found at {CORPUS} (it lives in the shared data folder next to the worktree)",
    )
    accepted = rejected = instances = 0
    files = sorted(CORPUS.glob("*.jsonl"))
    assert files
    for file in files:
        for number, line in enumerate(file.open(encoding="utf-8"), start=1):
            row = json.loads(line)
            tests = row.get("tests") or [{"data": {}, "valid": None}]
            for index, case in enumerate(tests):
                candidate = {
                    "id": f"{row['id']}#{index}",
                    "text": "-",
                    "schema": row["schema"],
                    "expected": case["data"],
                }
                sample, problems = sample_from_row(candidate, source=file.name, location=f"line {number}", index=number)
                assert all(p.sample_id == candidate["id"] and p.location == f"line {number}" for p in problems)
                schema_problems = [p for p in problems if p.field == "schema"]
                if index == 0:
                    accepted += not schema_problems
                    rejected += bool(schema_problems)
                if case["valid"] is not None and not schema_problems:
                    instances += 1
                    # the gold check agrees with the corpus's own verdict on its test instances
                    assert (sample is not None) == case["valid"], (row["id"], index, problems)
                if sample is not None:
                    assert sample.meta["complexity"]["complexity_bin"] in ("simple", "medium", "complex")
                elif not schema_problems:  # a valid schema whose placeholder gold {} is rejected: features still work
                    assert complexity_features(row["schema"])["complexity_score"] >= 0
    print(
        f"\nJSONSchemaBench: {accepted} schemas accepted, {rejected} rejected as invalid JSON Schema; "
        f"{instances} test instances judged like the corpus"
    )
    assert accepted > 0.9 * (accepted + rejected)
