#!/usr/bin/env bash
# (za) Events as Kueue records them (events.k8s.io/v1): a Job's Workload tells QuotaReserved and
# Admitted, the Job CreatedWorkload and Started; a Workload that waits tells why with Kueue
# v0.20's reason (WaitingForQuota, a Warning); a preempted one Preempted and
# EvictedDueToPreempted, and its Job Stopped; a finished one Finished, its Job FinishedWorkload.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-za-unused 1
cluster_queue e2e-za 4 "" "{withinClusterQueue: LowerPriority}"
local_queue q e2e-za
make_priority_classes e2e-za
with_class() { sed "s#^  labels:\$#  labels:\\n    kueue.x-k8s.io/priority-class: $1#"; }

# reasons KIND NAME: the reasons of the events.k8s.io Events about the object, sorted, one line.
reasons() {
	k -n "$NS" get events.events.k8s.io -o json |
		jq -r --arg k "$1" --arg n "$2" '[.items[] | select(.regarding.kind == $k and .regarding.name == $n) | .reason] | unique | join(",")'
}
has_reasons() { # KIND NAME REASON...: every REASON was recorded about the object
	local have r
	have=",$(reasons "$1" "$2"),"
	for r in "${@:3}"; do [[ $have == *",$r,"* ]] || return 1; done
}
event_field() { # KIND NAME REASON FIELD
	k -n "$NS" get events.events.k8s.io -o json |
		jq -r --arg k "$1" --arg n "$2" --arg r "$3" "[.items[] | select(.regarding.kind == \$k and .regarding.name == \$n and .reason == \$r)][0] | $4"
}

job_yaml low q 4 1 "" | with_class e2e-za-low | k create -f - >/dev/null
wait_until 30 "a Workload" has_workload low
wl_low=$(workload_of low)
wait_until 30 "the admission's Events" has_reasons Workload "$wl_low" QuotaReserved Admitted
wait_until 30 "the Job's Events" has_reasons Job low CreatedWorkload Started
[ "$(event_field Workload "$wl_low" Admitted .type)" = Normal ] || fail "Admitted is not a Normal Event"
[[ $(event_field Workload "$wl_low" QuotaReserved .note) == "Quota reserved in ClusterQueue e2e-za, wait time since queued was "* ]] ||
	fail "QuotaReserved's note: $(event_field Workload "$wl_low" QuotaReserved .note)"
[ "$(event_field Workload "$wl_low" Admitted .reportingController)" = muster.io/manager ] ||
	fail "the Events are not reported by muster.io/manager"
[ "$(event_field Job low Started .note)" = "Admitted by clusterQueue e2e-za" ] ||
	fail "Started's note: $(event_field Job low Started .note)"

# A peer of the same priority waits, and says why.
job_yaml peer q 1 1 "" | with_class e2e-za-low | k create -f - >/dev/null
wait_until 30 "a Workload for the peer" has_workload peer
wl_peer=$(workload_of peer)
wait_until 30 "the peer's pending Event" has_reasons Workload "$wl_peer" WaitingForQuota
[ "$(event_field Workload "$wl_peer" WaitingForQuota .type)" = Warning ] || fail "WaitingForQuota is not a Warning"
[[ $(event_field Workload "$wl_peer" WaitingForQuota .note) == *"insufficient unused quota for nvidia.com/gpu"* ]] ||
	fail "WaitingForQuota's note: $(event_field Workload "$wl_peer" WaitingForQuota .note)"
k -n "$NS" delete job peer --wait=false >/dev/null

# A high-priority gang preempts the low one.
job_yaml high q 4 1 2s | with_class e2e-za-high | k create -f - >/dev/null
wait_until 30 "a Workload for the high-priority gang" has_workload high
wl_high=$(workload_of high)
wait_until 60 "the preemption's Events" has_reasons Workload "$wl_low" Preempted EvictedDueToPreempted
[[ $(event_field Workload "$wl_low" Preempted .note) == "Preempted to accommodate a workload ($NS/$wl_high)"* ]] ||
	fail "Preempted's note: $(event_field Workload "$wl_low" Preempted .note)"
wait_until 30 "the low Job's Stopped Event" has_reasons Job low Stopped
# The high gang runs 2 s and finishes.
wait_until 90 "the finish's Events" has_reasons Workload "$wl_high" QuotaReserved Admitted Finished
wait_until 30 "the high Job's FinishedWorkload Event" has_reasons Job high FinishedWorkload
pass
