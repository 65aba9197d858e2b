#!/usr/bin/env bash
# (p) Placement hints against the real kube-scheduler. On rack-1 (2 nodes x 8 GPUs, through a
# flavor whose nodeLabels select it), four 1-GPU Jobs and then one 8-GPU Job:
#   - with hints (the e2e config: mode Preferred, node feasibility on) the four share one node
#     and the 8-GPU Job runs on the other: all five run;
#   - with hints off (mode None, nodeFeasibility false) the kube-scheduler's LeastAllocated
#     spreads the four 2+2, and the 8-GPU pod stays Pending (Unschedulable) although its quota
#     was admitted.
# The manager's config is restored at the end, also on failure.
source "$(dirname "$0")/lib.sh"
: "${MUSTER_LOCAL_DIR:?needs MUSTER_LOCAL_DIR to restart the manager}"
wait_nodes_idle "${RACK1_NODES[@]}"
make_namespace
make_flavor e2e-rack1 "{example.com/rack: rack-1}"
cluster_queue_of e2e-p e2e-rack1 16
local_queue lq e2e-p

# per_node JOB...: the pods of these Jobs per node, as sorted counts ("4", "2 2", ...).
per_node() {
	local j
	for j in "$@"; do pod_nodes "$j"; done | sort | uniq -c | awk '{print $1}' | sort -rn | tr '\n' ' ' | sed 's/ $//'
}
pods_at_least() { [ "$(pods_of "$1")" -ge "$2" ]; }
all_running() {
	local j
	for j in "$@"; do running_at_least "$j" 1 || return 1; done
}

# --- hints on ------------------------------------------------------------------------------
for i in 1 2 3 4; do job_yaml "one-$i" lq 1 1 "" | k create -f - >/dev/null; done
wait_until 60 "the four 1-GPU Jobs to run" all_running one-1 one-2 one-3 one-4
[ "$(per_node one-1 one-2 one-3 one-4)" = 4 ] ||
	fail "with hints the four 1-GPU pods are spread $(per_node one-1 one-2 one-3 one-4), want all on one node"
small=$(pod_nodes one-1)
hint=$(k -n "$NS" get job one-1 -o jsonpath='{.spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]}')
[ "$hint" = "$small" ] || fail "the Job's hint names node '$hint', its pod is on $small"
job_yaml eight lq 1 8 "" | k create -f - >/dev/null
wait_until 60 "the 8-GPU Job to run" running_at_least eight 1
big=$(pod_nodes eight)
[ "$big" != "$small" ] || fail "the 8-GPU pod is on $big with the four 1-GPU pods"
echo "hints on: four 1-GPU pods on $small, the 8-GPU pod on $big" >&2

# --- hints off -----------------------------------------------------------------------------
k -n "$NS" delete jobs --all --wait=false >/dev/null
wait_nodes_idle "${RACK1_NODES[@]}"
use_manager_config "$REPO/tests/e2e/manager-config-nohints.yaml" e2e-p
for i in 1 2 3 4; do job_yaml "spread-$i" lq 1 1 "" | k create -f - >/dev/null; done
wait_until 60 "the four 1-GPU Jobs to run without hints" all_running spread-1 spread-2 spread-3 spread-4
! k -n "$NS" get job spread-1 -o jsonpath='{.spec.template.spec.affinity}' | grep -q preferred ||
	fail "mode None still added node affinity"
split=$(per_node spread-1 spread-2 spread-3 spread-4)
[ "$split" = "2 2" ] || fail "without hints the four 1-GPU pods are split '$split', want the kube-scheduler's 2 2"
job_yaml spread-eight lq 1 8 "" | k create -f - >/dev/null
wait_until 30 "a Workload for the 8-GPU Job" has_workload spread-eight
wl=$(workload_of spread-eight)
wait_until 30 "the 8-GPU Job's admission (nodeFeasibility is off)" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 30 "an 8-GPU pod" pods_at_least spread-eight 1
pod=$(k -n "$NS" get pods -l batch.kubernetes.io/job-name=spread-eight -o jsonpath='{.items[0].metadata.name}')
wait_until 30 "the 8-GPU pod to be found unschedulable" field_is pod "$pod" '{.status.conditions[?(@.type=="PodScheduled")].reason}' Unschedulable
for ((t = 0; t < 10; t++)); do
	sleep 1
	[ -z "$(jp pod "$pod" '{.spec.nodeName}')" ] || fail "the 8-GPU pod got node $(jp pod "$pod" '{.spec.nodeName}') after ${t}s"
	field_is pod "$pod" '{.status.phase}' Pending || fail "the 8-GPU pod is $(jp pod "$pod" '{.status.phase}')"
done
echo "hints off: 1-GPU pods split $split, the 8-GPU pod Pending: $(jp pod "$pod" '{.status.conditions[?(@.type=="PodScheduled")].message}')" >&2
pass
