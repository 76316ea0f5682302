#!/usr/bin/env bash
# Steps of the fluxgraph GitHub Action (action.yml). Kept in a script so that it can be
# tested locally: tests/test_action.py runs it with GITHUB_OUTPUT/GITHUB_STEP_SUMMARY set.
#   github-action.sh check   runs fluxgraph check; writes annotations, SARIF and a summary
#   github-action.sh graph   writes what the pull request changes (fluxgraph diff against the merge
#                            base: annotations, the Markdown review with its Mermaid graph, the comment)
#   github-action.sh fix     runs fluxgraph fix in diff mode; writes the diff to the log and summary
set -uo pipefail
step="${1:?usage: github-action.sh check|graph|fix}"
path="${FG_PATH:-.}"
out_dir="${RUNNER_TEMP:-$(mktemp -d)}"
: "${GITHUB_OUTPUT:=/dev/null}" "${GITHUB_STEP_SUMMARY:=/dev/null}"

case "$step" in
  check)
    sarif="$out_dir/fluxgraph.sarif"
    # shellcheck disable=SC2086  # FG_ARGS is a list of arguments by design
    fluxgraph check "$path" ${FG_ARGS:-} \
      --format github --output "$out_dir/annotations.txt" \
      --format sarif --output "$sarif" \
      --format text --output "$out_dir/report.txt"
    rc=$?
    if [ "$rc" -le 1 ]; then
      cat "$out_dir/annotations.txt"
      {
        echo "### fluxgraph check"
        echo '```'
        cat "$out_dir/report.txt"
        echo '```'
      } >> "$GITHUB_STEP_SUMMARY"
      echo "sarif=$sarif" >> "$GITHUB_OUTPUT"
    fi
    echo "exit-code=$rc" >> "$GITHUB_OUTPUT"
    exit 0  # the action's last step fails the job from exit-code, after SARIF is uploaded
    ;;
  graph)
    base="${FG_BASE:?FG_BASE (the pull request base commit) is required}"
    # the pull request is what its head adds to the merge base with the base branch (a base
    # branch that moved on is not part of the change); a shallow clone without the merge base
    # falls back to the base commit itself
    merge=(--merge-base)
    fluxgraph diff --base "$base" --merge-base "$path" --format github > "$out_dir/diff-annotations.txt" 2> "$out_dir/diff.err"
    rc=$?
    if [ "$rc" -ge 2 ] && grep -q "no common ancestor" "$out_dir/diff.err"; then
      merge=()
      fluxgraph diff --base "$base" "$path" --format github > "$out_dir/diff-annotations.txt" 2> "$out_dir/diff.err"
      rc=$?
    fi
    if [ "$rc" -ge 2 ]; then
      cat "$out_dir/diff.err" >&2
      echo "fluxgraph diff failed (exit $rc)" >&2
      exit 0
    fi
    cat "$out_dir/diff-annotations.txt"
    # the Markdown review carries the Mermaid graph of the changed part
    fluxgraph diff --base "$base" "${merge[@]}" "$path" --format markdown > "$out_dir/comment.md"
    cat "$out_dir/comment.md" >> "$GITHUB_STEP_SUMMARY"
    echo "comment=$out_dir/comment.md" >> "$GITHUB_OUTPUT"
    # post it on the pull request when a number and a token are given (needs pull-requests: write)
    if [ -n "${PR_NUMBER:-}" ] && [ -n "${GH_TOKEN:-}" ] && command -v gh >/dev/null 2>&1; then
      # one comment per pull request, updated on every push
      gh pr comment "$PR_NUMBER" --edit-last --body-file "$out_dir/comment.md" 2>/dev/null \
        || gh pr comment "$PR_NUMBER" --body-file "$out_dir/comment.md" \
        || echo "could not comment on the pull request" >&2
    fi
    ;;
  fix)
    # diff mode only: nothing in the checkout is written
    fluxgraph fix "$path" > "$out_dir/fix.diff" 2> "$out_dir/fix.log"
    rc=$?
    cat "$out_dir/fix.log" >&2
    if [ "$rc" -eq 1 ]; then
      cat "$out_dir/fix.diff"
      {
        echo "### fluxgraph fix"
        echo
        echo "\`fluxgraph fix --write\` would make these changes:"
        echo
        echo '```diff'
        cat "$out_dir/fix.diff"
        echo '```'
      } >> "$GITHUB_STEP_SUMMARY"
      echo "fix-diff=$out_dir/fix.diff" >> "$GITHUB_OUTPUT"
    fi
    echo "fix-exit-code=$rc" >> "$GITHUB_OUTPUT"
    exit 0  # reported, not a failure of the job: check's findings decide that
    ;;
  *)
    echo "unknown step: $step" >&2
    exit 2
    ;;
esac
