#!/usr/bin/env bash
# (zd) The decision ledger survives kill -9. 30 one-GPU Jobs of 5 s run through a ClusterQueue
# of 4 GPUs; mid-burst the manager is killed with SIGKILL and started again. Then the SQLite
# file passes PRAGMA integrity_check, its record ids have no gap, every Workload has its admit
# and its finish (those the kill lost are recovered from the Workloads' conditions when the new
# manager takes the lead), no admission is left open, each admission lasted what the cluster
# says (within 2 s), and `kubectl muster usage` adds up exactly the admissions `history` lists.
source "$(dirname "$0")/lib.sh"
WORK_DIR=$(mktemp -d)
on_exit "rm -rf $WORK_DIR"
command -v sqlite3 >/dev/null || fail "no sqlite3 CLI (deploy/setup.sh installs it)"
db="$MUSTER_LOCAL_DIR/muster/ledger.db"
[ -f "$db" ] || fail "no ledger at $db"
make_namespace
make_queues e2e-zd-unused 1
cluster_queue e2e-zd 4
local_queue q e2e-zd
N=30
for i in $(seq 1 $N); do job_yaml "b$i" q 1 1 5s; echo ---; done | k create -f - >/dev/null
finished() { k -n "$NS" get workloads.kueue.x-k8s.io -o json | jq '[.items[] | select(any(.status.conditions[]?; .type == "Finished" and .status == "True"))] | length'; }
at_least_finished() { [ "$(finished)" -ge "$1" ]; }
wait_until 120 "6 Jobs to finish" at_least_finished 6
pid=$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid")
kill -KILL "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
MANAGER_RESTARTS=$((${MANAGER_RESTARTS:-0} + 1))
cp -f "$MUSTER_LOCAL_DIR/logs/muster.log" "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.$MANAGER_RESTARTS" 2>/dev/null || true
echo "killed the manager (pid $pid) with $(finished) of $N finished"
start_manager "${MUSTER_MANAGER_ARGS-}" || fail "the manager did not start again"
wait_until 240 "all $N Jobs to finish" at_least_finished $N

[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || fail "the ledger fails its integrity check"
[ "$(sqlite3 "$db" 'SELECT count(*) = max(id) - min(id) + 1 FROM decisions')" = 1 ] ||
	fail "the ledger's record ids have gaps"
# Every Workload's admit and finish (the reconcile runs once the new manager's caches sync).
# (One admit and one finish each: whichever of its write and its watch event comes first records it.)
complete() {
	sqlite3 "$db" "SELECT name, sum(event = 'admit'), sum(event = 'finish'),
		min(CASE WHEN event = 'admit' THEN time_ms END) <= min(CASE WHEN event = 'finish' THEN time_ms END)
		FROM decisions WHERE namespace = '$NS' GROUP BY name" >"$WORK_DIR/events"
	[ "$(awk -F'|' '$2 == 1 && $3 == 1 && $4 == 1' "$WORK_DIR/events" | wc -l)" -eq $N ]
}
wait_until 30 "an admit, then a finish, for each of the $N Workloads" complete
open=$(sqlite3 "$db" "SELECT count(*) FROM decisions WHERE namespace = '$NS' AND event = 'admit' AND ended_ms IS NULL")
[ "$open" = 0 ] || fail "$open admissions left open"
recovered=$(sqlite3 "$db" "SELECT count(*) FROM decisions WHERE namespace = '$NS' AND reason = 'Recovered'")
echo "figure: records recovered from the cluster after kill -9: $recovered (admits and ends of the lost batch)"

# Each admission's length, by the ledger and by the Workloads' conditions.
k -n "$NS" get workloads.kueue.x-k8s.io -o json | jq -r '.items[] | [.metadata.name,
	(.status.conditions[] | select(.type == "QuotaReserved") | .lastTransitionTime),
	(.status.conditions[] | select(.type == "Finished") | .lastTransitionTime)] | @tsv' >"$WORK_DIR/api.tsv"
sqlite3 -separator $'\t' "$db" "SELECT name, time_ms, ended_ms FROM decisions WHERE namespace = '$NS' AND event = 'admit'" >"$WORK_DIR/ledger.tsv"
bad=$(awk -F'\t' 'NR == FNR { cmd = "date -d " $2 " +%s"; cmd | getline a; close(cmd); cmd = "date -d " $3 " +%s"; cmd | getline f; close(cmd); api[$1] = f - a; next }
	{ d = ($3 - $2) / 1000 - api[$1]; if (d < -2 || d > 2) print $1, ($3 - $2) / 1000, api[$1] }' "$WORK_DIR/api.tsv" "$WORK_DIR/ledger.tsv")
[ -z "$bad" ] || fail "admissions whose length the ledger has wrong (name, ledger s, cluster s): $bad"
# usage adds up exactly what history lists.
kmuster usage --since 1h --by namespace -o json >"$WORK_DIR/usage.json" 2>"$WORK_DIR/err" || fail "kubectl muster usage failed: $(cat "$WORK_DIR/err")"
gpu_hours=$(jq -r --arg ns "$NS" '.items[] | select(.key == $ns) | .resourceHours["nvidia.com/gpu"]' "$WORK_DIR/usage.json")
until_ms=$(( $(date -d "$(jq -r .until "$WORK_DIR/usage.json")" +%s%N) / 1000000 ))
want=$(awk -F'\t' -v u="$until_ms" '{ e = $3 < u ? $3 : u; if (e > $2) s += (e - $2) / 1000 } END { printf "%.6f", s / 3600 }' "$WORK_DIR/ledger.tsv")
awk -v a="$gpu_hours" -v b="$want" 'BEGIN { d = a - b; exit !(d < 1e-6 && d > -1e-6) }' ||
	fail "usage says $gpu_hours GPU-hours, the admissions in the ledger add up to $want"
kmuster history job/b1 -n "$NS" -o json | jq -e '[.items[].event] | index("admit") != null and index("finish") != null' >/dev/null ||
	fail "kubectl muster history job/b1 does not show its admit and finish"
echo "figure: $N Workloads, $gpu_hours GPU-hours by the ledger"
pass
