#!/usr/bin/env bash
# Service mode (internalCertManagement.webhookServiceName), as deploy/cluster runs the manager,
# against the local apiserver with the manager's ServiceAccount token: a first manager finds no
# Secret, creates muster-webhook-server-cert with a CA and a serving pair for the Service's DNS
# names, and installs webhook configurations that reference the Service (port 443) with that
# CA; a second manager (another replica) reads the same Secret instead of making its own.
# Nothing routes the Service here, so each runs only until its webhooks are installed (as the
# leader: the cluster's manager is stopped meanwhile); then the cluster's manager is restarted, which puts its URL-mode configurations back.
source "$(dirname "$0")/lib.sh"
: "${MUSTER_MANAGER_KUBECONFIG:?source the cluster.env of deploy/local/up.sh}"
WORK=$(mktemp -d)
on_exit "rm -rf $WORK"
bin=$(muster_bin)
secret=muster-webhook-server-cert
svc=muster-webhook-service
k -n muster-system get secret "$secret" >/dev/null 2>&1 && fail "secret $secret exists already"
trap "exit 143" TERM INT
# shellcheck disable=SC2016 # expanded when the test ends
on_exit '[ -n "${RESTORED:-}" ] || restart_manager "$MANAGER_ARGS_AT_START"'
on_exit "k -n muster-system delete secret $secret --ignore-not-found"
cat >"$WORK/config.yaml" <<YAML
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: muster-system
webhook: {port: 9443}
internalCertManagement: {enable: true, webhookServiceName: $svc, webhookSecretName: $secret}
YAML
# replica N: runs a manager in service mode until it has installed its hold: policies and webhooks (free ports).
replica() {
	"$bin" manager --kubeconfig "$MUSTER_MANAGER_KUBECONFIG" --config "$WORK/config.yaml" \
		--webhook-port 0 --health-host 127.0.0.1 --health-port 0 --metrics-port 0 --visibility-port 0 \
		>"$WORK/replica-$1.log" 2>&1 &
	local pid=$! i
	for ((i = 0; i < 60; i++)); do
		grep -q '"msg":"hold installed"' "$WORK/replica-$1.log" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" || true
	cp "$WORK/replica-$1.log" "$MUSTER_LOCAL_DIR/logs/muster.log.$TEST_NAME.replica-$1"
	grep -q '"msg":"hold installed"' "$WORK/replica-$1.log" ||
		fail "replica $1 did not install its webhooks: $(grep -m1 '"level":"error"' "$WORK/replica-$1.log" | head -c 300)"
}

# Only the leader installs webhook configurations: the cluster's manager makes way (it gives
# the Lease up as it stops), and each replica leads in turn.
stop_manager || fail "could not stop the cluster's manager"
replica 1
grep -q '"msg":"webhook certificates generated, Secret created"' "$WORK/replica-1.log" ||
	fail "the first replica did not create the Secret"
k -n muster-system get secret "$secret" -o json >"$WORK/secret.json" || fail "no Secret $secret"
jq -e '.type == "kubernetes.io/tls" and (.data | has("ca.crt") and has("tls.crt") and has("tls.key"))' "$WORK/secret.json" >/dev/null ||
	fail "the Secret is not a kubernetes.io/tls Secret with ca.crt, tls.crt and tls.key"
jq -r '.data["tls.crt"]' "$WORK/secret.json" | base64 -d | openssl x509 -noout -ext subjectAltName >"$WORK/san.txt" ||
	fail "tls.crt is not a certificate"
for name in "$svc.muster-system.svc" "$svc.muster-system.svc.cluster.local"; do
	grep -qF "DNS:$name" "$WORK/san.txt" || fail "the serving certificate does not name $name"
done
ca=$(jq -r '.data["ca.crt"]' "$WORK/secret.json")
# Where admission policies hold (1.36+), the mutating configuration may have no webhook left:
# the validating one always has the ClusterQueue's.
for kind in mutatingwebhookconfiguration/muster-mutating-webhook-configuration validatingwebhookconfiguration/muster-validating-webhook-configuration; do
	k get "$kind" -o json | jq -e '((.webhooks // []) | length > 0) or
		(.metadata.annotations["muster.kueue.x-k8s.io/admission-hold"] == "AdmissionPolicy")' >/dev/null ||
		fail "$kind has no webhook"
	k get "$kind" -o json | jq -e --arg ca "$ca" --arg svc "$svc" '(.webhooks // []) | all(.clientConfig |
		.service.name == $svc and .service.namespace == "muster-system" and .service.port == 443 and
		(.service.path | startswith("/")) and (has("url") | not) and .caBundle == $ca)' >/dev/null ||
		fail "$kind does not reference Service $svc with the Secret's CA"
done

replica 2
grep -q '"msg":"webhook certificates loaded from Secret"' "$WORK/replica-2.log" ||
	fail "the second replica did not use the Secret"
[ "$(k -n muster-system get secret "$secret" -o jsonpath='{.data.ca\.crt}')" = "$ca" ] ||
	fail "the second replica replaced the Secret"

# Back to the cluster's own manager (URL mode) before the next test.
restart_manager "$MANAGER_ARGS_AT_START" || fail "could not restart the manager"
RESTORED=1
for kind in mutatingwebhookconfiguration/muster-mutating-webhook-configuration validatingwebhookconfiguration/muster-validating-webhook-configuration; do
	k get "$kind" -o json |
		jq -e '(.webhooks // []) | all(.clientConfig | has("url") and (has("service") | not))' >/dev/null ||
		fail "the restarted manager did not restore its URL-mode webhooks ($kind)"
done
k get validatingwebhookconfiguration muster-validating-webhook-configuration -o json |
	jq -e '.webhooks | length > 0' >/dev/null || fail "the restarted manager's validating configuration is empty"
pass
