#!/usr/bin/env bash
# The README's first command: sets up the machine, builds everything, brings up the local
# cluster with the muster manager (deploy/local/up.sh), then runs the sample in deploy/sample/:
# a 16-GPU ClusterQueue and three 8-GPU training Jobs, of which the third has to wait. It
# prints `kubectl get` output as admission progresses, until every Job has completed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$here/../.." && pwd)
SAMPLE=$REPO/deploy/sample

KUBECONFIG=$("$here/up.sh" | tail -1)
export KUBECONFIG
# shellcheck disable=SC1091
source "$(dirname "$KUBECONFIG")/cluster.env"
k() { "$KUBECTL" "$@"; }
# `kubectl muster`: the kubectl-muster link beside the manager's binary, and its endpoint.
muster_dir=$(dirname "$(readlink "/proc/$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid")/exe")")
kmuster() {
	PATH="$muster_dir:$PATH" MUSTER_ENDPOINT="https://127.0.0.1:$MUSTER_VISIBILITY_PORT" \
		MUSTER_ENDPOINT_CA="$MUSTER_LOCAL_DIR/muster/ca.crt" k muster "$@"
}
show() {
	echo
	echo "=== $1"
	k get clusterqueue training
	k -n muster-sample get localqueue,workloads.kueue.x-k8s.io,jobs
}

started=$(date -u +%Y-%m-%dT%H:%M:%SZ) # the ledger outlives a run: show only this one's
echo "--- applying the queues (deploy/sample/queues.yaml)"
k delete namespace muster-sample --ignore-not-found --wait=true >/dev/null
k apply -f "$SAMPLE/queues.yaml"
echo "--- submitting three 8-GPU Jobs (deploy/sample/jobs.yaml)"
k create -f "$SAMPLE/jobs.yaml"
# Every Workload's QuotaReserved says how it stands; a Workload waiting for quota says why
# once it has waited 5 s.
for _ in $(seq 1 30); do
	n=$(k -n muster-sample get workloads.kueue.x-k8s.io -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="QuotaReserved")].reason}{"\n"}{end}' | grep -c . || true)
	[ "$n" -ge 3 ] && break
	sleep 0.5
done
# The three Jobs are created within a second, so which one waits is the engine's tie-break.
waiting=$(k -n muster-sample get jobs -o jsonpath='{range .items[?(@.spec.suspend==true)]}{.metadata.name}{"\n"}{end}' | sed -n 1p)
show "after submission: two Jobs admitted whole, ${waiting:-one} waits for 8 GPUs"
k -n muster-sample get workloads.kueue.x-k8s.io -o custom-columns='WORKLOAD:.metadata.name,RESERVED:.status.conditions[?(@.type=="QuotaReserved")].reason,MESSAGE:.status.conditions[?(@.type=="QuotaReserved")].message'
echo
echo "=== kubectl muster why job/${waiting:-finetune-c}: what it lacks, and who holds it"
kmuster why -n muster-sample "job/${waiting:-finetune-c}"
deadline=$((SECONDS + 180))
shown_c=0
while :; do
	done_jobs=$(k -n muster-sample get jobs -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Complete")].status}{"\n"}{end}' | grep -c True || true)
	c_admitted=$(k -n muster-sample get jobs "${waiting:-finetune-c}" -o jsonpath='{.spec.suspend}')
	if [ "$c_admitted" = false ] && [ "$shown_c" = 0 ]; then
		shown_c=1
		show "a Job finished and released its quota: ${waiting:-finetune-c} is admitted"
	fi
	[ "$done_jobs" -eq 3 ] && break
	if [ $SECONDS -gt $deadline ]; then
		show "timed out"
		exit 1
	fi
	sleep 2
done
show "all three Jobs completed; the quota is free again"
k get clusterqueue training -o jsonpath='{"GPU usage now: "}{.status.flavorsUsage[0].resources[?(@.name=="nvidia.com/gpu")].total}{"\n"}'
echo
echo "=== kubectl muster history cq/training: the decisions, from the ledger"
for _ in $(seq 1 10); do
	[ "$(kmuster history cq/training --since "$started" -o json 2>/dev/null | grep -c '"finish"')" -ge 3 ] && break
	sleep 0.5
done
kmuster history cq/training --since "$started"
echo
echo "=== kubectl muster usage --by namespace --since $started"
kmuster usage --by namespace --since "$started"
echo
echo "The cluster keeps running. KUBECONFIG=$KUBECONFIG; stop it with deploy/local/down.sh"
