#!/usr/bin/env bash
# deploy/cluster (`kubectl apply -k deploy/cluster`): the kustomize output renders, and applies
# to the local apiserver: for real for everything but the Deployment and the APIServices
# (namespace, CRDs, RBAC, ConfigMap, Services, PodDisruptionBudget), as a server-side dry run
# for those (the kwok nodes run no containers, and an APIService whose Service has no endpoint
# would break discovery for every other test). What up.sh already installed (namespace, ServiceAccount, RBAC,
# CRDs) must come out unchanged, so the running manager is untouched and the two agree; what
# is new is deleted at the end. The rendered Deployment has the restricted securityContext,
# both probes, requests and limits; no CRD names a conversion webhook (kueue#18411), neither
# in deploy/cluster nor on the apiserver; the manager accepts the ConfigMap's configuration.
source "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d)
on_exit "rm -rf $WORK"

k kustomize "$REPO/deploy/cluster" >"$WORK/all.yaml" 2>"$WORK/kustomize.err" ||
	fail "kubectl kustomize deploy/cluster: $(head -c 300 "$WORK/kustomize.err")"
# `create --dry-run=client` prints the objects as rendered (`apply --dry-run=client` would merge
# in the live ones, uid and status included, which must never be applied back).
k create --dry-run=client -o json -f "$WORK/all.yaml" >"$WORK/all.json" 2>"$WORK/client.err" ||
	fail "the rendered manifests do not parse: $(head -c 300 "$WORK/client.err")"
jq -s '.' "$WORK/all.json" >"$WORK/items.json"
one() { jq -e --arg k "$1" '[.[] | select(.kind == $k)] | if length == 1 then .[0] else error("want one \($k), found \(length)") end' "$WORK/items.json"; }
one Deployment >"$WORK/deploy.json" || fail "not exactly one Deployment"
for kind in Namespace ServiceAccount ConfigMap PodDisruptionBudget ClusterRoleBinding Role RoleBinding; do
	one "$kind" >/dev/null || fail "not exactly one $kind"
done
named() { jq -e --arg k "$1" --arg n "$2" '[.[] | select(.kind == $k and .metadata.name == $n)] | if length == 1 then .[0] else error("no \($k) \($n)") end' "$WORK/items.json"; }
for obj in Service/muster-webhook-service Service/muster-visibility ClusterRole/muster-manager \
	ClusterRole/muster-visibility-reader APIService/v1beta2.visibility.kueue.x-k8s.io \
	APIService/v1alpha1.visibility.muster.io; do
	named "${obj%%/*}" "${obj#*/}" >/dev/null || fail "no $obj"
done
# Cluster-scoped: the Namespace, CRDs, ClusterRole(Binding)s and the leader fence.
wrong_ns=$(jq -r '.[] | select(.kind != "Namespace" and .kind != "CustomResourceDefinition" and
	(.kind | test("^(Cluster|ValidatingAdmissionPolicy|APIService)") | not)) | select(.metadata.namespace != "muster-system") |
	"\(.kind)/\(.metadata.name)"' "$WORK/items.json")
for kind in ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding; do
	one "$kind" >/dev/null || fail "not exactly one $kind (the leader fence, config/rbac/leader-fence.yaml)"
done
[ -z "$wrong_ns" ] || fail "outside muster-system: $wrong_ns"

# --- the Deployment --------------------------------------------------------------------------
d() { jq -e "$1" "$WORK/deploy.json" >/dev/null || fail "Deployment: want $1"; }
d '.spec.replicas == 2'
d '.spec.template.spec.serviceAccountName == "muster-manager"'
d '.spec.template.spec.securityContext | .runAsNonRoot == true and .runAsUser == 65532 and .seccompProfile.type == "RuntimeDefault"'
d '.spec.template.spec.containers | length == 1'
c='.spec.template.spec.containers[0]'
d "$c.securityContext | .runAsNonRoot == true and .readOnlyRootFilesystem == true and .allowPrivilegeEscalation == false and .capabilities.drop == [\"ALL\"] and .seccompProfile.type == \"RuntimeDefault\""
d "$c.livenessProbe.httpGet | .path == \"/healthz\" and .port == \"health\""
d "$c.readinessProbe.httpGet | .path == \"/readyz\" and .port == \"health\""
d "$c.ports | map(select(.name == \"health\")) | .[0].containerPort == 8081"
d "$c.resources | .requests.cpu and .requests.memory and .limits.cpu and .limits.memory"
d "$c.env | map(select(.name == \"POD_NAMESPACE\")) | .[0].valueFrom.fieldRef.fieldPath == \"metadata.namespace\""
version=$(sed -n 's/^project(muster VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
d "$c.image == \"muster:$version\""
cm=$(jq -r '.[] | select(.kind == "ConfigMap") | .metadata.name' "$WORK/items.json")
d ".spec.template.spec.volumes | map(select(.configMap.name == \"$cm\")) | length == 1"
d "$c.args == [\"manager\", \"--config\", \"/etc/muster/manager-config.yaml\"]"
d "$c.volumeMounts | map(select(.mountPath == \"/etc/muster\")) | length == 1"
jq -e '.[] | select(.kind == "PodDisruptionBudget") | .spec.minAvailable == 1' "$WORK/items.json" >/dev/null ||
	fail "the PodDisruptionBudget does not keep one replica"

# --- the Service and the configuration agree --------------------------------------------------
jq -r '.[] | select(.kind == "ConfigMap") | .data["manager-config.yaml"]' "$WORK/items.json" >"$WORK/config.yaml"
svc=muster-webhook-service
grep -qE "^  webhookServiceName: $svc\$" "$WORK/config.yaml" || fail "internalCertManagement.webhookServiceName is not the Service $svc"
grep -qE '^namespace: muster-system$' "$WORK/config.yaml" || fail "the configuration's namespace is not muster-system"
jq -e '.[] | select(.kind == "Service" and .metadata.name == "muster-webhook-service") | .spec.ports | (map(select(.port == 443))[0].targetPort == "webhook") and
	(map(select(.port == 8080))[0].targetPort == "metrics")' "$WORK/items.json" >/dev/null ||
	fail "the Service does not forward 443 to the webhook port and 8080 to the metrics"
jq -e "$c.ports | (map(select(.name == \"webhook\"))[0].containerPort == 9443) and (map(select(.name == \"metrics\"))[0].containerPort == 8080)" "$WORK/deploy.json" >/dev/null ||
	fail "the container's webhook and metrics ports are not 9443 and 8080"
grep -qE '^  port: 9443' "$WORK/config.yaml" || fail "webhook.port is not the container's 9443"
# The visibility endpoint: APIServices -> Service muster-visibility:443 -> the container's
# visibility port, which is visibilityServer.bindPort; the ledger on the pod's volume.
named Service muster-visibility | jq -e '.spec.ports[0] | .port == 443 and .targetPort == "visibility"' >/dev/null ||
	fail "the visibility Service does not forward 443 to the visibility port"
jq -e "$c.ports | map(select(.name == \"visibility\"))[0].containerPort == 8082" "$WORK/deploy.json" >/dev/null ||
	fail "the container's visibility port is not 8082"
grep -qE '^  bindPort: 8082' "$WORK/config.yaml" || fail "visibilityServer.bindPort is not the container's 8082"
for api in v1beta2.visibility.kueue.x-k8s.io v1alpha1.visibility.muster.io; do
	named APIService "$api" | jq -e '.spec.service | .name == "muster-visibility" and .namespace == "muster-system" and .port == 443' >/dev/null ||
		fail "APIService $api does not point at muster-visibility:443"
done
grep -qE '^  path: /var/lib/muster/ledger.db' "$WORK/config.yaml" || fail "ledger.path is not on the ledger volume"
d "$c.volumeMounts | map(select(.name == \"ledger\" and .mountPath == \"/var/lib/muster\")) | length == 1"

# The manager accepts the configuration (it reads it before the kubeconfig, so a bad field is
# "invalid configuration" and a good file gets as far as the kubeconfig). metrics and
# leaderElection are parsed by code on other branches of issue 9: until it is here they are
# stripped, and only then.
bin=$(muster_bin)
cp "$WORK/config.yaml" "$WORK/parsed.yaml"
for section in metrics leaderElection; do
	out=$("$bin" manager --config "$WORK/parsed.yaml" --kubeconfig "$WORK/none" 2>&1) || true
	if grep -q "\"error\":\"[^\"]*: $section: unknown or unsupported field" <<<"$out"; then
		awk -v s="$section" '$0 ~ "^" s ":" { skip = 1; next } skip && /^[ #]/ { next } { skip = 0; print }' \
			"$WORK/parsed.yaml" >"$WORK/stripped.yaml" && mv "$WORK/stripped.yaml" "$WORK/parsed.yaml"
	fi
done
out=$("$bin" manager --config "$WORK/parsed.yaml" --kubeconfig "$WORK/none" 2>&1) || true
grep -q '"msg":"cannot load kubeconfig"' <<<"$out" ||
	fail "the manager refuses deploy/cluster/manager-config.yaml: $(grep -m1 error <<<"$out" | head -c 300)"

# --- no conversion webhook --------------------------------------------------------------------
conv=$(jq -r '.[] | select(.kind == "CustomResourceDefinition") | select(.spec.conversion.strategy // "None" | . != "None") | .metadata.name' "$WORK/items.json")
[ -z "$conv" ] || fail "CRDs with a conversion webhook nothing serves: $conv"
live=$(k get crd -o json | jq -r '.items[] | select(.spec.group == "kueue.x-k8s.io") | select(.spec.conversion.strategy != "None") | .metadata.name')
[ -z "$live" ] || fail "installed CRDs with a conversion webhook: $live"

# --- apply: for real, except the Deployment ----------------------------------------------------
jq '{apiVersion: "v1", kind: "List", items: [.[] | select(.kind != "Deployment" and .kind != "APIService")]}' "$WORK/items.json" >"$WORK/rest.json"
jq '{apiVersion: "v1", kind: "List", items: [.[] | select(.kind == "APIService")]}' "$WORK/items.json" >"$WORK/apiservices.json"
for obj in "configmap/$cm" "service/$svc" service/muster-visibility poddisruptionbudget/muster-manager; do
	if ! k -n muster-system get "$obj" >/dev/null 2>&1; then
		on_exit "k -n muster-system delete $obj --ignore-not-found"
	fi
done
if ! k get clusterrole muster-visibility-reader >/dev/null 2>&1; then
	on_exit "k delete clusterrole muster-visibility-reader --ignore-not-found"
fi
k apply -f "$WORK/rest.json" >"$WORK/apply.out" 2>"$WORK/apply.err" ||
	fail "applying the rendered manifests failed: $(head -c 400 "$WORK/apply.err")"
# What up.sh installed is the same as what deploy/cluster installs.
changed=$(grep -E '^(namespace|customresourcedefinition|serviceaccount|clusterrole|clusterrolebinding|role|rolebinding)[a-z.]*/' "$WORK/apply.out" | grep -v ' unchanged$' | grep -v '^clusterrole[a-z.]*/muster-visibility-reader ' || true)
[ -z "$changed" ] || fail "applying deploy/cluster changed what up.sh installed: $(tr '\n' ';' <<<"$changed")"
k -n muster-system get "configmap/$cm" "service/$svc" poddisruptionbudget/muster-manager >/dev/null ||
	fail "the ConfigMap, Service or PodDisruptionBudget is not there after apply"

k apply --server-side --dry-run=server -f "$WORK/deploy.json" >"$WORK/deploy.out" 2>"$WORK/deploy.err" ||
	fail "the Deployment fails a server-side dry run: $(head -c 400 "$WORK/deploy.err")"
k apply --server-side --dry-run=server -f "$WORK/apiservices.json" >/dev/null 2>"$WORK/apis.err" ||
	fail "the APIServices fail a server-side dry run: $(head -c 400 "$WORK/apis.err")"
! grep -qi 'PodSecurity' "$WORK/deploy.err" || fail "the pod template violates the restricted Pod Security Standard: $(head -c 400 "$WORK/deploy.err")"
k -n muster-system get deployment muster-manager >/dev/null 2>&1 && fail "the dry run created the Deployment"

# The running manager still serves after all that.
curl --noproxy '*' -fsS --max-time 3 "http://127.0.0.1:${MUSTER_HEALTH_PORT:?}/readyz" >/dev/null ||
	fail "the manager is not ready after the apply"
pass
