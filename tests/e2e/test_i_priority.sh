#!/usr/bin/env bash
# (i) Priority: a Workload takes its priority from the Job's WorkloadPriorityClass label, and
# when quota frees up the higher-priority Workload is admitted first even though it is newer.
# A Job naming a class that doesn't exist gets no Workload (nothing is admitted on a guessed
# priority) and a Warning event says why; creating the class lets it through.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-i 8
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: e2e-low}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: e2e-high}
value: 1000
YAML
on_exit "k delete workloadpriorityclass e2e-low e2e-high e2e-late --ignore-not-found"
with_class() { sed "s#^  labels:\$#  labels:\\n    kueue.x-k8s.io/priority-class: $1#"; }
job_yaml blocker lq 8 1 "" | k create -f - >/dev/null
wait_until 60 "the blocker to run" running_at_least blocker 8
job_yaml low lq 8 1 5s | with_class e2e-low | k create -f - >/dev/null
sleep 1
job_yaml high lq 8 1 5s | with_class e2e-high | k create -f - >/dev/null
wait_until 30 "Workloads for both" has_workload high
wl_low=$(workload_of low)
wl_high=$(workload_of high)
field_is workloads.kueue.x-k8s.io "$wl_high" '{.spec.priority}' 1000 || fail "high Workload priority is $(jp workloads.kueue.x-k8s.io "$wl_high" '{.spec.priority}')"
field_is workloads.kueue.x-k8s.io "$wl_high" '{.spec.priorityClassRef.name}' e2e-high || fail "priorityClassRef not set"
field_is workloads.kueue.x-k8s.io "$wl_low" '{.spec.priority}' 10 || fail "low Workload priority is wrong"
k -n "$NS" delete job blocker --wait=false >/dev/null
wait_until 60 "the high-priority Workload to be admitted" field_is workloads.kueue.x-k8s.io "$wl_high" '{.status.conditions[?(@.type=="Admitted")].status}' True
# Not admitted: QuotaReserved is False, or not written yet (a Workload waiting for quota says
# why once it has waited 5 s).
[ "$(jp workloads.kueue.x-k8s.io "$wl_low" '{.status.conditions[?(@.type=="QuotaReserved")].status}')" != True ] ||
	fail "the older low-priority Workload was admitted ahead of the high-priority one"

job_yaml late lq 1 1 5s | with_class e2e-late | k create -f - >/dev/null
event_for() { k -n "$NS" get events --field-selector "involvedObject.name=$1,reason=$2" --no-headers 2>/dev/null | grep -q .; }
wait_until 30 "a PriorityClassNotFound event" event_for late PriorityClassNotFound
[ -z "$(workload_of late)" ] || fail "a Workload was created with a guessed priority"
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: e2e-late}
value: 5
YAML
wait_until 30 "the Workload once the class exists" has_workload late
pass
