#!/usr/bin/env bash
# config/rbac/role.yaml applies, and bound to the manager's ServiceAccount it grants each verb
# the manager uses (and not, for example, deleting Jobs).
source "$(dirname "$0")/lib.sh"
k apply -f "$REPO/config/rbac/role.yaml" >/dev/null || fail "config/rbac/role.yaml does not apply"
on_exit "k delete -f $REPO/config/rbac/role.yaml --ignore-not-found"
as=system:serviceaccount:muster-system:muster-manager
can() { [ "$(k auth can-i "$@" --as="$as" 2>/dev/null)" = yes ]; }
for check in "watch jobs.batch" "patch jobs.batch" "patch jobs.batch --subresource=status" "create workloads.kueue.x-k8s.io" \
	"patch workloads.kueue.x-k8s.io --subresource=status" "list clusterqueues.kueue.x-k8s.io" \
	"patch clusterqueues.kueue.x-k8s.io --subresource=status" "patch localqueues.kueue.x-k8s.io --subresource=status" \
	"watch resourceflavors.kueue.x-k8s.io" "watch cohorts.kueue.x-k8s.io" "list namespaces" \
	"watch workloadpriorityclasses.kueue.x-k8s.io" "watch priorityclasses.scheduling.k8s.io" "create events" \
	"watch nodes" "watch pods" "patch pods" "watch topologies.kueue.x-k8s.io" \
	"patch mutatingwebhookconfigurations/muster-mutating-webhook-configuration"; do
	# shellcheck disable=SC2086
	can $check || fail "the role does not allow: $check"
done
! can delete jobs.batch || fail "the role allows deleting Jobs"
! can patch nodes || fail "the role allows patching Nodes"
! can delete pods || fail "the role allows deleting Pods"
! can patch mutatingwebhookconfigurations/someone-elses || fail "the role allows patching other webhooks"
pass
