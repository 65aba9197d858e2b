#!/bin/sh
# The pure core (quantities, quota, admission, placement) may include only C standard headers
# and its own, so that it never grows I/O and stays shared by the manager and the simulator.
dir=${1:?core directory}
allowed='assert.h|ctype.h|errno.h|inttypes.h|limits.h|math.h|stdarg.h|stdbool.h|stddef.h|stdint.h|stdio.h|stdlib.h|string.h'
bad=$(grep -Hn '^#[[:space:]]*include[[:space:]]*<' "$dir"/*.[ch] | grep -Ev "<($allowed)>")
if [ -n "$bad" ]; then
	echo "core includes a non-standard header:"
	echo "$bad"
	exit 1
fi
echo "core purity: ok"
