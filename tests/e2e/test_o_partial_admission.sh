#!/usr/bin/env bash
# (o) Partial admission: a Job of 8 pods with kueue.x-k8s.io/job-min-parallelism: "4", with only
# 5 GPUs free, is admitted with 5 pods (the largest count that fits), its parallelism lowered
# to 5; evicted (HoldAndDrain), its parallelism goes back to 8 with the rest of the template.
# Where gang scheduling is on (1.37), the gang its PodGroup asks for follows: 5, then 8.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-o 8
job_yaml holder lq 3 1 "" | k create -f - >/dev/null
wait_until 60 "the holder to run" running_at_least holder 3
job_yaml elastic lq 8 1 "" | sed 's#^  name: elastic$#  name: elastic\n  annotations:\n    kueue.x-k8s.io/job-min-parallelism: "4"#' |
	k create -f - >/dev/null
wait_until 30 "a Workload" has_workload elastic
wl=$(workload_of elastic)
field_is workloads.kueue.x-k8s.io "$wl" '{.spec.podSets[0].minCount}' 4 || fail "minCount was not taken from the annotation"
wait_until 30 "partial admission" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
field_is workloads.kueue.x-k8s.io "$wl" '{.status.admission.podSetAssignments[0].count}' 5 ||
	fail "admitted count is $(jp workloads.kueue.x-k8s.io "$wl" '{.status.admission.podSetAssignments[0].count}'), want 5"
wait_until 30 "parallelism lowered to 5" field_is job elastic '{.spec.parallelism}' 5
wait_until 60 "5 running pods" running_at_least elastic 5
# pg_min_is N: the Job's PodGroup (made by the Job controller) asks for a gang of N.
pg_min_is() {
	[ "$(k -n "$NS" get podgroups.scheduling.k8s.io -o json | jq -r '.items[]
		| select(any(.metadata.ownerReferences[]?; .kind == "Job" and .name == "elastic"))
		| .spec.schedulingPolicy.gang.minCount')" = "$1" ]
}
gang=
[ "$(jp job elastic '{.spec.scheduling.schedulingPolicy.gang}')" = "{}" ] && gang=1
[ -z "$gang" ] || wait_until 30 "the PodGroup's gang to follow the admitted count" pg_min_is 5
k patch clusterqueue e2e-o --type=merge -p '{"spec":{"stopPolicy":"HoldAndDrain"}}' >/dev/null
wait_until 30 "the Job to be suspended" field_is job elastic '{.spec.suspend}' true
wait_until 30 "parallelism restored to 8" field_is job elastic '{.spec.parallelism}' 8
[ -z "$gang" ] || wait_until 30 "the PodGroup's gang restored to 8" pg_min_is 8
pass "${gang:+gang minCount 5, then 8}"
