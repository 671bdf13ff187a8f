#!/usr/bin/env bash
# Loading a large state: the runtime beside the stacks a user
# would otherwise assemble, on the same inputs.
#
# The inputs are the runtime's own (internal/benchload, written as files
# by scripts/loadbench): the benchState texts of 0.6, 6 and 60 MB, the
# benchmark contract (schema, output schema, the CEL invariants) and the
# chain patch. Every stack, in its own process, reads a state's text from
# its file, parses it (timed), runs STEPS steps of the chain patch, each on
# the state the previous one committed (the first on the freshly parsed
# state, timed apart; then a collection, untimed; the others' median), and
# reports its peak RSS and its CPU time (every thread):
#
#   - runtime:      scripts/loadbench (ParseDocument, Contract.Verify with
#                   the four gates);
#   - runtime before: the same driver built on BASE_REV's runtime;
#   - Go naive:     scripts/peers/gonaive, built in its own module in a
#                   temporary directory (evanphx/json-patch/v5 on the whole
#                   text, jsonschema/v6 on the whole decoded state, the
#                   same CEL rules with cel-go);
#   - Node:         scripts/peers/node, when npm is there, installed from
#                   the npm registry into a temporary directory (rfc6902,
#                   ajv 2020-12, the same CEL rules with cel-js).
#
# The stacks run in turn, the order rotated each round; the final states
# of every stack are checked equal to the runtime's (as JSON values) and
# the script stops if one is not. It prints the issue's table per size
# (medians over the rounds, each figure against the runtime's) and the
# issue's targets. The machine's load average is printed before and
# after: on a shared machine, read the ratios, which come from the same
# rounds.
#
# Usage: scripts/bench-peers.sh [ROUNDS] [SIZES] [BASE_REV]
#        (defaults: 3 rounds, "0.6MB 6MB 60MB", c6a083e, the revision
#        before the runtime's loading was made faster; BASE_REV "none"
#        leaves the before column out)
# Environment: STEPS (steps per run at 0.6 and 6 MB, default 20), STEPS60
# (at 60 MB, default 6).
# A run takes about 6 minutes on a 2-core machine with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
sizes=${2:-"0.6MB 6MB 60MB"}
base=${3:-c6a083e}
steps=${STEPS:-20}
steps60=${STEPS60:-6}
export GOWORK=off

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "building the runtime's driver and writing the inputs" >&2
go build -o "$tmp/loadbench" ./scripts/loadbench
"$tmp/loadbench" write "$tmp/in"

stacks=(runtime go-naive)
if [ "$base" != none ]; then
	echo "building the driver on the runtime at $base" >&2
	mkdir -p "$tmp/base"
	git archive "$base" | tar -x -C "$tmp/base"
	mkdir -p "$tmp/base/scripts/loadbench" "$tmp/base/internal/benchload"
	cp scripts/loadbench/*.go "$tmp/base/scripts/loadbench/"
	cp internal/benchload/*.go "$tmp/base/internal/benchload/"
	(cd "$tmp/base" && go build -o "$tmp/loadbench-base" ./scripts/loadbench)
	stacks=(runtime-base "${stacks[@]}")
fi

echo "building the Go naive peer in its own module" >&2
cp -r scripts/peers/gonaive "$tmp/gonaive"
(cd "$tmp/gonaive" && go build -o "$tmp/gonaive.bin" .)

if command -v npm >/dev/null 2>&1; then
	echo "installing the Node peer from the npm registry" >&2
	mkdir -p "$tmp/node"
	cp scripts/peers/node/package.json scripts/peers/node/peer.mjs "$tmp/node/"
	(cd "$tmp/node" && npm install --no-audit --no-fund --silent >/dev/null)
	stacks+=(node)
else
	echo "npm not found: no Node peer" >&2
fi

run_stack() { # stack size steps
	local out="$tmp/final-$1-$2.json"
	case $1 in
	runtime) "$tmp/loadbench" run -dir "$tmp/in" -size "$2" -steps "$3" -out "$out" ;;
	runtime-base) "$tmp/loadbench-base" run -stack runtime-base -dir "$tmp/in" -size "$2" -steps "$3" -out "$out" ;;
	go-naive) "$tmp/gonaive.bin" -dir "$tmp/in" -size "$2" -steps "$3" -out "$out" ;;
	node) node --expose-gc --max-old-space-size=16384 "$tmp/node/peer.mjs" -dir "$tmp/in" -size "$2" -steps "$3" -out "$out" ;;
	esac
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
n=${#stacks[@]}
for r in $(seq 1 "$rounds"); do
	for size in $sizes; do
		k=$steps
		[ "$size" = 60MB ] && k=$steps60
		echo "round $r of $rounds, $size" >&2
		for i in $(seq 0 $((n - 1))); do
			run_stack "${stacks[$(((i + r) % n))]}" "$size" "$k" >>"$tmp/figures.jsonl"
		done
		if [ "$r" = 1 ]; then
			for s in "${stacks[@]}"; do
				[ "$s" = runtime ] && continue
				if ! "$tmp/loadbench" equal "$tmp/final-runtime-$size.json" "$tmp/final-$s-$size.json"; then
					echo "bench-peers: the final state of $s at $size is not the runtime's" >&2
					exit 1
				fi
			done
		fi
	done
done

echo "## Issue 25: loading a state, the runtime beside other stacks"
echo
echo "Load average (1, 5, 15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores."
echo "Final states equal to the runtime's for: ${stacks[*]}."
"$tmp/loadbench" table "$tmp/figures.jsonl"
