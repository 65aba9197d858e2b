#!/usr/bin/env bash
# Replays the Alibaba openb GPU trace under the FGD paper's protocol (`muster replay-openb`)
# for seeds x traces x policies, in parallel, and prints per trace and policy the median and
# [min, max] over seeds of the unallocated GPU % at 100 % arrived (100 - allocated_gpu_pct on
# the arrived_pct 100 line) and of the free 8-GPU nodes there (and at 90 %), next to the FGD
# artifact's published figures. tests/bench/README.md, (c), explains them.
#
#   tests/bench/replay_openb.sh [MUSTER_BINARY]     (default: build-bench/muster)
#
# Environment: MUSTER_OPENB_DIR (the CSV files; default shared/data/openb beside the repository),
# MUSTER_REPLAY_SEEDS ("0 1 ... 9"), MUSTER_REPLAY_TRACES ("default multigpu20 multigpu30"),
# MUSTER_REPLAY_POLICIES ("muster bestfit spread random"), MUSTER_BENCH_JOBS (nproc).
#
# It prints figures; it does not fail on them. It exits 1 if a replay fails or prints anything
# but 131 well-formed lines, 77 if the trace files are missing (skipped), else 0. It does say
# "target met" or "target missed" for muster on the default trace: unallocated at most FGD's
# 4.77 % and more free 8-GPU nodes than best fit (medians).
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
MUSTER=${1:-$REPO/build-bench/muster}
DATA=${MUSTER_OPENB_DIR:-$REPO/../shared/data/openb}
SEEDS=${MUSTER_REPLAY_SEEDS:-0 1 2 3 4 5 6 7 8 9}
TRACES=${MUSTER_REPLAY_TRACES:-default multigpu20 multigpu30}
POLICIES=${MUSTER_REPLAY_POLICIES:-muster bestfit spread random}
JOBS=${MUSTER_BENCH_JOBS:-$(nproc)}
NODES=$DATA/openb_node_list_gpu_node.csv

say() { echo "replay_openb: $*" >&2; }

if [ ! -x "$MUSTER" ]; then
	say "no muster binary at $MUSTER"
	echo "BENCH replay_openb status=FAIL reason=\"no binary\""
	exit 1
fi
if [ ! -r "$NODES" ]; then
	say "SKIPPED: no openb trace in $DATA (set MUSTER_OPENB_DIR)"
	echo "BENCH replay_openb status=skipped reason=\"no trace files\""
	exit 77
fi
for t in $TRACES; do
	if [ ! -r "$DATA/openb_pod_list_$t.csv" ]; then
		say "SKIPPED: no $DATA/openb_pod_list_$t.csv"
		echo "BENCH replay_openb status=skipped reason=\"no trace files\""
		exit 77
	fi
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# One replay: its output, exit status, CPU and wall time in files named after it.
run_one() { # TRACE POLICY SEED
	local base=$WORK/$1.$2.$3 start end TIMEFORMAT='%U %S'
	start=$(date +%s%N)
	{ time "$MUSTER" replay-openb --nodes "$NODES" --pods "$DATA/openb_pod_list_$1.csv" \
		--seed "$3" --policy "$2" >"$base.out" 2>"$base.err"; } 2>"$base.cpu"
	echo $? >"$base.rc"
	end=$(date +%s%N)
	echo $(((end - start) / 1000000)) >"$base.ms"
}
export -f run_one
export WORK MUSTER NODES DATA

start=$(date +%s%N)
for t in $TRACES; do
	for p in $POLICIES; do
		for s in $SEEDS; do
			echo "$t $p $s"
		done
	done
done | xargs -P "$JOBS" -n 3 bash -c 'run_one "$@"' _
wall_ms=$((($(date +%s%N) - start) / 1000000))

# Check every replay and pull out its arrived_pct 90 and 100 lines.
LINE_RE='^[{]"arrived_pct":[0-9]+,"allocated_gpu_pct":[0-9]+[.][0-9][0-9],'
LINE_RE+='"free_8gpu_nodes":[0-9]+,"failed_pods":[0-9]+[}]$'
bad=0
: >"$WORK/at100"
for t in $TRACES; do
	for p in $POLICIES; do
		for s in $SEEDS; do
			base=$WORK/$t.$p.$s
			rc=$(cat "$base.rc" 2>/dev/null || echo missing)
			if [ "$rc" != 0 ]; then
				say "$t $p seed $s: exit status $rc"
				head -5 "$base.err" >&2
				bad=1
				continue
			fi
			# 131 lines, arrived_pct 0..130 in order, each exactly the specified object.
			if ! awk -v re="$LINE_RE" 'BEGIN { ok = 1 }
				{ if ($0 !~ re) ok = 0
				  split($0, f, /[:,}]/); if (f[2] != NR - 1) ok = 0 }
				END { exit !(ok && NR == 131) }' "$base.out"; then
				say "$t $p seed $s: malformed output"
				head -3 "$base.out" >&2
				bad=1
				continue
			fi
			# trace policy seed unallocated@100 free8@100 failed@100 ms cpu_s free8@90
			sed -n '91p;101p' "$base.out" | paste -sd, |
				awk -F'[:,}]' -v t="$t" -v p="$p" -v s="$s" \
				-v ms="$(cat "$base.ms")" \
				-v cpu="$(awk '{print $1 + $2}' "$base.cpu")" \
				'{ printf "%s %s %s %.2f %d %d %s %s %d\n",
					t, p, s, 100 - $13, $15, $17, ms, cpu, $6 }' >>"$WORK/at100"
		done
	done
done

# Median (mean of the middle two for an even count, as pandas) and range of one column.
stats() { # TRACE POLICY COLUMN -> "median min max"
	awk -v t="$1" -v p="$2" '$1 == t && $2 == p { print $'"$3"' }' "$WORK/at100" | sort -g |
		awk -v fmt="$([ "$3" = 4 ] && echo %.2f || echo %.1f)" '{ v[NR] = $1 }
			END { if (NR == 0) { print "- - -"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf fmt " %s %s\n", m, v[1], v[NR] }'
}

# The FGD artifact's own results (experiments/analysis/expected_results/analysis_allo_discrete.csv
# of hkust-adsl/kubernetes-scheduler-simulator, seeds 42..51): 100 - the allocation at 100 %
# arrived, median [min, max]. Its Random, BestFit and FGD stand beside our random, bestfit and
# muster; the default medians are the paper's. Its other baselines on the default trace:
# DotProd 9.44, GpuClustering 8.42, GpuPacking 8.19.
published() { # TRACE POLICY
	case $1.$2 in
	default.random) echo "Random 13.75 [13.21, 14.13]" ;;
	default.bestfit) echo "BestFit 7.09 [6.96, 7.36]" ;;
	default.muster) echo "FGD 4.77 [4.62, 4.94]" ;;
	multigpu20.random) echo "Random 13.17 [12.11, 13.84]" ;;
	multigpu20.bestfit) echo "BestFit 6.27 [5.88, 6.65]" ;;
	multigpu20.muster) echo "FGD 4.47 [4.18, 4.68]" ;;
	multigpu30.random) echo "Random 13.43 [12.70, 13.99]" ;;
	multigpu30.bestfit) echo "BestFit 5.47 [5.05, 5.73]" ;;
	multigpu30.muster) echo "FGD 3.61 [3.53, 3.80]" ;;
	*) echo "-" ;;
	esac
}

n=$(wc -l <"$WORK/at100")
cpu_mean=$(awk '{ c += $8 } END { if (NR) printf "%.2f", c / NR; else print 0 }' "$WORK/at100")
cpu_max=$(awk '$8 > m { m = $8 } END { printf "%.2f", m }' "$WORK/at100")
status=ok
[ "$bad" -eq 0 ] || status=FAIL
wall=$(awk -v w="$wall_ms" 'BEGIN { printf "%.1f", w / 1000 }')
echo "BENCH replay_openb status=$status replays=$n jobs=$JOBS wall_s=$wall" \
	"cpu_per_replay_s=$cpu_mean cpu_max_s=$cpu_max"
echo
echo "Unallocated GPU % and free 8-GPU nodes at 100 % arrived (and free 8-GPU nodes at 90 %),"
echo "median [min, max] over seeds: $SEEDS"
echo "(published: the FGD artifact's unallocated GPU %, seeds 42..51; on the default trace its"
echo " other baselines are DotProd 9.44, GpuClustering 8.42, GpuPacking 8.19)"
printf '%-11s %-8s %-22s %-18s %-18s %s\n' trace policy "unallocated GPU %" "free 8-GPU nodes" \
	"(at 90 % arrived)" published
for t in $TRACES; do
	for p in $POLICIES; do
		read -r um ulo uhi < <(stats "$t" "$p" 4)
		read -r fm flo fhi < <(stats "$t" "$p" 5)
		read -r nm nlo nhi < <(stats "$t" "$p" 9)
		printf '%-11s %-8s %-22s %-18s %-18s %s\n' "$t" "$p" "$um [$ulo, $uhi]" \
			"$fm [$flo, $fhi]" "$nm [$nlo, $nhi]" "$(published "$t" "$p")"
	done
done
echo

# The target, on medians: muster at most FGD's 4.77 % and more free 8-GPU nodes than best fit.
median() { stats "$@" | cut -d' ' -f1; } # TRACE POLICY COLUMN
# At 100 % arrived every policy has used every whole node (the pods that fail then include
# 8-GPU ones, which any whole node would have taken), so the 90 % column is printed beside it.
for t in $TRACES; do
	um=$(median "$t" muster 4) fm=$(median "$t" muster 5) nm=$(median "$t" muster 9)
	bu=$(median "$t" bestfit 4) bf=$(median "$t" bestfit 5) bn=$(median "$t" bestfit 9)
	[ "$um" != - ] || continue
	line="muster unallocated $um % (best fit $bu), free 8-GPU nodes $fm (best fit $bf), at 90 % arrived $nm (best fit $bn)"
	if [ "$t" = default ]; then
		verdict=$(awk -v u="$um" -v f="$fm" -v b="$bf" 'BEGIN {
			if (b == "-") { print "target unknown (no best fit run)"; exit }
			why = u > 4.77 ? "unallocated above 4.77" : ""
			sep = why == "" ? "" : "; "
			if (!(f > b))
				why = why sep "free 8-GPU nodes not above best fit"
			print why == "" ? "target met" : "target missed (" why ")" }')
		echo "$t: $verdict: $line"
	else
		echo "$t: $line"
	fi
done

[ "$bad" -eq 0 ]
