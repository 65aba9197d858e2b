#!/usr/bin/env bash
# Build muster's container image from Debian packages, with no image registry and no container
# engine: mmdebstrap extracts the runtime libraries the binary links against into a root
# filesystem, the binary is built here (Release, no sanitizers), and umoci turns the tree into an
# OCI image. Needs root (mmdebstrap's root mode, file ownership) and deploy/setup.sh's packages.
#
#   deploy/image/build.sh [OUTDIR]          (OUTDIR defaults to <repo>/build-image)
#
# It builds the commit HEAD points at, not the working tree, so that the image is a function of
# the commit: with SOURCE_DATE_EPOCH taken from the commit, two builds of the same commit against
# the same Debian mirror state give the same image digest. What must be pinned for that:
#   - the source: a clean checkout of the commit (uncommitted changes are left out, with a warning);
#   - the Debian suite (bookworm, the host's, so the libraries match the headers the binary was
#     compiled against), the architecture and the package list below;
#   - every timestamp (file mtimes, config and history "created": the commit time), file ownership
#     (root, numeric) and the order of entries in the layer (sorted);
#   - the compiler, cmake and umoci are the host's Debian packages.
# Debian's mirror moves on with point and security releases; the package versions an image holds
# are written to OUTDIR/packages.txt, so a later difference can be explained.
#
# Output in OUTDIR:
#   muster-<version>.oci.tar   the OCI archive (skopeo copy oci-archive:... docker://...)
#   oci/                       the same image as an OCI layout directory
#   rootfs/                    the image's root filesystem, unpacked (for chroot tests)
#   packages.txt               the Debian packages in the image, with versions
#   image.env                  VERSION, REVISION, DIGEST, ...: written last, so its presence
#                              means a complete build
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:-$REPO/build-image}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SUITE=bookworm
ARCH=amd64
USER_ID=65532
# The libraries muster links against (readelf -d build/muster | grep NEEDED), by package; apt adds
# what they depend on. The build checks below that every one of them resolves in the image.
PACKAGES=(libc6 libcurl4 libjansson4 libyaml-0-2 libuv1 libsqlite3-0 libssl3)

log() { echo "build.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (mmdebstrap's root mode and the files' ownership need it)"
for tool in mmdebstrap umoci cmake git tar strip readelf; do
	command -v "$tool" >/dev/null || die "$tool is missing; run deploy/setup.sh"
done

export LC_ALL=C TZ=UTC
umask 022
t0=$SECONDS
REVISION=$(git -C "$REPO" rev-parse HEAD)
SOURCE_DATE_EPOCH=$(git -C "$REPO" log -1 --format=%ct HEAD)
export SOURCE_DATE_EPOCH
CREATED=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
VERSION=$(sed -n 's/^project(muster VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
[ -n "$VERSION" ] || die "no project(muster VERSION ...) in CMakeLists.txt"
# org.opencontainers.image.source: where the source is published. Only the repository's remote
# knows; a clone without one says so rather than guessing (MUSTER_IMAGE_SOURCE overrides).
SOURCE_URL=${MUSTER_IMAGE_SOURCE:-$(git -C "$REPO" config --get remote.origin.url || true)}
if [ -z "$SOURCE_URL" ]; then
	SOURCE_URL=unknown
	log "WARNING: no remote.origin.url; label org.opencontainers.image.source=unknown (set MUSTER_IMAGE_SOURCE)"
fi
if [ -n "$(git -C "$REPO" status --porcelain --untracked-files=no)" ]; then
	log "WARNING: the working tree has uncommitted changes; the image is built from HEAD ($REVISION) without them"
fi
log "muster $VERSION at $REVISION (SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH, $CREATED) into $OUT"

# Everything is rebuilt from scratch: a stale file left in OUT must not end up in the image.
WORK=$OUT/work
rm -rf "$WORK" "$OUT/rootfs" "$OUT/oci" "$OUT"/muster-*.oci.tar "$OUT/image.env" "$OUT/packages.txt"
mkdir -p "$WORK"

# --- the binary: a clean checkout of the commit, Release, no sanitizers ------------------------
# --shared borrows the repository's objects (any commit is reachable, even a detached one), and
# the checkout has a .git, so CMake's `git describe --always --dirty` names the commit, clean.
log "building muster (Release) in $WORK/build"
git clone --quiet --shared --no-checkout "$REPO" "$WORK/src"
git -C "$WORK/src" checkout --quiet --detach "$REVISION"
# -ffile-prefix-map: no build path in the binary, wherever OUT is.
cmake -S "$WORK/src" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DMUSTER_SANITIZE=OFF \
	-DMUSTER_FUZZ=OFF -DMUSTER_TESTS=OFF -DCMAKE_C_FLAGS="-ffile-prefix-map=$WORK/src=." \
	>"$WORK/cmake.log" 2>&1 || { tail -20 "$WORK/cmake.log" >&2; die "cmake configure failed"; }
cmake --build "$WORK/build" --target muster -j2 >>"$WORK/cmake.log" 2>&1 ||
	{ tail -30 "$WORK/cmake.log" >&2; die "building muster failed"; }
BIN=$WORK/build/muster

# --- the root filesystem: the libraries, extracted, and nothing that installs them ---------------
# The extract variant unpacks the packages and their dependencies without running dpkg or any
# maintainer script, so no shell, dpkg or apt ends up in the image. ca-certificates is taken
# without its dependencies (openssl, debconf and perl only serve its maintainer script, which
# builds the bundle; that is done below instead). The apt cache still holds the .debs when the
# extract hook runs (the extract variant runs no customize hook), which records their versions.
ROOTFS=$OUT/rootfs
log "extracting ${PACKAGES[*]} and their dependencies ($SUITE/$ARCH, the host's apt sources)"
# shellcheck disable=SC2016 # $1 and $MMDEBSTRAP_APT_CONFIG are the hook's, expanded by mmdebstrap's sh
mmdebstrap --mode=root --variant=extract --architectures="$ARCH" \
	--include="$(IFS=,; echo "${PACKAGES[*]}")" \
	--extract-hook='cd "$1/var/cache/apt/archives" && APT_CONFIG=$MMDEBSTRAP_APT_CONFIG apt-get download -q ca-certificates && dpkg-deb --extract ca-certificates_*.deb "$1"' \
	--extract-hook='for f in "$1"/var/cache/apt/archives/*.deb; do dpkg-deb --show --showformat="\${Package} \${Version}\n" "$f"; done | sort >"$1/.packages"' \
	"$SUITE" "$ROOTFS" >"$WORK/mmdebstrap.log" 2>&1 ||
	{ tail -30 "$WORK/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $WORK/mmdebstrap.log)"; }
mv "$ROOTFS/.packages" "$OUT/packages.txt"

# What a runtime image does not need: documentation, manual pages, locales, character-set
# converters (muster runs in the C locale, whose conversions are built into libc), lintian and
# bug-report data, apt's and dpkg's state and configuration (there is no apt or dpkg to use them),
# ca-certificates' update script (there is no shell to run it), and the host's resolv.conf and
# hostname, which mmdebstrap copies in and the runtime provides.
(
	cd "$ROOTFS"
	rm -rf usr/share/doc usr/share/man usr/share/info usr/share/locale usr/share/lintian \
		usr/share/bug usr/share/doc-base usr/share/gcc usr/share/gdb usr/lib/*/gconv \
		var/lib/apt var/lib/dpkg var/cache/apt var/cache/ldconfig var/log/* etc/apt etc/dpkg \
		etc/ld.so.cache etc/resolv.conf etc/hostname etc/fstab dev/* \
		usr/sbin/update-ca-certificates etc/ca-certificates
)

# The CA bundle that ca-certificates' maintainer script would have built (update-ca-certificates:
# every certificate under /usr/share/ca-certificates, concatenated), in a fixed order.
mkdir -p "$ROOTFS/etc/ssl/certs"
find "$ROOTFS/usr/share/ca-certificates" -name '*.crt' | sort | xargs cat >"$ROOTFS/etc/ssl/certs/ca-certificates.crt"
[ -s "$ROOTFS/etc/ssl/certs/ca-certificates.crt" ] || die "no CA certificates were extracted"

# The user the image runs as (distroless's "nonroot" ID), and root for completeness.
cat >"$ROOTFS/etc/passwd" <<EOF
root:x:0:0:root:/root:/usr/sbin/nologin
muster:x:$USER_ID:$USER_ID:muster:/nonexistent:/usr/sbin/nologin
EOF
cat >"$ROOTFS/etc/group" <<EOF
root:x:0:
muster:x:$USER_ID:
EOF
mkdir -p "$ROOTFS/tmp" "$ROOTFS/usr/local/bin"
chmod 1777 "$ROOTFS/tmp"
install -m 0755 -s "$BIN" "$ROOTFS/usr/local/bin/muster"

# Every library the binary needs resolves inside the image (the dynamic loader lists them), and
# the binary runs there as the image's user.
libs=$(chroot "$ROOTFS" /lib64/ld-linux-x86-64.so.2 --list /usr/local/bin/muster) ||
	die "the image's dynamic loader cannot load muster: $libs"
! grep -q 'not found' <<<"$libs" || die "libraries missing from the image: $(grep 'not found' <<<"$libs" | tr -s ' \t\n' ' ')"
version_line=$(chroot --userspec=$USER_ID:$USER_ID "$ROOTFS" /usr/local/bin/muster --version) ||
	die "muster --version failed inside the image"
log "in the image: $version_line"

# --- the layer: a tar with a fixed order, times and owners ----------------------------------------
layer=$WORK/layer.tar
tar --create --file="$layer" --directory="$ROOTFS" --sort=name --format=posix \
	--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	--mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner .

# --- the image ---------------------------------------------------------------------------------
OCI=$OUT/oci
hist=(--history.created="$CREATED" --history.author=muster)
umoci init --layout "$OCI"
umoci new --image "$OCI:$VERSION"
umoci raw add-layer --image "$OCI:$VERSION" "${hist[@]}" \
	--history.created_by="deploy/image/build.sh: Debian $SUITE libraries (${PACKAGES[*]}, ca-certificates) and muster" "$layer"
umoci config --image "$OCI:$VERSION" --no-history --created="$CREATED" --author=muster \
	--os=linux --architecture="$ARCH" --config.user="$USER_ID:$USER_ID" \
	--config.entrypoint=/usr/local/bin/muster --config.cmd=manager --config.workingdir=/ \
	--config.env=PATH=/usr/local/bin:/usr/bin:/bin \
	--config.exposedports=9443/tcp --config.exposedports=8081/tcp \
	--config.label=org.opencontainers.image.title=muster \
	--config.label=org.opencontainers.image.version="$VERSION" \
	--config.label=org.opencontainers.image.revision="$REVISION" \
	--config.label=org.opencontainers.image.source="$SOURCE_URL" \
	--config.label=org.opencontainers.image.created="$CREATED" \
	--manifest.annotation=org.opencontainers.image.version="$VERSION" \
	--manifest.annotation=org.opencontainers.image.revision="$REVISION"
umoci gc --layout "$OCI"

# The archive: the layout directory as one tar, as deterministic as the layer.
archive=$OUT/muster-$VERSION.oci.tar
tar --create --file="$archive" --directory="$OCI" --sort=name --format=posix \
	--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	--mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner .

manifest=$(jq -r '.manifests[0].digest' "$OCI/index.json")
layer_blob=$(jq -r '.layers[0].digest' "$OCI/blobs/sha256/${manifest#sha256:}")
layer_bytes=$(stat -c %s "$OCI/blobs/sha256/${layer_blob#sha256:}")
unpacked_bytes=$(du -sb "$ROOTFS" | cut -f1)
rm -rf "$WORK"

tmp=$(mktemp "$OUT/.image.env.XXXXXX")
cat >"$tmp" <<EOF
VERSION=$VERSION
REVISION=$REVISION
DIGEST=$manifest
ARCHIVE=$archive
ROOTFS=$ROOTFS
LAYER_BYTES=$layer_bytes
UNPACKED_BYTES=$unpacked_bytes
EOF
mv -f "$tmp" "$OUT/image.env"

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
log "$(wc -l <"$OUT/packages.txt") Debian packages (list: $OUT/packages.txt)"
log "image $VERSION, digest $manifest, built in $((SECONDS - t0))s"
log "size: compressed layer $(mib "$layer_bytes") ($layer_bytes bytes), unpacked $(mib "$unpacked_bytes") ($unpacked_bytes bytes)"
echo "$archive"
