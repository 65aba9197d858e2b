/* SPDX-License-Identifier: Apache-2.0 */
/* The hold's admission policies (webhooks/policies.h): which objects, their shape, and the
 * decision from what the server serves. What the CEL does is shown by the apiserver itself,
 * end to end (tests/e2e/test_zf_policy_hold.sh). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "api/config.h"
#include "api/integrations.h"
#include "webhooks/policies.h"

static const char *name_of(json_t *o)
{
	return json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
}

static const char *kind_of(json_t *o)
{
	return json_string_value(json_object_get(o, "kind"));
}

static json_t *find(json_t *objects, const char *kind, const char *name)
{
	size_t i;
	json_t *o;
	json_array_foreach(objects, i,
			   o) if (!strcmp(kind_of(o), kind) && !strcmp(name_of(o), name)) return o;
	return NULL;
}

static void test_policies_decide(void **state)
{
	(void)state;
	char err[256];
	int policy = -1, gang = -1;
	const struct policy_served none = { 0, 0, 0 }, map = { 1, 0, 0 }, all = { 1, 1, 1 },
				   dropped = { 1, 1, 0 };
	/* Auto follows the server. */
	assert_int_equal(policies_decide(HOLD_AUTO, GANG_AUTO, 1, &none, &policy, &gang, err,
					 sizeof(err)),
			 0);
	assert_int_equal(policy, 0);
	assert_int_equal(gang, 0);
	assert_int_equal(policies_decide(HOLD_AUTO, GANG_AUTO, 1, &map, &policy, &gang, err,
					 sizeof(err)),
			 0);
	assert_int_equal(policy, 1);
	assert_int_equal(gang, 0);
	assert_int_equal(policies_decide(HOLD_AUTO, GANG_AUTO, 1, &all, &policy, &gang, err,
					 sizeof(err)),
			 0);
	assert_int_equal(policy, 1);
	assert_int_equal(gang, 1);
	/* PodGroups served, but the Job's field dropped (WorkloadWithJob off): no gang. */
	assert_int_equal(policies_decide(HOLD_AUTO, GANG_AUTO, 1, &dropped, &policy, &gang, err,
					 sizeof(err)),
			 0);
	assert_int_equal(gang, 0);
	/* Without batch/job integrated, nothing to gang. */
	assert_int_equal(policies_decide(HOLD_AUTO, GANG_AUTO, 0, &all, &policy, &gang, err,
					 sizeof(err)),
			 0);
	assert_int_equal(gang, 0);
	/* Turned off. */
	assert_int_equal(policies_decide(HOLD_WEBHOOK, GANG_DISABLED, 1, &all, &policy, &gang, err,
					 sizeof(err)),
			 0);
	assert_int_equal(policy, 0);
	assert_int_equal(gang, 0);
	/* Demands the server can't meet stop the start, saying why. */
	assert_int_equal(policies_decide(HOLD_POLICY, GANG_AUTO, 1, &none, &policy, &gang, err,
					 sizeof(err)),
			 -ENOTSUP);
	assert_non_null(strstr(err, "MutatingAdmissionPolicy"));
	assert_int_equal(policies_decide(HOLD_AUTO, GANG_ENABLED, 1, &map, &policy, &gang, err,
					 sizeof(err)),
			 -ENOTSUP);
	assert_non_null(strstr(err, "PodGroup"));
	assert_int_equal(policies_decide(HOLD_AUTO, GANG_ENABLED, 1, &dropped, &policy, &gang, err,
					 sizeof(err)),
			 -ENOTSUP);
	assert_non_null(strstr(err, "WorkloadWithJob"));
}

static void test_policies_build(void **state)
{
	(void)state;
	const struct integration *owners[] = { &integration_job, &integration_rayjob };
	struct policy_inputs in = { owners, 2, 1, 1, 0, NULL, "abc123" };
	json_t *objects = policies_build(&in);
	assert_non_null(objects);
	/* A policy and its binding each: hold jobs, hold rayjobs, gang, pods, queue name,
	 * frozen. */
	assert_int_equal(json_array_size(objects), 12);
	json_t *hold = find(objects, "MutatingAdmissionPolicy", "muster-hold-jobs");
	assert_non_null(hold);
	assert_string_equal(json_string_value(json_object_get(json_object_get(hold, "spec"),
							      "failurePolicy")),
			    "Fail");
	char *text = json_dumps(hold, JSON_COMPACT);
	assert_non_null(strstr(text, "Object{spec: Object.spec{suspend: true}}"));
	assert_non_null(strstr(text, "\"apiGroups\":[\"batch\"]"));
	/* Only queued objects, never one an integrated owner controls. */
	assert_non_null(strstr(text, "'kueue.x-k8s.io/queue-name' in object.metadata.labels"));
	assert_non_null(strstr(text, "r.apiVersion == 'ray.io/v1' && r.kind == 'RayJob'"));
	/* And the manager's probe, by this process's token. */
	assert_non_null(
		strstr(text,
		       "object.metadata.labels['muster.kueue.x-k8s.io/hold-probe'] == 'abc123'"));
	free(text);
	json_t *binding = find(objects, "MutatingAdmissionPolicyBinding", "muster-hold-jobs");
	assert_non_null(binding);
	assert_string_equal(json_string_value(json_object_get(json_object_get(binding, "spec"),
							      "policyName")),
			    "muster-hold-jobs");
	assert_non_null(find(objects, "MutatingAdmissionPolicy", "muster-hold-rayjobs"));
	assert_null(find(objects, "MutatingAdmissionPolicy", "muster-hold-rayclusters"));
	json_t *gang = find(objects, "MutatingAdmissionPolicy", "muster-gang-jobs");
	text = json_dumps(gang, JSON_COMPACT);
	assert_non_null(strstr(text, "!has(object.spec.scheduling)"));
	assert_non_null(strstr(text, "gang: Object.spec.scheduling.schedulingPolicy.gang{}"));
	free(text);
	text = json_dumps(find(objects, "MutatingAdmissionPolicy", "muster-hold-pods"),
			  JSON_COMPACT);
	assert_non_null(strstr(text, "'kueue.x-k8s.io/admission'"));
	assert_non_null(strstr(text, "finalizers: ['kueue.x-k8s.io/managed']"));
	free(text);
	json_t *vap = find(objects, "ValidatingAdmissionPolicy", "muster-queue-name");
	text = json_dumps(vap, JSON_COMPACT);
	assert_non_null(strstr(text, "format.dns1123Subdomain()"));
	assert_non_null(strstr(text, "\"resources\":[\"pods\"]"));
	free(text);
	text = json_dumps(find(objects, "ValidatingAdmissionPolicy", "muster-queue-frozen"),
			  JSON_COMPACT);
	assert_non_null(strstr(text, "oldObject.spec.suspend == true"));
	assert_null(strstr(text, "\"pods\""));
	free(text);
	json_t *vb = find(objects, "ValidatingAdmissionPolicyBinding", "muster-queue-name");
	assert_string_equal(json_string_value(
				    json_array_get(json_object_get(json_object_get(vb, "spec"),
								   "validationActions"),
						   0)),
			    "Deny");
	/* What this configuration does not use, to delete: rayclusters' hold. */
	json_t *unused = policies_unused(&in);
	assert_int_equal(json_array_size(unused), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(unused, 0), "name")),
			    "muster-hold-rayclusters");
	json_decref(unused);
	json_decref(objects);

	/* manageJobsWithoutQueueName: every Job of the managed namespaces is held. */
	json_t *managed = json_pack("{s:{s:s}}", "matchLabels", "team", "ml");
	struct policy_inputs all = { owners, 1, 0, 0, 1, managed, NULL };
	objects = policies_build(&all);
	assert_int_equal(json_array_size(objects), 6);
	text = json_dumps(find(objects, "MutatingAdmissionPolicy", "muster-hold-jobs"),
			  JSON_COMPACT);
	assert_null(strstr(text, "\"queued\""));
	free(text);
	binding = find(objects, "MutatingAdmissionPolicyBinding", "muster-hold-jobs");
	assert_true(json_equal(json_object_get(json_object_get(json_object_get(binding, "spec"),
							       "matchResources"),
					       "namespaceSelector"),
			       managed));
	json_decref(objects);
	json_decref(managed);

	/* Held by webhook: no policy, and every one an earlier run may have made goes. */
	objects = policies_build(NULL);
	assert_int_equal(json_array_size(objects), 0);
	json_decref(objects);
	unused = policies_unused(NULL);
	assert_int_equal(json_array_size(unused), 14);
	json_decref(unused);
	assert_string_equal(policies_resource("MutatingAdmissionPolicyBinding"),
			    "mutatingadmissionpolicybindings");
	assert_null(policies_resource("Pod"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policies_decide),
		cmocka_unit_test(test_policies_build),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
