#!/usr/bin/env bash
# Measures of how the module reads, at an earlier commit and now, side
# by side: the shapes of a run's settings, what one setting and one tool
# touch, the switches over actor types, references to documents not in
# the tree, the functions no binary reaches (golang.org/x/tools/cmd/
# deadcode, fetched through the Go module proxy at a pinned version),
# the pairs of repeated lines in the non-test Go code (when the
# `duplicates` command is on PATH) and, with --times, the wall time of
# the whole test suite and of its inner loop (go test -short), warm.
# Then, for the working tree alone: lines per package, the arrows
# between the module's packages and the longest functions.
#
# Usage: scripts/house.sh [--base REV] [--times] [--longest N]
#   --base REV  the earlier commit (default 31abd37: before the run
#               settings, the tools and the providers each had one
#               definition)
#   --times     also time `go test -count=1 ./...` and
#               `go test -short -count=1 ./...` in both trees, twice each
#               (about 8 minutes on two cores)
# Example: scripts/house.sh --base HEAD~10 --times
set -euo pipefail
cd "$(dirname "$0")/.."
base=31abd37 times=0 longest=15
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base=$2; shift 2 ;;
    --times) times=1; shift ;;
    --longest) longest=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "house.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
git rev-parse --verify -q "$base^{commit}" >/dev/null || { echo "house.sh: no commit $base in this clone (a shallow clone lacks it: git fetch --unshallow)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/base" "$base"
label=$(git rev-parse --short "$base")

go run ./scripts/house -before "$tmp/base" -label "$label"

deadcount() { # the count of functions no binary of the tree at $1 reaches
  (cd "$1" && go run golang.org/x/tools/cmd/deadcode@v0.53.0 ./... 2>/dev/null | grep -c . || true)
}
printf '%-48s %10s %10s\n' "functions no binary reaches (deadcode)" "$(deadcount "$tmp/base")" "$(deadcount .)"

if command -v duplicates >/dev/null; then
  dupcount() { # pairs of repeated lines in the non-test Go code of the tree at $1
    local d="$tmp/dup.$2"
    mkdir -p "$d"
    (cd "$1" && git ls-files -co --exclude-standard '*.go' | grep -v '_test\.go$' | grep -v '/testdata/' |
      while read -r f; do [ -f "$f" ] && mkdir -p "$d/$(dirname "$f")" && cp "$f" "$d/$f"; done)
    (cd "$d" && duplicates --seconds 120 | head -1 | grep -oE '^[0-9]+|^no duplicates' | sed 's/no duplicates/0/')
  }
  printf '%-48s %10s %10s\n' "repeated-line pairs, non-test Go (duplicates)" "$(dupcount "$tmp/base" base)" "$(dupcount . now)"
fi

if [ "$times" = 1 ]; then
  # Both trees' tests read the same suites and SDK: the conformance
  # suites found beside this checkout, and its MCP TypeScript SDK.
  for d in .conformance ../shared/conformance; do
    [ -d "$d" ] && export PATCHBENCH_CONFORMANCE="$(cd "$d" && pwd)"
  done
  [ -d .mcp-ts ] && ln -s "$PWD/.mcp-ts" "$tmp/base/.mcp-ts"
  walltime() { # seconds of wall time of go test $2 in the tree at $1, warm
    (cd "$1" && go test $2 ./... >/dev/null 2>&1 || true  # warm the build cache
     s=$(date +%s.%N); go test -count=1 $2 ./... >/dev/null 2>&1 || echo "  (go test $2 failed in $1)" >&2
     awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')
  }
  for run in 1 2; do
    printf '%-48s %9ss %9ss\n' "go test ./... wall time, run $run" "$(walltime "$tmp/base" '')" "$(walltime . '')"
    printf '%-48s %9ss %9ss\n' "go test -short ./... wall time, run $run" "$(walltime "$tmp/base" -short)" "$(walltime . -short)"
  done
fi

echo
go run ./scripts/house -longest "$longest"
