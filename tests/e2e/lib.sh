# shellcheck shell=bash
# Shared by the end-to-end tests. Each test is a bash script run against a live local cluster
# (deploy/local/up.sh) with the manager, given KUBECONFIG, KUBECTL and MUSTER_LOCAL_DIR (all set
# by sourcing the cluster's cluster.env). A test works in its own namespace and its own
# cluster-scoped queues, cleans up after itself, and ends with "PASS <name>[: <figures>]" or
# "FAIL <name>: <reason>" as its last line, with a matching exit status.
set -euo pipefail

: "${KUBECONFIG:?set KUBECONFIG (source the cluster.env that deploy/local/up.sh writes)}"
: "${KUBECTL:?set KUBECTL}"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TEST_NAME=$(basename "$0" .sh)
NS=e2e-${TEST_NAME//_/-}-$$
CLEANUP=()

k() { "$KUBECTL" "$@"; }

fail() {
	FAILED=1
	echo "FAIL $TEST_NAME: $*"
	echo "--- muster log (last 20 lines)" >&2
	tail -20 "${MUSTER_LOCAL_DIR:-/nonexistent}/logs/muster.log" >&2 2>/dev/null || true
	exit 1
}

# pass [DETAIL]: the test passed; DETAIL (a figure it measured) follows the name on the line
# tests/run.sh prints.
pass() {
	echo "PASS $TEST_NAME${1:+: $1}"
	exit 0
}

finish() {
	local rc=$?
	trap - EXIT
	# A cleanup command runs in this scope: a name of its own for the index, which a command's
	# own loop (say, `for i in ...`) would otherwise move, skipping the rest.
	local cleanup_index_
	for ((cleanup_index_ = ${#CLEANUP[@]} - 1; cleanup_index_ >= 0; cleanup_index_--)); do
		eval "${CLEANUP[$cleanup_index_]}" >/dev/null 2>&1 || true
	done
	k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
	if [ "$rc" -ne 0 ] && [ -z "${FAILED:-}" ]; then
		echo "FAIL $TEST_NAME: exited with status $rc"
	fi
	exit "$rc"
}
trap finish EXIT

# on_exit COMMAND: run COMMAND when the test ends, last registered first.
on_exit() { CLEANUP+=("$1"); }

# wait_until SECONDS DESCRIPTION COMMAND...: poll COMMAND every 0.5 s until it succeeds.
# COMMAND runs afresh each time, so pass a predicate (below), never `test "$(...)"`: a command
# substitution in the arguments is expanded once, at the call, and the loop would re-test it.
wait_until() {
	local timeout=$1 what=$2 i
	shift 2
	for ((i = 0; i < timeout * 2; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.5
	done
	fail "timed out after ${timeout}s waiting for $what"
}

# jp KIND NAME JSONPATH: print a field of an object in the test namespace.
jp() { k -n "$NS" get "$1" "$2" -o "jsonpath=$3" 2>/dev/null; }

# field_is KIND NAME JSONPATH VALUE: whether the field equals VALUE.
field_is() { [ "$(jp "$1" "$2" "$3")" = "$4" ]; }

make_namespace() { k create namespace "$NS" >/dev/null; }

# cluster_queue NAME GPUS [COHORT] [PREEMPTION] [FAIR_WEIGHT]: a ClusterQueue of the shared
# flavor e2e-gpu (see make_queues), open to every namespace, with GPUS GPUs and ample cpu and
# memory. PREEMPTION is a flow mapping, e.g. "{withinClusterQueue: LowerPriority}"; FAIR_WEIGHT
# its spec.fairSharing.weight. Deleted at exit.
cluster_queue() {
	local name=$1 gpus=$2 cohort=${3:-} preemption=${4:-} weight=${5:-}
	k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: $name
spec:
$([ -n "$cohort" ] && echo "  cohortName: $cohort")
$([ -n "$preemption" ] && echo "  preemption: $preemption")
$([ -n "$weight" ] && echo "  fairSharing: {weight: \"$weight\"}")
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: e2e-gpu
      resources:
      - {name: cpu, nominalQuota: 1000}
      - {name: memory, nominalQuota: 8Ti}
      - {name: nvidia.com/gpu, nominalQuota: $gpus}
YAML
	on_exit "k delete clusterqueue $name --ignore-not-found --wait=false"
}

# local_queue NAME CLUSTER_QUEUE: a LocalQueue in the test namespace.
local_queue() {
	k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: $1
  namespace: $NS
spec:
  clusterQueue: $2
YAML
}

# make_queues CQ GPUS: the ResourceFlavor e2e-gpu (shared, created once), a ClusterQueue CQ
# with GPUS GPUs, and a LocalQueue "lq" in the test namespace pointing at it.
make_queues() {
	k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: e2e-gpu
spec:
  nodeLabels:
    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
YAML
	cluster_queue "$1" "$2"
	local_queue lq "$1"
}

# make_priority_classes PREFIX: WorkloadPriorityClasses PREFIX-low (100) and PREFIX-high
# (10000), deleted at exit.
make_priority_classes() {
	k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: $1-low}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: $1-high}
value: 10000
YAML
	on_exit "k delete workloadpriorityclass $1-low $1-high --ignore-not-found"
}

# job_yaml NAME QUEUE PODS GPUS_PER_POD DELAY: a Job manifest on stdout. QUEUE "" = no queue
# label; DELAY "" = pods run until deleted, else kwok completes each after DELAY (e.g. "5s").
job_yaml() {
	local name=$1 queue=$2 pods=$3 gpus=$4 delay=$5
	cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $name
  namespace: $NS
$([ -n "$queue" ] && printf '  labels:\n    kueue.x-k8s.io/queue-name: %s\n' "$queue")
spec:
  parallelism: $pods
  completions: $pods
  template:
    metadata:
$([ -n "$delay" ] && printf '      annotations:\n        pod-complete.stage.kwok.x-k8s.io/delay: "%s"\n' "$delay" || echo '      annotations: {}')
    spec:
      restartPolicy: Never
      containers:
      - name: worker
        image: fake
        resources:
          requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "$gpus"}
          limits: {nvidia.com/gpu: "$gpus"}
YAML
}

# workload_yaml NAME QUEUE GPUS [SPEC_LINE]: a bare Workload (no owner, as Kueue's perf runner
# creates them) of one pod asking for GPUS GPUs, on stdout; SPEC_LINE is added to its spec.
workload_yaml() {
	local extra=${4:+$'\n'  $4}
	cat <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: $1, namespace: $NS}
spec:
  queueName: $2$extra
  podSets:
  - name: main
    count: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: fake
          resources: {requests: {nvidia.com/gpu: "$3"}}
YAML
}

# workload_of JOB: the name of the Workload muster created for JOB (empty if none yet).
workload_of() {
	k -n "$NS" get workloads.kueue.x-k8s.io -o "jsonpath={range .items[?(@.metadata.ownerReferences[0].name==\"$1\")]}{.metadata.name}{end}" 2>/dev/null
}

pods_of() { k -n "$NS" get pods -l "batch.kubernetes.io/job-name=$1" --no-headers 2>/dev/null | wc -l; }
running_pods_of() {
	k -n "$NS" get pods -l "batch.kubernetes.io/job-name=$1" --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l
}

cq_usage() { # CQ RESOURCE: total usage of RESOURCE in flavor e2e-gpu
	k get clusterqueue "$1" -o "jsonpath={.status.flavorsUsage[?(@.name==\"e2e-gpu\")].resources[?(@.name==\"$2\")].total}"
}

# Predicates for wait_until: each reads the cluster again whenever it is called.
has_workload() { [ -n "$(workload_of "$1")" ]; }
running_at_least() { [ "$(running_pods_of "$1")" -ge "$2" ]; }
cq_usage_is() { [ "$(cq_usage "$1" "$2")" = "$3" ]; }
cq_field_is() { [ "$(k get clusterqueue "$1" -o "jsonpath=$2" 2>/dev/null)" = "$3" ]; }
# condition_is KIND NAME NAMESPACE TYPE FIELD VALUE ("" for cluster-scoped kinds)
condition_is() {
	[ "$(k get "$1" "$2" ${3:+-n "$3"} -o "jsonpath={.status.conditions[?(@.type==\"$4\")].$5}" 2>/dev/null)" = "$6" ]
}

# serves RESOURCE GROUP: whether the apiserver serves the resource (a 1.35 server has no
# mutatingadmissionpolicies, and podgroups need 1.37 with scheduling.k8s.io/v1beta1). Asked
# up to 5 times a second apart: one discovery call can come back without a group that is
# served (CI saw a 1.37 server "not serve" mutatingadmissionpolicies once, after a restart).
serves() {
	local try
	for try in 1 2 3 4 5; do
		k api-resources --api-group="$2" -o name 2>/dev/null | grep -qx "$1.$2" && return 0
		[ "$try" = 5 ] || sleep 1
	done
	return 1
}

# needs RESOURCE GROUP MINOR WHY: a test of a newer server's feature passes as skipped on a
# server older than 1.MINOR (K8S_VERSION=1.35.4), and fails on one that should serve it but
# doesn't (the local control plane turns the gates on for 1.37 unless MUSTER_GANG_GATES=0).
needs() {
	serves "$1" "$2" && return 0
	local minor
	minor=$(k version -o json 2>/dev/null | jq -r '.serverVersion.minor' | tr -dc 0-9)
	if [ "${minor:-0}" -ge "$3" ] && { [ "$2" != scheduling.k8s.io ] || [ "${MUSTER_GANG_GATES:-1}" = 1 ]; }; then
		fail "Kubernetes 1.$minor does not serve $1.$2"
	fi
	pass "skipped: $4"
}

# --- placement (test_p .. test_t) ------------------------------------------------------------

# The simulated nodes (deploy/local/nodes.yaml): two racks of two nodes, 8 GPUs each.
RACK1_NODES=(kwok-rack-1-0 kwok-rack-1-1)
RACK2_NODES=(kwok-rack-2-0 kwok-rack-2-1)
ALL_NODES=("${RACK1_NODES[@]}" "${RACK2_NODES[@]}")

# gpu_usage [NODE...]: "NODE GPUS PODS" per node (all four by default): the GPUs held by the
# pods bound to it that have not finished (terminating ones included: they still hold their
# GPUs for the kube-scheduler), in any namespace.
gpu_usage() {
	local nodes=("$@")
	[ ${#nodes[@]} -gt 0 ] || nodes=("${ALL_NODES[@]}")
	k get pods -A -o json | jq -r --arg nodes "${nodes[*]}" '
		($nodes | split(" ")) as $want
		| [.items[]
		   | select(.spec.nodeName != null and .status.phase != "Succeeded" and .status.phase != "Failed")
		   | {node: .spec.nodeName,
		      gpus: ([.spec.containers[] | (.resources.requests["nvidia.com/gpu"]
		              // .resources.limits["nvidia.com/gpu"] // "0") | tonumber] | add)}
		   | select(.gpus > 0)] as $pods
		| $want[] as $n
		| "\($n) \([$pods[] | select(.node == $n) | .gpus] | add // 0) \([$pods[] | select(.node == $n)] | length)"'
}

# nodes_idle NODE...: whether no pod holding GPUs is left on these nodes (all four by default).
nodes_idle() { [ -z "$(gpu_usage "$@" | awk '$2 != 0')" ]; }

# wait_nodes_idle [NODE...]: wait until the pods earlier tests (or phases) left on the nodes are
# gone, so placement starts from empty nodes. Namespace deletion can take a while.
wait_nodes_idle() {
	local i
	for ((i = 0; i < 240; i++)); do
		nodes_idle "$@" && return 0
		sleep 0.5
	done
	fail "nodes still busy after 120s: $(gpu_usage "$@" | awk '$2 != 0' | tr '\n' ';')"
}

# whole_free_nodes [NODE...]: how many of the nodes have all their GPUs free.
whole_free_nodes() { gpu_usage "$@" | awk '$2 == 0' | wc -l; }

# pod_nodes JOB: the nodes of JOB's pods, one per line (unbound pods print nothing).
pod_nodes() {
	k -n "$NS" get pods -l "batch.kubernetes.io/job-name=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
		sed '/^$/d'
}

# node_label NODE LABEL
node_label() { k get node "$1" -o "jsonpath={.metadata.labels.${2//./\\.}}"; }

# make_flavor NAME NODE_LABELS [TOPOLOGY]: a ResourceFlavor with NODE_LABELS (a flow mapping,
# e.g. "{example.com/rack: rack-1}") and optionally spec.topologyName. Deleted at exit (after the
# queues that use it, when created before them).
make_flavor() {
	k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: $1
spec:
  nodeLabels: $2
$([ -n "${3:-}" ] && echo "  topologyName: $3")
YAML
	on_exit "k delete resourceflavor $1 --ignore-not-found --wait=false"
}

# make_topology NAME LEVEL...: a Kueue Topology with these node labels, outermost first.
make_topology() {
	local name=$1 l
	shift
	{
		printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata:\n  name: %s\nspec:\n  levels:\n' "$name"
		for l in "$@"; do printf '  - nodeLabel: %s\n' "$l"; done
	} | k apply -f - >/dev/null
	on_exit "k delete topology $name --ignore-not-found --wait=false"
}

# cluster_queue_of NAME FLAVOR GPUS: like cluster_queue, with the given flavor.
cluster_queue_of() {
	k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: $1
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: $2
      resources:
      - {name: cpu, nominalQuota: 1000}
      - {name: memory, nominalQuota: 8Ti}
      - {name: nvidia.com/gpu, nominalQuota: $3}
YAML
	on_exit "k delete clusterqueue $1 --ignore-not-found --wait=false"
}

# Filters for job_yaml's output:
#   job_yaml ... | with_node_selector KEY VALUE | with_pod_annotation KEY VALUE | k create -f -
with_node_selector() { sed "s#^      restartPolicy: Never\$#      restartPolicy: Never\n      nodeSelector: {\"$1\": \"$2\"}#"; }
with_pod_annotation() {
	sed -e "s#^      annotations: {}\$#      annotations: {\"$1\": \"$2\"}#" \
		-e "s#^      annotations:\$#      annotations:\n        \"$1\": \"$2\"#"
}

# stop_manager: stop the cluster's manager (SIGTERM, then wait for it to exit). up.sh keeps only
# the previous log (muster.log.1), so the stopped instance's log is also copied to
# muster.log.<test>.<n>: tests/run.sh checks every muster.log* for sanitizer reports, which a
# manager prints at exit (leaks).
stop_manager() {
	: "${MUSTER_LOCAL_DIR:?stopping the manager needs MUSTER_LOCAL_DIR}"
	local pid i
	pid=$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid" 2>/dev/null) || pid=
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		for ((i = 0; i < 120; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		! kill -0 "$pid" 2>/dev/null || { echo "manager pid $pid did not exit" >&2; return 1; }
	fi
	MANAGER_RESTARTS=$((${MANAGER_RESTARTS:-0} + 1))
	cp -f "$MUSTER_LOCAL_DIR/logs/muster.log" "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.$MANAGER_RESTARTS" 2>/dev/null || true
}

# start_manager ARGS: start the cluster's manager with MUSTER_MANAGER_ARGS=ARGS and the rest of
# the environment the test runs in (MUSTER_BIN, MUSTER_LOCAL_DIR, MUSTER_PORT_OFFSET); up.sh
# starts only what is down.
start_manager() {
	: "${MUSTER_LOCAL_DIR:?starting the manager needs MUSTER_LOCAL_DIR}"
	MUSTER_MANAGER_ARGS=$1 "$REPO/deploy/local/up.sh" >/dev/null 2>"$MUSTER_LOCAL_DIR/restart-$TEST_NAME.err" || {
		tail -20 "$MUSTER_LOCAL_DIR/restart-$TEST_NAME.err" >&2
		return 1
	}
}

# restart_manager ARGS: stop the manager and start it again with MUSTER_MANAGER_ARGS=ARGS.
restart_manager() { stop_manager && start_manager "$1"; }

# queues_settled CQ: whether ClusterQueue CQ and the test namespace's LocalQueue lq are Active
# and show no Workload: the manager has written their status, so it can be stopped without a
# write in flight (the manager leaks the state of requests in flight at shutdown, which
# LeakSanitizer reports).
queues_settled() {
	local empty='.status | .admittedWorkloads == 0 and .reservingWorkloads == 0 and
		.pendingWorkloads == 0 and any(.conditions[]?; .type == "Active" and .status == "True")'
	k get clusterqueue "$1" -o json | jq -e "$empty" >/dev/null &&
		k -n "$NS" get localqueue lq -o json | jq -e "$empty" >/dev/null
}

# use_manager_config FILE [CQ]: restart the manager with --config FILE, after CQ's queues settled
# (queues_settled) if given; the manager the test started with (its MUSTER_MANAGER_ARGS) comes
# back when the test ends, failed or not.
# shellcheck disable=SC2034 # used by the on_exit command below
MANAGER_ARGS_AT_START=${MUSTER_MANAGER_ARGS-}
use_manager_config() {
	if [ -z "${MANAGER_RESTORE_REGISTERED:-}" ]; then
		# timeout(1) ends a test with SIGTERM: exit through the EXIT trap, so the restore runs.
		trap "exit 143" TERM INT
		MANAGER_RESTORE_REGISTERED=1
		# shellcheck disable=SC2016 # expanded when the test ends
		on_exit 'restart_manager "$MANAGER_ARGS_AT_START"'
	fi
	[ -z "${2:-}" ] || wait_until 60 "ClusterQueue $2 and LocalQueue lq to settle" queues_settled "$2"
	restart_manager "--config $1" || fail "could not restart the manager with --config $1"
}

# muster_bin: the muster binary under test: $MUSTER_BIN, else the running manager's.
muster_bin() {
	local bin=${MUSTER_BIN:-} pid
	if [ -z "$bin" ]; then
		pid=$(cat "${MUSTER_LOCAL_DIR:?}/pids/muster.pid" 2>/dev/null) || pid=
		bin=$(readlink "/proc/$pid/exe" 2>/dev/null) || bin=
	fi
	[ -x "$bin" ] || fail "no muster binary (set MUSTER_BIN)"
	echo "$bin"
}

# --- RayJob and RayCluster (KubeRay) -----------------------------------------------------------
# The recipe and what works under kwok: "RayJob and RayCluster" in tests/e2e/README.md. Example
# manifests: tests/e2e/ray/.

# need_kuberay: the ray.io CRDs, the KubeRay operator and the fake Ray dashboard in this cluster
# (MUSTER_WITH_KUBERAY=1 deploy/local/up.sh: builds the operator once, cached, and starts only what
# does not run yet; tests/run.sh builds it before the tests). A cluster without a manager stays
# without one. They keep running after the test; down.sh stops them with the cluster.
# vis PATH: GET PATH on the manager's visibility endpoint (HTTPS, its own CA).
vis() {
	curl --noproxy '*' -fsS --max-time 10 --cacert "${MUSTER_LOCAL_DIR:?}/muster/ca.crt" \
		"https://127.0.0.1:${MUSTER_VISIBILITY_PORT:?}$1"
}

# kmuster ARGS: the kubectl plugin, through real kubectl (`kubectl muster ARGS`): the
# kubectl-muster link next to the muster binary on PATH, the endpoint the local manager's.
kmuster() {
	PATH="$(dirname "$(muster_bin)"):$PATH" MUSTER_ENDPOINT="https://127.0.0.1:${MUSTER_VISIBILITY_PORT:?}" \
		MUSTER_ENDPOINT_CA="$MUSTER_LOCAL_DIR/muster/ca.crt" k muster "$@"
}

need_kuberay() {
	: "${MUSTER_LOCAL_DIR:?need_kuberay needs MUSTER_LOCAL_DIR}"
	local args=() pid
	pid=$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid" 2>/dev/null) || pid=
	if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then args+=(--no-manager); fi
	MUSTER_WITH_KUBERAY=1 "$REPO/deploy/local/up.sh" "${args[@]}" >/dev/null 2>"$MUSTER_LOCAL_DIR/kuberay-$TEST_NAME.err" || {
		tail -20 "$MUSTER_LOCAL_DIR/kuberay-$TEST_NAME.err" >&2
		fail "could not start KubeRay (MUSTER_WITH_KUBERAY=1 deploy/local/up.sh)"
	}
}

# ray_manifest FILE [QUEUE]: tests/e2e/ray/FILE on stdout, with its kueue.x-k8s.io/queue-name
# label set to QUEUE, or without the label when QUEUE is "" (the default: "lq").
ray_manifest() {
	local f=$REPO/tests/e2e/ray/$1 queue=${2-lq}
	if [ -n "$queue" ]; then
		sed "s#^\(    kueue.x-k8s.io/queue-name:\).*#\1 $queue#" "$f"
	else
		sed '/^    kueue.x-k8s.io\/queue-name:/d' "$f"
	fi
}

# rayjob_state NAME: "<jobDeploymentStatus>/<jobStatus>" of a RayJob in the test namespace, e.g.
# "Suspended/", "Running/RUNNING", "Complete/SUCCEEDED", "Failed/FAILED".
rayjob_state() { jp rayjob "$1" '{.status.jobDeploymentStatus}/{.status.jobStatus}'; }
rayjob_state_is() { [ "$(rayjob_state "$1")" = "$2" ]; }
# raycluster_state_is NAME STATE: a RayCluster's status.state ("ready", "suspended", ...).
raycluster_state_is() { field_is raycluster "$1" '{.status.state}' "$2"; }

# ray_pods CLUSTER [PHASE]: how many pods (head and workers) RayCluster CLUSTER has, in PHASE if
# given. A RayJob's cluster is named in its status.rayClusterName; its submitter Job is named as
# the RayJob (pods labelled batch.kubernetes.io/job-name=<RayJob>).
ray_pods() {
	k -n "$NS" get pods -l "ray.io/cluster=$1" ${2:+--field-selector=status.phase=$2} --no-headers 2>/dev/null | wc -l
}
ray_pods_are() { [ "$(ray_pods "$1" "${3:-}")" = "$2" ]; }   # CLUSTER COUNT [PHASE]
no_ray_pods() { [ "$(k -n "$NS" get pods -l ray.io/is-ray-node=yes --no-headers 2>/dev/null | wc -l)" = 0 ]; }
