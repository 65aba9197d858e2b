#!/usr/bin/env bash
# The controller's files call each other one way only (manager/ctrl/internal.h): a file may call
# the functions of the files listed below it, never above, so there is no call cycle between
# files. Reads the per-file sections of internal.h ("/* --- FILE.c ...") to learn which file
# declares what, then looks for calls in each file to functions of the files above it.
set -euo pipefail
dir=${1:?usage: test_ctrl_layers.sh manager/ctrl}
# Top to bottom: each may call those after it.
order=(manager.c hold.c visibility.c ingest.c podgroups.c integrations.c admission.c history.c
	nodes.c queues.c fairshare.c writer.c observe.c state.c kinds.c records.c)
declare -A owner
section=""
while IFS= read -r line; do
	if [[ $line =~ ^/\*\ ---\ ([a-z_]+\.c) ]]; then
		section=${BASH_REMATCH[1]}
	elif [[ -n $section && $line =~ ^[a-z].*[\ \*]([a-z_0-9]+)\( ]]; then
		owner[${BASH_REMATCH[1]}]=$section
	fi
done <"$dir/internal.h"
[ ${#owner[@]} -gt 20 ] || { echo "found only ${#owner[@]} functions in internal.h"; exit 1; }
bad=0
for ((i = 0; i < ${#order[@]}; i++)); do
	file=${order[$i]}
	[ -f "$dir/$file" ] || { echo "missing $dir/$file"; exit 1; }
	for ((j = 0; j < i; j++)); do
		above=${order[$j]}
		for fn in "${!owner[@]}"; do
			[ "${owner[$fn]}" = "$above" ] || continue
			if grep -qE "(^|[^a-z_0-9])$fn\(" "$dir/$file"; then
				echo "$file calls $fn, which $above defines: $above is above $file"
				bad=1
			fi
		done
	done
done
for f in "$dir"/*.c; do
	name=$(basename "$f")
	[[ " ${order[*]} " == *" $name "* ]] || { echo "$name is not in the layer order"; bad=1; }
done
[ "$bad" -eq 0 ] && echo "ctrl layers: ${#order[@]} files, ${#owner[@]} functions, no upward call"
exit "$bad"
