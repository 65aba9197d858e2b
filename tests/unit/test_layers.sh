#!/usr/bin/env bash
# A module's files call each other one way only: a file may call the functions of the files
# listed below it in the module's layer order, never above, so there is no call cycle between
# files. Work that must come back up goes through a function pointer the caller passes down.
#
#   test_layers.sh DIR HEADER [GLOB]
#
# HEADER states the order, top to bottom, as file names after a line holding "Layers, top to
# bottom" and on the lines that follow it while they hold file names only, e.g.
#   * Layers, top to bottom (tests/unit/test_layers.sh):
#   *   manager.c hold.c
#   *   state.c
# Every DIR/GLOB file (default *.c) must be in the order. A file owns the functions it
# defines (a definition: a line that starts with the return type, not static); a call is the
# name followed by "(" outside comments, not a member (->name( or .name().
# It fails, too, when it finds no order, a listed file is missing, or the files define fewer
# functions than there are files: a check that reads nothing proves nothing.
set -euo pipefail
dir=${1:?usage: test_layers.sh DIR HEADER [GLOB]}
header=${2:?usage: test_layers.sh DIR HEADER [GLOB]}
glob=${3:-*.c}
[ -d "$dir" ] || { echo "no directory $dir"; exit 1; }
[ -f "$header" ] || { echo "no header $header"; exit 1; }

order=()
in_order=0
while IFS= read -r line; do
	if [[ $in_order -eq 0 && $line == *"Layers, top to bottom"* ]]; then
		in_order=1
		line=${line#*:}
	elif [[ $in_order -eq 1 && ! $line =~ ^[\ ]\*([\ ]+[a-z_0-9]+\.c)+[\ ]*$ ]]; then
		break
	fi
	if [[ $in_order -eq 1 ]]; then
		for word in $line; do
			[[ $word =~ ^[a-z_0-9]+\.c$ ]] && order+=("$word")
		done
	fi
done <"$header"
[ ${#order[@]} -ge 2 ] ||
	{ echo "$header states no layer order (\"Layers, top to bottom\")"; exit 1; }

# The text of a file without its comments, so a function named in prose is no call.
strip() { perl -0777 -pe 's{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g' "$1"; }

declare -A owner
for file in "${order[@]}"; do
	[ -f "$dir/$file" ] || { echo "missing $dir/$file (named in $header)"; exit 1; }
	while IFS= read -r fn; do
		[ -n "$fn" ] && owner[$fn]=$file
	done < <(strip "$dir/$file" | grep -E '^[a-z][^;]*[ *][a-z_0-9]+\(' |
		grep -vE '^(static|typedef|extern) ' | sed -E 's/^[^(]*[ *]([a-z_0-9]+)\(.*/\1/')
done
[ ${#owner[@]} -ge ${#order[@]} ] ||
	{ echo "found only ${#owner[@]} functions in ${#order[@]} files of $dir"; exit 1; }

bad=0
for ((i = 1; i < ${#order[@]}; i++)); do
	file=${order[$i]}
	text=$(strip "$dir/$file")
	for fn in "${!owner[@]}"; do
		above=${owner[$fn]}
		for ((j = 0; j < i; j++)); do
			[ "${order[$j]}" = "$above" ] || continue
			if grep -qE "(^|[^a-z_0-9>.])$fn\(" <<<"$text"; then
				echo "$file calls $fn, which $above defines: $above is above $file"
				bad=1
			fi
		done
	done
done
shopt -s nullglob
files=("$dir"/$glob)
[ ${#files[@]} -gt 0 ] || { echo "no file $dir/$glob"; exit 1; }
for f in "${files[@]}"; do
	name=$(basename "$f")
	[[ " ${order[*]} " == *" $name "* ]] || { echo "$name is not in the layer order"; bad=1; }
done
[ "$bad" -eq 0 ] &&
	echo "$(basename "$dir") layers: ${#order[@]} files, ${#owner[@]} functions, no upward call"
exit "$bad"
