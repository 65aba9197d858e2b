#!/usr/bin/env bash
# (g) A field muster does not implement yet is never silently ignored: it is named in an
# UnsupportedFields condition, and a ClusterQueue whose admission checks would be skipped is
# inactive rather than admitting on a guess.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-g 8
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: e2e-g-cohort}
spec:
  cohortName: research
  namespaceSelector: {}
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: e2e-gpu
      resources: [{name: nvidia.com/gpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: e2e-g-checks}
spec:
  namespaceSelector: {}
  admissionChecksStrategy:
    admissionChecks: [{name: provisioning}]
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: e2e-gpu
      resources: [{name: nvidia.com/gpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: fair, namespace: $NS}
spec:
  clusterQueue: e2e-g
  fairSharing: {weight: "2"}
YAML
on_exit "k delete clusterqueue e2e-g-cohort e2e-g-checks --ignore-not-found --wait=false"
cond() { k get "$1" "$2" ${3:+-n "$3"} -o "jsonpath={.status.conditions[?(@.type==\"$4\")].$5}" 2>/dev/null; }
wait_until 30 "the cohort queue's UnsupportedFields condition" condition_is cq e2e-g-cohort '' UnsupportedFields status True
msg=$(cond cq e2e-g-cohort '' UnsupportedFields message)
[[ $msg == *spec.cohortName* && $msg == *spec.preemption* ]] || fail "cohort queue message: $msg"
[ "$(cond cq e2e-g-cohort '' Active status)" = True ] || fail "a queue with only reported fields should stay active"
wait_until 30 "the admission-check queue to be inactive" condition_is cq e2e-g-checks '' Active status False
[[ $(cond cq e2e-g-checks '' Active message) == *"admission checks"* ]] || fail "inactive message does not name admission checks"
wait_until 30 "the LocalQueue's UnsupportedFields condition" condition_is lq fair "$NS" UnsupportedFields status True
job_yaml partial lq 2 1 5s | sed 's#^  name: partial$#  name: partial\n  annotations:\n    kueue.x-k8s.io/job-min-parallelism: "1"#' | k create -f - >/dev/null
wait_until 30 "a Workload" has_workload partial
wl=$(workload_of partial)
wait_until 30 "the Workload's UnsupportedFields condition" condition_is workload "$wl" "$NS" UnsupportedFields status True
[[ $(cond workload "$wl" "$NS" UnsupportedFields message) == *minCount* ]] || fail "Workload message does not name partial admission"
pass
