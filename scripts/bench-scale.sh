#!/usr/bin/env bash
# Speed and memory at scale (docs/scale.md, "Figures measured"): figures
# a-f, each beside its target, in one table.
#
#   a. growing a state: scalebench grow (mkt-crm-segment-export to 10 MB,
#      3 rounds; the median's MB/s, and whether every round gave the
#      same bytes);
#   b. a grown state generated once per case and shared read-only by its
#      runs: the runner's test TestGrownStateSharedByRuns;
#   c. the no-model suite in the tools protocol at --scale 10MB:
#      `patchbench run --protocol tools --scale 10MB` (828 runs), under
#      /usr/bin/time -v (wall, CPU, peak RSS);
#   d. the navigation tools on a state of 100,000 records of about 1 KB
#      (100 MB), parsed from its text: a read_state page, a query_state
#      filter that selects 1 % of the records, a search_state, and a
#      step's verification (medians of ROUNDS; scripts/scalebench tools);
#   e. the text of the state that verification committed, beside a copy
#      of the text (the same run);
#   f. the filter of d answered from the same text, parse included, by
#      query_state (scalebench query) and by gojq (scripts/peers/gojq,
#      built in its own module in a temporary directory, from the Go
#      module proxy), in turn, three rounds each (the medians); the
#      table says whether their ids are the same.
#
# Usage: scripts/bench-scale.sh [--quick] [ROUNDS]
#   --quick: d-f on 10,000 records (10 MB), c on one case
#   (mkt-crm-segment-export, 18 runs), a in one round: a check in about
#   a minute. ROUNDS (default 5) are d's and e's rounds.
# The load average is printed before and after: on a shared machine,
# read the CPU times and the ratios, which come from the same process.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
if [ "${1:-}" = --quick ]; then
	quick=true
	shift
fi
rounds=${1:-5}
export GOWORK=off

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

records=100000
grow_rounds=3
suite=()
if $quick; then
	records=10000
	grow_rounds=1
	suite=(--case mkt-crm-segment-export)
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "building patchbench, scalebench and the gojq peer" >&2
go build -o "$tmp/patchbench" ./cmd/patchbench
go build -o "$tmp/scalebench" ./scripts/scalebench
cp -r scripts/peers/gojq "$tmp/gojq"
(cd "$tmp/gojq" && go build -o "$tmp/gojq-peer" .)
figures=$tmp/figures.jsonl

echo "a: growing a state" >&2
"$tmp/scalebench" grow mkt-crm-segment-export 10MB "$grow_rounds" >>"$figures"

echo "b: the grown state shared by the runs (go test ./runner)" >&2
if go test -count=1 -run '^TestGrownStateSharedByRuns$' ./runner/ >"$tmp/b.out" 2>&1; then
	echo '{"stack":"shared","ok":true,"test":"TestGrownStateSharedByRuns"}' >>"$figures"
else
	cat "$tmp/b.out" >&2
	echo '{"stack":"shared","ok":false,"test":"TestGrownStateSharedByRuns"}' >>"$figures"
fi

echo "c: the no-model suite at --scale 10MB in the tools protocol" >&2
/usr/bin/time -v "$tmp/patchbench" run --protocol tools --scale 10MB --progress 0 --out "$tmp/suite" "${suite[@]}" >/dev/null 2>"$tmp/time.txt" || {
	cat "$tmp/time.txt" >&2
	exit 1
}
runs=$(grep -c . "$tmp/suite/runs.jsonl")
awk -v runs="$runs" -F': ' '
	/User time/ {u=$2} /System time/ {s=$2} /Maximum resident/ {r=$2}
	/Elapsed \(wall clock\)/ {n=split($2, p, ":"); w=0; for (i=1; i<=n; i++) w=w*60+p[i]}
	END {printf "{\"stack\":\"suite\",\"runs\":%d,\"scale\":\"10MB\",\"wall_s\":%.1f,\"cpu_s\":%.1f,\"rss_mb\":%.0f}\n", runs, w, u+s, r/1024}' "$tmp/time.txt" >>"$figures"
rm -rf "$tmp/suite"

echo "d-f: a state of $records records" >&2
"$tmp/scalebench" write "$tmp/state.json" "$records"
"$tmp/scalebench" tools "$tmp/state.json" "$rounds" >>"$figures"
for _ in 1 2 3; do # in turn, three rounds each: the table takes the medians
	"$tmp/scalebench" query "$tmp/state.json" >>"$figures"
	"$tmp/gojq-peer" "$tmp/state.json" >>"$figures"
done

echo "## Speed and memory at scale"
echo
echo "Load average (1, 5, 15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores.$($quick && echo ' Quick mode: c on one case, d-f at 10 MB.')"
echo
echo "met: judged on CPU time (c: CPU time over the cores; f: the wall times' medians), which other processes' load changes less than wall time."
echo
"$tmp/scalebench" table "$figures"
