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
        for error in ruleset.errors:
            problems.append(
                DatasetProblem(
                    str(sample.meta.get("source", "?")),
                    str(sample.meta.get("location", "?")),
                    f"x-eval configuration: {error.message}; scored with the default instead",
                    sample.id,
                    error.path,
                    "warning",
                )
            )
        for ignored in ruleset.warnings:  # the rest of the rule applies
            problems.append(
                DatasetProblem(
                    str(sample.meta.get("source", "?")),
                    str(sample.meta.get("location", "?")),
                    f"x-eval configuration: {ignored.message}",
                    sample.id,
                    ignored.path,
                    "warning",
                )
            )
    return problems
