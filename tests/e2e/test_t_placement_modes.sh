#!/usr/bin/env bash
# (t) Which placement mode packs best under the real kube-scheduler. For each mode (Preferred,
# Exact, None: the manager restarted with tests/e2e/manager-config-{preferred,exact,nohints}.yaml)
# the same timed sequence of Jobs runs on the four idle nodes (32 GPUs, quota 32):
#   t=0   16 GPUs of small Jobs: four 1-GPU, two 2-GPU, a gang of 2 x 2 GPUs, one 4-GPU (30 s)
#   t=4   big1, t=6 big2: 8 GPUs each (20 s)
#   t=12  two 1-GPU Jobs and a gang of 3 x 2 GPUs (8 s)
#   t=14  big3: 8 GPUs (8 s)
# Packed, the small Jobs fill two nodes and big1 and big2 start at once; spread, every node holds
# some small pod and the 8-GPU Jobs wait for them to finish. Figures, one line per mode on stdout
# and stderr (after a per-Job timeline on stderr), and all three on the last line:
#   jobs              Jobs whose pods all ran to completion, of all submitted
#   on_plan           pods on a node their Job's hints name (the planned nodes), of all pods
#   whole_free_at_big nodes with all 8 GPUs free when each 8-GPU Job arrived
#   big_waits         8-GPU Jobs whose pod was bound more than 3 s after the Job was created
#   big_start_s       seconds from creation to binding, per 8-GPU Job
#   seconds           first Job created to last Job completed
# Passes if Preferred and Exact each run every Job and pack at least as well as None (as many
# whole free nodes when the big Jobs arrive, no more big Jobs waiting). The manager's config is
# restored at the end, also on failure.
source "$(dirname "$0")/lib.sh"
: "${MUSTER_LOCAL_DIR:?needs MUSTER_LOCAL_DIR to restart the manager}"
wait_nodes_idle
make_namespace
make_queues e2e-t 32

# offset(s) name pods gpus-per-pod kwok-delay
SEQUENCE=(
	"0 s1 1 1 30s" "0 s2 1 1 30s" "0 s3 1 1 30s" "0 s4 1 1 30s"
	"0 m1 1 2 30s" "0 m2 1 2 30s" "0 g1 2 2 30s" "0 q1 1 4 30s"
	"4 big1 1 8 20s"
	"6 big2 1 8 20s"
	"12 c1 1 1 8s" "12 c2 1 1 8s" "12 g2 3 2 8s"
	"14 big3 1 8 8s"
)
DEADLINE=90 # seconds per mode; None needs about 50
TMP=$(mktemp -d)
on_exit "rm -rf $TMP"

# at OFFSET: sleep until OFFSET seconds after T0 (nanoseconds).
at() {
	local now target
	now=$(date +%s%N)
	target=$((T0 + $1 * 1000000000))
	((target <= now)) || sleep "$(printf '%d.%03d' $(((target - now) / 1000000000)) $(((target - now) / 1000000 % 1000)))"
}

mode_jobs() { k -n "$NS" get jobs -l "e2e-mode=$1" -o json; }
all_done() {
	[ "$(mode_jobs "$1" | jq '[.items[] | select(.status.succeeded != .spec.completions)] | length')" = 0 ]
}

no_workloads() { [ -z "$(k -n "$NS" get workloads.kueue.x-k8s.io --no-headers 2>/dev/null)" ]; }

# run_mode MODE CONFIG: runs the sequence in MODE and sets FIG[MODE] to its figures line.
run_mode() {
	local mode=$1 config=$2 prefix entry off name pods gpus delay batch="" batch_off=0 free=() i
	prefix=$(tr '[:upper:]' '[:lower:]' <<<"${mode:0:1}")
	use_manager_config "$config" e2e-t
	wait_nodes_idle
	T0=$(date +%s%N)
	submit() {
		[ -n "$batch" ] || return 0
		at "$batch_off"
		k create -f - >/dev/null <<<"$batch"
		batch=""
	}
	for entry in "${SEQUENCE[@]}"; do
		read -r off name pods gpus delay <<<"$entry"
		[ "$off" = "$batch_off" ] || submit
		batch_off=$off
		if [ "$gpus" = 8 ]; then
			submit
			at "$off"
			# Arrivals are measured right before the create, as the kube-scheduler sees the nodes.
			free+=("$(whole_free_nodes)")
		fi
		batch+=$'---\n'$(job_yaml "$prefix-$name" "" "$pods" "$gpus" "$delay" |
			sed "s#^  namespace: $NS\$#  namespace: $NS\n  labels: {e2e-mode: $mode, kueue.x-k8s.io/queue-name: lq}#")$'\n'
	done
	submit
	for ((i = 0; i < DEADLINE; i++)); do
		all_done "$mode" && break
		[ $((($(date +%s%N) - T0) / 1000000000)) -lt "$DEADLINE" ] || break
		sleep 1
	done
	mode_jobs "$mode" >"$TMP/jobs.json"
	k -n "$NS" get pods -o json >"$TMP/pods.json"
	FIG[$mode]=$(jq -rn --arg mode "$mode" --arg deadline "$DEADLINE" --arg free "$(
		IFS=,
		echo "${free[*]}"
	)" --slurpfile jobs "$TMP/jobs.json" --slurpfile pods "$TMP/pods.json" '
		def t: if . == null then null else fromdateiso8601 end;
		$jobs[0] as $jobs | $pods[0] as $pods |
		[$jobs.items[] | {name: .metadata.name, created: (.metadata.creationTimestamp | t),
			done: (.status.succeeded == .spec.completions), completed: (.status.completionTime | t),
			gpus: (.spec.template.spec.containers[0].resources.requests["nvidia.com/gpu"] | tonumber),
			hints: [.spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[]?
				.preference.matchExpressions[] | select(.key == "kubernetes.io/hostname") | .values[]]}] as $j
		| [$pods.items[] | select(.metadata.labels["batch.kubernetes.io/job-name"] as $n | $j | any(.name == $n))
			| {job: .metadata.labels["batch.kubernetes.io/job-name"], node: .spec.nodeName,
			   bound: ([.status.conditions[]? | select(.type == "PodScheduled" and .status == "True")
				| .lastTransitionTime | t] | first)}] as $p
		| [$j[] | select(.gpus == 8) | . as $b | ([$p[] | select(.job == $b.name) | .bound] | map(select(. != null)) | min) as $bt
			| if $bt == null then null else $bt - $b.created end] as $bigs
		| ([$j[] | select(.done)] | length) as $ndone
		| ([$p[] | select(.node != null) | . as $x | select($j[] | select(.name == $x.job) | .hints | index($x.node))] | length) as $onplan
		| "mode=\($mode) jobs=\($ndone)/\($j | length) on_plan=\($onplan)/\($p | length)"
		  + " whole_free_at_big=\($free) big_waits=\([$bigs[] | select(. == null or . > 3)] | length)"
		  + " big_start_s=\([$bigs[] | if . == null then "never" else tostring end] | join(","))"
		  + " seconds=\(if $ndone == ($j | length) then (([$j[].completed] | max) - ([$j[].created] | min) | tostring) else ">\($deadline)" end)"')
	# The timeline, for the log: per Job, seconds after the first creation.
	jq -rn --slurpfile jobs "$TMP/jobs.json" --slurpfile pods "$TMP/pods.json" '
		def t: if . == null then null else fromdateiso8601 end;
		$jobs[0].items as $j | $pods[0].items as $p | ([$j[].metadata.creationTimestamp | t] | min) as $t0
		| $j | sort_by(.metadata.creationTimestamp, .metadata.name)[] | .metadata.name as $n
		| [$p[] | select(.metadata.labels["batch.kubernetes.io/job-name"] == $n)] as $mine
		| "  \($n): created +\((.metadata.creationTimestamp | t) - $t0)s, pods bound +\([$mine[]
			| [.status.conditions[]? | select(.type == "PodScheduled" and .status == "True")
			| (.lastTransitionTime | t) - $t0] | first // "never" | tostring] | join(","))s on \([$mine[]
			| .spec.nodeName // "-"] | join(",")), done +\(if .status.completionTime then
			(.status.completionTime | t) - $t0 | tostring else "never" end)s"' >&2
	k -n "$NS" delete jobs -l "e2e-mode=$mode" --wait=false >/dev/null
	wait_nodes_idle
	wait_until 60 "the $mode Workloads to go" no_workloads
	wait_until 60 "the queues to settle after $mode" queues_settled e2e-t
}

declare -A FIG
for mode in Preferred Exact None; do
	case $mode in
	Preferred) config=$REPO/tests/e2e/manager-config-preferred.yaml ;;
	Exact) config=$REPO/tests/e2e/manager-config-exact.yaml ;;
	None) config=$REPO/tests/e2e/manager-config-nohints.yaml ;;
	esac
	run_mode "$mode" "$config"
	echo "${FIG[$mode]}"
	echo "${FIG[$mode]}" >&2 # after its timeline
done

# field MODE NAME: one figure of a mode's line.
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"${FIG[$1]}"; }
sum() { tr ',' '\n' <<<"$1" | awk '{s += $1} END {print s + 0}'; }
for mode in Preferred Exact; do
	jobs=$(field "$mode" jobs)
	[ "${jobs%/*}" = "${jobs#*/}" ] || fail "mode $mode ran $jobs Jobs to completion"
	[ "$(sum "$(field "$mode" whole_free_at_big)")" -ge "$(sum "$(field None whole_free_at_big)")" ] ||
		fail "mode $mode left fewer whole nodes free for the 8-GPU Jobs than None: ${FIG[$mode]} vs ${FIG[None]}"
	[ "$(field "$mode" big_waits)" -le "$(field None big_waits)" ] ||
		fail "more 8-GPU Jobs waited in mode $mode than in None: ${FIG[$mode]} vs ${FIG[None]}"
done
# tests/run.sh shows a test's last line: the figures go there too.
echo "PASS $TEST_NAME: ${FIG[Preferred]}; ${FIG[Exact]}; ${FIG[None]}"
exit 0
