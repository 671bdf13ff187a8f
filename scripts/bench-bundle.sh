#!/usr/bin/env bash
# Measures report --format html (the single file) on a run directory, as
# a user meets it: the file's size, the time to write it (wall and CPU,
# the median of TRIALS), and how fast headless Chromium shows it (first
# contentful paint, DOMContentLoaded, load, and the first run page drawn:
# browse's TestBrowserBundlePaint on the file). With BASE=REV, the same
# figures for the binary of that git revision, side by side.
# Targets, for the default run (patchbench run: 828 runs):
# at most 8 MB and 1.5 s to write, first paint within 1 s; a 20-round
# directory at most 40 MB. Wall times depend on the machine's load, which
# is printed beside them.
#
# Usage: scripts/bench-bundle.sh [RUN_DIR] [TRIALS]
#   (default: a fresh default run in a temporary directory; 3 trials)
#   BASE=7d9a5ed scripts/bench-bundle.sh   also measures that revision
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
wt=
cleanup() {
  if [ -n "$wt" ]; then git worktree remove --force "$wt" >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/new" ./cmd/patchbench
dir=${1:-}
if [ -z "$dir" ]; then
  dir="$tmp/run"
  "$tmp/new" run --out "$dir" >/dev/null 2>&1
fi
trials=${2:-3}
bins=(new)
if [ -n "${BASE:-}" ]; then
  wt="$tmp/base"
  git worktree add --detach "$wt" "$BASE" >/dev/null 2>&1
  (cd "$wt" && go build -o "$tmp/base-bin" ./cmd/patchbench)
  bins=(base new)
fi
echo "directory: $dir ($(wc -l <"$dir/runs.jsonl") runs)"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %12s %10s %10s  %s\n' binary bytes "wall s" "cpu s" "chromium (ms)"
for b in "${bins[@]}"; do
  bin="$tmp/new"
  [ "$b" = base ] && bin="$tmp/base-bin"
  walls=() cpus=()
  for ((i = 0; i < trials; i++)); do
    /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$bin" report "$dir" --format html >"$tmp/$b.html" 2>/dev/null
    read -r wall user sys <"$tmp/time"
    walls+=("$wall")
    cpus+=("$(echo "$user + $sys" | bc)")
  done
  wall=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(((trials + 1) / 2))p")
  cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(((trials + 1) / 2))p")
  paint=$(PATCHBENCH_BUNDLE_FILE="$tmp/$b.html" go test ./browse -run '^TestBrowserBundlePaint$' -count 1 -v 2>&1 |
    sed -n 's/.*bytes; //p' | head -1)
  printf '%-5s %12s %10s %10s  %s\n' "$b" "$(stat -c %s "$tmp/$b.html")" "$wall" "$cpu" "${paint:-not measured (no Chromium?)}"
done
