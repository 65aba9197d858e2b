/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for webhooks: AdmissionReview in, AdmissionReview out, for every path. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "api/engine_objects.h"
#include "webhooks/review.h"
#include "webhooks/webhooks.h"

#define UID "705ab4f5-6393-11e8-b7cc-42010a800002"

/* Replaces single quotes with double quotes so JSON literals stay readable. */
static char *dq(const char *text)
{
	char *s = strdup(text);
	assert_non_null(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	return s;
}

/* The context calls pass (NULL: objects without the queue label are never touched). */
static const struct webhook_context *call_ctx;

/* Calls the webhook and returns the parsed response body; checks it is JSON. */
static json_t *call(const char *path, const char *body, int *status)
{
	char *out = (char *)1;
	*status = webhook_handle(path, body, strlen(body), call_ctx, &out);
	if (!out)
		fail_msg("webhook_handle %s: status %d with no body", path, *status);
	json_error_t err;
	json_t *v = json_loads(out, 0, &err);
	if (!v)
		fail_msg("response is not JSON: %s", out);
	free(out);
	return v;
}

/* A review for a Job; labels, suspend and old object are spliced in as JSON fragments. */
static char *job_review(const char *op, const char *labels, const char *suspend,
			const char *old_labels, const char *old_suspend)
{
	char obj[2048], old[2048] = "";
	snprintf(obj, sizeof(obj),
		 "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'sample-job',"
		 "'namespace':'team-a','labels':{%s}},'spec':{'parallelism':8,'completions':8,%s"
		 "'template':{'spec':{'restartPolicy':'Never','containers':[{'name':'main',"
		 "'image':'busybox','resources':{'requests':{'cpu':'1','nvidia.com/"
		 "gpu':'1'}}}]}}}}",
		 labels, suspend);
	if (old_labels)
		snprintf(old, sizeof(old),
			 ",'oldObject':{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':"
			 "'sample-job','namespace':'team-a','labels':{%s}},'spec':{%s'template':{}}"
			 "}",
			 old_labels, old_suspend);
	char text[8192];
	snprintf(text, sizeof(text),
		 "{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':{"
		 "'uid':'" UID "','kind':{'group':'batch','version':'v1','kind':'Job'},"
		 "'resource':{'group':'batch','version':'v1','resource':'jobs'},"
		 "'requestKind':{'group':'batch','version':'v1','kind':'Job'},"
		 "'name':'sample-job','namespace':'team-a','operation':'%s',"
		 "'userInfo':{'username':'admin'},'object':%s%s,'dryRun':false}}",
		 op, obj, old);
	return dq(text);
}

static json_t *response_of(json_t *review)
{
	assert_string_equal(json_string_value(json_object_get(review, "apiVersion")),
			    "admission.k8s.io/v1");
	assert_string_equal(json_string_value(json_object_get(review, "kind")), "AdmissionReview");
	json_t *r = json_object_get(review, "response");
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "uid")), UID);
	return r;
}

/* Decodes response.patch (base64 JSON Patch); NULL when the response carries none. */
static json_t *patch_of(json_t *resp)
{
	const char *b64 = json_string_value(json_object_get(resp, "patch"));
	if (!b64)
		return NULL;
	assert_string_equal(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
	size_t n = strlen(b64);
	unsigned char *raw = calloc(n + 4, 1);
	assert_non_null(raw);
	int len = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)n);
	assert_true(len >= 0);
	/* EVP_DecodeBlock counts padding as zero bytes; strip them. */
	while (len > 0 && raw[len - 1] == '\0')
		len--;
	json_error_t err;
	json_t *patch = json_loadb((const char *)raw, (size_t)len, 0, &err);
	if (!patch)
		fail_msg("patch is not JSON: %s", raw);
	free(raw);
	return patch;
}

static int allowed(json_t *resp)
{
	json_t *a = json_object_get(resp, "allowed");
	assert_true(json_is_boolean(a));
	return json_is_true(a);
}

static const char *message_of(json_t *resp)
{
	return json_string_value(json_object_get(json_object_get(resp, "status"), "message"));
}

static int code_of(json_t *resp)
{
	return (int)json_integer_value(json_object_get(json_object_get(resp, "status"), "code"));
}

#define QLABEL "'kueue.x-k8s.io/queue-name':'user-queue'"

/* ---------------------------------------------------------------- mutate */

static void assert_suspend_patch(const char *suspend)
{
	char *body = job_review("CREATE", QLABEL, suspend, NULL, NULL);
	int status;
	json_t *review = call(WEBHOOK_PATH_MUTATE_JOB, body, &status);
	assert_int_equal(status, 200);
	json_t *resp = response_of(review);
	assert_true(allowed(resp));
	json_t *patch = patch_of(resp);
	assert_non_null(patch);
	assert_int_equal(json_array_size(patch), 1);
	json_t *op = json_array_get(patch, 0);
	assert_string_equal(json_string_value(json_object_get(op, "op")), "add");
	assert_string_equal(json_string_value(json_object_get(op, "path")), "/spec/suspend");
	assert_true(json_is_true(json_object_get(op, "value")));
	json_decref(patch);
	json_decref(review);
	free(body);
}

static void test_webhook_mutate_queue_label_unset_suspend_patched(void **state)
{
	assert_suspend_patch("");
}

static void test_webhook_mutate_queue_label_suspend_false_patched(void **state)
{
	assert_suspend_patch("'suspend':false,");
}

static void assert_no_patch(const char *op, const char *labels, const char *suspend)
{
	char *body = job_review(op, labels, suspend, NULL, NULL);
	int status;
	json_t *review = call(WEBHOOK_PATH_MUTATE_JOB, body, &status);
	assert_int_equal(status, 200);
	json_t *resp = response_of(review);
	assert_true(allowed(resp));
	assert_null(json_object_get(resp, "patch"));
	assert_null(json_object_get(resp, "patchType"));
	json_decref(review);
	free(body);
}

static void test_webhook_mutate_already_suspended_no_patch(void **state)
{
	assert_no_patch("CREATE", QLABEL, "'suspend':true,");
}

static void test_webhook_mutate_no_queue_label_no_patch(void **state)
{
	assert_no_patch("CREATE", "'app':'x'", "");
	assert_no_patch("CREATE", "'kueue.x-k8s.io/queue-name':''", "");
}

static void test_webhook_mutate_echoes_review_api_version(void **state)
{
	char *body = job_review("CREATE", QLABEL, "", NULL, NULL);
	/* v1beta1 reviews must get a v1beta1 answer. */
	char *p = strstr(body, "admission.k8s.io/v1");
	assert_non_null(p);
	char text[8192];
	snprintf(text, sizeof(text), "%.*sadmission.k8s.io/v1beta1%s", (int)(p - body), body,
		 p + strlen("admission.k8s.io/v1"));
	int status;
	json_t *review = call(WEBHOOK_PATH_MUTATE_JOB, text, &status);
	assert_int_equal(status, 200);
	assert_string_equal(json_string_value(json_object_get(review, "apiVersion")),
			    "admission.k8s.io/v1beta1");
	json_decref(review);
	free(body);
}

/* ---------------------------------------------------------------- validate job */

static json_t *validate_job(const char *op, const char *labels, const char *suspend,
			    const char *old_labels, const char *old_suspend)
{
	char *body = job_review(op, labels, suspend, old_labels, old_suspend);
	int status;
	json_t *review = call(WEBHOOK_PATH_VALIDATE_JOB, body, &status);
	assert_int_equal(status, 200);
	free(body);
	return review;
}

static void test_webhook_validate_good_queue_name_allowed(void **state)
{
	json_t *review = validate_job("CREATE", QLABEL, "", NULL, NULL);
	assert_true(allowed(response_of(review)));
	json_decref(review);
	review = validate_job("CREATE", "'kueue.x-k8s.io/queue-name':'a.b-c.0'", "", NULL, NULL);
	assert_true(allowed(response_of(review)));
	json_decref(review);
	/* A subdomain's parts have no length cap of their own (apimachinery's regexp has none). */
	review = validate_job("CREATE",
			      "'kueue.x-k8s.io/"
			      "queue-name':'team-queue-with-a-rather-long-name-of-more-"
			      "than-sixty-three-characters.b'",
			      "", NULL, NULL);
	assert_true(allowed(response_of(review)));
	json_decref(review);
	review = validate_job("CREATE", "'app':'no-queue'", "", NULL, NULL);
	assert_true(allowed(response_of(review)));
	json_decref(review);
}

static void test_webhook_validate_bad_queue_name_denied(void **state)
{
	/* "a..b" and the other dot misuses: names no LocalQueue can have, which an earlier
	 * webhook of its own let through. */
	static const char *const bad[] = { "User_Queue", "-queue", "queue-", "Queue", "q q", "q/x",
					   "a..b",       ".a",     "a.",     "a.-b",  "a-.b" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char labels[128];
		snprintf(labels, sizeof(labels), "'kueue.x-k8s.io/queue-name':'%s'", bad[i]);
		json_t *review = validate_job("CREATE", labels, "", NULL, NULL);
		json_t *resp = response_of(review);
		if (allowed(resp))
			fail_msg("queue name \"%s\" allowed", bad[i]);
		assert_int_equal(code_of(resp), 422);
		assert_non_null(strstr(message_of(resp), "kueue.x-k8s.io/queue-name"));
		json_decref(review);
	}
}

static void test_webhook_validate_long_multibyte_queue_name_still_answers(void **state)
{
	/* 200 two-byte characters: quoting the name in the message must not cut one in half,
	 * or the response can't be encoded and the apiserver gets no answer at all. */
	char labels[1024];
	size_t n = (size_t)snprintf(labels, sizeof(labels), "'kueue.x-k8s.io/queue-name':'");
	for (int i = 0; i < 200; i++) {
		labels[n++] = (char)0xc3;
		labels[n++] = (char)0xa9; /* é */
	}
	snprintf(labels + n, sizeof(labels) - n, "'");
	json_t *review = validate_job("CREATE", labels, "", NULL, NULL);
	json_t *resp = response_of(review);
	assert_false(allowed(resp));
	assert_int_equal(code_of(resp), 422);
	json_decref(review);
}

static void test_webhook_validate_queue_change_on_running_job_denied(void **state)
{
	json_t *review = validate_job("UPDATE", "'kueue.x-k8s.io/queue-name':'other-queue'",
				      "'suspend':false,", QLABEL, "'suspend':false,");
	json_t *resp = response_of(review);
	assert_false(allowed(resp));
	assert_int_equal(code_of(resp), 422);
	assert_non_null(strstr(message_of(resp), "queue"));
	json_decref(review);

	/* Unset suspend means running too. */
	review =
		validate_job("UPDATE", "'kueue.x-k8s.io/queue-name':'other-queue'", "", QLABEL, "");
	assert_false(allowed(response_of(review)));
	json_decref(review);

	/* Removing the label from a running Job is a change as well. */
	review = validate_job("UPDATE", "'app':'x'", "", QLABEL, "'suspend':false,");
	assert_false(allowed(response_of(review)));
	json_decref(review);
}

static void test_webhook_validate_queue_change_on_suspended_job_allowed(void **state)
{
	json_t *review = validate_job("UPDATE", "'kueue.x-k8s.io/queue-name':'other-queue'",
				      "'suspend':true,", QLABEL, "'suspend':true,");
	assert_true(allowed(response_of(review)));
	json_decref(review);
}

static void test_webhook_validate_unchanged_queue_on_running_job_allowed(void **state)
{
	json_t *review =
		validate_job("UPDATE", QLABEL, "'suspend':false,", QLABEL, "'suspend':false,");
	assert_true(allowed(response_of(review)));
	json_decref(review);
	/* Adding a queue to a running Job that had none is Kueue's business, not a change. */
	review = validate_job("UPDATE", QLABEL, "", "'app':'x'", "");
	assert_true(allowed(response_of(review)));
	json_decref(review);
}

/* ---------------------------------------------------------------- validate ClusterQueue */

static json_t *validate_cq(const char *groups)
{
	char text[8192];
	snprintf(text, sizeof(text),
		 "{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':{"
		 "'uid':'" UID "','kind':{'group':'kueue.x-k8s.io','version':'v1beta2',"
		 "'kind':'ClusterQueue'},'resource':{'group':'kueue.x-k8s.io','version':'v1beta2',"
		 "'resource':'clusterqueues'},'name':'cluster-queue','operation':'CREATE',"
		 "'userInfo':{'username':'admin'},'object':{'apiVersion':'kueue.x-k8s.io/v1beta2',"
		 "'kind':'ClusterQueue','metadata':{'name':'cluster-queue'},'spec':{"
		 "'cohortName':'team','namespaceSelector':{},'resourceGroups':[%s]}}}}",
		 groups);
	char *body = dq(text);
	int status;
	json_t *review = call(WEBHOOK_PATH_VALIDATE_CQ, body, &status);
	assert_int_equal(status, 200);
	free(body);
	return review;
}

#define GROUP_CPU_MEM                                                                            \
	"{'coveredResources':['cpu','memory'],'flavors':[{'name':'default-flavor','resources':[" \
	"{'name':'cpu','nominalQuota':9},{'name':'memory','nominalQuota':'36Gi'}]}]}"
#define GROUP_GPU                                                                             \
	"{'coveredResources':['nvidia.com/gpu'],'flavors':[{'name':'a100','resources':["      \
	"{'name':'nvidia.com/gpu','nominalQuota':'8','borrowingLimit':'0'}]},{'name':'h100'," \
	"'resources':[{'name':'nvidia.com/gpu','nominalQuota':4}]}]}"

static void test_webhook_cq_valid_allowed(void **state)
{
	json_t *review = validate_cq(GROUP_CPU_MEM "," GROUP_GPU);
	json_t *resp = response_of(review);
	assert_true(allowed(resp));
	json_decref(review);
	review = validate_cq("");
	assert_true(allowed(response_of(review)));
	json_decref(review);
}

static void test_webhook_cq_quantity_beyond_int64_milli_denied(void **state)
{
	json_t *review = validate_cq("{'coveredResources':['memory'],'flavors':[{'name':'big',"
				     "'resources':[{'name':'memory','nominalQuota':'100Ei'}]}]}");
	json_t *resp = response_of(review);
	assert_false(allowed(resp));
	assert_int_equal(code_of(resp), 422);
	assert_non_null(strstr(message_of(resp), "100Ei"));
	assert_non_null(strstr(message_of(resp), "nominalQuota"));
	json_decref(review);
}

static void test_webhook_cq_bad_limits_denied(void **state)
{
	static const char *const groups[] = {
		"{'coveredResources':['cpu'],'flavors':[{'name':'f','resources':["
		"{'name':'cpu','nominalQuota':'-1'}]}]}",
		"{'coveredResources':['cpu'],'flavors':[{'name':'f','resources':["
		"{'name':'cpu','nominalQuota':'1','borrowingLimit':'lots'}]}]}",
		"{'coveredResources':['cpu'],'flavors':[{'name':'f','resources':["
		"{'name':'cpu','nominalQuota':'1','lendingLimit':'10000P'}]}]}",
	};
	static const char *const field[] = { "nominalQuota", "borrowingLimit", "lendingLimit" };
	for (size_t i = 0; i < 3; i++) {
		json_t *review = validate_cq(groups[i]);
		json_t *resp = response_of(review);
		if (allowed(resp))
			fail_msg("allowed: %s", groups[i]);
		assert_non_null(strstr(message_of(resp), field[i]));
		json_decref(review);
	}
}

static void test_webhook_cq_duplicate_flavor_across_groups_denied(void **state)
{
	json_t *review = validate_cq(GROUP_CPU_MEM
				     ",{'coveredResources':['nvidia.com/gpu'],"
				     "'flavors':[{'name':'default-flavor','resources':["
				     "{'name':'nvidia.com/gpu','nominalQuota':1}]}]}");
	json_t *resp = response_of(review);
	assert_false(allowed(resp));
	assert_non_null(strstr(message_of(resp), "default-flavor"));
	assert_non_null(strstr(message_of(resp), "resourceGroups[1]"));
	json_decref(review);
}

/* The webhook's rules are the decoder's: for each spec, the same answer and the same message,
 * including rules the webhook of its own never had (Kueue's CRD has them). */
static void test_webhook_cq_agrees_with_decoder(void **state)
{
	static const char *const specs[] = {
		"{'cohortName':'team','resourceGroups':[" GROUP_CPU_MEM "," GROUP_GPU "]}",
		"{'resourceGroups':[" GROUP_GPU "]}",
		"{'cohortName':'a..b','resourceGroups':[]}",
		"{'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'a..b',"
		"'resources':[{'name':'cpu','nominalQuota':1}]}]}]}",
		"{'resourceGroups':[{'coveredResources':['cpu','memory'],'flavors':[{'name':'f',"
		"'resources':[{'name':'cpu','nominalQuota':1}]}]}]}",
		"{'queueingStrategy':'Fastest','resourceGroups':[]}",
		"{'admissionChecksStrategy':{'admissionChecks':[]},'resourceGroups':[]}",
		"{'resourceGroups':[],'nonsense':1}",
	};
	static const int ok[] = { 1, 0, 0, 0, 0, 0, 1, 0 };
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		char text[4096], obj[2048], err[512] = "";
		snprintf(obj, sizeof(obj),
			 "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue',"
			 "'metadata':{'name':'cq'},'spec':%s}",
			 specs[i]);
		snprintf(text, sizeof(text),
			 "{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':{"
			 "'uid':'" UID "','kind':{'group':'kueue.x-k8s.io','version':'v1beta2',"
			 "'kind':'ClusterQueue'},'resource':{'group':'kueue.x-k8s.io','version':"
			 "'v1beta2','resource':'clusterqueues'},'name':'cq','operation':'UPDATE',"
			 "'userInfo':{'username':'admin'},'object':%s}}",
			 obj);
		char *body = dq(text), *jo = dq(obj);
		int status;
		json_t *review = call(WEBHOOK_PATH_VALIDATE_CQ, body, &status);
		json_t *cq = json_loads(jo, 0, NULL);
		assert_non_null(cq);
		struct eobj_cq decoded;
		int rc = eobj_cq_decode(cq, &decoded, err, sizeof(err));
		eobj_cq_release(&decoded);
		json_t *resp = response_of(review);
		if (allowed(resp) != ok[i] || (rc == 0) != ok[i])
			fail_msg("spec %zu: webhook %s, decoder %d (%s); want %s", i,
				 allowed(resp) ? "allows" : "denies", rc, err,
				 ok[i] ? "allowed" : "denied");
		if (!ok[i])
			assert_string_equal(message_of(resp), err);
		json_decref(cq);
		json_decref(review);
		free(body);
		free(jo);
	}
}

static void test_webhook_cq_duplicate_resource_across_groups_denied(void **state)
{
	json_t *review = validate_cq(GROUP_CPU_MEM ",{'coveredResources':['memory'],'flavors':["
						   "{'name':'other','resources':[{'name':'memory',"
						   "'nominalQuota':1}]}]}");
	json_t *resp = response_of(review);
	assert_false(allowed(resp));
	assert_non_null(strstr(message_of(resp), "memory"));
	assert_non_null(strstr(message_of(resp), "coveredResources"));
	json_decref(review);
}

/* ---------------------------------------------------------------- transport errors */

static void test_webhook_malformed_body_400(void **state)
{
	static const char *const bodies[] = {
		"",
		"not json",
		"{\"apiVersion\":\"admission.k8s.io/v1\"",
		"[]",
		"{\"request\":{}}",
		"{\"request\":{\"operation\":\"CREATE\",\"kind\":{\"kind\":\"Job\"}}}",
		"{\"request\":{\"uid\":\"u\",\"kind\":{\"kind\":\"Job\"}}}",
		/* duplicate uid key */
		"{\"request\":{\"uid\":\"u\",\"uid\":\"v\",\"operation\":\"CREATE\",\"kind\":{"
		"\"kind\":\"Job\"}}}",
	};
	static const char *const paths[] = { WEBHOOK_PATH_MUTATE_JOB, WEBHOOK_PATH_VALIDATE_JOB,
					     WEBHOOK_PATH_VALIDATE_CQ };
	for (size_t p = 0; p < 3; p++) {
		for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
			int status;
			json_t *v = call(paths[p], bodies[i], &status);
			if (status != 400)
				fail_msg("%s: body %s: status %d", paths[p], bodies[i], status);
			assert_non_null(json_string_value(json_object_get(v, "error")));
			json_decref(v);
		}
	}
}

static void test_webhook_malformed_invalid_utf8_body_400_with_body(void **state)
{
	/* The decoder's error text quotes the input; it must still produce a response body. */
	const char body[] = "{\"request\":\xff\xfe\xc3}";
	char *out = NULL;
	int status = webhook_handle(WEBHOOK_PATH_VALIDATE_JOB, body, sizeof(body) - 1, NULL, &out);
	assert_int_equal(status, 400);
	assert_non_null(out);
	free(out);
}

static void test_webhook_unknown_path_404(void **state)
{
	char *body = job_review("CREATE", QLABEL, "", NULL, NULL);
	int status;
	json_t *v = call("/mutate-apps-v1-deployment", body, &status);
	assert_int_equal(status, 404);
	json_decref(v);
	v = call("/", body, &status);
	assert_int_equal(status, 404);
	json_decref(v);
	v = call(WEBHOOK_PATH_MUTATE_JOB "/", body, &status);
	assert_int_equal(status, 404);
	json_decref(v);
	free(body);
}

static void test_webhook_delete_without_object_answers(void **state)
{
	const char *text =
		"{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':{"
		"'uid':'" UID "','kind':{'group':'batch','version':'v1','kind':'Job'},"
		"'operation':'DELETE','namespace':'team-a','oldObject':{'metadata':{}}}}";
	char *body = dq(text);
	static const char *const paths[] = { WEBHOOK_PATH_MUTATE_JOB, WEBHOOK_PATH_VALIDATE_JOB,
					     WEBHOOK_PATH_VALIDATE_CQ };
	for (size_t p = 0; p < 3; p++) {
		int status;
		json_t *review = call(paths[p], body, &status);
		assert_int_equal(status, 200);
		json_t *resp = response_of(review);
		assert_true(allowed(resp));
		assert_null(json_object_get(resp, "patch"));
		json_decref(review);
	}
	free(body);
}

/* ---------------------------------------------------------------- other kinds */

/* A review of any object (a JSON literal with single quotes) on path. */
static json_t *review_of(const char *path, const char *op, const char *group, const char *kind,
			 const char *object, const char *old, int *status)
{
	char text[8192];
	snprintf(text, sizeof(text),
		 "{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':{"
		 "'uid':'" UID "','kind':{'group':'%s','version':'v1','kind':'%s'},"
		 "'namespace':'team-a','operation':'%s','object':%s%s%s}}",
		 group, kind, op, object, old ? ",'oldObject':" : "", old ? old : "");
	char *body = dq(text);
	json_t *v = call(path, body, status);
	free(body);
	return v;
}

#define POD(labels, extra)                                                                        \
	"{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p','namespace':'team-a','uid':'u1'," \
	"'labels':{" labels "}" extra "},'spec':{'containers':[{'name':'c','image':'busybox',"    \
	"'resources':{'requests':{'cpu':'1'}}}]}}"

/* A queued Pod is created gated, labelled managed and with the managed finalizer, as Kueue's
 * pod webhook does; a Pod a Job made is the Job's business. */
static void test_webhook_pod_gated(void **state)
{
	int status;
	json_t *review = review_of(WEBHOOK_PATH_MUTATE_POD, "CREATE", "", "Pod", POD(QLABEL, ""),
				   NULL, &status);
	assert_int_equal(status, 200);
	json_t *patch = patch_of(response_of(review));
	char *text = json_dumps(patch, JSON_COMPACT);
	assert_string_equal(text, "[{\"op\":\"add\",\"path\":\"/spec/"
				  "schedulingGates\",\"value\":[{\"name\":\"kueue.x-k8s.io/"
				  "admission\"}]},"
				  "{\"op\":\"add\",\"path\":\"/metadata/"
				  "finalizers\",\"value\":[\"kueue.x-k8s.io/managed\"]},"
				  "{\"op\":\"add\",\"path\":\"/metadata/labels/"
				  "kueue.x-k8s.io~1managed\",\"value\":\"true\"}]");
	free(text);
	json_decref(patch);
	json_decref(review);

	review = review_of(WEBHOOK_PATH_MUTATE_POD, "CREATE", "", "Pod",
			   POD(QLABEL, ",'ownerReferences':[{'apiVersion':'batch/"
				       "v1','kind':'Job','name':'j','uid':'x','controller':true}]"),
			   NULL, &status);
	assert_null(patch_of(response_of(review)));
	json_decref(review);
}

static void test_webhook_pod_group_rules(void **state)
{
	int status;
	json_t *review = review_of(WEBHOOK_PATH_VALIDATE_POD, "CREATE", "", "Pod",
				   POD(QLABEL ",'kueue.x-k8s.io/pod-group-name':'train'", ""), NULL,
				   &status);
	json_t *resp = response_of(review);
	assert_false(allowed(resp));
	assert_non_null(strstr(message_of(resp), "pod-group-total-count\"]: Required value"));
	json_decref(review);
	review = review_of(WEBHOOK_PATH_VALIDATE_POD, "CREATE", "", "Pod",
			   POD(QLABEL ",'kueue.x-k8s.io/pod-group-name':'train'",
			       ",'annotations':{'kueue.x-k8s.io/pod-group-total-count':'4'}"),
			   NULL, &status);
	assert_true(allowed(response_of(review)));
	json_decref(review);
	/* The group of a pod can't change. */
	review = review_of(WEBHOOK_PATH_VALIDATE_POD, "UPDATE", "", "Pod",
			   POD(QLABEL ",'kueue.x-k8s.io/pod-group-name':'other'",
			       ",'annotations':{'kueue.x-k8s.io/pod-group-total-count':'4'}"),
			   POD(QLABEL ",'kueue.x-k8s.io/pod-group-name':'train'",
			       ",'annotations':{'kueue.x-k8s.io/pod-group-total-count':'4'}"),
			   &status);
	resp = response_of(review);
	assert_false(allowed(resp));
	assert_non_null(strstr(message_of(resp), "pod-group-name]: Forbidden: field is immutable"));
	json_decref(review);
}

#define RAYJOB(extra)                                                                            \
	"{'apiVersion':'ray.io/v1','kind':'RayJob','metadata':{'name':'r','namespace':'team-a'," \
	"'labels':{" QLABEL "}},'spec':{" extra "'rayClusterSpec':{'headGroupSpec':{'template':" \
	"{'spec':{'containers':[{'name':'h','resources':{'requests':{'cpu':'1'}}}]}}},"          \
	"'workerGroupSpecs':[]}}}"

/* RayJobs take the same webhooks as Jobs, at Kueue's paths: created suspended, and refused at
 * once when they could never be queued. */
static void test_webhook_rayjob(void **state)
{
	int status;
	json_t *review = review_of("/mutate-ray-io-v1-rayjob", "CREATE", "ray.io", "RayJob",
				   RAYJOB("'shutdownAfterJobFinishes':true,"), NULL, &status);
	assert_int_equal(status, 200);
	json_t *patch = patch_of(response_of(review));
	assert_string_equal(json_string_value(json_object_get(json_array_get(patch, 0), "path")),
			    "/spec/suspend");
	json_decref(patch);
	json_decref(review);
	review = review_of("/validate-ray-io-v1-rayjob", "CREATE", "ray.io", "RayJob",
			   RAYJOB("'shutdownAfterJobFinishes':true,'clusterSelector':{'a':'b'},"),
			   NULL, &status);
	json_t *resp = response_of(review);
	assert_false(allowed(resp));
	assert_non_null(strstr(message_of(resp),
			       "spec.clusterSelector: a queued RayJob must bring its own cluster"));
	json_decref(review);
	review = review_of("/validate-ray-io-v1-rayjob", "CREATE", "ray.io", "RayJob",
			   RAYJOB("'shutdownAfterJobFinishes':true,"), NULL, &status);
	assert_true(allowed(response_of(review)));
	json_decref(review);
	review = review_of("/mutate-ray-io-v1-raycluster", "CREATE", "ray.io", "RayCluster",
			   "{'metadata':{'name':'c','labels':{" QLABEL "}},'spec':{}}", NULL,
			   &status);
	assert_int_equal(status, 200);
	json_t *p = patch_of(response_of(review));
	assert_non_null(p);
	json_decref(p);
	json_decref(review);
	/* The RayCluster a RayJob made carries the RayJob's labels, queue included: it is the
	 * RayJob's to hold, so it passes untouched. */
	review = review_of(
		"/mutate-ray-io-v1-raycluster", "CREATE", "ray.io", "RayCluster",
		"{'metadata':{'name':'r-abcde','labels':{" QLABEL
		"},'ownerReferences':[{'apiVersion':"
		"'ray.io/v1','kind':'RayJob','name':'r','uid':'u','controller':true}]},'spec':{}}",
		NULL, &status);
	assert_null(patch_of(response_of(review)));
	json_decref(review);
}

static int ns_managed(void *arg, const char *ns)
{
	(void)arg;
	return strcmp(ns, "kube-system") != 0;
}

static int has_default_queue(void *arg, const char *ns, const char *name)
{
	(void)arg;
	return !strcmp(ns, "team-a") && !strcmp(name, "default");
}

/* manageJobsWithoutQueueName: a Job without the label is held too, and given the namespace's
 * LocalQueue "default" when there is one; a Job a RayJob made (its submitter) is the RayJob's. */
static void test_webhook_manage_jobs_without_queue_name(void **state)
{
	const struct webhook_context ctx = { 1, ns_managed, has_default_queue, NULL, 0 };
	char *body = job_review("CREATE", "'app':'x'", "", NULL, NULL);
	char *out = NULL;
	assert_int_equal(webhook_handle(WEBHOOK_PATH_MUTATE_JOB, body, strlen(body), &ctx, &out),
			 200);
	json_t *review = json_loads(out, 0, NULL);
	free(out);
	json_t *patch = patch_of(response_of(review));
	char *text = json_dumps(patch, JSON_COMPACT);
	assert_string_equal(text, "[{\"op\":\"add\",\"path\":\"/metadata/labels/"
				  "kueue.x-k8s.io~1queue-name\","
				  "\"value\":\"default\"},{\"op\":\"add\",\"path\":\"/spec/"
				  "suspend\",\"value\":true}]");
	free(text);
	json_decref(patch);
	json_decref(review);
	/* Without the option, the same Job passes untouched. */
	assert_int_equal(webhook_handle(WEBHOOK_PATH_MUTATE_JOB, body, strlen(body), NULL, &out),
			 200);
	review = json_loads(out, 0, NULL);
	free(out);
	assert_null(patch_of(response_of(review)));
	json_decref(review);
	free(body);

	int status;
	call_ctx = &ctx;
	json_t *v = review_of(WEBHOOK_PATH_MUTATE_JOB, "CREATE", "batch", "Job",
			      "{'metadata':{'name':'s','ownerReferences':[{'apiVersion':'ray.io/"
			      "v1','kind':'RayJob',"
			      "'name':'r','uid':'u','controller':true}]},'spec':{}}",
			      NULL, &status);
	assert_null(patch_of(response_of(v)));
	json_decref(v);
	/* Nor in a namespace muster does not manage. */
	v = call(WEBHOOK_PATH_MUTATE_JOB,
		 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		 "\"request\":{\"uid\":\"" UID
		 "\",\"kind\":{\"group\":\"batch\",\"version\":\"v1\",\"kind\":\"Job\"},"
		 "\"namespace\":\"kube-system\",\"operation\":\"CREATE\",\"object\":{\"metadata\":{"
		 "\"name\":\"j\"},"
		 "\"spec\":{}}}}",
		 &status);
	assert_null(patch_of(response_of(v)));
	json_decref(v);
	call_ctx = NULL;
}

/* Gang scheduling: a queued Job without spec.scheduling is created with schedulingPolicy.gang
 * and held; one with its own spec.scheduling keeps it; an unqueued Job passes untouched. */
static void test_webhook_gang_at_create(void **state)
{
	(void)state;
	const struct webhook_context ctx = { 0, ns_managed, has_default_queue, NULL, 1 };
	char *out = NULL, *text;
	char *body = job_review("CREATE", "'kueue.x-k8s.io/queue-name':'lq'", "", NULL, NULL);
	assert_int_equal(webhook_handle(WEBHOOK_PATH_MUTATE_JOB, body, strlen(body), &ctx, &out),
			 200);
	free(body);
	json_t *review = json_loads(out, 0, NULL);
	free(out);
	json_t *patch = patch_of(response_of(review));
	text = json_dumps(patch, JSON_COMPACT);
	assert_string_equal(text, "[{\"op\":\"add\",\"path\":\"/spec/suspend\",\"value\":true},"
				  "{\"op\":\"add\",\"path\":\"/spec/scheduling\",\"value\":"
				  "{\"schedulingPolicy\":{\"gang\":{}}}}]");
	free(text);
	json_decref(patch);
	json_decref(review);

	body = job_review("CREATE", "'kueue.x-k8s.io/queue-name':'lq'",
			  "'scheduling':{'schedulingPolicy':{'basic':{}}},", NULL, NULL);
	assert_int_equal(webhook_handle(WEBHOOK_PATH_MUTATE_JOB, body, strlen(body), &ctx, &out),
			 200);
	free(body);
	review = json_loads(out, 0, NULL);
	free(out);
	patch = patch_of(response_of(review));
	text = json_dumps(patch, JSON_COMPACT);
	assert_string_equal(text, "[{\"op\":\"add\",\"path\":\"/spec/suspend\",\"value\":true}]");
	free(text);
	json_decref(patch);
	json_decref(review);

	body = job_review("CREATE", "'app':'x'", "", NULL, NULL);
	assert_int_equal(webhook_handle(WEBHOOK_PATH_MUTATE_JOB, body, strlen(body), &ctx, &out),
			 200);
	free(body);
	review = json_loads(out, 0, NULL);
	free(out);
	assert_null(patch_of(response_of(review)));
	json_decref(review);
}

/* ---------------------------------------------------------------- review helpers */

static void test_webhook_json_pointer_escape(void **state)
{
	char buf[64];
	assert_int_equal(json_pointer_escape("kueue.x-k8s.io/queue-name", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "kueue.x-k8s.io~1queue-name");
	assert_int_equal(json_pointer_escape("a~b/c", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "a~0b~1c");
	assert_int_equal(json_pointer_escape("", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(json_pointer_escape("abcd", buf, 4), -ENOSPC);
	assert_int_equal(json_pointer_escape("ab/", buf, 4), -ENOSPC);
	assert_int_equal(json_pointer_escape("abc", buf, 4), 0);
}

static void test_webhook_review_response_denial_defaults_to_403(void **state)
{
	struct admission_request req = { .uid = "u-1", .api_version = "admission.k8s.io/v1" };
	char *out = review_response(&req, 0, 0, "no", NULL);
	assert_non_null(out);
	json_t *v = json_loads(out, 0, NULL);
	json_t *resp = json_object_get(v, "response");
	assert_string_equal(json_string_value(json_object_get(resp, "uid")), "u-1");
	assert_false(allowed(resp));
	assert_int_equal(code_of(resp), 403);
	assert_string_equal(message_of(resp), "no");
	json_decref(v);
	free(out);

	/* An empty patch is no patch. */
	json_t *empty = json_array();
	out = review_response(&req, 1, 0, NULL, empty);
	v = json_loads(out, 0, NULL);
	assert_null(json_object_get(json_object_get(v, "response"), "patch"));
	assert_null(json_object_get(json_object_get(v, "response"), "status"));
	json_decref(v);
	json_decref(empty);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_webhook_mutate_queue_label_unset_suspend_patched),
		cmocka_unit_test(test_webhook_mutate_queue_label_suspend_false_patched),
		cmocka_unit_test(test_webhook_mutate_already_suspended_no_patch),
		cmocka_unit_test(test_webhook_mutate_no_queue_label_no_patch),
		cmocka_unit_test(test_webhook_mutate_echoes_review_api_version),
		cmocka_unit_test(test_webhook_validate_good_queue_name_allowed),
		cmocka_unit_test(test_webhook_validate_bad_queue_name_denied),
		cmocka_unit_test(test_webhook_validate_long_multibyte_queue_name_still_answers),
		cmocka_unit_test(test_webhook_validate_queue_change_on_running_job_denied),
		cmocka_unit_test(test_webhook_validate_queue_change_on_suspended_job_allowed),
		cmocka_unit_test(test_webhook_validate_unchanged_queue_on_running_job_allowed),
		cmocka_unit_test(test_webhook_cq_valid_allowed),
		cmocka_unit_test(test_webhook_cq_quantity_beyond_int64_milli_denied),
		cmocka_unit_test(test_webhook_cq_bad_limits_denied),
		cmocka_unit_test(test_webhook_cq_duplicate_flavor_across_groups_denied),
		cmocka_unit_test(test_webhook_cq_duplicate_resource_across_groups_denied),
		cmocka_unit_test(test_webhook_cq_agrees_with_decoder),
		cmocka_unit_test(test_webhook_malformed_body_400),
		cmocka_unit_test(test_webhook_malformed_invalid_utf8_body_400_with_body),
		cmocka_unit_test(test_webhook_unknown_path_404),
		cmocka_unit_test(test_webhook_delete_without_object_answers),
		cmocka_unit_test(test_webhook_pod_gated),
		cmocka_unit_test(test_webhook_pod_group_rules),
		cmocka_unit_test(test_webhook_rayjob),
		cmocka_unit_test(test_webhook_manage_jobs_without_queue_name),
		cmocka_unit_test(test_webhook_gang_at_create),
		cmocka_unit_test(test_webhook_json_pointer_escape),
		cmocka_unit_test(test_webhook_review_response_denial_defaults_to_403),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
