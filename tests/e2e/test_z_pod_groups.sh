#!/usr/bin/env bash
# (z) Plain Pods and pod groups (Kueue's pod integration), with the real kube-scheduler:
#   - a group of 4 pods x 1 GPU waits whole (every pod gated, none scheduled) while only 3 GPUs
#     are free, then all 4 are released together, run, and finish; their finalizers go;
#   - a group that never reaches its count (2 of 3 pods) gets no Workload, says why on its
#     pods, and blocks nothing: a single queued Pod after it runs;
#   - a group preempted by a higher-priority Job loses its pods and its quota; recreated (as its
#     controller would), it comes back once the Job is gone.
source "$(dirname "$0")/lib.sh"
make_namespace
make_queues e2e-z-unused 1
cluster_queue e2e-z 8 "" "{withinClusterQueue: LowerPriority}"
local_queue q e2e-z
make_priority_classes e2e-z

# pod_yaml NAME GROUP TOTAL DELAY [CLASS]: a queued Pod of 1 GPU; GROUP "" = a Pod alone.
pod_yaml() {
	local name=$1 group=$2 total=$3 delay=$4 class=${5:-}
	cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $name
  namespace: $NS
  labels:
    kueue.x-k8s.io/queue-name: q
$([ -n "$group" ] && echo "    kueue.x-k8s.io/pod-group-name: $group")
$([ -n "$class" ] && echo "    kueue.x-k8s.io/priority-class: $class")
  annotations:
$([ -n "$group" ] && echo "    kueue.x-k8s.io/pod-group-total-count: \"$total\"")
$([ -n "$delay" ] && echo "    pod-complete.stage.kwok.x-k8s.io/delay: \"$delay\"" || echo "    e2e: \"z\"")
spec:
  restartPolicy: Never
  containers:
  - name: worker
    image: fake
    resources:
      requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}
      limits: {nvidia.com/gpu: "1"}
YAML
}
phase_of() { jp pod "$1" '{.status.phase}'; }
gates_of() { jp pod "$1" '{.spec.schedulingGates[*].name}'; }
wl_condition() { jp workloads.kueue.x-k8s.io "$1" "{.status.conditions[?(@.type==\"$2\")].status}"; }
all_running() { for p in "$@"; do [ "$(phase_of "$p")" = Running ] || return 1; done; }
all_gone() { for p in "$@"; do k -n "$NS" get pod "$p" >/dev/null 2>&1 && return 1; done; return 0; }

# --- 1. a whole group waits, then starts together ------------------------------------------
job_yaml blocker q 5 1 "" | k create -f - >/dev/null
wait_until 60 "the blocker to run" running_at_least blocker 5
for i in 1 2 3 4; do pod_yaml "g-$i" gang 4 20s | k create -f - >/dev/null; done
[ "$(gates_of g-1)" = kueue.x-k8s.io/admission ] || fail "a queued pod was not gated: $(gates_of g-1)"
[ "$(jp pod g-1 '{.metadata.finalizers[*]}')" = kueue.x-k8s.io/managed ] || fail "no managed finalizer"
wait_until 30 "the group's Workload" field_is workloads.kueue.x-k8s.io gang '{.metadata.name}' gang
wait_until 30 "the group's pending reason" field_is workloads.kueue.x-k8s.io gang '{.status.conditions[?(@.type=="QuotaReserved")].reason}' WaitingForQuota
sleep 3
for i in 1 2 3 4; do
	[ -z "$(jp pod "g-$i" '{.spec.nodeName}')" ] || fail "pod g-$i was scheduled while its group can't fit"
	[ "$(gates_of "g-$i")" = kueue.x-k8s.io/admission ] || fail "pod g-$i lost its gate before admission"
done
k -n "$NS" delete job blocker --wait=false >/dev/null
wait_until 60 "the group's admission" field_is workloads.kueue.x-k8s.io gang '{.status.conditions[?(@.type=="Admitted")].status}' True
wait_until 60 "all 4 group pods running" all_running g-1 g-2 g-3 g-4
# "Together": released within a few seconds of each other (the scheduler binds each once its
# gate is gone).
span=$(k -n "$NS" get pods g-1 g-2 g-3 g-4 -o jsonpath='{range .items[*]}{.status.startTime}{"\n"}{end}' |
	sort | sed -n '1p;$p' | { read -r a; read -r b; echo $(($(date -d "$b" +%s) - $(date -d "$a" +%s))); })
[ "$span" -le 3 ] || fail "the group's pods started ${span}s apart"
[ "$(jp pod g-1 '{.metadata.labels.kueue\.x-k8s\.io/podset}')" != "" ] || fail "a released pod has no podset label"
[ "$(jp pod g-1 '{.spec.nodeSelector.nvidia\.com/gpu\.product}')" = NVIDIA-A100-SXM4-80GB ] ||
	fail "a released pod lacks its flavor's node label: $(jp pod g-1 '{.spec.nodeSelector}')"
wait_until 60 "the group to finish" field_is workloads.kueue.x-k8s.io gang '{.status.conditions[?(@.type=="Finished")].status}' True
wait_until 30 "the finalizers to go" field_is pod g-1 '{.metadata.finalizers}' ""
wait_until 30 "the quota back" cq_usage_is e2e-z nvidia.com/gpu 0

# --- 2. a group short of pods blocks nothing ---------------------------------------------------
pod_yaml p-1 partial 3 "" | k create -f - >/dev/null
pod_yaml p-2 partial 3 "" | k create -f - >/dev/null
waiting_event() {
	k -n "$NS" get events --field-selector involvedObject.name=p-1,reason=WaitingForPodGroup \
		-o jsonpath='{.items[0].message}' | grep -q "2 of 3 pods of group partial exist"
}
wait_until 30 "the incomplete group to say why it waits" waiting_event
k -n "$NS" get workloads.kueue.x-k8s.io partial >/dev/null 2>&1 && fail "an incomplete group got a Workload"
pod_yaml solo "" 1 "" | k create -f - >/dev/null
wait_until 60 "the single pod to run" all_running solo
[ "$(gates_of p-1)" = kueue.x-k8s.io/admission ] || fail "a pod of the incomplete group was released"
k -n "$NS" delete pod solo p-1 p-2 --wait=false >/dev/null

# --- 3. preemption deletes the group's pods; recreated, it comes back --------------------------
for i in 1 2 3 4; do pod_yaml "l-$i" low 4 "" e2e-z-low | k create -f - >/dev/null; done
wait_until 60 "the low-priority group to run" all_running l-1 l-2 l-3 l-4
job_yaml high q 8 1 "" | sed 's#^  labels:$#  labels:\n    kueue.x-k8s.io/priority-class: e2e-z-high#' | k create -f - >/dev/null
# Preempted: its Workload says so, unless the garbage collector already took it with its pods
# (the pods own it, and an evicted group's pods go at once).
preempted_or_gone() {
	field_is workloads.kueue.x-k8s.io low '{.status.conditions[?(@.type=="Preempted")].reason}' InClusterQueue ||
		! k -n "$NS" get workloads.kueue.x-k8s.io low >/dev/null 2>&1
}
wait_until 30 "the group to be preempted" preempted_or_gone
wait_until 60 "the group's pods to go" all_gone l-1 l-2 l-3 l-4
wait_until 60 "the high-priority Job to run" running_at_least high 8
k -n "$NS" delete job high --wait=false >/dev/null
wait_until 60 "the high-priority Job's quota back" cq_usage_is e2e-z nvidia.com/gpu 0
for i in 1 2 3 4; do pod_yaml "l-$i" low 4 "" e2e-z-low | k create -f - >/dev/null; done
wait_until 60 "the recreated group to run" all_running l-1 l-2 l-3 l-4
wait_until 30 "its Workload admitted again" field_is workloads.kueue.x-k8s.io low '{.status.conditions[?(@.type=="Admitted")].status}' True
pass
