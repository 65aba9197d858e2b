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
 * The leader installs (hold_install): the admission policies of the hold, or none; the
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

/* --- discovery -------------------------------------------------------------------------- */

static void discovery_step(struct mgr *m);

static void on_retry(uv_timer_t *t)
{
	discovery_step(t->data);
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
		json_array_foreach(json_object_get(doc, "resources"), i, r)
			if (json_is_string(json_object_get(r, "name")) &&
			    !strcmp(json_string_value(json_object_get(r, "name")), names[n]))
				found = 1;
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
			    config_framework_enabled(&m->conf, "batch/job"), &served, &m->hold.policy,
			    &m->hold.gang, err, sizeof(err)) != 0) {
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
	m->hold.job_scheduling = json_is_object(obj_path(job, "spec.scheduling.schedulingPolicy.gang"));
	if (!m->hold.job_scheduling)
		log_info("the server does not keep a Job's spec.scheduling", LF_INT("status", resp->status),
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
	if (try_again(m, resp, m->hold.step == 0 ? "admissionregistration.k8s.io/v1" : "scheduling.k8s.io/v1beta1"))
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
	char path[512];
	int rc = 0;
	if (m->hold.step == 0) {
		rc = kube_request(m->kube, "GET", "/apis/admissionregistration.k8s.io/v1", NULL, NULL,
				  on_group_version, m, NULL);
	} else if (m->hold.step == 1 && m->conf.gang_mode != GANG_DISABLED) {
		rc = kube_request(m->kube, "GET", "/apis/scheduling.k8s.io/v1beta1", NULL, NULL,
				  on_group_version, m, NULL);
	} else if (m->hold.step == 2 && m->hold.served_podgroups) {
		/* Suspended and never stored (dryRun=All), so nothing runs and nothing is left. */
		static const char job[] =
			"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"generateName\":"
			"\"muster-gang-probe-\"},\"spec\":{\"suspend\":true,\"scheduling\":{"
			"\"schedulingPolicy\":{\"gang\":{}}},\"template\":{\"spec\":{\"restartPolicy\":"
			"\"Never\",\"containers\":[{\"name\":\"probe\",\"image\":\"probe\"}]}}}}";
		snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs?dryRun=All",
			 m->conf.namespace_name);
		rc = kube_request(m->kube, "POST", path, NULL, job, on_job_probe, m, NULL);
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
				 m->conf.namespace_name, "name", m->conf.webhook_service, "path", path,
				 "port", 443, "caBundle", ca_b64);
	snprintf(url, sizeof(url), "https://%s:%d%s", m->opt.webhook_host, httpd_port(m->webhook_srv),
		 path);
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
			 "kubernetes.io/metadata.name", "operator", "NotIn", "values", "kube-system",
			 m->conf.namespace_name);
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
			      client_config(m, path, ca_b64), "rules", rules, "sideEffects", "None", "failurePolicy",
			      fail_open ? "Ignore" : "Fail", "matchPolicy", "Equivalent", "timeoutSeconds", 10,
			      "namespaceSelector", "matchExpressions", "key",
			      "kubernetes.io/metadata.name", "operator", "NotIn", "values", "kube-system",
			      "kube-public", "kube-node-lease");
	if (w && queued_only > 0)
		json_object_set_new(w, "objectSelector",
				    json_pack("{s:[{s:s, s:s}]}", "matchExpressions", "key",
					      LABEL_QUEUE_NAME, "operator", "Exists"));
	else if (w && queued_only < 0)
		json_object_set_new(w, "namespaceSelector", managed_namespace_selector(m));
	return w;
}

static void install_landed(struct mgr *m)
{
	if (--m->hold.installing == 0 && !m->failed) {
		m->hold.installed = 1;
		log_info("hold installed", LF_STR("hold", m->hold.policy ? "AdmissionPolicy" : "Webhook"),
			 LF_INT("gang_scheduling", m->hold.gang), LF_END);
	}
}

static void on_applied(void *arg, const struct kube_response *resp)
{
	struct mgr *m = arg;
	if (resp->error || resp->status >= 300) {
		if (resp->error == -ECANCELED)
			return; /* shutting down */
		log_error("cannot install the hold", LF_INT("status", resp->status),
			  LF_STR("error", resp->error_text), LF_STR("body", resp->body), LF_END);
		/* Without its hold muster would let queued Jobs start unadmitted. */
		m->failed = 1;
		uv_stop(m->loop);
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
	const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	char *body = name ? json_dumps(obj, JSON_COMPACT) : NULL;
	int rc = -ENOMEM;
	snprintf(path, sizeof(path), "/apis/admissionregistration.k8s.io/v1/%s/%s?fieldManager=muster&force=true",
		 resource, name ? name : "");
	if (body)
		rc = kube_request(m->kube, "PATCH", path, "application/apply-patch+yaml", body, on_applied, m, NULL);
	if (rc == 0)
		m->hold.installing++;
	free(body);
	json_decref(obj);
	return rc;
}

static json_t *configuration(const char *kind, const char *name, json_t *webhooks)
{
	return json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", "admissionregistration.k8s.io/v1",
			 "kind", kind, "metadata", "name", name, "webhooks", webhooks);
}

/* The mutating (CREATE) and validating (CREATE, UPDATE) entries of one kind; all_objects: every
 * object of the managed namespaces, not only queued ones (webhook_entry). With policies
 * holding, the mutating entry is needed only to give the queue "default" (mutate_owner). */
static int add_kind_webhooks(struct mgr *m, json_t *mutating, json_t *validating, const char *group,
			     const char *plural, const char *mutate_path, const char *validate_path,
			     const char *short_name, int all_objects, const char *ca_b64)
{
	int queued_only = all_objects ? -1 : 1, open = m->hold.policy;
	char name[128];
	json_t *create = json_pack("[{s:[s], s:[s], s:[s], s:[s], s:s}]", "apiGroups", group,
				   "apiVersions", "v1", "operations", "CREATE", "resources", plural,
				   "scope", "Namespaced");
	json_t *cu = json_pack("[{s:[s], s:[s], s:[s, s], s:[s], s:s}]", "apiGroups", group,
			       "apiVersions", "v1", "operations", "CREATE", "UPDATE", "resources",
			       plural, "scope", "Namespaced");
	int want_mutating = !m->hold.policy || all_objects;
	snprintf(name, sizeof(name), "m%s.muster.kueue.x-k8s.io", short_name);
	json_t *mw = create && want_mutating ?
			     webhook_entry(m, name, mutate_path, create, queued_only, open, ca_b64) :
			     NULL;
	if (!want_mutating)
		json_decref(create);
	snprintf(name, sizeof(name), "v%s.muster.kueue.x-k8s.io", short_name);
	json_t *vw = cu ? webhook_entry(m, name, validate_path, cu, queued_only, open, ca_b64) : NULL;
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
		char mpath[160], vpath[160], group[64], short_name[64];
		if (!owner_enabled(m, k))
			continue;
		webhook_owner_path(in, 1, mpath, sizeof(mpath));
		webhook_owner_path(in, 0, vpath, sizeof(vpath));
		snprintf(group, sizeof(group), "%.*s", (int)strcspn(in->api_version, "/"), in->api_version);
		snprintf(short_name, sizeof(short_name), "%s", in->plural);
		short_name[strlen(short_name) - 1] = '\0'; /* "jobs" -> "job" */
		rc = add_kind_webhooks(m, mutating, validating, group, in->plural, mpath, vpath,
				       short_name, m->conf.manage_without_queue_name, ca_b64);
	}
	if (rc == 0 && config_framework_enabled(&m->conf, "pod"))
		rc = add_kind_webhooks(m, mutating, validating, "", "pods", WEBHOOK_PATH_MUTATE_POD,
				       WEBHOOK_PATH_VALIDATE_POD, "pod", 0, ca_b64);
	json_t *cq_cu = json_pack("[{s:[s], s:[s], s:[s, s], s:[s], s:s}]", "apiGroups", KUEUE_GROUP,
				  "apiVersions", "v1beta2", "operations", "CREATE", "UPDATE",
				  "resources", "clusterqueues", "scope", "Cluster");
	/* Administrators' objects: refused while muster can't check them, as before. */
	json_t *cq = rc == 0 && cq_cu ? webhook_entry(m, "vclusterqueue.muster.kueue.x-k8s.io",
						      WEBHOOK_PATH_VALIDATE_CQ, cq_cu, 0, 0, ca_b64) :
					NULL;
	if (!cq || json_array_append_new(validating, cq) != 0)
		rc = -ENOMEM;
	free(ca_b64);
	*mutating_out = configuration("MutatingWebhookConfiguration", MUTATING_CONFIG, rc == 0 ? mutating : NULL);
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
			    json_pack("{s:s, s:s}", ANNOTATION_HOLD, m->hold.policy ? "AdmissionPolicy" : "Webhook",
				      ANNOTATION_GANG, m->hold.gang ? "true" : "false"));
	return 0;
}

/* What policies_build takes for this manager; owners points at storage for the kinds. */
static struct policy_inputs policy_inputs(struct mgr *m, const struct integration **owners,
					  json_t *managed)
{
	struct policy_inputs in = { owners, 0, config_framework_enabled(&m->conf, "pod"), m->hold.gang,
				    m->conf.manage_without_queue_name, managed };
	for (enum kind k = K_OWNER_FIRST; k <= K_OWNER_LAST; k++)
		if (owner_enabled(m, k) && owner_integration(k)->holds_by_suspend)
			owners[in.n_owners++] = owner_integration(k);
	return in;
}

int hold_install(struct mgr *m)
{
	const struct integration *owners[K_OWNER_LAST - K_OWNER_FIRST + 1];
	json_t *managed = managed_namespace_selector(m), *mutating = NULL, *validating = NULL;
	struct policy_inputs in = policy_inputs(m, owners, managed);
	json_t *policies = m->hold.policy ? policies_build(&in) : policies_build(NULL);
	json_t *unused = policies_unused(m->hold.policy ? &in : NULL);
	int rc = managed && policies && unused ? build_webhooks(m, &mutating, &validating) : -ENOMEM;
	size_t i;
	json_t *o;

	if (m->hold.installing || m->hold.installed)
		rc = -EALREADY;
	/* The policies first: a hold in place before the webhooks it makes optional fail open. */
	json_array_foreach(policies, i, o)
		if (rc == 0)
			rc = apply(m, policies_resource(json_string_value(json_object_get(o, "kind"))),
				   json_incref(o));
	json_array_foreach(unused, i, o)
	{
		char path[256];
		if (rc != 0 || !m->hold.served_map)
			break; /* a server without the resources has none to delete */
		snprintf(path, sizeof(path), "/apis/admissionregistration.k8s.io/v1/%s/%s",
			 policies_resource(json_string_value(json_object_get(o, "kind"))),
			 json_string_value(json_object_get(o, "name")));
		rc = kube_request(m->kube, "DELETE", path, NULL, NULL, on_deleted, m, NULL);
		if (rc == 0)
			m->hold.installing++;
	}
	if (rc == 0) {
		rc = apply(m, "mutatingwebhookconfigurations", mutating);
		mutating = NULL;
	}
	if (rc == 0) {
		rc = apply(m, "validatingwebhookconfigurations", validating);
		validating = NULL;
	}
	json_decref(mutating);
	json_decref(validating);
	json_decref(policies);
	json_decref(unused);
	json_decref(managed);
	return rc == -EALREADY ? 0 : rc;
}
