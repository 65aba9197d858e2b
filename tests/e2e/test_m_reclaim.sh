#!/usr/bin/env bash
# (m) Reclaim by preemption: ClusterQueue A borrows B's idle GPUs; when B needs its nominal quota
# back (reclaimWithinCohort: Any), A's borrowing Workload is preempted (Preempted reason
# InCohortReclamation), its Job is re-suspended with the pod template restored, B's Job runs,
# and once B's Job finishes A's is admitted again.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-m-unused 1
for q in a b; do
	cluster_queue "e2e-m-$q" 4 e2e-m "{reclaimWithinCohort: Any}"
	local_queue "$q" "e2e-m-$q"
done
job_yaml borrower a 8 1 "" | k create -f - >/dev/null
wait_until 30 "a Workload" has_workload borrower
wl_a=$(workload_of borrower)
wait_until 30 "the borrower's admission" field_is workloads.kueue.x-k8s.io "$wl_a" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 60 "8 running pods" running_at_least borrower 8
job_yaml owner b 4 1 10s | k create -f - >/dev/null
wait_until 30 "a Workload for B" has_workload owner
wl_b=$(workload_of owner)
wait_until 30 "the borrower to be preempted" field_is workloads.kueue.x-k8s.io "$wl_a" '{.status.conditions[?(@.type=="Preempted")].reason}' InCohortReclamation
field_is workloads.kueue.x-k8s.io "$wl_a" '{.status.conditions[?(@.type=="Evicted")].reason}' Preempted || fail "Evicted reason is not Preempted"
wait_until 30 "the borrower's Job to be suspended" field_is job borrower '{.spec.suspend}' true
template_restored() { [ -z "$(jp job borrower '{.spec.template.spec.nodeSelector.nvidia\.com/gpu\.product}')" ]; }
wait_until 30 "the borrower's pod template to be restored" template_restored
wait_until 60 "B's admission" field_is workloads.kueue.x-k8s.io "$wl_b" '{.status.conditions[?(@.type=="Admitted")].status}' True
field_is workloads.kueue.x-k8s.io "$wl_a" '{.status.conditions[?(@.type=="QuotaReserved")].status}' False || fail "the borrower still holds quota"
wait_until 90 "B's Job to complete" field_is job owner '{.status.conditions[?(@.type=="Complete")].status}' True
wait_until 60 "the borrower to be admitted again" field_is workloads.kueue.x-k8s.io "$wl_a" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 30 "the borrower's Job to restart" field_is job borrower '{.spec.suspend}' false
pass
