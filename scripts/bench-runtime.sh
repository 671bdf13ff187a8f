#!/usr/bin/env bash
# What one step of the runtime costs, before and after, paired.
#
# Builds the runtime's benchmarks (runtime/bench_runtime_test.go, which uses
# only what every revision has, plus a per-stage benchmark written for each
# revision; the session benchmark, bench_session_test.go, exists only after
# the base, so its row has no "before") at a base revision and at the
# working tree, runs the two builds
# alternately, ROUNDS rounds of one run of every benchmark each, on the
# states of 6.0 KB, 0.6 MB and 6.0 MB of JSON, and prints:
#
#   - the issue's table: per row and size, the median before, the median
#     after and the median of the paired ratios after/before (a pair is the
#     two builds' results in the same round);
#   - the targets: a step with its new text at 6 MB, verify / bare apply at
#     every size, the static gates' allocations, B/op at 6 MB / at 0.6 MB;
#   - benchstat's comparison of all the results.
#
# Usage: scripts/bench-runtime.sh [BASE_REV] [ROUNDS] [BENCHTIME]
#        (defaults: 955b714, 5 rounds, 300ms per benchmark and run)
# A run takes about 4 minutes on a 2-core machine with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-955b714}
rounds=${2:-5}
benchtime=${3:-300ms}
benchstat="golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base"
git archive "$base" | tar -x -C "$tmp/base"
cp runtime/bench_runtime_test.go "$tmp/base/runtime/"

# The per-stage benchmark of the base revision: its whole-document
# pipeline, stage by stage, under the names the working tree's
# bench_stages_test.go gives the same stages of its footprint path.
cat > "$tmp/base/runtime/bench_stages_test.go" <<'GO'
package runtime

import (
	"context"
	"testing"
)

func BenchmarkRuntimeStages(b *testing.B) {
	c := MustCompile(benchSpec)
	p, err := DecodeProposal([]byte(benchPatch), 0)
	if err != nil {
		b.Fatal(err)
	}
	ops := p.Patch
	ctx := context.Background()
	for i, doc := range runtimeStates(b) {
		post, t, err := simulate(ctx, doc.value, ops, c.limits.MaxCopyBytes)
		if err != nil {
			b.Fatal(err)
		}
		raw, err := applyLibrary(doc.raw, ops, t.roots, c.limits)
		if err != nil {
			b.Fatal(err)
		}
		got, err := decodeFast(raw)
		if err != nil {
			b.Fatal(err)
		}
		fp := t.footprint()
		b.Run(runtimeStageName("reference", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				simulate(ctx, doc.value, ops, c.limits.MaxCopyBytes)
			}
		})
		b.Run(runtimeStageName("library", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				applyLibrary(doc.raw, ops, t.roots, c.limits)
			}
		})
		b.Run(runtimeStageName("decode", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decodeFast(raw)
			}
		})
		b.Run(runtimeStageName("crosscheck", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				crossCheck(post, got, DefaultMaxDepth)
			}
		})
		b.Run(runtimeStageName("schema", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.schemaGate(doc.value, got, ops, t, &fp)
			}
		})
		b.Run(runtimeStageName("invariants", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.invariantGate(ctx, ctx, doc.value, got, "review")
			}
		})
	}
}
GO

echo "building the benchmarks at $base and at the working tree" >&2
(cd "$tmp/base" && go test -c -o "$tmp/base.test" ./runtime)
go test -c -o "$tmp/new.test" ./runtime

run() { # build round
	(cd runtime && "$tmp/$1.test" -test.run '^$' -test.bench '^BenchmarkRuntime' -test.benchmem \
		-test.benchtime "$benchtime" -test.count 1) |
		grep '^Benchmark' | tee -a "$tmp/$1.txt" | sed "s/^/$1 $2 /" >>"$tmp/paired.txt"
}
for r in $(seq 1 "$rounds"); do
	echo "round $r of $rounds" >&2
	if ((r % 2)); then run base "$r"; run new "$r"; else run new "$r"; run base "$r"; fi
done

awk '
function med(list,   n, v, i, j, t) {
	n = split(list, v, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
	if (n == 0) return ""
	return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function human(ns) {
	if (ns == "") return "-"
	if (ns >= 1e6) return sprintf("%.1f ms", ns / 1e6)
	if (ns >= 1e3) return sprintf("%.1f µs", ns / 1e3)
	return sprintf("%.0f ns", ns)
}
function count(a) {
	return a == "" ? "-" : sprintf("%d", a)
}
function bytes(b) {
	if (b == "") return "-"
	if (b >= 1048576) return sprintf("%.1f MiB", b / 1048576)
	if (b >= 1024) return sprintf("%.1f KiB", b / 1024)
	return sprintf("%d B", b)
}
{
	build = $1; round = $2; name = $3; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkRuntime/, "", name)
	for (i = 4; i <= NF; i++) {
		if ($(i + 1) == "ns/op") ns[build, name, round] = $i
		if ($(i + 1) == "B/op") bop[build, name, round] = $i
		if ($(i + 1) == "allocs/op") al[build, name, round] = $i
	}
	names[name] = 1; rounds[round] = 1
}
function stat(build, name, what,   r, l) {
	l = ""
	for (r in rounds) if ((build, name, r) in ns) l = l " " (what == "ns" ? ns[build, name, r] : what == "b" ? bop[build, name, r] : al[build, name, r])
	return med(l)
}
function ratio(name,   r, l) {
	l = ""
	for (r in rounds) if (("base", name, r) in ns && ("new", name, r) in ns) l = l " " ns["new", name, r] / ns["base", name, r]
	return med(l)
}
function row(label, bench,   k, s, n, b, a, q, line) {
	line = sprintf("| %-44s", label)
	for (k = 1; k <= 3; k++) {
		s = size[k]; n = bench "/" s
		b = stat("base", n, "ns"); a = stat("new", n, "ns"); q = ratio(n)
		line = line sprintf(" | %9s → %-9s %8s", human(b), human(a), q == "" ? "" : sprintf("(×%.4g)", q))
	}
	print line " |"
}
END {
	size[1] = "6KB"; size[2] = "0.6MB"; size[3] = "6MB"
	print "## Issue 15: one step, before (" BASE ") → after (working tree), medians, (× median paired ratio after/before)\n"
	printf "| %-44s | %-38s | %-38s | %-38s |\n", "stage", "6 KB", "0.6 MB", "6 MB"
	print "|---|---|---|---|"
	row("full verify (4 gates, commits)", "Verify")
	row("full verify + the new state'"'"'s text", "VerifyCommit")
	row("a copy of the state'"'"'s text (floor of a new text)", "TextCopy")
	row("first verify on a fresh state", "VerifyFirst")
	row("a chain step (verify the last commit)", "Chain")
	row("a session step + phase move (after only)", "SessionStep")
	row("bare evanphx apply of the same patch", "ApplyBare")
	row("evanphx inside verify", "Stages/library")
	row("decode of the library'"'"'s output", "Stages/decode")
	row("cross-check (whole / at the foci)", "Stages/crosscheck")
	row("schema gate (whole / incremental)", "Stages/schema")
	row("reference semantics (whole / foci)", "Stages/reference")
	row("invariants", "Stages/invariants")
	row("ParseDocument of the state", "Parse")
	row("scope and phase gates", "StaticGates")
	line = sprintf("| %-44s", "verify / bare apply")
	for (k = 1; k <= 3; k++) {
		s = size[k]
		line = line sprintf(" | %9.3g → %-9.3g %8s", stat("base", "Verify/" s, "ns") / stat("base", "ApplyBare/" s, "ns"), stat("new", "Verify/" s, "ns") / stat("new", "ApplyBare/" s, "ns"), "")
	}
	print line " |"
	print "\n## Memory per step (B/op, allocs/op; before → after)\n"
	printf "| %-28s | %-30s | %-30s | %-30s |\n", "benchmark", "6 KB", "0.6 MB", "6 MB"
	print "|---|---|---|---|"
	split("Verify VerifyCommit Chain SessionStep ApplyBare StaticGates", bl, " ")
	for (j = 1; j <= 6; j++) {
		line = sprintf("| %-28s", bl[j])
		for (k = 1; k <= 3; k++) {
			n = bl[j] "/" size[k]
			line = line sprintf(" | %9s → %-9s %4s→%-4s", bytes(stat("base", n, "b")), bytes(stat("new", n, "b")), count(stat("base", n, "a")), count(stat("new", n, "a")))
		}
		print line " |"
	}
	print "\n## Targets (working tree)\n"
	v6 = stat("new", "VerifyCommit/6MB", "ns")
	printf "- a 5-op step at 6 MB, all four gates, committed, new text built: %s (target ≤ 5 ms): %s; a bare copy of the 6 MB text costs %s here\n", human(v6), v6 <= 5e6 ? "met" : "NOT met", human(stat("new", "TextCopy/6MB", "ns"))
	for (k = 1; k <= 3; k++) {
		q = stat("new", "Verify/" size[k], "ns") / stat("new", "ApplyBare/" size[k], "ns")
		printf "- verify / bare apply at %s: %.3g (target ≤ 1.5): %s\n", size[k], q, q <= 1.5 ? "met" : "NOT met"
	}
	for (k = 1; k <= 3; k++) {
		a = stat("new", "StaticGates/" size[k], "a")
		printf "- scope and phase gates at %s: %s, %d allocs/op (target 0): %s\n", size[k], human(stat("new", "StaticGates/" size[k], "ns")), a, a == 0 ? "met" : "NOT met"
	}
	q = stat("new", "Verify/6MB", "b") / stat("new", "Verify/0.6MB", "b")
	printf "- B/op of a verify at 6 MB / at 0.6 MB: %s / %s = %.3g (target ≤ 2): %s\n", bytes(stat("new", "Verify/6MB", "b")), bytes(stat("new", "Verify/0.6MB", "b")), q, q <= 2 ? "met" : "NOT met"
}' BASE="$base" "$tmp/paired.txt"

echo
echo "## benchstat (base = $base, new = working tree)"
echo
(cd "$tmp" && go run "$benchstat" base=base.txt new=new.txt) 2>/dev/null || echo "(benchstat unavailable)"
