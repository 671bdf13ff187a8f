#!/usr/bin/env bash
# Runs the verifier benchmarks and prints, per state size, the cost of a
# full verification (parse, scope, phase, apply, schema, invariants) against
# a bare evanphx/json-patch apply of the same patch, and the cost of the
# static gates. Target (issue 2): verify/apply <= 3 at 1 MB; the static
# gates flat across sizes.
#
# Usage: scripts/bench-verify.sh [COUNT]   (default 5 runs per benchmark; medians printed)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-5}
out=$(go test -run XXX -bench 'BenchmarkVerify$|BenchmarkApplyBare|BenchmarkStaticGates' -benchmem -count "$count" ./runtime/)
echo "$out" | awk '
/^Benchmark/ {
  split($1, a, "/"); name = a[1]; size = a[2]; sub(/-[0-9]+$/, "", size)
  key = name SUBSEP size
  n[key]++; ns[key, n[key]] = $3
  for (i = 4; i <= NF; i++) { if ($(i+1) == "B/op") bop[key] = $i; if ($(i+1) == "allocs/op") al[key] = $i }
  sizes[size] = 1
}
function median(key,   i, j, t, m, v) {
  m = n[key]; for (i = 1; i <= m; i++) v[i] = ns[key, i]
  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
  return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
END {
  printf "%-6s %14s %12s %10s %14s %12s %10s %8s %14s\n", "size", "verify ns/op", "B/op", "allocs", "apply ns/op", "B/op", "allocs", "ratio", "static ns/op"
  split("10KB 1MB 10MB", order, " ")
  for (k = 1; k <= 3; k++) {
    s = order[k]; if (!(s in sizes)) continue
    v = median("BenchmarkVerify" SUBSEP s); ap = median("BenchmarkApplyBare" SUBSEP s); st = median("BenchmarkStaticGates" SUBSEP s)
    printf "%-6s %14.0f %12s %10s %14.0f %12s %10s %8.2f %14.1f\n", s, v, bop["BenchmarkVerify" SUBSEP s], al["BenchmarkVerify" SUBSEP s], ap, bop["BenchmarkApplyBare" SUBSEP s], al["BenchmarkApplyBare" SUBSEP s], v / ap, st
  }
}'
