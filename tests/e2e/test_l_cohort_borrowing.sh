#!/usr/bin/env bash
# (l) Borrowing across a cohort: two ClusterQueues of 4 GPUs each in one cohort; an 8-GPU gang
# in the first is admitted by borrowing the second's idle quota, and the ClusterQueue's status
# shows 4 GPUs borrowed. A 12-GPU gang can never fit (the cohort has 8) and says so.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-l-unused 1 # the shared flavor
cluster_queue e2e-l-a 4 e2e-l
cluster_queue e2e-l-b 4 e2e-l
local_queue a e2e-l-a
job_yaml big a 8 1 "" | k create -f - >/dev/null
wait_until 30 "a Workload" has_workload big
wl=$(workload_of big)
wait_until 30 "admission by borrowing" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 30 "8 GPUs in use" cq_usage_is e2e-l-a nvidia.com/gpu 8
borrowed() { [ "$(k get cq e2e-l-a -o 'jsonpath={.status.flavorsUsage[?(@.name=="e2e-gpu")].resources[?(@.name=="nvidia.com/gpu")].borrowed}')" = 4 ]; }
wait_until 30 "4 GPUs shown as borrowed" borrowed
wait_until 60 "8 running pods" running_at_least big 8
job_yaml huge a 12 1 "" | k create -f - >/dev/null
wait_until 30 "a Workload for the 12-GPU gang" has_workload huge
wl2=$(workload_of huge)
wait_until 30 "a pending reason" field_is workloads.kueue.x-k8s.io "$wl2" '{.status.conditions[?(@.type=="QuotaReserved")].status}' False
[[ $(jp workloads.kueue.x-k8s.io "$wl2" '{.status.conditions[?(@.type=="QuotaReserved")].message}') == *nvidia.com/gpu* ]] ||
	fail "the pending message does not name the GPU shortfall"
pass
