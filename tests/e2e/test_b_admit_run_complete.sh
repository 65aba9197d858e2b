#!/usr/bin/env bash
# (b) A queued Job gets a Workload, which is admitted; the Job is unsuspended with the flavor's
# node labels, its pods run and complete, the Workload finishes and the quota is released.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-b 16
job_yaml train lq 4 2 5s | k create -f - >/dev/null
wait_until 30 "a Workload for the Job" has_workload train
wl=$(workload_of train)
[[ $wl == job-train-* ]] || fail "Workload name $wl does not follow Kueue's job-<name>-<hash>"
wait_until 30 "admission" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
field_is workloads.kueue.x-k8s.io "$wl" '{.status.admission.clusterQueue}' e2e-b || fail "admitted into the wrong ClusterQueue"
field_is workloads.kueue.x-k8s.io "$wl" '{.status.admission.podSetAssignments[0].count}' 4 || fail "podSet count is not 4"
field_is workloads.kueue.x-k8s.io "$wl" '{.status.admission.podSetAssignments[0].resourceUsage.nvidia\.com/gpu}' 8 ||
	fail "GPU usage in the admission is not 8"
wait_until 30 "the ClusterQueue to show 8 GPUs in use" cq_usage_is e2e-b nvidia.com/gpu 8
wait_until 30 "the Job to be unsuspended" field_is job train '{.spec.suspend}' false
field_is job train '{.spec.template.spec.nodeSelector.nvidia\.com/gpu\.product}' NVIDIA-A100-SXM4-80GB ||
	fail "the flavor's nodeLabels were not injected as nodeSelector"
wait_until 60 "4 running pods" running_at_least train 4
wait_until 90 "the Job to complete" field_is job train '{.status.conditions[?(@.type=="Complete")].status}' True
wait_until 30 "the Workload to finish" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Finished")].status}' True
wait_until 30 "the quota to be released" cq_usage_is e2e-b nvidia.com/gpu 0
wait_until 30 "admittedWorkloads back to 0" cq_field_is e2e-b '{.status.admittedWorkloads}' 0
pass
