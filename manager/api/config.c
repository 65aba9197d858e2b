/* SPDX-License-Identifier: Apache-2.0 */
#include "api/config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "core/labels.h"
#include "api/integrations.h"
#include "core/num.h"
#include "core/quota.h"
#include "util/yamljson.h"

#define CONFIG_MAX_BYTES (1u << 20)
#define NS_PER_SECOND INT64_C(1000000000)

void config_defaults(struct muster_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->wait_for_pods_ready = 1;
	cfg->pods_ready_timeout_ms = 30 * 60 * 1000;
	cfg->recovery_timeout_ms = cfg->pods_ready_timeout_ms;
	cfg->backoff_base_s = 60;
	cfg->backoff_max_s = 3600;
	cfg->placement_mode = PLACEMENT_PREFERRED;
	cfg->node_feasibility = 1;
	cfg->client_qps = 300; /* Kueue v1beta2's clientConnection defaults */
	cfg->client_burst = 500;
	cfg->leader_elect = 1; /* Kueue's default, with client-go's timings */
	snprintf(cfg->lease_name, sizeof(cfg->lease_name), "muster-manager");
	cfg->lease_duration_ms = 15000;
	cfg->renew_deadline_ms = 10000;
	cfg->retry_period_ms = 2000;
	snprintf(cfg->gpu_resource, sizeof(cfg->gpu_resource), "nvidia.com/gpu");
	cfg->metrics_port = 8080;
	cfg->visibility_port = 8082; /* Kueue's visibilityServer.bindPort */
	cfg->ledger_enable = 1;
	cfg->ledger_max_age_ms = (int64_t)30 * 24 * 3600 * 1000;
	cfg->ledger_max_bytes = (int64_t)256 << 20;
	cfg->webhook_port = 9443;
	cfg->health_port = -1;
	snprintf(cfg->webhook_secret, sizeof(cfg->webhook_secret), CONFIG_WEBHOOK_SECRET_DEFAULT);
	/* Kueue's default list, less the kinds muster has no integration for: every integrated
	 * owner kind, and no plain Pods. */
	size_t n;
	const struct integration *const *all = integration_all(&n);
	cfg->frameworks = 0;
	for (size_t i = 0; i < n; i++)
		if (all[i] != &integration_pod)
			cfg->frameworks |= config_framework_bit(all[i]->framework);
}

int config_split_address(const char *addr, char *host, size_t host_size, int *port)
{
	const char *colon = addr ? strrchr(addr, ':') : NULL;
	const char *h = addr;
	size_t hlen = colon ? (size_t)(colon - addr) : 0;
	uint64_t p;
	if (!colon || num_parse_u64(colon + 1, 65535, &p) != 0)
		return -EINVAL;
	if (hlen >= 2 && addr[0] == '[' && addr[hlen - 1] == ']') {
		h++;
		hlen -= 2;
	} else if (memchr(addr, ':', hlen)) {
		return -EINVAL; /* an IPv6 address needs its brackets */
	}
	for (size_t i = 0; i < hlen; i++)
		if (!strchr("0123456789abcdefABCDEF.:", h[i]))
			/* numeric addresses only: the server does not resolve names */
			return -EINVAL;
	if (hlen >= host_size)
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	*port = (int)p;
	return 0;
}

int config_parse_duration(const char *s, int64_t *ms)
{
	/* Go's units only, as a Kueue Configuration's metav1.Duration takes them. */
	return num_parse_duration_ms(s, 0, INT64_MAX, ms) == 0 ? 0 : -EINVAL;
}

/* Rejects keys of obj not in allowed (NULL-terminated), naming the first unknown one. */
static int only_keys(json_t *obj, const char *where, const char *const *allowed, char *err,
		     size_t errlen)
{
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v)
	{
		size_t i;
		for (i = 0; allowed[i] && strcmp(allowed[i], key); i++)
			;
		if (!allowed[i]) {
			snprintf(err, errlen, "%s%s%s: unknown or unsupported field", where,
				 *where ? "." : "", key);
			return -EINVAL;
		}
	}
	return 0;
}

static int duration_field(json_t *obj, const char *name, const char *where, int64_t *out, char *err,
			  size_t errlen)
{
	json_t *v = json_object_get(obj, name);
	if (!v)
		return 0;
	if (!json_is_string(v) || config_parse_duration(json_string_value(v), out) != 0) {
		snprintf(err, errlen,
			 "%s.%s: invalid duration (want e.g. \"90s\", \"5m\", \"1h30m\")", where,
			 name);
		return -EINVAL;
	}
	return 0;
}

static int int_field(json_t *obj, const char *name, const char *where, int64_t min, int64_t max,
		     int64_t *out, int *present, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, name);
	if (present)
		*present = v != NULL;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
		snprintf(err, errlen, "%s.%s: must be an integer from %lld to %lld", where, name,
			 (long long)min, (long long)max);
		return -EINVAL;
	}
	*out = json_integer_value(v);
	return 0;
}

/* What the configuration takes for a resource name (placement.gpuResource, the keys of
 * admissionFairSharing.resourceWeights): a non-empty string that fits CONFIG_NAME_MAX. */
static int is_resource_name(const char *s)
{
	return s && *s && strlen(s) < CONFIG_NAME_MAX;
}

static int parse_placement(json_t *p, struct muster_config *cfg, char *err, size_t errlen)
{
	static const char *const keys[] = { "mode", "nodeFeasibility", "gpuResource", NULL };
	int rc;
	if (!p)
		return 0;
	if (!json_is_object(p)) {
		snprintf(err, errlen, "placement: must be a mapping");
		return -EINVAL;
	}
	if ((rc = only_keys(p, "placement", keys, err, errlen)) != 0)
		return rc;
	json_t *mode = json_object_get(p, "mode");
	if (mode) {
		const char *m = json_string_value(mode);
		if (m && !strcmp(m, "Preferred"))
			cfg->placement_mode = PLACEMENT_PREFERRED;
		else if (m && !strcmp(m, "Exact"))
			cfg->placement_mode = PLACEMENT_EXACT;
		else if (m && !strcmp(m, "None"))
			cfg->placement_mode = PLACEMENT_NONE;
		else {
			snprintf(err, errlen, "placement.mode: must be Preferred, Exact or None");
			return -EINVAL;
		}
	}
	json_t *feasible = json_object_get(p, "nodeFeasibility");
	if (feasible) {
		if (!json_is_boolean(feasible)) {
			snprintf(err, errlen, "placement.nodeFeasibility: must be true or false");
			return -EINVAL;
		}
		cfg->node_feasibility = json_is_true(feasible);
	}
	json_t *gpu = json_object_get(p, "gpuResource");
	if (gpu) {
		const char *g = json_string_value(gpu);
		if (!is_resource_name(g)) {
			snprintf(err, errlen, "placement.gpuResource: must be a resource name");
			return -EINVAL;
		}
		snprintf(cfg->gpu_resource, sizeof(cfg->gpu_resource), "%s", g);
	}
	return 0;
}

/* A muster section whose one field is mode: NAME: {mode: one of names}; *out is the index of
 * the name given (left alone when the section or its mode is absent). */
static int parse_mode_section(json_t *doc, const char *section, const char *const *names, int *out,
			      char *err, size_t errlen)
{
	static const char *const keys[] = { "mode", NULL };
	json_t *s = json_object_get(doc, section);
	int rc;
	if (!s)
		return 0;
	if (!json_is_object(s)) {
		snprintf(err, errlen, "%s: must be a mapping", section);
		return -EINVAL;
	}
	if ((rc = only_keys(s, section, keys, err, errlen)) != 0)
		return rc;
	json_t *mode = json_object_get(s, "mode");
	if (!mode)
		return 0;
	for (int i = 0; names[i]; i++)
		if (json_is_string(mode) && !strcmp(json_string_value(mode), names[i])) {
			*out = i;
			return 0;
		}
	snprintf(err, errlen, "%s.mode: must be %s, %s or %s", section, names[0], names[1],
		 names[2]);
	return -EINVAL;
}

static int parse_hold_and_gang(json_t *doc, struct muster_config *cfg, char *err, size_t errlen)
{
	/* In enum order. */
	static const char *const hold[] = { "Auto", "AdmissionPolicy", "Webhook", NULL };
	static const char *const gang[] = { "Auto", "Enabled", "Disabled", NULL };
	int h = (int)cfg->hold_mode, g = (int)cfg->gang_mode, rc;
	if ((rc = parse_mode_section(doc, "admissionHold", hold, &h, err, errlen)) != 0 ||
	    (rc = parse_mode_section(doc, "gangScheduling", gang, &g, err, errlen)) != 0)
		return rc;
	cfg->hold_mode = (enum hold_mode)h;
	cfg->gang_mode = (enum gang_mode)g;
	return 0;
}

/* clientConnection: {qps, burst}, as Kueue's; kubeconfig stays a command-line flag. */
static int parse_client_connection(json_t *c, struct muster_config *cfg, char *err, size_t errlen)
{
	static const char *const keys[] = { "qps", "burst", NULL };
	int rc;
	if (!c)
		return 0;
	if (!json_is_object(c)) {
		snprintf(err, errlen, "clientConnection: must be a mapping");
		return -EINVAL;
	}
	if ((rc = only_keys(c, "clientConnection", keys, err, errlen)) != 0)
		return rc;
	json_t *qps = json_object_get(c, "qps"), *burst = json_object_get(c, "burst");
	if (qps &&
	    (!json_is_number(qps) || json_number_value(qps) <= 0 || json_number_value(qps) > 1e6)) {
		snprintf(err, errlen,
			 "clientConnection.qps: must be a number above 0 and at most 1000000");
		return -EINVAL;
	}
	if (burst && (!json_is_integer(burst) || json_integer_value(burst) < 1 ||
		      json_integer_value(burst) > 1000000)) {
		snprintf(err, errlen,
			 "clientConnection.burst: must be an integer from 1 to 1000000");
		return -EINVAL;
	}
	if (qps)
		cfg->client_qps = json_number_value(qps);
	if (burst)
		cfg->client_burst = (int)json_integer_value(burst);
	return 0;
}

/* A DNS-1123 subdomain, as a Lease's name must be (a namespace is a label, checked by the
 * apiserver when the Lease is written). */
static int name_field(json_t *obj, const char *name, const char *where, char *out, size_t size,
		      char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, name);
	const char *s = json_string_value(v);
	if (!v)
		return 0;
	if (!s || strlen(s) >= size || !eobj_is_dns_subdomain(s, strlen(s))) {
		snprintf(err, errlen, "%s.%s: must be a lowercase DNS name", where, name);
		return -EINVAL;
	}
	snprintf(out, size, "%s", s);
	return 0;
}

/* leaderElection, as Kueue's (component-base's LeaderElectionConfiguration). */
static int parse_leader_election(json_t *l, struct muster_config *cfg, char *err, size_t errlen)
{
	static const char *const keys[] = { "leaderElect",   "resourceLock",
					    "resourceName",  "resourceNamespace",
					    "leaseDuration", "renewDeadline",
					    "retryPeriod",   NULL };
	const char *where = "leaderElection";
	int rc;
	if (!l)
		return 0;
	if (!json_is_object(l)) {
		snprintf(err, errlen, "leaderElection: must be a mapping");
		return -EINVAL;
	}
	if ((rc = only_keys(l, where, keys, err, errlen)) != 0)
		return rc;
	json_t *elect = json_object_get(l, "leaderElect");
	if (elect && !json_is_boolean(elect)) {
		snprintf(err, errlen, "leaderElection.leaderElect: must be true or false");
		return -EINVAL;
	}
	if (elect)
		cfg->leader_elect = json_is_true(elect);
	json_t *lock = json_object_get(l, "resourceLock");
	if (lock && (!json_is_string(lock) || strcmp(json_string_value(lock), "leases") != 0)) {
		snprintf(err, errlen, "leaderElection.resourceLock: only \"leases\" is supported");
		return -EINVAL;
	}
	if ((rc = name_field(l, "resourceName", where, cfg->lease_name, sizeof(cfg->lease_name),
			     err, errlen)) != 0 ||
	    (rc = name_field(l, "resourceNamespace", where, cfg->lease_namespace,
			     sizeof(cfg->lease_namespace), err, errlen)) != 0 ||
	    (rc = duration_field(l, "leaseDuration", where, &cfg->lease_duration_ms, err,
				 errlen)) != 0 ||
	    (rc = duration_field(l, "renewDeadline", where, &cfg->renew_deadline_ms, err,
				 errlen)) != 0 ||
	    (rc = duration_field(l, "retryPeriod", where, &cfg->retry_period_ms, err, errlen)) != 0)
		return rc;
	/* client-go's rules: the lease outlives the deadline, which allows a retry or so. The
	 * Lease holds whole seconds. */
	if (cfg->lease_duration_ms < 1000 || cfg->lease_duration_ms % 1000 != 0) {
		snprintf(err, errlen,
			 "leaderElection.leaseDuration: must be whole seconds, at least 1s");
		return -EINVAL;
	}
	if (cfg->renew_deadline_ms >= cfg->lease_duration_ms) {
		snprintf(err, errlen,
			 "leaderElection.renewDeadline: must be shorter than leaseDuration");
		return -EINVAL;
	}
	if (cfg->retry_period_ms < 100 ||
	    cfg->renew_deadline_ms * 10 <= cfg->retry_period_ms * 12) {
		snprintf(err, errlen,
			 "leaderElection.retryPeriod: must be at least 100ms, and renewDeadline "
			 "more than 1.2 times it");
		return -EINVAL;
	}
	return 0;
}

/* metrics: {bindAddress, enableClusterQueueResources}, as Kueue's. */
static int parse_metrics(json_t *c, struct muster_config *cfg, char *err, size_t errlen)
{
	static const char *const keys[] = { "bindAddress", "enableClusterQueueResources", NULL };
	int rc;
	if (!c)
		return 0;
	if (!json_is_object(c)) {
		snprintf(err, errlen, "metrics: must be a mapping");
		return -EINVAL;
	}
	if ((rc = only_keys(c, "metrics", keys, err, errlen)) != 0)
		return rc;
	json_t *addr = json_object_get(c, "bindAddress");
	json_t *res = json_object_get(c, "enableClusterQueueResources");
	if (addr && (!json_is_string(addr) ||
		     config_split_address(json_string_value(addr), cfg->metrics_host,
					  sizeof(cfg->metrics_host), &cfg->metrics_port) != 0)) {
		snprintf(err, errlen,
			 "metrics.bindAddress: want host:port with a numeric host or none "
			 "(\":8080\", \"127.0.0.1:8080\")");
		return -EINVAL;
	}
	if (res && !json_is_boolean(res)) {
		snprintf(err, errlen, "metrics.enableClusterQueueResources: must be true or false");
		return -EINVAL;
	}
	if (res)
		cfg->metrics_cq_resources = json_is_true(res);
	return 0;
}

/* A string field of obj into out (size outlen): 0 when absent or copied, else -EINVAL. Empty
 * strings are refused unless allow_empty. */
static int string_field(json_t *obj, const char *name, const char *where, int allow_empty,
			char *out, size_t outlen, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, name);
	const char *s = json_string_value(v);
	if (!v)
		return 0;
	if (!s || (!allow_empty && !*s) || strlen(s) >= outlen) {
		snprintf(err, errlen, "%s%s%s: must be a%s string of at most %zu characters", where,
			 *where ? "." : "", name, allow_empty ? "" : " non-empty", outlen - 1);
		return -EINVAL;
	}
	snprintf(out, outlen, "%s", s);
	return 0;
}

/* A section that must be a mapping with only the allowed keys; absent is fine (*out NULL). */
static int section(json_t *doc, const char *name, const char *const *allowed, json_t **out,
		   char *err, size_t errlen)
{
	*out = json_object_get(doc, name);
	if (!*out)
		return 0;
	if (!json_is_object(*out)) {
		snprintf(err, errlen, "%s: must be a mapping", name);
		return -EINVAL;
	}
	return only_keys(*out, name, allowed, err, errlen);
}

/* namespace, webhook, health and internalCertManagement: how the manager is reached. */
static int parse_serving(json_t *doc, struct muster_config *cfg, char *err, size_t errlen)
{
	static const char *const webhook_keys[] = { "port", "host", NULL };
	static const char *const health_keys[] = { "healthProbeBindAddress", NULL };
	static const char *const icm_keys[] = { "enable", "webhookServiceName", "webhookSecretName",
						NULL };
	json_t *webhook, *health, *icm;
	int64_t port = cfg->webhook_port;
	int rc;
	if ((rc = string_field(doc, "namespace", "", 0, cfg->namespace_name,
			       sizeof(cfg->namespace_name), err, errlen)) != 0 ||
	    (rc = section(doc, "webhook", webhook_keys, &webhook, err, errlen)) != 0 ||
	    (rc = section(doc, "health", health_keys, &health, err, errlen)) != 0 ||
	    (rc = section(doc, "internalCertManagement", icm_keys, &icm, err, errlen)) != 0 ||
	    (rc = int_field(webhook, "port", "webhook", 1, 65535, &port, NULL, err, errlen)) != 0 ||
	    (rc = string_field(webhook, "host", "webhook", 1, cfg->webhook_host,
			       sizeof(cfg->webhook_host), err, errlen)) != 0 ||
	    (rc = string_field(icm, "webhookServiceName", "internalCertManagement", 0,
			       cfg->webhook_service, sizeof(cfg->webhook_service), err, errlen)) !=
		    0 ||
	    (rc = string_field(icm, "webhookSecretName", "internalCertManagement", 0,
			       cfg->webhook_secret, sizeof(cfg->webhook_secret), err, errlen)) != 0)
		return rc;
	cfg->webhook_port = (int)port;
	if (json_object_get(webhook, "host"))
		cfg->has_webhook_host = 1;
	json_t *enable = json_object_get(icm, "enable");
	if (enable && !json_is_true(enable)) {
		snprintf(err, errlen,
			 "internalCertManagement.enable: muster always manages its webhook "
			 "certificates; remove the field or set it to true");
		return -EINVAL;
	}
	json_t *bind = json_object_get(health, "healthProbeBindAddress");
	if (bind && (!json_is_string(bind) ||
		     config_split_address(json_string_value(bind), cfg->health_host,
					  sizeof(cfg->health_host), &cfg->health_port) != 0)) {
		snprintf(err, errlen,
			 "health.healthProbeBindAddress: want \"host:port\" or \":port\"");
		return -EINVAL;
	}
	return 0;
}

/* visibilityServer: {bindAddress, bindPort}, as Kueue's (an address, and a port apart). */
static int parse_visibility(json_t *doc, struct muster_config *cfg, char *err, size_t errlen)
{
	static const char *const keys[] = { "bindAddress", "bindPort", NULL };
	json_t *v;
	int64_t port = cfg->visibility_port;
	int rc;
	if ((rc = section(doc, "visibilityServer", keys, &v, err, errlen)) != 0 ||
	    (rc = string_field(v, "bindAddress", "visibilityServer", 1, cfg->visibility_host,
			       sizeof(cfg->visibility_host), err, errlen)) != 0 ||
	    (rc = int_field(v, "bindPort", "visibilityServer", 0, 65535, &port, NULL, err,
			    errlen)) != 0)
		return rc;
	for (const char *c = cfg->visibility_host; *c; c++)
		if (!strchr("0123456789abcdefABCDEF.:", *c)) {
			snprintf(err, errlen,
				 "visibilityServer.bindAddress: want a numeric address");
			return -EINVAL;
		}
	cfg->visibility_port = (int)port;
	return 0;
}

/* ledger: {enable, path, maxAge, maxSize}: muster's decision ledger (ledger/ledger.h). */
static int parse_ledger(json_t *doc, struct muster_config *cfg, char *err, size_t errlen)
{
	static const char *const keys[] = { "enable", "path", "maxAge", "maxSize", NULL };
	json_t *l;
	int rc;
	if ((rc = section(doc, "ledger", keys, &l, err, errlen)) != 0 ||
	    (rc = string_field(l, "path", "ledger", 1, cfg->ledger_path, sizeof(cfg->ledger_path),
			       err, errlen)) != 0 ||
	    (rc = duration_field(l, "maxAge", "ledger", &cfg->ledger_max_age_ms, err, errlen)) != 0)
		return rc;
	json_t *enable = json_object_get(l, "enable"), *size = json_object_get(l, "maxSize");
	if (enable && !json_is_boolean(enable)) {
		snprintf(err, errlen, "ledger.enable: must be true or false");
		return -EINVAL;
	}
	if (enable)
		cfg->ledger_enable = json_is_true(enable);
	int64_t milli;
	if (size && (quantity_from_json(size, &milli) != 0 || milli < (int64_t)1000 << 20)) {
		snprintf(err, errlen,
			 "ledger.maxSize: want a size of at least 1Mi (e.g. \"256Mi\")");
		return -EINVAL;
	}
	if (size)
		cfg->ledger_max_bytes = milli / 1000;
	if (cfg->ledger_max_age_ms <= 0) {
		snprintf(err, errlen, "ledger.maxAge: must be positive");
		return -EINVAL;
	}
	return 0;
}

/* fairSharing: {preemptionStrategies}, as Kueue's. The section's presence turns it on. */
static int parse_fair_sharing(json_t *doc, struct muster_config *cfg, char *err, size_t errlen)
{
	static const char *const keys[] = { "preemptionStrategies", NULL };
	static const char *const names[] = { "LessThanOrEqualToFinalShare",
					     "LessThanInitialShare" };
	static const enum eng_fs_strategy values[] = { ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
						       ENG_FS_LESS_THAN_INITIAL_SHARE };
	const char *where = "fairSharing.preemptionStrategies";
	struct eng_fair_sharing fs = { .enabled = 1 };
	json_t *section_obj, *list, *v;
	size_t i;
	int rc;
	if ((rc = section(doc, "fairSharing", keys, &section_obj, err, errlen)) != 0 ||
	    !section_obj)
		return rc;
	list = json_object_get(section_obj, "preemptionStrategies");
	if (list && !json_is_array(list)) {
		snprintf(err, errlen, "%s: must be a list", where);
		return -EINVAL;
	}
	json_array_foreach(list, i, v)
	{
		const char *name = json_string_value(v);
		size_t k;
		for (k = 0; name && k < 2 && strcmp(name, names[k]); k++)
			;
		if (!name || k == 2) {
			snprintf(err, errlen, "%s[%zu]: \"%.64s\" is not a strategy (%s, %s)",
				 where, i, name ? name : "", names[0], names[1]);
			return -EINVAL;
		}
		if (i < 2)
			fs.strategies[i] = values[k];
	}
	fs.n_strategies = json_array_size(list);
	/* Kueue's only valid lists: [LTEFinal], [LTInitial] and [LTEFinal, LTInitial]. */
	if (fs.n_strategies > 2 || (fs.n_strategies == 2 &&
				    (fs.strategies[0] != ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE ||
				     fs.strategies[1] != ENG_FS_LESS_THAN_INITIAL_SHARE))) {
		snprintf(err, errlen, "%s: must be [%s], [%s] or [%s, %s]", where, names[0],
			 names[1], names[0], names[1]);
		return -EINVAL;
	}
	if (fs.n_strategies == 0) {
		fs.n_strategies =
			2; /* Kueue's default, written out so it reads as what is in force */
		fs.strategies[0] = ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
		fs.strategies[1] = ENG_FS_LESS_THAN_INITIAL_SHARE;
	}
	cfg->fair_sharing = fs;
	return 0;
}

/* A duration field in ns, as the engine counts time. */
static int duration_ns_field(json_t *obj, const char *name, const char *where, int64_t *ns,
			     char *err, size_t errlen)
{
	int64_t ms = *ns / 1000000;
	int rc = duration_field(obj, name, where, &ms, err, errlen);
	if (rc != 0)
		return rc;
	if (ms > INT64_MAX / 1000000) {
		snprintf(err, errlen, "%s.%s: too long (at most about 106000 days)", where, name);
		return -EINVAL;
	}
	*ns = ms * 1000000;
	return 0;
}

/* resourceWeights: resource -> weight >= 0, into one block that cfg owns. */
static int parse_resource_weights(json_t *m, struct eng_afs_weight **out, size_t *n_out, char *err,
				  size_t errlen)
{
	const char *where = "admissionFairSharing.resourceWeights";
	const char *name;
	json_t *v;
	size_t n = 0, bytes = 0;
	*out = NULL;
	*n_out = 0;
	if (!m)
		return 0;
	if (!json_is_object(m)) {
		snprintf(err, errlen, "%s: must be a mapping of resource names to weights", where);
		return -EINVAL;
	}
	if (json_object_size(m) > QUOTA_MAX_RESOURCES) {
		snprintf(err, errlen, "%s: at most %d resources", where, QUOTA_MAX_RESOURCES);
		return -EINVAL;
	}
	json_object_foreach(m, name, v)
	{
		if (!is_resource_name(name)) {
			snprintf(err, errlen, "%s: \"%.64s\" is not a resource name", where, name);
			return -EINVAL;
		}
		/* jansson holds no infinities or NaNs: a number is finite. */
		if (!json_is_number(v) || json_number_value(v) < 0) {
			snprintf(err, errlen, "%s.%s: must be a number of at least 0", where, name);
			return -EINVAL;
		}
		bytes += strlen(name) + 1;
	}
	n = json_object_size(m);
	if (n == 0)
		return 0;
	struct eng_afs_weight *w = malloc(n * sizeof(*w) + bytes);
	if (!w)
		return -ENOMEM;
	char *names = (char *)(w + n);
	size_t i = 0;
	json_object_foreach(m, name, v)
	{
		size_t len = strlen(name) + 1;
		memcpy(names, name, len);
		w[i].resource = names;
		w[i].weight = json_number_value(v);
		names += len;
		i++;
	}
	*out = w;
	*n_out = n;
	return 0;
}

/* admissionFairSharing: {usageHalfLifeTime, usageSamplingInterval, resourceWeights}, as
 * Kueue's. The section's presence turns it on. */
static int parse_admission_fair_sharing(json_t *doc, struct muster_config *cfg, char *err,
					size_t errlen)
{
	static const char *const keys[] = { "usageHalfLifeTime", "usageSamplingInterval",
					    "resourceWeights", NULL };
	const char *where = "admissionFairSharing";
	struct eng_admission_fair_sharing afs = { .enabled = 1 };
	struct eng_afs_weight *weights;
	json_t *a;
	int rc;
	/* Kueue's defaults: no half-life (its zero value) and a 5-minute sampling interval. */
	afs.usage_sampling_interval = (int64_t)5 * 60 * NS_PER_SECOND;
	if ((rc = section(doc, where, keys, &a, err, errlen)) != 0 || !a)
		return rc;
	if ((rc = duration_ns_field(a, "usageHalfLifeTime", where, &afs.usage_half_life, err,
				    errlen)) != 0 ||
	    (rc = duration_ns_field(a, "usageSamplingInterval", where, &afs.usage_sampling_interval,
				    err, errlen)) != 0)
		return rc;
	if (afs.usage_sampling_interval <= 0) {
		/* Kueue turns 0 into its default; an operator who wrote 0 meant something else. */
		snprintf(err, errlen,
			 "%s.usageSamplingInterval: must be greater than 0 (leave it out "
			 "for the default, 5m)",
			 where);
		return -EINVAL;
	}
	if ((rc = parse_resource_weights(json_object_get(a, "resourceWeights"), &weights,
					 &afs.n_weights, err, errlen)) != 0) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		return rc;
	}
	afs.weights = weights;
	free(cfg->afs_weights);
	cfg->afs_weights = weights;
	cfg->admission_fair_sharing = afs;
	return 0;
}

unsigned config_framework_bit(const char *framework)
{
	size_t n;
	const struct integration *const *all = integration_all(&n);
	for (size_t i = 0; framework && i < n && i < 32; i++)
		if (!strcmp(all[i]->framework, framework))
			return 1u << i;
	return 0;
}

int config_framework_enabled(const struct muster_config *cfg, const char *framework)
{
	return (cfg->frameworks & config_framework_bit(framework)) != 0;
}

/* A label of a JSON labels object (NULL: none) for labels_selector_matches. */
static const char *json_label(const void *labels, const char *key)
{
	return json_string_value(json_object_get(labels, key));
}

int config_namespace_managed(const struct muster_config *cfg, const char *name, json_t *labels)
{
	if (cfg->managed_selector)
		return labels_selector_matches(cfg->managed_selector, json_label, labels);
	const char *own = cfg->namespace_name[0] ? cfg->namespace_name : "muster-system";
	return name && strcmp(name, "kube-system") != 0 && strcmp(name, own) != 0;
}

static void managed_selector_free(struct muster_config *cfg)
{
	if (cfg->managed_arena)
		eobj_arena_release(cfg->managed_arena);
	free(cfg->managed_arena);
	cfg->managed_arena = NULL;
	cfg->managed_selector = NULL;
}

void config_release(struct muster_config *cfg)
{
	json_decref(cfg->managed_namespaces);
	cfg->managed_namespaces = NULL;
	managed_selector_free(cfg);
	free(cfg->afs_weights);
	cfg->afs_weights = NULL;
	cfg->admission_fair_sharing.weights = NULL;
	cfg->admission_fair_sharing.n_weights = 0;
}

/* integrations: {frameworks, externalFrameworks, labelKeysToCopy}. A kind listed that muster
 * has no integration for is an error, not a warning: its objects would run unqueued, past
 * every quota, while the configuration says they are managed. */
static int parse_integrations(json_t *c, struct muster_config *cfg, char *err, size_t errlen)
{
	static const char *const keys[] = { "frameworks", "externalFrameworks", "labelKeysToCopy",
					    NULL };
	int rc;
	if (!c)
		return 0;
	if (!json_is_object(c)) {
		snprintf(err, errlen, "integrations: must be a mapping");
		return -EINVAL;
	}
	if ((rc = only_keys(c, "integrations", keys, err, errlen)) != 0)
		return rc;
	static const char *const unsupported[] = { "externalFrameworks", "labelKeysToCopy" };
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_object_get(c, unsupported[i]);
		if (v && !(json_is_array(v) && json_array_size(v) == 0)) {
			snprintf(err, errlen,
				 "integrations.%s: not implemented; remove it or leave it empty",
				 unsupported[i]);
			return -EINVAL;
		}
	}
	json_t *list = json_object_get(c, "frameworks"), *v;
	size_t i;
	if (!list)
		return 0;
	if (!json_is_array(list)) {
		snprintf(err, errlen, "integrations.frameworks: must be a list");
		return -EINVAL;
	}
	cfg->frameworks = 0;
	json_array_foreach(list, i, v)
	{
		const char *name = json_string_value(v);
		unsigned bit = config_framework_bit(name);
		if (!bit) {
			size_t n;
			const struct integration *const *all = integration_all(&n);
			char known[256] = "";
			for (size_t k = 0, len = 0; k < n && len < sizeof(known); k++)
				len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
							k ? ", " : "", all[k]->framework);
			snprintf(err, errlen,
				 "integrations.frameworks[%zu]: \"%.64s\" is not a framework "
				 "muster manages "
				 "(%s); its objects would run unqueued, so remove it",
				 i, name ? name : "", known);
			return -EINVAL;
		}
		cfg->frameworks |= bit;
	}
	return 0;
}

/* manageJobsWithoutQueueName and managedJobsNamespaceSelector, as Kueue's. */
static int parse_managed_jobs(json_t *doc, struct muster_config *cfg, char *err, size_t errlen)
{
	json_t *without = json_object_get(doc, "manageJobsWithoutQueueName");
	json_t *sel = json_object_get(doc, "managedJobsNamespaceSelector");
	static const char *const sel_keys[] = { "matchLabels", "matchExpressions", NULL };
	int rc;
	if (without && !json_is_boolean(without)) {
		snprintf(err, errlen, "manageJobsWithoutQueueName: must be true or false");
		return -EINVAL;
	}
	cfg->manage_without_queue_name = json_is_true(without);
	if (!sel)
		return 0;
	if (!json_is_object(sel)) {
		snprintf(err, errlen, "managedJobsNamespaceSelector: must be a mapping");
		return -EINVAL;
	}
	if ((rc = only_keys(sel, "managedJobsNamespaceSelector", sel_keys, err, errlen)) != 0)
		return rc;
	struct eobj_arena *arena = calloc(1, sizeof(*arena));
	const struct label_selector *decoded = NULL;
	json_t *copy = json_deep_copy(sel);
	if (!arena || !copy) {
		rc = eobj_nomem(err, errlen);
		goto fail;
	}
	if ((rc = eobj_selector_decode(arena, sel, "managedJobsNamespaceSelector", &decoded, err,
				       errlen)) != 0)
		goto fail;
	json_decref(cfg->managed_namespaces);
	managed_selector_free(cfg);
	cfg->managed_namespaces = copy;
	cfg->managed_arena = arena;
	cfg->managed_selector = decoded;
	return 0;
fail:
	json_decref(copy);
	if (arena)
		eobj_arena_release(arena);
	free(arena);
	return rc;
}


static int parse_doc(json_t *doc, struct muster_config *cfg, char *err, size_t errlen)
{
	static const char *const top[] = { "apiVersion",
					   "kind",
					   "waitForPodsReady",
					   "placement",
					   "clientConnection",
					   "leaderElection",
					   "metrics",
					   "namespace",
					   "webhook",
					   "health",
					   "internalCertManagement",
					   "integrations",
					   "manageJobsWithoutQueueName",
					   "managedJobsNamespaceSelector",
					   "visibilityServer",
					   "ledger",
					   "fairSharing",
					   "admissionFairSharing",
					   "admissionHold",
					   "gangScheduling",
					   NULL };
	static const char *const wfpr[] = {
		"enable", "timeout", "recoveryTimeout", "blockAdmission", "requeuingStrategy", NULL
	};
	static const char *const rs[] = { "timestamp", "backoffBaseSeconds", "backoffMaxSeconds",
					  "backoffLimitCount", NULL };
	int rc;

	if (!json_is_object(doc)) {
		snprintf(err, errlen, "the configuration must be a mapping");
		return -EINVAL;
	}
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	const char *api = json_string_value(json_object_get(doc, "apiVersion"));
	if ((kind && strcmp(kind, "Configuration") != 0) ||
	    (api && strcmp(api, CONFIG_API_VERSION) != 0)) {
		snprintf(err, errlen, "want kind Configuration, apiVersion " CONFIG_API_VERSION);
		return -EINVAL;
	}
	if ((rc = only_keys(doc, "", top, err, errlen)) != 0)
		return rc;
	if ((rc = parse_placement(json_object_get(doc, "placement"), cfg, err, errlen)) != 0 ||
	    (rc = parse_client_connection(json_object_get(doc, "clientConnection"), cfg, err,
					  errlen)) != 0 ||
	    (rc = parse_leader_election(json_object_get(doc, "leaderElection"), cfg, err,
					errlen)) != 0 ||
	    (rc = parse_metrics(json_object_get(doc, "metrics"), cfg, err, errlen)) != 0 ||
	    (rc = parse_serving(doc, cfg, err, errlen)) != 0 ||
	    (rc = parse_integrations(json_object_get(doc, "integrations"), cfg, err, errlen)) !=
		    0 ||
	    (rc = parse_managed_jobs(doc, cfg, err, errlen)) != 0 ||
	    (rc = parse_visibility(doc, cfg, err, errlen)) != 0 ||
	    (rc = parse_ledger(doc, cfg, err, errlen)) != 0 ||
	    (rc = parse_fair_sharing(doc, cfg, err, errlen)) != 0 ||
	    (rc = parse_admission_fair_sharing(doc, cfg, err, errlen)) != 0 ||
	    (rc = parse_hold_and_gang(doc, cfg, err, errlen)) != 0)
		return rc;
	json_t *w = json_object_get(doc, "waitForPodsReady");
	if (!w)
		return 0;
	if (!json_is_object(w) || (rc = only_keys(w, "waitForPodsReady", wfpr, err, errlen)) != 0) {
		if (!json_is_object(w))
			snprintf(err, errlen, "waitForPodsReady: must be a mapping");
		return -EINVAL;
	}
	json_t *enable = json_object_get(w, "enable");
	if (enable && !json_is_boolean(enable)) {
		snprintf(err, errlen, "waitForPodsReady.enable: must be true or false");
		return -EINVAL;
	}
	if (enable)
		cfg->wait_for_pods_ready = json_is_true(enable);
	json_t *block = json_object_get(w, "blockAdmission");
	if (block && !json_is_false(block) &&
	    !(json_is_string(block) && !strcmp(json_string_value(block), "Disabled"))) {
		snprintf(err, errlen,
			 "waitForPodsReady.blockAdmission: not implemented yet; remove it or set "
			 "it to false");
		return -EINVAL;
	}
	int64_t timeout = cfg->pods_ready_timeout_ms;
	int explicit_recovery = json_object_get(w, "recoveryTimeout") != NULL;
	if ((rc = duration_field(w, "timeout", "waitForPodsReady", &timeout, err, errlen)) != 0 ||
	    (rc = duration_field(w, "recoveryTimeout", "waitForPodsReady",
				 &cfg->recovery_timeout_ms, err, errlen)) != 0)
		return rc;
	if (timeout <= 0) {
		snprintf(err, errlen, "waitForPodsReady.timeout: must be positive");
		return -EINVAL;
	}
	cfg->pods_ready_timeout_ms = timeout;
	if (!explicit_recovery)
		cfg->recovery_timeout_ms = timeout;
	json_t *r = json_object_get(w, "requeuingStrategy");
	if (!r)
		return 0;
	if (!json_is_object(r) ||
	    (rc = only_keys(r, "waitForPodsReady.requeuingStrategy", rs, err, errlen)) != 0) {
		if (!json_is_object(r))
			snprintf(err, errlen,
				 "waitForPodsReady.requeuingStrategy: must be a mapping");
		return -EINVAL;
	}
	const char *ts = json_string_value(json_object_get(r, "timestamp"));
	if (json_object_get(r, "timestamp") &&
	    (!ts || (strcmp(ts, "Eviction") && strcmp(ts, "Creation")))) {
		snprintf(err, errlen,
			 "waitForPodsReady.requeuingStrategy.timestamp: must be Eviction or "
			 "Creation");
		return -EINVAL;
	}
	if (ts)
		cfg->requeue_at_creation = !strcmp(ts, "Creation");
	int64_t limit = 0;
	const char *where = "waitForPodsReady.requeuingStrategy";
	if ((rc = int_field(r, "backoffBaseSeconds", where, 1, 86400, &cfg->backoff_base_s, NULL,
			    err, errlen)) != 0 ||
	    (rc = int_field(r, "backoffMaxSeconds", where, 1, 7 * 86400, &cfg->backoff_max_s, NULL,
			    err, errlen)) != 0 ||
	    (rc = int_field(r, "backoffLimitCount", where, 0, INT32_MAX, &limit,
			    &cfg->has_backoff_limit, err, errlen)) != 0)
		return rc;
	cfg->backoff_limit_count = (int32_t)limit;
	return 0;
}

int config_parse(const char *data, size_t len, struct muster_config *cfg, char *err, size_t errlen)
{
	struct yamljson_error yerr;
	json_t *docs = NULL;
	int rc = yamljson_load(data, len, &docs, &yerr);
	if (rc != 0) {
		snprintf(err, errlen, "line %d: %s", yerr.line, yerr.text);
		return -EINVAL;
	}
	if (json_array_size(docs) > 1) {
		snprintf(err, errlen, "expected one document, found %zu", json_array_size(docs));
		rc = -EINVAL;
		config_release(cfg);
	} else if (json_array_size(docs) == 1) {
		rc = config_parse_json(json_array_get(docs, 0), cfg, err, errlen);
	}
	json_decref(docs);
	return rc;
}

int config_parse_json(json_t *doc, struct muster_config *cfg, char *err, size_t errlen)
{
	int rc = parse_doc(doc, cfg, err, errlen);
	if (rc != 0)
		config_release(cfg);
	return rc;
}

int config_load(const char *path, struct muster_config *cfg, char *err, size_t errlen)
{
	char inner[300];
	char *data = NULL;
	size_t len = 0;
	int rc = 0;
	FILE *f = fopen(path, "rb");

	config_defaults(cfg);
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	data = malloc(CONFIG_MAX_BYTES + 1);
	if (data)
		len = fread(data, 1, CONFIG_MAX_BYTES + 1, f);
	fclose(f);
	if (!data) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (len > CONFIG_MAX_BYTES) {
		snprintf(err, errlen, "%s: larger than %u bytes", path, CONFIG_MAX_BYTES);
		rc = -EINVAL;
	} else {
		rc = config_parse(data, len, cfg, inner, sizeof(inner));
		if (rc != 0)
			snprintf(err, errlen, "%s: %s", path, inner);
	}
	free(data);
	return rc;
}
