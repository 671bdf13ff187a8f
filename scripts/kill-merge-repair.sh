#!/bin/sh
# kill-merge-repair.sh BINARY WORK: kill -9 a merge and a repair at several
# times and say what each leaves. Makes two shards of the default no-model
# suite (828 runs) in WORK, then, for each delay: merges them, killed after
# the delay (records left in the target, whether it has a manifest), runs
# repair and report on what is left (expected runs and what report warns);
# then repairs a copy of the merge with 8 damaged lines, killed after the
# delay, and again to the end (lines in runs.jsonl.dropped: 8 is right).
set -u
bin=$1
work=$2
delays=${DELAYS:-"0.05 0.1 0.2 0.3 0.4 0.6"}
mkdir -p "$work"
[ -d "$work/A" ] || "$bin" run --shard 0/2 --out "$work/A" >/dev/null 2>&1
[ -d "$work/B" ] || "$bin" run --shard 1/2 --out "$work/B" >/dev/null 2>&1
rm -rf "$work/full"
start=$(date +%s.%N)
"$bin" merge --out "$work/full" "$work/A" "$work/B" >/dev/null 2>&1
echo "an uninterrupted merge of $(wc -l <"$work/full/runs.jsonl") runs: $(echo "$(date +%s.%N) - $start" | bc) s"
echo "merge killed: delay, target, records in it, manifest, expected_runs after repair, report's warning"
for d in $delays; do
	out=$work/m-$d
	rm -rf "$out" "$work"/.m-$d.merge-*
	"$bin" merge --out "$out" "$work/A" "$work/B" >/dev/null 2>&1 &
	pid=$!
	sleep "$d"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	recs=0
	[ -f "$out/runs.jsonl" ] && recs=$(wc -l <"$out/runs.jsonl")
	man=no
	[ -f "$out/manifest.json" ] && man=yes
	exp=-
	warn=-
	if [ -d "$out" ]; then
		"$bin" repair "$out" >/dev/null 2>&1
		exp=$(grep -o '"expected_runs": *[0-9]*' "$out/manifest.json" 2>/dev/null | grep -o '[0-9]*$')
		grep -q expected_runs_unknown "$out/manifest.json" 2>/dev/null && exp="$exp (unknown)"
		warn=$("$bin" report "$out" 2>&1 >/dev/null | head -1 | cut -c1-110)
		[ -n "$warn" ] || warn="(none)"
	fi
	there=absent
	[ -d "$out" ] && there=present
	tmps=$(ls -d "$work"/.m-$d.merge-* 2>/dev/null | wc -l)
	again=-
	if [ "$there" = absent ]; then
		# The same merge, run again: whole, and nothing left beside it.
		"$bin" merge --out "$out" "$work/A" "$work/B" >/dev/null 2>&1
		again="merged again: $(wc -l <"$out/runs.jsonl") runs, $(ls -d "$work"/.m-$d.merge-* 2>/dev/null | wc -l) temporary left"
	fi
	echo "$d s: target $there ($tmps temporary beside), $recs records, manifest $man, expected_runs ${exp:-none}, report: $warn; $again"
done
r=$work/r-whole
rm -rf "$r"
cp -r "$work/full" "$r"
awk 'NR % 100 == 50 && n < 8 { print "{\"damaged\": " NR; n++ } { print }' "$work/full/runs.jsonl" >"$r/runs.jsonl"
start=$(date +%s.%N)
"$bin" repair "$r" >/dev/null 2>&1
echo "an uninterrupted repair: $(echo "$(date +%s.%N) - $start" | bc) s, $(wc -l <"$r/runs.jsonl.dropped") lines set aside"
echo "repair killed, then run again: delay, lines in runs.jsonl.dropped (8 set aside)"
for d in $delays; do
	r=$work/r-$d
	rm -rf "$r"
	cp -r "$work/full" "$r"
	# 8 damaged lines among the records.
	awk 'NR % 100 == 50 && n < 8 { print "{\"damaged\": " NR; n++ } { print }' "$work/full/runs.jsonl" >"$r/runs.jsonl"
	"$bin" repair "$r" >/dev/null 2>&1 &
	pid=$!
	sleep "$d"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	after=0
	[ -f "$r/runs.jsonl.dropped" ] && after=$(wc -l <"$r/runs.jsonl.dropped")
	"$bin" repair "$r" >/dev/null 2>&1
	dropped=0
	[ -f "$r/runs.jsonl.dropped" ] && dropped=$(wc -l <"$r/runs.jsonl.dropped")
	echo "$d s: $after lines after the kill, $dropped after the rerun; runs.jsonl $(wc -l <"$r/runs.jsonl") lines"
done
