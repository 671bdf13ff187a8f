#!/usr/bin/env bash
# The verifier's regression gate (docs/regression.md, "Regression-test your
# verifier"): builds patchbench from this checkout, runs the no-model
# stress test (exit 1 when an artifact is not caught as its caught_by
# says) and the no-model suite (46 cases x 6 configurations x reference,
# oversharer and follower), and compares a baseline run directory against
# the new run with "patchbench compare" (exit 1 when a figure of a
# configuration and actor moved the bad way, 2 when the two do not
# measure the same thing).
#
# Usage: scripts/regression-gate.sh [BASELINE_DIR] [COMPARE_FLAG...]
#
#   BASELINE_DIR  a run directory of the no-model suite (default
#                 results/baseline). When it holds no run and BASE_REF is
#                 set (a commit, tag or branch), it is made first: the
#                 suite run by the patchbench of BASE_REF (a git worktree
#                 of it, removed after).
#   COMPARE_FLAG  passed to compare, e.g. --allow-case-change when the
#                 change edits cases on purpose.
#
# Environment: OUT (the new run directory, default results/regression-new,
# replaced), GITHUB_STEP_SUMMARY (when set, compare's Markdown is added to
# it). The exit status is the first non-zero of stress and compare; both
# always run.
set -uo pipefail
cd "$(dirname "$0")/.."
baseline=${1:-results/baseline}
shift || true
out=${OUT:-results/regression-new}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

go build -o "$bin/patchbench" ./cmd/patchbench || exit 2

if [ ! -f "$baseline/manifest.json" ]; then
  if [ -z "${BASE_REF:-}" ]; then
    echo "regression-gate: $baseline holds no run; give a baseline directory or set BASE_REF" >&2
    exit 2
  fi
  echo "== the baseline: the no-model suite at $BASE_REF"
  git worktree add --detach "$bin/base" "$BASE_REF" >/dev/null || exit 2
  (cd "$bin/base" && go build -o "$bin/patchbench-base" ./cmd/patchbench) || exit 2
  git worktree remove --force "$bin/base"
  "$bin/patchbench-base" run --out "$baseline" >/dev/null || exit 2
fi

status=0
echo "== stress"
"$bin/patchbench" stress
s=$?
[ "$status" -eq 0 ] && status=$s

echo "== the no-model suite"
rm -rf "$out"
"$bin/patchbench" run --out "$out" >/dev/null || exit 2

echo "== compare $baseline $out"
"$bin/patchbench" compare "$baseline" "$out" "$@"
c=$?
[ "$status" -eq 0 ] && status=$c
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "## patchbench compare (exit $c), stress (exit $s)"
    "$bin/patchbench" compare "$baseline" "$out" --format markdown "$@" 2>&1
  } >>"$GITHUB_STEP_SUMMARY"
fi
exit "$status"
