#!/usr/bin/env bash
# Measures patchbench browse on a run directory, as a user meets it: the
# time from start to the printed address (the directory indexed, the case
# set loaded, the summary built), wall and CPU; the time to serve the
# overview and run pages (curl's time_total, REQUESTS pages of runs picked
# evenly through runs.jsonl, each page asked once: no cache helps); and
# the server's resident memory after them (VmRSS, and its peak VmHWM).
# Targets: open under 2 s, a run page under 100 ms, the server
# under 200 MB, on a 20-round directory of the default benchmark
# (patchbench run --rounds 20 --out /tmp/r20: 16,560 runs, 640 MB of
# runs.jsonl). Wall times depend on the machine's load, which is printed
# beside them; CPU time less so.
#
# Usage: scripts/bench-browse.sh RUN_DIR [REQUESTS]   (default 40 run pages)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/bench-browse.sh RUN_DIR [REQUESTS]}
requests=${2:-40}
tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/patchbench" ./cmd/patchbench
runs="$dir/runs.jsonl"
echo "directory: $dir ($(du -h "$runs" | cut -f1) of runs.jsonl, $(wc -l <"$runs") lines)"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# The file as the server reads it: from the page cache, as after the run
# that wrote it.
cat "$runs" >/dev/null

ticks=$(getconf CLK_TCK)
start=$(date +%s%N)
"$tmp/patchbench" browse "$dir" --addr 127.0.0.1:0 >"$tmp/out" 2>"$tmp/err" &
pid=$!
until grep -q '^http' "$tmp/out" 2>/dev/null; do
  if ! kill -0 "$pid" 2>/dev/null; then cat "$tmp/err" >&2; exit 1; fi
  sleep 0.02
done
end=$(date +%s%N)
read -r utime stime < <(awk '{print $14, $15}' "/proc/$pid/stat")
url=$(head -1 "$tmp/out")
printf 'open: %.2f s wall, %.2f s CPU (user+system), until the address is printed\n' \
  "$(echo "($end - $start) / 1000000000" | bc -l)" "$(echo "($utime + $stime) / $ticks" | bc -l)"

curl -s -o /dev/null -w 'overview: %{time_total} s, %{size_download} bytes\n' "$url"

# Run ids picked evenly through the file.
lines=$(wc -l <"$runs")
step=$(( lines / requests > 0 ? lines / requests : 1 ))
awk -v s="$step" 'NR % s == 1' "$runs" | grep -o '"run_id":"[^"]*"' | cut -d'"' -f4 | head -n "$requests" >"$tmp/ids"
while read -r id; do
  curl -s -o /dev/null -w '%{time_total} %{http_code}\n' "${url}run/$id"
done <"$tmp/ids" >"$tmp/times"
if grep -qv ' 200$' "$tmp/times"; then
  echo "a run page failed:" >&2
  grep -v ' 200$' "$tmp/times" >&2
  exit 1
fi
sort -n "$tmp/times" | awk '{t[NR] = $1 * 1000} END {
  printf "run pages: %d, median %.0f ms, p90 %.0f ms, max %.0f ms\n", NR, t[int((NR + 1) / 2)], t[int(NR * 0.9 + 0.5)], t[NR] }'
curl -s -o /dev/null -w 'run page, hidden values revealed: %{time_total} s\n' "${url}run/$(head -1 "$tmp/ids")?reveal=1"

grep -E '^(VmRSS|VmHWM)' "/proc/$pid/status" | awk '{ printf "server %s %.0f MB\n", $1, $2 / 1024 }'
