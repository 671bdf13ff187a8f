#!/usr/bin/env bash
# Re-runs the hostile-file attacks (listed below) on the reading
# commands, browse and the exec actor, with one or more patchbench
# binaries, and prints for each attack and binary the exit status, the
# wall time and peak RSS
# (/usr/bin/time -v) and what the command said (its first line on standard
# error, or the figure the attack is about). Give two binaries to see the
# figures before and after a change side by side:
#
#   git stash; go build -o /tmp/pb-before ./cmd/patchbench; git stash pop
#   scripts/hostile-files.sh /tmp/pb-before          # and the tree's own build
#
# Usage: scripts/hostile-files.sh [PATCHBENCH...]   (default: built from this tree)
#        ONLY=36 scripts/hostile-files.sh ...      (only the attacks of items 3 and 6)
#
# The attacks: runs.jsonl grown by `truncate -s +1G`, made a symlink to
# /dev/zero, given a 100 MB line, made a FIFO (and manifest.json a FIFO:
# the command gets SIGTERM after 3 s, SIGKILL 3 s later); manifest.json
# edited to rounds -5, case_ids ["x"], expected_runs 10^18 (and repair with
# its backup intact); browse asked with Host: attacker.example; an exec
# actor whose child leaves the process group (setsid sleep 61) past
# --timeout; exec answers of 31 MiB, 80k operations and a 3.8 MB pointer;
# a contract schema whose $ref loops. Every command gets SIGTERM after a
# while (20 s; 3 s where a hang is the attack) and SIGKILL 3 s later, and
# the line says when that was needed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bins=("$@")
only=${ONLY:-1234567}
if [ ${#bins[@]} -eq 0 ]; then
  go build -o "$tmp/patchbench" ./cmd/patchbench
  bins=("$tmp/patchbench")
fi
b0=${bins[0]}
"$b0" run --out "$tmp/base" >/dev/null 2>&1 || true
id=$(head -c 400 "$tmp/base/runs.jsonl" | sed -n 's/^{"run_id":"\([^"]*\)".*/\1/p')

# measure LABEL TIMEOUT CMD...: runs CMD under /usr/bin/time -v and prints
# a line; CMD gets SIGTERM after TIMEOUT seconds, and SIGKILL 3 s later
# (then the line says so).
measure() {
  local label=$1 t=$2; shift 2
  set +e
  /usr/bin/time -v -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" &
  local tp=$! pid="" n=0 sig=""
  while kill -0 "$tp" 2>/dev/null; do
    sleep 0.1
    n=$((n + 1))
    [ -n "$pid" ] || pid=$(pgrep -P "$tp")
    if [ -n "$pid" ] && [ $n -eq $((t * 10)) ]; then kill -TERM "$pid"; sig="[SIGTERM at ${t}s] "; fi
    if [ -n "$pid" ] && [ $n -eq $((t * 10 + 30)) ]; then kill -KILL "$pid"; sig="[SIGTERM ignored; SIGKILL at $((t + 3))s] "; fi
  done
  wait "$tp"
  local code=$?
  set -e
  local rss wall said
  rss=$(awk '/Maximum resident/ {printf "%d MB", $6/1024}' "$tmp/time")
  wall=$(awk -F': ' '/Elapsed/ {print $2}' "$tmp/time")
  said=$(grep -v "^\s*$" "$tmp/err" | head -1 | cut -c1-150 | sed "s#$tmp/##g" || true)
  [ -n "$said" ] || said="(stdout: $(head -c 100 "$tmp/out" | tr '\n' ' '))"
  printf '  %-26s exit %3d  %9s  %8s  %s%s\n' "$label" "$code" "$wall" "$rss" "$sig" "$said"
}

fresh() { # fresh NAME: a copy of the base directory
  rm -rf "${tmp:?}/$1"
  cp -r "$tmp/base" "$tmp/$1"
  echo "$tmp/$1"
}

readers() { # readers BIN DIR TIMEOUT: every reading command on DIR
  local bin=$1 d=$2 t=$3
  measure report "$t" "$bin" report "$d"
  measure "show --list" "$t" "$bin" show --list --out "$d"
  measure "show ID" "$t" "$bin" show "$id" --out "$d"
  measure compare "$t" "$bin" compare "$tmp/base" "$d"
  rm -rf "$tmp/merged"
  measure merge "$t" "$bin" merge --out "$tmp/merged" "$d"
  measure browse "$t" "$bin" browse --addr 127.0.0.1:0 "$d"
  measure repair "$t" "$bin" repair "$d"
}

for bin in "${bins[@]}"; do
  echo "== $bin"
  if [[ $only == *1* ]]; then
  echo "1. runs.jsonl + 1 GiB of NUL bytes (truncate -s +1G)"
  d=$(fresh big); truncate -s +1G "$d/runs.jsonl"; readers "$bin" "$d" 20; rm -rf "$d"
  echo "1. runs.jsonl -> /dev/zero"
  d=$(fresh zero); rm "$d/runs.jsonl"; ln -s /dev/zero "$d/runs.jsonl"; readers "$bin" "$d" 10; rm -rf "$d"
  echo "1. runs.jsonl + one 100 MB line"
  d=$(fresh long)
  { printf '{"run_id":"'; head -c 100000000 /dev/zero | tr '\0' x; printf '"}\n'; } >>"$d/runs.jsonl"
  measure report 20 "$bin" report "$d"
  measure "show --list" 20 "$bin" show --list --out "$d"
  measure repair 20 "$bin" repair "$d"; rm -rf "$d"

  fi
  if [[ $only == *2* ]]; then
  echo "2. runs.jsonl a FIFO (SIGTERM at 3 s)"
  d=$(fresh fifo); rm "$d/runs.jsonl"; mkfifo "$d/runs.jsonl"
  measure report 3 "$bin" report "$d"
  measure "show --list" 3 "$bin" show --list --out "$d"
  measure "show ID" 3 "$bin" show "$id" --out "$d"
  measure repair 3 "$bin" repair "$d"
  measure browse 3 "$bin" browse --addr 127.0.0.1:0 "$d"; rm -rf "$d"
  echo "2. manifest.json a FIFO (SIGTERM at 3 s)"
  d=$(fresh fifom); rm "$d/manifest.json"; mkfifo "$d/manifest.json"
  measure report 3 "$bin" report "$d"
  measure "show ID" 3 "$bin" show "$id" --out "$d"
  measure repair 3 "$bin" repair "$d"; rm -rf "$d"

  fi
  if [[ $only == *3* ]]; then
  echo "3. manifest.json edited (the backup intact)"
  for edit in "jq '.rounds = -5'" "jq '.case_ids = [\"x\"]'" "sed -E 's/\"expected_runs\": *[0-9]+/\"expected_runs\": 1000000000000000000/'"; do
    d=$(fresh man); eval "$edit" <"$tmp/base/manifest.json" >"$d/manifest.json"
    echo "   ($edit)"
    measure report 20 "$bin" report "$d"
    measure repair 20 "$bin" repair "$d"
    printf '  %-26s %s of %s records kept\n' "after repair" "$(wc -l <"$d/runs.jsonl" 2>/dev/null || echo 0)" "$(wc -l <"$tmp/base/runs.jsonl")"
    rm -rf "$d"
  done

  fi
  if [[ $only == *4* ]]; then
  echo "4. browse with Host: attacker.example"
  "$bin" browse --addr 127.0.0.1:0 "$tmp/base" >"$tmp/browse.out" 2>&1 &
  bpid=$!
  for _ in $(seq 100); do grep -q 'http://' "$tmp/browse.out" && break; sleep 0.1; done
  url=$(grep -o 'http://[0-9.:]*' "$tmp/browse.out" | head -1)
  for host in attacker.example "${url#http://}"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" "$url/run/$id?reveal=1" || true)
    printf '  %-26s HTTP %s\n' "Host: $host" "$code"
  done
  kill "$bpid" 2>/dev/null; wait "$bpid" 2>/dev/null || true

  fi
  if [[ $only == *5* ]]; then
  echo "5. exec actor whose child leaves the group (setsid sleep 61), --timeout 2s"
  marker=hostile-sleep-$$
  cp "$(command -v sleep)" "$tmp/$marker"
  printf '#!/bin/sh\nsetsid %s 61 &\nsleep 30\n' "$tmp/$marker" >"$tmp/escape.sh"
  chmod +x "$tmp/escape.sh"
  measure "run exec:escape" 30 "$bin" run --cases bench/testdata/example --config patchoptic --actor "exec:$tmp/escape.sh" --timeout 2s --out "$tmp/esc"
  sleep 1
  printf '  %-26s %s\n' "left running" "$(pgrep -c -f "$marker" || true) processes"
  pids=$(pgrep -f "$tmp/$marker" || true); [ -z "$pids" ] || kill $pids
  rm -rf "$tmp/esc"

  fi
  if [[ $only == *6* ]]; then
  echo "6. exec answers (6 runs of the example case)"
  cat >"$tmp/big.sh" <<'EOS'
#!/bin/sh
printf '{"text":"'
head -c 32505856 /dev/zero | tr '\0' x
printf '"}'
EOS
  chmod +x "$tmp/big.sh"
  for c in 1 4 8; do
    measure "31 MiB, concurrency $c" 60 "$bin" run --cases bench/testdata/example --actor "exec:$tmp/big.sh" --concurrency "$c" --out "$tmp/b$c"
    rm -rf "$tmp/b$c"
  done
  awk 'BEGIN { printf "{\"patch\":["; for (i = 0; i < 80000; i++) printf "%s{\"op\":\"test\",\"path\":\"/ticket/status\",\"value\":1}", (i ? "," : ""); printf "],\"note\":\"n\"}" }' >"$tmp/ops.txt"
  head -c 3800000 /dev/zero | tr '\0' a | awk '{ printf "{\"patch\":[{\"op\":\"replace\",\"path\":\"/%s\",\"value\":1}],\"note\":\"n\"}", $0 }' >"$tmp/ptr.txt"
  for a in ops ptr; do
    jq -Rs '{text: .}' <"$tmp/$a.txt" >"$tmp/$a.json"
    printf '#!/bin/sh\ncat %s\n' "$tmp/$a.json" >"$tmp/$a.sh"
    chmod +x "$tmp/$a.sh"
    measure "$a ($(wc -c <"$tmp/$a.txt") bytes)" 60 "$bin" run --cases bench/testdata/example --actor "exec:$tmp/$a.sh" --concurrency 1 --max-answer-bytes 8388608 --out "$tmp/$a"
    printf '  %-26s %s bytes for %s runs\n' "runs.jsonl" "$(wc -c <"$tmp/$a/runs.jsonl" 2>/dev/null || echo 0)" "$(wc -l <"$tmp/$a/runs.jsonl" 2>/dev/null || echo 0)"
    rm -rf "$tmp/$a"
  done

  fi
  if [[ $only == *7* ]]; then
  echo "7. a contract schema whose \$ref loops"
  sed 's|^schema:|schema:\n  $defs: {a: {$ref: "#/$defs/b"}, b: {$ref: "#/$defs/a"}}\n  $ref: "#/$defs/a"|' cmd/patchbench/testdata/triage.yaml >"$tmp/cycle.yaml"
  measure verify 20 "$bin" verify --state cmd/patchbench/testdata/state.json --contract "$tmp/cycle.yaml" --patch cmd/patchbench/testdata/good.json --phase triage
  grep '^schema ' "$tmp/out" | head -1 | cut -c1-200 | sed 's/^/    /' || true
  fi
done
cd "$repo"
