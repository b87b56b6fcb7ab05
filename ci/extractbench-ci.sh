#!/usr/bin/env bash
# The steps of ci/github-actions.yml, so the workflow and tests/ci/test_ci_example.py run the same commands.
#
#   extractbench-ci.sh install   install the plugin and pytest-xdist
#   extractbench-ci.sh main      benchmark, save the baseline, commit and push it (on the main branch)
#   extractbench-ci.sh pr        benchmark, gated on main's baseline when there is one (pull requests)
#   extractbench-ci.sh summary   append the run's summary.md to the job summary
#
# The plugin reads its inputs from EXTRACTBENCH_<OPTION> (the same as --extractbench-<option>: DATASET,
# PREDICTIONS, BASE_URL, MODEL, SLA...), set in the workflow. This script reads only:
#   EXTRACTBENCH_CI_BASELINE      the committed baseline (default ci/baselines/main.json)
#   EXTRACTBENCH_CI_COMPARE_FAIL  the regression gate, space-separated METRIC:MARGIN (default eqs:-0.02)
#   EXTRACTBENCH_CI_RESULTS       the run directory (default results)
#   GITHUB_BASE_REF               a pull request's target branch, whose baseline is the one compared with
#   GITHUB_STEP_SUMMARY           the job summary (stdout when unset)
# and PYTHON (default python); PYTEST_ADDOPTS passes extra pytest options (e.g. -n auto).
set -euo pipefail

PYTHON="${PYTHON:-python}"
BASELINE="${EXTRACTBENCH_CI_BASELINE:-ci/baselines/main.json}"
COMPARE_FAIL="${EXTRACTBENCH_CI_COMPARE_FAIL:-eqs:-0.02}"
RESULTS="${EXTRACTBENCH_CI_RESULTS:-results}"
SUMMARY="${GITHUB_STEP_SUMMARY:-/dev/stdout}"
# Each step decides these itself (a pull request without a baseline must not get --extractbench-compare).
unset EXTRACTBENCH_SAVE EXTRACTBENCH_COMPARE EXTRACTBENCH_COMPARE_FAIL

note() { printf '%s\n\n' "$*" >>"$SUMMARY"; }

benchmark() { "$PYTHON" -m pytest --extractbench --extractbench-output "$RESULTS" "$@"; }

case "${1:-}" in
install)
    # OWNER: the repository you install the plugin from. Recorded predictions and a remote server need no
    # extra; add the ones your run uses, e.g. "pytest-extractbench[local] @ ..." for the embedded CPU server.
    "$PYTHON" -m pip install "pytest-extractbench @ git+https://github.com/OWNER/pytest-extractbench" pytest-xdist
    ;;
main)
    rc=0
    benchmark --extractbench-save main || rc=$?
    # Saved even when the SLA gate failed (exit code 1): pull requests compare with main as it is.
    saved="$("$PYTHON" -c 'import json, sys
try:
    print(json.load(open(sys.argv[1]))["baseline_saved"]["path"])
except (OSError, ValueError, KeyError):
    pass' "$RESULTS/metrics.json")"
    if [ -z "$saved" ]; then
        note "**No baseline saved**: the benchmark stopped before the end (exit code $rc)."
        exit "$rc"
    fi
    # A new commit only when the scores changed (the file also records its date and commit).
    if [ -f "$BASELINE" ] && "$PYTHON" -c 'import json, sys
old, new = (json.load(open(path))["models"] for path in sys.argv[1:])
sys.exit(old != new)' "$BASELINE" "$saved"; then
        note "Baseline \`$BASELINE\` kept: the scores are the same as the committed ones."
        exit "$rc"
    fi
    mkdir -p "$(dirname "$BASELINE")"
    cp "$saved" "$BASELINE"
    git add "$BASELINE"
    identity=()
    git config user.email >/dev/null || identity=(-c user.name="github-actions[bot]" \
        -c user.email="41898282+github-actions[bot]@users.noreply.github.com")
    git_committer() { git ${identity[@]+"${identity[@]}"} "$@"; }
    # [skip ci]: the baseline commit itself needs no benchmark.
    git_committer commit --quiet -m "extractbench: baseline of $(git rev-parse --short HEAD) [skip ci]"
    branch="${GITHUB_REF_NAME:-$(git rev-parse --abbrev-ref HEAD)}"
    # One retry when the branch moved during the run.
    git push --quiet origin "HEAD:$branch" || {
        git_committer pull --quiet --rebase origin "$branch" && git push --quiet origin "HEAD:$branch"
    }
    note "Baseline \`$BASELINE\` saved and committed ($(git rev-parse --short HEAD))."
    exit "$rc"
    ;;
pr)
    # The target branch's baseline, not the pull request's copy: a change cannot move its own yardstick.
    found="" tmp="$(mktemp -d)"
    if [ -n "${GITHUB_BASE_REF:-}" ]; then
        git fetch --quiet --no-tags --depth=1 origin "$GITHUB_BASE_REF"
        if git cat-file -e "FETCH_HEAD:$BASELINE" 2>/dev/null; then
            git show "FETCH_HEAD:$BASELINE" >"$tmp/baseline.json"
            found="$tmp/baseline.json"
        fi
    elif [ -f "$BASELINE" ]; then
        found="$BASELINE"
    fi
    args=()
    if [ -n "$found" ]; then
        args=(--extractbench-compare "$found")
        for gate in $COMPARE_FAIL; do args+=(--extractbench-compare-fail "$gate"); done
        note "Compared with the baseline \`$BASELINE\` of ${GITHUB_BASE_REF:-this checkout}; the gate" \
            "($COMPARE_FAIL) fails on a drop beyond the margin that is also significant."
    else
        # Without this check --extractbench-compare would stop the run (exit code 4) until main has run once.
        note "**No baseline yet** (\`$BASELINE\` is not on ${GITHUB_BASE_REF:-this checkout}): not checked" \
            "for regressions. The next run on main saves one."
    fi
    rc=0
    benchmark ${args[@]+"${args[@]}"} || rc=$?
    rm -rf "$tmp"
    exit "$rc"
    ;;
summary)
    if [ -f "$RESULTS/summary.md" ]; then
        cat "$RESULTS/summary.md" >>"$SUMMARY"
    else
        note "No $RESULTS/summary.md: the benchmark stopped before writing its reports (see the step's log)."
    fi
    ;;
*)
    echo "usage: $0 install|main|pr|summary" >&2
    exit 2
    ;;
esac
