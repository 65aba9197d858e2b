#!/usr/bin/env bash
# (d) A Job naming a LocalQueue that does not exist stays suspended, and its Workload says why.
# Creating the queue later admits it. The same for a LocalQueue whose ClusterQueue is missing.
source "$(dirname "$0")/lib.sh"
make_namespace
job_yaml orphan later 1 1 5s | k create -f - >/dev/null
wait_until 30 "a Workload for the Job" has_workload orphan
wl=$(workload_of orphan)
wait_until 30 "a Misconfigured condition" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].reason}' Misconfigured
msg=$(jp workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].message}')
[ "$msg" = "LocalQueue later doesn't exist" ] || fail "unclear message: $msg"
field_is job orphan '{.spec.suspend}' true || fail "the Job was unsuspended"
# The LocalQueue appears, pointing at a ClusterQueue that does not exist yet.
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: later, namespace: $NS}
spec: {clusterQueue: e2e-d-late}
YAML
wait_until 30 "the ClusterQueue message" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].message}' "ClusterQueue e2e-d-late doesn't exist"
field_is job orphan '{.spec.suspend}' true || fail "the Job was unsuspended"
make_queues e2e-d-late 4
wait_until 30 "admission once the queues exist" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 30 "the Job to start" field_is job orphan '{.spec.suspend}' false
pass
