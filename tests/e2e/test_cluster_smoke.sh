#!/usr/bin/env bash
# Smoke test of the bare local cluster (deploy/local/up.sh): the four default kwok nodes are
# Ready with 8 GPUs and their topology labels, and a plain Job (no queue label) runs through the
# whole chain: kube-scheduler binds its pods, kwok runs them and completes them after the
# pod-complete.stage.kwok.x-k8s.io/delay annotation, the Job controller marks it Complete, and
# the garbage collector removes it.
#
#   export KUBECONFIG=$(deploy/local/up.sh --no-manager | tail -1)
#   KUBECTL=$(deploy/local/build-k8s.sh)/kubectl tests/e2e/test_cluster_smoke.sh
#
# (or `source .devcluster/cluster.env`, which sets both). The last line is
# "PASS test_cluster_smoke" or "FAIL test_cluster_smoke: <reason>"; the exit code matches.
set -euo pipefail

name=test_cluster_smoke
job=smoke-$$-$RANDOM
ns=default
job_created=0

finish() {
	local rc=$?
	trap - EXIT
	if [ "$job_created" = 1 ]; then
		k delete job "$job" -n "$ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
	fi
	if [ "$rc" -ne 0 ] && [ -z "${failed:-}" ]; then
		echo "FAIL $name: exited with status $rc"
	fi
	exit "$rc"
}
trap finish EXIT

fail() {
	failed=1
	echo "FAIL $name: $*"
	exit 1
}

: "${KUBECONFIG:?set KUBECONFIG to the admin kubeconfig of the cluster}"
KUBECTL=${KUBECTL:-kubectl}
command -v "$KUBECTL" >/dev/null || fail "KUBECTL=$KUBECTL not found"
command -v jq >/dev/null || fail "jq not found (deploy/setup.sh installs it)"
k() { "$KUBECTL" --kubeconfig "$KUBECONFIG" --request-timeout=20s "$@"; }

# --- nodes ---------------------------------------------------------------------------------------
expected=(kwok-rack-1-0 kwok-rack-1-1 kwok-rack-2-0 kwok-rack-2-1)
nodes=$(k get nodes -o json) || fail "cannot list nodes"
for n in "${expected[@]}"; do
	info=$(jq -r --arg n "$n" '
		.items[] | select(.metadata.name == $n)
		| [ (any(.status.conditions[]?; .type == "Ready" and .status == "True") | tostring),
		    (.status.allocatable["nvidia.com/gpu"] // "none"),
		    (.metadata.labels["topology.kubernetes.io/zone"] // ""),
		    (.metadata.labels["example.com/rack"] // ""),
		    (.metadata.labels["kubernetes.io/hostname"] // ""),
		    ([.spec.taints[]?.key] | join(",")) ]
		| @tsv' <<<"$nodes")
	[ -n "$info" ] || fail "node $n does not exist"
	IFS=$'\t' read -r ready gpus zone rack host taints <<<"$info"
	[ "$ready" = true ] || fail "node $n is not Ready"
	[ "$gpus" = 8 ] || fail "node $n has nvidia.com/gpu allocatable '$gpus', want 8"
	[ -n "$zone" ] || fail "node $n has no topology.kubernetes.io/zone label"
	[ -n "$rack" ] || fail "node $n has no example.com/rack label"
	[ "$host" = "$n" ] || fail "node $n has kubernetes.io/hostname '$host'"
	[ -z "$taints" ] || fail "node $n still has taints: $taints"
done
racks=$(jq -r '[.items[].metadata.labels["example.com/rack"] // empty] | unique | length' <<<"$nodes")
[ "$racks" -ge 2 ] || fail "want nodes in 2 racks, found $racks"
echo "nodes: ${expected[*]} Ready with 8 GPUs each"

# --- a Job of two GPU pods, each completing 3 s after it starts -----------------------------------
k -n "$ns" create -f - >/dev/null <<EOF || fail "cannot create job $job"
apiVersion: batch/v1
kind: Job
metadata:
  name: $job
spec:
  completions: 2
  parallelism: 2
  backoffLimit: 0
  template:
    metadata:
      annotations:
        pod-complete.stage.kwok.x-k8s.io/delay: "3s"
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: fake.invalid/smoke:1   # never pulled: kwok only simulates the pod
        resources:
          limits: {nvidia.com/gpu: "1", cpu: "1", memory: 1Gi}
EOF
job_created=1
echo "job $job created"

deadline=$((SECONDS + 120))
while :; do
	status=$(k -n "$ns" get job "$job" -o json | jq -r '
		[.status.conditions[]? | select(.status == "True") | .type] as $c
		| if ($c | index("Complete")) then "Complete"
		  elif ($c | index("Failed")) then "Failed"
		  else "running" end + " \(.status.succeeded // 0)"') || status="unknown 0"
	read -r state succeeded <<<"$status"
	[ "$state" != Complete ] || break
	if [ "$state" = Failed ] || [ "$SECONDS" -ge "$deadline" ]; then
		k -n "$ns" get job "$job" -o wide || true
		k -n "$ns" get pods -l "job-name=$job" -o wide || true
		k -n "$ns" get events --sort-by=.lastTimestamp | tail -n 20 || true
		if [ "$state" = Failed ]; then fail "job $job failed"; fi
		fail "job $job not complete within 120s (state $state, $succeeded of 2 pods succeeded)"
	fi
	sleep 1
done
[ "$succeeded" = 2 ] || fail "job $job complete with $succeeded succeeded pods, want 2"
echo "job $job complete after $((120 - (deadline - SECONDS)))s"

# Foreground deletion waits for the garbage collector to delete the pods first.
k -n "$ns" delete job "$job" --cascade=foreground --timeout=60s >/dev/null ||
	fail "deleting job $job did not finish within 60s"
job_created=0
left=$(k -n "$ns" get pods -l "job-name=$job" -o name)
[ -z "$left" ] || fail "pods left after deleting job $job: $left"
echo "job $job deleted"

echo "PASS $name"
