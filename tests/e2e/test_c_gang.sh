#!/usr/bin/env bash
# (c) Gang admission: with 6 of 16 GPUs free, a Job of 8 pods x 1 GPU creates no pod; once all 8
# fit, all 8 start together.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-c 16
# 10 GPUs held by a Job whose pods run until it is deleted.
job_yaml blocker lq 5 2 "" | k create -f - >/dev/null
wait_until 60 "the blocker to run" running_at_least blocker 5
job_yaml gang lq 8 1 30s | k create -f - >/dev/null
wait_until 30 "a Workload for the gang" has_workload gang
wl=$(workload_of gang)
wait_until 30 "the gang's pending reason" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].reason}' WaitingForQuota
msg=$(jp workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].message}')
[[ $msg == *"insufficient unused quota for nvidia.com/gpu"*"2 more needed"* ]] ||
	fail "pending message does not say why: $msg"
sleep 5
[ "$(pods_of gang)" -eq 0 ] || fail "the gang has pods although only 6 GPUs are free"
field_is job gang '{.spec.suspend}' true || fail "the gang's Job is not suspended"
k -n "$NS" delete job blocker --wait=false >/dev/null
wait_until 60 "the gang to be admitted" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 60 "8 gang pods running" running_at_least gang 8
# "Together": every pod of the gang was created within a few seconds of the first.
span=$(k -n "$NS" get pods -l batch.kubernetes.io/job-name=gang -o jsonpath='{range .items[*]}{.metadata.creationTimestamp}{"\n"}{end}' |
	sort | sed -n '1p;$p' | { read -r a; read -r b; echo $(($(date -d "$b" +%s) - $(date -d "$a" +%s))); })
[ "$span" -le 3 ] || fail "gang pods were created ${span}s apart"
pass
