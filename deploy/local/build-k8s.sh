#!/usr/bin/env bash
# Build the pinned upstream control-plane binaries from their published Go modules and cache
# them outside the repository, keyed by every input, so a warm run costs nothing.
#
#   deploy/local/build-k8s.sh        prints the cache directory that holds the binaries
#
# Go builds only these upstream components; no project logic lives in Go.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.37.2}     # newest 1.37.x the module proxy serves; 1.35.4 is the oldest tested
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
KWOK_VERSION=${KWOK_VERSION:-0.8.0}

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
script_hash=$(sha256sum "$0" | cut -c1-12)
cache_root=${MUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/muster}
key="k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-$(go env GOVERSION)-$script_hash"
bin="$cache_root/bin/$key"

if [ -f "$bin/.complete" ]; then
	echo "$bin"
	exit 0
fi

log() { echo "build-k8s: $*" >&2; }
mkdir -p "$cache_root/bin"
work=$(mktemp -d "$cache_root/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
out="$work/out"
mkdir -p "$out"

# --- kube-apiserver, kube-controller-manager, kube-scheduler, kubectl --------------------------------
# k8s.io/kubernetes pins its staging modules at v0.0.0 behind replace directives that do not
# apply to a consumer, so a wrapper module replaces each one with its published v0.x.y tag.
log "resolving k8s.io/kubernetes v$K8S_VERSION"
gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
	sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[ -n "$gomod" ] || { log "cannot download k8s.io/kubernetes@v$K8S_VERSION"; exit 1; }
# The wrapper states the same language version as the module it builds (1.35: go 1.25.0,
# 1.37: go 1.26.0), so the same defaults apply as in an upstream build.
go_line=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")
go_minor=$(echo "$go_line" | cut -d. -f1-2)
mkdir -p "$work/k8s"
{
	printf 'module example.com/k8sbins\n\ngo %s\n\ngodebug default=go%s\n\n' "$go_line" "$go_minor"
	printf 'require k8s.io/kubernetes v%s\n\nreplace (\n' "$K8S_VERSION"
	sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/.*#\1#p' "$gomod" |
		while read -r m; do printf '\t%s => %s v0.%s\n' "$m" "$m" "${K8S_VERSION#1.}"; done
	printf ')\n'
} >"$work/k8s/go.mod"
cat >"$work/k8s/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
(
	cd "$work/k8s"
	log "go mod tidy (kubernetes)"
	go mod tidy >&2
	minor=$(echo "$K8S_VERSION" | cut -d. -f2)
	ldflags="-s -w"
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags="$ldflags -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
		ldflags="$ldflags -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
	done
	log "go build kube-apiserver kube-controller-manager kube-scheduler kubectl (cold: ~20 min)"
	go build -trimpath -ldflags "$ldflags" -o "$out/" \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler \
		k8s.io/kubernetes/cmd/kubectl >&2
)

# --- etcd: its server module has replace directives, so it also needs a wrapper -------------
mkdir -p "$work/etcd"
cat >"$work/etcd/go.mod" <<GO
module example.com/etcdbin

go 1.25.0

require go.etcd.io/etcd/server/v3 v$ETCD_VERSION
GO
printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"$work/etcd/tools.go"
(
	cd "$work/etcd"
	log "go mod tidy (etcd)"
	go mod tidy >&2
	log "go build etcd"
	go build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3 >&2
)

# --- kwok: a plain module, kept out of the kubernetes module graph --------------------------
log "go install kwok v$KWOK_VERSION"
GOBIN="$out" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION" >&2
# kwok's stage definitions are read at run time; keep a copy beside the binaries.
kwok_src=$(go env GOMODCACHE)/sigs.k8s.io/kwok@v$KWOK_VERSION
mkdir -p "$out/kwok-stages"
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
	pod/fast/pod-ready.yaml pod/fast/pod-delete.yaml; do
	cp "$kwok_src/kustomize/stage/$f" "$out/kwok-stages/"
done
chmod -R u+w "$out"

"$out/kube-apiserver" --version >&2
"$out/etcd" --version | head -1 >&2
touch "$out/.complete"
rm -rf "$bin"
mv "$out" "$bin"
log "cached in $bin"
echo "$bin"
