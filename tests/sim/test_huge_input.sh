#!/usr/bin/env bash
# `muster simulate` on 2 GiB inputs (issue 26): a JSON List and YAML documents, each a few
# hundred valid objects (tests/bench/gen_simulate_input.c) and then zeros, made sparse so they
# take no disk. The simulator must map the file, not read it into memory, and fail with a
# clear error that names the file and where (the List's items[N], or the NUL byte), in bounded
# memory: peak RSS far below the file's size.
#
#   tests/sim/test_huge_input.sh MUSTER GEN_SIMULATE_INPUT
set -uo pipefail
muster=$1 gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
limit_kib=$((256 * 1024)) # sanitizer builds included; the file is 2,097,152 KiB

check() { # NAME FORMAT PATTERN
	local name=$1 format=$2 pattern=$3 input="$tmp/$1" status rss
	"$gen" -n 200 -f "$format" >"$tmp/whole" || return 1
	head -c 60000 "$tmp/whole" >"$input" && truncate -s 2G "$input" || return 1
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M' -o "$tmp/rss" "$muster" simulate "$input" >"$tmp/out" 2>"$tmp/err"
		status=$?
		rss=$(tail -1 "$tmp/rss")
	else
		"$muster" simulate "$input" >"$tmp/out" 2>"$tmp/err"
		status=$?
		rss=0
	fi
	if [ "$status" -ne 2 ] || [ -s "$tmp/out" ] || ! grep -q -- "$pattern" "$tmp/err" ||
		[ "$rss" -gt "$limit_kib" ]; then
		echo "FAIL $name: exit status $status, peak RSS ${rss} KiB, stderr:"
		head -3 "$tmp/err"
		failed=1
		return
	fi
	echo "PASS $name: $(head -1 "$tmp/err" | cut -c1-160) (peak RSS ${rss} KiB)"
}

check huge.json json-list "^$tmp/huge.json:[0-9]*: malformed JSON: document 1: items\[[0-9]*\]" ||
	failed=1
check huge.yaml yaml-multi "^$tmp/huge.yaml: malformed YAML: input contains a NUL byte" || failed=1
exit "$failed"
