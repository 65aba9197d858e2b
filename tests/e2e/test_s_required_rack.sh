#!/usr/bin/env bash
# (s) A rack-required gang: 12 pods x 1 GPU with kueue.x-k8s.io/podset-required-topology:
# example.com/rack, through a flavor naming a Topology [example.com/rack, kubernetes.io/hostname].
# Each rack has 2 nodes x 8 GPUs; a 5-GPU pod pinned to rack-1 leaves it 11 free GPUs, too few,
# so the whole gang must land on rack-2 (16 free). The manager pins the chosen rack with a
# nodeSelector entry at start, so the kube-scheduler can't put a pod on the other rack.
source "$(dirname "$0")/lib.sh"
wait_nodes_idle
make_namespace
make_topology e2e-racks example.com/rack kubernetes.io/hostname
make_flavor e2e-topo "{nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}" e2e-racks
cluster_queue_of e2e-s e2e-topo 32
local_queue lq e2e-s

# The filler has no queue label: muster leaves it alone, but the manager sees its pod.
job_yaml filler "" 1 5 "" | with_node_selector example.com/rack rack-1 | k create -f - >/dev/null
wait_until 60 "the filler to run on rack-1" running_at_least filler 1

job_yaml gang lq 12 1 "" | with_pod_annotation kueue.x-k8s.io/podset-required-topology example.com/rack |
	k create -f - >/dev/null
wait_until 30 "a Workload for the gang" has_workload gang
wl=$(workload_of gang)
field_is workloads.kueue.x-k8s.io "$wl" '{.spec.podSets[0].topologyRequest.required}' example.com/rack ||
	fail "the Workload's topologyRequest is '$(jp workloads.kueue.x-k8s.io "$wl" '{.spec.podSets[0].topologyRequest}')'"
wait_until 30 "the gang's admission" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 60 "12 running pods" running_at_least gang 12
sel=$(jp job gang '{.spec.template.spec.nodeSelector.example\.com/rack}')
[ "$sel" = rack-2 ] || fail "the Job's nodeSelector pins rack '$sel', want rack-2"
racks=$(pod_nodes gang | while read -r n; do node_label "$n" example.com/rack; echo; done | sort | uniq -c | tr -s ' ')
[ "$(pod_nodes gang | wc -l)" -eq 12 ] || fail "only $(pod_nodes gang | wc -l) of 12 pods are bound"
[ "$racks" = " 12 rack-2" ] || fail "the gang's pods are on racks:$racks, want all 12 on rack-2"
echo "gang of 12: $(pod_nodes gang | sort | uniq -c | tr -s ' ' | tr '\n' ';') (filler on $(pod_nodes filler))" >&2
pass
