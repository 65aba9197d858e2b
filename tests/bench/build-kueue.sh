#!/usr/bin/env bash
# Build Kueue's full manager, its perf harness's minimalkueue and the perf runner from the
# published Go module, and cache them with Kueue's source tree outside the repository, keyed by
# every input, so a warm run costs nothing. Used by tests/bench/kueue_side_by_side.sh.
#
#   tests/bench/build-kueue.sh       prints the cache directory; its last line of stdout
#
# The cache directory holds bin/{manager,minimalkueue,runner} and src/ (Kueue's source tree:
# the runner must run from inside it, because its test utilities look for Kueue's Makefile
# upwards from the working directory; the CRDs are in src/config/components/crd/bases and the
# generator configs in src/test/performance/scheduler/configs).
#
# Go builds only these upstream components; no project logic lives in Go.
set -euo pipefail

KUEUE_VERSION=${KUEUE_VERSION:-0.17.0}   # newest release the module proxy serves

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
script_hash=$(sha256sum "$0" | cut -c1-12)
cache_root=${MUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/muster}
key="kueue-$KUEUE_VERSION-$(go env GOVERSION)-$script_hash"
dest="$cache_root/kueue/$key"

if [ -f "$dest/.complete" ]; then
	echo "$dest"
	exit 0
fi

log() { echo "build-kueue: $*" >&2; }
mkdir -p "$cache_root/kueue"
work=$(mktemp -d "$cache_root/kueue/build.XXXXXX")
trap 'rm -rf "$work"' EXIT

log "downloading sigs.k8s.io/kueue@v$KUEUE_VERSION from the module proxy"
moddir=$(go mod download -json "sigs.k8s.io/kueue@v$KUEUE_VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$moddir" ] && [ -d "$moddir" ] || { log "cannot download sigs.k8s.io/kueue@v$KUEUE_VERSION"; exit 1; }

# The module cache is read-only; build in a writable copy, which is also the tree the runner
# runs from.
cp -r "$moddir" "$work/src"
chmod -R u+w "$work/src"
mkdir -p "$work/bin"
(
	cd "$work/src"
	for t in manager:cmd/kueue/main.go \
		minimalkueue:test/performance/scheduler/minimalkueue/main.go \
		runner:test/performance/scheduler/runner/main.go; do
		log "go build ${t%%:*} (${t#*:}; cold: several minutes each)"
		go build -trimpath -ldflags "-s -w" -o "$work/bin/${t%%:*}" "./${t#*:}" >&2
	done
)
for b in manager minimalkueue runner; do
	[ -x "$work/bin/$b" ] || { log "$b was not built"; exit 1; }
done
[ -d "$work/src/config/components/crd/bases" ] || { log "no CRDs in the Kueue tree"; exit 1; }
touch "$work/.complete"
rm -rf "$dest"
mv "$work" "$dest"
trap - EXIT
log "cached in $dest"
echo "$dest"
