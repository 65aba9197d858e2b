#!/usr/bin/env bash
# (zb) Queue positions are the order the queue really admits in. A ClusterQueue of 1 GPU is
# held by a blocker while 20 one-GPU Jobs of three priorities wait in two LocalQueues; the
# visibility endpoint (Kueue's PendingWorkloadsSummary) and `kubectl muster pending` list them;
# then the blocker goes and they run one at a time, and the ledger's admissions (`kubectl muster
# history cq/...`) come in exactly the listed order, higher priorities first.
source "$(dirname "$0")/lib.sh"
WORK_DIR=$(mktemp -d)
on_exit "rm -rf $WORK_DIR"
make_namespace
make_queues e2e-zb-unused 1
cluster_queue e2e-zb 1
local_queue a e2e-zb
local_queue b e2e-zb
for p in 1 2 3; do
	k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: e2e-zb-p$p}
value: $((p * 100))
YAML
done
on_exit "k delete workloadpriorityclass e2e-zb-p1 e2e-zb-p2 e2e-zb-p3 --ignore-not-found"
with_class() { sed "s#^  labels:\$#  labels:\\n    kueue.x-k8s.io/priority-class: $1#"; }

job_yaml blocker a 1 1 "" | k create -f - >/dev/null
wait_until 60 "the blocker to run" running_at_least blocker 1
for i in $(seq -w 1 20); do
	q=a; ((10#$i % 2)) || q=b
	job_yaml "j$i" "$q" 1 1 1s | with_class "e2e-zb-p$((10#$i % 3 + 1))" | k create -f - >/dev/null
done
pending_is() { cq_field_is e2e-zb '{.status.pendingWorkloads}' "$1"; }
wait_until 60 "20 pending Workloads" pending_is 20
base=/apis/visibility.kueue.x-k8s.io/v1beta2
vis "$base/clusterqueues/e2e-zb/pendingworkloads" >"$WORK_DIR/cq.json" 2>"$WORK_DIR/err" ||
	fail "the visibility endpoint did not answer: $(cat "$WORK_DIR/err")"
jq -e '.kind == "PendingWorkloadsSummary" and (.items | length) == 20' "$WORK_DIR/cq.json" >/dev/null ||
	fail "not 20 pending workloads: $(head -c 300 "$WORK_DIR/cq.json")"
jq -e '[.items[].positionInClusterQueue] == [range(20)]' "$WORK_DIR/cq.json" >/dev/null ||
	fail "positions in the ClusterQueue are not 0..19 in order"
jq -e '[.items[].priority] | . == (sort | reverse)' "$WORK_DIR/cq.json" >/dev/null ||
	fail "higher priorities are not first: $(jq -c '[.items[].priority]' "$WORK_DIR/cq.json")"
listed=$(jq -r '[.items[].metadata.name] | join(" ")' "$WORK_DIR/cq.json")
# Each LocalQueue's list is the ClusterQueue's, filtered, with its own positions.
for q in a b; do
	vis "$base/namespaces/$NS/localqueues/$q/pendingworkloads" >"$WORK_DIR/$q.json" || fail "no answer for LocalQueue $q"
	want=$(jq -r --arg q "$q" '[.items[] | select(.localQueueName == $q) | .metadata.name] | join(" ")' "$WORK_DIR/cq.json")
	have=$(jq -r '[.items[].metadata.name] | join(" ")' "$WORK_DIR/$q.json")
	[ "$have" = "$want" ] || fail "LocalQueue $q lists $have, the ClusterQueue's order says $want"
	jq -e '[.items[].positionInLocalQueue] == [range(.items | length)]' "$WORK_DIR/$q.json" >/dev/null ||
		fail "positions in LocalQueue $q are not 0.. in order"
done
# The plugin, through real kubectl, says the same.
kmuster pending e2e-zb >"$WORK_DIR/pending.txt" 2>"$WORK_DIR/err" || fail "kubectl muster pending failed: $(cat "$WORK_DIR/err")"
head -1 "$WORK_DIR/pending.txt" | grep -q POSITION || fail "kubectl muster pending prints no table: $(head -3 "$WORK_DIR/pending.txt")"
plugin=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "NAME") c = i; next } { printf "%s%s", sep, $c; sep = " " }' "$WORK_DIR/pending.txt")
[ "$plugin" = "$listed" ] || fail "kubectl muster pending lists $plugin, the endpoint $listed"
kmuster pending lq/a -n "$NS" -o json | jq -e '.items | length == 10' >/dev/null || fail "kubectl muster pending lq/a -o json"

# Let them run, one at a time.
k -n "$NS" delete job blocker --wait=false >/dev/null
all_done() { [ "$(k -n "$NS" get workloads.kueue.x-k8s.io -o json | jq '[.items[] | select(any(.status.conditions[]?; .type == "Finished" and .status == "True"))] | length')" -ge 20 ]; }
wait_until 240 "the 20 Jobs to finish one by one" all_done
admitted=""
read_history() {
	kmuster history cq/e2e-zb --limit 200 -o json >"$WORK_DIR/history.json" 2>"$WORK_DIR/err" || return 1
	admitted=$(jq -r --arg ns "$NS" '[.items[] | select(.event == "admit" and .namespace == $ns and (.name | startswith("job-j")))] |
		sort_by(.time, .id) | [.[].name] | join(" ")' "$WORK_DIR/history.json")
	[ "$(wc -w <<<"$admitted")" -eq 20 ]
}
wait_until 30 "20 admissions in the ledger" read_history
[ "$admitted" = "$listed" ] ||
	fail "the queue admitted in another order than its positions: listed $listed; admitted $admitted"
pass
