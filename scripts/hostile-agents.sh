#!/usr/bin/env bash
# Runs patchbench's tools protocol (run --protocol tools) against a hostile
# tool-calling model (scripts/fakeprovider -mode agent) through each wire
# format (openai:, ollama:, anthropic:) on the example case in all six
# configurations: a tool that does not exist, malformed arguments, 1,000
# calls in one answer, 10 MB of arguments, a tool call written as text,
# an HTTP 500 after the first turn. For each it prints the exit status, the peak RSS and wall time
# (/usr/bin/time -v), the runs' statuses and how their steps ended, and the
# size of runs.jsonl (issue 22).
#
# Usage: scripts/hostile-agents.sh [PATCHBENCH]   (default: built from this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
bin=${1:-$tmp/patchbench}
[ -n "${1:-}" ] || go build -o "$bin" ./cmd/patchbench
go build -o "$tmp/fakeprovider" ./scripts/fakeprovider
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

for attack in unknown malformed calls big text error; do
  "$tmp/fakeprovider" -mode agent -attack "$attack" -size $((10 << 20)) >"$tmp/addr" &
  pid=$!
  for _ in $(seq 50); do [ -s "$tmp/addr" ] && break; sleep 0.1; done
  addr=$(cat "$tmp/addr")
  for actor in openai:m ollama:m anthropic:m; do
    name=$attack-${actor%%:*}
    out=$tmp/$name
    set +e
    OPENAI_BASE_URL=http://$addr/v1 OLLAMA_HOST=http://$addr ANTHROPIC_BASE_URL=http://$addr /usr/bin/time -v "$bin" run \
      --cases bench/testdata/example --actor "$actor" --no-cache --protocol tools --max-retries 0 --out "$out" >/dev/null 2>"$tmp/$name.err"
    code=$?
    set -e
    outcome=$(python3 -c '
import json, sys, collections
c = collections.Counter()
for line in open(sys.argv[1]):
    r = json.loads(line)
    c[(r["status"], ",".join(s.get("ended", "") or ("committed" if s["committed"] else "-") for s in r["steps"]))] += 1
print("; ".join("%d %s (%s)" % (n, k[0], k[1]) for k, n in sorted(c.items())))' "$out/runs.jsonl")
    printf '%-20s exit %d; peak RSS %s KB; %s; runs.jsonl %s bytes; %s\n' "$name" "$code" \
      "$(awk '/Maximum resident/ {print $6}' "$tmp/$name.err")" \
      "$(awk -F': ' '/Elapsed/ {print "wall " $2}' "$tmp/$name.err")" \
      "$(wc -c <"$out/runs.jsonl")" "$outcome"
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; pid=
done
