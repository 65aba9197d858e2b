#!/usr/bin/env bash
# Smoke test of `muster replay-philly` (manager/sim/philly.h): a bounded run prints the setup
# lines and the three FORECAST lines, well formed; a malformed trace exits 2 with FILE:LINE
# messages. No figure is judged (tests/bench/replay_philly.sh prints them).
#
#   tests/sim/test_replay_philly.sh MUSTER CORPUS_DIR [PHILLY_CSV]
#
# CORPUS_DIR is tests/fuzz/corpus/fuzz_philly_csv (slice.csv, malformed.csv). PHILLY_CSV, the
# real trace, adds a run on its first 3,000 jobs of the largest cluster when the file exists.
set -uo pipefail

muster=$1
corpus=$2
trace=${3:-}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

NUM='(-|-?[0-9]+[.][0-9][0-9])'
FORECAST_RE="^FORECAST runtime=(median|conditional|perfect) estimates=[0-9]+ no_basis=[0-9]+"
FORECAST_RE+=" compared=[0-9]+ within_1min_pct=$NUM abs_mean_min=$NUM abs_median_min=$NUM"
FORECAST_RE+=" abs_p90_min=$NUM signed_median_min=$NUM rel_median=$NUM rel_p90=$NUM\$"

check_run() { # NAME ARGS...
	local name=$1
	shift
	if ! "$muster" replay-philly "$@" >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL $name: exit status $?"
		cat "$tmp/err"
		fail=1
		return
	fi
	if [ -s "$tmp/err" ] || ! grep -q '^replay-philly: cluster ' "$tmp/out" ||
		! grep -q '^replay-philly: shape: ceil(g/8) pods x min(8,g) nvidia.com/gpu; ground truth: ' "$tmp/out" ||
		[ "$(grep -cE "$FORECAST_RE" "$tmp/out")" != 3 ] ||
		[ "$(grep -c '^FORECAST ' "$tmp/out")" != 3 ]; then
		echo "FAIL $name: unexpected output"
		cat "$tmp/out" "$tmp/err"
		fail=1
		return
	fi
	echo "PASS $name"
	grep '^FORECAST ' "$tmp/out"
}

check_run slice --trace "$corpus/slice.csv" --max-samples 5
check_run slice-strict --trace "$corpus/slice.csv" --queueing strict --quota 16 --sample-every 1
if [ -n "$trace" ] && [ -r "$trace" ]; then
	check_run philly-3000 --trace "$trace" --jobs 3000 --max-samples 10
else
	echo "SKIP philly-3000: no trace at ${trace:-(none given)}"
fi

"$muster" replay-philly --trace "$corpus/malformed.csv" >"$tmp/out" 2>"$tmp/err"
status=$?
if [ "$status" != 2 ] || [ -s "$tmp/out" ] ||
	! grep -q 'malformed.csv:2: timestamp "2017-13-09 07:01:55" is not a time' "$tmp/err"; then
	echo "FAIL malformed: exit status $status"
	cat "$tmp/out" "$tmp/err"
	fail=1
else
	echo "PASS malformed"
fi
exit $fail
