#!/usr/bin/env bash
# (x) The control plane restarts under the manager during a run: first kube-apiserver, then
# etcd (with the apiserver up, answering errors meanwhile). Each time, a Job created the moment
# the apiserver answers /readyz again (while the manager is still reconnecting) must be admitted
# within RESTART_RECOVERY_MAX (5) seconds of that moment, the Jobs that were running complete,
# and nothing is admitted twice. Prints the recovery time of each restart.
source "$(dirname "$0")/lib.sh"
: "${MUSTER_LOCAL_DIR:?needs MUSTER_LOCAL_DIR}"
# shellcheck disable=SC1091
source "$MUSTER_LOCAL_DIR/cluster.env"
# shellcheck disable=SC1091
source "$REPO/deploy/local/lib.sh" # DIR, PIDS: from MUSTER_LOCAL_DIR
MAX=${RESTART_RECOVERY_MAX:-5}
log=$MUSTER_LOCAL_DIR/logs/muster.log

# The control plane's own controllers (the kube-scheduler, kube-controller-manager's Job
# controller, kwok) take a while to reconnect too, so the pods of admitted Jobs may not be
# ready within the suite's 15 s waitForPodsReady timeout: this test runs its manager with 5m.
sed 's/^  timeout: 15s$/  timeout: 5m/; s/^  recoveryTimeout: 15s$/  recoveryTimeout: 5m/' \
	"$REPO/tests/e2e/manager-config.yaml" >"$MUSTER_LOCAL_DIR/manager-config-$TEST_NAME.yaml"
grep -q 'timeout: 5m' "$MUSTER_LOCAL_DIR/manager-config-$TEST_NAME.yaml" || fail "could not make the test's manager config"
use_manager_config "$MUSTER_LOCAL_DIR/manager-config-$TEST_NAME.yaml"
wait_until 30 "the manager to lead" bash -c "grep -q '\"became the leader\"' $log"
mpid=$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid")

make_namespace
make_queues e2e-x 16
for j in 1 2 3 4; do job_yaml "run-$j" lq 2 1 20s; echo ---; done | k create -f - >/dev/null
for j in 1 2 3 4; do
	wait_until 60 "Job run-$j to start" running_at_least "run-$j" 2
done

readyz() { k get --raw /readyz >/dev/null 2>&1; }
now() { date +%s.%N; }
admitted() { # JOB: whether its Workload holds an admission
	[ -n "$(k -n "$NS" get workloads.kueue.x-k8s.io -o jsonpath="{.items[?(@.metadata.ownerReferences[0].name==\"$1\")].status.admission.clusterQueue}" 2>/dev/null)" ]
}
# restart COMPONENT LABEL: stop it, start it again (up.sh starts what is down), create a Job as
# soon as the apiserver answers, and time its admission from that moment.
restart() {
	local component=$1 job=$2 t_up t_admitted
	stop_component "$component" >/dev/null 2>&1 || fail "could not stop $component"
	sleep 2 # the manager sees the outage: watches break, requests fail
	readyz && fail "the apiserver still answers /readyz with $component stopped"
	"$REPO/deploy/local/up.sh" >/dev/null 2>"$MUSTER_LOCAL_DIR/restart-$TEST_NAME-$component.err" &
	local up=$!
	on_exit "kill $up 2>/dev/null"
	until readyz; do
		kill -0 "$up" 2>/dev/null || readyz || fail "up.sh did not bring $component back"
		sleep 0.05
	done
	t_up=$(now)
	until job_yaml "$job" lq 1 1 1s | k create -f - >/dev/null 2>&1; do
		awk -v a="$t_up" -v b="$(now)" 'BEGIN { exit !(b - a > 30) }' && fail "could not create Job $job after the $component restart"
		sleep 0.1
	done
	until admitted "$job"; do
		awk -v a="$t_up" -v b="$(now)" 'BEGIN { exit !(b - a > 60) }' && fail "Job $job not admitted 60 s after the $component restart"
		sleep 0.1
	done
	t_admitted=$(now)
	wait "$up" || fail "up.sh failed after the $component restart (see restart-$TEST_NAME-$component.err)"
	recovery=$(awk -v a="$t_up" -v b="$t_admitted" 'BEGIN { printf "%.2f", b - a }')
	echo "control plane restart: $component back -> Job $job admitted in ${recovery}s" >&2
	awk -v r="$recovery" -v m="$MAX" 'BEGIN { exit !(r <= m) }' ||
		fail "admission resumed ${recovery}s after $component answered again (more than ${MAX}s)"
	kill -0 "$mpid" 2>/dev/null || fail "the manager exited during the $component restart"
}

restart kube-apiserver after-apiserver
restart etcd after-etcd

for j in 1 2 3 4; do
	wait_until 90 "Job run-$j to complete" field_is job "run-$j" '{.status.conditions[?(@.type=="Complete")].status}' True
done
for j in after-apiserver after-etcd; do
	wait_until 60 "Job $j to complete" field_is job "$j" '{.status.conditions[?(@.type=="Complete")].status}' True
done
twice=$(grep '"workload admitted"' "$log" | grep -F "\"$NS/" | jq -r '.workload' | sort | uniq -d)
[ -z "$twice" ] || fail "admitted twice: $twice"
pass
