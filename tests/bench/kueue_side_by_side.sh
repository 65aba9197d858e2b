#!/usr/bin/env bash
# Side-by-side benchmark of muster against Kueue v0.17.0 on fresh local control planes
# (issue 8 §4). Opt-in: tests/run.sh does not call it. See tests/bench/README.md, (e).
#
#   tests/bench/kueue_side_by_side.sh [--preset smoke|scaled|full|large|none] [--scale F]
#                                     [--jobs N] [--rounds N] [--muster BIN] [--only kueue|muster]
#                                     [--results DIR] ...
#
# Cases, each run alternately under Kueue and muster (K, M, K, M, ...), every run on its own
# fresh cluster (deploy/local/up.sh --no-manager):
#   baseline  Kueue's scheduler-performance runner (as Kueue ships it: server-side apply for
#             Workload status) with Kueue's baseline generator shape, or its large-scale shape
#             (--preset large); Kueue runs as its users run it: its full manager at --kueue-qps
#             (--kueue-runner-manager minimal: minimalkueue at 50/100, as Kueue's harness does).
#   jobs      --jobs N suspended batch/v1 Jobs into one LocalQueue/ClusterQueue that fits them
#             all; Kueue runs as its full manager (batch/job integration, its webhooks).
#             Time from the first and from the last create to all N Workloads Admitted.
#   backlog   the same N Jobs created before the manager starts; time from the manager's start
#             to all N Admitted.
# Per run: wall time, time to admission (mean, p95) per class, ClusterQueue usage, manager CPU
# seconds and VmHWM, apiserver writes per kind (apiserver_request_total). At the end one table
# per case with both managers and muster/Kueue ratios. Raw outputs stay in the results dir.
#
# All traffic is to 127.0.0.1; every wait is bounded; managers, runner and clusters are stopped
# on exit.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: tests/bench/kueue_side_by_side.sh [options]

  --preset P        baseline shape: smoke (1 cohort x 3 ClusterQueues, 300 Workloads),
                    scaled (1 cohort x 6, 3,000), full (Kueue's baseline: 5 x 6, 15,000),
                    large (Kueue's large-scale shape: 10 x 100, 50,000; see --scale),
                    none (no baseline case) [scaled]
  --scale F         large only: 10 x F cohorts (rounded, at least 1), each of 100
                    ClusterQueues with 50 Workloads (35 small, 11 medium, 4 large), so the
                    per-queue shape and the contention in a cohort stay Kueue's [1]:
                      1   = 10 cohorts, 1,000 ClusterQueues, 50,000 Workloads (Kueue's)
                      0.2 =  2 cohorts,   200 ClusterQueues, 10,000 Workloads
                      0.1 =  1 cohort,    100 ClusterQueues,  5,000 Workloads (the least:
                            any F below 0.15)
  --jobs N          also run the Job path (live and backlog) with N Jobs [0: off]
  --rounds N        rounds of (Kueue, muster) per case [2]
  --only M          run only kueue or only muster
  --muster BIN      muster binary to test [build <repo>/build-rel, RelWithDebInfo]
  --muster-config F muster's manager config [generated: placement.nodeFeasibility: false]
  --results DIR     where raw outputs go [~/.cache/muster/bench-results/<timestamp>]
  --port-offset N   MUSTER_PORT_OFFSET of the benchmark clusters [3500]
  --timeout D       runner's --timeout (Go duration) [smoke 5m, scaled 30m, full 60m,
                    large 30m + 150m per 10 cohorts: 45m at --scale 0.1, 180m at 1]
  --job-timeout S   seconds to wait for all Jobs admitted [900]
  --kueue-qps Q/B   client QPS and burst of Kueue's full manager (the Job path) [300/500:
                    Kueue's defaults since v0.19 and muster's; v0.17 shipped 50/100]
  --kueue-runner-manager minimal|full
                    Kueue's manager under the runner (baseline and large presets): full is
                    Kueue's manager as its users run it, at --kueue-qps; minimal is
                    minimalkueue, as Kueue's own perf harness runs it, with its hard-coded
                    client QPS/burst 50/100 [full]

Environment: MUSTER_CACHE (cache root, default ~/.cache/muster), KUEUE_VERSION (0.17.0).
EOF
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$here/../.." && pwd)

preset=scaled
scale=
jobs=0
rounds=2
only=
muster_bin=
muster_config=
results=
port_offset=3500
runner_timeout=
job_timeout=900
kueue_qps=300/500
kueue_runner_manager=full
while [ $# -gt 0 ]; do
	case $1 in
	--preset) preset=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--muster) muster_bin=$2; shift 2 ;;
	--muster-config) muster_config=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	--port-offset) port_offset=$2; shift 2 ;;
	--timeout) runner_timeout=$2; shift 2 ;;
	--job-timeout) job_timeout=$2; shift 2 ;;
	--kueue-qps) kueue_qps=$2; shift 2 ;;
	--kueue-runner-manager) kueue_runner_manager=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "kueue_side_by_side.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
	esac
done
case $preset in smoke | scaled | full | large | none) ;; *) echo "bad --preset $preset" >&2; exit 2 ;; esac
case $only in '' | kueue | muster) ;; *) echo "bad --only $only" >&2; exit 2 ;; esac
[[ $jobs =~ ^[0-9]+$ && $rounds =~ ^[1-9][0-9]*$ && $port_offset =~ ^[0-9]+$ && $job_timeout =~ ^[0-9]+$ ]] ||
	{ echo "--jobs, --rounds, --port-offset and --job-timeout take integers" >&2; exit 2; }
case $kueue_runner_manager in minimal | full) ;; *) echo "bad --kueue-runner-manager $kueue_runner_manager" >&2; exit 2 ;; esac
[[ $kueue_qps =~ ^[1-9][0-9]*/[1-9][0-9]*$ ]] || { echo "--kueue-qps wants QPS/BURST, not '$kueue_qps'" >&2; exit 2; }
[ "$preset" != none ] || [ "$jobs" -gt 0 ] || { echo "nothing to run (--preset none without --jobs)" >&2; exit 2; }
# The large-scale shape: Kueue's 10 cohorts scaled by --scale, 100 ClusterQueues and 5,000
# Workloads in each.
if [ "$preset" = large ]; then
	[[ ${scale:=1} =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v f="$scale" 'BEGIN { exit !(f > 0) }' ||
		{ echo "--scale wants a positive number, not '$scale'" >&2; exit 2; }
	large_cohorts=$(awk -v f="$scale" 'BEGIN { c = int(10 * f + 0.5); print (c < 1 ? 1 : c) }')
	large_shape="$large_cohorts cohort(s) x 100 ClusterQueues x 50 = $((large_cohorts * 5000)) Workloads"
else
	[ -z "$scale" ] || { echo "--scale is for --preset large only" >&2; exit 2; }
fi
if [ -z "$runner_timeout" ]; then
	case $preset in
	smoke) runner_timeout=5m ;;
	scaled) runner_timeout=30m ;;
	large) runner_timeout=$((30 + 15 * large_cohorts))m ;;
	*) runner_timeout=60m ;;
	esac
fi

log() { echo "[$(date +%H:%M:%S)] side-by-side: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { echo "$EPOCHREALTIME"; }
# sub A B: B - A in seconds, 2 decimals
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

cache_root=${MUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/muster}
[ -n "$results" ] || results=$cache_root/bench-results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$results"
results=$(cd "$results" && pwd)
CL=$results/cluster          # MUSTER_LOCAL_DIR of every run (down.sh wipes etcd between runs)
HZ=$(getconf CLK_TCK)

# --- ports: those up.sh derives from the offset, plus the managers' own --------------------------
export MUSTER_LOCAL_DIR=$CL MUSTER_PORT_OFFSET=$port_offset
API_PORT=$((16443 + port_offset))
WEBHOOK_PORT=$((19443 + port_offset))
HEALTH_PORT=$((18081 + port_offset))

# --- binaries -------------------------------------------------------------------------------------
log "deploy/local/build-k8s.sh"
K8S_BIN=$("$REPO/deploy/local/build-k8s.sh" | tail -1)
KUBECTL=$K8S_BIN/kubectl
# Kueue's tree is needed for Kueue runs and, for the baseline, for its runner.
if [ "$only" != muster ] || [ "$preset" != none ]; then
	log "tests/bench/build-kueue.sh"
	KUEUE=$("$here/build-kueue.sh" | tail -1)
	KUEUE_SRC=$KUEUE/src
fi
if [ "$only" != kueue ]; then
	if [ -z "$muster_bin" ]; then
		log "building muster (RelWithDebInfo, no sanitizers) in $REPO/build-rel"
		cmake -S "$REPO" -B "$REPO/build-rel" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMUSTER_SANITIZE=OFF >&2
		cmake --build "$REPO/build-rel" --target muster -j"$(nproc)" >&2
		muster_bin=$REPO/build-rel/muster
	fi
	[ -x "$muster_bin" ] || die "--muster $muster_bin is not executable"
	muster_bin=$(cd "$(dirname "$muster_bin")" && pwd)/$(basename "$muster_bin")
	if [ -z "$muster_config" ]; then
		muster_config=$results/muster-config.yaml
		cat >"$muster_config" <<'EOF'
# Written by tests/bench/kueue_side_by_side.sh: quota alone decides admission, as in Kueue
# (the baseline's Workloads have no pods, and Kueue has no node feasibility check), and
# waitForPodsReady is off, as in Kueue v0.17's shipped configuration (Kueue turned it on by
# default in v0.19; on, muster writes each Workload's PodsReady condition).
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  enable: false
placement:
  nodeFeasibility: false
EOF
	fi
	muster_config=$(cd "$(dirname "$muster_config")" && pwd)/$(basename "$muster_config")
fi

# --- the baseline generator config: Kueue's baseline file, scaled down by editing counts ------------
# edit FILE 'SED-EXPR' ...: apply each expression and fail if one of them changed nothing, so a
# change to Kueue's file cannot silently produce another shape.
gen_config() { # PRESET OUT
	[ "$1" != large ] || { gen_config_large "$2"; return; }
	local src=$KUEUE_SRC/test/performance/scheduler/configs/baseline/generator.yaml e
	cp "$src" "$2"
	local -a edits=()
	case $1 in
	full) ;;
	scaled) edits=('s/^    count: 5$/    count: 1/') ;;
	smoke) edits=('s/^    count: 5$/    count: 1/' 's/^      count: 6$/      count: 3/'
		's/^      - count: 350$/      - count: 70/' 's/^      - count: 100$/      - count: 20/'
		's/^      - count: 50$/      - count: 10/') ;;
	esac
	for e in "${edits[@]}"; do
		cp "$2" "$2.prev"
		sed -i "$e" "$2"
		! cmp -s "$2" "$2.prev" || die "editing $src with '$e' changed nothing: has Kueue's file changed?"
	done
	rm -f "$2.prev"
}

# Kueue's large-scale shape (test/performance/scheduler/configs/large-scale/generator.yaml in
# Kueue's repository after v0.17.0, its 1,000-ClusterQueue version), written out here in the
# runner's schema because v0.17.0's tree lacks it: per ClusterQueue 35 small, 11 medium and
# 4 large Workloads, quota and preemption as in the baseline. Only the cohort count scales.
gen_config_large() { # OUT
	cat >"$1" <<EOF
# Written by tests/bench/kueue_side_by_side.sh --preset large --scale $scale: $large_shape.
cohorts:
  - className: cohort
    count: $large_cohorts
    queuesSets:
    - className: cq
      count: 100
      nominalQuota: 20
      borrowingLimit: 100
      reclaimWithinCohort: Any
      withinClusterQueue: LowerPriority
      workloadsSets:
      - count: 35
        creationIntervalMs: 60
        workloads:
        - className: small
          runtimeMs: 150
          priority: 50
          request: 1
      - count: 11
        creationIntervalMs: 300
        workloads:
        - className: medium
          runtimeMs: 350
          priority: 100
          request: 5
      - count: 4
        creationIntervalMs: 700
        workloads:
        - className: large
          runtimeMs: 700
          priority: 200
          request: 20
EOF
}

# --- process bookkeeping and cleanup ----------------------------------------------------------------
MGR_PID= RUNNER_PID= SAMPLER_PID= CLUSTER_UP=0
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
# stop_pid PID SIGNAL SECONDS: signal, wait, then SIGKILL.
stop_pid() {
	local pid=$1 i
	alive "$pid" || return 0
	kill "-$2" "$pid" 2>/dev/null || true
	for ((i = 0; i < $3 * 10; i++)); do alive "$pid" || return 0; sleep 0.1; done
	log "pid $pid ignored SIG$2 for $3 s; SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
cluster_down() {
	[ "$CLUSTER_UP" = 1 ] || return 0
	"$REPO/deploy/local/down.sh" >"$CL/down.log" 2>&1 || { log "down.sh failed:"; cat "$CL/down.log" >&2; }
	CLUSTER_UP=0
}
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	stop_pid "$SAMPLER_PID" TERM 5
	stop_pid "$RUNNER_PID" INT 20
	stop_pid "$MGR_PID" INT 30
	cluster_down
	[ "$rc" -eq 0 ] || log "exiting with status $rc; raw outputs in $results"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

kc() { "$KUBECTL" --kubeconfig "$KC" "$@"; }
curl_api() { # PATH [CURL-ARGS...]: GET from the benchmark cluster's apiserver as admin
	curl --noproxy '*' -sS --fail --max-time 30 --cacert "$CL/pki/ca.crt" \
		--cert "$CL/pki/admin.crt" --key "$CL/pki/admin.key" "${@:2}" "https://127.0.0.1:$API_PORT$1"
}

# cluster_up MANAGER: a fresh cluster with that manager's CRDs; sets KC.
cluster_up() {
	local crd_dir=$REPO/crds
	if [ "$1" = kueue ]; then crd_dir=$results/no-crds; mkdir -p "$crd_dir"; fi
	CLUSTER_UP=1
	KC=$(MUSTER_CRD_DIR=$crd_dir "$REPO/deploy/local/up.sh" --no-manager 2>"$RUN/up.log" | tail -1) ||
		{ tail -30 "$RUN/up.log" >&2; die "up.sh failed (log: $RUN/up.log)"; }
	if [ "$1" = kueue ]; then
		# Nothing of muster in Kueue's cluster: up.sh applies muster's leader fence, whose
		# Lease lookup (failurePolicy Fail) refused 12 of the runner's Workload creates under
		# load in a large-preset run (results/side-by-side.md, 2026-11-29), failing the run.
		kc delete validatingadmissionpolicybinding/muster-leader-fence \
			validatingadmissionpolicy/muster-leader-fence --ignore-not-found >>"$RUN/up.log" 2>&1 ||
			die "deleting muster's leader fence from Kueue's cluster failed"
		# Kueue's Workload CRD is too big for client-side apply's last-applied annotation.
		kc apply --server-side -f "$KUEUE_SRC/config/components/crd/bases" >"$RUN/crds.log" 2>&1 ||
			{ cat "$RUN/crds.log" >&2; die "applying Kueue's CRDs failed"; }
		kc wait --for=condition=Established --timeout=60s --all crd >/dev/null ||
			die "Kueue's CRDs did not become Established"
	fi
}

# A self-signed serving certificate for 127.0.0.1 (Kueue's webhook and metrics servers).
make_cert() { # DIR
	mkdir -p "$1"
	[ -s "$1/tls.crt" ] && return 0
	openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 30 -keyout "$1/tls.key" -out "$1/tls.crt" \
		-subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
		-addext "basicConstraints=critical,CA:TRUE" >/dev/null 2>&1 || die "openssl failed"
}

# Kueue's own webhook configurations (config/components/webhook/manifests.yaml), limited to the
# handlers the full manager serves here (Kueue's objects and batch/v1 Jobs), pointed by URL at
# the manager on 127.0.0.1 instead of at an in-cluster Service.
install_kueue_webhooks() {
	make_cert "$results/kueue-certs"
	kc create --dry-run=client -o json -f "$KUEUE_SRC/config/components/webhook/manifests.yaml" |
		jq -s --arg base "https://127.0.0.1:$WEBHOOK_PORT" --arg ca "$(base64 -w0 "$results/kueue-certs/tls.crt")" '
			{apiVersion: "v1", kind: "List", items: .}
			| .items |= map(.metadata.name = "kueue-bench-" + .metadata.name
				| .webhooks |= map(select(.clientConfig.service.path | test("batch-v1-job$|kueue-x-k8s-io"))
					| .clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca}))' \
		>"$RUN/kueue-webhooks.json"
	kc apply -f "$RUN/kueue-webhooks.json" >/dev/null || die "installing Kueue's webhook configurations failed"
}

# start_manager MANAGER FLAVOUR: FLAVOUR is minimal (Kueue's minimalkueue) or full. Sets MGR_PID
# and MGR_T0 (epoch seconds at the exec), and waits until the manager is ready.
start_manager() {
	local deadline=$((SECONDS + 120))
	: >"$RUN/manager.log"
	if [ "$1" = muster ]; then
		rm -rf "$RUN/muster-state"
		mkdir -p "$RUN/muster-state"
		# A muster with /metrics listens on :8080 unless told otherwise; older ones lack the flag.
		metrics_flag=()
		if "$muster_bin" --help 2>/dev/null | grep -q -- --metrics-port; then
			metrics_flag=(--metrics-port $((18082 + port_offset)))
			# Older binaries (before the visibility endpoint) don't know the flag.
			if "$muster_bin" --help 2>/dev/null | grep -q -- --visibility-port; then
				metrics_flag+=(--visibility-port 0)
			fi
		fi
		MGR_T0=$(now)
		"$muster_bin" manager --kubeconfig "$KC" --config "$muster_config" --state-dir "$RUN/muster-state" \
			--webhook-port "$WEBHOOK_PORT" --health-port "$HEALTH_PORT" "${metrics_flag[@]}" </dev/null >"$RUN/manager.log" 2>&1 &
		MGR_PID=$!
		until curl --noproxy '*' -sf --max-time 2 "http://127.0.0.1:$HEALTH_PORT/readyz" >/dev/null 2>&1; do
			alive "$MGR_PID" || { tail -20 "$RUN/manager.log" >&2; die "muster exited before it was ready"; }
			[ "$SECONDS" -lt "$deadline" ] || die "muster not ready within 120 s"
			sleep 0.2
		done
	elif [ "$2" = minimal ]; then
		MGR_T0=$(now)
		"$KUEUE/bin/minimalkueue" --kubeconfig "$KC" --zap-log-level=info </dev/null >"$RUN/manager.log" 2>&1 &
		MGR_PID=$!
	else
		make_cert "$results/kueue-certs"
		cat >"$RUN/kueue-config.yaml" <<EOF
# Kueue's full manager out of cluster: no leader election, no internal cert management (so no
# in-cluster Secret/Service), webhook server on 127.0.0.1 with a self-signed certificate, metrics
# off, only the batch/job integration; concurrency as Kueue ships it, client QPS and burst as
# --kueue-qps says (muster's, by default, so that both managers have the same write budget).
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:$HEALTH_PORT
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: $WEBHOOK_PORT
  certDir: $results/kueue-certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks: ["batch/job"]
# as in Kueue's shipped config/components/manager/controller_manager_config.yaml
controller:
  groupKindConcurrency:
    Job.batch: 5
    Pod: 5
    Workload.kueue.x-k8s.io: 5
    LocalQueue.kueue.x-k8s.io: 1
    Cohort.kueue.x-k8s.io: 1
    ClusterQueue.kueue.x-k8s.io: 1
    ResourceFlavor.kueue.x-k8s.io: 1
clientConnection:
  qps: ${kueue_qps%/*}
  burst: ${kueue_qps#*/}
EOF
		MGR_T0=$(now)
		# Without internal cert management the manager reads its metrics certificate from the
		# fixed path /etc/kueue/metrics/certs, even with metrics off. Give it one in a private
		# mount namespace (an overlay on /etc that only this process sees); exec keeps the PID.
		mkdir -p "$RUN/etc-upper/kueue/metrics/certs" "$RUN/etc-work"
		cp "$results/kueue-certs/tls.crt" "$results/kueue-certs/tls.key" "$RUN/etc-upper/kueue/metrics/certs/"
		unshare -m --propagation private sh -c '
			mount -t overlay overlay -o "lowerdir=/etc,upperdir=$0/etc-upper,workdir=$0/etc-work" /etc || exit 97
			exec "$@"' "$RUN" "$KUEUE/bin/manager" --config "$RUN/kueue-config.yaml" \
			--feature-gates=VisibilityOnDemand=false --kubeconfig "$KC" --zap-log-level=info \
			</dev/null >"$RUN/manager.log" 2>&1 &
		MGR_PID=$!
	fi
	if [ "$1" = kueue ]; then
		# Ready when the Workload reconciler's workers run (and, for the full manager, /readyz).
		until grep -Eq 'workload-reconciler.*Starting workers|Starting workers.*(workload-reconciler|"controller": ?"workload")' "$RUN/manager.log"; do
			alive "$MGR_PID" || { tail -20 "$RUN/manager.log" >&2; die "Kueue exited before it was ready"; }
			[ "$SECONDS" -lt "$deadline" ] || die "Kueue not ready within 120 s"
			sleep 0.2
		done
		if [ "$2" = full ]; then
			until curl --noproxy '*' -sf --max-time 2 "http://127.0.0.1:$HEALTH_PORT/readyz" >/dev/null 2>&1; do
				alive "$MGR_PID" || die "Kueue exited before it was ready"
				[ "$SECONDS" -lt "$deadline" ] || die "Kueue /readyz not ready within 120 s"
				sleep 0.2
			done
		fi
	fi
	MGR_READY=$(now)
	log "$1 ready (pid $MGR_PID) after $(sub "$MGR_T0" "$MGR_READY") s"
	# One sample per second: t, CPU seconds (utime+stime), VmRSS and VmHWM in KiB.
	(
		while kill -0 "$MGR_PID" 2>/dev/null; do
			sample "$MGR_PID" || break
			sleep 1
		done
	) >"$RUN/samples.tsv" 2>/dev/null &
	SAMPLER_PID=$!
}
sample() { # PID: one line "epoch cpu_s rss_kib hwm_kib"
	local stat rss hwm f
	stat=$(cat "/proc/$1/stat") || return 1
	f=${stat##*) }
	read -r -a f <<<"$f"
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$1/status") || return 1
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$1/status") || return 1
	# fields after "comm)": state is index 0, utime 11, stime 12
	echo "$EPOCHREALTIME $(awk -v u="${f[11]}" -v s="${f[12]}" -v hz="$HZ" 'BEGIN { printf "%.2f", (u + s) / hz }') $rss $hwm"
}

stop_manager() {
	stop_pid "$SAMPLER_PID" TERM 5
	SAMPLER_PID=
	stop_pid "$MGR_PID" INT 30
	MGR_PID=
}

# snapshot: the manager's CPU and peak memory, and the apiserver's request counters, now.
snapshot() {
	local s
	s=$(sample "$MGR_PID") || s="0 NA NA NA"
	read -r _ SNAP_CPU _ SNAP_HWM <<<"$s"
	curl_api /metrics >"$RUN/apiserver-metrics.txt" || log "WARNING: could not read the apiserver's /metrics"
	# verb resource subresource code count, summed over the other labels
	awk '/^apiserver_request_total\{/ {
			lab = $0; sub(/^[^{]*\{/, "", lab); sub(/\}.*$/, "", lab)
			n = split(lab, kv, ","); v = r = s = c = g = ""
			for (i = 1; i <= n; i++) {
				split(kv[i], p, "="); gsub(/"/, "", p[2])
				if (p[1] == "verb") v = p[2]; else if (p[1] == "resource") r = p[2]
				else if (p[1] == "subresource") s = p[2]; else if (p[1] == "code") c = p[2]
				else if (p[1] == "group") g = p[2]
			}
			# The Workloads and PodGroups of Kubernetes 1.37 (gang objects made by the
			# Job controller) are not Kueue Workloads: counted apart, with their group.
			if (g == "scheduling.k8s.io") r = r "." g
			t[v " " r " " (s == "" ? "-" : s) " " c] += $NF
		}
		END { for (k in t) print k, t[k] }' "$RUN/apiserver-metrics.txt" | sort >"$RUN/requests.txt"
}
# writes VERBS RESOURCE SUBRESOURCE [CODEREGEX]: summed request count
writes() {
	awk -v verbs="$1" -v r="$2" -v s="$3" -v code="${4:-.}" '
		BEGIN { n = split(verbs, a, ","); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
		ok[$1] && ($2 == r || r == "*") && ($3 == s || s == "*") && $4 ~ code { t += $5 }
		END { print t + 0 }' "$RUN/requests.txt"
}
W=PUT,PATCH,APPLY
record_common() { # into $RUN/result.env
	{
		echo "manager_cpu_s=$SNAP_CPU"
		echo "manager_vmhwm_mib=$(awk -v k="$SNAP_HWM" 'BEGIN { if (k == "NA") print "NA"; else printf "%.1f", k / 1024 }')"
		echo "cq_status_writes=$(writes $W clusterqueues status)"
		echo "lq_status_writes=$(writes $W localqueues status)"
		echo "wl_status_writes=$(writes $W workloads status)"
		echo "wl_status_apply=$(writes APPLY workloads status)"
		echo "wl_status_patch_put=$(writes PUT,PATCH workloads status)"
		echo "wl_writes_main=$(writes $W workloads -)"
		echo "wl_creates=$(writes POST workloads - '^2')"
		echo "wl_creates_refused=$(writes POST workloads - '^[45]')"
		echo "job_writes=$(writes $W jobs '*')"
		echo "event_writes=$(writes POST,PATCH events -)"
		echo "conflicts_409=$(writes POST,$W,DELETE '*' '*' '^409$')"
		echo "write_429_5xx=$(writes POST,$W,DELETE '*' '*' '^(429|5..)$')"
	} >>"$RUN/result.env"
}

# --- the baseline case -------------------------------------------------------------------------
run_baseline() { # MANAGER
	local gen=$results/generator-$preset.yaml t_start t_end rc=0
	cluster_up "$1"
	if [ "$1" = kueue ]; then start_manager kueue "$kueue_runner_manager"; else start_manager muster; fi
	mkdir -p "$RUN/runner"
	t_start=$(now)
	# cwd inside Kueue's tree: the runner's test utilities look for Kueue's Makefile upwards.
	(cd "$KUEUE_RUNNER_CWD" && KUBECONFIG=$KC exec "$KUEUE_RUNNER" --o "$RUN/runner" --generatorConfig="$gen" \
		--qps=1000 --burst=2000 --timeout="$runner_timeout" --zap-log-level=info) \
		</dev/null >"$RUN/runner.log" 2>&1 &
	RUNNER_PID=$!
	local limit=$(( $(dur_s "$runner_timeout") + 300 )) t0=$SECONDS
	while alive "$RUNNER_PID" && [ ! -s "$RUN/runner/summary.yaml" ]; do
		[ $((SECONDS - t0)) -lt "$limit" ] || { log "runner still running after ${limit}s; stopping it"; break; }
		sleep 0.2
	done
	t_end=$(now)
	# The runner writes summary.yaml, then the CSVs, then deletes what it created: hold it
	# (SIGSTOP) while the counters and the Workloads' states are read.
	kill -STOP "$RUNNER_PID" 2>/dev/null || true
	snapshot
	kc get workloads.kueue.x-k8s.io -A -o json >"$RUN/workloads-at-end.json" 2>/dev/null || true
	kill -CONT "$RUNNER_PID" 2>/dev/null || true
	if [ -s "$RUN/runner/summary.yaml" ]; then
		for ((i = 0; i < 100; i++)); do [ -s "$RUN/runner/wlStates.csv" ] && break; sleep 0.1; done
		sleep 0.5
	fi
	stop_pid "$RUNNER_PID" INT 60
	wait "$RUNNER_PID" 2>/dev/null || rc=$?
	RUNNER_PID=
	stop_manager
	cluster_down
	{
		echo "preset=$preset"
		[ "$preset" != large ] || echo "scale=$scale"
		echo "runner_exit=$rc"
		echo "wall_s=$(runner_wall "$RUN/runner.log" "$t_start" "$t_end")"
	} >"$RUN/result.env"
	if [ -s "$RUN/runner/summary.yaml" ]; then
		summary_figures "$RUN/runner/summary.yaml" "$RUN/runner/wlStates.csv" >>"$RUN/result.env"
	else
		echo "status=no-summary" >>"$RUN/result.env"
	fi
	# The Workloads' states when the runner stopped recording: a Workload the recorder gave up
	# on (evicted and never readmitted, say) shows here, not in the runner's figures.
	if [ -s "$RUN/workloads-at-end.json" ]; then
		jq -r '[.items[] | (.status.conditions // []) as $c
			| if any($c[]; .type == "Finished" and .status == "True") then "finished"
			  elif any($c[]; .type == "Evicted" and .status == "True") then "evicted"
			  elif any($c[]; .type == "Admitted" and .status == "True") then "admitted"
			  elif any($c[]; .type == "QuotaReserved" and .status == "True") then "quota_reserved"
			  elif .status.admission != null then "stale_admission"
			  else "pending" end] | (length | "wl_total=\(.)"), (map(select(. != "finished")) | length | "wl_not_finished=\(.)"),
			  (group_by(.) | map("wl_at_end_\(.[0])=\(length)") | .[])' \
			"$RUN/workloads-at-end.json" >>"$RUN/result.env" || true
		# one unfinished Workload's status, for the record
		jq '[.items[] | select(any(.status.conditions[]?; .type == "Finished" and .status == "True") | not)][0]
			| if . == null then empty else {name: .metadata.name, namespace: .metadata.namespace, status} end' \
			"$RUN/workloads-at-end.json" >"$RUN/unfinished-example.json" 2>/dev/null || true
		gzip -f "$RUN/workloads-at-end.json"
	fi
	record_common
}
dur_s() { # Go duration (Nh, Nm, Ns combos) -> seconds
	awk -v d="$1" 'BEGIN { t = 0; while (match(d, /^[0-9]+[hms]/)) { n = substr(d, 1, RLENGTH - 1); u = substr(d, RLENGTH, 1)
		t += n * (u == "h" ? 3600 : u == "m" ? 60 : 1); d = substr(d, RLENGTH + 1) } print t }'
}
# Wall time: the runner's "Start runner" to its "Recorder done" log lines (the recorder stops when
# no active ClusterQueue has pending or reserving Workloads after generation); else our clock.
runner_wall() { # LOG T_START T_END
	local a b
	a=$(grep -m1 'Start runner' "$1" | awk '{ print $1 }')
	b=$(grep -m1 'Recorder done' "$1" | awk '{ print $1 }')
	if [ -n "$a" ] && [ -n "$b" ]; then
		sub "$(date -d "$a" +%s.%N)" "$(date -d "$b" +%s.%N)"
	else
		sub "$2" "$3"
	fi
}
# summary.yaml (sigs.k8s.io/yaml, two levels) and wlStates.csv -> key=value figures
summary_figures() { # SUMMARY CSV
	awk '
		/^[a-zA-Z]/ { top = $1; sub(/:$/, "", top); next }
		/^  [a-zA-Z]/ { cls = $1; sub(/:$/, "", cls); next }
		/^    [a-zA-Z]/ { k = $1; sub(/:$/, "", k); v[top "." cls "." k] = $2 }
		END {
			for (x in v) {
				split(x, p, ".")
				if (p[1] == "workloadClasses" && p[3] == "averageTimeToAdmissionMs") printf "adm_mean_ms_%s=%s\n", p[2], v[x]
				if (p[1] == "workloadClasses" && p[3] == "totalEvictions") printf "evictions_%s=%s\n", p[2], v[x]
				if (p[1] == "workloadClasses" && p[3] == "count") printf "count_%s=%s\n", p[2], v[x]
				if (p[1] == "clusterQueueClasses" && p[3] == "cpuAverageUsage") { u = v[x]; q = v[p[1] "." p[2] ".nominalQuota"]
					if (q > 0) printf "cq_usage_pct=%.1f\n", 100 * u / q }
			}
		}' "$1"
	# p95 of "ms to admitted" per class; Workloads never admitted or never finished (0 ms)
	awk -F, 'NR > 1 { print $2, $5, $6 }' "$2" | sort -k1,1 -k2,2n | awk '
		{ c = $1; n[c]++; a[c, n[c]] = $2; if ($3 == 0) nf[c]++ }
		END { for (c in n) { i = int(0.95 * n[c] + 0.999999); if (i < 1) i = 1
			printf "adm_p95_ms_%s=%s\nunfinished_%s=%d\n", c, a[c, i], c, nf[c] + 0 } }'
}

# --- the Job path ---------------------------------------------------------------------------------
JOB_CPU=10m
setup_job_queues() {
	kc apply -f - >/dev/null <<EOF || die "creating the Job-path queues failed"
apiVersion: v1
kind: Namespace
metadata: {name: bench}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: bench-rf}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bench-cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: bench-rf
      resources:
      - {name: cpu, nominalQuota: "$((jobs * 10 / 1000 + 10))"}
      - {name: memory, nominalQuota: "$((jobs * 16 + 1024))Mi"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: bench-lq, namespace: bench}
spec: {clusterQueue: bench-cq}
EOF
	local deadline=$((SECONDS + 60))
	until kc -n bench get serviceaccount default >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$deadline" ] || die "no ServiceAccount bench/default after 60 s"
		sleep 0.5
	done
}
# create_jobs: N suspended Jobs through one curl with parallel HTTP/2 requests; sets
# CREATE_T0/CREATE_T1 and checks that all N were created.
create_jobs() {
	local cfg=$RUN/create.curlrc i ok
	cat >"$RUN/job.json" <<EOF
{"apiVersion":"batch/v1","kind":"Job","metadata":{"generateName":"bench-","namespace":"bench",
 "labels":{"kueue.x-k8s.io/queue-name":"bench-lq"}},
 "spec":{"suspend":true,"parallelism":1,"completions":1,"backoffLimit":0,
  "template":{"metadata":{"annotations":{"pod-complete.stage.kwok.x-k8s.io/delay":"1s"}},
   "spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox",
    "resources":{"requests":{"cpu":"$JOB_CPU","memory":"16Mi"}}}]}}}}
EOF
	{
		echo 'parallel'
		echo 'parallel-max = 32'
		for ((i = 0; i < jobs; i++)); do
			[ "$i" -eq 0 ] || echo 'next'
			echo "url = \"https://127.0.0.1:$API_PORT/apis/batch/v1/namespaces/bench/jobs\""
			echo "cacert = \"$CL/pki/ca.crt\""
			echo "cert = \"$CL/pki/admin.crt\""
			echo "key = \"$CL/pki/admin.key\""
			echo 'header = "Content-Type: application/json"'
			echo "data = \"@$RUN/job.json\""
			echo 'output = "/dev/null"'
			echo 'write-out = "%{http_code}\n"'
			echo 'max-time = 120'
		done
	} >"$cfg"
	CREATE_T0=$(now)
	curl --noproxy '*' -sS -K "$cfg" >"$RUN/create-codes.txt" 2>"$RUN/create.err" || true
	CREATE_T1=$(now)
	ok=$(grep -c '^201$' "$RUN/create-codes.txt" || true)
	log "created $ok/$jobs Jobs in $(sub "$CREATE_T0" "$CREATE_T1") s"
	[ "$ok" -eq "$jobs" ] || { sort "$RUN/create-codes.txt" | uniq -c >&2; die "only $ok of $jobs Job creates succeeded"; }
}
# Admission progress: every 0.25 s the namespace's Workloads as a server-side Table without the
# objects (both CRDs print an "Admitted" column: the Admitted condition's status), so a poll stays
# small. One line per poll in progress.tsv: time, Workloads, admitted. (A kubectl watch missed
# Workloads in a muster backlog run, so the count is not taken from events.)
count_admitted() {
	curl_api "/apis/kueue.x-k8s.io/v1beta2/namespaces/bench/workloads?includeObject=None" \
		-H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' 2>/dev/null |
		jq -r '(.columnDefinitions | map(.name) | index("Admitted")) as $i
			| "\(.rows | length) \([.rows[] | select(.cells[$i] == "True")] | length)"' 2>/dev/null
}
wait_admitted() { # -> ALL_T (first poll that saw N admitted) or empty on timeout
	local deadline=$((SECONDS + job_timeout)) c total n
	ALL_T=
	while :; do
		c=$(count_admitted) || c=
		read -r total n <<<"${c:-? 0}"
		echo "$EPOCHREALTIME $total $n" >>"$RUN/progress.tsv"
		if [ "${n:-0}" -ge "$jobs" ]; then
			ALL_T=$EPOCHREALTIME
			return 0
		fi
		alive "$MGR_PID" || { log "the manager exited"; return 1; }
		[ "$SECONDS" -lt "$deadline" ] || { log "only $n of $jobs admitted after ${job_timeout}s"; return 1; }
		sleep 0.25
	done
}

run_jobs() { # MANAGER live|backlog
	local flavour=full admitted_n
	cluster_up "$1"
	setup_job_queues
	: >"$RUN/result.env"
	if [ "$2" = backlog ]; then
		create_jobs
		[ "$1" = muster ] || install_kueue_webhooks
		start_manager "$1" "$flavour"
		if wait_admitted; then
			echo "all_admitted_from_manager_start_s=$(sub "$MGR_T0" "$ALL_T")" >>"$RUN/result.env"
			echo "all_admitted_from_ready_s=$(sub "$MGR_READY" "$ALL_T")" >>"$RUN/result.env"
		fi
		echo "manager_ready_s=$(sub "$MGR_T0" "$MGR_READY")" >>"$RUN/result.env"
	else
		[ "$1" = muster ] || install_kueue_webhooks
		start_manager "$1" "$flavour"
		create_jobs
		if wait_admitted; then
			echo "all_admitted_from_first_create_s=$(sub "$CREATE_T0" "$ALL_T")" >>"$RUN/result.env"
			echo "all_admitted_from_last_create_s=$(sub "$CREATE_T1" "$ALL_T")" >>"$RUN/result.env"
		fi
		echo "create_s=$(sub "$CREATE_T0" "$CREATE_T1")" >>"$RUN/result.env"
	fi
	admitted_n=$(tail -1 "$RUN/progress.tsv" | awk '{ print $3 }')
	echo "admitted=$admitted_n" >>"$RUN/result.env"
	snapshot
	stop_manager
	cluster_down
	record_common
}

# --- one run -------------------------------------------------------------------------------------
RUNS=()  # "case manager round dir"
run_one() { # CASE MANAGER ROUND
	RUN=$results/$1-$2-r$3
	rm -rf "$RUN"
	mkdir -p "$RUN"
	log "=== $1 under $2, round $3 ($RUN)"
	local t0=$SECONDS
	case $1 in
	baseline) run_baseline "$2" ;;
	jobs) run_jobs "$2" live ;;
	backlog) run_jobs "$2" backlog ;;
	esac
	echo "run_duration_s=$((SECONDS - t0))" >>"$RUN/result.env"
	cp -r "$CL/logs" "$RUN/cluster-logs" 2>/dev/null || true
	RUNS+=("$1 $2 $3 $RUN")
	log "--- $1 under $2, round $3: done in $((SECONDS - t0)) s"
	sed 's/^/    /' "$RUN/result.env" >&2
}

cases=()
[ "$preset" = none ] || cases+=(baseline)
[ "$jobs" -eq 0 ] || cases+=(jobs backlog)
managers=(kueue muster)
[ -z "$only" ] || managers=("$only")

if [ "$preset" != none ]; then
	KUEUE_RUNNER=$KUEUE/bin/runner
	KUEUE_RUNNER_CWD=$KUEUE_SRC/test/performance/scheduler
	gen_config "$preset" "$results/generator-$preset.yaml"
fi

{
	echo "date=$(date -Is)"
	echo "preset=$preset jobs=$jobs rounds=$rounds only=${only:-both} runner_timeout=$runner_timeout kueue_runner_manager=$kueue_runner_manager kueue_qps=$kueue_qps"
	[ "$preset" != large ] || echo "scale=$scale: $large_shape"
	echo "muster=${muster_bin:-} config=${muster_config:-}"
	[ -z "${muster_bin:-}" ] || echo "muster_version=$("$muster_bin" --version 2>&1 | head -1)"
	echo "kueue=${KUEUE:-}"
	echo "muster_git=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)"
	echo "loadavg_at_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$results/info.txt"
log "results in $results"

T_ALL=$SECONDS
for c in "${cases[@]}"; do
	for ((r = 1; r <= rounds; r++)); do
		for m in "${managers[@]}"; do
			run_one "$c" "$m" "$r"
		done
	done
done

echo "loadavg_at_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$results/info.txt"

# --- tables ---------------------------------------------------------------------------------------
# figures of a case: key label
figures_baseline=(
	"wall_s|wall time until all finished (s)"
	"adm_mean_ms_small|mean time to admission, small (ms)"
	"adm_mean_ms_medium|mean time to admission, medium (ms)"
	"adm_mean_ms_large|mean time to admission, large (ms)"
	"adm_p95_ms_small|p95 time to admission, small (ms)"
	"adm_p95_ms_medium|p95 time to admission, medium (ms)"
	"adm_p95_ms_large|p95 time to admission, large (ms)"
	"cq_usage_pct|ClusterQueue usage (cpuAverageUsage, %)"
	"wl_not_finished|Workloads not Finished when the runner stopped"
)
figures_jobs=(
	"all_admitted_from_first_create_s|all admitted, from the first create (s)"
	"all_admitted_from_last_create_s|all admitted, from the last create (s)"
	"create_s|creating the Jobs (s)"
)
figures_backlog=(
	"all_admitted_from_manager_start_s|all admitted, from the manager's start (s)"
	"all_admitted_from_ready_s|all admitted, from the manager's readiness (s)"
	"manager_ready_s|manager start to ready (s)"
)
figures_common=(
	"manager_cpu_s|manager CPU (s)"
	"manager_vmhwm_mib|manager VmHWM (MiB)"
	"cq_status_writes|ClusterQueue status writes"
	"lq_status_writes|LocalQueue status writes"
	"wl_status_writes|Workload status writes (all clients)"
	"wl_status_apply|  of which apply"
	"wl_status_patch_put|  of which patch/put"
	"wl_writes_main|Workload writes, main resource"
	"wl_creates|Workload creates"
	"wl_creates_refused|Workload creates refused (409 etc.)"
	"job_writes|Job writes"
	"event_writes|Event writes (create, patch)"
	"conflicts_409|409 conflicts on writes"
	"write_429_5xx|429 and 5xx answers to writes"
	"run_duration_s|run duration incl. cluster (s)"
)
# cell CASE MANAGER KEY: "mean [v1 v2 ...]" over the rounds, and MEAN_<...> for the ratio
cell() {
	local vals=() e v c m d
	for e in "${RUNS[@]}"; do
		read -r c m _ d <<<"$e"
		[ "$c" = "$1" ] && [ "$m" = "$2" ] || continue
		v=$(sed -n "s/^$3=//p" "$d/result.env" | tail -1)
		vals+=("${v:-NA}")
	done
	printf '%s\n' "${vals[@]}" | awk '
		{ all = all (NR > 1 ? " " : "") $1; if ($1 ~ /^-?[0-9.]+$/) { s += $1; n++ } }
		END { if (n == 0) { printf "NA|NA"; exit }
			m = s / n; printf "%s|%s", (NR > 1 ? sprintf("%.6g [%s]", m, all) : sprintf("%.6g", m)), m }'
}
# ratio KUEUE MUSTER: muster/Kueue with 2 decimals, or – when either is not a number
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && a > 0) printf "%.2f", b / a; else print "–" }'
}
table() { # CASE
	local -n figs=figures_$1
	local f key label r kcell kmean mcell mmean what="N=$jobs Jobs"
	[ "$1" != baseline ] || what="preset $preset"
	[ "$1" != baseline ] || [ "$preset" != large ] || what="preset large, --scale $scale: $large_shape"
	echo
	echo "### $1 ($what)"
	echo
	printf '| %s | %s | %s | %s |\n' figure Kueue muster muster/Kueue
	printf '|---|---:|---:|---:|\n'
	for f in "${figs[@]}" "${figures_common[@]}"; do
		key=${f%%|*} label=${f#*|}
		IFS='|' read -r kcell kmean <<<"$(cell "$1" kueue "$key")"
		IFS='|' read -r mcell mmean <<<"$(cell "$1" muster "$key")"
		r=$(ratio "$kmean" "$mmean")
		printf '| %s | %s | %s | %s |\n' "$label" "$kcell" "$mcell" "$r"
	done
}
# The issue's targets for the large-scale shape (issue 26), as ratios of the means of this
# run, beside the figures Kueue's CI publishes for the full shape.
targets_large() {
	local row key label cmp lim ci kcell kmean mcell mmean r verdict
	echo
	echo "### targets, large-scale shape (--scale $scale: $large_shape)"
	echo
	local e c m d
	for e in "${RUNS[@]}"; do
		read -r c m _ d <<<"$e"
		[ "$c" = baseline ] || continue
		grep -qx 'runner_exit=0' "$d/result.env" && ! grep -q '^status=no-summary' "$d/result.env" ||
			printf '%s\n\n' "**Not a valid comparison: the runner failed under $m ($d/runner.log); its figures are partial.**"
		! grep -Eq '^wl_not_finished=[1-9]' "$d/result.env" ||
			printf '%s\n\n' "**Workloads left unfinished under $m: its wall time and usage look better than they are.**"
	done
	echo "Kueue CI: the mean of 19 runs of Kueue's own harness on the full shape (10 cohorts, 1,000"
	echo "ClusterQueues, 50,000 Workloads), on another machine; for reference, not a ratio."
	echo
	printf '| %s | %s | %s | %s | %s | %s |\n' figure Kueue muster muster/Kueue target "Kueue CI (other machine)"
	printf '|---|---:|---:|---:|---|---:|\n'
	# key|label|<= or >= or -|limit|Kueue CI figure
	for row in \
		"manager_cpu_s|manager CPU (s)|<=|0.2|–" \
		"manager_vmhwm_mib|manager peak RSS, VmHWM (MiB)|<=|0.5|–" \
		"wall_s|wall time until all finished (s)|<=|1|1179" \
		"cq_usage_pct|ClusterQueue usage (%)|>=|1|38.6" \
		"adm_mean_ms_large|mean time to admission, large (ms)|-|-|106000" \
		"adm_mean_ms_medium|mean time to admission, medium (ms)|-|-|256000" \
		"adm_mean_ms_small|mean time to admission, small (ms)|-|-|700000" \
		"wl_not_finished|Workloads not Finished when the runner stopped|-|-|–"; do
		IFS='|' read -r key label cmp lim ci <<<"$row"
		IFS='|' read -r kcell kmean <<<"$(cell baseline kueue "$key")"
		IFS='|' read -r mcell mmean <<<"$(cell baseline muster "$key")"
		r=$(ratio "$kmean" "$mmean")
		verdict=–
		if [ "$cmp" != - ]; then
			verdict=$(awk -v r="$r" -v c="$cmp" -v l="$lim" 'BEGIN {
				if (r !~ /^[0-9.]+$/) { printf "%s %sx: no ratio", c == "<=" ? "≤" : "≥", l; exit }
				ok = c == "<=" ? r <= l : r >= l
				printf "%s %sx: %s", c == "<=" ? "≤" : "≥", l, ok ? "met" : "NOT met" }')
		fi
		printf '| %s | %s | %s | %s | %s | %s |\n' "$label" "$kcell" "$mcell" "$r" "$verdict" "$ci"
	done
}
{
	echo "## Kueue v${KUEUE_VERSION:-0.17.0} vs muster ($(date -Is), $(nproc) cores)"
	echo "Kueue's full manager (the Job path) at client QPS/burst $kueue_qps; under the runner: $([ "$kueue_runner_manager" = full ] && echo "its full manager, the same" || echo "minimalkueue, hard-coded 50/100"); muster at its defaults, 300/500."
	echo
	echo "Runs in order: $(printf '%s, ' "${RUNS[@]%% /*}" | sed 's/, $//'). Cells: mean [per round]."
	for c in "${cases[@]}"; do table "$c"; done
	[ "$preset" != large ] || targets_large
	echo
	echo "Load average (1, 5, 15 min) at start: $(sed -n 's/^loadavg_at_start=//p' "$results/info.txt"); at end: $(sed -n 's/^loadavg_at_end=//p' "$results/info.txt")."
	echo "Total: $((SECONDS - T_ALL)) s. Raw outputs: $results"
} | tee "$results/tables.md"
