#!/usr/bin/env bash
# RayJob and RayCluster queued by muster, with the real KubeRay operator and kube-scheduler on
# kwok nodes (need_kuberay; the fake Ray dashboard stands in for the Ray head):
#   1. a RayJob with a head and 2 workers of 2 GPUs each is held while only 3 GPUs are free,
#      admitted whole once 4 are, its workers packed onto one node (the fewest), and it
#      completes: its Workload finishes and the quota comes back;
#   2. a running low-priority RayCluster is preempted by a high-priority Job: suspended (KubeRay
#      deletes its pods), its quota freed, and once the Job is gone it is admitted and ready again.
source "$(dirname "$0")/lib.sh"
need_kuberay
make_namespace
make_queues e2e-ray-unused 1
cluster_queue e2e-ray 8 "" "{withinClusterQueue: LowerPriority}"
local_queue q e2e-ray
make_priority_classes e2e-ray
wait_nodes_idle 60
wl_of() { # KIND NAME: the Workload a RayJob or RayCluster got
	k -n "$NS" get workloads.kueue.x-k8s.io -o "jsonpath={range .items[?(@.metadata.ownerReferences[0].kind==\"$1\")]}{.metadata.ownerReferences[0].name}={.metadata.name}{\"\\n\"}{end}" 2>/dev/null |
		sed -n "s/^$2=//p"
}
has_wl() { [ -n "$(wl_of "$1" "$2")" ]; }

# --- 1. a RayJob: held, admitted whole, packed, completed ------------------------------------
job_yaml blocker q 5 1 "" | k create -f - >/dev/null
wait_until 60 "the blocker to run" running_at_least blocker 5
ray_manifest rayjob.yaml q | k -n "$NS" create -f - >/dev/null
wait_until 30 "the RayJob's Workload" has_wl RayJob rayjob-gpu
wl=$(wl_of RayJob rayjob-gpu)
[ "$(jp workloads.kueue.x-k8s.io "$wl" '{.spec.podSets[*].name}')" = "head workers submitter" ] ||
	fail "the RayJob's PodSets are '$(jp workloads.kueue.x-k8s.io "$wl" '{.spec.podSets[*].name}')'"
[ "$(jp workloads.kueue.x-k8s.io "$wl" '{.spec.podSets[1].count}')" = 2 ] || fail "the workers' PodSet does not count 2 pods"
sleep 3
field_is rayjob rayjob-gpu '{.spec.suspend}' true || fail "the RayJob was released while 4 GPUs don't fit"
[ -z "$(k -n "$NS" get rayclusters --no-headers 2>/dev/null)" ] || fail "a held RayJob has a RayCluster"
k -n "$NS" delete job blocker --wait=false >/dev/null
wait_until 60 "the RayJob's admission" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 30 "the RayJob to run" rayjob_state_is rayjob-gpu Running/RUNNING
cluster=$(jp rayjob rayjob-gpu '{.status.rayClusterName}')
# The RayCluster KubeRay made carries the RayJob's queue label, but it is the RayJob's: no
# Workload of its own, never suspended by muster.
has_wl RayCluster "$cluster" && fail "the RayJob's RayCluster got a Workload of its own"
wait_until 60 "the RayJob's 3 pods running" ray_pods_are "$cluster" 3 Running
nodes=$(k -n "$NS" get pods -l "ray.io/cluster=$cluster,ray.io/group=workers" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u)
[ "$(wc -l <<<"$nodes")" = 1 ] || fail "the two 2-GPU workers were spread over $(echo $nodes)"
[ "$(k -n "$NS" get pods -l "ray.io/cluster=$cluster,ray.io/group=workers" -o jsonpath='{.items[0].spec.nodeSelector.nvidia\.com/gpu\.product}')" = NVIDIA-A100-SXM4-80GB ] ||
	fail "a worker lacks its flavor's node label"
wait_until 90 "the RayJob to complete" rayjob_state_is rayjob-gpu Complete/SUCCEEDED
wait_until 30 "its Workload to finish" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Finished")].reason}' Succeeded
wait_until 30 "the quota back" cq_usage_is e2e-ray nvidia.com/gpu 0

# --- 2. a RayCluster preempted, then back ----------------------------------------------------
ray_manifest raycluster.yaml q | sed 's#^  labels:$#  labels:\n    kueue.x-k8s.io/priority-class: e2e-ray-low#' | k -n "$NS" create -f - >/dev/null
wait_until 30 "the RayCluster's Workload" has_wl RayCluster raycluster-gpu
rwl=$(wl_of RayCluster raycluster-gpu)
wait_until 60 "the RayCluster to be ready" raycluster_state_is raycluster-gpu ready
job_yaml high q 8 1 "" | sed 's#^  labels:$#  labels:\n    kueue.x-k8s.io/priority-class: e2e-ray-high#' | k create -f - >/dev/null
wait_until 30 "the RayCluster to be preempted" field_is workloads.kueue.x-k8s.io "$rwl" '{.status.conditions[?(@.type=="Preempted")].reason}' InClusterQueue
wait_until 30 "the RayCluster to be suspended" raycluster_state_is raycluster-gpu suspended
wait_until 30 "its pods to go" ray_pods_are raycluster-gpu 0
wait_until 60 "the high-priority Job to run" running_at_least high 8
field_is workloads.kueue.x-k8s.io "$rwl" '{.status.conditions[?(@.type=="QuotaReserved")].status}' False ||
	fail "the preempted RayCluster still reserves quota"
k -n "$NS" delete job high --wait=false >/dev/null
wait_until 90 "the RayCluster to be admitted again" field_is workloads.kueue.x-k8s.io "$rwl" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 60 "the RayCluster to be ready again" raycluster_state_is raycluster-gpu ready
pass
