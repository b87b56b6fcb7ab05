"""x-eval-* configuration problems of a dataset's schemas, reported per sample (file, line, sample id, schema path)."""

from __future__ import annotations

from collections.abc import Iterable

from ..scoring import compile_rules
from .samples import DatasetProblem, Sample


def rule_problems(samples: Iterable[Sample]) -> list[DatasetProblem]:
    """Every broken x-eval-* key of every sample's schema; the sample is scored with that key's default."""
    problems = []
    for sample in samples:
        ruleset = compile_rules(sample.schema)
        source, location = str(sample.meta.get("source", "?")), str(sample.meta.get("location", "?"))
        # A broken key falls back to its default; an ignored part leaves the rest of the rule applying.
        found = [(e, f"{e.message}; scored with the default instead") for e in ruleset.errors]
        found += [(w, w.message) for w in ruleset.warnings]
        for problem, message in found:
            problems.append(
                DatasetProblem(source, location, f"x-eval configuration: {message}", sample.id, problem.path, "warning")
            )
    return problems
