#!/usr/bin/env bash
# (a) A Job that names a LocalQueue is suspended by the mutating webhook as it is created: the
# object the apiserver stores and returns already has spec.suspend=true, even when the user
# asked for suspend=false. No pod exists until admission.
source "$(dirname "$0")/lib.sh"
make_namespace
# No LocalQueue: the Job must stay suspended, so what we read back is the webhook's doing.
created=$(job_yaml held missing-queue 2 1 "" | sed 's/^spec:$/spec:\n  suspend: false/' |
	k create -f - -o jsonpath='{.spec.suspend}')
[ "$created" = "true" ] || fail "Job was created with spec.suspend=$created, want true"
sleep 3
field_is job held '{.spec.suspend}' true || fail "Job was unsuspended without admission"
[ "$(pods_of held)" -eq 0 ] || fail "a suspended Job has pods"
pass
