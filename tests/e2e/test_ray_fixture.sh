#!/usr/bin/env bash
# The RayJob and RayCluster fixture works on the local cluster (need_kuberay: the real KubeRay
# operator, the fake Ray dashboard, kwok nodes, the real kube-scheduler), with no muster in the
# loop: the manifests of tests/e2e/ray/ without their queue-name label, so the manager leaves
# them alone, and spec.suspend flipped by hand as the manager will flip it.
#   1. A suspended RayJob (head + 2 workers × 2 GPUs) has no RayCluster and no pod. Unsuspended,
#      its pods are created and bound to kwok nodes, and it ends Complete/SUCCEEDED after the
#      fake dashboard's and kwok's 20 s; its RayCluster and pods are then deleted.
#   2. A running RayJob suspended again loses its RayCluster and pods (Suspended/).
#   3. A suspended RayCluster has no pod; unsuspended it becomes "ready" with 3 running pods;
#      suspended again its pods are deleted ("suspended").
source "$(dirname "$0")/lib.sh"
need_kuberay
make_namespace

unsuspend() { k -n "$NS" patch "$1" "$2" --type=merge -p '{"spec":{"suspend":false}}' >/dev/null; }
suspend() { k -n "$NS" patch "$1" "$2" --type=merge -p '{"spec":{"suspend":true}}' >/dev/null; }

# --- 1. a RayJob runs to completion ----------------------------------------------------------
ray_manifest rayjob.yaml "" | k -n "$NS" create -f - >/dev/null
wait_until 30 "RayJob rayjob-gpu to be Suspended" rayjob_state_is rayjob-gpu Suspended/
[ -z "$(k -n "$NS" get rayclusters,pods --no-headers 2>/dev/null)" ] || fail "a suspended RayJob has a RayCluster or pods"
start=$SECONDS
unsuspend rayjob rayjob-gpu
wait_until 30 "RayJob rayjob-gpu to be Running" rayjob_state_is rayjob-gpu Running/RUNNING
cluster=$(jp rayjob rayjob-gpu '{.status.rayClusterName}')
[ -n "$cluster" ] || fail "a running RayJob names no RayCluster"
ray_pods_are "$cluster" 3 Running || fail "RayCluster $cluster has $(ray_pods "$cluster" Running) running pods, not 3"
unbound=$(k -n "$NS" get pods -l "ray.io/cluster=$cluster" -o jsonpath='{range .items[?(@.spec.nodeName=="")]}{.metadata.name} {end}')
[ -z "$unbound" ] || fail "pods not bound to a node: $unbound"
gpus=$(k -n "$NS" get pods -l "ray.io/cluster=$cluster,ray.io/group=workers" \
	-o jsonpath='{range .items[*]}{.spec.containers[0].resources.requests.nvidia\.com/gpu}{" "}{end}')
[ "$gpus" = "2 2 " ] || fail "the workers request GPUs '$gpus', not 2 each"
wait_until 90 "RayJob rayjob-gpu to complete" rayjob_state_is rayjob-gpu Complete/SUCCEEDED
echo "RayJob: unsuspended to Complete/SUCCEEDED in $((SECONDS - start))s" >&2
wait_until 30 "RayCluster $cluster and its pods to go" ray_pods_are "$cluster" 0
field_is job rayjob-gpu '{.status.succeeded}' 1 || fail "the submitter Job did not succeed"

# --- 2. suspending a running RayJob deletes its cluster and pods -----------------------------
ray_manifest rayjob.yaml "" | sed -e 's/name: rayjob-gpu$/name: rayjob-long/' -e '/fake-ray-dashboard.muster.e2e/d' |
	k -n "$NS" create -f - >/dev/null
wait_until 30 "RayJob rayjob-long to be Suspended" rayjob_state_is rayjob-long Suspended/
unsuspend rayjob rayjob-long
wait_until 30 "RayJob rayjob-long to be Running" rayjob_state_is rayjob-long Running/RUNNING
cluster=$(jp rayjob rayjob-long '{.status.rayClusterName}')
wait_until 30 "RayCluster $cluster to have 3 running pods" ray_pods_are "$cluster" 3 Running
suspend rayjob rayjob-long
wait_until 30 "RayJob rayjob-long to be Suspended again" rayjob_state_is rayjob-long Suspended/
wait_until 30 "RayCluster $cluster and its pods to go" ray_pods_are "$cluster" 0
[ -z "$(k -n "$NS" get raycluster "$cluster" --ignore-not-found -o name)" ] || fail "RayCluster $cluster outlived the suspension"

# --- 3. a RayCluster: suspended, ready, suspended ----------------------------------------------
ray_manifest raycluster.yaml "" | k -n "$NS" create -f - >/dev/null
wait_until 30 "RayCluster raycluster-gpu to be suspended" raycluster_state_is raycluster-gpu suspended
ray_pods_are raycluster-gpu 0 || fail "a suspended RayCluster has pods"
start=$SECONDS
unsuspend raycluster raycluster-gpu
wait_until 30 "RayCluster raycluster-gpu to be ready" raycluster_state_is raycluster-gpu ready
ray_pods_are raycluster-gpu 3 Running || fail "a ready RayCluster has $(ray_pods raycluster-gpu Running) running pods, not 3"
echo "RayCluster: unsuspended to ready in $((SECONDS - start))s" >&2
suspend raycluster raycluster-gpu
wait_until 30 "RayCluster raycluster-gpu to be suspended again" raycluster_state_is raycluster-gpu suspended
wait_until 30 "the RayCluster's pods to go" ray_pods_are raycluster-gpu 0
pass
