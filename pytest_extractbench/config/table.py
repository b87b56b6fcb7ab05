"""The option table: every option of the plugin, declared once.

Each :class:`OptionSpec` names its command-line flag (``--extractbench-NAME``), ini key (``extractbench_NAME``),
environment variable (``EXTRACTBENCH_NAME``), config-file key paths, converter, default and its target field in
:class:`~.settings.Settings`. The pytest adapter registers options from it, :mod:`.layers` resolves them,
:mod:`.file` derives the config file's key map from it and :mod:`.settings` builds the settings from it. A new
option is one entry here plus its field in the group dataclass it targets. Light on purpose: registering the
options must not import the scoring, analysis or live layers.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .parsers import (
    parse_base_url,
    parse_baseline_name,
    parse_bool,
    parse_columns,
    parse_compare_fail,
    parse_context,
    parse_eqs_weights,
    parse_fraction,
    parse_input_mode,
    parse_int,
    parse_int_non_negative,
    parse_invalid_policy,
    parse_judge_url,
    parse_level,
    parse_max_tokens,
    parse_models,
    parse_names,
    parse_non_negative,
    parse_otel,
    parse_positive_int,
    parse_predictions,
    parse_prompt_budget,
    parse_repeats,
    parse_requirement,
    parse_resamples,
    parse_retries,
    parse_sample_size,
    parse_seconds,
    parse_semantic_backend,
    parse_similarity,
    parse_sla,
    parse_structured_output,
    parse_subsets,
    parse_test,
    parse_track,
    parse_unmeasured,
    parse_verdict_thresholds,
)


@dataclass(frozen=True)
class OptionSpec:
    """One option, declared once: how it is given (flag, ini key, environment variable, config-file keys), how its
    text is converted, and where its value lands in :class:`~.settings.Settings`."""

    name: str
    help: str
    converter: Callable[[str], Any] = str
    default: Any = None  # plain data; a string default goes through the converter, as argparse does it
    metavar: str | None = None
    flag: bool = False  # a store_true switch
    multiple: bool = False  # repeatable; values are collected into a tuple
    aliases: tuple[str, ...] = ()
    target: str | None = None  # "GROUP.FIELD" (or "FIELD") of Settings; None: read by the resolution itself
    yaml: tuple[str, ...] = ()  # key paths of the config file ("model.timeout"); options.<name> reaches any option
    shape: Callable[[Any], Any] | None = None  # the resolved value -> the settings field (inverted switches, tuples)
    when_unset: Callable[[Mapping[str, Any]], Any] | None = None  # a default that depends on other options
    env_aliases: tuple[str, ...] = ()  # other environment variables read after EXTRACTBENCH_<NAME> (OPENAI_BASE_URL)

    @property
    def option(self) -> str:
        return "--extractbench-" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        return "extractbench_" + self.name

    @property
    def ini(self) -> str:
        return "extractbench_" + self.name

    @property
    def env(self) -> str:
        return "EXTRACTBENCH_" + self.name.upper()

    def default_value(self) -> Any:
        """The default as a value: string defaults are converted (so the table holds no heavy objects)."""
        if isinstance(self.default, str) and self.converter is not str and not self.multiple:
            return self.converter(self.default)
        return self.default

    def settings_value(self, values: Mapping[str, Any]) -> Any:
        """This option's resolved value as its :class:`Settings` field holds it."""
        value = values[self.name]
        if value is None and self.when_unset is not None:
            value = self.when_unset(values)
        return value if self.shape is None else self.shape(value)


def unique(values: Any) -> tuple[Any, ...]:
    """Repeated values once each, in order (a base URL given twice is one replica)."""
    return tuple(dict.fromkeys(values))


def request_timeout(values: Mapping[str, Any]) -> float:
    """No --extractbench-timeout: the embedded server's CPU model gets longer than a remote server or an extractor."""
    from ..live.options import DEFAULT_TIMEOUT_S, EMBEDDED_TIMEOUT_S

    embedded = not values["base_url"] and values["replay"] is None and values["extractor"] is None
    return EMBEDDED_TIMEOUT_S if embedded else DEFAULT_TIMEOUT_S


# The table is laid out by hand, one option a block, so it reads as a table; the formatter leaves it alone.
# fmt: off
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("model", "Model name(s), comma-separated or repeated; every sample becomes one item per model.",
               parse_models, (), "NAME[,NAME...]", multiple=True, aliases=("--model",),
               target="models", yaml=("model.model_name",)),
    OptionSpec("dataset", "Dataset: 'bundled' (default), a .jsonl/.json/.parquet file of {id, text, schema, expected} "
               "rows, a Benchson folder (NAME/test/*.json) or hf:OWNER/NAME[:split] / hf:PATH (via datasets).",
               str, "bundled", "SPEC",
               target="dataset", yaml=("dataset.name",)),
    OptionSpec("predictions", "Score recorded outputs instead of calling a server: a JSONL file of {id, output} rows "
               "(repeatable; NAME=PATH names the model).", parse_predictions, (), "[NAME=]PATH", multiple=True,
               target="predictions", shape=tuple),
    OptionSpec("output", "Run directory for metrics.json and samples.jsonl (default .extractbench/runs/<timestamp>).",
               Path, None, "DIR",
               target="output", yaml=("output.results_dir",)),
    OptionSpec("sla", "SLA tier asserted at session end: minimum, target, excellence or none.",
               parse_sla, "minimum", "TIER",
               target="sla", yaml=("metrics.sla",)),
    OptionSpec("report_only", "Report-only run: failed items are reported, but the exit code is 0 unless a gate "
               "asked for (SLA tier, --extractbench-require, a regression check) fails.", parse_bool, False,
               flag=True, target="report_only", shape=bool),
    OptionSpec("sample_min_eqs", "Fail a sample item whose EQS is below this (default: only unusable output fails).",
               parse_fraction, None, "X",
               target="sample_min_eqs", yaml=("metrics.sample_min_eqs",)),
    OptionSpec("case_sensitive", "Compare strings case-sensitively.", parse_bool, False, flag=True,
               target="scoring.case_sensitive", yaml=("metrics.field_matching.case_sensitive",)),
    OptionSpec("keep_whitespace", "Compare strings without normalizing whitespace (runs of spaces, tabs and newlines "
               "stay as they are; leading and trailing ones count).", parse_bool, False, flag=True,
               target="scoring.normalize_whitespace", yaml=("metrics.field_matching.normalize_whitespace",),
               shape=operator.not_),
    OptionSpec("unordered_arrays", "Sample-level exact match accepts arrays of scalars in any order (default: the "
               "gold's order).", parse_bool, False, flag=True,
               target="scoring.array_order_matters", yaml=("metrics.field_matching.unordered_arrays",),
               shape=operator.not_),
    OptionSpec("null_as_value", "Score null as a value instead of treating it as an absent field.",
               parse_bool, False, flag=True,
               target="scoring.null_equals_absent", shape=operator.not_),
    OptionSpec("lenient_types", "Accept lossless coercions (\"123\" for 123) as correct types.",
               parse_bool, False, flag=True,
               target="scoring.strict_types", shape=operator.not_),
    OptionSpec("no_format_check", "Do not assert JSON Schema 'format' (date, email, ...) when validating output.",
               parse_bool, False, flag=True,
               target="scoring.validate_formats", shape=operator.not_),
    OptionSpec("no_anls", "Do not compute ANLS* (the whole-answer score of the document-AI literature, about as "
               "costly as the field scores): the ANLS* metric and its per-field column are left out.",
               parse_bool, False, flag=True,
               target="scoring.anls_star", shape=operator.not_),
    OptionSpec("float_epsilon", "Tolerance under which two numbers are equal.", parse_non_negative, 1e-6, "EPS",
               target="scoring.float_epsilon", yaml=("metrics.field_matching.numeric_tolerance",)),
    OptionSpec("exact_within", "Stricter exactness: a number is exact only within REL of the gold (relative, at least "
               "the float epsilon) and a value of the wrong JSON type is never exact; otherwise they count as "
               "partial or incorrect by their composite score (default: any composite score >= 0.95 is exact).",
               parse_non_negative, None, "REL",
               target="scoring.exact_within", yaml=("metrics.field_matching.exact_within",)),
    OptionSpec("list_similarity", "Arrays of scalars: elements that are not equal also pair by string similarity "
               "(normalized edit distance, an optimal assignment) when at least SIM alike, each pair adding its "
               "similarity to the Jaccard score, so 'Newgistics, Inc.' against 'Newgistics Inc.' earns partial "
               "credit; exactness is unchanged (default: equal elements only).",
               parse_similarity, None, "SIM",
               target="scoring.list_similarity", yaml=("metrics.field_matching.list_similarity",)),
    OptionSpec("normalise", "Transforms every compared string goes through first, in order, with their default "
               "parameters (no_punctuation, no_legal_suffix, iso_date, amount, lowercase, strip, sort_tokens or "
               "registered ones): 'no_punctuation,no_legal_suffix' makes 'Newgistics, Inc.' equal 'Newgistics Inc'; "
               "order matters: iso_date, then amount (which would read 'Dec 25, 2018' as a number), then "
               "no_punctuation (which would take their dots and slashes).",
               parse_names, (), "NAME[,NAME...]",
               target="scoring.normalisers", yaml=("metrics.field_matching.normalisers",)),
    OptionSpec("eqs_weights", "EQS weights: validity,f1_partial,type_accuracy,no_hallucination.",
               parse_eqs_weights, "0.15,0.50,0.20,0.15", "W1,W2,W3,W4",
               target="scoring.eqs_weights", yaml=("metrics.eqs_weights",)),
    OptionSpec("post_process", "Post-processors run on every sample's fields before metrics, in order "
               "(nulls_as_absent, nulls_as_values, propagate_errors or registered ones).",
               parse_names, (), "NAME[,NAME...]",
               target="scoring.post_processors"),
    OptionSpec("semantic", "Embeddings for x-eval-compare 'semantic': 'local' (bundled all-MiniLM-L6-v2), "
               "'local:PATH' or an OpenAI-compatible base URL.", parse_semantic_backend, None, "BACKEND",
               target="scoring.semantic"),
    OptionSpec("semantic_model", "Embedding model name to request from a server backend.", str, None, "NAME",
               target="scoring.semantic_model"),
    OptionSpec("judge", "LLM-as-judge model for x-eval-compare 'semantic' (1-7 rubric, one call per sample).",
               str, None, "MODEL",
               target="scoring.judge_model"),
    OptionSpec("judge_url", "Base URL of the judge's OpenAI-compatible server (key: EXTRACTBENCH_JUDGE_API_KEY).",
               parse_judge_url, None, "URL",
               target="scoring.judge_url"),
    # statistics, comparisons and baselines
    OptionSpec("resamples", "Bootstrap resamples (and permutation-test swaps) behind confidence intervals and "
               "significance.", parse_resamples, 10_000, "N",
               target="scoring.statistics.resamples"),
    OptionSpec("confidence", "Confidence level of the intervals.", parse_level, 0.95, "LEVEL",
               target="scoring.statistics.confidence"),
    OptionSpec("stats_seed", "Seed of the bootstrap and the permutation tests.", parse_int, 0, "SEED",
               target="scoring.statistics.seed"),
    OptionSpec("alpha", "Significance level of the paired tests (model comparisons, --extractbench-compare-fail).",
               parse_level, 0.05, "ALPHA",
               target="scoring.statistics.alpha"),
    OptionSpec("test", "Paired test that decides significance: permutation, ttest or wilcoxon.",
               parse_test, "permutation", "TEST",
               target="scoring.statistics.test"),
    OptionSpec("reference_model", "The large/reference model of the gap rule (default: the model with the "
               "highest EQS).", str, None, "NAME",
               target="scoring.statistics.reference_model"),
    OptionSpec("gap_threshold", "Flag models that trail the reference model by more than this EQS.",
               parse_fraction, 0.15, "GAP",
               target="scoring.statistics.gap_threshold"),
    OptionSpec("subsets", "JSON or YAML file of named subsets (conditions on gold fields or metadata) and "
               "group_by fields.", parse_subsets, None, "FILE",
               target="subsets"),
    OptionSpec("save", "Store this run as a baseline under .extractbench/baselines/ (NNNN_NAME.json).",
               parse_baseline_name, None, "NAME",
               target="save"),
    OptionSpec("compare", "Compare this run with a stored baseline: its NAME, its number NNNN or a file path.",
               str, None, "NAME|PATH",
               target="compare"),
    OptionSpec("compare_fail", "Fail the session when METRIC is worse than the baseline by more than MARGIN and "
               "the paired test is significant, e.g. eqs:-0.02, field_f1_partial:-2% or pass^k:-0.05 (pass counts "
               "over --extractbench-repeats, against a baseline saved with them); on the toolcall, generate and "
               "repair tracks their own figures, e.g. pass_rate:-0.05 or arguments_f1:-0.02 (repeatable).",
               parse_compare_fail, (), "EXPR", multiple=True,
               target="compare_fail", shape=tuple),
    OptionSpec("baseline_min_unchanged", "A regression check (--extractbench-compare-fail) stops with a usage "
               "error when under this fraction of the baseline's samples are unchanged in the dataset (same id and "
               "content hash of text, schema and gold).", parse_fraction, 0.5, "FRACTION",
               target="baseline_min_unchanged"),
    OptionSpec("sample_regression_delta", "Against a baseline, a sample counts as regressed when it goes from pass "
               "to fail or its EQS drops by more than this (its bucket: regressed, fixed, still failing, unchanged, "
               "new, removed, changed).", parse_fraction, 0.05, "DELTA",
               target="sample_regression_delta"),
    OptionSpec("require", "Fail the session when a model's METRIC misses this threshold: METRIC>=VALUE or "
               "METRIC<=VALUE, any metric of the catalog, e.g. judge_score>=0.8, time_to_first_token_p95_ms<=800 or "
               "pass^k>=0.8 (with --extractbench-repeats; on every track), or a figure of the toolcall, generate or "
               "repair track, e.g. accuracy>=0.9 (repeatable).", parse_requirement, (), "EXPR", multiple=True,
               target="require", yaml=("metrics.require",), shape=tuple),
    OptionSpec("unmeasured", "A threshold that could not be measured (its judge, embeddings or server failed): "
               "'fail' the gate (default) or only 'warn'.", parse_unmeasured, "fail", "POLICY",
               target="unmeasured", yaml=("metrics.unmeasured",)),
    OptionSpec("verdict_thresholds", "EQS deltas (pass rate deltas on the toolcall, generate and repair tracks) of the "
               "improved/regressed verdict against the baseline.",
               parse_verdict_thresholds, (0.01, -0.02), "IMPROVE,REGRESS",
               target="verdict_thresholds"),
    # --- performance metrics ---
    OptionSpec("price_input", "Price of 1,000 input (prompt) tokens in USD, for the cost estimate.",
               parse_non_negative, None, "USD_PER_1K",
               target="prices.input_per_1k", yaml=("model.price_input",)),
    OptionSpec("price_output", "Price of 1,000 output (completion) tokens in USD, for the cost estimate.",
               parse_non_negative, None, "USD_PER_1K",
               target="prices.output_per_1k", yaml=("model.price_output",)),
    # --- live runs: servers, embedded llama-server, pipeline, journal, cache ---
    OptionSpec("base_url", "OpenAI-compatible server URL, e.g. http://host:8000/v1 (repeatable: replicas of the "
               "same model are load-balanced). Default: start the embedded llama-server.",
               parse_base_url, (), "URL", multiple=True,
               target="live.base_urls", yaml=("model.base_url",), shape=unique, env_aliases=("OPENAI_BASE_URL",)),
    OptionSpec("extractor", "Benchmark a Python callable instead of a server: MODULE:FUNCTION or FILE.py:FUNCTION, "
               "called with each sample, returning JSON text, a dict or a ModelResponse (sync or async).",
               str, None, "MODULE:FUNCTION",
               target="live.extractor"),
    OptionSpec("structured_output", "How to ask for JSON under the sample's schema: json_schema (strict), "
               "json_object (+schema, llama.cpp), guided_json (vLLM) or none (prompt only).",
               parse_structured_output, "json_schema", "MODE",
               target="live.structured_output", yaml=("model.structured_output",)),
    OptionSpec("concurrency", "Requests in flight at once per server group (default: the embedded server's slots, "
               "else 8 per base URL; shared out among xdist workers).", parse_positive_int, None, "N",
               target="live.concurrency", yaml=("performance.concurrency",)),
    OptionSpec("temperature", "Sampling temperature.", parse_non_negative, 0.0, "T",
               target="live.temperature", yaml=("model.temperature",)),
    OptionSpec("max_tokens", "Completion token limit per request; output that hits it is classed 'truncated'. "
               "Default 'auto': derived from each sample's schema (256-2048).",
               parse_max_tokens, None, "N|auto",
               target="live.max_tokens", yaml=("model.max_tokens",)),
    OptionSpec("decoding_seed", "Seed sent with every request.", parse_int, 42, "S",
               target="live.decoding_seed", yaml=("model.seed",)),
    OptionSpec("timeout", "Timeout of one request attempt, in seconds (default 120; 600 for the embedded server, "
               "whose CPU model is slow).", parse_seconds, None, "SECONDS",
               target="live.timeout_s", yaml=("model.timeout",), when_unset=request_timeout),
    OptionSpec("retries", "Retries of timeouts, connection errors, 429 and 5xx (exponential backoff with jitter).",
               parse_retries, 3, "N",
               target="live.retries", yaml=("model.max_retries",)),
    OptionSpec("system_prompt", "File holding the system prompt template (default: the built-in one).", Path, None, "FILE",
               target="live.system_prompt", yaml=("prompts.system_file", "prompts.system")),
    OptionSpec("user_prompt", "File holding the user prompt template with {text} and {schema} (default: the built-in one).",
               Path, None, "FILE",
               target="live.user_prompt", yaml=("prompts.user_file", "prompts.user")),
    OptionSpec("resume", "Continue the run in DIR: reuse its responses.jsonl and request only what is missing.",
               Path, None, "DIR",
               target="live.resume"),
    OptionSpec("replay", "Re-score the answers recorded in DIR with no server: its cassette.jsonl (strictly: an "
               "answer not in it is the item's replay_miss), else its responses.jsonl.", Path, None, "DIR",
               target="live.replay"),
    OptionSpec("record", "Write every answer of this run to DIR/cassette.jsonl, for --extractbench-replay DIR.",
               Path, None, "DIR", target="live.record"),
    OptionSpec("stream", "Stream each answer to measure time to first token and generation time (streamed "
               "answers are the same text; some servers schedule streamed requests differently).", parse_bool, False,
               flag=True, target="live.stream", yaml=("model.stream",), shape=bool),
    OptionSpec("cache", "Reuse answers recorded by earlier runs (.extractbench/cache/) when everything that can "
               "change an answer is the same (off: every run asks).", parse_bool, False,
               flag=True, target="live.cache", yaml=("performance.enable_caching",), shape=bool),
    OptionSpec("no_cache", "Do not read or write the response cache, even when --extractbench-cache is set.",
               parse_bool, False, flag=True, target="live.no_cache", shape=bool),
    OptionSpec("slots", "Parallel slots of each embedded llama-server.", parse_positive_int, 4, "N",
               target="live.slots", yaml=("performance.slots",)),
    OptionSpec("context", "Context of each embedded llama-server slot, in tokens (default: the longest prompt plus "
               "--extractbench-max-tokens, at least 4096, at most the model's trained context).",
               parse_context, None, "TOKENS",
               target="live.context", yaml=("performance.context",)),
    OptionSpec("prompt_budget", "Prompt tokens in flight per model: auto (default: what the server reads, at the "
               "prompt speed its answers report, in half a request timeout; until it reports one, prompts of 2,048 "
               "tokens or more go one at a time, the shortest first before the first answer; an attempt whose "
               "prompt alone needs more than half the timeout gets twice its reading time, at most 6 timeouts), off "
               "(the request count alone limits; the timeout is strict), or a number (strict timeout too).",
               parse_prompt_budget, "auto", "auto|off|TOKENS",
               target="live.prompt_budget", yaml=("performance.prompt_budget",)),
    OptionSpec("heartbeat", "When no item has finished for SECONDS, print what is in flight: requests sent and "
               "waiting, the oldest one's age, and what the embedded servers' slots are doing (0: never).",
               parse_non_negative, 60.0, "SECONDS",
               target="live.heartbeat_s", yaml=("output.heartbeat",)),
    # --- reports ---
    OptionSpec("no_html_report", "Do not write report.html into the run directory (summary.md and the CSV files "
               "are still written).", parse_bool, False, flag=True,
               target="report.html", yaml=("output.generate_report",), shape=operator.not_),
    OptionSpec("charts", "Draw report.html's charts: on (default) or off (the page keeps every table and the "
               "sample viewer).", parse_bool, True, "on|off",
               target="report.charts", yaml=("output.charts",)),
    OptionSpec("failure_details", "Failed samples that pytest details in its FAILURES section and lists in its "
               "short summary (the first N; one line counts the others, and every one is in the run's samples.jsonl "
               "and the JUnit XML).",
               parse_int_non_negative, 20, "N",
               target="report.failure_details", yaml=("output.failure_details",)),
    # --- tracks, consistency, observability ---
    OptionSpec("track", "Benchmark track: extraction (default), toolcall, generate (create by schema) or repair "
               "(fix broken JSON).", parse_track, "extraction", "TRACK",
               target="tracks.track"),
    OptionSpec("repeats", "Ask each sample N times (use a temperature > 0) and report, on every track, how many runs "
               "of each sample passed, pass@k and pass^k, and consistency across the runs.",
               parse_repeats, 1, "N",
               target="tracks.repeats"),
    OptionSpec("otel", "Export requests, scored samples and the run to OpenTelemetry: global (the configured "
               "providers), console or otlp (needs the 'otel' extra).", parse_otel, None, "EXPORTER",
               target="tracks.otel"),
    OptionSpec("calibration", "Ask the server for token logprobs and report per-field confidence calibration "
               "(reliability table, ECE).", parse_bool, False, flag=True,
               target="tracks.calibration"),
    # --- datasets and configuration ---
    OptionSpec("columns", "Map the dataset's column names onto ours: text=body,expected=gold "
               "(fields: id, text, document, schema, expected, topic, title, medium).", parse_columns, (), "OURS=THEIRS[,...]",
               target="data.columns", yaml=("dataset.columns",), shape=tuple),
    OptionSpec("sample", "Evaluate N samples chosen by --extractbench-seed (the same on every machine).",
               parse_sample_size, None, "N",
               target="data.sample", yaml=("dataset.sample_size",)),
    OptionSpec("seed", "Seed of --extractbench-sample.", parse_int, 42, "S",
               target="data.seed", yaml=("dataset.random_seed",)),
    OptionSpec("invalid_samples", "Samples with an invalid schema or gold: skip (quietly), warn (skip, list them) "
               "or fail the session.", parse_invalid_policy, "warn", "skip|warn|fail",
               target="data.invalid_samples", yaml=("dataset.invalid_samples",)),
    OptionSpec("input", "What a model gets of a row's document (a PDF or an image): its text (default), its page "
               "images as OpenAI image parts (a vision model's server) or both.", parse_input_mode, "text",
               "text|image|both", target="data.input", yaml=("dataset.input",)),
    OptionSpec("dataset_cache", "Cache folder of the datasets library for hf: datasets.", Path, None, "DIR",
               target="data.cache_dir", yaml=("dataset.cache_dir",)),
    OptionSpec("config", "YAML config file (model, dataset, prompts, metrics, output, performance); "
               "command line and EXTRACTBENCH_<NAME> variables win over it, it wins over ini.", Path, None, "FILE",
               ),
)
# fmt: on
OPTIONS_BY_NAME = {spec.name: spec for spec in OPTIONS}
