#!/usr/bin/env bash
# (zh) Gang binding by the stock kube-scheduler (Kubernetes 1.37, issue 13). The local control
# plane runs with GenericWorkload and WorkloadWithJob, so muster creates queued Jobs with
# spec.scheduling.schedulingPolicy.gang and the Job controller makes a PodGroup of them.
#
# A Job of 4 pods x 2 GPUs, pinned to one 8-GPU node, is admitted while the node is free; the
# scheduler is stopped, so its pods wait unbound. Then a pod muster does not queue takes 2 of
# the node's GPUs (bound by nodeName: capacity taken outside muster's view between admission and
# binding), and the scheduler comes back. With the gang, none of the 4 pods binds. With
# gangScheduling Disabled, the same sequence binds 3: the test can fail.
source "$(dirname "$0")/lib.sh"
: "${MUSTER_LOCAL_DIR:?needs MUSTER_LOCAL_DIR to stop the scheduler}"
NODE=${RACK2_NODES[1]}
TMP=$(mktemp -d)
on_exit "rm -rf $TMP"
needs podgroups scheduling.k8s.io 37 "no scheduling.k8s.io/v1beta1 PodGroup (Kubernetes < 1.37, or the gates off)"
make_namespace
make_queues e2e-zh 8

# The scheduler comes back whatever happens (up.sh starts only what is down).
# shellcheck disable=SC2016 # expanded when the test ends
on_exit 'start_manager "$MANAGER_ARGS_AT_START"'
stop_scheduler() {
	local pid
	pid=$(cat "$MUSTER_LOCAL_DIR/pids/kube-scheduler.pid")
	kill -TERM "$pid"
	wait_until 20 "kube-scheduler to stop" bash -c "! kill -0 $pid 2>/dev/null"
}
start_scheduler() { start_manager "$MANAGER_ARGS_AT_START" || fail "up.sh could not start kube-scheduler again"; }

# blocker: 2 GPUs on $NODE, bound by nodeName (no scheduler, no queue).
blocker() {
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: blocker, namespace: $NS}
spec:
  nodeName: $NODE
  restartPolicy: Never
  containers:
  - name: c
    image: fake
    resources:
      requests: {cpu: "1", nvidia.com/gpu: "2"}
      limits: {nvidia.com/gpu: "2"}
YAML
}
bound_pods() { pod_nodes "$1" | wc -l; }
pods_exist() { [ "$(pods_of "$1")" -eq "$2" ]; }

# run_case JOB: admit JOB while $NODE is free and the scheduler is stopped, take 2 GPUs, start
# the scheduler.
run_case() {
	local job=$1 wl
	wait_nodes_idle "$NODE"
	stop_scheduler
	job_yaml "$job" lq 4 2 "" | with_node_selector kubernetes.io/hostname "$NODE" | k create -f - >/dev/null
	wait_until 30 "a Workload for $job" has_workload "$job"
	wl=$(workload_of "$job")
	wait_until 60 "$job to be admitted" field_is workloads.kueue.x-k8s.io "$wl" '{.status.conditions[?(@.type=="Admitted")].status}' True
	wait_until 60 "$job's 4 pods" pods_exist "$job" 4
	[ "$(bound_pods "$job")" -eq 0 ] || fail "$job's pods were bound with the scheduler stopped"
	blocker
	wait_until 30 "the blocker to run" field_is pod blocker '{.status.phase}' Running
	start_scheduler
}
bound_is() { [ "$(bound_pods "$1")" -eq "$2" ]; }

# No waitForPodsReady: its timeout would evict the waiting pods and blur what binds.
config() {
	printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n'
	printf 'waitForPodsReady: {enable: false}\nintegrations: {frameworks: [batch/job]}\n'
	printf 'gangScheduling: {mode: %s}\n' "$1"
}

# With the gang: none binds while only 3 fit, and all 4 once the blocker is gone (so it was
# the gang that held them, not something else).
config Enabled >"$TMP/gang.yaml"
use_manager_config "$TMP/gang.yaml"
run_case gang
[ "$(jp job gang '{.spec.scheduling.schedulingPolicy.gang}')" = "{}" ] ||
	fail "the Job was not created with gang scheduling: spec.scheduling=$(jp job gang '{.spec.scheduling}')"
k -n "$NS" get podgroups.scheduling.k8s.io -o name | grep -q . || fail "the Job controller made no PodGroup"
sleep 15
gang_bound=$(bound_pods gang)
[ "$gang_bound" -eq 0 ] || fail "with the gang, $gang_bound of 4 pods bound where only 3 fit"
k -n "$NS" delete pod blocker --grace-period=0 --force >/dev/null 2>&1
wait_until 90 "the gang's 4 pods to bind once they fit" bound_is gang 4

# Without it: the same, with the manager's gangScheduling Disabled: 3 bind.
k -n "$NS" delete job gang --wait=false >/dev/null
wait_until 60 "the gang Job's quota to be free" cq_usage_is e2e-zh nvidia.com/gpu 0
config Disabled >"$TMP/nogang.yaml"
use_manager_config "$TMP/nogang.yaml"
run_case basic
[ -z "$(jp job basic '{.spec.scheduling.schedulingPolicy.gang}')" ] || fail "gangScheduling Disabled still made a gang"
wait_until 60 "3 of the 4 pods to bind" bound_is basic 3
sleep 5
basic_bound=$(bound_pods basic)
[ "$basic_bound" -eq 3 ] || fail "without the gang, $basic_bound of 4 pods bound, want 3"
pass "gang: 0 of 4 pods bound, then 4 once they fit; without: 3 of 4"
