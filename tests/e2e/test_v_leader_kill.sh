#!/usr/bin/env bash
# (v) Two managers with leader election, each running as the muster-manager ServiceAccount with
# a token bound to a Pod of its own (as in a cluster), behind the apiserver-side fence
# (config/rbac/leader-fence.yaml). A run of LEADER_KILL_JOBS (200) queued 1-GPU Jobs goes into a
# ClusterQueue of 16 GPUs; the leader is killed with SIGKILL mid-run. It prints the takeover time
# (kill -> the follower holds the Lease) and the time until the follower admitted again, and
# checks that:
#   - the follower took over within 15 s (Kueue's timings: 15 s / 10 s / 2 s);
#   - the follower's writes were refused by the fence while it followed, and the dead leader's
#     token is refused after the takeover;
#   - the ClusterQueue's usage never went past its quota, sampled every 0.5 s from its status and
#     recomputed from the Workloads' own admissions;
#   - no Workload was admitted twice (at most one "workload admitted" per Workload across both
#     logs; the answers to the last writes of the killed leader are in neither), each Job has one
#     Workload, and every Job completed.
# The cluster's own manager is stopped for the test and started again at the end.
source "$(dirname "$0")/lib.sh"
: "${MUSTER_LOCAL_DIR:?needs MUSTER_LOCAL_DIR}"
command -v jq >/dev/null || fail "jq not found (deploy/setup.sh installs it)"
JOBS=${LEADER_KILL_JOBS:-200}
QUOTA=16
CQ=e2e-v
SA_NS=muster-system
SA=muster-manager
replica_prefix=e2e-leader-kill
work=$(mktemp -d)
on_exit "rm -rf $work"
# shellcheck disable=SC1091
source "$MUSTER_LOCAL_DIR/cluster.env"
muster_bin=$(tr '\0' '\n' <"/proc/$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid")/cmdline" 2>/dev/null | head -1)
[ -x "$muster_bin" ] || muster_bin=${MUSTER_BIN:?needs MUSTER_BIN or a running manager}
config=$(tr '\0' '\n' <"/proc/$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid")/cmdline" 2>/dev/null |
	sed -n '/^--config$/{n;p}')
: "${config:=$REPO/tests/e2e/manager-config.yaml}"
grep -q leaderElect "$config" && fail "this test needs leader election at its defaults; $config sets it"

# --- the cluster's manager makes room ------------------------------------------------------------
trap "exit 143" TERM INT
pid=$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid" 2>/dev/null) || pid=
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
	kill -TERM "$pid"
	wait_until 30 "the cluster's manager to exit" bash -c "! kill -0 $pid"
fi
cp -f "$MUSTER_LOCAL_DIR/logs/muster.log" "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.0" 2>/dev/null || true
# shellcheck disable=SC2016 # expanded when the test ends
on_exit 'MUSTER_BIN=$muster_bin MUSTER_MANAGER_ARGS="${MANAGER_ARGS_AT_START:---config $config}" "$REPO/deploy/local/up.sh" >/dev/null 2>"$MUSTER_LOCAL_DIR/restart-$TEST_NAME.err"'

# --- identities: the ServiceAccount, the role, a Pod per replica, a token bound to each ----------
k apply -f "$REPO/config/rbac/role.yaml" >/dev/null || fail "config/rbac/role.yaml does not apply"
k -n "$SA_NS" get serviceaccount "$SA" >/dev/null 2>&1 || k -n "$SA_NS" create serviceaccount "$SA" >/dev/null
# The fence stays (deploy/local/up.sh applied it): deleting its binding would leave the
# apiserver with a stale Lease for good (kubernetes#130887).
k apply -f "$REPO/config/rbac/leader-fence.yaml" >/dev/null || fail "config/rbac/leader-fence.yaml does not apply"
server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
ca=$(k config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
[ -n "$ca" ] || ca=$(base64 -w0 <"$(k config view --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')")
off=${MUSTER_PORT_OFFSET:-0}
declare -A token
on_exit "k -n $SA_NS delete pod -l app=muster-e2e-replica --ignore-not-found --wait=false"
for r in a b; do
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $replica_prefix-$r
  namespace: $SA_NS
  labels: {app: muster-e2e-replica}
spec:
  serviceAccountName: $SA
  # Never scheduled: it only stands for the replica, whose process runs on this host.
  schedulingGates: [{name: muster.e2e/replica-stand-in}]
  # The namespace enforces the restricted Pod Security Standard (deploy/cluster/namespace.yaml).
  securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: manager
    image: muster
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
YAML
	uid=$(k -n "$SA_NS" get pod "$replica_prefix-$r" -o jsonpath='{.metadata.uid}')
	token[$r]=$(k -n "$SA_NS" create token "$SA" --bound-object-kind Pod --bound-object-name "$replica_prefix-$r" \
		--bound-object-uid "$uid" --duration 2h) || fail "no token for replica $r"
	cat >"$work/kubeconfig-$r" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: replica, user: {token: "${token[$r]}"}}]
contexts: [{name: local, context: {cluster: local, user: replica}}]
current-context: local
YAML
done

# start_replica R: manager R on ports of its own, its log beside the cluster's logs (tests/run.sh
# checks every muster.log* for sanitizer reports).
declare -A rpid rhealth rmetrics
start_replica() {
	local r=$1 i=0
	[ "$r" = a ] || i=1
	rhealth[$r]=$((19181 + off + i))
	rmetrics[$r]=$((19183 + off + i))
	mkdir -p "$work/state-$r"
	POD_NAME=$replica_prefix-$r POD_NAMESPACE=$SA_NS setsid "$muster_bin" manager --kubeconfig "$work/kubeconfig-$r" \
		--config "$config" --state-dir "$work/state-$r" --webhook-port $((20543 + off + i)) \
		--health-port "${rhealth[$r]}" --metrics-port "${rmetrics[$r]}" --visibility-port 0 >"$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.$r" 2>&1 </dev/null &
	rpid[$r]=$!
	on_exit "kill -TERM ${rpid[$r]} 2>/dev/null; for _w in \$(seq 40); do kill -0 ${rpid[$r]} 2>/dev/null || break; sleep 0.25; done"
}
holder() { k -n "$SA_NS" get lease muster-manager -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
holder_is() { [ "$(holder)" = "$1" ]; }
ready() { curl -sf "http://127.0.0.1:${rhealth[$1]}/readyz" >/dev/null; }

start_replica a
wait_until 60 "replica a to lead" holder_is "$replica_prefix-a"
start_replica b
wait_until 60 "replica b to be ready (caches synced, following)" ready b
wait_until 30 "replica a to be ready" ready a

# --- the run -------------------------------------------------------------------------------------
make_namespace
make_queues "$CQ" "$QUOTA"
for ((j = 0; j < JOBS; j++)); do
	# 4 s each: 200 of them in 16 GPUs run for about a minute, longer than creating them takes
	# (each create passes the webhook), so the kill below comes mid-run.
	job_yaml "job-$j" lq 1 1 4s
	echo "---"
done >"$work/jobs.yaml"
k create -f "$work/jobs.yaml" >/dev/null || fail "creating $JOBS Jobs failed"

# Samplers: the ClusterQueue's reported usage, and the usage recomputed from the Workloads that
# hold quota (QuotaReserved, not Finished), every 0.5 s until the test ends.
(
	while :; do
		echo "$(cq_usage "$CQ" nvidia.com/gpu)" >>"$work/cq-usage"
		k -n "$NS" get workloads.kueue.x-k8s.io -o json 2>/dev/null | jq -r '[.items[]
			| select(any(.status.conditions[]?; .type == "QuotaReserved" and .status == "True"))
			| select(all(.status.conditions[]?; .type != "Finished" or .status != "True"))
			| .status.admission.podSetAssignments[]?.resourceUsage["nvidia.com/gpu"] // "0" | tonumber]
			| add // 0' >>"$work/wl-usage"
		sleep 0.5
	done
) &
sampler=$!
on_exit "kill $sampler 2>/dev/null"

completed() { k -n "$NS" get jobs -o json | jq '[.items[] | select(any(.status.conditions[]?; .type == "Complete" and .status == "True"))] | length'; }
completed_at_least() { [ "$(completed)" -ge "$1" ]; }
# Mid-run: a quarter of the Jobs admitted by replica a, read from its log. (Counting completed
# Jobs through the apiserver took longer than the run itself once, on a loaded machine, and the
# kill then came after the last admission.)
admitted_by_a() { [ "$(grep -c '"workload admitted"' "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.a" || true)" -ge "$1" ]; }
wait_until 240 "a quarter of the Jobs to be admitted by replica a" admitted_by_a $((JOBS / 4))

# The fence while b follows: b's token may not write a Workload's status.
wl=$(k -n "$NS" get workloads.kueue.x-k8s.io -o jsonpath='{.items[0].metadata.name}')
fenced() { # REPLICA: the answer to a status write with that replica's token
	curl -sk -X PATCH -H "Authorization: Bearer ${token[$1]}" -H 'Content-Type: application/merge-patch+json' \
		--data '{"status":{}}' "$server/apis/kueue.x-k8s.io/v1beta2/namespaces/$NS/workloads/$wl/status" |
		jq -r '"\(.code // 200) \(.message // "")"'
}
answer=$(fenced b)
[[ $answer == 403*"does not hold Lease"* ]] || fail "the follower's write was not fenced: $answer"

# --- kill -9 the leader --------------------------------------------------------------------------
admitted_before=$(grep -c '"workload admitted"' "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.b" || true)
t_kill=$(date +%s.%N)
kill -KILL "${rpid[a]}"
until holder_is "$replica_prefix-b"; do
	sleep 0.05
	awk -v a="$t_kill" -v b="$(date +%s.%N)" 'BEGIN { exit !(b - a > 60) }' && fail "replica b did not take over within 60 s"
done
# The takeover as the new leader logged it, not as this loop saw it a kubectl call later.
t_takeover=$(grep '"became the leader"' "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.b" | tail -1 | jq -r .ts)
# Admission resumed: b logs its first admission (a Job that a completed made room for).
until [ "$(grep -c '"workload admitted"' "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.b" || true)" -gt "$admitted_before" ]; do
	sleep 0.05
	awk -v a="$t_kill" -v b="$(date +%s.%N)" 'BEGIN { exit !(b - a > 90) }' && fail "replica b admitted nothing within 90 s of the kill"
done
t_resumed=$(grep '"workload admitted"' "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.b" |
	sed -n "$((admitted_before + 1))p" | jq -r .ts)
takeover=$(awk -v a="$t_kill" -v b="$t_takeover" 'BEGIN { printf "%.2f", b - a }')
resumed=$(awk -v a="$t_kill" -v b="$t_resumed" 'BEGIN { printf "%.2f", b - a }')
echo "leader kill: takeover ${takeover}s after kill -9, first admission by the new leader ${resumed}s after" >&2
# A follower takes the Lease leaseDuration (15 s) after it saw the last renewal, which came at
# most a retryPeriod (2 s) before the kill: 13-15 s after it, plus the few ms of a watch event
# and a PUT. client-go's followers poll every retryPeriod, so theirs is 15-17 s.
awk -v t="$takeover" 'BEGIN { exit !(t <= 15.5) }' || fail "takeover took ${takeover}s (more than 15.5 s)"
answer=$(fenced a)
[[ $answer == 403*"does not hold Lease"* ]] || fail "the dead leader's token was not fenced after the takeover: $answer"

wait_until 300 "all $JOBS Jobs to complete" completed_at_least "$JOBS"
kill "$sampler" 2>/dev/null || true

# --- what must hold ------------------------------------------------------------------------------
max_cq=$(sort -n "$work/cq-usage" | tail -1)
max_wl=$(sort -n "$work/wl-usage" | tail -1)
echo "leader kill: $(wc -l <"$work/cq-usage") samples; peak usage ${max_cq:-?} (status) and ${max_wl:-?} (Workloads) of $QUOTA" >&2
[ "${max_cq:-0}" -le "$QUOTA" ] || fail "the ClusterQueue's usage reached $max_cq of $QUOTA"
[ "${max_wl:-0}" -le "$QUOTA" ] || fail "the Workloads' admissions added up to $max_wl of $QUOTA"
n_wl=$(k -n "$NS" get workloads.kueue.x-k8s.io --no-headers | wc -l)
[ "$n_wl" -eq "$JOBS" ] || fail "$n_wl Workloads for $JOBS Jobs"
twice=$(cat "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME".[ab] | grep '"workload admitted"' |
	jq -r '.workload' | sort | uniq -d)
[ -z "$twice" ] || fail "admitted twice: $(echo "$twice" | head -3 | tr '\n' ' ')"
# An admission is logged when its write's answer arrives: one that landed in the apiserver just
# before the kill -9 is in no log (its Workload still ran, and every Job completed above). At
# most a quota's worth of admissions can be in flight at once.
admitted=$(cat "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME".[ab] | grep -c '"workload admitted"')
[ "$admitted" -le "$JOBS" ] && [ "$((JOBS - admitted))" -le "$QUOTA" ] ||
	fail "$admitted admissions logged for $JOBS Workloads"
by_b=$(grep -c '"workload admitted"' "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.b")
echo "leader kill: $((admitted - by_b)) admitted by the first leader, $by_b by the second" >&2
pass
