#!/usr/bin/env bash
# The steps of ci/github-actions.yml, so the workflow and tests/ci/test_ci_example.py run the same commands.
#
#   extractbench-ci.sh install   install the pinned plugin and pytest-xdist (ci/requirements.txt)
#   extractbench-ci.sh main      benchmark, save the baseline, commit and push it (on the main branch)
#   extractbench-ci.sh pr        benchmark, gated on main's baseline when there is one (pull requests)
#   extractbench-ci.sh summary   say in the job summary when the run wrote no summary.md (the plugin appends it)
#   extractbench-ci.sh comment   post the run's summary.md as the pull request's one extractbench comment, or
#                                update it (found by its marker) on later pushes
#
# The plugin reads its inputs from EXTRACTBENCH_<OPTION> (the same as --extractbench-<option>: DATASET,
# PREDICTIONS, BASE_URL, MODEL, SLA...), set in the workflow. This script reads only:
#   EXTRACTBENCH_CI_BASELINE      the committed baseline (default ci/baselines/main.json)
#   EXTRACTBENCH_CI_COMPARE_FAIL  the regression gate, space-separated METRIC:MARGIN (default eqs:-0.02)
#   EXTRACTBENCH_CI_RESULTS       the run directory (default results)
#   EXTRACTBENCH_CI_REQUIREMENTS  the pinned requirements install reads (default ci/requirements.txt)
#   EXTRACTBENCH_CI_PR            the pull request's number (comment)
#   EXTRACTBENCH_BASE_URL         declared but empty (a repository variable a fork's pull request does not get):
#                                 the run stops with "no model server configured"
#   GITHUB_BASE_REF               a pull request's target branch, whose baseline is the one compared with
#   GITHUB_REPOSITORY, GH_TOKEN   where the comment goes, and the token gh posts it with
#   GITHUB_STEP_SUMMARY           the job summary (stdout when unset)
# and PYTHON (default python); PYTEST_ADDOPTS passes extra pytest options (e.g. -n auto).
set -euo pipefail

PYTHON="${PYTHON:-python}"
BASELINE="${EXTRACTBENCH_CI_BASELINE:-ci/baselines/main.json}"
COMPARE_FAIL="${EXTRACTBENCH_CI_COMPARE_FAIL:-eqs:-0.02}"
RESULTS="${EXTRACTBENCH_CI_RESULTS:-results}"
REQUIREMENTS="${EXTRACTBENCH_CI_REQUIREMENTS:-ci/requirements.txt}"
MARKER="<!-- extractbench -->"   # the first line of the pull request's one comment, how later runs find it
SUMMARY="${GITHUB_STEP_SUMMARY:-/dev/stdout}"
# Each step decides these itself (a pull request without a baseline must not get --extractbench-compare).
unset EXTRACTBENCH_SAVE EXTRACTBENCH_COMPARE EXTRACTBENCH_COMPARE_FAIL

note() { printf '%s\n\n' "$*" >>"$SUMMARY"; }

benchmark() { "$PYTHON" -m pytest --extractbench --extractbench-output "$RESULTS" "$@"; }

# A live run whose server URL is declared but empty: a pull request from a fork gets no repository variables or
# secrets. Without this check the plugin would start its embedded CPU model instead, which the CI install lacks.
require_server() {
    if [ "${EXTRACTBENCH_BASE_URL+set}" = set ] && [ -z "${EXTRACTBENCH_BASE_URL// /}" ] \
        && [ -z "${EXTRACTBENCH_PREDICTIONS:-}" ]; then
        message="no model server configured: EXTRACTBENCH_BASE_URL is empty (a pull request from a fork gets no \
repository variables or secrets; set the variable the workflow reads it from, or benchmark recorded predictions \
with EXTRACTBENCH_PREDICTIONS). Nothing was benchmarked."
        echo "extractbench: $message" >&2
        note "**Not benchmarked**: $message"
        exit 1
    fi
}

case "${1:-}" in
install)
    # Pinned (ci/requirements.txt): every run measures with the same scorer, and setup-python's pip cache keys on
    # that file. In the plugin's own repository the commit under test is installed instead of the pinned release.
    if grep -qE '^name *= *"pytest-extractbench"' pyproject.toml 2>/dev/null; then
        tools="$(mktemp)"
        grep -vE '^[[:space:]]*(#|$|pytest-extractbench)' "$REQUIREMENTS" >"$tools" || true
        "$PYTHON" -m pip install . -r "$tools"
        rm -f "$tools"
    elif ! "$PYTHON" -m pip install -r "$REQUIREMENTS"; then
        # pip's own message ("No matching distribution") does not say what to do when the pin is the template's
        plugin="$(grep -E '^[[:space:]]*pytest-extractbench' "$REQUIREMENTS" | head -n 1)"
        if [ -n "$plugin" ] && ! grep -qE '@|://' <<<"$plugin"; then
            echo "extractbench: pip could not install '$plugin' from $REQUIREMENTS: if your package index does \
not carry that release, replace the line with where you install the plugin from, keeping it pinned, e.g. \
pytest-extractbench @ git+https://github.com/<you>/pytest-extractbench@<commit>" >&2
            note "**Not installed**: pip could not install \`$plugin\` from \`$REQUIREMENTS\`; pin the plugin to where you \
install it from (see the comment in that file)."
        fi
        exit 1
    fi
    ;;
main)
    require_server
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
    require_server
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
    # In a job the plugin itself appends summary.md to $GITHUB_STEP_SUMMARY; this says when there is none.
    if [ ! -f "$RESULTS/summary.md" ]; then
        note "No $RESULTS/summary.md: the benchmark stopped before writing its reports (see the step's log)."
    elif [ -z "${GITHUB_STEP_SUMMARY:-}" ]; then
        cat "$RESULTS/summary.md"
    fi
    ;;
comment)
    if [ -z "${EXTRACTBENCH_CI_PR:-}" ] || [ -z "${GITHUB_REPOSITORY:-}" ]; then
        note "No pull request comment: not a pull request (EXTRACTBENCH_CI_PR or GITHUB_REPOSITORY unset)."
        exit 0
    fi
    if ! command -v gh >/dev/null; then
        note "No pull request comment: the GitHub CLI (gh) is not installed on this runner."
        exit 0
    fi
    body="$(mktemp)"
    {
        printf '%s\n' "$MARKER"
        if [ -f "$RESULTS/summary.md" ]; then
            cat "$RESULTS/summary.md"
        else
            printf '%s\n' "**No summary**: the benchmark stopped before writing its reports (see the job's log)."
        fi
        if [ -n "${GITHUB_RUN_ID:-}" ]; then
            printf '\n---\n%s\n' "Every sample and report.html: the \`extractbench-results\` artifact of \
${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID"
        fi
    } >"$body"
    comments="repos/$GITHUB_REPOSITORY/issues/$EXTRACTBENCH_CI_PR/comments"
    # the bot's earlier comment that starts with the marker (a person quoting it is not ours to edit)
    found="$(gh api --paginate "$comments?per_page=100" | "$PYTHON" -c 'import json, sys
text, marker = sys.stdin.read(), sys.argv[1]
decoder, found, at = json.JSONDecoder(), [], len(text) - len(text.lstrip())
while at < len(text):  # --paginate prints one JSON array per page
    page, at = decoder.raw_decode(text, at)
    at = len(text) - len(text[at:].lstrip())
    found += [c["id"] for c in page
              if str(c.get("body", "")).startswith(marker) and (c.get("user") or {}).get("type") == "Bot"]
print(found[0] if found else "")' "$MARKER")" || found="" posted=no
    if [ "${posted:-}" = no ]; then
        :
    elif [ -n "$found" ]; then
        gh api --silent -X PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$found" -F "body=@$body" && posted=updated
    else
        gh api --silent -X POST "$comments" -F "body=@$body" && posted=created
    fi
    rm -f "$body"
    case "${posted:-no}" in
    created | updated) note "Pull request comment $posted." ;;
    *) note "No pull request comment: GitHub refused it (a pull request from a fork gets a read-only token)." ;;
    esac
    ;;
*)
    echo "usage: $0 install|main|pr|summary|comment" >&2
    exit 2
    ;;
esac
