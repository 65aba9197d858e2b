#!/usr/bin/env bash
# Replays the Philly job trace (`muster replay-philly`, manager/sim/philly.h) in a few
# configurations, in parallel, and prints for each the ground truth's waits and, per runtime
# source the forecast was given (median, conditional, perfect), how far its admission times
# were from the replay's. tests/bench/README.md, (g), explains the figures.
#
#   tests/bench/replay_philly.sh [MUSTER_BINARY]     (default: build-bench/muster)
#
# Environment: MUSTER_PHILLY_TRACE (default: shared/data/philly/philly.csv beside the
# repository), MUSTER_BENCH_JOBS (nproc).
#
# It prints figures; it does not fail on them. It exits 1 if a replay fails or prints malformed
# lines, 77 if the trace is missing (skipped), else 0.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
MUSTER=${1:-$REPO/build-bench/muster}
TRACE=${MUSTER_PHILLY_TRACE:-$REPO/../shared/data/philly/philly.csv}
JOBS=${MUSTER_BENCH_JOBS:-$(nproc)}

say() { echo "replay_philly: $*" >&2; }

if [ ! -x "$MUSTER" ]; then
	say "no muster binary at $MUSTER"
	echo "BENCH replay_philly status=FAIL reason=\"no binary\""
	exit 1
fi
if [ ! -r "$TRACE" ]; then
	say "SKIPPED: no Philly trace at $TRACE (set MUSTER_PHILLY_TRACE)"
	echo "BENCH replay_philly status=skipped reason=\"no trace file\""
	exit 77
fi

# name|flags: the largest cluster at three quotas and StrictFIFO, the next three largest, and
# the four together (four ClusterQueues in one run).
CONFIGS=(
	"6214e9-q0.3|--cluster 6214e9 --quota-fraction 0.3"
	"6214e9-q0.5|--cluster 6214e9 --quota-fraction 0.5"
	"6214e9-q0.2|--cluster 6214e9 --quota-fraction 0.2"
	"6214e9-q0.3-strict|--cluster 6214e9 --quota-fraction 0.3 --queueing strict"
	"11cb48-q0.3|--cluster 11cb48 --quota-fraction 0.3"
	"6c71a0-q0.3|--cluster 6c71a0 --quota-fraction 0.3"
	"b436b2-q0.3|--cluster b436b2 --quota-fraction 0.3"
	"four-q0.3|--cluster 6214e9 --cluster 11cb48 --cluster 6c71a0 --cluster b436b2 --quota-fraction 0.3"
)

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

run_one() { # NAME FLAGS...
	local name=$1 TIMEFORMAT='%U %S'
	shift
	# shellcheck disable=SC2086
	{ time "$MUSTER" replay-philly --trace "$TRACE" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"; } \
		2>"$WORK/$name.cpu"
	echo $? >"$WORK/$name.rc"
}
export -f run_one
export WORK MUSTER TRACE

start=$(date +%s%N)
for c in "${CONFIGS[@]}"; do
	echo "${c%%|*} ${c#*|}"
done | xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _
wall_ms=$((($(date +%s%N) - start) / 1000000))

NUM='(-|-?[0-9]+[.][0-9][0-9])'
FORECAST_RE="^FORECAST runtime=(median|conditional|perfect) estimates=[0-9]+ no_basis=[0-9]+"
FORECAST_RE+=" compared=[0-9]+ within_1min_pct=$NUM abs_mean_min=$NUM abs_median_min=$NUM"
FORECAST_RE+=" abs_p90_min=$NUM signed_median_min=$NUM rel_median=$NUM rel_p90=$NUM\$"
bad=0
cpu=0
for c in "${CONFIGS[@]}"; do
	name=${c%%|*}
	rc=$(cat "$WORK/$name.rc" 2>/dev/null || echo missing)
	if [ "$rc" != 0 ] || [ "$(grep -cE "$FORECAST_RE" "$WORK/$name.out")" != 3 ]; then
		say "$name: exit status $rc or malformed output"
		head -5 "$WORK/$name.err" "$WORK/$name.out" >&2
		bad=1
	fi
	cpu=$(awk -v c="$cpu" '{ printf "%.2f", c + $1 + $2 }' "$WORK/$name.cpu")
done

status=ok
[ "$bad" -eq 0 ] || status=FAIL
echo "BENCH replay_philly status=$status runs=${#CONFIGS[@]} jobs=$JOBS" \
	"wall_s=$(awk -v w="$wall_ms" 'BEGIN { printf "%.1f", w / 1000 }') cpu_s=$cpu"
echo
echo "Forecast error against the replay's admission times (minutes; rel = |error| / true wait"
echo "left; signed < 0: too early). Runtime given to the forecast: median = the median of the"
echo "jobs finished so far, conditional = the same runtimes as a sample (median of those longer"
echo "than a job has run), perfect = the true runtimes (only unmodelled arrivals are left)."
printf '%-19s %-7s %-7s %-15s %-11s %9s %8s %8s %8s %8s %9s %7s %7s\n' config jobs waited \
	"wait p50/p90" runtime estimates no_basis "<=1min%" "abs p50" "abs p90" "sign p50" \
	"rel p50" "rel p90"
for c in "${CONFIGS[@]}"; do
	name=${c%%|*}
	out=$WORK/$name.out
	[ -s "$out" ] || continue
	truth=$(sed -n 's/^replay-philly: shape: .*ground truth: \([0-9]*\) jobs, [0-9]* admitted, \([0-9]*\) waited; wait median \([0-9.]*\) min, p90 \([0-9.]*\) min.*/\1 \2 \3\/\4/p' "$out")
	read -r jobs waited wait <<<"$truth"
	grep '^FORECAST ' "$out" | while read -r line; do
		v() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
		printf '%-19s %-7s %-7s %-15s %-11s %9s %8s %8s %8s %8s %9s %7s %7s\n' "$name" "$jobs" \
			"$waited" "$wait" "$(v runtime)" "$(v estimates)" "$(v no_basis)" \
			"$(v within_1min_pct)" "$(v abs_median_min)" "$(v abs_p90_min)" \
			"$(v signed_median_min)" "$(v rel_median)" "$(v rel_p90)"
	done
done
[ "$bad" -eq 0 ]
