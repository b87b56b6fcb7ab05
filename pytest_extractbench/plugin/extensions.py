"""Schema-driven rules inside a pytest run: custom comparators/transforms from hooks, option checks,
and x-eval-* configuration problems reported per sample (file, line, sample id, schema path)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from ..dataset.samples import DatasetProblem, Sample
from ..scoring import compile_rules, register_comparator, register_transform
from ..scoring.postprocess import check_post_processors
from ..scoring.semantic_cache import set_cache_dir

if TYPE_CHECKING:
    import pytest

    from ..config.settings import Settings


def configure(config: pytest.Config, settings: Settings) -> None:
    """Register hook-provided rules and check the options that name them (every process)."""
    import pytest

    for found in config.hook.pytest_extractbench_comparators(config=config):
        for name, entry in (found or {}).items():
            kwargs: dict[str, Any] = dict(entry) if isinstance(entry, dict) else {"fn": entry}
            # a conftest reloaded by an in-process pytester run defines a new function object: replace it
            register_comparator(name, kwargs.pop("fn"), overwrite=True, **kwargs)
    for found in config.hook.pytest_extractbench_transforms(config=config):
        for name, fn in (found or {}).items():
            register_transform(name, fn, overwrite=True)
    scoring = settings.scoring
    problems = check_post_processors(scoring.post_processors)
    if problems:
        raise pytest.UsageError("--extractbench-post-process: " + "; ".join(problems))
    if scoring.judge_model and not scoring.judge_url:
        raise pytest.UsageError("--extractbench-judge needs the judge's server: --extractbench-judge-url URL")
    if scoring.semantic or scoring.judge_model:
        # embeddings and verdicts are reused across runs (and shared by xdist workers)
        set_cache_dir(settings.rootdir / ".extractbench" / "cache")


def rule_problems(samples: Iterable[Sample]) -> list[DatasetProblem]:
    """Every broken x-eval-* key of every sample's schema; the sample is scored with that key's default."""
    problems = []
    for sample in samples:
        ruleset = compile_rules(sample.schema)
        for error in ruleset.errors:
            problems.append(DatasetProblem(
                str(sample.meta.get("source", "?")), str(sample.meta.get("location", "?")),
                f"x-eval configuration: {error.message}; scored with the default instead",
                sample.id, error.path, "warning",
            ))
        for ignored in ruleset.warnings:  # the rest of the rule applies
            problems.append(DatasetProblem(
                str(sample.meta.get("source", "?")), str(sample.meta.get("location", "?")),
                f"x-eval configuration: {ignored.message}", sample.id, ignored.path, "warning",
            ))
    return problems
