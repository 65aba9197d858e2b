#!/usr/bin/env bash
# Manager at scale (issue 8 §5): the muster manager against a local control plane holding many
# Nodes and pending Workloads. Measures the manager's memory (VmRSS / VmHWM), the bytes each
# cached Node and Workload costs (a slope over several sizes, not one division), the time to
# /readyz and to a settled state, its CPU time, and its status writes as the apiserver counts
# them. Opt-in: tests/run.sh does not run it (about 40 min on the 2-core dev machine).
#
#   tests/bench/manager_scale.sh [--nodes N] [--workloads N] [--points "N:W ..."] [--quick]
#                                [--replicas N]
#
#   --nodes N        Nodes at full size [5000]
#   --workloads N    Workloads at full size [50000]
#   --points LIST    sizes measured, in order, on one cluster, each "nodes:workloads"; every
#                    point must hold at least as many of each as the one before (objects are
#                    only added). [0:0 N/2:0 N:0 N:W/2 N:W]
#   --quick          --nodes 200 --workloads 2000 (a smoke run, about 4 min)
#   --replicas N     2: after the last point, the two-replica phase (below); 1: none [2]
#
# Environment: MUSTER_BIN (manager binary; default build-rel/muster, built RelWithDebInfo if
# missing), MUSTER_LOCAL_DIR [<repo>/.devcluster-scale], MUSTER_PORT_OFFSET [5000],
# SCALE_QPS / SCALE_BURST (the manager's clientConnection; unset: its defaults, 300 / 500),
# SCALE_PARALLEL (kubectl create processes) [3], SCALE_QUIET (seconds without manager CPU that
# count as settled) [20], SCALE_SETTLE_TIMEOUT (seconds per manager run) [1200], SCALE_RUNS
# (manager runs per point at most) [4], SCALE_KEEP=1 (leave the cluster up at the end; stop it
# with MUSTER_LOCAL_DIR=... deploy/local/down.sh).
#
# For every point the script adds the missing Nodes and Workloads, then starts a fresh manager
# (placement.nodeFeasibility: true, default QPS), samples /proc/PID/status, /proc/PID/stat and
# its open sockets every second, waits for /readyz, then for the manager to go quiet (no CPU for
# SCALE_QUIET s) with every Workload counted in its ClusterQueue's status (pendingWorkloads +
# reservingWorkloads, summed over the ClusterQueues: "settled"; "stuck" if it stays quiet with
# some not counted), records the figures and stops it. It restarts the manager until a run
# settles without writing any status (the warm run, whose memory is the cache's alone); the
# first run of a point with new Workloads (the cold run) writes the queues' status, the
# admissions, and why each Workload next in line waits (a Workload deeper in its queue says
# nothing until it gets near the front, as under Kueue). Bytes per object are slopes over the
# warm runs. Each run also reports its loop turns from the manager's /metrics: the p99 (a bucket
# bound of muster_loop_turn_duration_seconds) and the longest (muster_loop_turn_max_seconds),
# and its lease lapses: muster_lease_lapses_total ("n/a" for a manager without it) and, as a
# cross-check, the lines of its log saying it lost the lead.
#
# The two-replica phase, at the last point: two managers with leader election (its defaults)
# start together, on ports of their own; once one leads and has settled, it is killed with
# SIGKILL and the follower takes over. Measured: the time from the kill until the follower's
# /metrics says muster_leader 1, then until it has settled, and for each replica (scraped
# before it stops) its loop turns and lease lapses.
# Results: $MUSTER_LOCAL_DIR/scale/results.tsv, samples and logs beside it; the summary goes to
# stdout, ending with issue 26's targets beside the figures.
#
# The Nodes are plain objects (no kwok annotation, so kwok leaves them alone) created with a
# Ready=True condition. kube-controller-manager runs with node grace periods of 10 years, so its
# node lifecycle controller removes the not-ready taint once and never marks them Unknown for
# want of heartbeats: they stay Ready and change no more while the manager runs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$here/../.." && pwd)

usage() { sed -n '8,18p' "$0" | sed 's/^# \{0,1\}//'; }

N_NODES=5000
N_WL=50000
POINTS=
REPLICAS=2
while [ $# -gt 0 ]; do
	case $1 in
	--nodes) N_NODES=$2; shift 2 ;;
	--workloads) N_WL=$2; shift 2 ;;
	--points) POINTS=$2; shift 2 ;;
	--quick) N_NODES=200; N_WL=2000; shift ;;
	--replicas) REPLICAS=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "manager_scale.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
done
[[ $REPLICAS =~ ^[12]$ ]] || { echo "manager_scale.sh: --replicas takes 1 or 2" >&2; exit 2; }
: "${POINTS:=0:0 $((N_NODES / 2)):0 $N_NODES:0 $N_NODES:$((N_WL / 2)) $N_NODES:$N_WL}"

export MUSTER_LOCAL_DIR=${MUSTER_LOCAL_DIR:-$REPO/.devcluster-scale}
export MUSTER_PORT_OFFSET=${MUSTER_PORT_OFFSET:-5000}
export MUSTER_KCM_ARGS="${MUSTER_KCM_ARGS:-} --node-monitor-grace-period=87600h --node-startup-grace-period=87600h"
PAR=${SCALE_PARALLEL:-3}
QUIET=${SCALE_QUIET:-20}
SETTLE_TIMEOUT=${SCALE_SETTLE_TIMEOUT:-1200}
N_NS=10 # namespaces, one LocalQueue each; Workloads are spread over them
OUT=$MUSTER_LOCAL_DIR/scale

log() { echo "manager_scale: $(date +%T) $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }

if [ -z "${MUSTER_BIN:-}" ]; then
	MUSTER_BIN=$REPO/build-rel/muster
	if [ ! -x "$MUSTER_BIN" ]; then
		log "building $MUSTER_BIN (RelWithDebInfo, no sanitizers)"
		cmake -S "$REPO" -B "$REPO/build-rel" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMUSTER_SANITIZE=OFF >&2
		cmake --build "$REPO/build-rel" -j2 --target muster >&2
	fi
fi
[ -x "$MUSTER_BIN" ] || die "MUSTER_BIN=$MUSTER_BIN is not executable"
# A muster with /metrics listens on :8080 unless told otherwise; older ones lack the flag.
HAVE_METRICS=0 HAVE_VISIBILITY=0
"$MUSTER_BIN" --help 2>/dev/null | grep -q -- --metrics-port && HAVE_METRICS=1
"$MUSTER_BIN" --help 2>/dev/null | grep -q -- --visibility-port && HAVE_VISIBILITY=1
if [ "$REPLICAS" = 2 ] && [ "$HAVE_METRICS" = 0 ]; then
	echo "manager_scale.sh: $MUSTER_BIN serves no /metrics, which the two-replica phase reads; --replicas 1" >&2
	REPLICAS=1
fi
# replica_ports IDX: sets R_WEBHOOK, R_HEALTH, R_METRICS, the ports of manager IDX (0 for the
# runs of one manager, 0 and 1 for the two replicas), clear of the cluster's own.
replica_ports() {
	R_WEBHOOK=$((19443 + MUSTER_PORT_OFFSET + 7 + $1))
	R_HEALTH=$((18081 + MUSTER_PORT_OFFSET + 7 + 10 * $1))
	R_METRICS=$((18082 + MUSTER_PORT_OFFSET + 7 + 10 * $1))
}

prev_n=0 prev_w=0
for p in $POINTS; do
	[[ $p =~ ^([0-9]+):([0-9]+)$ ]] || die "bad point '$p' (want nodes:workloads)"
	n=${BASH_REMATCH[1]} w=${BASH_REMATCH[2]}
	[ "$n" -ge "$prev_n" ] && [ "$w" -ge "$prev_w" ] || die "points must not shrink: $POINTS"
	prev_n=$n prev_w=$w
done

# --- cleanup ------------------------------------------------------------------------------------
# The managers running, and the sampler of each (SAMPLER_OF[manager pid]).
MGR_PIDS=()
declare -A SAMPLER_OF=()
# stop_manager PID [SIGNAL]: SIGTERM (or SIGNAL), SIGKILL after 30 s; then its sampler.
stop_manager() {
	local pid=$1 sig=${2:-TERM} i keep=() p
	if kill "-$sig" "$pid" 2>/dev/null; then
		for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$pid" 2>/dev/null; then
			log "manager (pid $pid) ignored SIG$sig for 30 s; SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || true
	if [ -n "${SAMPLER_OF[$pid]:-}" ]; then
		kill "${SAMPLER_OF[$pid]}" 2>/dev/null || true
		wait "${SAMPLER_OF[$pid]}" 2>/dev/null || true
		unset "SAMPLER_OF[$pid]"
	fi
	for p in "${MGR_PIDS[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
	MGR_PIDS=("${keep[@]}")
}
cleanup() {
	local rc=$? p
	for p in "${MGR_PIDS[@]}"; do stop_manager "$p"; done
	if [ "${SCALE_KEEP:-0}" = 1 ]; then
		log "SCALE_KEEP=1: cluster left up; stop it with MUSTER_LOCAL_DIR=$MUSTER_LOCAL_DIR $REPO/deploy/local/down.sh"
	else
		"$REPO/deploy/local/down.sh" >/dev/null 2>&1 || log "down.sh failed; run MUSTER_LOCAL_DIR=$MUSTER_LOCAL_DIR $REPO/deploy/local/down.sh"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- cluster --------------------------------------------------------------------------------------
log "bringing up the cluster in $MUSTER_LOCAL_DIR (port offset $MUSTER_PORT_OFFSET)"
# A cluster an earlier run left (SCALE_KEEP=1) holds objects this run would create again.
"$REPO/deploy/local/down.sh" >/dev/null 2>&1 || die "deploy/local/down.sh failed for $MUSTER_LOCAL_DIR"
mkdir -p "$MUSTER_LOCAL_DIR"
KC=$("$REPO/deploy/local/up.sh" --no-manager 2>"$MUSTER_LOCAL_DIR/scale-up.log" | tail -n 1) ||
	{ tail -n 30 "$MUSTER_LOCAL_DIR/scale-up.log" >&2; die "deploy/local/up.sh failed"; }
# shellcheck disable=SC1091
. "$MUSTER_LOCAL_DIR/cluster.env"
export KUBECACHEDIR=$MUSTER_LOCAL_DIR/kube-cache
kc() { "$KUBECTL" --kubeconfig "$KC" "$@"; }
PKI=$MUSTER_LOCAL_DIR/pki
api() { curl --noproxy '*' -sS --fail --max-time 60 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "https://127.0.0.1:$MUSTER_API_PORT$1"; }
rm -rf "$OUT"
mkdir -p "$OUT/gen"
mv -f "$MUSTER_LOCAL_DIR/scale-up.log" "$OUT/up.log"

# --- objects --------------------------------------------------------------------------------------
# create_dir DIR: kubectl create every *.yaml in DIR, SCALE_PARALLEL at a time; then delete DIR.
create_dir() {
	local dir=$1 errs
	errs=$(mktemp "$OUT/create-errs.XXXXXX")
	# shellcheck disable=SC2016
	find "$dir" -name '*.yaml' -print0 | sort -z |
		xargs -0 -r -P "$PAR" -n 1 sh -c '"$0" --kubeconfig "$1" create -f "$2" >/dev/null' "$KUBECTL" "$KC" 2>"$errs" ||
		{ head -n 20 "$errs" >&2; die "kubectl create failed in $dir (all errors: $errs)"; }
	rm -f "$errs"
	rm -rf "$dir"
}

# gen_nodes FROM TO DIR: Nodes scale-node-FROM..TO-1, 500 a file. Racks of 16 in 4 zones;
# three in four are 8-GPU nodes, the rest CPU-only.
gen_nodes() {
	mkdir -p "$3"
	awk -v from="$1" -v to="$2" -v dir="$3" -v ts="$(date -u +%Y-%m-%dT%H:%M:%SZ)" 'BEGIN {
		for (i = from; i < to; i++) {
			if ((i - from) % 500 == 0) { close(f); f = sprintf("%s/nodes-%07d.yaml", dir, i) }
			name = sprintf("scale-node-%05d", i)
			rack = int(i / 16); zone = substr("abcd", rack % 4 + 1, 1)
			gpu = (i % 4 != 3)
			type = gpu ? "p4d.24xlarge" : "m6i.32xlarge"
			printf "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels:\n", name > f
			printf "    kubernetes.io/hostname: %s\n    kubernetes.io/arch: amd64\n    kubernetes.io/os: linux\n", name > f
			printf "    node.kubernetes.io/instance-type: %s\n    topology.kubernetes.io/region: region-1\n", type > f
			printf "    topology.kubernetes.io/zone: zone-%s\n    example.com/rack: rack-%04d\n", zone, rack > f
			printf "    example.com/pool: %s\n", gpu ? "gpu" : "cpu" > f
			if (gpu) printf "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n    nvidia.com/gpu.count: \"8\"\n", "" > f
			printf "  annotations:\n    node.alpha.kubernetes.io/ttl: \"0\"\n    volumes.kubernetes.io/controller-managed-attach-detach: \"true\"\n" > f
			printf "spec:\n  providerID: fake://region-1/zone-%s/%s\n", zone, name > f
			if (gpu) printf "  taints:\n  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n" > f
			printf "status:\n" > f
			for (k = 0; k < 2; k++) {
				printf "  %s: {cpu: \"%s\", memory: %s, pods: \"110\", ephemeral-storage: 3840Gi%s}\n", \
					k ? "allocatable" : "capacity", k ? "95500m" : "96", k ? "1120Gi" : "1152Gi", \
					gpu ? ", nvidia.com/gpu: \"8\"" : "" > f
			}
			printf "  conditions:\n" > f
			split("MemoryPressure DiskPressure PIDPressure Ready", ct, " ")
			for (k = 1; k <= 4; k++)
				printf "  - {type: %s, status: \"%s\", lastHeartbeatTime: \"%s\", lastTransitionTime: \"%s\", reason: %s, message: simulated}\n", \
					ct[k], k == 4 ? "True" : "False", ts, ts, k == 4 ? "KubeletReady" : "KubeletHasSufficient" > f
			printf "  addresses:\n  - {type: InternalIP, address: 10.%d.%d.%d}\n  - {type: Hostname, address: %s}\n", \
				int(i / 65536) + 64, int(i / 256) % 256, i % 256, name > f
			printf "  nodeInfo: {architecture: amd64, operatingSystem: linux, kubeletVersion: v1.35.4, containerRuntimeVersion: \"containerd://2.1.4\", kernelVersion: 6.8.0-1021-aws, osImage: Ubuntu 24.04.2 LTS, machineID: \"%032x\", systemUUID: \"ec2%029x\", bootID: \"b%031x\", kubeProxyVersion: \"\"}\n", i, i, i > f
		}
		close(f)
	}'
}

# gen_workloads FROM TO DIR: Workloads job-FROM..TO-1 spread over the namespaces, 500 a file.
# One podSet of 2 pods (4 cpu, 16Gi, 1 GPU each) with a realistic pod template of about 1.6 KB
# (image, command, args, env, volumes, tolerations, nodeSelector).
gen_workloads() {
	mkdir -p "$3"
	awk -v from="$1" -v to="$2" -v dir="$3" -v nns="$N_NS" 'BEGIN {
		for (i = from; i < to; i++) {
			if ((i - from) % 500 == 0) { close(f); f = sprintf("%s/wl-%07d.yaml", dir, i) }
			ns = i % nns
			printf "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: job-train-%07d\n  namespace: scale-%d\n", i, ns > f
			printf "  labels:\n    kueue.x-k8s.io/job-uid: %08x-6f7e-4b5d-9c61-%012x\n    app.kubernetes.io/name: trainer\n    team: team-%d\n", i, i, ns > f
			printf "  annotations:\n    example.com/submitted-by: user-%d@example.com\n    example.com/experiment: exp-%05d\n", i % 97, int(i / 10) > f
			printf "spec:\n  queueName: team-queue\n  priority: %d\n  active: true\n  podSets:\n  - name: main\n    count: 2\n    template:\n", (i % 3) * 100 > f
			printf "      metadata:\n        labels: {app: trainer, run: run-%07d}\n        annotations: {example.com/checkpoint: \"s3://ckpt-bucket/team-%d/run-%07d/\"}\n", i, ns, i > f
			printf "      spec:\n        restartPolicy: Never\n        serviceAccountName: trainer\n        nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}\n" > f
			printf "        tolerations:\n        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n" > f
			printf "        containers:\n        - name: trainer\n          image: registry.example.com/ml/trainer:2025.06.1-cuda12.4\n          imagePullPolicy: IfNotPresent\n" > f
			printf "          command: [python, -m, trainer.main]\n          args: [--config=/etc/trainer/config.yaml, --epochs=10, --batch-size=256, --run-id=run-%07d]\n", i > f
			printf "          env:\n" > f
			printf "          - {name: RUN_ID, value: run-%07d}\n          - {name: NCCL_DEBUG, value: WARN}\n          - {name: NCCL_IB_DISABLE, value: \"0\"}\n", i > f
			printf "          - {name: OMP_NUM_THREADS, value: \"4\"}\n          - {name: WANDB_PROJECT, value: team-%d-training}\n          - {name: DATA_DIR, value: /data/shards}\n", ns > f
			printf "          - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}\n" > f
			printf "          resources:\n            requests: {cpu: \"4\", memory: 16Gi, nvidia.com/gpu: \"1\"}\n            limits: {memory: 16Gi, nvidia.com/gpu: \"1\"}\n" > f
			printf "          volumeMounts:\n          - {name: data, mountPath: /data, readOnly: true}\n          - {name: config, mountPath: /etc/trainer}\n          - {name: shm, mountPath: /dev/shm}\n" > f
			printf "        volumes:\n        - {name: data, persistentVolumeClaim: {claimName: team-%d-datasets, readOnly: true}}\n        - {name: config, configMap: {name: trainer-config}}\n        - {name: shm, emptyDir: {medium: Memory, sizeLimit: 8Gi}}\n", ns > f
		}
		close(f)
	}'
}

# Queue objects: one flavor for the GPU nodes, one ClusterQueue for every namespace with a small
# quota (4 workloads' worth: 32 cpu, 128Gi, 8 GPUs), one LocalQueue per namespace.
{
	cat <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: a100
spec:
  nodeLabels: {node.kubernetes.io/instance-type: p4d.24xlarge}
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: training
spec:
  namespaceSelector: {}
  queueingStrategy: BestEffortFIFO
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: a100
      resources:
      - {name: cpu, nominalQuota: 32}
      - {name: memory, nominalQuota: 128Gi}
      - {name: nvidia.com/gpu, nominalQuota: 8}
EOF
	for ((i = 0; i < N_NS; i++)); do
		printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata: {name: scale-%d}\n' "$i"
		printf -- '---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: team-queue, namespace: scale-%d}\nspec: {clusterQueue: training}\n' "$i"
	done
} >"$OUT/queues.yaml"
kc create -f "$OUT/queues.yaml" >/dev/null || die "creating the queue objects failed"

cat >"$OUT/manager.yaml" <<'EOF'
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
placement:
  nodeFeasibility: true
EOF
if [ -n "${SCALE_QPS:-}" ]; then
	printf 'clientConnection:\n  qps: %s\n  burst: %s\n' "$SCALE_QPS" "${SCALE_BURST:-$SCALE_QPS}" >>"$OUT/manager.yaml"
fi

# --- measuring ------------------------------------------------------------------------------------
# writes: "status-PATCH-2xx status-PATCH-failed other-workload-writes event-creates" from the
# apiserver's counters (cumulative; the caller takes differences).
writes() {
	api /metrics | awk '
		/^apiserver_request_total\{/ {
			v = $NF
			if ($0 ~ /resource="workloads"/) {
				if ($0 ~ /subresource="status"/ && $0 ~ /verb="PATCH"/) {
					if ($0 ~ /code="2/) st += v; else bad += v
				} else if ($0 ~ /verb="(PATCH|PUT|POST|DELETE|APPLY)"/) other += v
			} else if ($0 ~ /resource="events"/ && $0 ~ /verb="(POST|PATCH)"/) ev += v
		}
		END { printf "%d %d %d %d\n", st, bad, other, ev }'
}
# What the ClusterQueues' status counts, summed: "pending reserving"; "-1 -1" if the apiserver
# does not answer (three tries). The manager writes it once it has taken in every Workload.
cq_counts() {
	local i out
	for i in 1 2 3; do
		if out=$(kc get clusterqueues.kueue.x-k8s.io --request-timeout=60s \
			-o jsonpath='{range .items[*]}{.status.pendingWorkloads} {.status.reservingWorkloads}{"\n"}{end}' |
			awk '{ p += $1; r += $2 } END { printf "%d %d\n", p, r }'); then
			echo "$out"
			return 0
		fi
		sleep 5
	done
	echo "-1 -1"
}
# Counts of the QuotaReserved condition over all Workloads: "total true false missing";
# "-1 0 0 -1" if the apiserver does not answer (three tries).
quota_counts() {
	local i out
	for i in 1 2 3; do
		if out=$(kc get workloads.kueue.x-k8s.io -A --chunk-size=1000 --request-timeout=120s \
			-o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="QuotaReserved")].status}{"\n"}{end}' |
			awk '{ n++; if ($1 == "True") t++; else if ($1 == "False") f++; else m++ }
				END { printf "%d %d %d %d\n", n, t, f, m }'); then
			echo "$out"
			return 0
		fi
		sleep 5
	done
	echo "-1 0 0 -1"
}
# loop_turn_stats: reads the manager's /metrics text on stdin and prints "p99 max" of its loop
# turns in seconds: the p99 is the smallest bucket bound holding at least 99 % of the turns
# (+Inf when only the +Inf bucket does), or the max when that is lower (the bound of a bucket
# is only an upper bound of the turns in it); the max is muster_loop_turn_max_seconds. "n/a
# n/a" for a manager without them.
loop_turn_stats() {
	awk '
		/^muster_loop_turn_duration_seconds_bucket\{/ {
			le = $0; sub(/.*le="/, "", le); sub(/".*/, "", le)
			n++; bound[n] = le; cum[n] = $NF
		}
		/^muster_loop_turn_duration_seconds_count[{ ]/ { count = $NF }
		/^muster_loop_turn_max_seconds[{ ]/ { max = $NF }
		END {
			p99 = "n/a"
			if (count > 0)
				for (i = 1; i <= n; i++) if (cum[i] >= 0.99 * count) { p99 = bound[i]; break }
			if (max != "" && (p99 == "+Inf" || (p99 != "n/a" && max + 0 < p99 + 0)))
				p99 = max
			printf "%s %s\n", p99, max == "" ? "n/a" : max
		}'
}
# metrics_of IDX: the /metrics text of manager IDX (empty when it does not answer).
metrics_of() {
	replica_ports "$1"
	[ "$HAVE_METRICS" = 1 ] || return 0
	curl --noproxy '*' -fsS --max-time 10 "http://127.0.0.1:$R_METRICS/metrics" 2>/dev/null || true
}
# metric_value NAME: the value of the metric NAME (summed over its series) in the /metrics text
# on stdin; "n/a" when no series of it is there.
metric_value() {
	awk -v name="$1" '
		index($0, name) == 1 && substr($0, length(name) + 1, 1) ~ /[{ ]/ { s += $NF; found = 1 }
		END { if (found) printf "%g\n", s; else print "n/a" }'
}
# log_lapses FILE: lines of a manager log saying it lost the lead: the elector's "leader
# election lost" (manager/kube/lease.c; its reason "no renewal succeeded within renewDeadline"
# when a renewal came too late) and any other line about losing the lead or the lease.
log_lapses() {
	grep -ciE 'no renewal succeeded within renewDeadline|leader election lost|lost the (lead|lease)' "$1" || true
}
# alive PID: the process runs (a child that exited stays a zombie, which kill -0 still finds).
alive() {
	local st
	st=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
proc_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# Open sockets of a process: its two listeners, one watch per informer, and every pooled
# connection of its HTTP client.
proc_sockets() { find "/proc/$1/fd" -lname 'socket:*' 2>/dev/null | wc -l; }
proc_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
TCK=$(getconf CLK_TCK)

printf 'nodes\tworkloads\tready_s\tsettle_s\thwm_kib\trss_kib\tcpu_s\tstatus_patches\tother_wl_writes\tevents\treserved\tpending\tmissing\tsockets\trss_ready_kib\tstatus_failed\tmax_sockets\tstate\trun\tloop_p99_s\tloop_max_s\trole\tlapses\tlapses_log\ttakeover_s\n' >"$OUT/results.tsv"

# start_manager TAG IDX T0: starts manager IDX (its own ports and state directory), its log
# manager-TAG.log, and a sampler writing samples-TAG.txt every second: seconds since T0, VmRSS
# KiB, VmHWM KiB, CPU ticks, open sockets. Sets STARTED_PID.
STARTED_PID=
start_manager() {
	local tag=$1 idx=$2 t0=$3 pid flags=()
	replica_ports "$idx"
	[ "$HAVE_METRICS" = 1 ] && flags+=(--metrics-port "$R_METRICS")
	[ "$HAVE_VISIBILITY" = 1 ] && flags+=(--visibility-port 0)
	mkdir -p "$MUSTER_LOCAL_DIR/muster-scale-$idx"
	"$MUSTER_BIN" manager --kubeconfig "$KC" --config "$OUT/manager.yaml" \
		--state-dir "$MUSTER_LOCAL_DIR/muster-scale-$idx" \
		--webhook-port "$R_WEBHOOK" --health-port "$R_HEALTH" "${flags[@]}" </dev/null >"$OUT/manager-$tag.log" 2>&1 &
	pid=$!
	MGR_PIDS+=("$pid")
	(
		while [ -r "/proc/$pid/status" ]; do
			printf '%.1f %s %s %s %s\n' "$(since "$t0")" "$(proc_kib "$pid" VmRSS)" \
				"$(proc_kib "$pid" VmHWM)" "$(proc_ticks "$pid")" "$(proc_sockets "$pid")" 2>/dev/null || break
			sleep 1
		done
	) >"$OUT/samples-$tag.txt" 2>/dev/null &
	SAMPLER_OF[$pid]=$!
	STARTED_PID=$pid
}

# wait_ready PID IDX TAG T0: waits for manager IDX's /readyz; sets W_READY (seconds since T0)
# and W_RSS_READY (KiB). Dies if it exits first or takes longer than SCALE_SETTLE_TIMEOUT.
W_READY= W_RSS_READY=
wait_ready() {
	local pid=$1 idx=$2 tag=$3 t0=$4 deadline=$((SECONDS + SETTLE_TIMEOUT))
	replica_ports "$idx"
	while :; do
		alive "$pid" || { tail -n 30 "$OUT/manager-$tag.log" >&2; die "$tag: the manager exited before /readyz (log: $OUT/manager-$tag.log)"; }
		if curl --noproxy '*' -fsS --max-time 2 "http://127.0.0.1:$R_HEALTH/readyz" >/dev/null 2>&1; then
			W_READY=$(since "$t0")
			W_RSS_READY=$(proc_kib "$pid" VmRSS)
			break
		fi
		[ "$SECONDS" -lt "$deadline" ] || die "$tag: no /readyz within ${SETTLE_TIMEOUT}s"
		sleep 0.2
	done
	log "$tag: ready after ${W_READY}s (RSS $((W_RSS_READY / 1024)) MiB)"
}

# wait_settled PID TAG WORKLOADS T0 ST0 BAD0: waits until the manager is settled: no CPU (< 2
# ticks) for QUIET seconds, then the ClusterQueues' status counts every Workload (pending +
# reserving). Stuck: quiet, yet three checks in a row find the same count short of them all.
# Sets S_STATE (settled, stuck, timeout, or exited: the process ended by itself; see
# exited_figures), S_ACT (seconds since T0 when its CPU last moved), S_RSS, S_HWM (KiB), S_CPU
# (s), S_SOCKS, S_COUNTS (of quota_counts). ST0 BAD0: the apiserver's status PATCH counters at
# the start, for progress.
S_STATE= S_ACT= S_RSS=0 S_HWM=0 S_CPU=0 S_SOCKS=0 S_COUNTS=
wait_settled() {
	local pid=$1 tag=$2 w=$3 t0=$4 st0=$5 bad0=$6 deadline=$((SECONDS + SETTLE_TIMEOUT))
	local ticks last_ticks quiet_since=$SECONDS last_progress=$SECONDS stuck=0 last_counted=-1
	local st bad ot ev total tr fa mi cq_pending cq_reserving counted
	S_STATE=timeout S_COUNTS=none S_RSS=0 S_HWM=0 S_CPU=0 S_SOCKS=0
	last_ticks=$(proc_ticks "$pid") || last_ticks=0
	S_ACT=$(since "$t0")
	while :; do
		if ! alive "$pid" || ! ticks=$(proc_ticks "$pid" 2>/dev/null) || [ -z "$ticks" ]; then
			exited_figures "$tag"
			return 0
		fi
		sleep 2
		if ! alive "$pid" || ! ticks=$(proc_ticks "$pid" 2>/dev/null) || [ -z "$ticks" ]; then
			exited_figures "$tag"
			return 0
		fi
		if [ $((ticks - last_ticks)) -ge 2 ]; then
			last_ticks=$ticks
			S_ACT=$(since "$t0")
			quiet_since=$SECONDS
		fi
		if [ $((SECONDS - last_progress)) -ge 30 ]; then
			read -r st bad ot ev < <(writes)
			log "$tag: $((st - st0)) status patches so far ($((bad - bad0)) failed), cpu $((ticks / TCK)) s, rss $(($(proc_kib "$pid" VmRSS) / 1024)) MiB, $(proc_sockets "$pid") sockets"
			last_progress=$SECONDS
		fi
		if [ $((SECONDS - quiet_since)) -ge "$QUIET" ]; then
			S_RSS=$(proc_kib "$pid" VmRSS)
			S_HWM=$(proc_kib "$pid" VmHWM)
			S_SOCKS=$(proc_sockets "$pid")
			S_CPU=$(awk -v t="$(proc_ticks "$pid")" -v h="$TCK" 'BEGIN { printf "%.2f", t / h }')
			S_COUNTS=$(quota_counts)
			read -r total tr fa mi <<<"$S_COUNTS"
			read -r cq_pending cq_reserving < <(cq_counts)
			counted=$((cq_pending + cq_reserving))
			if [ "$total" -eq "$w" ] && [ "$cq_pending" -ge 0 ] && [ "$counted" -eq "$w" ]; then
				S_STATE=settled
				return 0
			fi
			if [ "$total" -lt 0 ] || [ "$cq_pending" -lt 0 ]; then
				log "$tag: listing the Workloads failed (apiserver overloaded?); waiting on"
				quiet_since=$SECONDS
				continue
			fi
			log "$tag: quiet for ${QUIET}s but its ClusterQueues count $counted of $total Workloads"
			if [ "$counted" -eq "$last_counted" ]; then stuck=$((stuck + 1)); else stuck=0; fi
			last_counted=$counted
			if [ "$stuck" -ge 2 ]; then
				S_STATE=stuck
				log "$tag: STUCK: the manager is idle and its ClusterQueues count $counted of $total Workloads"
				return 0
			fi
			quiet_since=$SECONDS
		fi
		[ "$SECONDS" -lt "$deadline" ] || return 0
	done
}

# exited_figures TAG: the manager of TAG exited by itself: S_STATE exited, and its last sample's
# figures (RSS, HWM, CPU, sockets) for its row.
exited_figures() {
	S_STATE=exited
	log "$1: the manager exited by itself (log: $OUT/manager-$1.log); its last lines:"
	tail -n 5 "$OUT/manager-$1.log" >&2
	read -r S_RSS S_HWM S_CPU S_SOCKS < <(awk -v h="$TCK" 'NF >= 5 { r = $2; m = $3; c = $4; s = $5 }
		END { printf "%d %d %.2f %d\n", r, m, c / h, s }' "$OUT/samples-$1.txt")
}

# record_run N W RUN ROLE TAG IDX READY RSS_READY ST0 BAD0 OT0 EV0 [TAKEOVER_S]: scrapes the
# running manager IDX's /metrics (loop turns, lease lapses), counts the lapses in its log, and
# appends the run's row to results.tsv from the S_* figures. Sets RUN_WRITES.
RUN_WRITES=
record_run() {
	local n=$1 w=$2 run=$3 role=$4 tag=$5 idx=$6 ready=$7 rss_ready=$8 st0=$9 bad0=${10} ot0=${11} ev0=${12}
	local takeover=${13:--} st bad ot ev total tr fa mi text turn_p99 turn_max lapses lapses_log max_socks
	read -r st bad ot ev < <(writes)
	text=$(metrics_of "$idx")
	read -r turn_p99 turn_max < <(loop_turn_stats <<<"$text")
	lapses=$(metric_value muster_lease_lapses_total <<<"$text")
	lapses_log=$(log_lapses "$OUT/manager-$tag.log")
	read -r total tr fa mi <<<"${S_COUNTS/none/-1 0 0 -1}"
	max_socks=$(awk 'NF >= 5 && $5 > m { m = $5 } END { print m + 0 }' "$OUT/samples-$tag.txt")
	if grep -qiE '"level":"(error|fatal)"|\berror\b' "$OUT/manager-$tag.log"; then
		log "$tag: the manager logged errors (first 5):"
		grep -iE '"level":"(error|fatal)"|\berror\b' "$OUT/manager-$tag.log" | head -n 5 >&2
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$w" "$ready" "$S_ACT" \
		"$S_HWM" "$S_RSS" "$S_CPU" "$((st - st0))" "$((ot - ot0))" "$((ev - ev0))" "$tr" "$fa" "$mi" "$S_SOCKS" \
		"$rss_ready" "$((bad - bad0))" "$max_socks" "$S_STATE" "$run" "$turn_p99" "$turn_max" \
		"$role" "$lapses" "$lapses_log" "$takeover" >>"$OUT/results.tsv"
	log "$tag: $S_STATE after ${S_ACT}s: RSS $((S_RSS / 1024)) MiB, HWM $((S_HWM / 1024)) MiB, cpu ${S_CPU}s, $((st - st0)) status patches ($((bad - bad0)) failed), QuotaReserved True $tr, False $fa, absent $mi, $S_SOCKS sockets open (peak $max_socks), loop turn p99 <= ${turn_p99}s, max ${turn_max}s, lease lapses $lapses (log: $lapses_log)"
	RUN_WRITES=$((st - st0 + bad - bad0))
}

# measure_run NODES WORKLOADS RUN: one manager start, from its launch until it settles (or is
# stuck, or the timeout); appends a row to results.tsv; sets RUN_STATE and RUN_WRITES.
RUN_STATE=
measure_run() {
	local n=$1 w=$2 run=$3 tag="n$1-w$2-r$3" t0 pid st0 bad0 ot0 ev0
	read -r st0 bad0 ot0 ev0 < <(writes)
	log "point $tag: starting the manager (run $run)"
	t0=$(now)
	start_manager "$tag" 0 "$t0"
	pid=$STARTED_PID
	wait_ready "$pid" 0 "point $tag" "$t0"
	wait_settled "$pid" "point $tag" "$w" "$t0" "$st0" "$bad0"
	case $S_STATE in
	exited) die "point $tag: the manager exited (log: $OUT/manager-$tag.log)" ;;
	timeout)
		tail -n 30 "$OUT/manager-$tag.log" >&2
		die "point $tag: not settled within ${SETTLE_TIMEOUT}s (last counts: $S_COUNTS; log: $OUT/manager-$tag.log)"
		;;
	esac
	record_run "$n" "$w" "$run" solo "$tag" 0 "$W_READY" "$W_RSS_READY" "$st0" "$bad0" "$ot0" "$ev0"
	stop_manager "$pid"
	RUN_STATE=$S_STATE
}

# measure_point NODES WORKLOADS: manager runs until one settles without writing a status (the
# "warm" run: everything it needs to say is already said, so its memory is the cache's), at
# most SCALE_RUNS [4]. The first run of a point with new Workloads is the "cold" one: it writes
# the queues' status and why the Workloads next in line wait.
measure_point() {
	local run
	for ((run = 1; run <= ${SCALE_RUNS:-4}; run++)); do
		measure_run "$1" "$2" "$run"
		if [ "$RUN_STATE" = settled ] && [ "$RUN_WRITES" -eq 0 ]; then return 0; fi
	done
	log "point n$1-w$2: no run settled without writes in ${SCALE_RUNS:-4} runs"
}

# leader_of IDX...: the first of the managers IDX whose /metrics says muster_leader 1, or "".
leader_of() {
	local idx
	for idx in "$@"; do
		[ "$(metrics_of "$idx" | metric_value muster_leader)" = 1 ] && { echo "$idx"; return 0; }
	done
	echo ""
}

# measure_takeover NODES WORKLOADS: the two-replica phase. Managers 0 and 1 start together
# with leader election at its defaults (each its own identity: host and pid); once one leads
# and has settled, its row is recorded (role leader) and it is killed with SIGKILL. The
# follower's row (role takeover) has takeover_s, from the kill until its /metrics says
# muster_leader 1, and settle_s from the kill until it has settled; its writes count from the
# kill.
measure_takeover() {
	local n=$1 w=$2 t0 t_kill tag=() pid=() ready=() rss_ready=() lead follow i deadline takeover
	local st0 bad0 ot0 ev0
	read -r st0 bad0 ot0 ev0 < <(writes)
	log "two replicas at n$n-w$w: starting both"
	t0=$(now)
	for i in 0 1; do
		tag[i]="n$n-w$w-replica$i"
		start_manager "${tag[i]}" "$i" "$t0"
		pid[i]=$STARTED_PID
	done
	for i in 0 1; do
		wait_ready "${pid[i]}" "$i" "${tag[i]}" "$t0"
		ready[i]=$W_READY rss_ready[i]=$W_RSS_READY
	done
	deadline=$((SECONDS + SETTLE_TIMEOUT))
	until lead=$(leader_of 0 1) && [ -n "$lead" ]; do
		[ "$SECONDS" -lt "$deadline" ] || die "two replicas: neither leads within ${SETTLE_TIMEOUT}s"
		sleep 0.5
	done
	follow=$((1 - lead))
	log "two replicas: replica$lead leads ($(since "$t0")s after the start); waiting for it to settle"
	wait_settled "${pid[lead]}" "${tag[lead]}" "$w" "$t0" "$st0" "$bad0"
	[ "$S_STATE" = timeout ] && die "two replicas: the leader did not settle within ${SETTLE_TIMEOUT}s"
	record_run "$n" "$w" 1 leader "${tag[lead]}" "$lead" "${ready[lead]}" "${rss_ready[lead]}" "$st0" "$bad0" "$ot0" "$ev0"

	read -r st0 bad0 ot0 ev0 < <(writes)
	t_kill=$(now)
	if [ "$S_STATE" = exited ]; then
		log "two replicas: the leader exited by itself (lost the lease?); the follower takes over from now"
		stop_manager "${pid[lead]}"
	else
		log "two replicas: SIGKILL to the leader, replica$lead (pid ${pid[lead]})"
		stop_manager "${pid[lead]}" KILL
	fi
	deadline=$((SECONDS + 120)) takeover=never
	while alive "${pid[follow]}"; do
		if [ "$(leader_of "$follow")" = "$follow" ]; then
			takeover=$(since "$t_kill")
			break
		fi
		[ "$SECONDS" -lt "$deadline" ] || die "two replicas: the follower did not lead within 120 s of the kill"
		sleep 0.1
	done
	log "two replicas: replica$follow leads ${takeover}s after the kill; waiting for it to settle"
	# A follower that exits (before or after it leads) is a finding: its row says so.
	wait_settled "${pid[follow]}" "${tag[follow]}" "$w" "$t_kill" "$st0" "$bad0"
	[ "$S_STATE" = timeout ] && die "two replicas: the new leader did not settle within ${SETTLE_TIMEOUT}s"
	record_run "$n" "$w" 1 takeover "${tag[follow]}" "$follow" "${ready[follow]}" "${rss_ready[follow]}" "$st0" "$bad0" "$ot0" "$ev0" "$takeover"
	stop_manager "${pid[follow]}"
}

# --- the points -----------------------------------------------------------------------------------
have_n=0 have_w=0
for p in $POINTS; do
	n=${p%:*} w=${p#*:}
	if [ "$n" -gt "$have_n" ]; then
		log "creating Nodes $have_n..$((n - 1))"
		t=$SECONDS
		gen_nodes "$have_n" "$n" "$OUT/gen/nodes"
		create_dir "$OUT/gen/nodes"
		log "$((n - have_n)) Nodes created in $((SECONDS - t))s; waiting for the not-ready taints to go"
		deadline=$((SECONDS + 600))
		while :; do
			tainted=$(kc get nodes --chunk-size=1000 -o jsonpath='{range .items[*]}{.spec.taints[*].key}{"\n"}{end}' | grep -c 'node.kubernetes.io/' || true)
			[ "$tainted" -eq 0 ] && break
			[ "$SECONDS" -lt "$deadline" ] || die "$tainted Nodes still carry a node.kubernetes.io/ taint after 600 s"
			sleep 3
		done
		have_n=$n
	fi
	if [ "$w" -gt "$have_w" ]; then
		log "creating Workloads $have_w..$((w - 1))"
		t=$SECONDS
		gen_workloads "$have_w" "$w" "$OUT/gen/wl"
		create_dir "$OUT/gen/wl"
		log "$((w - have_w)) Workloads created in $((SECONDS - t))s"
		have_w=$w
	fi
	measure_point "$n" "$w"
done
if [ "$REPLICAS" = 2 ]; then measure_takeover "$have_n" "$have_w"; fi

# --- sizes and summary --------------------------------------------------------------------------
node_json=$(kc get node scale-node-00000 -o json 2>/dev/null | wc -c || echo 0)
wl_json=$(kc -n scale-0 get workloads.kueue.x-k8s.io job-train-0000000 -o json 2>/dev/null | wc -c || echo 0)
kinds=$(for k in nodes namespaces {resourceflavors,clusterqueues,localqueues,workloads}.kueue.x-k8s.io; do
	printf '%s=%s ' "${k%%.*}" "$(kc get "$k" -A --chunk-size=1000 -o name 2>/dev/null | wc -l)"
done)

# Issue 26's targets are for 5,000 Nodes, 50,000 pending Workloads and two replicas; the figures
# below are for whatever size ran, and say so.
awk -F'\t' -v kinds="$kinds" -v nj="$node_json" -v wj="$wl_json" -v maxn="$N_NODES" -v maxw="$have_w" -v replicas="$REPLICAS" '
	NR == 1 { next }
	{ n[NR] = $1; w[NR] = $2; rows = NR; line[NR] = $0; lastn = $1 }
	# least squares of y over x for the rows selected by sel
	function slope(x, y, sel,   i, c, sx, sy, sxx, sxy) {
		c = sx = sy = sxx = sxy = 0
		for (i = 2; i <= rows; i++) if (sel[i]) { c++; sx += x[i]; sy += y[i]; sxx += x[i] * x[i]; sxy += x[i] * y[i] }
		if (c < 2 || c * sxx - sx * sx == 0) return "n/a"
		return sprintf("%.0f", 1024 * (c * sxy - sx * sy) / (c * sxx - sx * sx))
	}
	function verdict(ok) { return ok ? "met" : "not met" }
	# bytes per object against a target in KB (1 KB = 1,000 B, as the issue counts them)
	function per_object(what, b, target_kb) {
		if (b == "n/a") return sprintf("%s: n/a (target <= %d KB): not measured", what, target_kb)
		return sprintf("%s: %.1f KB (%d B) (target <= %d KB): %s", what, b / 1000, b, target_kb, verdict(b + 0 <= target_kb * 1000))
	}
	# a loop-turn figure in seconds ("n/a", "+Inf" or a number) against a target in ms
	function turn(what, v, where, target_ms) {
		if (v == "n/a") return sprintf("%s: n/a (target <= %d ms): not measured", what, target_ms)
		if (v == "+Inf") return sprintf("%s: +Inf (beyond the last bucket), %s (target <= %d ms): not met", what, where, target_ms)
		return sprintf("%s: %.1f ms, %s (target <= %d ms): %s", what, v * 1000, where, target_ms, verdict(v * 1000 <= target_ms + 0))
	}
	function secs(v) { return v == "+Inf" ? 1e9 : v + 0 }
	function fmt(v) { return v == "n/a" || v == "+Inf" || v == "" ? v : sprintf("%.3f", v) }
	END {
		printf "\nManager at scale (tests/bench/manager_scale.sh)\n"
		printf "objects at the end: %s\n", kinds
		printf "one object as the apiserver serves it (JSON, with managedFields): Node %d B, Workload %d B\n\n", nj, wj
		printf "%6s %9s %8s %3s %7s %9s %9s %8s %8s %7s %9s %7s %8s %8s %8s %9s %9s %9s %9s\n", "nodes", "workloads", "role", "run", "ready_s", "settled_s", "RSS@ready", "HWM", "RSS", "cpu_s", "status_ok", "failed", "reserved", "sockets", "state", "turn_p99", "turn_max", "lapses", "takeover"
		printf "%6s %9s %8s %3s %7s %9s %9s %8s %8s %7s %9s %7s %8s %8s %8s %9s %9s %9s %9s\n", "", "", "", "", "", "", "MiB", "MiB", "MiB", "", "PATCH", "PATCH", "", "peak", "", "s", "s", "/metr,log", "s"
		p99 = max = "n/a"; lap_m = lap_l = lap_na = 0; lap2_m = lap2_l = lap2_na = 0; took = "n/a"
		for (i = 2; i <= rows; i++) {
			split(line[i], f, "\t")
			role = f[22] == "" ? "solo" : f[22]
			printf "%6d %9d %8s %3d %7.1f %9.1f %9.1f %8.1f %8.1f %7.1f %9d %7d %8d %8d %8s %9s %9s %9s %9s\n", f[1], f[2], role, f[19], f[3], f[4], f[15] / 1024, f[5] / 1024, f[6] / 1024, f[7], f[8], f[16], f[11], f[17], f[18], fmt(f[20]), fmt(f[21]), f[23] "," f[24], f[25] == "" ? "-" : f[25]
			# the slopes use the warm runs of one manager: settled, no status written
			ok = (role == "solo" && f[18] == "settled" && f[8] + f[16] == 0)
			rss[i] = f[6]; hwm[i] = f[5]; rdy[i] = f[15]; nn[i] = f[1]; ww[i] = f[2]
			seln[i] = ok && ww[i] == 0; selw[i] = ok && nn[i] == maxn
			# the worst loop turns over the runs at the last (largest) size, and where
			last = (f[1] == lastn && f[2] == maxw)
			if (last && f[20] != "n/a" && f[20] != "" && (p99 == "n/a" || secs(f[20]) > secs(p99))) { p99 = f[20]; p99_at = sprintf("%s/%s %s run %s", f[1], f[2], role, f[19]) }
			if (last && f[21] != "n/a" && f[21] != "" && (max == "n/a" || f[21] + 0 > max + 0)) { max = f[21]; max_at = sprintf("%s/%s %s run %s", f[1], f[2], role, f[19]) }
			if (f[23] == "n/a" || f[23] == "") lap_na++; else lap_m += f[23]
			lap_l += f[24]
			if (role != "solo") { if (f[23] == "n/a" || f[23] == "") lap2_na++; else lap2_m += f[23]; lap2_l += f[24] }
			if (role == "takeover") { took = f[25]; took_settled = f[4]; took_state = f[18] }
			if (role == "leader") lead_state = f[18]
		}
		bn = slope(nn, rss, seln); bw = slope(ww, rss, selw)
		printf "\nSlopes over the warm runs (one manager, settled, no status written):\n"
		printf "bytes per cached Node (slope over the points without Workloads): RSS %s, RSS at ready %s, HWM %s\n", bn, slope(nn, rdy, seln), slope(nn, hwm, seln)
		printf "bytes per cached Workload (slope over the points with %d Nodes): RSS %s, RSS at ready %s, HWM %s\n", maxn, bw, slope(ww, rdy, selw), slope(ww, hwm, selw)
		printf "\nTargets of issue 26 (5,000 Nodes, 50,000 pending Workloads, two replicas); this run: %d Nodes, %d Workloads, %d replica%s%s\n", maxn, maxw, replicas, replicas == 1 ? "" : "s", (maxn == 5000 && maxw == 50000 && replicas == 2) ? "" : " (NOT the target size)"
		printf "  %s\n", per_object("per cached Node (RSS slope)", bn, 4)
		printf "  %s\n", per_object("per cached pending Workload (RSS slope)", bw, 2)
		printf "  %s\n", turn("loop turn p99 (bucket bound or max), worst run at the last size", p99, p99_at, 20)
		printf "  %s\n", turn("loop turn max, worst run at the last size", max, max_at, 200)
		lapses = lap_na == rows - 1 ? "n/a" : lap_m
		printf "  lease lapses, all runs: %s from muster_lease_lapses_total%s, %d from the logs (target 0): %s\n", lapses, \
			lap_na && lapses != "n/a" ? sprintf(" (%d runs without the metric)", lap_na) : "", lap_l, \
			verdict((lapses == "n/a" || lapses == 0) && lap_l == 0) (lapses == "n/a" ? " (by the logs; the manager has no lapse metric)" : "")
		if (replicas == 2)
			printf "  lease lapses, two-replica phase (start, sync, first cycle, takeover): %s from the metric, %d from the logs; the leader %s; takeover: the follower %s after the SIGKILL, %s %ss after it\n", \
				lap2_na ? "n/a" : lap2_m, lap2_l, lead_state == "exited" ? "EXITED by itself before the kill" : "was killed once settled", \
				took == "never" ? "never led" : "led " took "s", took_state == "exited" ? "EXITED by itself" : took_state, took_settled
	}' "$OUT/results.tsv"
log "results in $OUT (results.tsv, samples-*.txt, manager-*.log)"
