#!/usr/bin/env bash
# Runs the verifier benchmarks and prints, per state size, the cost of a
# full verification (parse, scope, phase, apply, schema, invariants) against
# a bare evanphx/json-patch apply of the same patch, and the cost of the
# static gates. Target: verify/apply <= 3 at 1 MB; the static
# gates flat across sizes.
#
# The statistics are benchstat's (golang.org/x/perf/cmd/benchstat, run
# with go run at the version below): its table of medians with 95 %
# confidence intervals per benchmark and size (6 runs or more give an
# interval), then the same medians as one line per size with the
# verify/apply ratio.
#
# Usage: scripts/bench-verify.sh [COUNT]   (default 5 runs per benchmark; medians printed)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-5}
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The sizes become a named key (size=10KB) that benchstat can put in rows
# (the rows are then labelled 10KB, 1MB, 10MB).
go test -run XXX -bench 'BenchmarkVerify$|BenchmarkApplyBare|BenchmarkStaticGates' -benchmem -count "$count" ./runtime/ |
  sed -E 's#^(Benchmark[A-Za-z]+)/([0-9]+[KM]B)#\1/size=\2#' >"$tmp/bench.txt"

# One row per benchmark and size; run in $tmp, the column is named bench.txt.
(cd "$tmp" && $benchstat -row '.name /size' bench.txt)
echo

# benchstat's CSV: one block per unit; the first line names each
# benchmark's column, the second the unit, then a row per size.
$benchstat -format csv -col .name -row /size "$tmp/bench.txt" 2>/dev/null | awk -F, '
!/,/ { block = 0; next }
{ block++ }
block == 1 { for (i = 2; i <= NF; i++) name[i] = $i; next }
block == 2 { for (i = 2; i <= NF; i++) unit[i] = $i; next }
$1 ~ /^[0-9]+[KM]B$/ {
  s = $1; sizes[s] = 1
  for (i = 2; i <= NF; i++) if (name[i] != "") v[name[i], unit[i], s] = $i
}
END {
  printf "%-6s %14s %12s %10s %14s %12s %10s %8s %14s\n", "size", "verify ns/op", "B/op", "allocs", "apply ns/op", "B/op", "allocs", "ratio", "static ns/op"
  split("10KB 1MB 10MB", order, " ")
  for (k = 1; k <= 3; k++) {
    s = order[k]; if (!(s in sizes)) continue
    ver = v["Verify", "sec/op", s] * 1e9; ap = v["ApplyBare", "sec/op", s] * 1e9; st = v["StaticGates", "sec/op", s] * 1e9
    printf "%-6s %14.0f %12.0f %10.0f %14.0f %12.0f %10.0f %8.2f %14.1f\n", s, ver, v["Verify", "B/op", s], v["Verify", "allocs/op", s], ap, v["ApplyBare", "B/op", s], v["ApplyBare", "allocs/op", s], ver / ap, st
  }
}'
