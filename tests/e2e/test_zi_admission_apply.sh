#!/usr/bin/env bash
# (zi) The admission is applied server-side under Kueue's field manager, kueue-admission, as
# Kueue applies it, so a tool that clears an admission as Kueue's own do (its performance
# runner: an apply as kueue-admission that leaves status.admission out) removes muster's in
# that one write. The Workload is then pending again and admitted anew, and the manager never
# has to clear a stale admission of its own.
source "$(dirname "$0")/lib.sh"
MLOG=${MUSTER_LOCAL_DIR:?}/logs/muster.log
log_start=$(($(wc -l <"$MLOG") + 1))
make_namespace
make_queues e2e-zi 8
workload_yaml bare lq 1 | k apply -f - >/dev/null
wl=workloads.kueue.x-k8s.io
wait_until 30 "the Workload admitted" condition_is $wl bare "$NS" QuotaReserved status True
owner=$(k -n "$NS" get $wl bare --show-managed-fields -o json |
	jq -r '[.metadata.managedFields[] | select(.fieldsV1["f:status"]["f:admission"] != null)
	        | "\(.manager)/\(.operation)"] | join(",")')
[ "$owner" = "kueue-admission/Apply" ] || fail "status.admission is owned by '$owner', not kueue-admission/Apply"

# What Kueue's runner does to finish an eviction: QuotaReserved=False, no admission.
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
answer=$(k apply --server-side --field-manager=kueue-admission --force-conflicts --subresource=status -o json -f - <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: bare, namespace: $NS}
status:
  conditions:
  - {type: QuotaReserved, status: "False", reason: Pending, message: Evicted by the test, lastTransitionTime: "$now"}
YAML
) || fail "the apply as kueue-admission was refused"
[ "$(jq -r '.status.admission // "none"' <<<"$answer")" = none ] ||
	fail "the apply as kueue-admission left status.admission in place"
wait_until 30 "the Workload admitted again" condition_is $wl bare "$NS" QuotaReserved status True
wait_until 10 "the ClusterQueue's usage back at 1 GPU" cq_usage_is e2e-zi nvidia.com/gpu 1
n=$(tail -n "+$log_start" "$MLOG" | grep -F "\"$NS/bare\"" | grep -cF "clearing a stale admission" || true)
[ "$n" = 0 ] || fail "the manager cleared a stale admission $n times"
pass
