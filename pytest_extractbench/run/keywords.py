"""The keyword options of :func:`~pytest_extractbench.evaluate`, typed so editors complete them and type
checkers check them.

One key per ``--extractbench-*`` option, by its underscore name (``evaluate()`` takes ``dataset``,
``predictions``, ``model``, ``base_url``, ``output`` and ``extractor`` as its own parameters). A value is what
the option's text would be on the command line (a string, a number or a path) or ``True`` for a switch; it is
converted and checked by the option's own parser, so ``sample="10"`` and ``sample=10`` are the same run.
``tests/unit/test_python_api.py`` checks that the keys are exactly the options.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal, TypedDict, Union

PathText = Union[str, "os.PathLike[str]"]  # noqa: UP007 - a runtime alias with a forward reference
Number = int | float | str
Texts = str | Sequence[str]  # a repeatable option: one value or several


class EvaluateOptions(TypedDict, total=False):
    """``evaluate(..., sla="target", sample=10, compare="main")``; every key is optional."""

    # gates and baselines
    sla: Literal["none", "minimum", "target", "excellence"]
    report_only: bool
    sample_min_eqs: Number
    require: Texts
    unmeasured: Literal["fail", "warn"]
    save: str
    compare: PathText
    compare_fail: Texts
    baseline_min_unchanged: Number
    sample_regression_delta: Number
    verdict_thresholds: str
    subsets: PathText
    # scoring
    case_sensitive: bool
    keep_whitespace: bool
    unordered_arrays: bool
    null_as_value: bool
    lenient_types: bool
    no_format_check: bool
    no_anls: bool
    float_epsilon: Number
    exact_within: Number
    list_similarity: Number
    normalise: str
    eqs_weights: str
    post_process: str
    semantic: str
    semantic_model: str
    judge: str
    judge_url: str
    # statistics
    resamples: int | str
    confidence: Number
    stats_seed: int | str
    alpha: Number
    test: Literal["permutation", "ttest", "wilcoxon"]
    reference_model: str
    gap_threshold: Number
    price_input: Number
    price_output: Number
    # requests
    structured_output: Literal["json_schema", "json_object", "guided_json", "none"]
    concurrency: int | str
    temperature: Number
    max_tokens: int | str
    decoding_seed: int | str
    timeout: Number
    retries: int | str
    system_prompt: PathText
    user_prompt: PathText
    resume: PathText
    replay: PathText
    record: PathText
    stream: bool
    cache: bool
    no_cache: bool
    slots: int | str
    context: int | str
    prompt_budget: int | Literal["auto", "off"]
    heartbeat: Number
    repeats: int | str
    calibration: bool
    # reports
    no_html_report: bool
    charts: Literal["on", "off"]
    failure_details: int | str
    otel: str
    track: Literal["extraction", "toolcall", "generate", "repair"]
    # the dataset
    columns: str
    sample: int | str
    seed: int | str
    invalid_samples: Literal["skip", "warn", "fail"]
    dataset_cache: PathText
    input: Literal["text", "image", "both"]
    config: PathText
