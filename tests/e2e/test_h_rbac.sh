#!/usr/bin/env bash
# config/rbac/role.yaml applies, and bound to the manager's ServiceAccount it grants each verb
# the manager uses (and not, for example, deleting Jobs). The manager of this cluster runs with
# that ServiceAccount's token (deploy/local/up.sh), not as admin, so every other test also fails
# when a permission it needs is missing.
source "$(dirname "$0")/lib.sh"
# up.sh applied the role already and the running manager depends on it: apply (a no-op when
# unchanged), never delete.
k apply -f "$REPO/config/rbac/role.yaml" >/dev/null || fail "config/rbac/role.yaml does not apply"
as=system:serviceaccount:muster-system:muster-manager
if [ -n "${MUSTER_MANAGER_KUBECONFIG:-}" ]; then
	who=$(k --kubeconfig "$MUSTER_MANAGER_KUBECONFIG" auth whoami -o jsonpath='{.status.userInfo.username}') ||
		fail "the manager's kubeconfig $MUSTER_MANAGER_KUBECONFIG does not authenticate"
	[ "$who" = "$as" ] || fail "the manager runs as $who, not as $as"
	pid=$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid" 2>/dev/null) || pid=
	if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ]; then
		tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "$MUSTER_MANAGER_KUBECONFIG" ||
			fail "the running manager (pid $pid) does not use $MUSTER_MANAGER_KUBECONFIG"
	fi
fi
can() { [ "$(k auth can-i "$@" --as="$as" 2>/dev/null)" = yes ]; }
for check in "watch jobs.batch" "patch jobs.batch" "patch jobs.batch --subresource=status" "create workloads.kueue.x-k8s.io" \
	"patch workloads.kueue.x-k8s.io" \
	"patch workloads.kueue.x-k8s.io --subresource=status" "list clusterqueues.kueue.x-k8s.io" \
	"patch clusterqueues.kueue.x-k8s.io --subresource=status" "patch localqueues.kueue.x-k8s.io --subresource=status" \
	"patch cohorts.kueue.x-k8s.io --subresource=status" \
	"watch resourceflavors.kueue.x-k8s.io" "watch cohorts.kueue.x-k8s.io" "list namespaces" \
	"watch workloadpriorityclasses.kueue.x-k8s.io" "watch priorityclasses.scheduling.k8s.io" "create events.events.k8s.io" \
	"watch nodes" "watch pods" "patch pods" "delete pods" "watch topologies.kueue.x-k8s.io" \
	"patch mutatingwebhookconfigurations/muster-mutating-webhook-configuration" \
	"patch validatingwebhookconfigurations/muster-validating-webhook-configuration" \
	"create mutatingwebhookconfigurations" \
	"get leases.coordination.k8s.io -n muster-system" "create leases.coordination.k8s.io -n muster-system" \
	"update leases.coordination.k8s.io -n muster-system" \
	"get secrets -n muster-system" "create secrets -n muster-system" "update secrets -n muster-system" \
	"create jobs.batch -n muster-system" "create pods -n muster-system"; do
	# shellcheck disable=SC2086
	can $check || fail "the role does not allow: $check"
done
! can delete jobs.batch || fail "the role allows deleting Jobs"
# The gang probe's dry-run Job: in the manager's namespace only.
! can create jobs.batch -n default || fail "the role allows creating Jobs outside muster-system"
! can create pods -n default || fail "the role allows creating Pods outside muster-system"
! can delete workloads.kueue.x-k8s.io || fail "the role allows deleting Workloads"
# ray.io: the CRDs are installed only once a test started KubeRay (need_kuberay), and
# `kubectl auth can-i` answers "no" for a resource the apiserver does not serve; a
# SubjectAccessReview asks RBAC alone.
may_in() { # GROUP VERB RESOURCE [SUBRESOURCE] [NAME]
	[ "$(k create -o jsonpath='{.status.allowed}' -f - 2>/dev/null <<YAML
apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: $as
  groups: [system:serviceaccounts, "system:serviceaccounts:muster-system", system:authenticated]
  resourceAttributes: {verb: $2, group: $1, resource: $3, subresource: "${4:-}", name: "${5:-}"}
YAML
)" = true ]
}
may() { may_in ray.io "$@"; } # VERB RESOURCE [SUBRESOURCE], in group ray.io
# The hold's admission policies (1.36+; a 1.35 server does not serve them, so ask RBAC alone).
for check in "patch mutatingadmissionpolicies - muster-hold-jobs" "delete mutatingadmissionpolicybindings - muster-gang-jobs" \
	"patch validatingadmissionpolicies - muster-queue-frozen" "create validatingadmissionpolicybindings"; do
	# shellcheck disable=SC2086
	set -- $check
	may_in admissionregistration.k8s.io "$1" "$2" "" "${4:-}" || fail "the role does not allow: $check"
done
! may_in admissionregistration.k8s.io delete validatingadmissionpolicies "" muster-leader-fence ||
	fail "the role allows deleting the leader fence"
for r in rayjobs rayclusters; do
	for v in get list watch patch; do may "$v" "$r" || fail "the role does not allow: $v $r.ray.io"; done
	! may delete "$r" || fail "the role allows deleting $r.ray.io"
	! may create "$r" || fail "the role allows creating $r.ray.io"
	! may patch "$r" status || fail "the role allows writing $r.ray.io/status"
done
! can patch nodes || fail "the role allows patching Nodes"
# Pods are deleted: an evicted pod group's, as Kueue's pod integration does (a gate can't be
# put back). Nodes and other kinds are not.
! can delete nodes || fail "the role allows deleting Nodes"
! can patch mutatingwebhookconfigurations/someone-elses || fail "the role allows patching other webhooks"
! can get secrets -n default || fail "the role allows reading Secrets outside muster-system"
! can update leases.coordination.k8s.io -n kube-system || fail "the role allows updating Leases outside muster-system"
pass
