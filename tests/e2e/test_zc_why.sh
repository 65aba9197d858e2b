#!/usr/bin/env bash
# (zc) `kubectl muster why` and `eta` name the right holders, through real kubectl.
#   Cohort borrowing: ClusterQueues a and b (4 GPUs each) share a cohort; an 8-GPU gang in a
#   borrows b's 4; a 2-GPU Job in b then waits, and why names the gang as the holder through the
#   cohort (borrowing, not preemptible: b reclaims nothing), which would have to end.
#   Preemption: in ClusterQueue p (4 GPUs, withinClusterQueue LowerPriority) a low- and a
#   high-priority Job hold 2 GPUs each; a 4-GPU Job of middle priority could preempt the low one
#   but not the high one, so it waits: why says preempt the low one, and the high one must end.
#   Both running Jobs have activeDeadlineSeconds, so eta has a basis and an estimate.
source "$(dirname "$0")/lib.sh"
WORK_DIR=$(mktemp -d)
on_exit "rm -rf $WORK_DIR"
make_namespace
make_queues e2e-zc-unused 1
make_priority_classes e2e-zc
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: e2e-zc-mid}
value: 1000
YAML
on_exit "k delete workloadpriorityclass e2e-zc-mid --ignore-not-found"
with_class() { sed "s#^  labels:\$#  labels:\\n    kueue.x-k8s.io/priority-class: $1#"; }
with_deadline() { sed "s#^  parallelism:#  activeDeadlineSeconds: $1\\n  parallelism:#"; }
admitted() { wait_until 30 "a Workload for $1" has_workload "$1"
	wait_until 30 "$1's admission" field_is workloads.kueue.x-k8s.io "$(workload_of "$1")" '{.status.conditions[?(@.type=="Admitted")].status}' True; }
waits() { wait_until 30 "a Workload for $1" has_workload "$1"
	wait_until 30 "$1's pending reason" field_is workloads.kueue.x-k8s.io "$(workload_of "$1")" '{.status.conditions[?(@.type=="QuotaReserved")].reason}' "$2"; }

# --- cohort borrowing --------------------------------------------------------------------------
cluster_queue e2e-zc-a 4 e2e-zc
cluster_queue e2e-zc-b 4 e2e-zc
local_queue qa e2e-zc-a
local_queue qb e2e-zc-b
job_yaml big qa 8 1 "" | k create -f - >/dev/null
admitted big
job_yaml want qb 2 1 "" | k create -f - >/dev/null
waits want WaitingForQuota
kmuster why want -n "$NS" -o json >"$WORK_DIR/why.json" 2>"$WORK_DIR/err" || fail "kubectl muster why failed: $(cat "$WORK_DIR/err")"
big_wl=$(workload_of big)
jq -e --arg w "$big_wl" '.state == "Pending" and .reason == "WaitingForQuota" and
	(.holders | length) == 1 and (.holders[0] | .name == $w and .via == "Cohort" and .clusterQueue == "e2e-zc-a" and
		.borrowing == true and .preemptible == false and .resource == "nvidia.com/gpu") and
	(.toFit | length == 1 and .[0].action == "end" and .[0].name == $w) and
	(.lacking[0] | .resource == "nvidia.com/gpu" and .missing == "2")' "$WORK_DIR/why.json" >/dev/null ||
	fail "why does not name the borrowing gang: $(jq -c '{reason, holders, toFit, lacking}' "$WORK_DIR/why.json")"
kmuster why job/want -n "$NS" >"$WORK_DIR/why.txt" 2>"$WORK_DIR/err" || fail "kubectl muster why (table) failed: $(cat "$WORK_DIR/err")"
grep -q "$big_wl" "$WORK_DIR/why.txt" || fail "the text of why does not name $big_wl: $(cat "$WORK_DIR/why.txt")"
grep -q 'WaitingForQuota' "$WORK_DIR/why.txt" || fail "the text of why does not give the reason"
# The gang runs with no expected end: eta says there is no basis.
kmuster eta want -n "$NS" -o json >"$WORK_DIR/eta.json" 2>"$WORK_DIR/err" || fail "kubectl muster eta failed: $(cat "$WORK_DIR/err")"
jq -e '.estimatedAdmission == null and (.basis | startswith("no basis"))' "$WORK_DIR/eta.json" >/dev/null ||
	fail "eta without any expected end: $(jq -c . "$WORK_DIR/eta.json")"
k -n "$NS" delete job big want --wait=false >/dev/null

# --- preemption ---------------------------------------------------------------------------------
cluster_queue e2e-zc-p 4 "" "{withinClusterQueue: LowerPriority}"
local_queue qp e2e-zc-p
job_yaml low qp 2 1 "" | with_class e2e-zc-low | with_deadline 600 | k create -f - >/dev/null
admitted low
job_yaml high qp 2 1 "" | with_class e2e-zc-high | with_deadline 900 | k create -f - >/dev/null
admitted high
job_yaml mid qp 4 1 "" | with_class e2e-zc-mid | k create -f - >/dev/null
waits mid WaitingForQuota
kmuster why mid -n "$NS" -o json >"$WORK_DIR/why2.json" 2>"$WORK_DIR/err" || fail "kubectl muster why failed: $(cat "$WORK_DIR/err")"
low_wl=$(workload_of low) high_wl=$(workload_of high)
jq -e --arg l "$low_wl" --arg h "$high_wl" '
	([.holders[] | {(.name): .preemptible}] | add) == {($l): true, ($h): false} and
	([.holders[].via] | unique) == ["ClusterQueue"] and
	([.toFit[] | "\(.action) \(.name)"] | sort) == (["end \($h)", "preempt \($l)"] | sort)' "$WORK_DIR/why2.json" >/dev/null ||
	fail "why does not say preempt $low_wl and wait for $high_wl: $(jq -c '{holders, toFit}' "$WORK_DIR/why2.json")"
# Both holders end by their deadlines (600 s and 900 s): mid fits once both are gone.
kmuster eta mid -n "$NS" -o json >"$WORK_DIR/eta2.json" 2>"$WORK_DIR/err" || fail "kubectl muster eta failed: $(cat "$WORK_DIR/err")"
start=$(jp workloads.kueue.x-k8s.io "$high_wl" '{.status.conditions[?(@.type=="QuotaReserved")].lastTransitionTime}')
want_s=$(( $(date -d "$start" +%s) + 900 ))
est=$(jq -r '.estimatedAdmission // empty' "$WORK_DIR/eta2.json")
[ -n "$est" ] || fail "no estimate though both holders have deadlines: $(jq -c . "$WORK_DIR/eta2.json")"
d=$(( $(date -d "$est" +%s) - want_s )); d=${d#-}
[ "$d" -le 2 ] || fail "estimated $est, want the high Job's deadline ($want_s): $(jq -c . "$WORK_DIR/eta2.json")"
jq -e '.runtimeSources.activeDeadlineSeconds >= 2' "$WORK_DIR/eta2.json" >/dev/null ||
	fail "the estimate does not count the deadlines: $(jq -c .runtimeSources "$WORK_DIR/eta2.json")"
kmuster eta mid -n "$NS" >"$WORK_DIR/eta.txt" 2>&1 || fail "kubectl muster eta (text) failed: $(cat "$WORK_DIR/eta.txt")"
grep -q 'basis' "$WORK_DIR/eta.txt" || fail "eta prints no basis: $(cat "$WORK_DIR/eta.txt")"
pass
