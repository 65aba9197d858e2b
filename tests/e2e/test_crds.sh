#!/usr/bin/env bash
# Checks the kueue.x-k8s.io/v1beta2 CRDs (crds/) on a running apiserver:
#   - every CRD is Established, structural and serves only v1beta2;
#   - every tests/e2e/crd-samples/valid/*.yaml is accepted;
#   - every tests/e2e/crd-samples/invalid/*.yaml is rejected with the text on
#     its "# expect:" line;
#   - schema defaults are applied;
#   - short names resolve and `kubectl get` prints Kueue's columns.
# See tests/e2e/crd-samples/README.md for the sample format.
#
# Env: KUBECONFIG (cluster with the CRDs installed), KUBECTL (path to kubectl,
# default: kubectl on PATH), VERBOSE=1 to print each rejection message.
# Objects it really creates (multi-step samples, column checks) live in a
# throwaway namespace or have names starting with "crd-samples-"; they are
# deleted on exit.
# Last line of output: "PASS test_crds" or "FAIL test_crds: <reason>".
set -u -o pipefail

KUBECTL=${KUBECTL:-kubectl}
HERE=$(cd "$(dirname "$0")" && pwd)
SAMPLES=$HERE/crd-samples
NS=crd-samples-$$-$RANDOM
WORK=$(mktemp -d)
CREATED=$WORK/created        # doc paths to delete, one per line
: >"$CREATED"
FAILS=0
FIRST_FAIL=""
CHECKS=0

log() { printf '%s\n' "$*" >&2; }

fail() { # <reason> [output file]
  FAILS=$((FAILS + 1))
  [ -n "$FIRST_FAIL" ] || FIRST_FAIL=$1
  log "  not ok: $1"
  if [ $# -ge 2 ] && [ -s "$2" ]; then sed 's/^/      | /' "$2" | head -20 >&2; fi
}

ok() { CHECKS=$((CHECKS + 1)); log "  ok: $1"; }

k() { "$KUBECTL" "$@"; }

# shellcheck disable=SC2317  # invoked through trap
cleanup() {
  if [ -s "$CREATED" ]; then
    tac "$CREATED" | while read -r doc; do
      k delete -n "$NS" -f "$doc" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    done
  fi
  k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

finish() {
  if [ "$FAILS" -eq 0 ]; then
    echo "PASS test_crds"
    exit 0
  fi
  echo "FAIL test_crds: $FAILS check(s) failed; first: $FIRST_FAIL"
  exit 1
}

abort() { echo "FAIL test_crds: $*"; exit 1; }

# Splits <file> at lines "---" into <dir>/doc-N.yaml, keeping only documents
# with content. Prints the document paths in order.
split_docs() {
  local file=$1 dir=$2 n=0 part
  mkdir -p "$dir"
  awk -v dir="$dir" 'BEGIN { n = 0 }
    /^---[[:space:]]*$/ { n++; next }
    { print > (dir "/part-" sprintf("%03d", n) ".yaml") }' "$file"
  for part in "$dir"/part-*.yaml; do
    [ -e "$part" ] || continue
    if grep -qvE '^[[:space:]]*(#.*)?$' "$part"; then
      n=$((n + 1))
      mv "$part" "$dir/doc-$(printf '%03d' "$n").yaml"
      echo "$dir/doc-$(printf '%03d' "$n").yaml"
    else
      rm -f "$part"
    fi
  done
}

# Runs one step on one document. Returns 0 when the step behaved as required.
run_step() { # <step> <doc> <expect> <label> <out>
  local step=$1 doc=$2 expect=$3 label=$4 out=$5 rc
  case $step in
    create)
      k create -n "$NS" -f "$doc" >"$out" 2>&1; rc=$?
      [ $rc -eq 0 ] && echo "$doc" >>"$CREATED" ;;
    patch)
      k patch -n "$NS" -f "$doc" --type=merge --patch-file="$doc" >"$out" 2>&1; rc=$? ;;
    status)
      k patch -n "$NS" -f "$doc" --subresource=status --type=merge --patch-file="$doc" >"$out" 2>&1; rc=$? ;;
    reject-create)
      k create --dry-run=server -n "$NS" -f "$doc" >"$out" 2>&1; rc=$? ;;
    reject-patch)
      k patch --dry-run=server -n "$NS" -f "$doc" --type=merge --patch-file="$doc" >"$out" 2>&1; rc=$? ;;
    reject-status)
      k patch --dry-run=server -n "$NS" -f "$doc" --subresource=status --type=merge --patch-file="$doc" >"$out" 2>&1; rc=$? ;;
    *)
      echo "unknown step '$step'" >"$out"; fail "$label: unknown step '$step'" "$out"; return 1 ;;
  esac
  case $step in
    reject-*)
      if [ $rc -eq 0 ]; then
        fail "$label: $step was accepted, expected rejection with \"$expect\"" "$out"; return 1
      fi
      if ! grep -qF -- "$expect" "$out"; then
        fail "$label: $step rejected without \"$expect\"" "$out"; return 1
      fi
      if [ "${VERBOSE:-0}" = 1 ]; then sed 's/^/      > /' "$out" >&2; fi ;;
    *)
      if [ $rc -ne 0 ]; then fail "$label: $step failed" "$out"; return 1; fi
      if grep -qiE '^Warning: .*(unknown field|duplicate)' "$out"; then
        fail "$label: $step gave a warning" "$out"; return 1
      fi ;;
  esac
  return 0
}

run_sample() { # <file> <valid|invalid>
  local file=$1 kind=$2 name expect steps dir out docs ndocs i step
  name=$kind/$(basename "$file")
  dir=$WORK/$kind-$(basename "$file" .yaml)
  out=$dir.out
  expect=""
  if [ "$kind" = invalid ]; then
    expect=$(sed -n '1s/^# expect: *//p' "$file")
    if [ -z "$expect" ]; then fail "$name: first line is not '# expect: ...'"; return; fi
  fi
  steps=$(sed -n 's/^# steps: *//p' "$file" | head -1)
  mapfile -t docs < <(split_docs "$file" "$dir")
  ndocs=${#docs[@]}
  if [ "$ndocs" -eq 0 ]; then fail "$name: no documents"; return; fi

  if [ -z "$steps" ]; then
    if [ "$kind" = valid ]; then
      # One request per document, all in one kubectl call.
      if ! k apply --dry-run=server -n "$NS" -f "$file" >"$out" 2>&1; then
        fail "$name: apply --dry-run=server failed" "$out"; return
      fi
      if grep -qiE '^Warning: .*(unknown field|duplicate)' "$out"; then
        fail "$name: apply gave a warning" "$out"; return
      fi
      ok "$name"; return
    fi
    if [ "$ndocs" -ne 1 ]; then fail "$name: $ndocs documents but no '# steps:' line"; return; fi
    steps=reject-create
  fi

  read -r -a steps <<<"$steps"
  if [ "${#steps[@]}" -ne "$ndocs" ]; then
    fail "$name: ${#steps[@]} steps for $ndocs documents"; return
  fi
  for i in "${!steps[@]}"; do
    step=${steps[$i]}
    if [ "$kind" = valid ] && [[ $step == reject-* ]]; then
      fail "$name: valid samples cannot have reject steps"; return
    fi
    if [ "$kind" = invalid ] && [[ $step != reject-* ]] && [ "$i" -eq $((ndocs - 1)) ]; then
      fail "$name: the last step of an invalid sample must be a reject step"; return
    fi
    run_step "$step" "${docs[$i]}" "$expect" "$name (step $((i + 1)): $step)" "$out.$i" || return
  done
  ok "$name"
}

# ---------------------------------------------------------------- preflight
[ -n "${KUBECONFIG:-}" ] || abort "KUBECONFIG is not set"
command -v "$KUBECTL" >/dev/null 2>&1 || abort "kubectl not found: $KUBECTL"
k get --raw=/readyz >/dev/null 2>&1 || abort "apiserver not ready (KUBECONFIG=$KUBECONFIG)"

log "CRDs"
for crd in clusterqueues localqueues workloads resourceflavors cohorts workloadpriorityclasses topologies; do
  full=$crd.kueue.x-k8s.io
  got=$(k get crd "$full" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}|{.status.conditions[?(@.type=="NonStructuralSchema")].status}|{.spec.versions[*].name}|{.spec.versions[0].served}|{.spec.versions[0].storage}' 2>&1)
  if [ "$got" = "True||v1beta2|true|true" ]; then
    ok "crd $full"
  else
    fail "crd $full: Established|NonStructural|versions|served|storage = '$got'"
  fi
done
[ "$FAILS" -eq 0 ] || finish

k create namespace "$NS" >/dev/null 2>&1 || abort "cannot create namespace $NS"
# NamespaceLifecycle rejects writes until the namespace is visible.
for _ in $(seq 50); do k get namespace "$NS" >/dev/null 2>&1 && break; sleep 0.1; done

# ------------------------------------------------------------------ samples
log "valid samples"
for f in "$SAMPLES"/valid/*.yaml; do run_sample "$f" valid; done
log "invalid samples"
for f in "$SAMPLES"/invalid/*.yaml; do run_sample "$f" invalid; done

# ----------------------------------------------------------------- defaults
log "defaults"
check_eq() { # <label> <got> <want>
  if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: got '$2', want '$3'"; fi
}
got=$(k create --dry-run=server -o jsonpath='{.spec.queueingStrategy}|{.spec.stopPolicy}|{.spec.flavorFungibility.whenCanBorrow}|{.spec.flavorFungibility.whenCanPreempt}|{.spec.preemption.reclaimWithinCohort}|{.spec.preemption.withinClusterQueue}|{.spec.preemption.borrowWithinCohort.policy}|{.spec.fairSharing.weight}' -f - 2>&1 <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: crd-samples-defaults
spec:
  fairSharing: {}
EOF
)
check_eq "ClusterQueue defaults" "$got" "BestEffortFIFO|None|MayStopSearch|TryNextFlavor|Never|Never|Never|1"
got=$(k create --dry-run=server -n "$NS" -o jsonpath='{.spec.stopPolicy}|{.spec.fairSharing.weight}' -f - 2>&1 <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: crd-samples-defaults
spec:
  clusterQueue: cluster-queue
  fairSharing: {}
EOF
)
check_eq "LocalQueue defaults" "$got" "None|1"
got=$(k create --dry-run=server -n "$NS" -o jsonpath='{.spec.active}|{.spec.podSets[0].name}|{.spec.podSets[0].count}' -f - 2>&1 <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: crd-samples-defaults
spec:
  podSets:
  - template:
      spec:
        containers:
        - name: c
          image: registry.example.com/app:1
EOF
)
check_eq "Workload defaults" "$got" "true|main|1"

# ---------------------------------------------------- short names, columns
log "short names and columns"
cat >"$WORK/columns.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: crd-samples-columns
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata:
  name: crd-samples-columns
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: crd-samples-columns
spec:
  levels:
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: crd-samples-columns
value: 42
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: crd-samples-columns
spec:
  cohortName: crd-samples-columns
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: crd-samples-columns
      resources:
      - name: cpu
        nominalQuota: 1
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: crd-samples-columns
spec:
  clusterQueue: crd-samples-columns
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: crd-samples-columns
spec:
  queueName: crd-samples-columns
  podSets:
  - template:
      spec:
        containers:
        - name: c
          image: registry.example.com/app:1
EOF
cat >"$WORK/columns-status.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: crd-samples-columns
status:
  conditions:
  - type: QuotaReserved
    status: "True"
    reason: QuotaReserved
    message: reserved
    lastTransitionTime: "2026-11-21T10:00:00Z"
  - type: Admitted
    status: "True"
    reason: Admitted
    message: admitted
    lastTransitionTime: "2026-11-21T10:00:00Z"
  admission:
    clusterQueue: crd-samples-columns
    podSetAssignments:
    - name: main
      count: 1
EOF
if run_step create "$WORK/columns.yaml" "" "column fixtures" "$WORK/columns.out" &&
   run_step status "$WORK/columns-status.yaml" "" "column fixture status" "$WORK/columns-status.out"; then
  for s in cq clusterqueue clusterqueues lq queue queues localqueue kwl kueueworkload kueueworkloads \
           workloads.kueue.x-k8s.io rf flavor flavors resourceflavor co cohort wpc workloadpriorityclass \
           topo topology; do
    if k get "$s" -A -o name >"$WORK/short.out" 2>&1 && grep -q crd-samples-columns "$WORK/short.out"; then
      ok "name $s"
    else
      fail "kubectl get $s -A does not list crd-samples-columns" "$WORK/short.out"
    fi
  done
  # kubectl separates columns by at least 3 spaces; headers contain single ones.
  header() { k get "$@" 2>&1 | head -1 | sed -E 's/[[:space:]]{2,}/|/g; s/[[:space:]]+$//'; }
  check_eq "columns: get cq" "$(header cq)" "NAME|COHORT|PENDING WORKLOADS"
  check_eq "columns: get cq -o wide" "$(header cq -o wide)" "NAME|COHORT|STRATEGY|PENDING WORKLOADS|ADMITTED WORKLOADS"
  check_eq "columns: get lq -A" "$(header lq -A)" "NAMESPACE|NAME|CLUSTERQUEUE|PENDING WORKLOADS|ADMITTED WORKLOADS"
  check_eq "columns: get workloads.kueue.x-k8s.io -A" "$(header workloads.kueue.x-k8s.io -A)" "NAMESPACE|NAME|QUEUE|RESERVED IN|ADMITTED|FINISHED|AGE"
  check_eq "columns: get kwl -A" "$(header kwl -A)" "NAMESPACE|NAME|QUEUE|RESERVED IN|ADMITTED|FINISHED|AGE"
  check_eq "columns: get wpc" "$(header wpc)" "NAME|VALUE"
  check_eq "columns: get rf" "$(header rf)" "NAME|AGE"
  check_eq "columns: get co" "$(header co)" "NAME|AGE"
  check_eq "columns: get topo" "$(header topo)" "NAME|AGE"
  # Row contents for the fixtures.
  check_eq "row: cq" "$(k get cq crd-samples-columns --no-headers 2>&1 | awk '{print $1, $2}')" "crd-samples-columns crd-samples-columns"
  check_eq "row: lq" "$(k get lq -n "$NS" crd-samples-columns --no-headers 2>&1 | awk '{print $1, $2}')" "crd-samples-columns crd-samples-columns"
  check_eq "row: workload" "$(k get kwl -n "$NS" crd-samples-columns --no-headers 2>&1 | awk '{print $1, $2, $3, $4}')" "crd-samples-columns crd-samples-columns crd-samples-columns True"
  check_eq "row: wpc" "$(k get wpc crd-samples-columns --no-headers 2>&1 | awk '{print $1, $2}')" "crd-samples-columns 42"
fi

log "$CHECKS checks passed, $FAILS failed"
finish
