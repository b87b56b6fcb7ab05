"""Option converters: text from the command line, an ini file, the environment or a config file -> a value.

Pure and cheap (xdist workers re-parse the command line); each raises ``ArgumentTypeError`` with the message
the user sees. Converters whose rules live in a heavier layer import it when first called, so registering the
options (the pytest entry point) loads none of numpy, scipy or the report machinery.
"""

from __future__ import annotations

import argparse
import importlib
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar


def _deferred(module: str, attribute: str) -> Callable[[str], Any]:
    """``module.attribute`` (a converter), imported on its first call; argparse names it as the original."""

    def convert(value: str) -> Any:
        target: Any = importlib.import_module(module, __package__)
        for part in attribute.split("."):
            target = getattr(target, part)
        return target(value)

    convert.__name__ = convert.__qualname__ = attribute.rsplit(".", 1)[-1]
    convert.__doc__ = f"``{module}.{attribute}``, imported when first used."
    return convert


parse_baseline_name = _deferred("..gating.baseline", "parse_baseline_name")
parse_compare_fail = _deferred("..gating.regression", "parse_compare_fail")
parse_verdict_thresholds = _deferred("..gating.regression", "parse_verdict_thresholds")
parse_requirement = _deferred("..gating.requirements", "parse_requirement")
parse_columns = _deferred("..dataset.sources", "parse_columns")
parse_predictions = _deferred("..dataset.predictions", "PredictionsSpec.parse")
parse_base_url = _deferred("..live.options", "parse_base_url")
parse_structured_output = _deferred("..live.options", "parse_structured_output")


def parse_judge_url(value: str) -> str:
    """The judge's base URL, checked like the model's (no ``user:pass@``: its key has its own variable)."""
    from ..live.scorer_servers import check_url

    try:
        return check_url(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_semantic_backend(value: str) -> str:
    """``local``, ``local:PATH`` or an embeddings server's base URL (checked like the model's)."""
    if value == "local" or value.startswith("local:"):
        return value
    return parse_judge_url(value)


def parse_bool(value: str) -> bool:
    """``true/false/yes/no/1/0/on/off``."""
    lowered = str(value).strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")


MAX_NUMBER_CHARS = 100


_Number = TypeVar("_Number", int, float)


def _number(value: str, cast: Callable[[str], _Number], ok: Callable[[_Number], bool], expected: str) -> _Number:
    shown = repr(value) if len(value) <= 40 else repr(value[:39] + "…")
    if len(value.strip()) > MAX_NUMBER_CHARS:  # int() of 5,000 digits raises, float() turns them into inf
        raise argparse.ArgumentTypeError(
            f"expected {expected}, got {shown}, a number of {len(value.strip()):,} "
            f"characters (at most {MAX_NUMBER_CHARS})"
        )
    try:
        number = cast(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {shown}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"expected {expected} (a finite number), got {shown}")
    if not ok(number):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {shown}")
    return number


def _choice(value: str, choices: Sequence[str], what: str) -> str:
    if value not in choices:
        raise argparse.ArgumentTypeError(f"unknown {what} {value!r}; choose one of {', '.join(choices)}")
    return value


def parse_fraction(value: str) -> float:
    """A number in [0, 1]."""
    return _number(value, float, lambda x: 0.0 <= x <= 1.0, "a number between 0 and 1")


def parse_similarity(value: str) -> float:
    """A number in (0, 1]: a similarity a pair must reach (0 would pair anything with anything)."""
    return _number(value, float, lambda x: 0.0 < x <= 1.0, "a number above 0 and at most 1")


def parse_non_negative(value: str) -> float:
    """A finite number >= 0 (inf would reach the server as invalid JSON)."""
    return _number(value, float, lambda x: 0 <= x < math.inf, "a finite non-negative number")


def parse_sla(value: str) -> str:
    """One of the SLA tiers (minimum, target, excellence), or ``none``."""
    from ..gating.sla import SLA_CHOICES

    return _choice(value, SLA_CHOICES, "SLA tier")


def parse_unmeasured(value: str) -> str:
    """What a threshold that could not be measured does to the gate: ``fail`` (the default) or ``warn``."""
    return _choice(str(value).strip().lower(), ("fail", "warn"), "policy for unmeasured thresholds")


def parse_input_mode(value: str) -> str:
    """What a model gets of a sample's document: ``text`` (the default), ``image`` (page images) or ``both``."""
    from ..dataset.documents import INPUT_MODES

    return _choice(str(value).strip().lower(), INPUT_MODES, "document input")


def parse_models(value: str) -> tuple[str, ...]:
    """``a,b,c`` -> ``("a", "b", "c")``."""
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    if not names:
        raise argparse.ArgumentTypeError("expected one or more model names separated by commas")
    return names


def parse_eqs_weights(value: str) -> Any:
    """Four comma-separated weights: validity, F1 partial, type accuracy, 1 - hallucination."""
    from ..scoring.options import EqsWeights

    try:
        numbers = [float(part) for part in value.split(",")]
        if len(numbers) != 4:
            raise ValueError("four weights needed")
        return EqsWeights(*numbers)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            "expected four weights summing to 1 (validity,f1_partial,type_accuracy,no_hallucination), "
            f"got {value!r}: {exc}"
        ) from None


def parse_names(value: str) -> tuple[str, ...]:
    """``a,b`` -> ``("a", "b")`` (an empty value is no name)."""
    return tuple(name.strip() for name in value.split(",") if name.strip())


def parse_level(value: str) -> float:
    """A number strictly between 0 and 1 (a confidence level or a significance level)."""
    return _number(value, float, lambda x: 0.0 < x < 1.0, "a number strictly between 0 and 1")


MAX_RESAMPLES = 100_000
"""Bootstrap memory and time grow with resamples x samples: 10^8 resamples took 24 GB before the kernel
killed the run. 100,000 is 10x the default, already past any gain in precision (the Monte Carlo error
of a 95% interval bound is well under 0.1 point there)."""
MAX_REPEATS = 100
"""Each repeat is one more request per sample."""


def parse_resamples(value: str) -> int:
    """A whole number from 100 to :data:`MAX_RESAMPLES`."""
    return _number(
        value, int, lambda x: 100 <= x <= MAX_RESAMPLES, f"a whole number of resamples from 100 to {MAX_RESAMPLES:,}"
    )


def parse_positive_int(value: str) -> int:
    """A whole number >= 1."""
    return _number(value, int, lambda x: x >= 1, "a whole number >= 1")


def parse_int_non_negative(value: str) -> int:
    """A whole number >= 0."""
    return _number(value, int, lambda x: x >= 0, "a whole number >= 0")


def parse_context(value: str) -> int:
    """A context size in tokens, at least 256 (llama-server's smallest useful slot)."""
    return _number(value, int, lambda x: x >= 256, "a whole number of tokens, at least 256")


def parse_prompt_budget(value: str) -> int | str:
    """``auto`` (the server's measured prompt speed decides), ``off`` (the request count alone limits) or a number
    of prompt tokens in flight per model."""
    text = str(value).strip().lower()
    if text in ("auto", "off"):
        return text
    return _number(value, int, lambda x: x >= 1, "auto, off or a whole number of prompt tokens, at least 1")


def parse_max_tokens(value: str) -> int | None:
    """A positive token limit, or 'auto' (None): a budget derived from each sample's schema."""
    if str(value).strip().lower() == "auto":
        return None
    return parse_positive_int(value)


def parse_count(value: str) -> int:
    """A whole number >= 0."""
    return _number(value, int, lambda x: x >= 0, "a whole number >= 0")


MAX_SECONDS = 86_400.0  # a day: a longer request timeout is a typo, and inf would never time out


def parse_seconds(value: str) -> float:
    """A number of seconds > 0, at most a day."""
    return _number(value, float, lambda x: 0 < x <= MAX_SECONDS, f"a number of seconds > 0 and <= {MAX_SECONDS:g}")


MAX_RETRIES = 100


def parse_retries(value: str) -> int:
    """A whole number of retries, 0 to 100 (each retry waits up to 30 s of backoff)."""
    return _number(value, int, lambda x: 0 <= x <= MAX_RETRIES, f"a whole number from 0 to {MAX_RETRIES}")


def parse_int(value: str) -> int:
    """A whole number that fits 64 bits (a seed: servers and numpy take no more)."""
    return _number(value, int, lambda x: -(2**63) <= x < 2**63, "a whole number of at most 64 bits")


def parse_test(value: str) -> str:
    """One of the paired tests of :data:`.scoring.options.TESTS`."""
    from ..scoring.options import TESTS

    return _choice(value, TESTS, "test")


def parse_track(value: str) -> str:
    """One of :data:`.tracks.base.TRACK_NAMES`."""
    from ..tracks.base import TRACK_NAMES

    return _choice(value, TRACK_NAMES, "track")


def parse_repeats(value: str) -> int:
    """A whole number from 1 to :data:`MAX_REPEATS`."""
    return _number(
        value, int, lambda x: 1 <= x <= MAX_REPEATS, f"a whole number of runs per sample from 1 to {MAX_REPEATS}"
    )


OTEL_EXPORTERS = ("global", "console", "otlp")


def parse_otel(value: str) -> str:
    """One of :data:`OTEL_EXPORTERS`."""
    return _choice(value, OTEL_EXPORTERS, "exporter")


def parse_subsets(value: str) -> Any:
    """Read and check a subsets file (small: parsing it in every process is cheap)."""
    from ..gating.subsets import SubsetConfigError, load_subsets

    try:
        return load_subsets(Path(value).expanduser())
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"subsets file {value}: {exc.strerror or exc}") from None
    except SubsetConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_sample_size(value: str) -> int:
    """A whole number >= 1."""
    return _number(value, int, lambda x: x >= 1, "a whole number of samples, at least 1")


def parse_invalid_policy(value: str) -> str:
    """What to do with invalid samples: skip, warn or fail."""
    from ..dataset.sources import INVALID_POLICIES

    return _choice(value, INVALID_POLICIES, "invalid-samples policy")
