#!/usr/bin/env bash
# What the harness costs next to the model, before and after, in one run:
# builds patchbench at a base revision (default f3276d9, before the
# harness was made faster) and from the working tree, and prints side by
# side, with the ratio after/before:
#   1. the default `patchbench run` (one round, every configuration, the
#      no-model actors): wall time, CPU time (user+sys) and peak RSS, as
#      medians over PAIRS interleaved pairs, with the median of the paired
#      ratios; and whether summary.json and the printed tables are
#      byte-identical;
#   2. peak RSS at ROUNDS rounds against one round, `report` on the
#      ROUNDS-round directory (time and peak RSS), and the peak RSS of
#      `browse` on it after the overview and 20 run pages (the base
#      build may have no browse: "-");
#   3. live scheduling against scripts/fakeprovider (fixed 200 ms latency,
#      usage reported), LIVE_ROUNDS rounds of the suite at C=64 and C=128:
#      efficiency = requests x latency / C / wall; then with one request in
#      7 answered HTTP 500 (no Retry-After) at C=64: wall against the
#      no-failure wall of the same trial; and the share of steps recording
#      latency_ms > 0 with --no-cache; medians of PAIRS trials;
#   4. the Go benchmarks of the stages of one step (runner/stage_bench_test.go,
#      copied into the base tree), ns/op, B/op and allocs/op.
# The machine may be shared: compare ratios, measured in one run.
#
# Usage: scripts/bench-harness.sh [BASE_REV] [PAIRS]
#   ROUNDS=20 LIVE_ROUNDS=4 SKIP_ROUNDS=1 (skip part 2, the longest)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-f3276d9}
pairs=${2:-3}
rounds=${ROUNDS:-20}
live_rounds=${LIVE_ROUNDS:-4}
tmp=$(mktemp -d)
fp=
trap '[ -n "$fp" ] && kill "$fp" 2>/dev/null; rm -rf "$tmp"' EXIT

mkdir -p "$tmp/base"
git archive "$base" | tar -x -C "$tmp/base"
(cd "$tmp/base" && go build -o "$tmp/before" ./cmd/patchbench)
go build -o "$tmp/after" ./cmd/patchbench
go build -o "$tmp/fakeprovider" ./scripts/fakeprovider

# measure NAME BIN ARGS...: runs BIN, leaving "wall cpu rss_kb" in $tmp/NAME.m
measure() {
  local name=$1 bin=$2; shift 2
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/$name.time" "$tmp/$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || true
  awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$tmp/$name.time" >"$tmp/$name.m"
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
row() { # row FIGURE BEFORE AFTER TARGET [RATIO]
  local ratio=${5:-$(awk -v b="$2" -v a="$3" 'BEGIN {printf (b > 0) ? "%.2f" : "-", a / b}')}
  printf '%-44s %12s %12s %8s   %s\n' "$1" "$2" "$3" "$ratio" "$4"
}
header() { printf '\n%s\n%-44s %12s %12s %8s   %s\n' "$1" figure before after ratio target; }

# 1. The default run, interleaved.
identical=yes
for i in $(seq "$pairs"); do
  order="before after"
  [ $((i % 2)) -eq 0 ] && order="after before"
  for v in $order; do
    measure "run-$v-$i" "$v" run --out "$tmp/run-$v-$i.dir" --progress 0
  done
  cmp -s "$tmp/run-before-$i.dir/summary.json" "$tmp/run-after-$i.dir/summary.json" || identical=no
  cmp -s "$tmp/run-before-$i.out" "$tmp/run-after-$i.out" || identical=no
  rm -rf "$tmp/run-before-$i.dir" "$tmp/run-after-$i.dir"
done
col() { for i in $(seq "$pairs"); do awk -v c="$2" '{print $c}' "$tmp/run-$1-$i.m"; done | median; }
pr() { for i in $(seq "$pairs"); do paste "$tmp/run-before-$i.m" "$tmp/run-after-$i.m" | awk -v c="$1" '{printf "%.3f\n", $(c + 3) / $c}'; done | median; }
header "1. default run (medians of $pairs interleaved pairs; ratio: median of paired ratios)"
row "wall s" "$(col before 1)" "$(col after 1)" "<= 0.40" "$(pr 1)"
row "CPU s (user+sys)" "$(col before 2)" "$(col after 2)" "<= 0.40" "$(pr 2)"
row "peak RSS KB, 1 round" "$(col before 3)" "$(col after 3)" "-" "$(pr 3)"
row "summary.json and tables byte-identical" - "$identical" "yes" -
rss1_before=$(col before 3)
rss1_after=$(col after 3)

# browse_peak BIN DIR: the peak RSS (VmHWM, KB) of `BIN browse DIR` after it
# served the overview and 20 run pages picked evenly through runs.jsonl;
# "-" when BIN has no browse command.
browse_peak() {
  local bin=$tmp/$1 dir=$2 pid url
  "$bin" browse --help >/dev/null 2>&1 || { echo -; return; }
  "$bin" browse "$dir" --addr 127.0.0.1:0 >"$tmp/browse.out" 2>/dev/null &
  pid=$!
  until grep -q '^http' "$tmp/browse.out" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo -; return; }
    sleep 0.05
  done
  url=$(head -1 "$tmp/browse.out")
  curl -s -o /dev/null "$url"
  awk -v s="$(($(wc -l <"$dir/runs.jsonl") / 20 + 1))" 'NR % s == 1' "$dir/runs.jsonl" | grep -o '"run_id":"[^"]*"' | cut -d'"' -f4 |
    while read -r id; do curl -s -o /dev/null "${url}run/$id"; done
  awk '/^VmHWM/ {print $2}' "/proc/$pid/status"
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
}

# 2. Memory in rounds, and report and browse on the many-round directory.
if [ -z "${SKIP_ROUNDS:-}" ]; then
  for v in before after; do
    measure "r$rounds-$v" "$v" run --rounds "$rounds" --out "$tmp/r$rounds-$v.dir" --progress 0
  done
  for v in before after; do
    measure "report-$v" "$v" report "$tmp/r$rounds-after.dir"
  done
  header "2. memory in rounds (one run each)"
  rb=$(awk '{print $3}' "$tmp/r$rounds-before.m")
  ra=$(awk '{print $3}' "$tmp/r$rounds-after.m")
  row "peak RSS KB, $rounds rounds" "$rb" "$ra" "-"
  row "peak RSS, $rounds rounds / 1 round" "$(awk -v a="$rb" -v b="$rss1_before" 'BEGIN {printf "%.2f", a / b}')" \
    "$(awk -v a="$ra" -v b="$rss1_after" 'BEGIN {printf "%.2f", a / b}')" "<= 1.2" -
  row "run wall s, $rounds rounds" "$(awk '{print $1}' "$tmp/r$rounds-before.m")" "$(awk '{print $1}' "$tmp/r$rounds-after.m")" "-"
  row "report wall s, $rounds rounds" "$(awk '{print $1}' "$tmp/report-before.m")" "$(awk '{print $1}' "$tmp/report-after.m")" "-"
  row "report peak RSS KB, $rounds rounds" "$(awk '{print $3}' "$tmp/report-before.m")" "$(awk '{print $3}' "$tmp/report-after.m")" "< 102400"
  row "browse peak RSS KB, $rounds rounds" "$(browse_peak before "$tmp/r$rounds-after.dir")" "$(browse_peak after "$tmp/r$rounds-after.dir")" "< 102400"
  rm -rf "$tmp"/r"$rounds"-*.dir
fi

# 3. Live scheduling against the fake provider.
serve() { # serve ARGS...: (re)starts the fake provider in fixed mode, sets addr
  [ -n "$fp" ] && kill "$fp" 2>/dev/null && wait "$fp" 2>/dev/null || true
  "$tmp/fakeprovider" -mode fixed -latency 200ms "$@" >"$tmp/addr" &
  fp=$!
  for _ in $(seq 50); do [ -s "$tmp/addr" ] && break; sleep 0.1; done
  addr=$(cat "$tmp/addr")
}
live() { # live NAME BIN C: a live run; prints "wall efficiency latency-share"
  local name=$1 bin=$2 c=$3
  rm -rf "$tmp/$name.dir"
  OPENAI_API_KEY=x OPENAI_BASE_URL=http://$addr/v1 measure "$name" "$bin" run --actor openai:m --no-cache \
    --rounds "$live_rounds" --concurrency "$c" --out "$tmp/$name.dir" --progress 0
  python3 - "$tmp/$name.dir/runs.jsonl" "$(awk '{print $1}' "$tmp/$name.m")" "$c" <<'EOF'
import json, sys
n = with_latency = 0
for line in open(sys.argv[1]):
    for s in json.loads(line)["steps"]:
        n += s.get("attempts", 0)
        with_latency += s.get("latency_ms", 0) > 0
wall, c = float(sys.argv[2]), int(sys.argv[3])
steps = sum(len(json.loads(l)["steps"]) for l in open(sys.argv[1]))
print("%.2f %.2f %.2f" % (wall, n * 0.2 / c / wall, with_latency / max(steps, 1)))
EOF
}
# Each trial runs, for each build (the order alternating), the no-failure
# runs at C=64 and C=128, then the run with failures at C=64; figures are
# medians over the trials, and the failure figure the median of the
# trials' paired ratios (its tail varies from trial to trial).
declare -A L
for i in $(seq "$pairs"); do
  order="before after"
  [ $((i % 2)) -eq 0 ] && order="after before"
  for v in $order; do
    serve
    for c in 64 128; do L[$v$c-$i]=$(live "live-$v-$c" "$v" "$c"); done
    serve -fail-every 7
    L[fail$v-$i]=$(live "live-fail-$v" "$v" 64)
  done
done
field() { # field KEY COLUMN: the median over the trials
  for i in $(seq "$pairs"); do echo "${L[$1-$i]}" | cut -d' ' -f"$2"; done | median
}
failratio() { # failratio BUILD: the median of the paired ratios
  for i in $(seq "$pairs"); do
    awk -v f="$(echo "${L[fail$1-$i]}" | cut -d' ' -f1)" -v w="$(echo "${L[${1}64-$i]}" | cut -d' ' -f1)" 'BEGIN {printf "%.3f\n", f / w}'
  done | median
}
header "3. live, fixed 200 ms latency, $live_rounds rounds of the suite (medians of $pairs trials)"
row "efficiency at C=64" "$(field before64 2)" "$(field after64 2)" ">= 0.9"
row "efficiency at C=128" "$(field before128 2)" "$(field after128 2)" ">= 0.8"
row "steps with latency_ms > 0 (--no-cache)" "$(field before64 3)" "$(field after64 3)" "1.00" -
row "wall with 1 in 7 failing / without, C=64" "$(failratio before)" "$(failratio after)" "<= 1.25" -
for v in before after; do
  printf '  %s: failure ratios of the trials: %s\n' "$v" "$(for i in $(seq "$pairs"); do
    awk -v f="$(echo "${L[fail$v-$i]}" | cut -d' ' -f1)" -v w="$(echo "${L[${v}64-$i]}" | cut -d' ' -f1)" 'BEGIN {printf "%.2f ", f / w}'; done)"
done

# 4. The stages of one step.
cp runner/stage_bench_test.go "$tmp/base/runner/"
(cd "$tmp/base" && go test -run XXX -bench Stage -benchmem -benchtime 300x ./runner) | grep '^Benchmark' >"$tmp/stages-before"
go test -run XXX -bench Stage -benchmem -benchtime 300x ./runner | grep '^Benchmark' >"$tmp/stages-after"
header "4. stages of one step (Go benchmarks, 300 iterations)"
join <(awk '{print $1, $3, $5, $7}' "$tmp/stages-before" | sort) <(awk '{print $1, $3, $5, $7}' "$tmp/stages-after" | sort) |
  while read -r name bns bb ba ans ab aa; do
    row "${name%-*} ns/op" "$bns" "$ans" "-"
    row "${name%-*} B/op" "$bb" "$ab" "-"
    row "${name%-*} allocs/op" "$ba" "$aa" "-"
  done
