#!/usr/bin/env bash
# Runs `muster simulate` on every case under the given directories and compares the result.
#
#   tests/sim/run.sh MUSTER DIR...
#
# A case is a directory holding input.yaml (and any further input*.yaml / input*.json, passed
# in name order after it) and what the run must produce:
#   expected.jsonl    stdout, exactly (required; empty for a case that must fail)
#   expected.stderr   stderr, exactly (optional; unchecked when absent)
#   expected.status   the exit status (optional; 0 when absent)
# The simulator runs inside the case directory with relative file names, so FILE:LINE
# messages don't depend on where the tree is.
#
# A DIR that doesn't exist is skipped with a note (tests/scenarios is filled in later). Prints
# PASS/FAIL per case, a diff for each failure, and last "N passed, M failed"; exits non-zero if
# any case failed. MUSTER_SIM_UPDATE=1 rewrites the expected files from the actual run instead
# (review the diff before committing it).
set -uo pipefail

if [ $# -lt 2 ]; then
	echo "usage: $0 MUSTER DIR..." >&2
	exit 2
fi
muster=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
if [ ! -x "$muster" ]; then
	echo "$0: $muster is not an executable" >&2
	exit 2
fi

passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_case() { # DIR NAME
	local dir=$1 name=$2 inputs=() f status want_status=0 ok=1
	for f in "$dir"/input.yaml "$dir"/input*.yaml "$dir"/input*.json; do
		[ -f "$f" ] || continue
		f=$(basename "$f")
		case " ${inputs[*]-} " in *" $f "*) continue ;; esac
		inputs+=("$f")
	done
	(cd "$dir" && "$muster" simulate "${inputs[@]}") >"$tmp/out" 2>"$tmp/err"
	status=$?
	if [ "${MUSTER_SIM_UPDATE:-}" = 1 ]; then
		cp "$tmp/out" "$dir/expected.jsonl"
		if [ "$status" -ne 0 ] || [ -f "$dir/expected.stderr" ]; then
			cp "$tmp/err" "$dir/expected.stderr"
		fi
		if [ "$status" -ne 0 ]; then
			echo "$status" >"$dir/expected.status"
		else
			rm -f "$dir/expected.status"
		fi
		echo "UPDATED $name"
		passed=$((passed + 1))
		return
	fi
	[ -f "$dir/expected.status" ] && want_status=$(tr -d '[:space:]' <"$dir/expected.status")
	if [ "$status" != "$want_status" ]; then
		echo "FAIL $name: exit status $status, want $want_status"
		sed 's/^/  stderr: /' "$tmp/err"
		ok=0
	fi
	if [ ! -f "$dir/expected.jsonl" ]; then
		echo "FAIL $name: no expected.jsonl"
		ok=0
	elif ! diff -u "$dir/expected.jsonl" "$tmp/out" >"$tmp/diff"; then
		echo "FAIL $name: stdout differs from expected.jsonl"
		sed 's/^/  /' "$tmp/diff"
		ok=0
	fi
	if [ -f "$dir/expected.stderr" ] && ! diff -u "$dir/expected.stderr" "$tmp/err" >"$tmp/diff"; then
		echo "FAIL $name: stderr differs from expected.stderr"
		sed 's/^/  /' "$tmp/diff"
		ok=0
	fi
	if [ "$ok" = 1 ]; then
		echo "PASS $name"
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
}

for root in "$@"; do
	if [ ! -d "$root" ]; then
		echo "note: $root does not exist, skipped"
		continue
	fi
	for dir in "$root"/*/; do
		dir=${dir%/}
		[ -f "$dir/input.yaml" ] || continue
		run_case "$dir" "$(basename "$root")/$(basename "$dir")"
	done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
