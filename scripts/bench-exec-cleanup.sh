#!/usr/bin/env bash
# What an exec call's cleanup costs beside many unrelated processes
# (the sweep that kills what a program left behind): BenchmarkExecCall
# (actors) times one call of a program that answers at once, in a PID
# namespace (nothing scanned when it ends) and
# without one (the sweep reads the harness's subtree), first on the
# machine as it is, then with COUNT idle processes started beside it
# (sleep, outside the benchmark's subtree; a pass over all of /proc read
# them all). It prints ns per call for each, and the ratio of the crowded
# machine to the quiet one.
#
# Usage: scripts/bench-exec-cleanup.sh [COUNT] [CALLS]   (default 15000 40)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-15000}
calls=${2:-40}
tmp=$(mktemp -d)
idle="36$$" # the idle processes' sleep, in seconds: how they are told apart
trap 'pkill -KILL -f "^sleep $idle\$" || true; wait; rm -rf "$tmp"' EXIT
go test -c -o "$tmp/actors.test" ./actors
bench() { "$tmp/actors.test" -test.run XXX -test.bench ExecCall -test.benchtime "${calls}x" -test.count 3 |
  awk '/^BenchmarkExecCall/ {split($1, n, "/"); sub(/-[0-9]+$/, "", n[2]); v[n[2]] = v[n[2]] " " $3}
       END {for (m in v) print m, v[m]}'; }
bench >"$tmp/quiet"
# A shell of their own starts them and waits for them (it reaps them once
# killed, quietly).
bash -c 'for _ in $(seq "$1"); do sleep "$2" </dev/null >/dev/null 2>&1 & done; echo >"$3"; wait' _ "$count" "$idle" "$tmp/started" 2>/dev/null &
until [ -e "$tmp/started" ]; do sleep 1; done
sleep 5 # the spawning's load settles
echo "processes on the machine: $(find /proc -maxdepth 1 -name "[0-9]*" 2>/dev/null | wc -l)"
bench >"$tmp/crowded"
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-10s %14s %14s %8s\n' mode "quiet ns/call" "+$count ns/call" ratio
for m in namespace sweep; do
  q=$(awk -v m=$m '$1==m {$1=""; print}' "$tmp/quiet" | median)
  c=$(awk -v m=$m '$1==m {$1=""; print}' "$tmp/crowded" | median)
  [ -n "$q" ] && [ -n "$c" ] || { echo "$m: skipped (no PID namespace here?)"; continue; }
  printf '%-10s %14s %14s %8.2f\n' "$m" "$q" "$c" "$(echo "$c / $q" | bc -l)"
done
