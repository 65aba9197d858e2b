#!/usr/bin/env bash
# (zf) The hold without a webhook (Kubernetes 1.36+, issue 13). On a server that serves
# MutatingAdmissionPolicy, muster holds queued Jobs with a policy the apiserver runs itself.
# With the manager killed (SIGKILL, nothing cleaned up), labelled Jobs created meanwhile are
# stored suspended and get no pod, unlabelled Jobs run, and the ValidatingAdmissionPolicy still
# refuses a queue name no LocalQueue can have. Back up, muster admits the held Jobs; and a
# running Job's queue can't change. (With a fail-closed webhook as the hold, every queued
# create fails while the manager is down: kueue#5244.)
source "$(dirname "$0")/lib.sh"
: "${MUSTER_LOCAL_DIR:?needs MUSTER_LOCAL_DIR to restart the manager}"
HELD=5
TMP=$(mktemp -d)
on_exit "rm -rf $TMP"
needs mutatingadmissionpolicies admissionregistration.k8s.io 36 "no MutatingAdmissionPolicy before Kubernetes 1.36: the webhook holds"
make_namespace
make_queues e2e-zf 8

k get mutatingadmissionpolicy muster-hold-jobs >/dev/null 2>&1 ||
	fail "no MutatingAdmissionPolicy muster-hold-jobs: the hold is not the policy's"
k get validatingadmissionpolicybinding muster-queue-name >/dev/null 2>&1 ||
	fail "no ValidatingAdmissionPolicyBinding muster-queue-name"
hold=$(k get mutatingwebhookconfiguration muster-mutating-webhook-configuration \
	-o 'jsonpath={.metadata.annotations.muster\.kueue\.x-k8s\.io/admission-hold}')
[ "$hold" = AdmissionPolicy ] || fail "the webhook configuration names the hold '$hold', want AdmissionPolicy"
grep -q '"admission hold and gang scheduling","hold":"AdmissionPolicy"' "$MUSTER_LOCAL_DIR/logs/muster.log" ||
	fail "the manager did not log the hold it uses"

# Down hard: no drain, no lease release, the webhook configurations left pointing at it.
# shellcheck disable=SC2016 # expanded when the test ends
on_exit 'start_manager "$MANAGER_ARGS_AT_START"'
pid=$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid")
MANAGER_RESTARTS=$((${MANAGER_RESTARTS:-0} + 1))
cp -f "$MUSTER_LOCAL_DIR/logs/muster.log" "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.$MANAGER_RESTARTS"
kill -9 "$pid"
wait_until 20 "the manager to die" bash -c "! kill -0 $pid"

for ((i = 1; i <= HELD; i++)); do
	job_yaml "held-$i" lq 1 1 2s | k create -f - >/dev/null ||
		fail "creating queued Job held-$i failed while the manager was down"
done
job_yaml free "" 1 0 "" | k create -f - >/dev/null || fail "creating an unlabelled Job failed"
job_yaml bad lq 1 1 "" | sed 's/queue-name: lq/queue-name: a..b/' | k create -f - >/dev/null 2>"$TMP/bad.err" &&
	fail "a Job with the queue name a..b was created while the manager was down"
grep -q 'must be a valid LocalQueue name' "$TMP/bad.err" ||
	fail "the refusal of a..b does not say why: $(cat "$TMP/bad.err")"

wait_until 30 "the unlabelled Job's pod to run" running_at_least free 1
for ((i = 1; i <= HELD; i++)); do
	field_is job "held-$i" '{.spec.suspend}' true || fail "held-$i is stored with suspend=$(jp job "held-$i" '{.spec.suspend}')"
done
sleep 3
for ((i = 1; i <= HELD; i++)); do
	[ "$(pods_of "held-$i")" -eq 0 ] || fail "held-$i has pods while the manager is down"
done

start_manager "$MANAGER_ARGS_AT_START" || fail "up.sh could not start the manager again"
for ((i = 1; i <= HELD; i++)); do
	wait_until 60 "held-$i to be admitted and run" running_at_least "held-$i" 1
done
# A running Job keeps its queue (the policy's second rule).
job_yaml long lq 1 1 "" | k create -f - >/dev/null
wait_until 60 "the Job long to run" running_at_least long 1
k -n "$NS" label job long kueue.x-k8s.io/queue-name=other --overwrite >/dev/null 2>"$TMP/relabel.err" &&
	fail "the queue of a running Job changed"
grep -q 'cannot change; suspend it first' "$TMP/relabel.err" ||
	fail "the refusal of the queue change does not say why: $(cat "$TMP/relabel.err")"
pass
