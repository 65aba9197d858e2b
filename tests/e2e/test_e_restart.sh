#!/usr/bin/env bash
# (e) Restarting the manager mid-run loses nothing: usage is rebuilt from Workload status, the
# running Workload is not admitted a second time, and a Workload that does not fit the remaining
# quota is not admitted on a guess after the restart.
source "$(dirname "$0")/lib.sh"
: "${MUSTER_LOCAL_DIR:?needs MUSTER_LOCAL_DIR to restart the manager}"
make_namespace
make_queues e2e-e 16
job_yaml first lq 8 1 "" | k create -f - >/dev/null
wait_until 30 "a Workload" has_workload first
wl=$(workload_of first)
wait_until 30 "admission" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 60 "8 running pods" running_at_least first 8
since=$(jp workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].lastTransitionTime}')
log=$MUSTER_LOCAL_DIR/logs/muster.log # up.sh rotates it: after the restart it is the new manager's

# Stop the manager and submit a Job while it is down... which the webhook must refuse (a queued
# Job must never be created unsuspended), so submit it after the restart instead.
pid=$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid")
kill -TERM "$pid"
wait_until 20 "the manager to exit" bash -c "! kill -0 $pid"
"$REPO/deploy/local/up.sh" >/dev/null 2>&1 || fail "up.sh could not restart the manager"
job_yaml second lq 10 1 5s | k create -f - >/dev/null
wait_until 30 "a Workload for the second Job" has_workload second
wl2=$(workload_of second)
wait_until 30 "the second Workload's pending reason" field_is workloads.kueue.x-k8s.io "$wl2" '{.status.conditions[?(@.type=="QuotaReserved")].reason}' WaitingForQuota
[ "$(cq_usage e2e-e nvidia.com/gpu)" = 8 ] || fail "usage after restart is $(cq_usage e2e-e nvidia.com/gpu), want 8"
grep -q '"caches synced; admission starts"' "$log" || fail "the restarted manager's log is not $log"
! grep -q "\"workload admitted\",\"workload\":\"$NS/$wl\"" "$log" ||
	fail "the running Workload was admitted again after the restart"
field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="QuotaReserved")].lastTransitionTime}' "$since" ||
	fail "the running Workload's reservation changed"
[ "$(k -n "$NS" get workloads.kueue.x-k8s.io --no-headers | wc -l)" -eq 2 ] || fail "duplicate Workloads exist"
sleep 3
[ "$(pods_of second)" -eq 0 ] || fail "the second Job started although only 8 GPUs are free"
k -n "$NS" delete job first --wait=false >/dev/null
wait_until 60 "the second Job to be admitted" field_is workloads.kueue.x-k8s.io "$wl2" '{.status.conditions[?(@.type=="Admitted")].status}' True
pass
