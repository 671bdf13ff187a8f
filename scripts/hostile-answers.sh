#!/usr/bin/env bash
# Runs patchbench against a local fake provider (scripts/fakeprovider) that
# sends what a hostile or broken provider may: 30 MiB answers, answers
# built to make the extractor quadratic, usage figures of 2^62 tokens,
# error messages full of
# terminal controls. For each it prints the peak RSS and wall time
# (/usr/bin/time -v), the size of runs.jsonl, the runs' statuses and codes,
# and whether the directory reads back (report).
#
# Usage: scripts/hostile-answers.sh [PATCHBENCH]   (default: built from this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
bin=${1:-$tmp/patchbench}
[ -n "${1:-}" ] || go build -o "$bin" ./cmd/patchbench
go build -o "$tmp/fakeprovider" ./scripts/fakeprovider
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
ref='{"patch":[{"op":"replace","path":"/ticket/reply","value":"Dear Ada, a refund of 42.50 EUR is on its way."},{"op":"replace","path":"/ticket/status","value":"resolved"},{"op":"add","path":"/audit/-","value":"refunded"}],"note":"done"}'

serve() { # serve MODE ARGS...: starts the fake provider, sets addr and pid
  "$tmp/fakeprovider" -mode "$@" >"$tmp/addr" &
  pid=$!
  for _ in $(seq 50); do [ -s "$tmp/addr" ] && break; sleep 0.1; done
  addr=$(cat "$tmp/addr")
}

try() { # try NAME FLAGS...: one run of the example case against the fake provider
  local name=$1; shift
  local out=$tmp/$name
  set +e
  OPENAI_BASE_URL=http://$addr/v1 /usr/bin/time -v "$bin" run --cases bench/testdata/example --actor openai:m --no-cache \
    --out "$out" "$@" >/dev/null 2>"$tmp/$name.err"
  local code=$?
  "$bin" report "$out" >/dev/null 2>"$tmp/$name.report"
  local rcode=$?
  set -e
  printf '%-12s exit %d; peak RSS %s KB; %s; runs.jsonl %s bytes; report exit %d\n' "$name" "$code" \
    "$(awk '/Maximum resident/ {print $6}' "$tmp/$name.err")" \
    "$(awk -F': ' '/Elapsed/ {print "wall " $2}' "$tmp/$name.err")" \
    "$(wc -c <"$out/runs.jsonl" 2>/dev/null || echo 0)" "$rcode"
  grep -o '"status":"[a-z]*","leaked' "$out/runs.jsonl" 2>/dev/null | sed 's/,"leaked//' | sort | uniq -c | sed 's/^/    /' || true
  grep -o '"decisions":\[{"gate":"[a-z]*","passed":false,"code":"[a-z_]*"' "$out/runs.jsonl" 2>/dev/null |
    sed 's/.*"code":/    code /' | sort | uniq -c || true
  grep -v '^\s' "$tmp/$name.err" | grep -v '^run directory' | head -2 | cat -v | sed 's/^/    stderr: /' || true
}

serve big -size $((30 << 20)); try big-30MiB; kill "$pid"
serve quad -size $((256 << 10)); try quad-256KB --config patchoptic; kill "$pid"
serve usage -answer '{"patch":[{"op":"remove","path":"/nope"}]}'; try usage-2^62 --max-attempts 2; kill "$pid"
serve usage -answer "$ref"; try usage-ok; kill "$pid"
serve ansi; try ansi --config patchoptic --max-retries 0; kill "$pid"
pid=
