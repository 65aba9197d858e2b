#!/usr/bin/env bash
# The C sources are formatted as .clang-format says, so that no change has to argue about
# layout and a reformat touches nothing. Runs clang-format --dry-run -Werror over every .c and
# .h under manager/, webhooks/ and tests/ and prints what it would change.
#
#   tests/unit/test_format.sh REPO_ROOT
#
# Exit status: 0 formatted; 1 a file is not, or no source or no .clang-format was found (a
# check that reads nothing would pass for ever); 77 (skipped) without clang-format. To fix,
# run twice (a few lines settle only on the second pass):
#   git ls-files 'manager/*.[ch]' 'webhooks/*.[ch]' 'tests/*.[ch]' | xargs clang-format -i
set -uo pipefail
root=${1:?usage: test_format.sh REPO_ROOT}
cd "$root" || exit 1

format=${CLANG_FORMAT:-}
if [ -z "$format" ]; then
	for candidate in clang-format clang-format-14; do
		if command -v "$candidate" >/dev/null; then
			format=$candidate
			break
		fi
	done
fi
if [ -z "$format" ]; then
	echo "SKIPPED: no clang-format on PATH (set CLANG_FORMAT)"
	exit 77
fi
if [ ! -f .clang-format ]; then
	echo "no .clang-format in $root"
	exit 1
fi

mapfile -t files < <(find manager webhooks tests -type f \( -name '*.c' -o -name '*.h' \) | sort)
if [ ${#files[@]} -lt 50 ]; then
	echo "found only ${#files[@]} C sources under manager/, webhooks/ and tests/ of $root"
	exit 1
fi

# --dry-run -Werror reports each place it would change as an error; -ferror-limit=0 reports
# them all, not only a file's first.
if ! out=$("$format" --style=file --dry-run -Werror -ferror-limit=0 "${files[@]}" 2>&1); then
	echo "$out" | head -200
	echo "not formatted as .clang-format says: $(grep -c 'clang-format-violations' <<<"$out")" \
		"places in $(grep 'clang-format-violations' <<<"$out" | cut -d: -f1 | sort -u | wc -l) files"
	exit 1
fi
echo "format: ${#files[@]} files ok"
