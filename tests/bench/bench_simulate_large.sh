#!/usr/bin/env bash
# `muster simulate` on a cluster export of 50,000 Workloads (issues 8 and 26), in every format
# users export and on both shapes: generates each input (tests/bench/gen_simulate_input.c,
# seeded; the same objects in every format) into a temporary directory, runs the simulator on
# it RUNS times under /usr/bin/time, checks it answered every Workload and that its output is
# byte for byte the same in every format of a shape, and prints the figures per case:
# workloads, wall s, CPU s (user + sys, parsing included; the median of the runs, and the
# fastest), workloads/s of CPU, peak RSS, minor page faults (util/heap_hint.h says why they
# matter), and whether the targets (>= 100,000 workloads/s of CPU at the median, <= 128 MiB
# peak RSS) were met; then a table of them all. The median, because one run on a shared VM can
# take 30 % more or less CPU than the next. Figures, not a pass/fail timing: it fails only if
# the simulator fails, crashes, answers wrong counts or answers differently in another format.
#
#   tests/bench/bench_simulate_large.sh MUSTER GEN_SIMULATE_INPUT [WORKLOADS (50000)] [SEED (1)]
#                                       [RUNS (5)]
#
# Formats (FORMATS, default all): yaml-multi (block YAML, one document per object), json-multi
# (indented JSON documents separated by ---), json-list and yaml-list (one v1 List, as
# `kubectl get -o json|yaml` writes it). Shapes (SHAPES, default both): default (24
# ClusterQueues in 4 cohorts) and large (Kueue's large-scale preset: 1,000 ClusterQueues in
# 10 cohorts, reclaimWithinCohort Any, withinClusterQueue LowerPriority, 1/5/20-cpu Workloads).
set -uo pipefail
if [ $# -lt 2 ]; then
	echo "usage: $0 MUSTER GEN_SIMULATE_INPUT [WORKLOADS] [SEED] [RUNS]" >&2
	exit 2
fi
muster=$1 gen=$2 n=${3:-50000} seed=${4:-1} runs=${5:-5}
formats=${FORMATS:-yaml-multi json-multi json-list yaml-list}
shapes=${SHAPES:-default large}
if ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
	echo "bench_simulate_large: RUNS must be a positive integer, not '$runs'" >&2
	exit 2
fi
if [ ! -x /usr/bin/time ]; then
	echo "bench_simulate_large: /usr/bin/time is missing (Debian package 'time')" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
: >"$tmp/table"

# One case: FORMAT SHAPE. Prints its BENCH line and figures, appends a row to the table.
bench_case() {
	local format=$1 shape=$2 input="$tmp/input" bytes status workloads run
	"$gen" -n "$n" -s "$seed" -f "$format" -p "$shape" >"$input" || return 1
	bytes=$(stat -c %s "$input")
	: >"$tmp/times"
	for ((run = 1; run <= runs; run++)); do
		/usr/bin/time -f '%e %U %S %M %R' -o "$tmp/time" "$muster" simulate "$input" \
			>"$tmp/out" 2>"$tmp/err"
		status=$?
		workloads=$(grep -c '"kind":"Workload"' "$tmp/out")
		if [ "$status" -ne 0 ] || [ "$workloads" -ne "$n" ]; then
			echo "BENCH simulate_large format=$format shape=$shape status=FAIL reason=\"exit status $status, $workloads of $n Workloads\""
			head -5 "$tmp/err"
			return 1
		fi
		cat "$tmp/time" >>"$tmp/times"
	done
	# The same objects in every format: the same answer, byte for byte.
	if [ -f "$tmp/first.$shape" ]; then
		if ! cmp -s "$tmp/first.$shape" "$tmp/out"; then
			echo "BENCH simulate_large format=$format shape=$shape status=FAIL reason=\"output differs from $(cat "$tmp/first_format.$shape")'s\""
			diff "$tmp/first.$shape" "$tmp/out" | head -5
			return 1
		fi
	else
		cp "$tmp/out" "$tmp/first.$shape"
		echo "$format" >"$tmp/first_format.$shape"
	fi
	# The run of median CPU (user + sys) gives the figures; the fastest is printed beside it.
	local wall user sys rss_kib faults fastest
	read -r wall user sys rss_kib faults fastest < <(awk '{ print $2 + $3, $0 }' "$tmp/times" | sort -n |
		awk -v runs="$runs" 'NR == 1 { fastest = $1 } NR == int((runs + 1) / 2) { line = $2 " " $3 " " $4 " " $5 " " $6 }
			END { print line, fastest }')
	awk -v n="$n" -v bytes="$bytes" -v wall="$wall" -v user="$user" -v sys="$sys" -v rss="$rss_kib" -v faults="$faults" \
		-v runs="$runs" -v fastest="$fastest" -v format="$format" -v shape="$shape" -v table="$tmp/table" \
		-v admitted="$(grep -c '"admitted":true' "$tmp/out")" 'BEGIN {
		cpu = user + sys
		rate = cpu > 0 ? n / cpu : 0
		mib = rss / 1024
		cpu_ok = rate >= 100000 ? "met" : "missed"
		rss_ok = mib <= 128 ? "met" : "missed"
		printf "BENCH simulate_large format=%s shape=%s status=ok workloads=%d input_mb=%.1f admitted=%d runs=%d wall_s=%.2f cpu_s=%.2f cpu_s_fastest=%.2f workloads_per_cpu_s=%.0f peak_rss_mib=%.1f page_faults=%d target_rate=%s target_rss=%s\n",
			format, shape, n, bytes / 1e6, admitted, runs, wall, cpu, fastest, rate, mib, faults, cpu_ok, rss_ok
		printf "  %-34s %12s\n", "input", sprintf("%s, %s shape, %.1f MB", format, shape, bytes / 1e6)
		printf "  %-34s %12d\n", "workloads", n
		printf "  %-34s %12d\n", "  of which admitted", admitted
		printf "  %-34s %12.2f\n", "wall s", wall
		printf "  %-34s %12.2f  (median of %d runs; fastest %.2f)\n", "CPU s (user + sys)", cpu, runs, fastest
		printf "  %-34s %12.0f  (target >= 100,000: %s)\n", "workloads/s of CPU", rate, cpu_ok
		printf "  %-34s %12.1f  (target <= 128: %s)\n", "peak RSS MiB", mib, rss_ok
		printf "  %-34s %12d\n", "minor page faults", faults
		printf "| %s | %s | %.1f MB | %.2f s | %.0f (%s) | %.1f MiB (%s) |\n", shape, format, bytes / 1e6,
			cpu, rate, cpu_ok, mib, rss_ok >> table
	}'
}

for shape in $shapes; do
	for format in $formats; do
		bench_case "$format" "$shape" || failed=1
	done
done
echo "muster simulate, $n Workloads, median of $runs runs (targets: >= 100,000 Workloads/CPU-s, <= 128 MiB):"
echo "| shape | format | input | CPU (user+sys) | Workloads/CPU-s | peak RSS |"
echo "|---|---|---|---|---|---|"
cat "$tmp/table"
exit "$failed"
