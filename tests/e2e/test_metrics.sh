#!/usr/bin/env bash
# Metrics through a real Prometheus (Debian's package): it scrapes the manager's /metrics every
# second; a ClusterQueue of 2 GPUs gets one 2-GPU Job admitted and one left pending by quota.
# Through Prometheus' HTTP API: kueue_admitted_workloads_total for the queue is 1, and
# kueue_pending_workloads (active + inadmissible) equals the ClusterQueue's
# status.pendingWorkloads (1). The manager's text also passes `promtool check metrics`.
# Prometheus listens on 19090 + the cluster's port offset (read from MUSTER_METRICS_PORT, which
# up.sh sets to 18082 + offset), keeps its data in a temporary directory and is stopped when
# the test ends.
source "$(dirname "$0")/lib.sh"

: "${MUSTER_METRICS_PORT:?set MUSTER_METRICS_PORT (the cluster.env of a deploy/local/up.sh that knows it)}"
command -v prometheus >/dev/null || fail "prometheus is not installed (deploy/setup.sh installs it)"
PROM_PORT=$((19090 + MUSTER_METRICS_PORT - 18082))
PROM="http://127.0.0.1:$PROM_PORT"
CQ=e2e-metrics
curl_() { curl --noproxy '*' -sf --max-time 5 "$@"; }

# The manager serves the format itself, before any Prometheus is involved.
text=$(curl_ "http://127.0.0.1:$MUSTER_METRICS_PORT/metrics") || fail "GET /metrics on port $MUSTER_METRICS_PORT failed"
grep -q '^muster_build_info{' <<<"$text" || fail "no muster_build_info in /metrics"
if command -v promtool >/dev/null; then
	lint=$(promtool check metrics <<<"$text" 2>&1) || fail "promtool check metrics: $lint"
fi

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
cat >"$tmp/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
- job_name: muster
  static_configs:
  - targets: ['127.0.0.1:$MUSTER_METRICS_PORT']
YAML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$tmp/prometheus.log" 2>&1 &
prom_pid=$!
on_exit "kill $prom_pid; wait $prom_pid"
prom_ready() { curl_ "$PROM/-/ready" >/dev/null; }
wait_until 30 "Prometheus to be ready on port $PROM_PORT" prom_ready

# query PROMQL: the value of the single sample PROMQL returns, or nothing.
query() {
	curl_ -G "$PROM/api/v1/query" --data-urlencode "query=$1" |
		jq -r 'select(.status == "success") | .data.result | if length == 1 then .[0].value[1] else empty end'
}
query_is() { [ "$(query "$1")" = "$2" ]; }
wait_until 30 "Prometheus to scrape the manager" query_is 'up{job="muster"}' 1

make_namespace
make_queues "$CQ" 2
job_yaml fits lq 1 2 "" | k create -f - >/dev/null
wait_until 30 "a Workload for the first Job" has_workload fits
wait_until 30 "its admission" field_is workloads.kueue.x-k8s.io "$(workload_of fits)" '{.status.conditions[?(@.type=="Admitted")].status}' True
job_yaml waits lq 1 2 "" | k create -f - >/dev/null
wait_until 30 "a Workload for the second Job" has_workload waits
wait_until 30 "the ClusterQueue's status to show one pending Workload" cq_field_is "$CQ" '{.status.pendingWorkloads}' 1

admitted="kueue_admitted_workloads_total{cluster_queue=\"$CQ\"}"
wait_until 30 "Prometheus to see the admission" query_is "$admitted > 0" 1
[ "$(query "$admitted")" = 1 ] || fail "$admitted is $(query "$admitted"), want 1"
field_is workloads.kueue.x-k8s.io "$(workload_of waits)" '{.status.conditions[?(@.type=="Admitted")].status}' True &&
	fail "the second Job was admitted beyond the quota"

# The pending count Prometheus has equals what the ClusterQueue's status says, now and a few
# scrapes later (both come from the same place in the manager).
pending="sum(kueue_pending_workloads{cluster_queue=\"$CQ\"})"
status_pending() { k get clusterqueue "$CQ" -o jsonpath='{.status.pendingWorkloads}'; }
pending_matches() { [ "$(query "$pending")" = "$(status_pending)" ]; }
wait_until 15 "kueue_pending_workloads to equal status.pendingWorkloads ($(status_pending))" pending_matches
sleep 3
got=$(query "$pending") want=$(status_pending)
[ "$got" = "$want" ] && [ "$want" = 1 ] || fail "kueue_pending_workloads says $got, status.pendingWorkloads $want (want 1)"
# The queue's gauges: one reserving, one admitted, status active.
query_is "kueue_reserving_active_workloads{cluster_queue=\"$CQ\"}" 1 || fail "kueue_reserving_active_workloads is not 1"
query_is "kueue_cluster_queue_status{cluster_queue=\"$CQ\",status=\"active\"}" 1 || fail "kueue_cluster_queue_status active is not 1"
echo "Prometheus: $admitted = 1, $pending = $got = status.pendingWorkloads"
pass
