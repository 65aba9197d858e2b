#!/usr/bin/env bash
# The container image (issue 9): deploy/image/build.sh builds it (cached outside the repo per git
# revision, so a warm run reuses it); its configuration runs muster as 65532:65532; its binary runs
# from the image's root filesystem as that user (chroot); and its manager, standing in for the
# cluster's on the same webhook and health ports, admits a queued Job that then completes. The
# cluster's manager is stopped meanwhile and comes back exactly as it was, pass or fail, since the
# tests after this one need it. Needs root: mmdebstrap, chroot and a private mount namespace.
source "$(dirname "$0")/lib.sh"
: "${MUSTER_LOCAL_DIR:?needs MUSTER_LOCAL_DIR to stand in for the manager of the cluster}"
: "${MUSTER_WEBHOOK_PORT:?source the cluster.env for MUSTER_WEBHOOK_PORT}"
: "${MUSTER_HEALTH_PORT:?source the cluster.env for MUSTER_HEALTH_PORT}"
# up.sh restarts the cluster's manager from this environment; without MUSTER_BIN it would build
# another binary instead of bringing back the one that ran.
: "${MUSTER_BIN:?needs the environment the cluster was started with (MUSTER_BIN, MUSTER_MANAGER_ARGS)}"
# shellcheck source=deploy/local/lib.sh
. "$REPO/deploy/local/lib.sh" # component_pid
[ "$(id -u)" -eq 0 ] || fail "needs root (deploy/image/build.sh, chroot, mount)"
for tool in mmdebstrap umoci skopeo chroot unshare; do
	command -v "$tool" >/dev/null || fail "$tool is missing; run deploy/setup.sh"
done
IMAGE_USER=65532

# --- 1. the image, built once per revision ----------------------------------------------------
rev=$(git -C "$REPO" rev-parse HEAD)
cache_root=${MUSTER_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/muster/image}
cache=$cache_root/$rev
mkdir -p "$cache_root"
exec 8>"$cache_root/.lock" # one build at a time per machine
flock -w 600 8 || fail "another image build holds $cache_root/.lock"
t0=$SECONDS
if [ -f "$cache/image.env" ]; then
	echo "image: reusing the build of $rev in $cache" >&2
	touch "$cache"
else
	"$REPO/deploy/image/build.sh" "$cache" >/dev/null 2>"$cache_root/build-$rev.log" || {
		tail -30 "$cache_root/build-$rev.log" >&2
		fail "deploy/image/build.sh failed (log: $cache_root/build-$rev.log)"
	}
	tail -3 "$cache_root/build-$rev.log" >&2
	# Builds of revisions nobody tested for a week go.
	find "$cache_root" -mindepth 1 -maxdepth 1 -mtime +7 -exec rm -rf {} + 2>/dev/null || true
fi
flock -u 8
echo "image: ready in $((SECONDS - t0))s" >&2
# shellcheck source=/dev/null # written by build.sh: VERSION REVISION DIGEST ARCHIVE ROOTFS ...
. "$cache/image.env"
[ "$REVISION" = "$rev" ] || fail "the cached image is of $REVISION, not $rev"

# The configuration in the archive that gets pushed (skopeo reads it as `skopeo copy` would).
config=$(skopeo inspect --config "oci-archive:$ARCHIVE") || fail "skopeo cannot read $ARCHIVE"
[ "$(skopeo inspect "oci-archive:$ARCHIVE" | jq -r .Digest)" = "$DIGEST" ] ||
	fail "the archive's digest is not the build's $DIGEST"
check_config() { # JQ_FILTER EXPECTED
	local got
	got=$(jq -c "$1" <<<"$config")
	[ "$got" = "$2" ] || fail "image config $1 is $got, want $2"
}
check_config .config.User "\"$IMAGE_USER:$IMAGE_USER\""
check_config .config.Entrypoint '["/usr/local/bin/muster"]'
check_config .config.Cmd '["manager"]'
check_config '.config.Labels["org.opencontainers.image.version"]' "\"$VERSION\""
check_config '.config.Labels["org.opencontainers.image.revision"]' "\"$rev\""
check_config '.config.Labels["org.opencontainers.image.source"] | length > 0' true
grep -qx "muster:x:$IMAGE_USER:$IMAGE_USER:.*" "$ROOTFS/etc/passwd" || fail "no user muster ($IMAGE_USER) in the image's /etc/passwd"

# --- 2. the binary runs from the image's root filesystem, as the image's user -------------------
out=$(chroot --userspec=$IMAGE_USER:$IMAGE_USER "$ROOTFS" /usr/local/bin/muster --version) ||
	fail "muster --version failed in the image"
[[ $out == "muster $VERSION (${rev:0:7}"*")" ]] || fail "muster --version printed '$out', want muster $VERSION (${rev:0:7}...)"

# --- 3. the image's manager in place of the cluster's ---------------------------------------------
# The manager's flags as the cluster runs them, with the --config file copied into the image's
# /tmp (a private bind mount, gone with the process; the cached root filesystem is not touched).
manager_pid=$(component_pid muster) || fail "the cluster's manager is not running"
cmdline_before=$(tr '\0' ' ' <"/proc/$manager_pid/cmdline")
read -r -a cluster_args <<<"${MUSTER_MANAGER_ARGS-}"
scratch=$(mktemp -d "$MUSTER_LOCAL_DIR/image-test.XXXXXX")
on_exit "rm -rf '$scratch'"
image_args=()
for ((i = 0; i < ${#cluster_args[@]}; i++)); do
	a=${cluster_args[i]}
	case $a in
	--config) cp "${cluster_args[i + 1]}" "$scratch/config.yaml" || fail "cannot copy ${cluster_args[i + 1]}"
		image_args+=(--config /tmp/config.yaml); i=$((i + 1)) ;;
	--config=*) cp "${a#--config=}" "$scratch/config.yaml" || fail "cannot copy ${a#--config=}"
		image_args+=(--config /tmp/config.yaml) ;;
	*) image_args+=("$a") ;;
	esac
done
# The admin kubeconfig with its certificates inlined: the files it names are outside the image.
k config view --raw --flatten --minify >"$scratch/kubeconfig"
chown -R "$IMAGE_USER:$IMAGE_USER" "$scratch"
chmod 700 "$scratch"

image_pid=
image_log=$MUSTER_LOCAL_DIR/logs/muster-image.log
stop_image_manager() {
	[ -n "$image_pid" ] || return 0
	local i
	kill -TERM "$image_pid" 2>/dev/null || true
	for ((i = 0; i < 60; i++)); do
		kill -0 "$image_pid" 2>/dev/null || break
		sleep 0.5
	done
	kill -KILL "$image_pid" 2>/dev/null || true
	wait "$image_pid" 2>/dev/null || true
	image_pid=
}
# restore_cluster_manager: the image's manager goes, and the cluster's comes back with the
# arguments it ran with. Idempotent; also the exit path of a failed or interrupted run.
MANAGER_ARGS_AT_START=${MUSTER_MANAGER_ARGS-}
restore_cluster_manager() {
	stop_image_manager
	component_pid muster >/dev/null || start_manager "$MANAGER_ARGS_AT_START"
}
trap "exit 143" TERM INT # timeout(1) ends a test with SIGTERM: exit through the EXIT trap
on_exit restore_cluster_manager

stop_manager || fail "could not stop the cluster's manager"
! component_pid muster >/dev/null || fail "the cluster's manager is still running"
unshare --mount --propagation private -- sh -c \
	'root=$1 dir=$2; shift 2; mount --bind "$dir" "$root/tmp" && exec chroot --userspec='$IMAGE_USER:$IMAGE_USER' "$root" "$@"' \
	sh "$ROOTFS" "$scratch" /usr/local/bin/muster manager --kubeconfig /tmp/kubeconfig \
	--webhook-port "$MUSTER_WEBHOOK_PORT" --health-port "$MUSTER_HEALTH_PORT" \
	--visibility-port "$MUSTER_VISIBILITY_PORT" "${image_args[@]}" \
	</dev/null >"$image_log" 2>&1 &
image_pid=$!
ready_or_gone() {
	! kill -0 "$image_pid" 2>/dev/null ||
		curl --noproxy '*' -sf --max-time 2 "http://127.0.0.1:$MUSTER_HEALTH_PORT/readyz" >/dev/null
}
image_fail() { tail -20 "$image_log" >&2; fail "$*"; }
wait_until 60 "the image's manager to be ready" ready_or_gone
kill -0 "$image_pid" 2>/dev/null || image_fail "the image's manager exited (log: $image_log)"
[ "$(stat -c %u "/proc/$image_pid")" = "$IMAGE_USER" ] || image_fail "the image's manager does not run as uid $IMAGE_USER"
[ "$(readlink "/proc/$image_pid/root")" = "$ROOTFS" ] || image_fail "the image's manager does not run in $ROOTFS"

make_namespace
make_queues e2e-image 8
job_yaml train lq 2 2 3s | k create -f - >/dev/null || image_fail "the Job was refused (the image manager's webhook)"
wait_until 30 "a Workload for the Job" has_workload train
wl=$(workload_of train)
wait_until 30 "admission by the image's manager" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
grep -q "\"workload admitted\",\"workload\":\"$NS/$wl\"" "$image_log" || image_fail "the image's manager did not log admitting $wl"
wait_until 90 "the Job to complete" field_is job train '{.status.conditions[?(@.type=="Complete")].status}' True
wait_until 30 "the Workload to finish" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Finished")].status}' True
wait_until 30 "the quota to be released" cq_usage_is e2e-image nvidia.com/gpu 0

# --- the cluster's manager back, as it was ----------------------------------------------------
stop_image_manager
restore_cluster_manager || fail "could not start the cluster's manager again (see $MUSTER_LOCAL_DIR/restart-$TEST_NAME.err)"
manager_pid=$(component_pid muster) || fail "the cluster's manager is not running after the restore"
cmdline_after=$(tr '\0' ' ' <"/proc/$manager_pid/cmdline")
[ "$cmdline_after" = "$cmdline_before" ] || fail "the cluster's manager came back as '$cmdline_after', was '$cmdline_before'"
# It admits again (its webhook is registered again, too: the Job is accepted and suspended).
job_yaml after lq 1 1 1s | k create -f - >/dev/null || fail "a Job was refused after the restore"
wait_until 30 "a Workload for the Job created after the restore" has_workload after
wait_until 30 "admission by the restored manager" field_is workloads.kueue.x-k8s.io "$(workload_of after)" '{.status.conditions[?(@.type=="Admitted")].status}' True
pass
