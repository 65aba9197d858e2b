#!/usr/bin/env bash
# Stop the local cluster that deploy/local/up.sh started: exactly the processes recorded in
# $MUSTER_LOCAL_DIR/pids/ (the manager first, etcd last), each with SIGTERM, then SIGKILL after
# MUSTER_STOP_TIMEOUT seconds (default 20). Safe to run when nothing is running.
#
#   deploy/local/down.sh [--purge]
#
# The cluster's state goes with it: etcd's data and the manager's state dir are deleted, so the
# next up.sh starts a fresh cluster. pki/ (reused, so the CA stays stable) and logs/ (for
# post-mortems) stay; --purge deletes the whole state directory.
set -euo pipefail

usage() { echo "usage: deploy/local/down.sh [--purge]"; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # REPO is read by lib.sh
REPO=$(cd "$here/../.." && pwd)
# shellcheck source=deploy/local/lib.sh
. "$here/lib.sh"

purge=0
while [ $# -gt 0 ]; do
	case $1 in
	--purge) purge=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "down.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
	esac
done

if [ ! -d "$DIR" ]; then
	log "nothing to stop ($DIR does not exist)"
	exit 0
fi
lock_dir

rc=0
for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
	stop_component "${COMPONENTS[i]}" || rc=1
done
[ "$rc" -eq 0 ] || { log "ERROR: some processes could not be stopped; state left in $DIR"; exit 1; }

# Report (but do not touch) any process that still refers to this state directory: only the PIDs
# recorded by up.sh are ours to kill, and a stray one means its PID file was lost.
strays=()
for d in /proc/[0-9]*; do
	pid=${d#/proc/}
	[ "$pid" != $$ ] || continue
	# A process may exit between the glob and the read: silence that.
	args=$({ tr '\0' '\n' <"$d/cmdline"; } 2>/dev/null) || continue
	argv0=${args%%$'\n'*}
	case ${argv0##*/} in
	etcd | kube-apiserver | kube-controller-manager | kube-scheduler | kwok | ray-operator | muster*)
		if [[ $args == *"$DIR/"* ]]; then strays+=("$pid"); fi
		;;
	esac
done
if [ ${#strays[@]} -gt 0 ]; then
	log "WARNING: processes not started by up.sh (no PID file) still use $DIR: ${strays[*]}"
	ps -o pid,args -p "$(IFS=,; echo "${strays[*]}")" >&2 || true
fi

if [ "$purge" = 1 ]; then
	rm -rf "$DIR"
	log "stopped; removed $DIR"
else
	rm -rf "$DIR/etcd" "$DIR/muster" "$DIR/kube-cache"
	log "stopped; cluster state deleted (pki/ and logs/ kept in $DIR)"
fi
