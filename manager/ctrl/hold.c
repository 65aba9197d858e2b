/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How a queued object is held at create, and whether an admitted Job's pods are bound as a
 * gang (internal.h, "hold.c").
 *
 * Every replica finds out once at start what the apiserver serves (hold_discover): the
 * admissionregistration.k8s.io/v1 resources, the scheduling.k8s.io/v1beta1 ones, and, with
 * both of the latter, whether a Job created with spec.scheduling keeps it (one dry-run create
 * in the manager's namespace: the field is alpha behind WorkloadWithJob, and a server without
 * the gate refuses it, so guessing would make every queued Job's create fail). From that and
 * the configuration, webhooks/policies.c decides. The webhooks need the decision (gang on the
 * webhook path), so a replica is ready only once it is made.
 *
 * The leader installs (hold_install, in the phases of install_phase): the admission policies
 * of the hold, or none; proof with dry-run probes that the apiserver enforces them; the
 * webhook configurations, whose owner and pod entries fail open (Ignore) when policies hold,
 * since they then only refine; and deletes the policies this configuration does not use.
 * Which hold and whether gang are also annotations on the mutating webhook configuration.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/base64.h"
#include "util/log.h"
#include "webhooks/policies.h"
#include "webhooks/webhooks.h"

#define MUTATING_CONFIG "muster-mutating-webhook-configuration"
#define VALIDATING_CONFIG "muster-validating-webhook-configuration"
#define ANNOTATION_HOLD "muster.kueue.x-k8s.io/admission-hold"
#define ANNOTATION_GANG "muster.kueue.x-k8s.io/gang-scheduling"
#define DISCOVERY_RETRY_MIN_MS 500
#define DISCOVERY_RETRY_MAX_MS 10000
#define HOLD_PROBE_TRIES 5
#define HOLD_VERIFY_EVERY_MS 250
/* The probes' pod (template): one the restricted Pod Security Standard admits, as the manager's
 * own namespace enforces it (deploy/cluster/namespace.yaml). */
#define PROBE_POD_SPEC                                                                           \
	"{\"restartPolicy\":\"Never\",\"securityContext\":{\"runAsNonRoot\":true,"               \
	"\"seccompProfile\":{\"type\":\"RuntimeDefault\"}},\"containers\":[{\"name\":\"probe\"," \
	"\"image\":\"probe\",\"securityContext\":{\"allowPrivilegeEscalation\":false,"           \
	"\"capabilities\":{\"drop\":[\"ALL\"]}}}]}"
#define HOLD_UNCHECKED_WAIT_MS 3000
#define HOLD_VERIFY_TRIES 120 /* 30 s: the apiserver's policy caches lag by well under a second */

/* The client the hold's requests go through (struct mgr: setup_kube). */
static struct kube_client *setup_client(struct mgr *m)
{
	return m->setup_kube ? m->setup_kube : m->kube;
}

/* Creates an object with dryRun=All in the manager's namespace (nothing is stored): of kind
 * (apiVersion api_version, at prefix/resource), named from generate_name, with spec; labelled
 * with this process's probe token (policies.h), which only the hold's own policies look at. */
static int dry_run_create(struct mgr *m, const char *prefix, const char *resource,
			  const char *api_version, const char *kind, const char *generate_name,
			  const char *spec, kube_done_fn done)
{
	char path[512], body[1024];
	snprintf(path, sizeof(path), "%s/namespaces/%s/%s?dryRun=All", prefix,
		 m->conf.namespace_name, resource);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"generateName\":\"%s\","
		 "\"labels\":{\"%s\":\"%s\"}},\"spec\":%s}",
		 api_version, kind, generate_name, POLICY_PROBE_LABEL, m->hold.token, spec);
	return kube_request(setup_client(m), "POST", path, NULL, body, done, m, NULL);
}

/* --- discovery -------------------------------------------------------------------------- */

static void discovery_step(struct mgr *m);

static void on_retry(uv_timer_t *t)
{
	discovery_step(t->data);
}

static int send_probes(struct mgr *m);

static void install_phase(struct mgr *m);

/* The wait that stands in for the verification where it can't be made. */
static void on_unchecked_timer(uv_timer_t *t)
{
	install_phase(t->data);
}

/* The verification's next round (the same timer: discovery is over by then). */
static void on_verify_timer(uv_timer_t *t)
{
	struct mgr *m = t->data;
	m->hold.probe_unheld = 0;
	if (send_probes(m) != 0) {
		log_error("cannot check the admission policies", LF_END);
		m->failed = 1;
		uv_stop(m->loop);
	}
}

/* Whether an APIResourceList body lists every one of the resources. */
static int lists(const char *body, size_t len, const char *const *names)
{
	json_error_t jerr;
	json_t *doc = json_loadb(body, len, 0, &jerr);
	int found = 1;
	for (size_t n = 0; names[n] && found; n++) {
		size_t i;
		json_t *r;
		found = 0;
		json_array_foreach(json_object_get(doc, "resources"), i,
				   r) if (json_is_string(json_object_get(r, "name")) &&
					  !strcmp(json_string_value(json_object_get(r, "name")),
						  names[n])) found = 1;
	}
	json_decref(doc);
	return doc && found;
}

/* A transport error or a server error: ask again later (the apiserver may be starting). */
static int try_again(struct mgr *m, const struct kube_response *resp, const char *what)
{
	if (!resp->error && resp->status < 500 && resp->status != 429)
		return 0;
	if (resp->error == -ECANCELED)
		return 1; /* shutting down */
	m->hold.retry_ms = m->hold.retry_ms ? m->hold.retry_ms * 2 : DISCOVERY_RETRY_MIN_MS;
	if (m->hold.retry_ms > DISCOVERY_RETRY_MAX_MS)
		m->hold.retry_ms = DISCOVERY_RETRY_MAX_MS;
	log_warn("cannot find out what the server serves yet; trying again", LF_STR("asking", what),
		 LF_INT("status", resp->status), LF_STR("error", resp->error_text),
		 LF_INT("retry_ms", m->hold.retry_ms), LF_END);
	uv_timer_start(&m->hold.retry, on_retry, m->hold.retry_ms, 0);
	return 1;
}

static void decided(struct mgr *m)
{
	char err[256];
	const struct policy_served served = { m->hold.served_map, m->hold.served_podgroups,
					      m->hold.job_scheduling };
	if (policies_decide((int)m->conf.hold_mode, (int)m->conf.gang_mode,
			    config_framework_enabled(&m->conf, "batch/job"), &served,
			    &m->hold.policy, &m->hold.gang, err, sizeof(err)) != 0) {
		log_error("cannot start as configured", LF_STR("error", err), LF_END);
		m->failed = 1;
		uv_stop(m->loop);
		return;
	}
	m->hold.known = 1;
	log_info("admission hold and gang scheduling",
		 LF_STR("hold", m->hold.policy ? "AdmissionPolicy" : "Webhook"),
		 LF_INT("gang_scheduling", m->hold.gang),
		 LF_INT("serves_mutating_admission_policy", m->hold.served_map),
		 LF_INT("serves_podgroups", m->hold.served_podgroups),
		 LF_INT("keeps_job_scheduling", m->hold.job_scheduling), LF_END);
	if (m->hold.on_known)
		m->hold.on_known(m);
}

static void on_job_probe(void *arg, const struct kube_response *resp)
{
	struct mgr *m = arg;
	/* The dry run passes the webhooks too, and one of ours whose server is gone (a dead
	 * leader's URL, in a namespace manageJobsWithoutQueueName takes) refuses it until the
	 * new leader installs, which waits for this answer: after a few tries, no gang. */
	if (resp->error != -ECANCELED && ++m->hold.probe_tries > HOLD_PROBE_TRIES &&
	    (resp->error || resp->status >= 500)) {
		log_warn("the Job probe keeps failing; going on without gang scheduling",
			 LF_INT("status", resp->status), LF_STR("error", resp->error_text),
			 LF_STR("body", resp->body), LF_END);
		m->hold.step++;
		discovery_step(m);
		return;
	}
	if (try_again(m, resp, "a dry-run Job with spec.scheduling"))
		return;
	json_error_t jerr;
	json_t *job = resp->status < 300 ? json_loadb(resp->body, resp->body_len, 0, &jerr) : NULL;
	m->hold.job_scheduling =
		json_is_object(obj_path(job, "spec.scheduling.schedulingPolicy.gang"));
	if (!m->hold.job_scheduling)
		log_info("the server does not keep a Job's spec.scheduling",
			 LF_INT("status", resp->status),
			 LF_STR("body", resp->status < 300 ? NULL : resp->body), LF_END);
	json_decref(job);
	m->hold.step++;
	discovery_step(m);
}

static void on_group_version(void *arg, const struct kube_response *resp)
{
	static const char *const map[] = { "mutatingadmissionpolicies",
					   "mutatingadmissionpolicybindings", NULL };
	static const char *const wl[] = { "podgroups", "workloads", NULL };
	struct mgr *m = arg;
	int ok = resp->status == 200;
	if (try_again(m, resp,
		      m->hold.step == 0 ? "admissionregistration.k8s.io/v1" :
					  "scheduling.k8s.io/v1beta1"))
		return;
	/* 404: the group-version is not served at all. */
	if (m->hold.step == 0)
		m->hold.served_map = ok && lists(resp->body, resp->body_len, map);
	else
		m->hold.served_podgroups = ok && lists(resp->body, resp->body_len, wl);
	m->hold.step++;
	discovery_step(m);
}

/* The steps, in order: admission policies, the Workload API, then (only where it is served)
 * the Job probe. Each answer moves to the next; an unclear one retries the same step. */
static void discovery_step(struct mgr *m)
{
	int rc = 0;
	if (m->hold.step == 0) {
		rc = kube_request(setup_client(m), "GET", "/apis/admissionregistration.k8s.io/v1",
				  NULL, NULL, on_group_version, m, NULL);
	} else if (m->hold.step == 1 && m->conf.gang_mode != GANG_DISABLED) {
		rc = kube_request(setup_client(m), "GET", "/apis/scheduling.k8s.io/v1beta1", NULL,
				  NULL, on_group_version, m, NULL);
	} else if (m->hold.step == 2 && m->hold.served_podgroups) {
		/* Suspended, and never stored, so nothing runs and nothing is left. */
		rc = dry_run_create(m, "/apis/batch/v1", "jobs", "batch/v1", "Job",
				    "muster-gang-probe-",
				    "{\"suspend\":true,\"scheduling\":{\"schedulingPolicy\":{"
				    "\"gang\":{}}},"
				    "\"template\":{\"spec\":" PROBE_POD_SPEC "}}",
				    on_job_probe);
	} else if (m->hold.step < 3) {
		m->hold.step++;
		discovery_step(m);
		return;
	} else {
		decided(m);
		return;
	}
	if (rc != 0) {
		log_error("cannot ask the server what it serves", LF_INT("rc", rc), LF_END);
		m->failed = 1;
		uv_stop(m->loop);
	}
}

int hold_discover(struct mgr *m, void (*on_known)(struct mgr *m))
{
	int rc = uv_timer_init(m->loop, &m->hold.retry);
	if (rc != 0)
		return rc;
	m->hold.retry.data = m;
	m->hold.on_known = on_known;
	/* This process's probe token: the policies it installs hold the probes labelled with it,
	 * so a probe held proves that this very version is in force. */
	snprintf(m->hold.token, sizeof(m->hold.token), "%llx", (unsigned long long)uv_hrtime());
	m->hold.step = 0;
	discovery_step(m);
	return 0;
}

/* --- installation (the leader) ---------------------------------------------------------- */

/* Where the apiserver calls a webhook: the Service in front of every replica (service mode,
 * internalCertManagement.webhookServiceName), or this process's own URL (the local cluster). */
static json_t *client_config(struct mgr *m, const char *path, const char *ca_b64)
{
	char url[512];
	if (m->conf.webhook_service[0])
		return json_pack("{s:{s:s, s:s, s:s, s:i}, s:s}", "service", "namespace",
				 m->conf.namespace_name, "name", m->conf.webhook_service, "path",
				 path, "port", 443, "caBundle", ca_b64);
	snprintf(url, sizeof(url), "https://%s:%d%s", m->opt.webhook_host,
		 httpd_port(m->webhook_srv), path);
	return json_pack("{s:s, s:s}", "url", url, "caBundle", ca_b64);
}

/* The namespaces an owner webhook (or hold policy) sees when it also takes objects without the
 * queue label (manageJobsWithoutQueueName): managedJobsNamespaceSelector, or Kueue's default
 * (not kube-system, not the manager's own namespace, which resolve_serving filled in). */
static json_t *managed_namespace_selector(struct mgr *m)
{
	if (m->conf.managed_namespaces)
		return json_deep_copy(m->conf.managed_namespaces);
	return json_pack("{s:[{s:s, s:s, s:[s, s]}]}", "matchExpressions", "key",
			 "kubernetes.io/metadata.name", "operator", "NotIn", "values",
			 "kube-system", m->conf.namespace_name);
}

/* A webhook of the configurations. queued_only: only objects with the queue-name label reach
 * it, so a down muster can't block the others (Kueue receives every Job, so an outage there
 * blocks all Job creation, kueue#5244); without it (manageJobsWithoutQueueName) the managed
 * namespaces' objects all do. fail_open: the policies hold, so the webhook only refines, and
 * a down muster must not block the creates the policies already hold. */
static json_t *webhook_entry(struct mgr *m, const char *name, const char *path, json_t *rules,
			     int queued_only, int fail_open, const char *ca_b64)
{
	json_t *w = json_pack("{s:s, s:[s], s:o, s:o, s:s, s:s, s:s, s:i,"
			      " s:{s:[{s:s, s:s, s:[s, s, s]}]}}",
			      "name", name, "admissionReviewVersions", "v1", "clientConfig",
			      client_config(m, path, ca_b64), "rules", rules, "sideEffects", "None",
			      "failurePolicy", fail_open ? "Ignore" : "Fail", "matchPolicy",
			      "Equivalent", "timeoutSeconds", 10, "namespaceSelector",
			      "matchExpressions", "key", "kubernetes.io/metadata.name", "operator",
			      "NotIn", "values", "kube-system", "kube-public", "kube-node-lease");
	if (w && queued_only > 0)
		json_object_set_new(w, "objectSelector",
				    json_pack("{s:[{s:s, s:s}]}", "matchExpressions", "key",
					      LABEL_QUEUE_NAME, "operator", "Exists"));
	else if (w && queued_only < 0)
		json_object_set_new(w, "namespaceSelector", managed_namespace_selector(m));
	return w;
}

static void install_phase(struct mgr *m);

/* One write of the current phase landed: the next phase starts once all have. */
static void install_landed(struct mgr *m)
{
	if (--m->hold.installing == 0 && !m->failed) {
		m->hold.phase++;
		install_phase(m);
	}
}

static void install_failed(struct mgr *m, const char *what, const struct kube_response *resp)
{
	log_error("cannot install the hold", LF_STR("step", what),
		  LF_INT("status", resp ? resp->status : 0),
		  LF_STR("error", resp ? resp->error_text : NULL),
		  LF_STR("body", resp ? resp->body : NULL), LF_END);
	/* Without its hold muster would let queued Jobs start unadmitted. */
	m->failed = 1;
	uv_stop(m->loop);
}

static void on_applied(void *arg, const struct kube_response *resp)
{
	struct mgr *m = arg;
	if (resp->error == -ECANCELED)
		return; /* shutting down */
	if (resp->error || resp->status >= 300) {
		install_failed(m, "apply", resp);
		return;
	}
	install_landed(m);
}

static void on_deleted(void *arg, const struct kube_response *resp)
{
	/* 404: never installed, or gone already (a server without the resource answers so too). */
	if (resp->status == 404) {
		install_landed(arg);
		return;
	}
	on_applied(arg, resp);
}

/* Server-side apply: one idempotent call creates or updates the object. Steals obj. */
static int apply(struct mgr *m, const char *resource, json_t *obj)
{
	char path[256];
	const char *name =
		json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	char *body = name ? json_dumps(obj, JSON_COMPACT) : NULL;
	int rc = -ENOMEM;
	snprintf(path, sizeof(path),
		 "/apis/admissionregistration.k8s.io/v1/%s/%s?fieldManager=muster&force=true",
		 resource, name ? name : "");
	if (body)
		rc = kube_request(setup_client(m), "PATCH", path, "application/apply-patch+yaml",
				  body, on_applied, m, NULL);
	if (rc == 0)
		m->hold.installing++;
	free(body);
	json_decref(obj);
	return rc;
}

static json_t *configuration(const char *kind, const char *name, json_t *webhooks)
{
	return json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion",
			 "admissionregistration.k8s.io/v1", "kind", kind, "metadata", "name", name,
			 "webhooks", webhooks);
}

/* The mutating (CREATE) and validating (CREATE, UPDATE) entries of one kind; all_objects: every
 * object of the managed namespaces, not only queued ones (webhook_entry). With policies
 * holding, the mutating entry is needed only to give the queue "default" (mutate_owner). */
static int add_kind_webhooks(struct mgr *m, json_t *mutating, json_t *validating,
			     const struct integration *in, const char *mutate_path,
			     const char *validate_path, const char *short_name, int all_objects,
			     const char *ca_b64)
{
	int queued_only = all_objects ? -1 : 1, open = m->hold.policy;
	const char *version = integration_version(in);
	char name[128];
	json_t *create = json_pack("[{s:[s], s:[s], s:[s], s:[s], s:s}]", "apiGroups", in->group,
				   "apiVersions", version, "operations", "CREATE", "resources",
				   in->plural, "scope", "Namespaced");
	json_t *cu = json_pack("[{s:[s], s:[s], s:[s, s], s:[s], s:s}]", "apiGroups", in->group,
			       "apiVersions", version, "operations", "CREATE", "UPDATE",
			       "resources", in->plural, "scope", "Namespaced");
	int want_mutating = !m->hold.policy || all_objects;
	snprintf(name, sizeof(name), "m%s.muster.kueue.x-k8s.io", short_name);
	json_t *mw = create && want_mutating ? webhook_entry(m, name, mutate_path, create,
							     queued_only, open, ca_b64) :
					       NULL;
	if (!want_mutating)
		json_decref(create);
	snprintf(name, sizeof(name), "v%s.muster.kueue.x-k8s.io", short_name);
	json_t *vw = cu ? webhook_entry(m, name, validate_path, cu, queued_only, open, ca_b64) :
			  NULL;
	int rc = (mw || !want_mutating) && vw &&
				 (!mw || json_array_append_new(mutating, mw) == 0) &&
				 json_array_append_new(validating, vw) == 0 ?
			 0 :
			 -ENOMEM;
	if (rc != 0 && (!vw || (want_mutating && !mw))) {
		json_decref(mw);
		json_decref(vw);
	}
	return rc;
}

/* The webhooks of every enabled kind (Kueue's names: mjob, mrayjob, mpod, ...), and the
 * ClusterQueue's validation: two new configurations in *mutating and *validating. */
static int build_webhooks(struct mgr *m, json_t **mutating_out, json_t **validating_out)
{
	char *ca_b64 = base64_encode(m->certs.ca_pem, strlen(m->certs.ca_pem));
	json_t *mutating = json_array(), *validating = json_array();
	int rc = ca_b64 && mutating && validating ? 0 : -ENOMEM;
	for (enum kind k = K_OWNER_FIRST; rc == 0 && k <= K_OWNER_LAST; k++) {
		const struct integration *in = owner_integration(k);
		char mpath[160], vpath[160], short_name[64];
		if (!owner_enabled(m, k))
			continue;
		webhook_owner_path(in, 1, mpath, sizeof(mpath));
		webhook_owner_path(in, 0, vpath, sizeof(vpath));
		snprintf(short_name, sizeof(short_name), "%s", in->plural);
		short_name[strlen(short_name) - 1] = '\0'; /* "jobs" -> "job" */
		rc = add_kind_webhooks(m, mutating, validating, in, mpath, vpath, short_name,
				       m->conf.manage_without_queue_name, ca_b64);
	}
	if (rc == 0 && config_framework_enabled(&m->conf, "pod"))
		rc = add_kind_webhooks(m, mutating, validating, &integration_pod,
				       WEBHOOK_PATH_MUTATE_POD, WEBHOOK_PATH_VALIDATE_POD, "pod", 0,
				       ca_b64);
	json_t *cq_cu = json_pack("[{s:[s], s:[s], s:[s, s], s:[s], s:s}]", "apiGroups",
				  KUEUE_GROUP, "apiVersions", "v1beta2", "operations", "CREATE",
				  "UPDATE", "resources", "clusterqueues", "scope", "Cluster");
	/* Administrators' objects: refused while muster can't check them, as before. */
	json_t *cq = rc == 0 && cq_cu ?
			     webhook_entry(m, "vclusterqueue.muster.kueue.x-k8s.io",
					   WEBHOOK_PATH_VALIDATE_CQ, cq_cu, 0, 0, ca_b64) :
			     NULL;
	if (!cq || json_array_append_new(validating, cq) != 0)
		rc = -ENOMEM;
	free(ca_b64);
	*mutating_out = configuration("MutatingWebhookConfiguration", MUTATING_CONFIG,
				      rc == 0 ? mutating : NULL);
	*validating_out = configuration("ValidatingWebhookConfiguration", VALIDATING_CONFIG,
					rc == 0 ? validating : NULL);
	if (rc != 0 || !*mutating_out || !*validating_out) {
		json_decref(*mutating_out);
		json_decref(*validating_out);
		if (rc != 0) {
			json_decref(mutating);
			json_decref(validating);
		}
		return -ENOMEM;
	}
	/* Which hold and whether gang: visible to anyone who can read the configuration. */
	json_object_set_new(json_object_get(*mutating_out, "metadata"), "annotations",
			    json_pack("{s:s, s:s}", ANNOTATION_HOLD,
				      m->hold.policy ? "AdmissionPolicy" : "Webhook",
				      ANNOTATION_GANG, m->hold.gang ? "true" : "false"));
	return 0;
}

/* What policies_build takes for this manager; owners points at storage for the kinds. */
static struct policy_inputs policy_inputs(struct mgr *m, const struct integration **owners,
					  json_t *managed)
{
	struct policy_inputs in = { owners,
				    0,
				    config_framework_enabled(&m->conf, "pod"),
				    m->hold.gang,
				    m->conf.manage_without_queue_name,
				    managed,
				    m->hold.token };
	for (enum kind k = K_OWNER_FIRST; k <= K_OWNER_LAST; k++)
		if (owner_enabled(m, k) && owner_integration(k)->holds_by_suspend)
			owners[in.n_owners++] = owner_integration(k);
	return in;
}

/* The dry-run probes of the verification: a Job (and with pods, a Pod) labelled with this
 * process's probe token in the manager's namespace. No webhook sees them (they carry no queue
 * label), so only a policy in force can hold them. */
static void on_probe(void *arg, const struct kube_response *resp);

static int send_probe(struct mgr *m, const char *prefix, const char *resource,
		      const char *api_version, const char *kind, const char *spec)
{
	int rc = dry_run_create(m, prefix, resource, api_version, kind, "muster-hold-probe-", spec,
				on_probe);
	if (rc == 0)
		m->hold.installing++;
	return rc;
}

static int send_probes(struct mgr *m)
{
	int rc = send_probe(m, "/apis/batch/v1", "jobs", "batch/v1", "Job",
			    "{\"suspend\":false,\"template\":{\"spec\":" PROBE_POD_SPEC "}}");
	if (rc == 0 && config_framework_enabled(&m->conf, "pod"))
		rc = send_probe(m, "/api/v1", "pods", "v1", "Pod", PROBE_POD_SPEC);
	return rc;
}

/* Whether a probe came back held: the Job suspended (and a gang, with gang scheduling), the
 * Pod gated. */
static int probe_held(struct mgr *m, json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	if (kind && !strcmp(kind, "Job"))
		return json_is_true(obj_path(obj, "spec.suspend")) &&
		       (!m->hold.gang ||
			json_is_object(obj_path(obj, "spec.scheduling.schedulingPolicy.gang")));
	return pod_gated(obj);
}

static void on_probe(void *arg, const struct kube_response *resp)
{
	struct mgr *m = arg;
	json_error_t jerr;
	if (resp->error == -ECANCELED)
		return;
	json_t *obj = resp->status < 300 ? json_loadb(resp->body, resp->body_len, 0, &jerr) : NULL;
	if (resp->status >= 400 && resp->status < 500 && !m->hold.probe_refused) {
		/* Refused by something else (a policy engine of the cluster's, say): it tells
		 * nothing of ours, so the check can't be made. */
		m->hold.probe_refused = 1;
		log_warn("a hold probe was refused; the admission policies can't be checked, going "
			 "on in a moment",
			 LF_INT("status", resp->status), LF_STR("body", resp->body), LF_END);
	} else if (!obj || !probe_held(m, obj)) {
		m->hold.probe_unheld++;
	}
	json_decref(obj);
	if (--m->hold.installing > 0 || m->failed)
		return;
	if (m->hold.probe_unheld == 0 && !m->hold.probe_refused) {
		log_info("the admission policies are in force",
			 LF_INT("checks", m->hold.verify_tries + 1), LF_END);
		m->hold.phase++;
		install_phase(m);
		return;
	}
	if (m->hold.probe_refused) {
		/* Unchecked: give the apiserver's caches the time they take (well under a
		 * second). */
		m->hold.phase++;
		uv_timer_start(&m->hold.retry, on_unchecked_timer, HOLD_UNCHECKED_WAIT_MS, 0);
		return;
	}
	/* Written, but the apiserver's policy caches have not caught up yet: a queued object
	 * created now would not be held, so the webhooks stay as they are until it has. */
	if (++m->hold.verify_tries >= HOLD_VERIFY_TRIES) {
		install_failed(m, "the admission policies are not in force", resp);
		return;
	}
	uv_timer_start(&m->hold.retry, on_verify_timer, HOLD_VERIFY_EVERY_MS, 0);
}

/* The installation, phase by phase (enum hold_phase), each once the writes of the one before
 * have landed:
 *   HOLD_APPLY_POLICIES  apply the policies;
 *   HOLD_VERIFY          verify that the apiserver enforces them (dry-run probes), as writing
 *                        them is not yet their being in force, and the webhooks that held
 *                        until now are about to fail open;
 *   HOLD_APPLY_WEBHOOKS  apply the webhook configurations;
 *   HOLD_DELETE_UNUSED   delete the policies this configuration does not use (after the
 *                        webhooks that replace them are written, so a move to the webhook hold
 *                        leaves no gap);
 *   HOLD_INSTALLED       done: the leader is ready.
 * A phase with nothing to do moves on at once. */
static void install_phase(struct mgr *m)
{
	const struct integration *owners[K_OWNER_LAST - K_OWNER_FIRST + 1];
	json_t *managed = managed_namespace_selector(m), *objects = NULL, *mutating = NULL,
	       *validating = NULL;
	struct policy_inputs in = policy_inputs(m, owners, managed);
	size_t i;
	json_t *o;
	int rc = managed ? 0 : -ENOMEM;

	m->hold.installing = 1; /* held while this phase issues its writes */
	switch (m->hold.phase) {
	case HOLD_APPLY_POLICIES:
		objects = m->hold.policy ? policies_build(&in) : policies_build(NULL);
		rc = objects ? 0 : -ENOMEM;
		json_array_foreach(objects, i, o) if (rc == 0) rc =
			apply(m, policies_resource(json_string_value(json_object_get(o, "kind"))),
			      json_incref(o));
		break;
	case HOLD_VERIFY:
		/* Under manageJobsWithoutQueueName the hold's bindings take the managed namespaces,
		 * which need not include the manager's own, where the probes go: no check there. */
		if (m->hold.policy && !m->conf.manage_without_queue_name)
			rc = send_probes(m);
		break;
	case HOLD_APPLY_WEBHOOKS:
		rc = build_webhooks(m, &mutating, &validating);
		if (rc == 0)
			rc = apply(m, "mutatingwebhookconfigurations", mutating);
		else
			json_decref(mutating);
		if (rc == 0)
			rc = apply(m, "validatingwebhookconfigurations", validating);
		else
			json_decref(validating);
		break;
	case HOLD_DELETE_UNUSED:
		objects = policies_unused(m->hold.policy ? &in : NULL);
		rc = objects ? 0 : -ENOMEM;
		json_array_foreach(objects, i, o)
		{
			char path[256];
			if (rc != 0 || !m->hold.served_map)
				break; /* a server without the resources has none to delete */
			snprintf(path, sizeof(path), "/apis/admissionregistration.k8s.io/v1/%s/%s",
				 policies_resource(json_string_value(json_object_get(o, "kind"))),
				 json_string_value(json_object_get(o, "name")));
			rc = kube_request(setup_client(m), "DELETE", path, NULL, NULL, on_deleted,
					  m, NULL);
			if (rc == 0)
				m->hold.installing++;
		}
		break;
	case HOLD_INSTALLED:
		m->hold.installing = 0;
		log_info("hold installed",
			 LF_STR("hold", m->hold.policy ? "AdmissionPolicy" : "Webhook"),
			 LF_INT("gang_scheduling", m->hold.gang), LF_END);
		json_decref(managed);
		return;
	}
	json_decref(objects);
	json_decref(managed);
	if (rc != 0) {
		install_failed(m, "a request could not be sent", NULL);
		return;
	}
	if (m->hold.phase == HOLD_VERIFY) {
		/* The probes' answers move on (on_probe), not install_landed. */
		if (--m->hold.installing == 0) {
			m->hold.phase++;
			/* unchecked (manageJobsWithoutQueueName): wait instead */
			if (m->hold.policy)
				uv_timer_start(&m->hold.retry, on_unchecked_timer,
					       HOLD_UNCHECKED_WAIT_MS, 0);
			else
				install_phase(m);
		}
		return;
	}
	install_landed(m); /* drops this phase's own hold */
}

int hold_install(struct mgr *m)
{
	if (m->hold.installing || m->hold.phase != HOLD_APPLY_POLICIES)
		return 0; /* under way, or done */
	install_phase(m);
	return m->failed ? -EIO : 0;
}
