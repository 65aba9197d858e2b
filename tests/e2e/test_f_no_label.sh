#!/usr/bin/env bash
# (f) A Job without a queue label is left untouched: not suspended, no Workload, and it runs.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-f 16
created=$(job_yaml plain "" 2 1 3s | k create -f - -o jsonpath='{.spec.suspend}')
[ "$created" = "false" ] || fail "an unlabelled Job was created with spec.suspend=$created"
wait_until 90 "the Job to complete" field_is job plain '{.status.conditions[?(@.type=="Complete")].status}' True
[ -z "$(workload_of plain)" ] || fail "an unlabelled Job got a Workload"
[ "$(k -n "$NS" get workloads.kueue.x-k8s.io --no-headers 2>/dev/null | wc -l)" -eq 0 ] || fail "Workloads exist in the namespace"
pass
