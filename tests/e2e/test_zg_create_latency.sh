#!/usr/bin/env bash
# (zg) Creates through the hold (issue 13): 1,000 queued Jobs created back to back on one
# connection while the admission policies hold, and 1,000 with the manager configured to hold by
# webhook (admissionHold.mode: Webhook), in alternating halves. Every create must succeed and be
# stored suspended. Prints each path's create latency (mean, p50, p95, as the client sees it)
# and their ratio; it fails on errors, never on timing.
source "$(dirname "$0")/lib.sh"
: "${MUSTER_LOCAL_DIR:?needs MUSTER_LOCAL_DIR to restart the manager}"
N=${MUSTER_CREATE_N:-1000}
TMP=$(mktemp -d)
on_exit "rm -rf $TMP"
needs mutatingadmissionpolicies admissionregistration.k8s.io 36 "no MutatingAdmissionPolicy before Kubernetes 1.36: one path only"
make_namespace
PKI=$MUSTER_LOCAL_DIR/pki
server=$(k config view --minify -o 'jsonpath={.clusters[0].cluster.server}')

# A Job named by the server (generateName), so one body serves every create. No LocalQueue
# exists for it: the Workloads wait, and nothing runs.
cat >"$TMP/job.json" <<JSON
{"apiVersion":"batch/v1","kind":"Job","metadata":{"generateName":"c-","labels":{"kueue.x-k8s.io/queue-name":"nowhere"}},
 "spec":{"parallelism":1,"completions":1,"template":{"spec":{"restartPolicy":"Never",
 "containers":[{"name":"c","image":"fake","resources":{"requests":{"cpu":"1"}}}]}}}}
JSON

# creates PATH_NAME COUNT: COUNT POSTs in one curl (one kept-alive connection), their status and
# time appended to $TMP/PATH_NAME.tsv; fails unless every answer is 201.
creates() {
	local urls=() i total ok
	for ((i = 0; i < $2; i++)); do urls+=("$server/apis/batch/v1/namespaces/$NS/jobs"); done
	curl -sS --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
		-H 'Content-Type: application/json' --data-binary "@$TMP/job.json" \
		-w '\n@@ %{http_code} %{time_total}\n' "${urls[@]}" >"$TMP/$1.out" 2>"$TMP/$1.err" ||
		fail "curl failed on the $1 path: $(tail -3 "$TMP/$1.err")"
	grep '^@@ ' "$TMP/$1.out" | awk '{print $2, $3}' >"$TMP/$1.round"
	total=$(wc -l <"$TMP/$1.round")
	ok=$(awk '$1 == 201' "$TMP/$1.round" | wc -l)
	[ "$total" -eq "$2" ] && [ "$ok" -eq "$2" ] ||
		fail "$1 path: $ok of $2 creates succeeded ($(awk '$1 != 201 {print $1}' "$TMP/$1.round" | sort | uniq -c | tr '\n' ' '))"
	cat "$TMP/$1.round" >>"$TMP/$1.tsv"
}

# stats PATH_NAME: "mean p50 p95" in ms over all its creates.
stats() {
	awk '{print $2 * 1000}' "$TMP/$1.tsv" | sort -n |
		awk '{v[NR] = $1; s += $1} END {printf "%.2f %.2f %.2f\n", s / NR, v[int(NR * 0.5)], v[int(NR * 0.95)]}'
}

suspended_jobs() { k -n "$NS" get jobs -o 'jsonpath={range .items[*]}{.spec.suspend}{"\n"}{end}' | grep -c '^true$'; }

k get mutatingadmissionpolicy muster-hold-jobs >/dev/null 2>&1 || fail "the policies do not hold: nothing to measure"
# The webhook path: the same manager configuration, holding by webhook (which deletes the
# policies and makes the Job webhook fail closed again). The paths alternate, half the creates
# each time, because the machine's load drifts.
sed '/^integrations:/i admissionHold: {mode: Webhook}' "$REPO/tests/e2e/manager-config.yaml" >"$TMP/webhook.yaml"
grep -q '^admissionHold' "$TMP/webhook.yaml" || fail "could not write the webhook configuration"
half=$((N / 2))
for round in 1 2; do
	[ "$round" = 1 ] || restart_manager "$MANAGER_ARGS_AT_START" || fail "could not restart the manager"
	wait_until 30 "the policies" bash -c "$KUBECTL get mutatingadmissionpolicy muster-hold-jobs >/dev/null 2>&1"
	creates policy "$half"
	[ "$(suspended_jobs)" -eq $(((2 * round - 1) * half)) ] || fail "$(suspended_jobs) Jobs are suspended after policy round $round"
	use_manager_config "$TMP/webhook.yaml"
	wait_until 30 "the policies to go" bash -c "! $KUBECTL get mutatingadmissionpolicy muster-hold-jobs >/dev/null 2>&1"
	creates webhook "$half"
	[ "$(suspended_jobs)" -eq $((2 * round * half)) ] || fail "$(suspended_jobs) Jobs are suspended after webhook round $round"
done
read -r p_mean p_50 p_95 < <(stats policy)
read -r w_mean w_50 w_95 < <(stats webhook)
ratio=$(awk -v a="$p_mean" -v b="$w_mean" 'BEGIN {printf "%.2f", a / b}')
echo "create latency, $((2 * half)) Jobs per path in 2 alternating rounds, ms (mean/p50/p95): policy $p_mean/$p_50/$p_95, webhook $w_mean/$w_50/$w_95; policy/webhook mean ${ratio}x" >&2
pass "policy mean ${p_mean} ms, webhook mean ${w_mean} ms (policy/webhook ${ratio}x), $((4 * half)) creates, 0 failures"
