"""Custom comparators and transforms for a run, and the checks of the options that name them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageProblem
from ..live import scoring_backends
from ..live.verdict_cache import set_cache_dir
from ..scoring import register_comparator, register_transform
from ..scoring.postprocess import check_post_processors
from ..scoring.transforms import check_normalisers

if TYPE_CHECKING:
    from ..config.settings import Settings


def configure_rules(
    settings: Settings,
    comparators: Iterable[Mapping[str, Any] | None] = (),
    transforms: Iterable[Mapping[str, Any] | None] = (),
) -> None:
    """Register the given comparators/transforms and check the scoring options (every process)."""
    for found in comparators:
        for name, entry in (found or {}).items():
            kwargs: dict[str, Any] = dict(entry) if isinstance(entry, dict) else {"fn": entry}
            # a conftest reloaded by an in-process pytester run defines a new function object: replace it
            register_comparator(name, kwargs.pop("fn"), overwrite=True, **kwargs)
    for found in transforms:
        for name, fn in (found or {}).items():
            register_transform(name, fn, overwrite=True)
    scoring_backends.install()  # the semantic comparator and whole-output scores ask the live clients
    scoring = settings.scoring
    problems = check_post_processors(scoring.post_processors)
    if problems:
        raise UsageProblem("--extractbench-post-process: " + "; ".join(problems))
    problems = check_normalisers(scoring.normalisers)
    if problems:
        raise UsageProblem("--extractbench-normalise: " + "; ".join(problems))
    if scoring.judge_model and not scoring.judge_url:
        raise UsageProblem("--extractbench-judge needs the judge's server: --extractbench-judge-url URL")
    if scoring.semantic or scoring.judge_model:
        # embeddings and verdicts are reused across runs (and shared by xdist workers)
        set_cache_dir(settings.rootdir / ".extractbench" / "cache")
