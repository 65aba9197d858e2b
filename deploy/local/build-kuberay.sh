#!/usr/bin/env bash
# Build the KubeRay operator from its published Go module and cache it, with the ray.io CRDs of
# the same release, outside the repository, keyed by every input, so a warm run costs nothing.
# Used by deploy/local/up.sh when MUSTER_WITH_KUBERAY=1 (RayJob and RayCluster tests).
#
#   deploy/local/build-kuberay.sh    prints the cache directory; its last line of stdout
#
# The cache directory holds ray-operator (the binary) and crds/ (ray.io_rayclusters.yaml,
# ray.io_rayjobs.yaml, ray.io_rayservices.yaml: the operator starts a RayService controller
# too, so all three must be installed).
#
# Go builds only this upstream component; no project logic lives in Go.
set -euo pipefail

KUBERAY_VERSION=${KUBERAY_VERSION:-1.5.0}   # the module proxy serves v1.5.0 and v1.4.0

# The module asks for go 1.24; the machine's Go is newer, so no other toolchain is fetched.
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
script_hash=$(sha256sum "$0" | cut -c1-12)
cache_root=${MUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/muster}
key="kuberay-$KUBERAY_VERSION-$(go env GOVERSION)-$script_hash"
dest="$cache_root/bin/$key"

if [ -f "$dest/.complete" ]; then
	echo "$dest"
	exit 0
fi

log() { echo "build-kuberay: $*" >&2; }
mkdir -p "$cache_root/bin"
work=$(mktemp -d "$cache_root/bin/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
out="$work/out"
mkdir -p "$out/crds"

module=github.com/ray-project/kuberay/ray-operator
log "downloading $module@v$KUBERAY_VERSION from the module proxy"
moddir=$(go mod download -json "$module@v$KUBERAY_VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$moddir" ] && [ -d "$moddir" ] || { log "cannot download $module@v$KUBERAY_VERSION"; exit 1; }

# The module has no replace directives, so `go install module@version` builds it as published,
# with the dependency versions of its own go.mod and go.sum. main.go is the module's root package.
log "go install ray-operator v$KUBERAY_VERSION (cold: several minutes)"
GOBIN="$out" go install -trimpath -ldflags "-s -w" "$module@v$KUBERAY_VERSION" >&2
[ -x "$out/ray-operator" ] || { log "ray-operator was not built"; exit 1; }

cp "$moddir"/config/crd/bases/ray.io_*.yaml "$out/crds/"
chmod -R u+w "$out"
for c in rayclusters rayjobs rayservices; do
	[ -s "$out/crds/ray.io_$c.yaml" ] || { log "the module has no CRD ray.io_$c.yaml"; exit 1; }
done

touch "$out/.complete"
rm -rf "$dest"
mv "$out" "$dest"
log "cached in $dest"
echo "$dest"
