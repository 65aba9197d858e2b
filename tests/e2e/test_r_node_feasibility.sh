#!/usr/bin/env bash
# (r) Node feasibility: quota is ample, the nodes are not. On rack-1 (2 nodes x 8 GPUs) with 3
# GPUs held on each node by pinned Jobs outside muster, 10 GPUs are free (5 + 5). A gang of 8 x
# 1 GPU is admitted and runs whole (5 + 3). A 5-GPU single-pod Job submitted next fits the quota
# but no node: its Workload stays pending with the placement message and no pod is created, so
# it can't take GPUs the gang needs (no partial placement, no deadlock). Once the gang finishes,
# it runs.
source "$(dirname "$0")/lib.sh"
wait_nodes_idle "${RACK1_NODES[@]}"
make_namespace
make_flavor e2e-rack1 "{example.com/rack: rack-1}"
cluster_queue_of e2e-r e2e-rack1 100
local_queue lq e2e-r

# Fillers: no queue label, so muster leaves them alone; the manager still sees their pods.
for n in "${RACK1_NODES[@]}"; do
	job_yaml "filler-${n##*-}" "" 1 3 "" | with_node_selector kubernetes.io/hostname "$n" | k create -f - >/dev/null
done
wait_until 60 "the fillers to run" running_at_least filler-0 1
wait_until 60 "the fillers to run" running_at_least filler-1 1
[ "$(gpu_usage "${RACK1_NODES[@]}" | awk '{s += $2} END {print s}')" = 6 ] ||
	fail "rack-1 should hold exactly the fillers' 6 GPUs: $(gpu_usage "${RACK1_NODES[@]}" | tr '\n' ';')"

job_yaml gang lq 8 1 25s | k create -f - >/dev/null
wait_until 30 "a Workload for the gang" has_workload gang
gwl=$(workload_of gang)
wait_until 30 "the gang's admission" field_is workloads.kueue.x-k8s.io "$gwl" '{.status.conditions[?(@.type=="Admitted")].status}' True
job_yaml five lq 1 5 3s | k create -f - >/dev/null
wait_until 30 "a Workload for the 5-GPU Job" has_workload five
wl=$(workload_of five)
wait_until 30 "the 5-GPU Job's pending reason" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].reason}' TopologyPlacementFailed
msg=$(jp workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].message}')
[[ $msg == "couldn't place pod set main on nodes: "* ]] || fail "the 5-GPU Job waits for another reason: $msg"
echo "5-GPU Job pending: $msg" >&2
wait_until 60 "the whole gang to run" running_at_least gang 8
# While the gang runs: none of its pods waits, and the 5-GPU Job has no pod and no quota.
for ((t = 0; t < 5; t++)); do
	[ "$(pods_of five)" -eq 0 ] || fail "the 5-GPU Job has a pod while the gang runs"
	field_is job five '{.spec.suspend}' true || fail "the 5-GPU Job was started while the gang runs"
	[ "$(running_pods_of gang)" -eq 8 ] || [ "$(jp job gang '{.status.succeeded}')" = 8 ] ||
		fail "the gang runs partly: $(running_pods_of gang) of 8 pods running"
	sleep 1
done
usage=$(k get clusterqueue e2e-r -o jsonpath='{.status.flavorsUsage[?(@.name=="e2e-rack1")].resources[?(@.name=="nvidia.com/gpu")].total}')
[ "$usage" = 8 ] || fail "GPU quota used while the 5-GPU Job waits is '$usage', want the gang's 8"
wait_until 90 "the gang to finish" field_is job gang '{.status.succeeded}' 8
wait_until 30 "the 5-GPU Job's admission after the gang" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 60 "the 5-GPU Job to finish" field_is job five '{.status.succeeded}' 1
pass
