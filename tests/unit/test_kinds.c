/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kind table (ctrl/kinds.c) is consistent: every enum kind has a row with a well-formed
 * name, apiVersion, resource and paths; every integrated owner is an owner kind and back
 * (owner_kind_for); and config/rbac/role.yaml grants what the manager does with each watched
 * kind, so a kind added to the table without its RBAC fails here, not on a cluster.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/integrations.h"
#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/yamljson.h"

/* Lower-case letters, digits, '-' and '.', not empty: a DNS subdomain as a group is. */
static int dns_subdomain(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '.')
			return 0;
	return 1;
}

/* A Kubernetes API version: v1, v1beta2, v1alpha1. */
static int api_version_name(const char *s)
{
	if (*s++ != 'v' || !isdigit((unsigned char)*s))
		return 0;
	while (isdigit((unsigned char)*s))
		s++;
	if (!strncmp(s, "alpha", 5) || !strncmp(s, "beta", 4)) {
		s += *s == 'a' ? 5 : 4;
		if (!isdigit((unsigned char)*s))
			return 0;
		while (isdigit((unsigned char)*s))
			s++;
	}
	return *s == '\0';
}

/* The group of an apiVersion ("" for the core group's "v1"), into buf. */
static void group_of(const char *api_version, char *buf, size_t size)
{
	const char *slash = strchr(api_version, '/');
	snprintf(buf, size, "%.*s", slash ? (int)(slash - api_version) : 0, api_version);
}

static int is_owner(enum kind k)
{
	return k >= K_OWNER_FIRST && k <= K_OWNER_LAST;
}

static void test_every_kind_has_a_well_formed_row(void **state)
{
	(void)state;
	for (enum kind k = 0; k < K_KINDS; k++) {
		const struct kind_def *d = kind_def(k);
		const char *name = kind_name(k), *api = kind_api_version(k);
		const char *plural = kind_plural(k);
		char path[300], want[300], group[100];
		assert_non_null(name);
		assert_non_null(api);
		assert_non_null(plural);
		assert_true(isupper((unsigned char)name[0]));
		/* "v1", or "group/version" with one slash. */
		const char *slash = strchr(api, '/');
		if (slash)
			assert_true(dns_subdomain(api, (size_t)(slash - api)) &&
				    !strchr(slash + 1, '/') && api_version_name(slash + 1));
		else
			assert_string_equal(api, "v1");
		assert_true(dns_subdomain(plural, strlen(plural)) && !strchr(plural, '.'));
		/* Paths: the core group under /api, the others under /apis. */
		assert_int_equal(kind_path(k, NULL, NULL, NULL, path, sizeof(path)), 0);
		snprintf(want, sizeof(want), "%s/%s/%s", slash ? "/apis" : "/api", api, plural);
		assert_string_equal(path, want);
		assert_int_equal(kind_path(k, "ns", "n", "/status", path, sizeof(path)), 0);
		snprintf(want, sizeof(want), "%s/%s%s/%s/n/status", slash ? "/apis" : "/api", api,
			 d->cluster_scoped ? "" : "/namespaces/ns", plural);
		assert_string_equal(path, want);
		assert_int_equal(kind_path(k, "ns", "n", NULL, path, 8), -ENOSPC);
		/* An owner's row is its integration's; the others name their own. */
		if (is_owner(k)) {
			assert_non_null(d->integration);
			assert_null(d->name);
			assert_string_equal(name, d->integration->kind);
			assert_string_equal(api, d->integration->api_version);
			assert_string_equal(plural, d->integration->plural);
			group_of(api, group, sizeof(group));
			assert_string_equal(group, d->integration->group);
			assert_true(d->watched && d->compact && !d->cluster_scoped);
			assert_string_equal(d->label_selector, LABEL_QUEUE_NAME);
		} else {
			assert_non_null(d->name);
		}
		/* The queued-object kinds are watched by the queue label, and only they. */
		assert_true(!d->label_selector || d->integration);
	}
	assert_true(kind_def(K_WORKLOAD)->compact && kind_def(K_GPOD)->compact);
	assert_false(kind_def(K_PODGROUP)->watched);
	assert_false(kind_optional(K_JOB));
	assert_true(kind_optional(K_RAYJOB));
	assert_false(kind_optional(K_WORKLOAD));
}

/* Every integrated owner is an owner kind, and owner_kind_for finds it again by its
 * apiVersion and kind; no other row is an owner (a Workload, a Pod). */
static void test_owner_kinds_round_trip(void **state)
{
	(void)state;
	size_t n, owners = 0;
	const struct integration *const *all = integration_all(&n);
	for (enum kind k = 0; k < K_KINDS; k++) {
		enum kind back = owner_kind_for(kind_api_version(k), kind_name(k));
		if (is_owner(k)) {
			assert_int_equal(back, k);
			assert_ptr_equal(owner_integration(k), kind_def(k)->integration);
			assert_ptr_equal(integration_for(kind_api_version(k), kind_name(k)),
					 owner_integration(k));
			owners++;
		} else {
			assert_int_equal(back, K_KINDS);
		}
	}
	/* Each integration has an owner kind, but plain Pods: theirs are pod groups. */
	for (size_t i = 0; i < n; i++) {
		enum kind k = owner_kind_for(all[i]->api_version, all[i]->kind);
		if (all[i] == &integration_pod) {
			assert_int_equal(k, K_KINDS);
			assert_ptr_equal(owner_integration(K_PODGROUP), &integration_pod);
			assert_ptr_equal(kind_def(K_GPOD)->integration, &integration_pod);
		} else {
			assert_ptr_equal(owner_integration(k), all[i]);
		}
	}
	assert_int_equal(owners, n - 1);
	assert_null(owner_integration(K_WORKLOAD));
	assert_int_equal(owner_kind_for("batch/v2", "Job"), K_KINDS);
	assert_int_equal(owner_kind_for(NULL, NULL), K_KINDS);
}

/* --- RBAC ---------------------------------------------------------------------------------- */

static json_t *cluster_role(void)
{
	json_t *docs = NULL, *doc, *role = NULL;
	struct yamljson_error err;
	size_t i;
	const char *path = MUSTER_SOURCE_DIR "/config/rbac/role.yaml";
	assert_int_equal(yamljson_load_file(path, &docs, &err), 0);
	json_array_foreach(docs, i, doc)
	{
		const char *kind = json_string_value(json_object_get(doc, "kind"));
		if (kind && !strcmp(kind, "ClusterRole"))
			role = json_incref(doc);
	}
	json_decref(docs);
	assert_non_null(role);
	return role;
}

static int has_string(json_t *list, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i,
			   v) if (json_is_string(v) && !strcmp(json_string_value(v), s)) return 1;
	return 0;
}

/* Whether a rule of role grants verb on resource of group: for every name (resource_name NULL:
 * a rule without resourceNames), or for resource_name (a rule that names it, any verb). */
static int granted(json_t *role, const char *group, const char *resource, const char *verb,
		   const char *resource_name)
{
	size_t i;
	json_t *rule;
	json_array_foreach(json_object_get(role, "rules"), i, rule)
	{
		json_t *names = json_object_get(rule, "resourceNames");
		if (has_string(json_object_get(rule, "apiGroups"), group) &&
		    has_string(json_object_get(rule, "resources"), resource) &&
		    (resource_name ? has_string(names, resource_name) :
				     !names && has_string(json_object_get(rule, "verbs"), verb)))
			return 1;
	}
	return 0;
}

static void expect_granted(json_t *role, const char *group, const char *resource, const char *verb)
{
	if (!granted(role, group, resource, verb, NULL))
		fail_msg("config/rbac/role.yaml grants no %s on %s (apiGroup \"%s\")", verb,
			 resource, group);
}

/* The ClusterRole lets the manager list and watch every watched kind; patch (hold and release)
 * every owner kind, and its status when its eviction has a step before the restore; create and
 * patch Workloads and their status; and it names each held kind's admission policy. */
static void test_rbac_covers_the_table(void **state)
{
	(void)state;
	json_t *role = cluster_role();
	for (enum kind k = 0; k < K_KINDS; k++) {
		const struct kind_def *d = kind_def(k);
		char group[100], status[120], policy[120];
		group_of(kind_api_version(k), group, sizeof(group));
		if (d->watched) {
			expect_granted(role, group, kind_plural(k), "list");
			expect_granted(role, group, kind_plural(k), "watch");
		}
		if (!is_owner(k))
			continue;
		expect_granted(role, group, kind_plural(k), "patch");
		snprintf(status, sizeof(status), "%s/status", kind_plural(k));
		if (d->integration->before_restore)
			expect_granted(role, group, status, "patch");
		snprintf(policy, sizeof(policy), "muster-hold-%s", kind_plural(k));
		if (d->integration->holds_by_suspend &&
		    !granted(role, "admissionregistration.k8s.io", "mutatingadmissionpolicies",
			     NULL, policy))
			fail_msg("config/rbac/role.yaml names no MutatingAdmissionPolicy %s",
				 policy);
	}
	expect_granted(role, KUEUE_GROUP, "workloads", "create");
	expect_granted(role, KUEUE_GROUP, "workloads", "patch");
	expect_granted(role, KUEUE_GROUP, "workloads/status", "patch");
	/* The check can fail: a resource nobody granted is refused. */
	assert_false(granted(role, "jobset.x-k8s.io", "jobsets", "list", NULL));
	json_decref(role);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind_has_a_well_formed_row),
		cmocka_unit_test(test_owner_kinds_round_trip),
		cmocka_unit_test(test_rbac_covers_the_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
