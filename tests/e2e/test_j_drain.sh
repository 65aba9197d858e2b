#!/usr/bin/env bash
# (j) Eviction: stopPolicy HoldAndDrain evicts what a ClusterQueue admitted. The Workload gets
# Evicted (reason ClusterQueueStopped), its Job is suspended with the pod template restored
# (the flavor's nodeSelector and the placement hint removed), the quota is released once the
# pods are gone, and the Workload waits. Setting stopPolicy back to None admits it again and restarts the Job.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-j 8
job_yaml train lq 4 1 "" | k create -f - >/dev/null
wait_until 30 "a Workload" has_workload train
wl=$(workload_of train)
wait_until 60 "4 running pods" running_at_least train 4
field_is job train '{.spec.template.spec.nodeSelector.nvidia\.com/gpu\.product}' NVIDIA-A100-SXM4-80GB ||
	fail "the flavor's nodeSelector was not injected"
[ -n "$(jp job train '{.spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution}')" ] ||
	fail "no placement hint (preferred node affinity) was injected"
k patch clusterqueue e2e-j --type=merge -p '{"spec":{"stopPolicy":"HoldAndDrain"}}' >/dev/null
wait_until 30 "the Evicted condition" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Evicted")].reason}' ClusterQueueStopped
wait_until 30 "the Job to be suspended" field_is job train '{.spec.suspend}' true
template_restored() { [ -z "$(jp job train '{.spec.template.spec.nodeSelector.nvidia\.com/gpu\.product}')" ]; }
wait_until 30 "the pod template to lose the flavor's nodeSelector" template_restored
[ -z "$(jp job train '{.spec.template.spec.affinity.nodeAffinity}')" ] ||
	fail "the placement hint survived the eviction: $(jp job train '{.spec.template.spec.affinity}')"
wait_until 60 "the quota to be released" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].status}' False
[ -z "$(jp workloads.kueue.x-k8s.io "$wl" '{.status.admission}')" ] || fail "status.admission was not cleared"
wait_until 30 "ClusterQueue usage back to 0" cq_usage_is e2e-j nvidia.com/gpu 0
field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Requeued")].status}' True || fail "no Requeued condition"
sleep 2
field_is job train '{.spec.suspend}' true || fail "the Job restarted while its ClusterQueue is stopped"
k patch clusterqueue e2e-j --type=merge -p '{"spec":{"stopPolicy":"None"}}' >/dev/null
wait_until 30 "re-admission" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Evicted")].status}' False || fail "Evicted still True after re-admission"
wait_until 30 "the Job to restart" field_is job train '{.spec.suspend}' false
wait_until 60 "4 running pods again" running_at_least train 4
pass
