#!/usr/bin/env bash
# Start a local Kubernetes control plane for muster: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler (default profile) and kwok with simulated GPU nodes,
# all plain processes bound to 127.0.0.1, then muster's CRDs and (unless --no-manager) the
# muster manager. See deploy/local/README.md for the full description.
#
#   deploy/local/up.sh [--nodes FILE] [--no-manager]
#   export KUBECONFIG=$(deploy/local/up.sh --no-manager | tail -1)
#   MUSTER_WITH_KUBERAY=1 deploy/local/up.sh     # also the ray.io CRDs and the KubeRay operator
#
# The admin kubeconfig's path is the last line on stdout; all progress goes to stderr.
# Idempotent: with the cluster up and healthy a second run changes nothing; a component whose
# process died is started again (on the same etcd data). State lives in
# ${MUSTER_LOCAL_DIR:-<repo>/.devcluster}; deploy/local/down.sh stops everything.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: deploy/local/up.sh [--nodes FILE] [--no-manager]

  --nodes FILE   create the nodes in FILE instead of deploy/local/nodes.yaml
  --no-manager   do not build or start the muster manager (stops one an earlier run started)

Environment (defaults in brackets):
  MUSTER_LOCAL_DIR        state directory [<repo>/.devcluster]
  MUSTER_PORT_OFFSET      added to every default port below [0]
  MUSTER_ETCD_PORT [23790]  MUSTER_ETCD_PEER_PORT [23800]  MUSTER_API_PORT [16443]
  MUSTER_KCM_PORT [20257]   MUSTER_SCHED_PORT [20259]      MUSTER_KWOK_PORT [20261]
  MUSTER_WEBHOOK_PORT [19443]  MUSTER_HEALTH_PORT [18081]  MUSTER_METRICS_PORT [18082]
  MUSTER_VISIBILITY_PORT [18083] (HTTPS: positions, why, eta, history, usage)
  MUSTER_KUBERAY_HEALTH_PORT [20263]  MUSTER_KUBERAY_METRICS_PORT [20264]
  MUSTER_RAY_DASHBOARD_PORT [20265]
  MUSTER_WITH_KUBERAY=1   also install the ray.io CRDs and start the KubeRay operator and the fake
                          Ray dashboard (deploy/local/build-kuberay.sh builds it, cached); without
                          it nothing of KubeRay is built or started (a running one is left alone)
  MUSTER_BIN              muster binary to run (skips the cmake build)
  MUSTER_BUILD_DIR        cmake build directory [<repo>/build]
  MUSTER_CRD_DIR          CRDs to apply [<repo>/crds]
  MUSTER_ETCD_ARGS, MUSTER_APISERVER_ARGS, MUSTER_KCM_ARGS, MUSTER_SCHEDULER_ARGS,
  MUSTER_KWOK_ARGS, MUSTER_MANAGER_ARGS, MUSTER_KUBERAY_ARGS
                          extra whitespace-separated flags, e.g. --feature-gates=...
  K8S_VERSION             the Kubernetes version to build and run [1.37.2]; 1.35.4 is the oldest
                          muster supports (the webhook hold, no gang scheduling)
  MUSTER_GANG_GATES=0     leave GenericWorkload, WorkloadWithJob and scheduling.k8s.io/v1beta1
                          off (on 1.37+ they are on by default here, off upstream)
  MUSTER_MANAGER_TIMEOUT  seconds to wait for the manager's /readyz [60]
  MUSTER_KEEP_ON_FAILURE=1  leave what this run started running when it fails

The last line of stdout is the admin kubeconfig's path.
EOF
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$here/../.." && pwd)
# shellcheck source=deploy/local/lib.sh
. "$here/lib.sh"

nodes_file=$here/nodes.yaml
with_manager=1
while [ $# -gt 0 ]; do
	case $1 in
	--nodes) [ $# -ge 2 ] || { usage >&2; exit 2; }; nodes_file=$2; shift 2 ;;
	--nodes=*) nodes_file=${1#--nodes=}; shift ;;
	--no-manager) with_manager=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "up.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
	esac
done
[ -f "$nodes_file" ] || { log "ERROR: nodes file $nodes_file does not exist"; exit 2; }
nodes_file=$(cd "$(dirname "$nodes_file")" && pwd)/$(basename "$nodes_file")

# Ports: none is an upstream default, so a Debian etcd service, a kind cluster or another
# developer's cluster on the same host does not collide. A test run that needs its own cluster
# sets MUSTER_LOCAL_DIR and MUSTER_PORT_OFFSET (or the single ports).
off=${MUSTER_PORT_OFFSET:-0}
: "${MUSTER_ETCD_PORT:=$((23790 + off))}"
: "${MUSTER_ETCD_PEER_PORT:=$((23800 + off))}"
: "${MUSTER_API_PORT:=$((16443 + off))}"
: "${MUSTER_KCM_PORT:=$((20257 + off))}"
: "${MUSTER_SCHED_PORT:=$((20259 + off))}"
: "${MUSTER_KWOK_PORT:=$((20261 + off))}"
: "${MUSTER_WEBHOOK_PORT:=$((19443 + off))}"
: "${MUSTER_HEALTH_PORT:=$((18081 + off))}"
: "${MUSTER_METRICS_PORT:=$((18082 + off))}"
: "${MUSTER_VISIBILITY_PORT:=$((18083 + off))}"
: "${MUSTER_KUBERAY_HEALTH_PORT:=$((20263 + off))}"
: "${MUSTER_KUBERAY_METRICS_PORT:=$((20264 + off))}"
: "${MUSTER_RAY_DASHBOARD_PORT:=$((20265 + off))}"
PORT_VARS=(MUSTER_ETCD_PORT MUSTER_ETCD_PEER_PORT MUSTER_API_PORT MUSTER_KCM_PORT
	MUSTER_SCHED_PORT MUSTER_KWOK_PORT MUSTER_WEBHOOK_PORT MUSTER_HEALTH_PORT MUSTER_METRICS_PORT
	MUSTER_VISIBILITY_PORT
	MUSTER_KUBERAY_HEALTH_PORT MUSTER_KUBERAY_METRICS_PORT MUSTER_RAY_DASHBOARD_PORT)

KUBECONFIG_FILE=$DIR/admin.kubeconfig
# kubectl's discovery cache is keyed by host:port; a fresh cluster on the same port must not
# see the last one's CRDs, and CI's $HOME may not be writable.
export KUBECACHEDIR=$DIR/kube-cache
t0=$SECONDS

# --- failure handling ----------------------------------------------------------------------
STARTED=()  # components this run started; stopped again if the run fails
on_exit() {
	local rc=$? i
	[ "$rc" -ne 0 ] || return 0
	if [ "${MUSTER_KEEP_ON_FAILURE:-0}" = 1 ]; then
		[ ${#STARTED[@]} -eq 0 ] || log "MUSTER_KEEP_ON_FAILURE=1: leaving ${STARTED[*]} running (deploy/local/down.sh stops them)"
		return
	fi
	# Leave the host as we found it, so a failed run in CI leaves no process behind; the logs
	# stay in $LOGS.
	for ((i = ${#STARTED[@]} - 1; i >= 0; i--)); do stop_component "${STARTED[i]}" || true; done
	log "FAILED after $((SECONDS - t0))s; logs are in $LOGS"
}
trap on_exit EXIT

die() { log "ERROR: $*"; exit 1; }

# fail_component NAME REASON [nolog]: the component-specific failure report the issue asks for,
# with the tail of the component's log unless that log is not from this attempt ("nolog").
fail_component() {
	local name=$1 reason=$2 f=$LOGS/$1.log
	log "ERROR: $name failed to come up: $reason"
	if [ "${3:-}" = nolog ]; then
		:
	elif [ -s "$f" ]; then
		log "last 30 lines of $f:"
		tail -n 30 "$f" | sed 's/^/    /' >&2
	else
		log "($f is empty or missing)"
	fi
	exit 1
}

# --- prerequisites -------------------------------------------------------------------------
log "deploy/setup.sh"
"$REPO/deploy/setup.sh" >&2 || die "deploy/setup.sh failed (it installs the Debian packages; run it as root)"

log "deploy/local/build-k8s.sh (cached after the first build; a cold build takes ~20-30 min)"
BIN=$("$here/build-k8s.sh" | tail -n 1) || die "deploy/local/build-k8s.sh failed"
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
	[ -x "$BIN/$b" ] || die "$BIN/$b is missing; delete $BIN and run deploy/local/build-k8s.sh again"
done
with_kuberay=${MUSTER_WITH_KUBERAY:-0}
if [ "$with_kuberay" = 1 ]; then
	log "deploy/local/build-kuberay.sh (cached after the first build)"
	KUBERAY=$("$here/build-kuberay.sh" | tail -n 1) || die "deploy/local/build-kuberay.sh failed"
	[ -x "$KUBERAY/ray-operator" ] ||
		die "$KUBERAY/ray-operator is missing; delete $KUBERAY and run deploy/local/build-kuberay.sh again"
	command -v python3 >/dev/null || die "python3 (for deploy/local/fake-ray-dashboard.py) is missing; run deploy/setup.sh"
fi
KUBECTL=$BIN/kubectl
kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

if [ "$with_manager" = 1 ]; then
	if [ -n "${MUSTER_BIN:-}" ]; then
		if [ ! -f "$MUSTER_BIN" ] || [ ! -x "$MUSTER_BIN" ]; then
			die "MUSTER_BIN=$MUSTER_BIN is not an executable file"
		fi
	else
		build_dir=${MUSTER_BUILD_DIR:-$REPO/build}
		log "building muster in $build_dir"
		cmake -S "$REPO" -B "$build_dir" >&2 || die "cmake configure failed"
		cmake --build "$build_dir" --target muster -j2 >&2 || die "building muster failed"
		MUSTER_BIN=$build_dir/muster
	fi
	MUSTER_BIN=$(cd "$(dirname "$MUSTER_BIN")" && pwd)/$(basename "$MUSTER_BIN")
fi

# --- state directory -----------------------------------------------------------------------
lock_dir
mkdir -p "$LOGS" "$PIDS"

running=()
for c in "${COMPONENTS[@]}"; do
	if component_pid "$c" >/dev/null; then running+=("$c"); fi
done
if [ ${#running[@]} -eq 0 ]; then
	# Nothing is running: start a fresh cluster. etcd's data and the manager's state belong to
	# the cluster that down.sh (or a crash) ended, so they go; pki/ and logs/ stay.
	rm -rf "$DIR/etcd" "$DIR/muster" "$KUBECACHEDIR"
	rm -f "$PIDS"/*.pid
	log "starting a new cluster in $DIR"
else
	log "already running: ${running[*]}"
	# A running cluster keeps the ports it was started with; asking for others is a mistake.
	if [ -f "$DIR/cluster.env" ]; then
		while IFS='=' read -r k v; do
			k=${k#export }
			for p in "${PORT_VARS[@]}"; do
				if [ "$k" = "$p" ] && [ "$v" != "${!p}" ]; then
					die "the cluster in $DIR runs with $p=$v but this run asks for ${!p}; run deploy/local/down.sh first or use another MUSTER_LOCAL_DIR"
				fi
			done
		done <"$DIR/cluster.env"
	fi
fi

# port_busy PORT: true if something accepts connections on 127.0.0.1:PORT.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start NAME PORT... -- COMMAND...: run COMMAND detached, so it outlives this script and needs
# no terminal: setsid gives it its own session and process group (no SIGHUP from a closing
# terminal, and down.sh can signal the group); stdin is /dev/null and output goes to its log.
# The wrapper closes every inherited descriptor above 2 (our lock on fd 9, and whatever pipe a
# caller such as `$(up.sh | tail -1)` or a CI runner left open, which would otherwise never see
# EOF), writes its own PID (setsid may fork, so $! is not reliable) and execs the component.
start() {
	local name=$1 p i
	shift
	while [ "$1" != -- ]; do
		if port_busy "$1"; then
			fail_component "$name" "port 127.0.0.1:$1 is already in use by another process (see: ss -ltnp | grep :$1)" nolog
		fi
		shift
	done
	shift
	rm -f "$PIDS/$name.pid"
	# Keep the previous run's log for post-mortems.
	[ ! -f "$LOGS/$name.log" ] || mv -f "$LOGS/$name.log" "$LOGS/$name.log.1"
	log "starting $name"
	# shellcheck disable=SC2016 # $$ and $@ expand in the wrapper, not here
	(cd "$DIR" && exec setsid bash -c '
		for fd in /proc/$$/fd/*; do
			fd=${fd##*/}
			if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
		done
		echo $$ >"$0.tmp" && mv -f "$0.tmp" "$0" && exec "$@"' \
		"$PIDS/$name.pid" "$@" </dev/null >"$LOGS/$name.log" 2>&1) &
	for ((i = 0; i < 100; i++)); do
		[ -s "$PIDS/$name.pid" ] && break
		sleep 0.05
	done
	# Reading /proc/PID/cmdline while the wrapper execs the component can come back empty
	# (a CI run once declared kube-scheduler dead that way): look a few times before saying so.
	p=
	for ((i = 0; i < 20; i++)); do
		p=$(component_pid "$name") && break
		sleep 0.05
	done
	[ -n "$p" ] || fail_component "$name" "exited immediately"
	STARTED+=("$name")
	log "$name started (pid $p)"
}

# --fail-with-body: a failing health check shows why (e.g. /readyz's list of failed checks).
curl_() { curl --noproxy '*' -sS --fail-with-body --max-time 3 "$@"; }

healthy() {
	case $1 in
	etcd)
		local out
		out=$(curl_ "http://127.0.0.1:$MUSTER_ETCD_PORT/health") || { echo "$out"; return 1; }
		[[ $out == *'"health":"true"'* ]] || { echo "$out"; return 1; }
		;;
	kube-apiserver)
		curl_ --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
			"https://127.0.0.1:$MUSTER_API_PORT/readyz"
		;;
	# KCM and the scheduler serve /healthz with an in-memory self-signed certificate, and allow it
	# without authentication by default.
	kube-controller-manager) curl_ -k "https://127.0.0.1:$MUSTER_KCM_PORT/healthz" ;;
	kube-scheduler) curl_ -k "https://127.0.0.1:$MUSTER_SCHED_PORT/healthz" ;;
	# kwok's server (--server-address) starts only after its controllers did.
	kwok) curl_ "http://127.0.0.1:$MUSTER_KWOK_PORT/healthz" ;;
	ray-dashboard) curl_ "http://127.0.0.1:$MUSTER_RAY_DASHBOARD_PORT/healthz" ;;
	# controller-runtime's probe server; it answers once the manager started.
	kuberay) curl_ "http://127.0.0.1:$MUSTER_KUBERAY_HEALTH_PORT/readyz" ;;
	# Leading, and ready. A follower is ready once its caches are and it knows the hold, which
	# can be a moment before it takes the Lease; the leader is ready only once its hold is
	# installed. up.sh runs one manager, and a test that starts right after it (after another
	# manager was killed) must not find the webhooks still pointing at that one.
	muster)
		local metrics
		metrics=$(curl_ "http://127.0.0.1:$MUSTER_METRICS_PORT/metrics") || { echo "$metrics"; return 1; }
		[[ $metrics =~ (^|$'\n')muster_leader(\{[^}]*\})?\ 1($'\n'|$) ]] || { echo "not leading yet"; return 1; }
		curl_ "http://127.0.0.1:$MUSTER_HEALTH_PORT/readyz"
		;;
	esac
}

# wait_healthy NAME TIMEOUT: wait for NAME's health endpoint; fail early when its process dies.
wait_healthy() {
	local name=$1 timeout=$2 deadline=$((SECONDS + $2)) answer
	while :; do
		component_pid "$name" >/dev/null || fail_component "$name" "the process exited (pid file $PIDS/$name.pid)"
		if answer=$(healthy "$name" 2>&1); then
			log "$name is healthy"
			return 0
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			fail_component "$name" "no healthy answer within ${timeout}s; last answer: $(head -c 600 <<<"$answer")"
		fi
		sleep 0.5
	done
}

# ensure NAME TIMEOUT PORT... -- COMMAND...: start NAME unless it already runs, then wait for it.
ensure() {
	local name=$1
	if ! component_pid "$name" >/dev/null; then start "$name" "${@:3}"; fi
	wait_healthy "$name" "$2"
}
# launch NAME PORT... -- COMMAND...: like ensure, without waiting (for components that can start
# side by side).
launch() {
	local name=$1
	shift
	if ! component_pid "$name" >/dev/null; then start "$name" "$@"; fi
}

extra() { read -r -a "$1" <<<"${2:-}"; }  # extra VAR "flags": split on whitespace, no globbing
extra ETCD_ARGS "${MUSTER_ETCD_ARGS:-}"
extra APISERVER_ARGS "${MUSTER_APISERVER_ARGS:-}"
extra KCM_ARGS "${MUSTER_KCM_ARGS:-}"
extra SCHEDULER_ARGS "${MUSTER_SCHEDULER_ARGS:-}"
extra KWOK_ARGS "${MUSTER_KWOK_ARGS:-}"
extra MANAGER_ARGS "${MUSTER_MANAGER_ARGS:-}"
extra KUBERAY_ARGS "${MUSTER_KUBERAY_ARGS:-}"
# Kubernetes 1.37+: the Workload API (scheduling.k8s.io/v1beta1, off by default) with gang
# scheduling in kube-scheduler (GenericWorkload, Beta, off by default) and the Job controller's
# spec.scheduling (WorkloadWithJob, alpha), so an admitted Job binds all or nothing
# (gangScheduling in the manager's configuration). MUSTER_GANG_GATES=0 leaves them off.
k8s_minor=$("$BIN/kube-apiserver" --version | sed -n 's/^Kubernetes v1\.\([0-9]*\)\..*/\1/p')
if [ "${MUSTER_GANG_GATES:-1}" = 1 ] && [ "${k8s_minor:-0}" -ge 37 ]; then
	gates=--feature-gates=GenericWorkload=true,WorkloadWithJob=true
	APISERVER_ARGS=("$gates" --runtime-config=scheduling.k8s.io/v1beta1=true "${APISERVER_ARGS[@]}")
	KCM_ARGS=("$gates" "${KCM_ARGS[@]}")
	SCHEDULER_ARGS=("$gates" "${SCHEDULER_ARGS[@]}")
fi

# --- PKI: kept across clusters (down.sh leaves it), regenerated only if incomplete -------------
if [ ! -f "$PKI/.complete" ]; then
	log "generating certificates in $PKI"
	rm -rf "$PKI"
	mkdir -p "$PKI"
	(
		cd "$PKI"
		openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -keyout ca.key -out ca.crt \
			-subj "/CN=muster-devcluster-ca" \
			-addext "basicConstraints=critical,CA:TRUE" \
			-addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
		sign() { # sign NAME SUBJECT EXTENSIONS
			openssl req -new -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2"
			printf '%s\n' "$3" >"$1.ext"
			openssl x509 -req -sha256 -days 3650 -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
				-out "$1.crt" -extfile "$1.ext"
		}
		common='basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment'
		# Go checks SANs only, so the serving certificate needs IP:127.0.0.1.
		sign apiserver "/CN=kube-apiserver" "$common
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.96.0.1"
		# CN is the user name, O the group: system:masters passes every authorization check.
		sign admin "/O=system:masters/CN=muster-devcluster-admin" "$common
extendedKeyUsage=clientAuth"
		openssl genrsa -out sa.key 2048
		openssl rsa -in sa.key -pubout -out sa.pub
		openssl verify -CAfile ca.crt apiserver.crt admin.crt
		chmod 600 ./*.key
	) >"$LOGS/pki.log" 2>&1 || { tail -n 20 "$LOGS/pki.log" >&2; die "certificate generation failed (see $LOGS/pki.log)"; }
	touch "$PKI/.complete"
fi

# --- admin kubeconfig (certificate paths, so it stays small and readable) ----------------------
# write_kubeconfig FILE USER CREDENTIALS: a kubeconfig for the local apiserver as USER, whose
# user entry holds CREDENTIALS (indented YAML lines). Rewritten only on change, so a warm run
# touches nothing.
write_kubeconfig() {
	local tmp
	tmp=$(mktemp "$DIR/.kubeconfig.XXXXXX")
	cat >"$tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: muster-local
  cluster:
    server: https://127.0.0.1:$MUSTER_API_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: $2
  user:
$3
contexts:
- name: muster-local
  context: {cluster: muster-local, user: $2}
current-context: muster-local
EOF
	chmod 600 "$tmp"
	if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; fi
}
write_kubeconfig "$KUBECONFIG_FILE" muster-local-admin "    client-certificate: $PKI/admin.crt
    client-key: $PKI/admin.key"

# --- etcd --------------------------------------------------------------------------------------
# --unsafe-no-fsync: test data only (envtest does the same); it makes etcd much faster.
ensure etcd 30 "$MUSTER_ETCD_PORT" "$MUSTER_ETCD_PEER_PORT" -- "$BIN/etcd" \
	--name=node0 --data-dir="$DIR/etcd" \
	--listen-client-urls="http://127.0.0.1:$MUSTER_ETCD_PORT" \
	--advertise-client-urls="http://127.0.0.1:$MUSTER_ETCD_PORT" \
	--listen-peer-urls="http://127.0.0.1:$MUSTER_ETCD_PEER_PORT" \
	--initial-advertise-peer-urls="http://127.0.0.1:$MUSTER_ETCD_PEER_PORT" \
	--initial-cluster="node0=http://127.0.0.1:$MUSTER_ETCD_PEER_PORT" \
	--auto-compaction-retention=1 --quota-backend-bytes=8589934592 \
	--unsafe-no-fsync=true --logger=zap --log-outputs=stderr --log-level=warn \
	"${ETCD_ARGS[@]}"

# --- kube-apiserver ------------------------------------------------------------------------------
# --advertise-address: otherwise it is derived from the default route, and a sandbox without
#   one fails to start. --endpoint-reconciler-type=none: the `kubernetes` Service cannot have a
#   loopback endpoint. The service CIDR is bookkeeping only; nothing routes it.
# No admission flags: the default plugins include the webhook ones, and the manager's webhook is
# registered by URL (https://127.0.0.1:<port>/...), which needs no apiserver flag.
ensure kube-apiserver 120 "$MUSTER_API_PORT" -- "$BIN/kube-apiserver" \
	--advertise-address=127.0.0.1 --bind-address=127.0.0.1 --secure-port="$MUSTER_API_PORT" \
	--etcd-servers="http://127.0.0.1:$MUSTER_ETCD_PORT" \
	--tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
	--client-ca-file="$PKI/ca.crt" \
	--service-account-issuer=https://kubernetes.default.svc.cluster.local \
	--service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
	--service-cluster-ip-range=10.96.0.0/16 \
	--authorization-mode=Node,RBAC \
	--allow-privileged=true \
	--endpoint-reconciler-type=none \
	--cert-dir="$DIR/apiserver-certs" \
	--v=1 \
	"${APISERVER_ARGS[@]}"

# --- kube-controller-manager, kube-scheduler, kwok: independent of each other, start together ---
# KCM: all controllers (Job, garbage collector, ServiceAccounts, node lifecycle, which removes
# the not-ready taint once kwok reports a node Ready). No leader election: one instance.
launch kube-controller-manager "$MUSTER_KCM_PORT" -- "$BIN/kube-controller-manager" \
	--kubeconfig="$KUBECONFIG_FILE" \
	--bind-address=127.0.0.1 --secure-port="$MUSTER_KCM_PORT" \
	--leader-elect=false --controllers='*' \
	--service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
	--kube-api-qps=500 --kube-api-burst=1000 \
	--v=1 \
	"${KCM_ARGS[@]}"
# Scheduler: default profile, so no --config (which would make --kubeconfig and the QPS flags
# ignored).
launch kube-scheduler "$MUSTER_SCHED_PORT" -- "$BIN/kube-scheduler" \
	--kubeconfig="$KUBECONFIG_FILE" \
	--bind-address=127.0.0.1 --secure-port="$MUSTER_SCHED_PORT" \
	--leader-elect=false \
	--kube-api-qps=500 --kube-api-burst=1000 \
	--v=1 \
	"${SCHEDULER_ARGS[@]}"
# kwok: upstream's fast node and pod stages (copied next to the binaries by build-k8s.sh) plus
# every project-owned stage in deploy/local/kwok/. It manages only nodes annotated
# kwok.x-k8s.io/node=fake. --server-address serves /healthz (plain HTTP on loopback); no
# --node-ip/--node-port, so no kubelet-like API (kubectl logs/exec do not work). HOME points
# into $DIR because kwok also loads ~/.kwok/kwok.yaml, which must not leak into the cluster.
kwok_config=
for f in "$BIN"/kwok-stages/node-initialize.yaml "$BIN"/kwok-stages/node-heartbeat-with-lease.yaml \
	"$BIN"/kwok-stages/pod-ready.yaml "$BIN"/kwok-stages/pod-delete.yaml "$here"/kwok/*.yaml; do
	[ -f "$f" ] || die "kwok stage $f is missing"
	kwok_config=${kwok_config:+$kwok_config,}$f
done
mkdir -p "$DIR/kwok-home"
launch kwok "$MUSTER_KWOK_PORT" -- env HOME="$DIR/kwok-home" "$BIN/kwok" \
	--kubeconfig="$KUBECONFIG_FILE" \
	--config="$kwok_config" \
	--manage-all-nodes=false \
	--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
	--node-lease-duration-seconds=40 \
	--cidr=10.128.0.0/16 \
	--server-address="127.0.0.1:$MUSTER_KWOK_PORT" \
	"${KWOK_ARGS[@]}"

# --- CRDs (client-side apply, as the issue asks) --------------------------------------------------
crd_dir=${MUSTER_CRD_DIR:-$REPO/crds}
shopt -s nullglob
crd_files=()
for f in "$crd_dir"/*.yaml; do
	# crds/kustomization.yaml lists the same files for deploy/cluster.
	[ "$(basename "$f")" = kustomization.yaml ] || crd_files+=("$f")
done
shopt -u nullglob
crd_names=()
if [ ${#crd_files[@]} -eq 0 ]; then
	log "no *.yaml in $crd_dir; no CRDs to install"
else
	args=()
	for f in "${crd_files[@]}"; do args+=(-f "$f"); done
	log "applying ${#crd_files[@]} file(s) from $crd_dir"
	applied=$(kc apply "${args[@]}" -o name) || die "kubectl apply of $crd_dir failed (output above)"
	mapfile -t crd_names < <(grep '^customresourcedefinition' <<<"$applied" || true)
fi

# --- nodes -------------------------------------------------------------------------------------
# `kubectl create`, because node status is only accepted on create (server-side apply resets
# it). Nodes that already exist are left as they are, so a warm run changes nothing.
errs=$(mktemp)
if ! kc create -f "$nodes_file" >/dev/null 2>"$errs"; then
	if [ ! -s "$errs" ] || grep -v 'AlreadyExists' "$errs" >/dev/null; then
		cat "$errs" >&2
		rm -f "$errs"
		die "creating the nodes in $nodes_file failed"
	fi
fi
rm -f "$errs"

# --- wait for everything ------------------------------------------------------------------------
wait_healthy kube-controller-manager 60
wait_healthy kube-scheduler 60
wait_healthy kwok 60

if [ ${#crd_names[@]} -gt 0 ]; then
	kc wait --for=condition=Established --timeout=60s "${crd_names[@]}" >/dev/null ||
		die "CRDs from $crd_dir did not become Established within 60s"
	log "${#crd_names[@]} CRD(s) Established"
fi

# Every node kwok simulates must be Ready and rid of the not-ready taint (removed by KCM's node
# lifecycle controller), or pods would not schedule.
nodes_ready() {
	kc get nodes -o json | jq -r '
		[.items[] | select(.metadata.annotations["kwok.x-k8s.io/node"] == "fake")] as $n
		| [$n[] | select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))
			| select(all(.spec.taints[]?; .key != "node.kubernetes.io/not-ready"))] as $r
		| "\($r | length) \($n | length)"'
}
deadline=$((SECONDS + 120))
while :; do
	counts=$(nodes_ready 2>/dev/null || echo "? ?")
	read -r ready total <<<"$counts"
	if [[ $ready =~ ^[0-9]+$ ]] && [ "$ready" = "$total" ]; then
		log "$ready simulated node(s) Ready"
		break
	fi
	if [ "$SECONDS" -ge "$deadline" ]; then
		kc get nodes -o wide >&2 || true
		fail_component kwok "only $ready of $total simulated nodes became Ready without the not-ready taint within 120s (kwok or kube-controller-manager)"
	fi
	sleep 0.5
done

# Pods are rejected by ServiceAccount admission until KCM created the namespace's default SA.
deadline=$((SECONDS + 60))
until kc -n default get serviceaccount default >/dev/null 2>&1; do
	[ "$SECONDS" -lt "$deadline" ] ||
		fail_component kube-controller-manager "no ServiceAccount default/default after 60s"
	sleep 0.5
done

# --- KubeRay (MUSTER_WITH_KUBERAY=1 only) ---------------------------------------------------------
# The ray.io CRDs, a fake Ray dashboard and the KubeRay operator, for RayJob and RayCluster tests.
# Without MUSTER_WITH_KUBERAY=1 nothing here is built or started, and an operator an earlier run
# started is left alone (down.sh stops it with the rest).
if [ "$with_kuberay" = 1 ]; then
	# Server-side: the CRDs are 0.9-1.3 MB each, past the 256 KiB limit of client-side apply's
	# last-applied annotation. Unchanged CRDs are not written.
	args=()
	for f in "$KUBERAY"/crds/*.yaml; do args+=(-f "$f"); done
	kc apply --server-side --force-conflicts "${args[@]}" >/dev/null ||
		die "applying the ray.io CRDs from $KUBERAY/crds failed"
	kc wait --for=condition=Established --timeout=60s crd/rayclusters.ray.io crd/rayjobs.ray.io \
		crd/rayservices.ray.io >/dev/null || die "the ray.io CRDs did not become Established within 60s"
	# The operator asks a RayJob's Ray dashboard whether its Ray job finished; no Ray head runs
	# under kwok, so deploy/local/fake-ray-dashboard.py answers instead (see that file).
	ensure ray-dashboard 30 "$MUSTER_RAY_DASHBOARD_PORT" -- python3 "$here/fake-ray-dashboard.py" \
		--port "$MUSTER_RAY_DASHBOARD_PORT" --server "https://127.0.0.1:$MUSTER_API_PORT" \
		--ca "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key"
	# The operator as admin, like the other upstream components; no leader election: one instance.
	# Its dashboard client is a plain http.Client, so HTTP_PROXY sends its requests to
	# http://<head-svc>.<ns>.svc.cluster.local:8265 to the fake dashboard; the apiserver (https,
	# loopback) is never proxied. The NO_PROXY variables are cleared so the host's cannot divert
	# them.
	ensure kuberay 60 "$MUSTER_KUBERAY_HEALTH_PORT" "$MUSTER_KUBERAY_METRICS_PORT" -- env \
		HTTP_PROXY="http://127.0.0.1:$MUSTER_RAY_DASHBOARD_PORT" http_proxy= NO_PROXY= no_proxy= \
		"$KUBERAY/ray-operator" \
		--kubeconfig="$KUBECONFIG_FILE" \
		--metrics-addr="127.0.0.1:$MUSTER_KUBERAY_METRICS_PORT" \
		--health-probe-bind-address="127.0.0.1:$MUSTER_KUBERAY_HEALTH_PORT" \
		--enable-leader-election=false \
		--log-stdout-encoder=console \
		"${KUBERAY_ARGS[@]}"
fi

# --- the manager's identity: its ServiceAccount, bound only to config/rbac ------------------------
# The manager runs with a token of ServiceAccount muster-system/muster-manager, not as admin, so
# a permission missing from config/rbac/role.yaml fails the tests here as it would in a real
# cluster. `kubectl apply` of unchanged objects writes nothing, so a warm run changes nothing.
kc apply -f "$REPO/deploy/cluster/namespace.yaml" -f "$REPO/deploy/cluster/serviceaccount.yaml" \
	-f "$REPO/config/rbac/role.yaml" >/dev/null || die "applying the manager's ServiceAccount and config/rbac failed"
# The apiserver-side leader fence, applied once and never deleted: a kube-apiserver keeps a stale
# copy of the Lease for good once no binding names it (kubernetes#130887). It fences only
# pod-bound tokens, so it leaves the host process's token alone.
kc apply -f "$REPO/config/rbac/leader-fence.yaml" >/dev/null || die "cannot apply config/rbac/leader-fence.yaml"
# The token comes from a TokenRequest, bound to the ServiceAccount's UID (a token of an earlier
# cluster is refused). It lives 48 h, longer than any CI run or working session needs, and is
# renewed by a run that finds it more than 24 h old: the manager re-reads its tokenFile every
# minute, as client-go does for a projected token, so it picks up the new one without a restart.
# One that no longer authenticates (a new cluster) is replaced as well.
MANAGER_TOKEN=$DIR/manager.token
MANAGER_KUBECONFIG=$DIR/manager.kubeconfig
write_kubeconfig "$MANAGER_KUBECONFIG" muster-manager "    tokenFile: $MANAGER_TOKEN"
manager_whoami() {
	"$KUBECTL" --kubeconfig "$MANAGER_KUBECONFIG" auth whoami -o jsonpath='{.status.userInfo.username}' 2>/dev/null
}
if [ ! -s "$MANAGER_TOKEN" ] || [ -n "$(find "$MANAGER_TOKEN" -mmin +1440)" ] ||
	[ "$(manager_whoami)" != system:serviceaccount:muster-system:muster-manager ]; then
	tmp=$(mktemp "$DIR/.manager.token.XXXXXX")
	kc -n muster-system create token muster-manager --duration=48h >"$tmp" ||
		{ rm -f "$tmp"; die "cannot create a token for ServiceAccount muster-system/muster-manager"; }
	chmod 600 "$tmp"
	mv -f "$tmp" "$MANAGER_TOKEN" # atomic: the running manager never reads half a token
	log "new token for ServiceAccount muster-system/muster-manager in $MANAGER_TOKEN"
fi

# --- muster manager --------------------------------------------------------------------------------
if [ "$with_manager" = 1 ]; then
	# A binary rebuilt since the manager started (the PID file's age) means new code: restart it.
	if component_pid muster >/dev/null && [ "$MUSTER_BIN" -nt "$PIDS/muster.pid" ]; then
		log "$MUSTER_BIN changed since the manager started; restarting it"
		stop_component muster
	fi
	mkdir -p "$DIR/muster"
	# The manager registers its own webhook configuration; nothing is applied for it here.
	# The ledger lives in the state directory (<state-dir>/ledger.db).
	ensure muster "${MUSTER_MANAGER_TIMEOUT:-60}" "$MUSTER_WEBHOOK_PORT" "$MUSTER_HEALTH_PORT" "$MUSTER_METRICS_PORT" \
		"$MUSTER_VISIBILITY_PORT" -- "$MUSTER_BIN" manager \
		--kubeconfig "$MANAGER_KUBECONFIG" --state-dir "$DIR/muster" \
		--webhook-port "$MUSTER_WEBHOOK_PORT" --health-port "$MUSTER_HEALTH_PORT" \
		--metrics-port "$MUSTER_METRICS_PORT" --visibility-port "$MUSTER_VISIBILITY_PORT" \
		"${MANAGER_ARGS[@]}"
elif component_pid muster >/dev/null; then
	log "--no-manager: stopping the manager an earlier run started"
	stop_component muster
fi

# --- done ------------------------------------------------------------------------------------------
# cluster.env: for `source`, and for the port check of the next run.
tmp=$(mktemp "$DIR/.cluster.env.XXXXXX")
{
	echo "# written by deploy/local/up.sh"
	echo "export KUBECONFIG=$KUBECONFIG_FILE"
	echo "export KUBECTL=$KUBECTL"
	echo "export MUSTER_MANAGER_KUBECONFIG=$MANAGER_KUBECONFIG"
	echo "export MUSTER_LOCAL_DIR=$DIR"
	for p in "${PORT_VARS[@]}"; do echo "export $p=${!p}"; done
} >"$tmp"
if cmp -s "$tmp" "$DIR/cluster.env"; then rm -f "$tmp"; else mv -f "$tmp" "$DIR/cluster.env"; fi

if [ ${#STARTED[@]} -eq 0 ]; then
	log "cluster already up; nothing started ($((SECONDS - t0))s)"
else
	log "started ${STARTED[*]} ($((SECONDS - t0))s)"
fi
down=deploy/local/down.sh
[ -z "${MUSTER_LOCAL_DIR:-}" ] || down="MUSTER_LOCAL_DIR=$DIR $down"
log "kubectl: $KUBECTL"
log "env: source $DIR/cluster.env   stop: $down"
echo "$KUBECONFIG_FILE"
