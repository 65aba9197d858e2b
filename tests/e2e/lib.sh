# shellcheck shell=bash
# Shared by the end-to-end tests. Each test is a bash script run against a live local cluster
# (deploy/local/up.sh) with the manager, given KUBECONFIG, KUBECTL and MUSTER_LOCAL_DIR (all set
# by sourcing the cluster's cluster.env). A test works in its own namespace and its own
# cluster-scoped queues, cleans up after itself, and ends with "PASS <name>" or
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

pass() {
	echo "PASS $TEST_NAME"
	exit 0
}

finish() {
	local rc=$?
	trap - EXIT
	local i
	for ((i = ${#CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUP[$i]}" >/dev/null 2>&1 || true
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

# cluster_queue NAME GPUS [COHORT] [PREEMPTION]: a ClusterQueue of the shared flavor e2e-gpu
# (see make_queues), open to every namespace, with GPUS GPUs and ample cpu and memory.
# PREEMPTION is a flow mapping, e.g. "{withinClusterQueue: LowerPriority}". Deleted at exit.
cluster_queue() {
	local name=$1 gpus=$2 cohort=${3:-} preemption=${4:-}
	k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: $name
spec:
$([ -n "$cohort" ] && echo "  cohortName: $cohort")
$([ -n "$preemption" ] && echo "  preemption: $preemption")
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

# workload_of JOB: the name of the Workload muster created for JOB (empty if none yet).
workload_of() {
	k -n "$NS" get workloads -o "jsonpath={range .items[?(@.metadata.ownerReferences[0].name==\"$1\")]}{.metadata.name}{end}" 2>/dev/null
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
