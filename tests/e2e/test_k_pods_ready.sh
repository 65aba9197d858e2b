#!/usr/bin/env bash
# (k) waitForPodsReady (tests/e2e/manager-config.yaml: timeout 15s, backoff base 3s, limit 1):
# a Workload whose pods become ready gets PodsReady=True; one whose pods can never be scheduled
# is evicted with PodsReadyTimeout, requeued with requeueState, admitted again after the
# backoff, and once the limit is used up deactivated (spec.active=false) with its Job suspended.
# The deactivation patches the Workload itself, which the manager's ServiceAccount may do only
# if config/rbac grants `patch` on workloads (up.sh runs the manager with that account's token);
# the manager logs "workload deactivated" once, when the write has landed, and no write of
# this Workload is refused.
source "$(dirname "$0")/lib.sh"
MLOG=${MUSTER_LOCAL_DIR:?}/logs/muster.log
log_start=$(($(wc -l <"$MLOG") + 1))
# manager_log_count TEXT: lines of this test's part of the manager's log about the stuck
# Workload that contain TEXT.
manager_log_count() { tail -n "+$log_start" "$MLOG" | grep -F "\"$NS/$wl\"" | grep -cF "$1" || true; }
make_namespace
make_queues e2e-k 8
job_yaml fine lq 1 1 "" | k create -f - >/dev/null
wait_until 30 "a Workload for the ready Job" has_workload fine
wait_until 60 "PodsReady=True" field_is workloads.kueue.x-k8s.io "$(workload_of fine)" '{.status.conditions[?(@.type=="PodsReady")].reason}' Started
# Pods that no node can take: they stay Pending, never ready. Required pod affinity to a pod
# that doesn't exist: placement (which looks at nodes, not at other pods) finds room, so the
# Job is admitted, and kube-scheduler can't place them.
job_yaml stuck lq 2 1 "" | sed 's#^      restartPolicy: Never$#      restartPolicy: Never\n      affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {muster.test/nothing: here}}, topologyKey: kubernetes.io/hostname}]}}#' |
	k create -f - >/dev/null
wait_until 30 "a Workload for the stuck Job" has_workload stuck
wl=$(workload_of stuck)
wait_until 30 "admission" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 30 "PodsReady=False WaitForStart" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="PodsReady")].reason}' WaitForStart
wait_until 40 "a PodsReadyTimeout eviction" field_is workloads.kueue.x-k8s.io "$wl" '{.status.requeueState.count}' 1
[ -n "$(jp workloads.kueue.x-k8s.io "$wl" '{.status.requeueState.requeueAt}')" ] || fail "no requeueAt"
wait_until 30 "the Job to be suspended" field_is job stuck '{.spec.suspend}' true
wait_until 30 "the requeue (quota released)" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Requeued")].status}' True
# After the backoff it is admitted again, times out again, and the limit (1) deactivates it.
wait_until 90 "deactivation" field_is workloads.kueue.x-k8s.io "$wl" '{.spec.active}' false
wait_until 30 "the Job to be suspended again" field_is job stuck '{.spec.suspend}' true
wait_until 60 "the quota to be released again" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].status}' False
sleep 3
field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].status}' False ||
	fail "a deactivated Workload was admitted again"
n=$(manager_log_count '"workload deactivated')
[ "$n" = 1 ] || fail "the manager logged \"workload deactivated\" $n times for $wl, not once"
n=$(manager_log_count '"status":403')
[ "$n" = 0 ] || fail "$n writes for $wl were forbidden (config/rbac/role.yaml lacks a permission)"
pass
