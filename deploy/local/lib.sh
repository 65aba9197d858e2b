# shellcheck shell=bash disable=SC2034 # PKI, LOGS, COMPONENTS: used by the scripts that source this
# Shared by deploy/local/up.sh and deploy/local/down.sh: where the local cluster keeps its state
# and how its processes are recognised and stopped. Sourced, never run; expects $REPO to be set.

DIR=${MUSTER_LOCAL_DIR:-$REPO/.devcluster}
# Absolute, because it ends up in kubeconfigs and command lines and processes run from $DIR.
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
PKI=$DIR/pki
LOGS=$DIR/logs
PIDS=$DIR/pids

# Start order. down.sh stops them in reverse, so the manager goes first and can still remove
# its webhook configuration while the apiserver is up, and etcd goes last. ray-dashboard (the
# fake Ray dashboard) and kuberay (the KubeRay operator) run only with MUSTER_WITH_KUBERAY=1.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok ray-dashboard kuberay muster)

log() { echo "${0##*/}: $*" >&2; }

# component_pid NAME: print the PID recorded for NAME if that process is still alive and really
# is ours. A PID file can outlive its process (reboot, kill -9, crash) and the PID can then be
# reused by an unrelated process, so besides liveness we require the command line to mention
# $DIR/, which every component's flags do (data dir, kubeconfig, certificates). Zombies count
# as dead.
component_pid() {
	local f=$PIDS/$1.pid pid stat state
	[ -f "$f" ] || return 1
	pid=$(cat "$f" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
	state=${stat##*) }
	state=${state%% *}
	case $state in Z | X) return 1 ;; esac
	tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$DIR/" || return 1
	echo "$pid"
}

# signal_component PID SIGNAL: every component is started with setsid, so it leads its own
# process group; signal the whole group so that any helper it forked goes too.
signal_component() {
	local pid=$1 sig=$2
	kill "-$sig" -- "-$pid" 2>/dev/null || kill "-$sig" "$pid" 2>/dev/null || true
}

# stop_component NAME: SIGTERM, wait up to MUSTER_STOP_TIMEOUT seconds (default 20), then
# SIGKILL. Safe when NAME is not running. Removes the PID file.
stop_component() {
	local name=$1 pid i timeout=${MUSTER_STOP_TIMEOUT:-20}
	if ! pid=$(component_pid "$name"); then
		rm -f "$PIDS/$name.pid"
		return 0
	fi
	log "stopping $name (pid $pid)"
	signal_component "$pid" TERM
	for ((i = 0; i < timeout * 10; i++)); do
		component_pid "$name" >/dev/null || break
		sleep 0.1
	done
	if component_pid "$name" >/dev/null; then
		log "$name (pid $pid) ignored SIGTERM for ${timeout}s; sending SIGKILL"
		signal_component "$pid" KILL
		for ((i = 0; i < 50; i++)); do
			component_pid "$name" >/dev/null || break
			sleep 0.1
		done
	fi
	# The group leader is gone; take along any child it left in its process group. The group ID
	# cannot have been reused while members remain, so this hits only our own processes.
	kill -KILL -- "-$pid" 2>/dev/null || true
	if component_pid "$name" >/dev/null; then
		log "ERROR: $name (pid $pid) is still alive after SIGKILL"
		return 1
	fi
	rm -f "$PIDS/$name.pid"
}

# lock_dir: serialise up.sh and down.sh on one state directory. fd 9 stays open for the rest of
# the script; up.sh closes it in every process it starts, so no component holds the lock.
lock_dir() {
	mkdir -p "$DIR"
	exec 9>"$DIR/.lock"
	if ! flock -w "${MUSTER_LOCK_TIMEOUT:-600}" 9; then
		log "ERROR: another up.sh or down.sh is working on $DIR (lock $DIR/.lock)"
		exit 1
	fi
}
