#!/usr/bin/env bash
# The ledger under kill -9. ledger_burst appends numbered records (message = sequence number)
# as fast as it can (odd kills) or at 2000 records/s, as a busy manager would (even kills:
# LEDGER_BURST_RATE); this kills it mid-burst KILLS times, each run reopening the same file and
# numbering on from the largest committed number + 1, then ends with a clean run of 5000
# records. After each kill and at the end it checks, with the sqlite3 CLI:
#   - PRAGMA integrity_check is ok;
#   - the sequence numbers in the file are 1..max with no gap and no repeat;
#   - the last number the burst reported committed before the kill is there;
# and prints what each kill lost (appended but not committed: read from the burst's progress
# file, which survives kill -9) and the rate at which records were committed.
# The queue is 8192 records (LEDGER_BURST_QUEUE_MAX) rather than the default 65536: a burst
# keeps the queue full, so a kill loses about a queue and a batch, and each run needs two
# commits of that size; the smaller queue keeps the test to seconds under ASan.
# Usage: test_ledger_crash.sh LEDGER_BURST
set -euo pipefail
export LEDGER_BURST_QUEUE_MAX=${LEDGER_BURST_QUEUE_MAX:-8192}

BURST=${1:?usage: test_ledger_crash.sh LEDGER_BURST}
KILLS=${LEDGER_CRASH_KILLS:-4}
command -v sqlite3 >/dev/null || { echo "test_ledger_crash: the sqlite3 CLI is missing (deploy/setup.sh installs it)" >&2; exit 1; }

dir=$(mktemp -d /tmp/test_ledger_crash.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
db=$dir/ledger.db

fail() {
	echo "test_ledger_crash: FAIL: $*" >&2
	exit 1
}

# Checks the file; prints its largest sequence number.
check_file() {
	local integrity stats count min max distinct
	integrity=$(sqlite3 "$db" 'PRAGMA integrity_check')
	[ "$integrity" = ok ] || fail "integrity_check: $integrity"
	stats=$(sqlite3 -separator ' ' "$db" \
		'SELECT count(*), min(CAST(message AS INTEGER)), max(CAST(message AS INTEGER)),
		        count(DISTINCT message) FROM decisions')
	read -r count min max distinct <<<"$stats"
	[ "$count" -gt 0 ] || fail "no records committed"
	[ "$min" -eq 1 ] || fail "the first record is $min, not 1"
	[ "$distinct" -eq "$count" ] || fail "$((count - distinct)) sequence numbers repeat"
	[ "$count" -eq "$max" ] || fail "gaps: $count records for numbers 1..$max"
	echo "$max"
}

# The highest number appended, from the progress file (8 bytes, native order).
appended() {
	od -An -t u8 -N8 "$dir/progress" | tr -d ' '
}

next=1
total_lost=0
for k in $(seq 1 "$KILLS"); do
	out=$dir/out.$k
	if [ $((k % 2)) -eq 1 ]; then
		mode="full speed"
		unset LEDGER_BURST_RATE
	else
		mode="2000/s"
		export LEDGER_BURST_RATE=2000
	fi
	"$BURST" "$db" "$next" "$dir/progress" >"$out" 2>"$dir/err.$k" &
	pid=$!
	# Kill mid-burst: after at least two commits, at a varying moment.
	for _ in $(seq 1 600); do
		[ "$(wc -l <"$out")" -ge 2 ] && break
		kill -0 "$pid" 2>/dev/null || fail "ledger_burst exited early: $(cat "$dir/err.$k")"
		sleep 0.05
	done
	[ "$(wc -l <"$out")" -ge 2 ] || fail "ledger_burst committed nothing in 30 s"
	sleep "0.$((RANDOM % 5 + 1))"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	# The last complete line the burst printed (a line cut by the kill has no "ms" field).
	last=$(grep -E '^committed [0-9]+ appended [0-9]+ ms [0-9]+$' "$out" | tail -n1)
	read -r _ printed _ _ _ ms <<<"$last"
	max=$(check_file)
	[ "$max" -ge "$printed" ] || fail "kill $k: $printed was reported committed, the file ends at $max"
	lost=$(($(appended) - max))
	[ "$lost" -ge 0 ] || fail "kill $k: the file holds $max, beyond the $(appended) appended"
	total_lost=$((total_lost + lost))
	rate=$(((printed - next + 1) * 1000 / (ms > 0 ? ms : 1)))
	echo "kill $k ($mode): committed up to $max (last reported $printed), lost $lost" \
		"records queued at the kill (queue_max $LEDGER_BURST_QUEUE_MAX); ~$rate records/s committed"
	next=$((max + 1))
done

# A clean run: everything appended is committed by ledger_close.
unset LEDGER_BURST_RATE
"$BURST" "$db" "$next" "$dir/progress" 5000 >"$dir/out.final" 2>"$dir/err.final" ||
	fail "clean run: $(cat "$dir/err.final")"
max=$(check_file)
[ "$max" -eq $((next + 4999)) ] || fail "clean run: the file ends at $max, not $((next + 4999))"
echo "after $KILLS kills: $max records, contiguous, integrity ok;" \
	"$total_lost records lost in all (mean $((total_lost / KILLS)) per kill)"
