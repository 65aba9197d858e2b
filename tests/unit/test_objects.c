/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for api/objects: accessors, conditions, pod requests, Job -> Workload, podset
 * views. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/evp.h>

#include "api/engine_objects.h"
#include "api/integrations.h"
#include "api/objects.h"

#define MILLI(x) ((int64_t)(x)*1000)
#define MI(x) ((int64_t)(x)*1024 * 1024 * 1000)
#define GI(x) (MI(x) * 1024)

/* Parses a JSON literal written with single quotes for readability. */
static json_t *J(const char *text)
{
	char *s = strdup(text);
	assert_non_null(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	json_error_t err;
	json_t *v = json_loads(s, JSON_REJECT_DUPLICATES, &err);
	if (!v)
		fail_msg("bad test JSON at %d: %s: %s", err.position, err.text, s);
	free(s);
	return v;
}

/* ---------------------------------------------------------------- accessors */

static void test_objects_accessors_walk_paths(void **state)
{
	json_t *o = J("{'metadata':{'name':'n','namespace':'ns','uid':'u','labels':{'a':'1'},"
		      "'annotations':{'b':'2'}},'spec':{'x':{'y':'deep','n':3}}}");
	assert_string_equal(obj_name(o), "n");
	assert_string_equal(obj_namespace(o), "ns");
	assert_string_equal(obj_uid(o), "u");
	assert_string_equal(obj_label(o, "a"), "1");
	assert_null(obj_label(o, "b"));
	assert_string_equal(obj_annotation(o, "b"), "2");
	assert_string_equal(obj_str(o, "spec.x.y"), "deep");
	assert_null(obj_str(o, "spec.x.n")); /* not a string */
	assert_int_equal(json_integer_value(obj_path(o, "spec.x.n")), 3);
	assert_null(obj_path(o, "spec.missing.y"));
	assert_null(obj_path(o, "spec.x.y.z"));
	assert_null(obj_path(NULL, "spec"));
	assert_ptr_equal(obj_path(o, ""), o);
	json_decref(o);
}

/* Gates are objects named by "name", finalizers plain strings; one pair of helpers for both. */
static void test_objects_list_has_and_without(void **state)
{
	json_t *gates = J("[{'name':'a'},{'name':'ours'},{'name':7},'ours',{'name':'ours'}]");
	json_t *finalizers = J("['x','ours',{'name':'ours'},'y']");
	assert_true(obj_list_has(gates, "name", "ours"));
	assert_false(obj_list_has(gates, "name", "b"));
	assert_true(obj_list_has(finalizers, NULL, "ours"));
	assert_false(obj_list_has(finalizers, NULL, "a"));
	assert_false(obj_list_has(NULL, NULL, "ours"));
	json_t *not_a_list = J("{'name':'ours'}");
	assert_false(obj_list_has(not_a_list, "name", "ours"));
	json_decref(not_a_list);

	json_t *rest = obj_list_without(gates, "name", "ours");
	json_t *want = J("[{'name':'a'},{'name':7},'ours']");
	assert_true(json_equal(rest, want));
	json_decref(rest);
	json_decref(want);
	rest = obj_list_without(finalizers, NULL, "ours");
	want = J("['x',{'name':'ours'},'y']");
	assert_true(json_equal(rest, want));
	json_decref(rest);
	json_decref(want);
	/* Nothing to take from: an empty list, not NULL (NULL is out of memory). */
	rest = obj_list_without(NULL, NULL, "ours");
	assert_non_null(rest);
	assert_int_equal(json_array_size(rest), 0);
	json_decref(rest);
	json_decref(gates);
	json_decref(finalizers);
}

/* A cut in place (stolen in and want): cuts n fields of in, leaving want; then nothing more,
 * and nothing of NULL. */
static void expect_cut(size_t (*cut)(json_t *), json_t *in, json_t *want, size_t n)
{
	assert_int_equal(cut(in), n);
	assert_true(json_equal(in, want));
	assert_int_equal(cut(in), 0); /* nothing left to cut */
	assert_int_equal(cut(NULL), 0);
	json_decref(in);
	json_decref(want);
}

/* What muster reads of a container, cut in place: the one slimming ingest (Workloads), the
 * pod model (nodes.c) and a pod group's role shape (integration_pod.c) share. */
static void test_objects_slim_containers(void **state)
{
	json_t *list = J("[{'name':'c','image':'img','env':[{'name':'E'}],"
			 "'resources':{'requests':{'cpu':'1'}}},"
			 "{'name':'s','restartPolicy':'Always','command':['sh']}]");
	json_t *want = J("[{'name':'c','resources':{'requests':{'cpu':'1'}}},"
			 "{'name':'s','restartPolicy':'Always'}]");
	expect_cut(obj_slim_containers, list, want, 3);
}

/* A Workload's pod template as its compact store keeps it: every field something reads
 * (selectors, affinity, tolerations, gates, priority, overhead, the containers' requests, Kueue's
 * topology annotations), none of the others. */
static void test_objects_slim_pod_template(void **state)
{
	json_t *tmpl =
		J("{'metadata':{'labels':{'app':'x'},'annotations':{'example.com/a':'b',"
		  "'kueue.x-k8s.io/podset-required-topology':'rack'}},"
		  "'spec':{'restartPolicy':'Never','serviceAccountName':'trainer',"
		  "'nodeSelector':{'a':'b'},'affinity':{'nodeAffinity':{}},"
		  "'tolerations':[{'key':'k','operator':'Exists'}],'priorityClassName':'p',"
		  "'overhead':{'cpu':'1'},'schedulingGates':[{'name':'g'}],"
		  "'securityContext':{'runAsUser':1},'dnsPolicy':'ClusterFirst',"
		  "'volumes':[{'name':'data','emptyDir':{}}],"
		  "'containers':[{'name':'c','image':'img','resources':{'requests':{'cpu':'1'}}}],"
		  "'initContainers':[{'name':'i','image':'img'}]}}");
	json_t *want =
		J("{'metadata':{'annotations':{'kueue.x-k8s.io/podset-required-topology':'rack'}},"
		  "'spec':{'restartPolicy':'Never','nodeSelector':{'a':'b'},"
		  "'affinity':{'nodeAffinity':{}},'tolerations':[{'key':'k','operator':'Exists'}],"
		  "'priorityClassName':'p','overhead':{'cpu':'1'},'schedulingGates':[{'name':'g'}],"
		  "'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}],"
		  "'initContainers':[{'name':'i'}]}}");
	expect_cut(obj_slim_pod_template, tmpl, want, 8);
	/* Metadata left empty goes too. */
	expect_cut(obj_slim_pod_template,
		   J("{'metadata':{'labels':{'a':'b'},'annotations':{'x':'y'}},'spec':{}}"),
		   J("{'spec':{}}"), 4);
}

/* A Workload's own labels and annotations as its compact store keeps them: Kueue's only, and
 * none at all when none is Kueue's; no managedFields. */
static size_t slim_workload(json_t *wl)
{
	return json_slim_tree(wl, &obj_workload_rule);
}

static void test_objects_keep_kueue_keys(void **state)
{
	expect_cut(slim_workload,
		   J("{'metadata':{'name':'w','labels':{'kueue.x-k8s.io/queue-name':'q','app':'x',"
		     "'kueue.x-k8s.io/priority-class':'p','kueue.x-k8s.io.evil/x':'y',"
		     "'example.com/kueue.x-k8s.io/z':'w'},'managedFields':[{}]}}"),
		   J("{'metadata':{'name':'w','labels':{'kueue.x-k8s.io/queue-name':'q',"
		     "'kueue.x-k8s.io/priority-class':'p'}}}"),
		   4);
	expect_cut(slim_workload, J("{'metadata':{'name':'w','labels':{'app':'x'}}}"),
		   J("{'metadata':{'name':'w'}}"), 2);
	expect_cut(slim_workload, J("{'metadata':{'name':'w','annotations':{}}}"),
		   J("{'metadata':{'name':'w'}}"), 1);
}

static void test_objects_condition_get_and_true(void **state)
{
	json_t *o = J("{'status':{'conditions':[{'type':'Admitted','status':'True'},"
		      "{'type':'QuotaReserved','status':'False'}]}}");
	assert_non_null(condition_get(o, "Admitted"));
	assert_true(condition_true(o, "Admitted"));
	assert_false(condition_true(o, "QuotaReserved"));
	assert_false(condition_true(o, "Finished"));
	assert_null(condition_get(o, "Finished"));
	json_decref(o);
}

/* ---------------------------------------------------------------- conditions_with */

static void test_objects_conditions_with_adds_new_condition(void **state)
{
	json_t *o = J("{'metadata':{'generation':4},'status':{'conditions':["
		      "{'type':'Admitted','status':'False','reason':'Pending','message':'m',"
		      "'lastTransitionTime':'2020-01-01T00:00:00Z','observedGeneration':4}]}}");
	int changed = 0;
	json_t *c = conditions_with(o, "QuotaReserved", "True", "QuotaReserved", "ok", &changed);
	assert_non_null(c);
	assert_true(changed);
	assert_int_equal(json_array_size(c), 2);
	json_t *q = json_array_get(c, 1);
	assert_string_equal(json_string_value(json_object_get(q, "type")), "QuotaReserved");
	assert_string_equal(json_string_value(json_object_get(q, "status")), "True");
	assert_string_equal(json_string_value(json_object_get(q, "reason")), "QuotaReserved");
	assert_string_equal(json_string_value(json_object_get(q, "message")), "ok");
	assert_int_equal(json_integer_value(json_object_get(q, "observedGeneration")), 4);
	const char *t = json_string_value(json_object_get(q, "lastTransitionTime"));
	assert_non_null(t);
	assert_int_equal(strlen(t), 20); /* 2026-11-21T19:35:18Z */
	assert_int_equal(t[10], 'T');
	assert_int_equal(t[19], 'Z');
	assert_true(json_equal(json_array_get(c, 0), condition_get(o, "Admitted")));
	json_decref(c);
	json_decref(o);
}

static void test_objects_conditions_with_no_conditions_yet(void **state)
{
	json_t *o = J("{'metadata':{'name':'x'}}");
	int changed = 0;
	json_t *c =
		conditions_with(o, "Active", "True", "Ready", "Can admit new workloads", &changed);
	assert_true(changed);
	assert_int_equal(json_array_size(c), 1);
	json_decref(c);
	json_decref(o);
}

static void test_objects_conditions_with_unchanged_reports_no_change(void **state)
{
	json_t *o = J("{'metadata':{'generation':2},'status':{'conditions':["
		      "{'type':'Active','status':'True','reason':'Ready','message':'fine',"
		      "'lastTransitionTime':'2020-01-01T00:00:00Z','observedGeneration':2},"
		      "{'type':'Other','status':'False','reason':'R','message':'',"
		      "'lastTransitionTime':'2020-01-01T00:00:00Z','observedGeneration':2}]}}");
	int changed = 1;
	json_t *c = conditions_with(o, "Active", "True", "Ready", "fine", &changed);
	assert_non_null(c);
	assert_false(changed);
	/* Nothing to write means the array is the same, order included. */
	assert_true(json_equal(c, obj_path(o, "status.conditions")));
	json_decref(c);
	json_decref(o);
}

static void test_objects_conditions_with_same_status_keeps_transition_time(void **state)
{
	json_t *o = J("{'metadata':{'generation':1},'status':{'conditions':["
		      "{'type':'Active','status':'False','reason':'FlavorNotFound','message':'a',"
		      "'lastTransitionTime':'2020-01-01T00:00:00Z','observedGeneration':1}]}}");
	int changed = 0;
	json_t *c = conditions_with(o, "Active", "False", "AdmissionCheckNotFound", "b", &changed);
	assert_true(changed);
	json_t *a = json_array_get(c, 0);
	assert_string_equal(json_string_value(json_object_get(a, "reason")),
			    "AdmissionCheckNotFound");
	assert_string_equal(json_string_value(json_object_get(a, "lastTransitionTime")),
			    "2020-01-01T00:00:00Z");
	json_decref(c);
	json_decref(o);
}

static void test_objects_conditions_with_status_flip_sets_new_transition_time(void **state)
{
	json_t *o = J("{'metadata':{'generation':1},'status':{'conditions':["
		      "{'type':'Active','status':'False','reason':'FlavorNotFound','message':'a',"
		      "'lastTransitionTime':'2020-01-01T00:00:00Z','observedGeneration':1}]}}");
	int changed = 0;
	json_t *c = conditions_with(o, "Active", "True", "Ready", "ok", &changed);
	assert_true(changed);
	assert_int_equal(json_array_size(c), 1);
	json_t *a = json_array_get(c, 0);
	assert_string_equal(json_string_value(json_object_get(a, "status")), "True");
	assert_string_not_equal(json_string_value(json_object_get(a, "lastTransitionTime")),
				"2020-01-01T00:00:00Z");
	json_decref(c);
	json_decref(o);
}

static void test_objects_conditions_with_replaces_in_place(void **state)
{
	json_t *o = J("{'status':{'conditions':["
		      "{'type':'A','status':'True','reason':'r','message':''},"
		      "{'type':'B','status':'True','reason':'r','message':''},"
		      "{'type':'C','status':'True','reason':'r','message':''}]}}");
	int changed = 0;
	json_t *c = conditions_with(o, "B", "False", "r2", "m", &changed);
	assert_true(changed);
	assert_int_equal(json_array_size(c), 3);
	/* metav1 condition lists keep their order; only B's content changes. */
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 0), "type")), "A");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 1), "type")), "B");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 1), "status")),
			    "False");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 2), "type")), "C");
	json_decref(c);
	json_decref(o);
}

static void test_objects_conditions_with_new_generation_is_a_change(void **state)
{
	json_t *o = J("{'metadata':{'generation':3},'status':{'conditions':["
		      "{'type':'Active','status':'True','reason':'Ready','message':'fine',"
		      "'lastTransitionTime':'2020-01-01T00:00:00Z','observedGeneration':2}]}}");
	int changed = 0;
	json_t *c = conditions_with(o, "Active", "True", "Ready", "fine", &changed);
	assert_true(changed);
	json_t *a = json_array_get(c, 0);
	assert_int_equal(json_integer_value(json_object_get(a, "observedGeneration")), 3);
	assert_string_equal(json_string_value(json_object_get(a, "lastTransitionTime")),
			    "2020-01-01T00:00:00Z");
	json_decref(c);
	json_decref(o);
}

/* ---------------------------------------------------------------- quantities */

static void test_objects_quantity_from_json_strings_and_numbers(void **state)
{
	int64_t m = 0;
	json_t *v = json_string("1.5Gi");
	assert_int_equal(quantity_from_json(v, &m), 0);
	assert_true(m == GI(1) + MI(512));
	json_decref(v);
	v = json_integer(3);
	assert_int_equal(quantity_from_json(v, &m), 0);
	assert_int_equal(m, 3000);
	json_decref(v);
	v = json_real(0.25);
	assert_int_equal(quantity_from_json(v, &m), 0);
	assert_int_equal(m, 250);
	json_decref(v);
	/* 0.1 has no exact double: read as written (100m), not from its 17-digit text (101m). */
	v = json_real(0.1);
	assert_int_equal(quantity_from_json(v, &m), 0);
	assert_int_equal(m, 100);
	json_decref(v);
	v = json_string("2 cores");
	m = 42;
	assert_int_equal(quantity_from_json(v, &m), -EINVAL);
	assert_int_equal(m, 42);
	json_decref(v);
	v = json_string("100Ei");
	assert_int_equal(quantity_from_json(v, &m), -ERANGE);
	json_decref(v);
	assert_int_equal(quantity_from_json(NULL, &m), -EINVAL);
	v = json_true();
	assert_int_equal(quantity_from_json(v, &m), -EINVAL);
}

static void test_objects_quantity_to_string_canonical(void **state)
{
	char buf[32];
	quantity_to_string("cpu", 16000, buf, sizeof(buf));
	assert_string_equal(buf, "16");
	quantity_to_string("cpu", 500, buf, sizeof(buf));
	assert_string_equal(buf, "500m");
	quantity_to_string("nvidia.com/gpu", 0, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	/* Byte-valued resources print in binary SI where exact. */
	quantity_to_string("memory", GI(1) + MI(512), buf, sizeof(buf));
	assert_string_equal(buf, "1536Mi");
	quantity_to_string("memory", MILLI(1000), buf, sizeof(buf));
	assert_string_equal(buf, "1k");
}

/* ---------------------------------------------------------------- pod requests */

static int64_t req_of(const struct pod_requests *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->names[i], name))
			return r->milli[i];
	return -1;
}

/* The template of the last requests_ok: its requests borrow its keys until requests_done. */
static json_t *requests_template;

static void requests_ok(const char *template, struct pod_requests *r)
{
	json_t *t = J(template);
	char err[256] = "";
	int rc = eobj_pod_requests(json_object_get(t, "spec"), "spec", r, err, sizeof(err));
	if (rc != 0)
		fail_msg("eobj_pod_requests: %d %s", rc, err);
	requests_template = t;
}

static void requests_done(struct pod_requests *r)
{
	pod_requests_release(r);
	json_decref(requests_template);
	requests_template = NULL;
}

static void test_objects_pod_requests_sums_containers(void **state)
{
	struct pod_requests r;
	requests_ok("{'spec':{'containers':["
		    "{'name':'a','resources':{'requests':{'cpu':'500m','memory':'1Gi'}}},"
		    "{'name':'b','resources':{'requests':{'cpu':1,'memory':'512Mi',"
		    "'nvidia.com/gpu':'2'}}}]}}",
		    &r);
	assert_int_equal(r.n, 3);
	assert_int_equal(req_of(&r, "cpu"), 1500);
	assert_true(req_of(&r, "memory") == GI(1) + MI(512));
	assert_int_equal(req_of(&r, "nvidia.com/gpu"), MILLI(2));
	requests_done(&r);
	assert_int_equal(r.n, 0);
}

static void test_objects_pod_requests_limits_fill_missing_requests(void **state)
{
	struct pod_requests r;
	requests_ok("{'spec':{'containers':[{'name':'a','resources':{"
		    "'requests':{'memory':'1Gi'},"
		    "'limits':{'cpu':'2','memory':'4Gi','nvidia.com/gpu':1}}}]}}",
		    &r);
	assert_int_equal(r.n, 3);
	assert_int_equal(req_of(&r, "cpu"), MILLI(2));
	assert_true(req_of(&r, "memory") == GI(1)); /* the request wins over the limit */
	assert_int_equal(req_of(&r, "nvidia.com/gpu"), MILLI(1));
	requests_done(&r);
}

static void test_objects_pod_requests_init_containers_max(void **state)
{
	struct pod_requests r;
	requests_ok("{'spec':{'containers':[{'name':'a','resources':{'requests':"
		    "{'cpu':'1','memory':'1Gi'}}}],"
		    "'initContainers':["
		    "{'name':'i1','resources':{'requests':{'cpu':'3'}}},"
		    "{'name':'i2','resources':{'requests':{'cpu':'2','memory':'2Gi',"
		    "'example.com/dongle':'1'}}}]}}",
		    &r);
	assert_int_equal(req_of(&r, "cpu"), MILLI(3));
	assert_true(req_of(&r, "memory") == GI(2));
	assert_int_equal(req_of(&r, "example.com/dongle"), MILLI(1));
	requests_done(&r);

	requests_ok("{'spec':{'containers':[{'name':'a','resources':{'requests':{'cpu':'4'}}}],"
		    "'initContainers':[{'name':'i','resources':{'requests':{'cpu':'500m'}}}]}}",
		    &r);
	assert_int_equal(req_of(&r, "cpu"), MILLI(4));
	requests_done(&r);
}

static void test_objects_pod_requests_sidecars_added(void **state)
{
	struct pod_requests r;
	/* A sidecar runs next to the main containers; an init container after it runs next to
	 * the sidecar: max(1 + 0.5, 1.2 + 0.5) = 1.7 CPUs. */
	requests_ok("{'spec':{'containers':[{'name':'a','resources':{'requests':{'cpu':'1'}}}],"
		    "'initContainers':["
		    "{'name':'proxy','restartPolicy':'Always','resources':{'requests':{'cpu':'500m'"
		    "}}},"
		    "{'name':'setup','resources':{'requests':{'cpu':'1200m'}}}]}}",
		    &r);
	assert_int_equal(req_of(&r, "cpu"), 1700);
	requests_done(&r);

	requests_ok("{'spec':{'containers':[{'name':'a','resources':{'requests':{'cpu':'1'}}}],"
		    "'initContainers':["
		    "{'name':'proxy','restartPolicy':'Always','resources':{'requests':{'cpu':'500m'"
		    "}}},"
		    "{'name':'setup','resources':{'requests':{'cpu':'200m'}}}]}}",
		    &r);
	assert_int_equal(req_of(&r, "cpu"), 1500);
	requests_done(&r);
}

static void test_objects_pod_requests_init_before_sidecar_not_stacked(void **state)
{
	struct pod_requests r;
	/* Kubernetes: max(containers + all sidecars, each init + sidecars started before it).
	 * The 10-CPU init container runs before the sidecar exists: max(1 + 1, 10) = 10, not 11. */
	requests_ok("{'spec':{'containers':[{'name':'a','resources':{'requests':{'cpu':'1'}}}],"
		    "'initContainers':["
		    "{'name':'big','resources':{'requests':{'cpu':'10'}}},"
		    "{'name':'proxy','restartPolicy':'Always','resources':{'requests':{'cpu':'1'}}}"
		    "]}}",
		    &r);
	assert_int_equal(req_of(&r, "cpu"), MILLI(10));
	requests_done(&r);

	/* Sidecars that outgrow an earlier init container do count in full: max(1 + 4 + 4, 6). */
	requests_ok("{'spec':{'containers':[{'name':'a','resources':{'requests':{'cpu':'1'}}}],"
		    "'initContainers':["
		    "{'name':'s1','restartPolicy':'Always','resources':{'requests':{'cpu':'4'}}},"
		    "{'name':'big','resources':{'requests':{'cpu':'2'}}},"
		    "{'name':'s2','restartPolicy':'Always','resources':{'requests':{'cpu':'4'}}}]}"
		    "}",
		    &r);
	assert_int_equal(req_of(&r, "cpu"), MILLI(9));
	requests_done(&r);
}

static void test_objects_pod_requests_overhead_added(void **state)
{
	struct pod_requests r;
	requests_ok("{'spec':{'containers':[{'name':'a','resources':{'requests':{'cpu':'1'}}}],"
		    "'initContainers':[{'name':'i','resources':{'requests':{'cpu':'3'}}}],"
		    "'overhead':{'cpu':'250m','memory':'120Mi'}}}",
		    &r);
	/* Overhead comes on top of the init-container max. */
	assert_int_equal(req_of(&r, "cpu"), 3250);
	assert_true(req_of(&r, "memory") == MI(120));
	requests_done(&r);
}

static void test_objects_pod_requests_zero_requests_dropped(void **state)
{
	struct pod_requests r;
	requests_ok("{'spec':{'containers':[{'name':'a','resources':{'requests':"
		    "{'cpu':'0','memory':'1Gi','nvidia.com/gpu':'0','ephemeral-storage':0}}}]}}",
		    &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(req_of(&r, "cpu"), -1);
	assert_true(req_of(&r, "memory") == GI(1));
	requests_done(&r);

	requests_ok("{'spec':{'containers':[{'name':'a'}]}}", &r);
	assert_int_equal(r.n, 0);
	requests_done(&r);
}

static void test_objects_pod_requests_invalid_quantity_error(void **state)
{
	struct pod_requests r;
	char err[256] = "";
	json_t *t = J("{'spec':{'containers':[{'name':'a','resources':{'requests':"
		      "{'cpu':'1','memory':'lots'}}}]}}");
	assert_int_equal(eobj_pod_requests(json_object_get(t, "spec"), "spec", &r, err,
					   sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "memory"));
	assert_int_equal(r.n, 0);
	json_decref(t);

	t = J("{'spec':{'containers':[{'name':'a'}],'initContainers':[{'name':'i','resources':"
	      "{'limits':{'cpu':'1x'}}}]}}");
	assert_int_equal(eobj_pod_requests(json_object_get(t, "spec"), "spec", &r, err,
					   sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "cpu"));
	assert_int_equal(r.n, 0);
	json_decref(t);
}

static void test_objects_pod_requests_sum_overflow_erange(void **state)
{
	struct pod_requests r;
	char err[256] = "";
	json_t *t = J("{'spec':{'containers':["
		      "{'name':'a','resources':{'requests':{'memory':'8Pi'}}},"
		      "{'name':'b','resources':{'requests':{'memory':'8Pi'}}}]}}");
	assert_int_equal(eobj_pod_requests(json_object_get(t, "spec"), "spec", &r, err,
					   sizeof(err)),
			 -ERANGE);
	assert_int_equal(r.n, 0);
	json_decref(t);

	/* An init container stacked on a sidecar overflows the same way. */
	t = J("{'spec':{'containers':[{'name':'a'}],'initContainers':["
	      "{'name':'s','restartPolicy':'Always','resources':{'requests':{'memory':'8Pi'}}},"
	      "{'name':'i','resources':{'requests':{'memory':'8Pi'}}}]}}");
	assert_int_equal(eobj_pod_requests(json_object_get(t, "spec"), "spec", &r, err,
					   sizeof(err)),
			 -ERANGE);
	assert_non_null(strstr(err, "memory"));
	assert_int_equal(r.n, 0);
	json_decref(t);
}

/* A template's quantities are checked and summed in one walk; a field that is wrong is still
 * named before a sum that overflows, and the overflow is named at the spec's path. */
static void test_objects_template_field_error_before_sum_error(void **state)
{
	char err[256] = "";
	json_t *t = J("{'spec':{'containers':["
		      "{'name':'a','resources':{'requests':{'memory':'8Pi'}}},"
		      "{'name':'b','resources':{'requests':{'memory':'8Pi'}}}],"
		      "'nodeSelector':{'zone':7}}}");
	assert_int_equal(eobj_check_template(t, "tpl", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "tpl.spec.nodeSelector.zone: must be a string, not a number");
	json_object_del(json_object_get(t, "spec"), "nodeSelector");
	assert_int_equal(eobj_check_template(t, "tpl", err, sizeof(err)), -ERANGE);
	assert_string_equal(err, "tpl.spec: requests for memory overflow");
	/* Quietly (no message wanted), the same answers. */
	assert_int_equal(eobj_check_template(t, "tpl", NULL, 0), -ERANGE);
	json_decref(t);
}

/* ---------------------------------------------------------------- workload names */

/* Kueue's GetWorkloadNameForOwnerWithGVK, written out independently of the module. */
static void kueue_workload_name(const char *name, const char *uid, char *out, size_t size)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	assert_non_null(ctx);
	/* The Go code writes the parts one by one: Kind, "\n", Group, "\n", name, "\n", uid. */
	const char *parts[] = { "Job", "\n", "batch", "\n", name, "\n", uid };
	assert_true(EVP_DigestInit_ex(ctx, EVP_sha1(), NULL));
	for (size_t i = 0; i < 7; i++)
		assert_true(EVP_DigestUpdate(ctx, parts[i], strlen(parts[i])));
	assert_true(EVP_DigestFinal_ex(ctx, md, &md_len));
	EVP_MD_CTX_free(ctx);
	for (unsigned int i = 0; i < md_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	char prefixed[1024];
	snprintf(prefixed, sizeof(prefixed), "job-%s", name);
	if (strlen(prefixed) > 247) /* maxPrefixLength = 252 - hashLength */
		prefixed[247] = '\0';
	snprintf(out, size, "%s-%.5s", prefixed, hex);
}

static void test_objects_workload_name_matches_kueue_known_value(void **state)
{
	char buf[300];
	/* Computed with Python's hashlib from Kueue's algorithm. */
	assert_int_equal(integration_workload_name(&integration_job, "sample-job",
						   "6e0f3d3c-7a36-4b38-9f0a-2d9a5c0c1f55", buf,
						   sizeof(buf)),
			 0);
	assert_string_equal(buf, "job-sample-job-aa672");
}

static void test_objects_workload_name_matches_kueue_sha1(void **state)
{
	char name300[301];
	memset(name300, 'a', 300);
	name300[300] = '\0';
	char name243[244];
	memset(name243, 'b', 243);
	name243[243] = '\0';
	char name244[245];
	memset(name244, 'c', 244);
	name244[244] = '\0';
	const char *names[] = { "pi", "sample-job", "x", name243, name244, name300 };
	const char *uids[] = { "0b1d4a7e-0000-4000-8000-000000000001", "uid", "" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (size_t u = 0; u < 3; u++) {
			char got[300], want[300];
			assert_int_equal(integration_workload_name(&integration_job, names[i],
								   uids[u], got, sizeof(got)),
					 0);
			kueue_workload_name(names[i], uids[u], want, sizeof(want));
			assert_string_equal(got, want);
			assert_true(strlen(got) <= 253);
		}
	}
	char got[300];
	assert_int_equal(integration_workload_name(&integration_job, name300, "uid-1", got,
						   sizeof(got)),
			 0);
	assert_int_equal(strlen(got), 253);
	assert_int_equal(strncmp(got, "job-aaaa", 8), 0);
	assert_string_equal(got + 247, "-1e11d"); /* also from hashlib */
}

static void test_objects_workload_name_small_buffer_enospc(void **state)
{
	char buf[10];
	assert_int_equal(integration_workload_name(&integration_job, "sample-job", "u", buf,
						   sizeof(buf)),
			 -ENOSPC);
}

/* ---------------------------------------------------------------- workload_new_for_job */

static json_t *job_with(const char *spec_extra)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'sample-job',"
		 "'namespace':'team-a','uid':'6e0f3d3c-7a36-4b38-9f0a-2d9a5c0c1f55',"
		 "'labels':{'kueue.x-k8s.io/queue-name':'user-queue'}},"
		 "'spec':{%s%s'template':{'metadata':{'labels':{'app':'sample',"
		 "'controller-uid':'6e0f3d3c-7a36-4b38-9f0a-2d9a5c0c1f55',"
		 "'batch.kubernetes.io/controller-uid':'6e0f3d3c-7a36-4b38-9f0a-2d9a5c0c1f55',"
		 "'job-name':'sample-job','batch.kubernetes.io/job-name':'sample-job'}},"
		 "'spec':{'restartPolicy':'Never','containers':[{'name':'main','image':'busybox',"
		 "'resources':{'requests':{'cpu':'1'}}}]}}}}",
		 spec_extra, *spec_extra ? "," : "");
	return J(text);
}

static int64_t count_for(const char *spec_extra)
{
	json_t *job = job_with(spec_extra);
	char err[256];
	json_t *wl = integration_workload_new(&integration_job, job, err, sizeof(err));
	if (!wl)
		fail_msg("workload_new_for_job: %s", err);
	json_t *ps = json_array_get(obj_path(wl, "spec.podSets"), 0);
	int64_t count = (int64_t)json_integer_value(json_object_get(ps, "count"));
	assert_true(json_is_integer(json_object_get(ps, "count")));
	json_decref(wl);
	json_decref(job);
	return count;
}

static void test_objects_workload_count_min_parallelism_completions(void **state)
{
	assert_int_equal(count_for(""), 1);
	assert_int_equal(count_for("'parallelism':3,'completions':5"), 3);
	assert_int_equal(count_for("'parallelism':4,'completions':2"), 2);
	assert_int_equal(count_for("'parallelism':5"), 5); /* completions defaults to parallelism */
	assert_int_equal(count_for("'completions':4"), 1); /* parallelism defaults to 1 */
	assert_int_equal(count_for("'parallelism':8,'completions':8"), 8);
	assert_int_equal(count_for("'parallelism':0,'completions':3"), 0);
	assert_int_equal(count_for("'parallelism':2,'completions':null"), 2);
}

static void test_objects_workload_for_job_shape(void **state)
{
	json_t *job = job_with("'parallelism':8,'completions':8");
	json_t *before = json_deep_copy(job);
	char err[256];
	json_t *wl = integration_workload_new(&integration_job, job, err, sizeof(err));
	assert_non_null(wl);
	assert_string_equal(obj_str(wl, "apiVersion"), "kueue.x-k8s.io/v1beta2");
	assert_string_equal(obj_str(wl, "kind"), "Workload");
	assert_string_equal(obj_name(wl), "job-sample-job-aa672");
	assert_string_equal(obj_namespace(wl), "team-a");
	assert_string_equal(obj_label(wl, LABEL_JOB_UID), "6e0f3d3c-7a36-4b38-9f0a-2d9a5c0c1f55");
	assert_string_equal(obj_str(wl, "spec.queueName"), "user-queue");

	json_t *owners = obj_path(wl, "metadata.ownerReferences");
	assert_int_equal(json_array_size(owners), 1);
	json_t *o = json_array_get(owners, 0);
	assert_string_equal(json_string_value(json_object_get(o, "apiVersion")), "batch/v1");
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "Job");
	assert_string_equal(json_string_value(json_object_get(o, "name")), "sample-job");
	assert_string_equal(json_string_value(json_object_get(o, "uid")),
			    "6e0f3d3c-7a36-4b38-9f0a-2d9a5c0c1f55");
	assert_true(json_is_true(json_object_get(o, "controller")));
	assert_true(json_is_true(json_object_get(o, "blockOwnerDeletion")));

	json_t *sets = obj_path(wl, "spec.podSets");
	assert_int_equal(json_array_size(sets), 1);
	json_t *ps = json_array_get(sets, 0);
	assert_string_equal(json_string_value(json_object_get(ps, "name")), "main");
	assert_int_equal(json_integer_value(json_object_get(ps, "count")), 8);
	json_t *labels = obj_path(json_object_get(ps, "template"), "metadata.labels");
	assert_int_equal(json_object_size(labels), 1);
	assert_string_equal(json_string_value(json_object_get(labels, "app")), "sample");
	assert_string_equal(obj_str(json_object_get(ps, "template"), "spec.restartPolicy"),
			    "Never");
	/* The Job itself is untouched: the template was copied, not stripped in place. */
	assert_true(json_equal(job, before));
	json_decref(before);
	json_decref(wl);
	json_decref(job);
}

static void test_objects_workload_for_job_without_queue_or_template_fails(void **state)
{
	char err[256] = "";
	json_t *job = J("{'metadata':{'name':'j','namespace':'ns','uid':'u'},"
			"'spec':{'template':{'spec':{'containers':[]}}}}");
	assert_null(integration_workload_new(&integration_job, job, err, sizeof(err)));
	assert_true(strlen(err) > 0);
	json_decref(job);

	err[0] = '\0';
	job = J("{'metadata':{'name':'j','namespace':'ns','uid':'u',"
		"'labels':{'kueue.x-k8s.io/queue-name':'q'}},'spec':{}}");
	assert_null(integration_workload_new(&integration_job, job, err, sizeof(err)));
	assert_non_null(strstr(err, "template"));
	json_decref(job);

	job = J("{'metadata':{'name':'j','namespace':'ns','uid':'u',"
		"'labels':{'kueue.x-k8s.io/queue-name':''}},'spec':{'template':{}}}");
	assert_null(integration_workload_new(&integration_job, job, err, sizeof(err)));
	json_decref(job);
}

/* ---------------------------------------------------------------- podset views */

static void test_objects_podset_view_decode_fields(void **state)
{
	json_t *ps =
		J("{'name':'workers','count':4,'template':{'spec':{"
		  "'nodeSelector':{'gpu.example.com/model':'h100','ignored':7},"
		  "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
		  "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'zone','operator':'In',"
		  "'values':['a','b']},{'key':'gpu.example.com/model','operator':'NotIn',"
		  "'values':['a100']}]},"
		  "{'matchFields':[{'key':'metadata.name','operator':'In',"
		  "'values':['node-1']}]},"
		  "{'matchExpressions':[{'key':'big','operator':'Exists'}]}]}}},"
		  "'tolerations':[{'key':'nvidia.com/gpu','operator':'Exists',"
		  "'effect':'NoSchedule'},{'key':'spot','value':'true'}],"
		  "'containers':[{'name':'c','resources':{'requests':{'cpu':'2'},"
		  "'limits':{'nvidia.com/gpu':'1'}}}]}}}");
	struct podset_view v;
	char err[256] = "";
	if (podset_view_decode(ps, &v, err, sizeof(err)) != 0)
		fail_msg("podset_view_decode: %s", err);
	assert_string_equal(v.name, "workers");
	assert_int_equal(v.ps.count, 4);

	/* The requests are the pod's effective ones, shared with v.requests. */
	assert_int_equal(v.ps.n_requests, 2);
	assert_ptr_equal(v.ps.resources, v.requests.names);
	assert_ptr_equal(v.ps.per_pod, v.requests.milli);
	for (size_t i = 0; i < v.ps.n_requests; i++) {
		if (!strcmp(v.ps.resources[i], "cpu"))
			assert_int_equal(v.ps.per_pod[i], MILLI(2));
		else if (!strcmp(v.ps.resources[i], "nvidia.com/gpu"))
			assert_int_equal(v.ps.per_pod[i], MILLI(1));
		else
			fail_msg("unexpected resource %s", v.ps.resources[i]);
	}

	/* A nodeSelector value that is no string is not a constraint. */
	assert_int_equal(v.ps.n_selector, 1);
	assert_string_equal(v.ps.node_selector[0].key, "gpu.example.com/model");
	assert_string_equal(v.ps.node_selector[0].value, "h100");

	assert_int_equal(v.ps.n_terms, 3);
	const struct quota_affinity_term *t = v.ps.terms;
	assert_int_equal(t[0].n_exprs, 2);
	assert_false(t[0].has_match_fields);
	assert_string_equal(t[0].exprs[0].key, "zone");
	assert_string_equal(t[0].exprs[0].op, "In");
	assert_int_equal(t[0].exprs[0].n_values, 2);
	assert_string_equal(t[0].exprs[0].values[0], "a");
	assert_string_equal(t[0].exprs[0].values[1], "b");
	assert_string_equal(t[0].exprs[1].op, "NotIn");
	assert_string_equal(t[0].exprs[1].values[0], "a100");
	/* matchFields are only flagged: node names are for the node to decide. */
	assert_int_equal(t[1].n_exprs, 0);
	assert_true(t[1].has_match_fields);
	assert_int_equal(t[2].n_exprs, 1);
	assert_string_equal(t[2].exprs[0].op, "Exists");
	assert_int_equal(t[2].exprs[0].n_values, 0);

	assert_int_equal(v.ps.n_tolerations, 2);
	assert_string_equal(v.ps.tolerations[0].key, "nvidia.com/gpu");
	assert_null(v.ps.tolerations[0].value);
	assert_string_equal(v.ps.tolerations[0].effect, "NoSchedule");
	assert_true(v.ps.tolerations[0].exists);
	assert_string_equal(v.ps.tolerations[1].key, "spot");
	assert_string_equal(v.ps.tolerations[1].value, "true");
	assert_null(v.ps.tolerations[1].effect); /* any effect */
	assert_false(v.ps.tolerations[1].exists); /* no operator means Equal */
	podset_view_release(&v);
	json_decref(ps);
}

static void test_objects_podset_view_decode_defaults_and_errors(void **state)
{
	json_t *ps = J("{'template':{'spec':{'containers':[{'name':'c'}]}}}");
	struct podset_view v;
	char err[256] = "";
	assert_int_equal(podset_view_decode(ps, &v, err, sizeof(err)), 0);
	assert_string_equal(v.name, "main");
	assert_int_equal(v.ps.count, 1);
	assert_int_equal(v.ps.n_requests, 0);
	podset_view_release(&v);
	json_decref(ps);

	ps = J("{'name':'x','template':{'spec':{'affinity':{'nodeAffinity':{"
	       "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':["
	       "{'matchExpressions':[{'operator':'In','values':['a']}]}]}}},"
	       "'containers':[{'name':'c'}]}}}");
	assert_int_equal(podset_view_decode(ps, &v, err, sizeof(err)), -EINVAL);
	assert_true(strlen(err) > 0);
	json_decref(ps);

	ps = J("{'name':'x','template':{'spec':{'containers':[{'name':'c','resources':"
	       "{'requests':{'cpu':'1x1'}}}]}}}");
	assert_int_equal(podset_view_decode(ps, &v, err, sizeof(err)), -EINVAL);
	json_decref(ps);
}

/* --- RFC 3339 ------------------------------------------------------------------------------ */

/* One table for both entry points, with what Go's time.Parse(time.RFC3339, ...) (how a
 * metav1.Time is read) answers: the ms value is the ns value floored, for every input. The
 * first rows are the inputs the two former parsers disagreed on. */
static void test_objects_rfc3339_one_parser(void **state)
{
	static const struct {
		const char *in;
		int ok;
		int64_t ns;
	} rows[] = {
		{ "2026-11-21T19:35:18+01:00", 1, INT64_C(1795286118) * 1000000000 },
		{ "2025-01-01T00:00:60Z", 0, 0 },
		{ "2025-02-30T00:00:00Z", 0, 0 },
		{ "2025-01-02t03:04:05z", 0, 0 },
		{ "1970-01-01T00:00:00Z", 1, 0 },
		{ "2025-01-02T03:04:05Z", 1, INT64_C(1735787045) * 1000000000 },
		{ "2025-01-02T03:04:05.5Z", 1, INT64_C(1735787045) * 1000000000 + 500000000 },
		{ "2025-01-02T03:04:05.123456789123Z", 1,
		  INT64_C(1735787045) * 1000000000 + 123456789 },
		{ "2025-01-02T05:04:05+02:00", 1, INT64_C(1735787045) * 1000000000 },
		{ "2025-01-01T22:04:05-05:00", 1, INT64_C(1735787045) * 1000000000 },
		{ "2024-02-29T00:00:00Z", 1, INT64_C(1709164800) * 1000000000 },
		{ "2000-02-29T00:00:00Z", 1, INT64_C(951782400) * 1000000000 },
		{ "1969-12-31T23:59:59.5Z", 1, -500000000 },
		{ "2025-01-01T00:00:00+23:59", 1, INT64_C(1735603260) * 1000000000 },
		{ "", 0, 0 },
		{ "yesterday", 0, 0 },
		{ "2025-01-02", 0, 0 },
		{ "2025-01-02T03:04:05", 0, 0 },
		{ "2025-01-02 03:04:05Z", 0, 0 },
		{ "2025-13-01T00:00:00Z", 0, 0 },
		{ "1900-02-29T00:00:00Z", 0, 0 },
		{ "2025-04-31T00:00:00Z", 0, 0 },
		{ "2025-01-00T00:00:00Z", 0, 0 },
		{ "2025-01-01T24:00:00Z", 0, 0 },
		{ "2025-01-01T00:60:00Z", 0, 0 },
		{ "2025-01-01T00:00:00.Z", 0, 0 },
		{ "2025-01-01T00:00:00,5Z", 0, 0 },
		{ "2025-01-01T00:00:00+0200", 0, 0 },
		{ "2025-01-01T00:00:00+24:00", 0, 0 },
		{ "2025-01-01T00:00:00+02:60", 0, 0 },
		{ "2025-01-01T00:00:00Zjunk", 0, 0 },
		{ "25-01-01T00:00:00Z", 0, 0 },
		{ "2025-1-01T00:00:00Z", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int64_t ns = -1, ms = -1;
		int rns = time_parse_rfc3339_ns(rows[i].in, &ns);
		int rms = time_parse_rfc3339(rows[i].in, &ms);
		if (rns != (rows[i].ok ? 0 : -EINVAL) || rms != rns)
			fail_msg("\"%s\": ns %d, ms %d, want %s", rows[i].in, rns, rms,
				 rows[i].ok ? "accepted" : "refused");
		if (!rows[i].ok)
			continue;
		if (ns != rows[i].ns)
			fail_msg("\"%s\": %lld ns, want %lld", rows[i].in, (long long)ns,
				 (long long)rows[i].ns);
		int64_t floor_ms = ns / 1000000 - (ns % 1000000 < 0);
		if (ms != floor_ms)
			fail_msg("\"%s\": %lld ms, want %lld", rows[i].in, (long long)ms,
				 (long long)floor_ms);
	}
	/* Beyond int64 ns (after 2262): refused by both. */
	int64_t v;
	assert_int_equal(time_parse_rfc3339_ns("9999-01-01T00:00:00Z", &v), -EINVAL);
	assert_int_equal(time_parse_rfc3339("9999-01-01T00:00:00Z", &v), -EINVAL);
	assert_int_equal(time_parse_rfc3339(NULL, &v), -EINVAL);
	assert_int_equal(time_parse_rfc3339_ns(NULL, &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_objects_accessors_walk_paths),
		cmocka_unit_test(test_objects_list_has_and_without),
		cmocka_unit_test(test_objects_slim_containers),
		cmocka_unit_test(test_objects_slim_pod_template),
		cmocka_unit_test(test_objects_keep_kueue_keys),
		cmocka_unit_test(test_objects_condition_get_and_true),
		cmocka_unit_test(test_objects_conditions_with_adds_new_condition),
		cmocka_unit_test(test_objects_conditions_with_no_conditions_yet),
		cmocka_unit_test(test_objects_conditions_with_unchanged_reports_no_change),
		cmocka_unit_test(test_objects_conditions_with_same_status_keeps_transition_time),
		cmocka_unit_test(test_objects_conditions_with_status_flip_sets_new_transition_time),
		cmocka_unit_test(test_objects_conditions_with_replaces_in_place),
		cmocka_unit_test(test_objects_conditions_with_new_generation_is_a_change),
		cmocka_unit_test(test_objects_quantity_from_json_strings_and_numbers),
		cmocka_unit_test(test_objects_quantity_to_string_canonical),
		cmocka_unit_test(test_objects_pod_requests_sums_containers),
		cmocka_unit_test(test_objects_pod_requests_limits_fill_missing_requests),
		cmocka_unit_test(test_objects_pod_requests_init_containers_max),
		cmocka_unit_test(test_objects_pod_requests_sidecars_added),
		cmocka_unit_test(test_objects_pod_requests_init_before_sidecar_not_stacked),
		cmocka_unit_test(test_objects_pod_requests_overhead_added),
		cmocka_unit_test(test_objects_pod_requests_zero_requests_dropped),
		cmocka_unit_test(test_objects_pod_requests_invalid_quantity_error),
		cmocka_unit_test(test_objects_pod_requests_sum_overflow_erange),
		cmocka_unit_test(test_objects_template_field_error_before_sum_error),
		cmocka_unit_test(test_objects_workload_name_matches_kueue_known_value),
		cmocka_unit_test(test_objects_workload_name_matches_kueue_sha1),
		cmocka_unit_test(test_objects_workload_name_small_buffer_enospc),
		cmocka_unit_test(test_objects_workload_count_min_parallelism_completions),
		cmocka_unit_test(test_objects_workload_for_job_shape),
		cmocka_unit_test(test_objects_workload_for_job_without_queue_or_template_fails),
		cmocka_unit_test(test_objects_podset_view_decode_fields),
		cmocka_unit_test(test_objects_podset_view_decode_defaults_and_errors),
		cmocka_unit_test(test_objects_rfc3339_one_parser),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
