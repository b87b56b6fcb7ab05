"""The option table and one frozen :class:`Settings` built from resolved values (no pytest here).

Every option is declared once in :data:`OPTIONS`; :mod:`.layers` resolves each from its sources
(``--extractbench-NAME`` on the command line beats the ``EXTRACTBENCH_NAME`` environment variable, which beats the
``--extractbench-config`` YAML file, which beats ``extractbench_NAME`` in
``[tool.pytest.ini_options]``, which beats the default), and the pytest adapter registers them. Converters are pure and raise ``ArgumentTypeError`` (xdist
workers re-parse the command line, so they must be cheap). Secrets never come
from options: API keys are read from environment variables only.
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..core.redact import redact_url
from ..gating.baseline import parse_baseline_name
from .file import ConfigError, json_value, read_config, redact
from ..dataset.sources import INVALID_POLICIES, DataOptions, parse_columns
from ..gating.sla import SLA_CHOICES
from ..analysis.performance import Prices
from ..live.options import LiveOptions, parse_base_url, parse_structured_output
from ..dataset.predictions import PredictionsSpec
from ..report.outputs import ReportOptions
from ..gating.regression import CompareFailCheck, parse_compare_fail, parse_verdict_thresholds
from ..scoring import EqsWeights, ScoringOptions, StatsOptions
from ..scoring.options import TESTS
from ..gating.subsets import SubsetConfig, SubsetConfigError, load_subsets
from ..tracks.base import TRACK_NAMES, TrackSettings


# -- converters -------------------------------------------------------------------------


def parse_bool(value: str) -> bool:
    """``true/false/yes/no/1/0/on/off``."""
    lowered = str(value).strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")


def _number(value: str, cast: Callable[[str], Any], ok: Callable[[Any], bool], expected: str) -> Any:
    shown = repr(value) if len(value) <= 40 else repr(value[:39] + "…")
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


def parse_non_negative(value: str) -> float:
    """A finite number >= 0 (inf would reach the server as invalid JSON)."""
    return _number(value, float, lambda x: 0 <= x < math.inf, "a finite non-negative number")


def parse_sla(value: str) -> str:
    """One of the SLA tiers of spec 4.5.10, or ``none``."""
    return _choice(value, SLA_CHOICES, "SLA tier")


def parse_models(value: str) -> tuple[str, ...]:
    """``a,b,c`` -> ``("a", "b", "c")``."""
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    if not names:
        raise argparse.ArgumentTypeError("expected one or more model names separated by commas")
    return names


def parse_eqs_weights(value: str) -> EqsWeights:
    """Four comma-separated weights: validity, F1 partial, type accuracy, 1 - hallucination."""
    try:
        numbers = [float(part) for part in value.split(",")]
        if len(numbers) != 4:
            raise ValueError("four weights needed")
        return EqsWeights(*numbers)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"expected four weights summing to 1 (validity,f1_partial,type_accuracy,no_hallucination), got {value!r}: {exc}"
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
    return _number(value, int, lambda x: 100 <= x <= MAX_RESAMPLES,
                   f"a whole number of resamples from 100 to {MAX_RESAMPLES:,}")


def parse_positive_int(value: str) -> int:
    """A whole number >= 1."""
    return _number(value, int, lambda x: x >= 1, "a whole number >= 1")


def parse_context(value: str) -> int:
    """A context size in tokens, at least 256 (llama-server's smallest useful slot)."""
    return _number(value, int, lambda x: x >= 256, "a whole number of tokens, at least 256")


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
    """A whole number."""
    return _number(value, int, lambda x: True, "a whole number")


def parse_test(value: str) -> str:
    """One of the paired tests of :data:`.scoring.options.TESTS`."""
    return _choice(value, TESTS, "test")


def parse_track(value: str) -> str:
    """One of :data:`.tracks.base.TRACK_NAMES`."""
    return _choice(value, TRACK_NAMES, "track")


def parse_repeats(value: str) -> int:
    """A whole number from 1 to :data:`MAX_REPEATS`."""
    return _number(value, int, lambda x: 1 <= x <= MAX_REPEATS, f"a whole number of runs per sample from 1 to {MAX_REPEATS}")


OTEL_EXPORTERS = ("global", "console", "otlp")


def parse_otel(value: str) -> str:
    """One of :data:`OTEL_EXPORTERS`."""
    return _choice(value, OTEL_EXPORTERS, "exporter")


def parse_subsets(value: str) -> SubsetConfig:
    """Read and check a subsets file (small: parsing it in every process is cheap)."""
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
    return _choice(value, INVALID_POLICIES, "invalid-samples policy")


# -- the option table --------------------------------------------------------------------


@dataclass(frozen=True)
class OptionSpec:
    """One setting: its flag, ini key, converter and default."""

    name: str
    help: str
    converter: Callable[[str], Any] = str
    default: Any = None
    metavar: str | None = None
    flag: bool = False  # a store_true switch
    multiple: bool = False  # repeatable; values are collected into a tuple
    aliases: tuple[str, ...] = ()

    @property
    def option(self) -> str:
        return "--extractbench-" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        return "extractbench_" + self.name

    @property
    def ini(self) -> str:
        return "extractbench_" + self.name


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("model", "Model name(s), comma-separated or repeated; every sample becomes one item per model.",
               parse_models, (), "NAME[,NAME...]", multiple=True, aliases=("--model",)),
    OptionSpec("dataset", "Dataset: 'bundled' (default), a .jsonl/.json/.parquet file of {id, text, schema, expected} "
               "rows, a Benchson folder (NAME/test/*.json) or hf:OWNER/NAME[:split] / hf:PATH (via datasets).",
               str, "bundled", "SPEC"),
    OptionSpec("predictions", "Score recorded outputs instead of calling a server: a JSONL file of {id, output} rows "
               "(repeatable; NAME=PATH names the model).", PredictionsSpec.parse, (), "[NAME=]PATH", multiple=True),
    OptionSpec("output", "Run directory for metrics.json and samples.jsonl (default .extractbench/runs/<timestamp>).",
               Path, None, "DIR"),
    OptionSpec("sla", "SLA tier asserted at session end: minimum, target, excellence or none.",
               parse_sla, "minimum", "TIER"),
    OptionSpec("sample_min_eqs", "Fail a sample item whose EQS is below this (default: only unusable output fails).",
               parse_fraction, None, "X"),
    OptionSpec("case_sensitive", "Compare strings case-sensitively.", parse_bool, False, flag=True),
    OptionSpec("null_as_value", "Score null as a value instead of treating it as an absent field.",
               parse_bool, False, flag=True),
    OptionSpec("lenient_types", "Accept lossless coercions (\"123\" for 123) as correct types.",
               parse_bool, False, flag=True),
    OptionSpec("no_format_check", "Do not assert JSON Schema 'format' (date, email, ...) when validating output.",
               parse_bool, False, flag=True),
    OptionSpec("float_epsilon", "Tolerance under which two numbers are equal.", parse_non_negative, 1e-6, "EPS"),
    OptionSpec("eqs_weights", "EQS weights: validity,f1_partial,type_accuracy,no_hallucination.",
               parse_eqs_weights, EqsWeights(), "W1,W2,W3,W4"),
    OptionSpec("post_process", "Post-processors run on every sample's fields before metrics, in order "
               "(nulls_as_absent, nulls_as_values, propagate_errors or registered ones).",
               parse_names, (), "NAME[,NAME...]"),
    OptionSpec("semantic", "Embeddings for x-eval-compare 'semantic': 'local' (bundled all-MiniLM-L6-v2), "
               "'local:PATH' or an OpenAI-compatible base URL.", str, None, "BACKEND"),
    OptionSpec("semantic_model", "Embedding model name to request from a server backend.", str, None, "NAME"),
    OptionSpec("judge", "LLM-as-judge model for x-eval-compare 'semantic' (1-7 rubric, one call per sample).",
               str, None, "MODEL"),
    OptionSpec("judge_url", "Base URL of the judge's OpenAI-compatible server (key: EXTRACTBENCH_JUDGE_API_KEY).",
               str, None, "URL"),
    # statistics, comparisons and baselines
    OptionSpec("resamples", "Bootstrap resamples (and permutation-test swaps) behind confidence intervals and "
               "significance.", parse_resamples, 10_000, "N"),
    OptionSpec("confidence", "Confidence level of the intervals.", parse_level, 0.95, "LEVEL"),
    OptionSpec("stats_seed", "Seed of the bootstrap and the permutation tests.", parse_int, 0, "SEED"),
    OptionSpec("alpha", "Significance level of the paired tests (model comparisons, --extractbench-compare-fail).",
               parse_level, 0.05, "ALPHA"),
    OptionSpec("test", "Paired test that decides significance: permutation, ttest or wilcoxon.",
               parse_test, "permutation", "TEST"),
    OptionSpec("reference_model", "The large/reference model of the gap rule (default: the model with the "
               "highest EQS).", str, None, "NAME"),
    OptionSpec("gap_threshold", "Flag models that trail the reference model by more than this EQS.",
               parse_fraction, 0.15, "GAP"),
    OptionSpec("subsets", "JSON or YAML file of named subsets (conditions on gold fields or metadata) and "
               "group_by fields.", parse_subsets, None, "FILE"),
    OptionSpec("save", "Store this run as a baseline under .extractbench/baselines/ (NNNN_NAME.json).",
               parse_baseline_name, None, "NAME"),
    OptionSpec("compare", "Compare this run with a stored baseline: its NAME, its number NNNN or a file path.",
               str, None, "NAME|PATH"),
    OptionSpec("compare_fail", "Fail the session when METRIC is worse than the baseline by more than MARGIN and "
               "the paired test is significant, e.g. eqs:-0.02 or field_f1_partial:-2% (repeatable).",
               parse_compare_fail, (), "EXPR", multiple=True),
    OptionSpec("verdict_thresholds", "EQS deltas of the improved/regressed verdict against the baseline.",
               parse_verdict_thresholds, (0.01, -0.02), "IMPROVE,REGRESS"),
    # --- performance metrics ---
    OptionSpec("price_input", "Price of 1,000 input (prompt) tokens in USD, for the cost estimate.",
               parse_non_negative, None, "USD_PER_1K"),
    OptionSpec("price_output", "Price of 1,000 output (completion) tokens in USD, for the cost estimate.",
               parse_non_negative, None, "USD_PER_1K"),
    # --- live runs: servers, embedded llama-server, pipeline, journal, cache ---
    OptionSpec("base_url", "OpenAI-compatible server URL, e.g. http://host:8000/v1 (repeatable: replicas of the "
               "same model are load-balanced). Default: start the embedded llama-server.",
               parse_base_url, (), "URL", multiple=True),
    OptionSpec("extractor", "Benchmark a Python callable instead of a server: MODULE:FUNCTION or FILE.py:FUNCTION, "
               "called with each sample, returning JSON text, a dict or a ModelResponse (sync or async).",
               str, None, "MODULE:FUNCTION"),
    OptionSpec("structured_output", "How to ask for JSON under the sample's schema: json_schema (strict), "
               "json_object (+schema, llama.cpp), guided_json (vLLM) or none (prompt only).",
               parse_structured_output, "json_schema", "MODE"),
    OptionSpec("concurrency", "Requests in flight at once per server group (default: the embedded server's slots, "
               "else 8 per base URL; shared out among xdist workers).", parse_positive_int, None, "N"),
    OptionSpec("temperature", "Sampling temperature.", parse_non_negative, 0.0, "T"),
    OptionSpec("max_tokens", "Completion token limit per request; output that hits it is classed 'truncated'. "
               "Default 'auto': derived from each sample's schema (256-2048).",
               parse_max_tokens, None, "N|auto"),
    OptionSpec("decoding_seed", "Seed sent with every request.", parse_int, 42, "S"),
    OptionSpec("timeout", "Timeout of one request attempt, in seconds (default 120; 600 for the embedded server, "
               "whose CPU model is slow).", parse_seconds, None, "SECONDS"),
    OptionSpec("retries", "Retries of timeouts, connection errors, 429 and 5xx (exponential backoff with jitter).",
               parse_retries, 3, "N"),
    OptionSpec("system_prompt", "File holding the system prompt template (default: the spec's).", Path, None, "FILE"),
    OptionSpec("user_prompt", "File holding the user prompt template with {text} and {schema} (default: the spec's).",
               Path, None, "FILE"),
    OptionSpec("resume", "Continue the run in DIR: reuse its responses.jsonl and request only what is missing.",
               Path, None, "DIR"),
    OptionSpec("replay", "Re-score the responses.jsonl recorded in DIR, with no server.", Path, None, "DIR"),
    OptionSpec("no_cache", "Do not read or write the response cache (.extractbench/cache/).", parse_bool, False,
               flag=True),
    OptionSpec("slots", "Parallel slots of each embedded llama-server.", parse_positive_int, 4, "N"),
    OptionSpec("context", "Context of each embedded llama-server slot, in tokens (default: the longest prompt plus "
               "--extractbench-max-tokens, at least 4096, at most the model's trained context).",
               parse_context, None, "TOKENS"),
    # --- reports ---
    OptionSpec("no_html_report", "Do not write report.html into the run directory (summary.md and the CSV files "
               "are still written).", parse_bool, False, flag=True),
    # --- tracks, consistency, observability ---
    OptionSpec("track", "Benchmark track: extraction (default), toolcall, generate (create by schema) or repair "
               "(fix broken JSON).", parse_track, "extraction", "TRACK"),
    OptionSpec("repeats", "Ask each sample N times (use a temperature > 0) and report consistency across the runs.",
               parse_repeats, 1, "N"),
    OptionSpec("otel", "Export requests, scored samples and the run to OpenTelemetry: global (the configured "
               "providers), console or otlp (needs the 'otel' extra).", parse_otel, None, "EXPORTER"),
    OptionSpec("calibration", "Ask the server for token logprobs and report per-field confidence calibration "
               "(reliability table, ECE).", parse_bool, False, flag=True),
    # --- datasets and configuration ---
    OptionSpec("columns", "Map the dataset's column names onto ours: text=document,expected=gold "
               "(fields: id, text, schema, expected, topic, title, medium).", parse_columns, (), "OURS=THEIRS[,...]"),
    OptionSpec("sample", "Evaluate N samples chosen by --extractbench-seed (the same on every machine).",
               parse_sample_size, None, "N"),
    OptionSpec("seed", "Seed of --extractbench-sample.", parse_int, 42, "S"),
    OptionSpec("invalid_samples", "Samples with an invalid schema or gold: skip (quietly), warn (skip, list them) "
               "or fail the session.", parse_invalid_policy, "warn", "skip|warn|fail"),
    OptionSpec("dataset_cache", "Cache folder of the datasets library for hf: datasets.", Path, None, "DIR"),
    OptionSpec("config", "YAML config file (model, dataset, prompts, metrics, output, performance); "
               "command line and EXTRACTBENCH_<NAME> variables win over it, it wins over ini.", Path, None, "FILE"),
)
OPTIONS_BY_NAME = {spec.name: spec for spec in OPTIONS}


def effective_config(values: dict[str, Any], sources: dict[str, str], from_file: Any = None) -> dict[str, Any]:
    """What metrics.json records as ``run.config``: each option's value and source, secrets redacted."""
    options = {name: {"value": redact(json_value(values[name]), name), "source": sources[name]} for name in values}
    record: dict[str, Any] = {"options": options, "config_file": None}
    if from_file is not None:
        record["config_file"] = {
            "path": str(from_file.path),
            "not_applied": {k: redact(json_value(v), k) for k, v in from_file.pending.items()},
            "notes": list(from_file.notes),
        }
    return record


@dataclass(frozen=True)
class Settings:
    """The effective configuration of one run."""

    enabled: bool = False
    models: tuple[str, ...] = ()
    dataset: str = "bundled"
    predictions: tuple[PredictionsSpec, ...] = ()
    output: Path | None = None
    sla: str = "minimum"
    sample_min_eqs: float | None = None
    scoring: ScoringOptions = field(default_factory=ScoringOptions)
    rootdir: Path = field(default_factory=Path.cwd)
    subsets: SubsetConfig | None = None
    save: str | None = None
    compare: str | None = None
    compare_fail: tuple[CompareFailCheck, ...] = ()
    verdict_thresholds: tuple[float, float] = (0.01, -0.02)
    prices: Prices = field(default_factory=Prices)
    live: LiveOptions = field(default_factory=LiveOptions)
    report: ReportOptions = field(default_factory=ReportOptions)
    tracks: TrackSettings = field(default_factory=TrackSettings)
    data: DataOptions = field(default_factory=DataOptions)
    config: dict[str, Any] = field(default_factory=dict)  # the effective configuration, as recorded

    @property
    def offline(self) -> bool:
        return bool(self.predictions)

    @classmethod
    def from_values(cls, values: dict[str, Any], *, enabled: bool, rootdir: Path,
                    record: dict[str, Any] | None = None) -> Settings:
        """Build settings from resolved option values."""
        scoring = ScoringOptions(
            case_sensitive=values["case_sensitive"],
            null_equals_absent=not values["null_as_value"],
            strict_types=not values["lenient_types"],
            validate_formats=not values["no_format_check"],
            float_epsilon=values["float_epsilon"],
            eqs_weights=values["eqs_weights"],
            post_processors=values["post_process"],
            semantic=values["semantic"],
            semantic_model=values["semantic_model"],
            judge_model=values["judge"],
            judge_url=values["judge_url"],
            statistics=StatsOptions(
                resamples=values["resamples"],
                confidence=values["confidence"],
                seed=values["stats_seed"],
                alpha=values["alpha"],
                test=values["test"],
                reference_model=values["reference_model"],
                gap_threshold=values["gap_threshold"],
            ),
        )
        return cls(
            enabled=enabled,
            models=values["model"],
            dataset=values["dataset"],
            predictions=tuple(values["predictions"]),
            output=values["output"],
            sla=values["sla"],
            sample_min_eqs=values["sample_min_eqs"],
            scoring=scoring,
            rootdir=rootdir,
            subsets=values["subsets"],
            save=values["save"],
            compare=values["compare"],
            compare_fail=tuple(values["compare_fail"]),
            verdict_thresholds=values["verdict_thresholds"],
            prices=Prices(values["price_input"], values["price_output"]),
            live=LiveOptions.from_values(values),
            report=ReportOptions(html=not values["no_html_report"]),
            tracks=TrackSettings(track=values["track"], repeats=values["repeats"], otel=values["otel"],
                                 calibration=values["calibration"]),
            data=DataOptions(
                columns=tuple(values["columns"]),
                sample=values["sample"],
                seed=values["seed"],
                invalid_samples=values["invalid_samples"],
                cache_dir=values["dataset_cache"],
            ),
            config=record or {},
        )

    def to_dict(self) -> dict[str, Any]:
        """The effective configuration as recorded in metrics.json (holds no secrets)."""
        return {
            "models": list(self.models),
            "dataset": self.dataset,
            "predictions": [
                {"path": str(p.path), "model": p.model} for p in self.predictions
            ],
            "output": str(self.output) if self.output else None,
            "sla": self.sla,
            "sample_min_eqs": self.sample_min_eqs,
            "scoring": self.scoring.to_dict(),
            "subsets": self.subsets.as_dict() if self.subsets else None,
            "save": self.save,
            "compare": self.compare,
            "compare_fail": [str(check) for check in self.compare_fail],
            "verdict_thresholds": list(self.verdict_thresholds),
            "prices": self.prices.to_dict(),
            "live": self.live.to_dict(),
            "report": self.report.as_dict(),
            "tracks": self.tracks.to_dict(),
            "data": self.data.as_dict(),
        }
