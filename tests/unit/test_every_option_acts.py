"""Every option acts: each one in the option table names a behavioural test showing what it changes.

test_options_pipeline.py proves that every option reaches its settings field; the tests named here prove that the
field changes a run's result (a metric, a file, a request field, an exit code, a message). An entry must name an
existing test whose source mentions the option, so it cannot point at an unrelated test.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from pytest_extractbench.config.table import OPTIONS, OPTIONS_BY_NAME, OptionSpec

ROOT = Path(__file__).resolve().parents[2]

BEHAVIOUR = "tests/plugin/test_options_behaviour.py"
OFFLINE = "tests/plugin/test_offline_scoring.py"
OPTIONS_ACT = "tests/plugin/test_options_act.py"
LIVE = "tests/plugin/test_live_runs.py"
COMPARE = "tests/plugin/test_compare_flow.py"
DATASETS = "tests/plugin/test_datasets_plugin.py"
TRACKS = "tests/plugin/test_tracks_plugin.py"
TRACKS_LIVE = "tests/plugin/test_tracks_live.py"
SCORE = "tests/unit/test_score_sample.py"
FAILURES = "tests/plugin/test_failure_details.py"

EFFECT_TESTS: dict[str, list[str]] = {
    "model": [f"{BEHAVIOUR}::test_model_names_the_models_asked_and_each_gets_every_sample"],
    "dataset": [
        f"{DATASETS}::test_parquet_with_column_mapping_and_statistics",
        f"{OFFLINE}::test_named_prediction_files_make_several_models",
    ],
    "predictions": [f"{OFFLINE}::test_named_prediction_files_make_several_models"],
    "output": [f"{BEHAVIOUR}::test_output_is_where_the_run_is_written"],
    "sla": [
        f"{OFFLINE}::test_sla_gate_fails_the_session_naming_each_metric",
        f"{OFFLINE}::test_target_tier_is_stricter",
    ],
    "sample_min_eqs": [f"{OFFLINE}::test_per_sample_quality_bar"],
    "case_sensitive": [
        f"{OFFLINE}::test_ini_options_apply_and_the_command_line_wins",
        f"{SCORE}::test_case_and_whitespace_normalization_is_configurable",
    ],
    "keep_whitespace": [
        f"{OPTIONS_ACT}::test_keep_whitespace_makes_a_spacing_difference_count",
        f"{OPTIONS_ACT}::test_config_keys_map_onto_them",
    ],
    "unordered_arrays": [
        f"{OPTIONS_ACT}::test_unordered_arrays_makes_reversed_tags_an_exact_sample",
        f"{OPTIONS_ACT}::test_config_keys_map_onto_them",
    ],
    "null_as_value": [
        f"{BEHAVIOUR}::test_null_as_value_turns_null_omissions_and_hallucinations_into_wrong_values",
        f"{SCORE}::test_null_as_value_option",
    ],
    "lenient_types": [
        f"{BEHAVIOUR}::test_lenient_types_accept_a_numeric_string_for_an_integer",
        f"{SCORE}::test_string_for_integer_is_a_type_error_unless_lenient",
    ],
    "no_format_check": [
        f"{BEHAVIOUR}::test_no_format_check_accepts_a_date_in_another_format",
        f"{SCORE}::test_format_is_asserted_by_default",
    ],
    "no_anls": [
        f"{BEHAVIOUR}::test_no_anls_leaves_anls_star_unmeasured",
        f"{SCORE}::test_anls_star_is_computed_on_first_read_and_not_at_all_when_off",
    ],
    "float_epsilon": [
        f"{BEHAVIOUR}::test_float_epsilon_makes_near_numbers_equal",
        "tests/unit/test_rules.py::test_numbers_are_equal_within_an_absolute_epsilon",
    ],
    "exact_within": [f"{OFFLINE}::test_exact_within_turns_near_numbers_into_partial_matches"],
    "list_similarity": [f"{OFFLINE}::test_list_similarity_gives_partial_credit_to_near_list_elements"],
    "normalise": [f"{OFFLINE}::test_normalise_runs_named_transforms_on_every_compared_string"],
    "eqs_weights": [
        f"{BEHAVIOUR}::test_eqs_weights_reweigh_the_components",
        "tests/unit/test_python_api.py::test_load_run_rebuilds_records_with_the_run_s_own_scoring_options",
    ],
    "post_process": ["tests/plugin/test_rules_plugin.py::test_post_processors_by_name_and_unknown_names"],
    "semantic": [
        f"{BEHAVIOUR}::test_semantic_server_and_semantic_model_embed_the_texts",
        "tests/unit/test_semantic.py::test_local_embeddings_pass_paraphrases_and_fail_unrelated_text",
    ],
    "semantic_model": [f"{BEHAVIOUR}::test_semantic_server_and_semantic_model_embed_the_texts"],
    "judge": [
        f"{BEHAVIOUR}::test_judge_at_judge_url_grades_semantic_fields",
        "tests/plugin/test_rules_plugin.py::test_judge_needs_a_server",
    ],
    "judge_url": [
        f"{BEHAVIOUR}::test_judge_at_judge_url_grades_semantic_fields",
        "tests/plugin/test_rules_plugin.py::test_judge_needs_a_server",
    ],
    "resamples": [f"{BEHAVIOUR}::test_resamples_below_all_swaps_make_the_permutation_test_monte_carlo"],
    "confidence": [f"{BEHAVIOUR}::test_confidence_sets_the_level_of_the_intervals"],
    "stats_seed": [f"{BEHAVIOUR}::test_stats_seed_changes_the_bootstrap_draws"],
    "alpha": [f"{BEHAVIOUR}::test_alpha_decides_significance"],
    "test": [f"{BEHAVIOUR}::test_test_chooses_the_paired_test_behind_significance"],
    "reference_model": [
        f"{BEHAVIOUR}::test_gap_threshold_and_reference_model_decide_the_gap_rule",
        "tests/unit/test_comparison.py::test_gap_rule_reference_and_threshold",
    ],
    "gap_threshold": [
        f"{BEHAVIOUR}::test_gap_threshold_and_reference_model_decide_the_gap_rule",
        "tests/unit/test_comparison.py::test_gap_rule_reference_and_threshold",
    ],
    "subsets": [f"{COMPARE}::test_subsets_get_metrics_and_their_own_gate"],
    "save": [f"{COMPARE}::test_save_then_compare_an_unchanged_run"],
    "compare": [
        f"{COMPARE}::test_save_then_compare_an_unchanged_run",
        f"{COMPARE}::test_a_real_regression_fails_the_session_and_explains_itself",
    ],
    "compare_fail": [f"{COMPARE}::test_a_real_regression_fails_the_session_and_explains_itself"],
    "baseline_min_unchanged": [
        "tests/plugin/test_baseline_pairing.py::test_a_dataset_mostly_replaced_stops_a_regression_check"
    ],
    "sample_regression_delta": [
        "tests/plugin/test_baseline_buckets.py::test_the_delta_decides_whether_a_drop_is_a_regression"
    ],
    "verdict_thresholds": [f"{BEHAVIOUR}::test_verdict_thresholds_decide_the_verdict_against_the_baseline"],
    "price_input": ["tests/plugin/test_performance_plugin.py::test_a_slow_p95_fails_the_session_with_one_line"],
    "price_output": ["tests/plugin/test_performance_plugin.py::test_a_slow_p95_fails_the_session_with_one_line"],
    "base_url": [f"{LIVE}::test_replicas_share_the_load"],
    "extractor": ["tests/plugin/test_extractor.py::test_every_sample_is_asked_once_journaled_and_scored"],
    "structured_output": [
        f"{TRACKS_LIVE}::test_generate_and_repair_use_the_structured_output_mode",
        f"{LIVE}::test_templates_mode_and_key_reach_the_server_but_no_file",
    ],
    "concurrency": [f"{BEHAVIOUR}::test_concurrency_caps_the_requests_in_flight"],
    "temperature": [f"{TRACKS_LIVE}::test_repeats_send_one_request_per_run_with_their_own_seeds"],
    "max_tokens": [f"{LIVE}::test_the_closing_verdict_says_the_tool_worked_and_why_the_gate_failed"],
    "decoding_seed": [f"{BEHAVIOUR}::test_decoding_seed_is_sent_with_every_request"],
    "timeout": [f"{LIVE}::test_every_sample_is_accounted_for_under_injected_faults"],
    "retries": [f"{LIVE}::test_every_sample_is_accounted_for_under_injected_faults"],
    "stream": [f"{LIVE}::test_stream_times_the_first_token_and_scores_the_same_answer"],
    "require": ["tests/plugin/test_gate_results.py::test_required_thresholds_gate_the_session_on_any_metric"],
    "unmeasured": [
        "tests/adversarial/test_gate_outcomes.py::test_warn_lets_an_unmeasured_threshold_pass_and_the_summary_says_so_first",
        "tests/adversarial/test_gate_outcomes.py::test_the_policy_is_read_from_the_config_file_too",
    ],
    "system_prompt": [f"{LIVE}::test_templates_mode_and_key_reach_the_server_but_no_file"],
    "user_prompt": [f"{BEHAVIOUR}::test_user_prompt_replaces_the_user_message"],
    "resume": [f"{LIVE}::test_a_killed_server_then_resume_requests_only_what_is_missing"],
    "replay": [
        f"{LIVE}::test_replay_marks_samples_without_a_response_missing",
        f"{LIVE}::test_the_cache_makes_a_rerun_free_and_replay_needs_no_server",
    ],
    "no_cache": [f"{BEHAVIOUR}::test_no_cache_neither_reads_nor_writes_the_response_cache"],
    "record": ["tests/plugin/test_record_replay.py::test_a_cassette_is_sorted_diffable_and_keeps_no_secret"],
    "report_only": ["tests/plugin/test_exit_codes.py::test_0_report_only_reports_failed_items_without_failing"],
    "cache": ["tests/plugin/test_trust_across_runs.py::test_two_servers_serving_the_same_model_name_are_both_asked"],
    "slots": [f"{BEHAVIOUR}::test_slots_and_context_size_the_embedded_server"],
    "context": [f"{BEHAVIOUR}::test_slots_and_context_size_the_embedded_server"],
    "heartbeat": [
        "tests/plugin/test_quiet_run.py::test_a_slow_server_gets_a_line_while_its_requests_are_out",
        "tests/plugin/test_quiet_run.py::test_no_line_when_the_option_is_0_or_pytest_is_quiet",
    ],
    "prompt_budget": [
        "tests/plugin/test_prompt_budget_runs.py::test_long_prompts_time_out_together_and_finish_one_at_a_time",
        "tests/plugin/test_prompt_budget_runs.py::test_a_fixed_budget_is_reported_and_short_prompts_still_run_together",
    ],
    "no_html_report": ["tests/report/test_report_plugin.py::test_no_html_report_option"],
    "charts": ["tests/report/test_report_plugin.py::test_charts_option_draws_or_leaves_out_the_charts"],
    "failure_details": [
        f"{FAILURES}::test_past_the_limit_one_line_stands_for_the_rest_and_nothing_is_lost",
        f"{FAILURES}::test_the_default_limit_and_the_ini_key",
    ],
    "track": [
        f"{TRACKS_LIVE}::test_toolcall_track_sends_tools_and_scores_tool_calls",
        f"{TRACKS_LIVE}::test_generate_and_repair_use_the_structured_output_mode",
    ],
    "repeats": [f"{TRACKS}::test_extraction_repeats_and_calibration_only_when_asked"],
    "otel": ["tests/plugin/test_otel.py::test_spans_and_metrics_of_an_offline_run"],
    "calibration": [f"{BEHAVIOUR}::test_calibration_asks_for_logprobs_and_reports_calibration"],
    "columns": [f"{DATASETS}::test_parquet_with_column_mapping_and_statistics"],
    "sample": [f"{OFFLINE}::test_sampling_never_warns_about_rows_it_did_not_draw"],
    "seed": [f"{BEHAVIOUR}::test_seed_chooses_which_samples_are_drawn"],
    "invalid_samples": [f"{DATASETS}::test_fail_stops_the_session", f"{DATASETS}::test_skip_is_quiet_but_recorded"],
    "dataset_cache": [f"{BEHAVIOUR}::test_dataset_cache_holds_what_datasets_caches"],
    "input": ["tests/plugin/test_documents_plugin.py::test_page_images_reach_a_vision_server_as_image_parts"],
    "config": [f"{OPTIONS_ACT}::test_config_keys_map_onto_them"],
}


@cache
def _module(path: str) -> tuple[str, ast.Module]:
    text = (ROOT / path).read_text(encoding="utf-8")
    return text, ast.parse(text, filename=path)


def find_test(node_id: str) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The source (decorators included, so parametrize values count) and node of ``path::[Class::]name[params]``."""
    path, *names = re.sub(r"\[.*\]$", "", node_id).split("::")
    if not names or not (ROOT / path).is_file():
        return None
    text, scope = _module(path)
    body: list[ast.stmt] = scope.body
    for i, name in enumerate(names):
        last = i == len(names) - 1
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if last else (ast.ClassDef,)
        found = next((n for n in body if isinstance(n, kinds) and n.name == name), None)
        if found is None:
            return None
        if last:
            lines = text.splitlines()
            start = min([d.lineno for d in found.decorator_list] + [found.lineno])
            return "\n".join(lines[start - 1 : found.end_lineno]), found  # type: ignore[union-attr]
        body = found.body  # type: ignore[union-attr]
    return None


def mentions(spec: OptionSpec, source: str, node: ast.AST) -> list[str]:
    """How ``source`` names the option: flag (or alias), ini key, environment variable, config-file key, or its
    settings field passed as a keyword argument."""
    found = [text for text in (spec.option, *spec.aliases) if re.search(re.escape(text) + r"(?![\w-])", source)]
    found += [text for text in (spec.ini, spec.env) if re.search(re.escape(text) + r"(?!\w)", source)]
    for key_path in spec.yaml:  # the dotted path, or its keys nested in order: "metrics: {sla: target}"
        nested = r"[\s\S]*?".join(r"(?<![\w-])" + re.escape(key) + r"""["']?\s*:""" for key in key_path.split("."))
        if key_path in source or re.search(nested, source):
            found.append(key_path)
    if spec.target:
        field_name = spec.target.rsplit(".", 1)[-1]
        if any(isinstance(k, ast.keyword) and k.arg == field_name for k in ast.walk(node)):
            found.append(f"{field_name}=")
    return found


def test_every_option_has_an_effect_test_and_no_entry_is_unknown() -> None:
    names = [spec.name for spec in OPTIONS]
    assert sorted(set(names) - set(EFFECT_TESTS)) == [], "options without a behavioural test"
    assert sorted(set(EFFECT_TESTS) - set(names)) == [], "entries naming no option"
    assert all(EFFECT_TESTS[name] for name in names), "an entry needs at least one test"


@pytest.mark.parametrize("name", sorted(EFFECT_TESTS))
def test_each_effect_test_exists_and_mentions_its_option(name: str) -> None:
    spec = OPTIONS_BY_NAME.get(name)
    assert spec is not None, f"{name!r} is not an option"
    for node_id in EFFECT_TESTS[name]:
        found = find_test(node_id)
        assert found is not None, f"{name}: no test function {node_id}"
        source, node = found
        assert node.name.startswith("test"), f"{name}: {node_id} is not a test"
        assert mentions(spec, source, node), (
            f"{name}: {node_id} never mentions {spec.option}, {spec.ini}, {spec.env}"
            + (f", the config keys {', '.join(spec.yaml)}" if spec.yaml else "")
            + (f" or {spec.target.rsplit('.', 1)[-1]}=..." if spec.target else "")
        )


def test_the_checks_catch_a_wrong_entry() -> None:
    assert find_test(f"{OFFLINE}::test_no_such_test") is None
    assert find_test("tests/plugin/no_such_file.py::test_x") is None
    assert find_test("tests/plugin/test_extractor.py::test_a_bad_spec_is_a_usage_error_naming_it[myextract-x]")
    source, node = find_test(f"{OFFLINE}::test_per_sample_quality_bar")  # type: ignore[misc]
    assert mentions(OPTIONS_BY_NAME["sample_min_eqs"], source, node)
    assert not mentions(OPTIONS_BY_NAME["sample"], source, node)  # --extractbench-sample-min-eqs is another flag
    source, node = find_test(f"{OFFLINE}::test_named_prediction_files_make_several_models")  # type: ignore[misc]
    assert mentions(OPTIONS_BY_NAME["dataset"], source, node) == ["--extractbench-dataset"]  # "name": is no key path
    source, node = find_test(f"{OPTIONS_ACT}::test_config_keys_map_onto_them")  # type: ignore[misc]
    assert mentions(OPTIONS_BY_NAME["keep_whitespace"], source, node) == ["metrics.field_matching.normalize_whitespace"]
    source, node = find_test(f"{SCORE}::test_null_as_value_option")  # type: ignore[misc]
    assert mentions(OPTIONS_BY_NAME["null_as_value"], source, node) == ["null_equals_absent="]
    assert not mentions(OPTIONS_BY_NAME["lenient_types"], source, node)
