#!/usr/bin/env bash
# `muster simulate` on an input over the old 16 MiB cap: 50,000 Workloads (about 17 MB),
# generated at run time (tests/bench/gen_simulate_input.c), not committed. It must be read
# whole and answered: one line per Workload and per ClusterQueue, exit status 0, nothing on
# stderr.
#
#   tests/sim/test_large_input.sh MUSTER GEN_SIMULATE_INPUT
set -uo pipefail
muster=$1 gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" -n 50000 >"$tmp/export.yaml" || exit 1
size=$(stat -c %s "$tmp/export.yaml")
if [ "$size" -le $((16 << 20)) ]; then
	echo "FAIL: the generated input is $size bytes, not over 16 MiB"
	exit 1
fi
"$muster" simulate "$tmp/export.yaml" >"$tmp/out" 2>"$tmp/err"
status=$?
lines=$(wc -l <"$tmp/out")
workloads=$(grep -c '"kind":"Workload"' "$tmp/out")
if [ "$status" -ne 0 ] || [ -s "$tmp/err" ] || [ "$workloads" -ne 50000 ] || [ "$lines" -ne 50024 ]; then
	echo "FAIL: exit status $status, $workloads Workloads in $lines lines"
	head -5 "$tmp/err"
	exit 1
fi
echo "PASS: $size bytes, $workloads Workloads"
echo "1 passed, 0 failed"
