#!/usr/bin/env bash
# (u) A node with more than 16 GPUs. The test adds two kwok nodes of its own in a pool that a
# flavor selects: kwok-mig-0, an 8 x H100 node under the NVIDIA device plugin's MIG "single"
# strategy (each of its 56 slices is one nvidia.com/gpu), and kwok-cpu-0 with no GPU. A gang of
# 20 x 1 GPU, two 1-GPU Jobs and two CPU-only Jobs of 2 pods: all are admitted and their pods
# bind, the 22 GPU pods on kwok-mig-0 (more GPUs than any node muster modelled before: it used
# to refuse nodes with more than 16, and node feasibility then kept every GPU Job pending) and
# the CPU-only pods on kwok-cpu-0 (pods asking for no GPU stay off GPU nodes).
source "$(dirname "$0")/lib.sh"
MIG_NODE=kwok-mig-0
CPU_NODE=kwok-cpu-0
POOL=mig-$$

# pool_node NAME CPU MEMORY [GPUS]: a kwok Node (deploy/local/nodes.yaml explains the fields) in
# this test's pool, deleted at exit after the namespace's pods.
pool_node() {
	local name=$1 res="cpu: \"$2\", memory: $3, pods: \"110\"${4:+, nvidia.com/gpu: \"$4\"}"
	k create -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    kubernetes.io/hostname: $name
    example.com/pool: $POOL
status:
  capacity: {$res}
  allocatable: {$res}
  nodeInfo: {architecture: amd64, operatingSystem: linux}
YAML
}
k delete node "$MIG_NODE" "$CPU_NODE" --ignore-not-found >/dev/null
on_exit "k delete node $MIG_NODE $CPU_NODE --ignore-not-found --wait=false"
# Pods on a deleted kwok node would wait for the pod GC: delete them while kwok still can.
on_exit "k -n $NS delete pods --all --grace-period=0 --force"
on_exit "k -n $NS delete jobs --all --wait=false"
pool_node "$MIG_NODE" 224 2Ti 56
pool_node "$CPU_NODE" 64 256Gi
node_ready() { condition_is node "$1" "" Ready status True; }
wait_until 30 "$MIG_NODE to be Ready" node_ready "$MIG_NODE"
wait_until 30 "$CPU_NODE to be Ready" node_ready "$CPU_NODE"

make_namespace
make_flavor e2e-mig "{example.com/pool: $POOL}"
cluster_queue_of e2e-u e2e-mig 56
local_queue lq e2e-u

# cpu_job_yaml NAME PODS: job_yaml without the GPU request.
cpu_job_yaml() {
	job_yaml "$1" lq "$2" 0 "" | sed -e 's/, nvidia.com\/gpu: "0"//' -e '/limits: {nvidia.com\/gpu: "0"}/d'
}
all_running() { # JOB:PODS...
	local j
	for j in "$@"; do running_at_least "${j%%:*}" "${j##*:}" || return 1; done
}
# on_only NODE JOB...: every pod of these Jobs is bound to NODE.
on_only() {
	local node=$1 j
	shift
	for j in "$@"; do
		[ -z "$(pod_nodes "$j" | grep -vx "$node")" ] || return 1
	done
}

job_yaml gang lq 20 1 "" | k create -f - >/dev/null
job_yaml one-a lq 1 1 "" | k create -f - >/dev/null
job_yaml one-b lq 1 1 "" | k create -f - >/dev/null
cpu_job_yaml cpu-a 2 | k create -f - >/dev/null
cpu_job_yaml cpu-b 2 | k create -f - >/dev/null
# Not wait_until: on a timeout the failure should say what the gang's Workload says.
for ((i = 0; i < 180; i++)); do
	all_running gang:20 one-a:1 one-b:1 cpu-a:2 cpu-b:2 && break
	sleep 0.5
done
all_running gang:20 one-a:1 one-b:1 cpu-a:2 cpu-b:2 ||
	fail "after 90s not every pod runs (gang $(running_pods_of gang)/20, one-a $(running_pods_of one-a)/1, cpu-a $(running_pods_of cpu-a)/2); the gang's Workload: $(jp workloads.kueue.x-k8s.io "$(workload_of gang)" '{.status.conditions[?(@.type=="QuotaReserved")].message}')"
on_only "$MIG_NODE" gang one-a one-b ||
	fail "GPU pods off $MIG_NODE: $(for j in gang one-a one-b; do pod_nodes "$j"; done | sort | uniq -c | tr -s ' \n' ' ')"
on_only "$CPU_NODE" cpu-a cpu-b ||
	fail "CPU-only pods off $CPU_NODE: $(for j in cpu-a cpu-b; do pod_nodes "$j"; done | sort | uniq -c | tr -s ' \n' ' ')"
used=$(gpu_usage "$MIG_NODE" | awk '{print $2}')
[ "$used" = 22 ] || fail "$MIG_NODE holds $used GPUs, want 22"
hint=$(k -n "$NS" get job gang -o jsonpath='{.spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]}')
[ "$hint" = "$MIG_NODE" ] || fail "the gang's hint names node '$hint', want $MIG_NODE"
echo "22 GPU pods on $MIG_NODE (56 GPUs), 4 CPU-only pods on $CPU_NODE" >&2
pass
