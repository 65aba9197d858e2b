#!/usr/bin/env bash
# (g) A field muster does not implement yet is never silently ignored: it is named in an
# UnsupportedFields condition, and a ClusterQueue whose admission checks would be skipped is
# inactive rather than admitting on a guess. Cohorts and preemption, now implemented, are not.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-g 8
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: e2e-g-cohort}
spec:
  cohortName: e2e-g-research
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
metadata: {name: e2e-g-concurrent}
spec:
  namespaceSelector: {}
  concurrentAdmissionPolicy: {migration: {mode: TryPreferredFlavors}}
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
YAML
workload_yaml timed lq 1 'maximumExecutionTimeSeconds: 3600' | k apply -f - >/dev/null
on_exit "k delete clusterqueue e2e-g-cohort e2e-g-concurrent e2e-g-checks --ignore-not-found --wait=false"
cond() { k get "$1" "$2" ${3:+-n "$3"} -o "jsonpath={.status.conditions[?(@.type==\"$4\")].$5}" 2>/dev/null; }
wait_until 30 "the cohort queue to be active with every field supported" condition_is cq e2e-g-cohort '' UnsupportedFields status False
[ "$(cond cq e2e-g-cohort '' Active status)" = True ] || fail "the cohort queue is not active"
wait_until 30 "the concurrent-admission queue's UnsupportedFields condition" condition_is cq e2e-g-concurrent '' UnsupportedFields status True
[[ $(cond cq e2e-g-concurrent '' UnsupportedFields message) == *concurrentAdmissionPolicy* ]] || fail "message does not name concurrentAdmissionPolicy"
wait_until 30 "the admission-check queue to be inactive" condition_is cq e2e-g-checks '' Active status False
[[ $(cond cq e2e-g-checks '' Active message) == *"admission checks"* ]] || fail "inactive message does not name admission checks"
wait_until 30 "the Workload's UnsupportedFields condition" condition_is workloads.kueue.x-k8s.io timed "$NS" UnsupportedFields status True
[[ $(cond workloads.kueue.x-k8s.io timed "$NS" UnsupportedFields message) == *maximumExecutionTimeSeconds* ]] || fail "Workload message does not name maximumExecutionTimeSeconds"
pass
