#!/usr/bin/env bash
# (n) Priority preemption within a ClusterQueue (withinClusterQueue: LowerPriority): a running
# low-priority gang is preempted (Preempted reason InClusterQueue) for a high-priority one that
# needs its GPUs; an equal-priority newcomer preempts nothing.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-n-unused 1
cluster_queue e2e-n 8 "" "{withinClusterQueue: LowerPriority}"
local_queue q e2e-n
make_priority_classes e2e-n
with_class() { sed "s#^  labels:\$#  labels:\\n    kueue.x-k8s.io/priority-class: $1#"; }
job_yaml low q 8 1 "" | with_class e2e-n-low | k create -f - >/dev/null
wait_until 30 "a Workload" has_workload low
wl_low=$(workload_of low)
wait_until 30 "the low-priority admission" field_is workloads.kueue.x-k8s.io "$wl_low" '{.status.conditions[?(@.type=="Admitted")].status}' True
job_yaml peer q 8 1 "" | with_class e2e-n-low | k create -f - >/dev/null
wait_until 30 "a Workload for the peer" has_workload peer
sleep 3
field_is workloads.kueue.x-k8s.io "$wl_low" '{.status.conditions[?(@.type=="Evicted")].status}' "" ||
	field_is workloads.kueue.x-k8s.io "$wl_low" '{.status.conditions[?(@.type=="Evicted")].status}' False ||
	fail "an equal-priority Workload preempted another"
k -n "$NS" delete job peer --wait=false >/dev/null
job_yaml high q 8 1 "" | with_class e2e-n-high | k create -f - >/dev/null
wait_until 30 "a Workload for the high-priority gang" has_workload high
wl_high=$(workload_of high)
wait_until 30 "the low-priority Workload to be preempted" field_is workloads.kueue.x-k8s.io "$wl_low" '{.status.conditions[?(@.type=="Preempted")].reason}' InClusterQueue
wait_until 60 "the high-priority admission" field_is workloads.kueue.x-k8s.io "$wl_high" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 30 "the low-priority Job to be suspended" field_is job low '{.spec.suspend}' true
wait_until 60 "the high-priority pods" running_at_least high 8
pass
