/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for api/engine_objects: every field each decoder reads, and every error path with
 * its exact message (the simulator prints them to people). Also yamljson_load_lines, which the
 * simulator added for its FILE:LINE messages.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "api/integrations.h"
#include "api/engine_objects.h"
#include "util/json_arena.h"
#include "util/yamljson.h"

#define MILLI(x) ((int64_t)(x)*1000)
#define GI(x) ((int64_t)(x)*1024 * 1024 * 1024 * 1000)

/* Parses a JSON literal written with single quotes for readability. */
static json_t *J(const char *text)
{
	char *s = strdup(text);
	assert_non_null(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	json_error_t err;
	json_t *v = json_loads(s, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
	if (!v)
		fail_msg("bad test JSON at %d: %s: %s", err.position, err.text, s);
	free(s);
	return v;
}

/* ---------------------------------------------------------------- ResourceFlavor */

static void test_flavor_every_field(void **state)
{
	json_t *o =
		J("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
		  "'metadata':{'name':'spot'},'spec':{'nodeLabels':{'instance':'spot','zone':'a'},"
		  "'nodeTaints':[{'key':'spot','value':'true','effect':'NoSchedule'},"
		  "{'key':'gpu','effect':'NoExecute'}],"
		  "'tolerations':[{'key':'spot','operator':'Equal','value':'true','effect':'"
		  "NoSchedule'},"
		  "{'operator':'Exists'}]}}");
	struct eobj_flavor f;
	char err[256];
	assert_int_equal(eobj_flavor_decode(o, &f, err, sizeof(err)), 0);
	json_decref(o); /* the owner is self-contained */
	assert_string_equal(f.spec.name, "spot");
	assert_int_equal(f.spec.n_labels, 2);
	assert_string_equal(f.spec.labels[0].key, "instance");
	assert_string_equal(f.spec.labels[0].value, "spot");
	assert_string_equal(f.spec.labels[1].key, "zone");
	assert_int_equal(f.spec.n_taints, 2);
	assert_string_equal(f.spec.taints[0].key, "spot");
	assert_string_equal(f.spec.taints[0].value, "true");
	assert_string_equal(f.spec.taints[0].effect, "NoSchedule");
	assert_false(f.spec.taints[0].exists);
	assert_string_equal(f.spec.taints[1].value, "");
	assert_string_equal(f.spec.taints[1].effect, "NoExecute");
	assert_int_equal(f.spec.n_tolerations, 2);
	assert_string_equal(f.spec.tolerations[0].key, "spot");
	assert_false(f.spec.tolerations[0].exists);
	assert_null(f.spec.tolerations[1].key); /* every key */
	assert_true(f.spec.tolerations[1].exists);
	assert_string_equal(f.spec.tolerations[1].effect, "");
	eobj_flavor_release(&f);
	eobj_flavor_release(&f); /* twice is harmless */
}

static void test_flavor_minimal(void **state)
{
	json_t *o = J("{'metadata':{'name':'default'}}");
	struct eobj_flavor f;
	char err[256];
	assert_int_equal(eobj_flavor_decode(o, &f, err, sizeof(err)), 0);
	assert_string_equal(f.spec.name, "default");
	assert_int_equal(f.spec.n_labels, 0);
	assert_int_equal(f.spec.n_taints, 0);
	assert_int_equal(f.spec.n_tolerations, 0);
	eobj_flavor_release(&f);
	json_decref(o);
}

/* ---------------------------------------------------------------- error tables */

enum decoder { D_FLAVOR, D_CQ, D_COHORT, D_LQ, D_LQ_AFS, D_NS, D_WPC, D_WL, D_JOB };

struct bad_case {
	enum decoder d;
	const char *json;
	const char *message;
};

static int decode(enum decoder d, json_t *o, char *err, size_t errlen)
{
	json_t *wpcs = J("{'high':{'value':1000}}"), *pcs = J("{'system':{'value':2000}}");
	int rc = 0;
	switch (d) {
	case D_FLAVOR: {
		struct eobj_flavor f;
		rc = eobj_flavor_decode(o, &f, err, errlen);
		eobj_flavor_release(&f);
		break;
	}
	case D_CQ: {
		struct eobj_cq c;
		rc = eobj_cq_decode(o, &c, err, errlen);
		eobj_cq_release(&c);
		break;
	}
	case D_COHORT: {
		struct eobj_cohort c;
		rc = eobj_cohort_decode(o, &c, err, errlen);
		eobj_cohort_release(&c);
		break;
	}
	case D_LQ: {
		struct eobj_local_queue q;
		rc = eobj_local_queue_decode(o, "default", &q, err, errlen);
		eobj_local_queue_release(&q);
		break;
	}
	case D_LQ_AFS: {
		struct eobj_afs_status a;
		rc = eobj_local_queue_afs_decode(o, &a, err, errlen);
		eobj_afs_status_release(&a);
		break;
	}
	case D_NS: {
		struct eobj_namespace n;
		rc = eobj_namespace_decode(o, &n, err, errlen);
		eobj_namespace_release(&n);
		break;
	}
	case D_WPC: {
		const char *name;
		int32_t v;
		rc = eobj_priority_class_decode(o, &name, &v, err, errlen);
		break;
	}
	case D_WL: {
		struct eobj_workload w;
		rc = eobj_workload_decode(o, "default", wpcs, pcs, &w, err, errlen);
		eobj_workload_release(&w);
		break;
	}
	case D_JOB: {
		struct eobj_workload w;
		rc = eobj_workload_for(&integration_job, o, "default", wpcs, pcs, &w, err, errlen);
		eobj_workload_release(&w);
		break;
	}
	}
	json_decref(wpcs);
	json_decref(pcs);
	return rc;
}

static void run_bad_cases(const struct bad_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_t *o = J(cases[i].json);
		char err[512] = "";
		int rc = decode(cases[i].d, o, err, sizeof(err));
		json_decref(o);
		if (rc != -EINVAL)
			fail_msg("case %zu: rc %d, want -EINVAL (%s)", i, rc, cases[i].json);
		if (strcmp(err, cases[i].message) != 0)
			fail_msg("case %zu:\n got: %s\nwant: %s", i, err, cases[i].message);
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_flavor_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_FLAVOR, "[]", "ResourceFlavor: must be an object" },
		{ D_FLAVOR, "{}", "metadata.name: required" },
		{ D_FLAVOR, "{'metadata':[]}", "metadata: must be an object, not a list" },
		{ D_FLAVOR, "{'metadata':{'name':3}}",
		  "metadata.name: must be a string, not a number" },
		{ D_FLAVOR, "{'metadata':{'name':'Spot'}}",
		  "metadata.name: invalid name \"Spot\": must be lowercase letters, digits, '-' "
		  "and '.', "
		  "start and end with a letter or digit, at most 253 characters" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'extra':1}", "extra: unknown field" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'nodelabels':{}}}",
		  "spec.nodelabels: unknown field" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':[]}",
		  "spec: must be an object, not a list" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'nodeLabels':[]}}",
		  "spec.nodeLabels: must be an object, not a list" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'nodeLabels':{'x':1}}}",
		  "spec.nodeLabels.x: must be a string, not a number" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'nodeTaints':{}}}",
		  "spec.nodeTaints: must be a list, not an object" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'nodeTaints':['x']}}",
		  "spec.nodeTaints[0]: must be an object, not a string" },
		{ D_FLAVOR,
		  "{'metadata':{'name':'a'},'spec':{'nodeTaints':[{'effect':'NoSchedule'}]}}",
		  "spec.nodeTaints[0].key: required" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'nodeTaints':[{'key':'k'}]}}",
		  "spec.nodeTaints[0].effect: required" },
		{ D_FLAVOR,
		  "{'metadata':{'name':'a'},'spec':{'nodeTaints':[{'key':'k','effect':''}]}}",
		  "spec.nodeTaints[0].effect: required" },
		{ D_FLAVOR,
		  "{'metadata':{'name':'a'},'spec':{'nodeTaints':[{'key':'k','effect':'Never'}]}}",
		  "spec.nodeTaints[0].effect: unsupported value \"Never\": must be one of "
		  "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"" },
		{ D_FLAVOR,
		  "{'metadata':{'name':'a'},'spec':{'nodeTaints':[{'key':'k','effect':'NoSchedule',"
		  "'x':1}]}}",
		  "spec.nodeTaints[0].x: unknown field" },
		{ D_FLAVOR,
		  "{'metadata':{'name':'a'},'spec':{'tolerations':[{'key':'k','operator':'In'}]}}",
		  "spec.tolerations[0].operator: unsupported value \"In\": must be one of "
		  "\"Equal\", "
		  "\"Exists\"" },
		{ D_FLAVOR,
		  "{'metadata':{'name':'a'},'spec':{'tolerations':[{'key':'k','operator':'Exists','"
		  "value':'v'}]}}",
		  "spec.tolerations[0].value: must be empty when operator is Exists" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'tolerations':[{'value':'v'}]}}",
		  "spec.tolerations[0].operator: must be Exists when key is empty" },
		{ D_FLAVOR,
		  "{'metadata':{'name':'a'},'spec':{'tolerations':[{'operator':'Exists','effect':'"
		  "Sometimes'}]}}",
		  "spec.tolerations[0].effect: unsupported value \"Sometimes\": must be one of "
		  "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\", \"\"" },
		{ D_FLAVOR,
		  "{'metadata':{'name':'a'},'spec':{'tolerations':[{'operator':'Exists','"
		  "tolerationSeconds':'1'}]}}",
		  "spec.tolerations[0].tolerationSeconds: must be an integer, not 1" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'tolerations':[7]}}",
		  "spec.tolerations[0]: must be an object, not a number" },
	};
	run_bad_cases(cases, N(cases));
}

/* ---------------------------------------------------------------- ClusterQueue */

static void test_cq_every_field(void **state)
{
	json_t *o = J(
		"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue',"
		"'metadata':{'name':'team-a'},'spec':{'cohortName':'org',"
		"'resourceGroups':[{'coveredResources':['cpu','memory'],'flavors':["
		"{'name':'on-demand','resources':[{'name':'cpu','nominalQuota':'12',"
		"'borrowingLimit':'4','lendingLimit':2},{'name':'memory','nominalQuota':'48Gi'}]},"
		"{'name':'spot','resources':[{'name':'cpu','nominalQuota':'500m'},"
		"{'name':'memory','nominalQuota':0}]}]},"
		"{'coveredResources':['nvidia.com/gpu'],'flavors':[{'name':'a100',"
		"'resources':[{'name':'nvidia.com/gpu','nominalQuota':8}]}]}],"
		"'queueingStrategy':'StrictFIFO',"
		"'namespaceSelector':{'matchLabels':{'team':'a'},'matchExpressions':["
		"{'key':'env','operator':'In','values':['prod','dev']},"
		"{'key':'legacy','operator':'DoesNotExist'}]},"
		"'preemption':{'withinClusterQueue':'LowerOrNewerEqualPriority',"
		"'reclaimWithinCohort':'Any','borrowWithinCohort':{'policy':'LowerPriority',"
		"'maxPriorityThreshold':100}},"
		"'flavorFungibility':{'whenCanBorrow':'TryNextFlavor','whenCanPreempt':'"
		"TryNextFlavor',"
		"'preference':'PreemptionOverBorrowing'},"
		"'stopPolicy':'HoldAndDrain','fairSharing':{'weight':2},"
		"'admissionScope':{'admissionMode':'UsageBasedAdmissionFairSharing'}}}");
	struct eobj_cq c;
	char err[256];
	assert_int_equal(eobj_cq_decode(o, &c, err, sizeof(err)), 0);
	json_decref(o);
	const struct eng_cq_spec *s = &c.spec;
	assert_string_equal(s->name, "team-a");
	assert_string_equal(s->cohort, "org");
	assert_null(c.unsupported);
	assert_int_equal(s->n_groups, 2);
	const struct eng_resource_group *g = &s->groups[0];
	assert_int_equal(g->n_covered, 2);
	assert_string_equal(g->covered[0], "cpu");
	assert_string_equal(g->covered[1], "memory");
	assert_int_equal(g->n_flavors, 2);
	assert_string_equal(g->flavors[0].flavor, "on-demand");
	assert_int_equal(g->flavors[0].n_resources, 2);
	const struct eng_resource_quota *r = &g->flavors[0].resources[0];
	assert_string_equal(r->name, "cpu");
	assert_int_equal(r->nominal, MILLI(12));
	assert_true(r->has_borrowing_limit);
	assert_int_equal(r->borrowing_limit, MILLI(4));
	assert_true(r->has_lending_limit);
	assert_int_equal(r->lending_limit, MILLI(2));
	r = &g->flavors[0].resources[1];
	assert_string_equal(r->name, "memory");
	assert_int_equal(r->nominal, GI(48));
	assert_false(r->has_borrowing_limit);
	assert_false(r->has_lending_limit);
	assert_string_equal(g->flavors[1].flavor, "spot");
	assert_int_equal(g->flavors[1].resources[0].nominal, 500);
	assert_int_equal(g->flavors[1].resources[1].nominal, 0);
	g = &s->groups[1];
	assert_string_equal(g->covered[0], "nvidia.com/gpu");
	assert_string_equal(g->flavors[0].flavor, "a100");
	assert_int_equal(g->flavors[0].resources[0].nominal, MILLI(8));
	assert_int_equal(s->queueing, ENG_STRICT_FIFO);
	const struct label_selector *sel = s->namespace_selector;
	assert_non_null(sel);
	assert_int_equal(sel->n_labels, 1);
	assert_string_equal(sel->labels[0].key, "team");
	assert_string_equal(sel->labels[0].value, "a");
	assert_int_equal(sel->n_exprs, 2);
	assert_string_equal(sel->exprs[0].key, "env");
	assert_string_equal(sel->exprs[0].op, "In");
	assert_int_equal(sel->exprs[0].n_values, 2);
	assert_string_equal(sel->exprs[0].values[0], "prod");
	assert_string_equal(sel->exprs[0].values[1], "dev");
	assert_string_equal(sel->exprs[1].op, "DoesNotExist");
	assert_int_equal(sel->exprs[1].n_values, 0);
	assert_int_equal(s->preemption.within_cluster_queue, ENG_WITHIN_LOWER_OR_NEWER_EQUAL);
	assert_int_equal(s->preemption.reclaim_within_cohort, ENG_RECLAIM_ANY);
	assert_int_equal(s->preemption.borrow_within_cohort, ENG_BORROW_WITHIN_LOWER_PRIORITY);
	assert_true(s->preemption.has_max_priority_threshold);
	assert_int_equal(s->preemption.max_priority_threshold, 100);
	assert_int_equal(s->when_can_borrow, ENG_BORROW_TRY_NEXT_FLAVOR);
	assert_int_equal(s->when_can_preempt, ENG_PREEMPT_TRY_NEXT_FLAVOR);
	assert_true(s->prefer_preemption_over_borrowing);
	assert_int_equal(s->stop_policy, ENG_STOP_HOLD_AND_DRAIN);
	assert_true(s->has_fair_weight);
	assert_true(s->fair_weight == 2.0);
	assert_true(s->usage_based_afs);
	eobj_cq_release(&c);
}

/* fairSharing.weight is a quantity: 0 counts (an infinite share), fractions at milli
 * precision; admissionScope's other mode and an empty fairSharing leave the defaults. */
static void test_cq_fair_sharing(void **state)
{
	static const struct {
		const char *fair_sharing;
		int has;
		double weight;
	} cases[] = {
		{ "{'weight':'0'}", 1, 0.0 },
		{ "{'weight':0}", 1, 0.0 },
		{ "{'weight':'1.5'}", 1, 1.5 },
		{ "{'weight':'250m'}", 1, 0.25 },
		{ "{'weight':'0.0001'}", 1, 0.001 },
		{ "{'weight':'2k'}", 1, 2000.0 },
		{ "{}", 0, 1.0 },
	};
	char text[256], err[256];
	for (size_t i = 0; i < N(cases); i++) {
		struct eobj_cq c;
		snprintf(text, sizeof(text),
			 "{'metadata':{'name':'q'},'spec':{'fairSharing':%s,"
			 "'admissionScope':{'admissionMode':'NoAdmissionFairSharing'}}}",
			 cases[i].fair_sharing);
		json_t *o = J(text);
		assert_int_equal(eobj_cq_decode(o, &c, err, sizeof(err)), 0);
		assert_int_equal(c.spec.has_fair_weight, cases[i].has);
		if (c.spec.fair_weight != cases[i].weight)
			fail_msg("case %zu: weight %g, want %g", i, c.spec.fair_weight,
				 cases[i].weight);
		assert_false(c.spec.usage_based_afs);
		assert_null(c.unsupported); /* implemented now: nothing to name */
		eobj_cq_release(&c);
		json_decref(o);
	}
}

static void test_cq_defaults(void **state)
{
	json_t *o = J("{'metadata':{'name':'q'},'spec':{'cohortName':'',"
		      "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f',"
		      "'resources':[{'name':'cpu','nominalQuota':'1'}]}]}]}}");
	struct eobj_cq c;
	char err[256];
	assert_int_equal(eobj_cq_decode(o, &c, err, sizeof(err)), 0);
	assert_null(c.spec.cohort); /* "" is no cohort */
	assert_int_equal(c.spec.queueing, ENG_BEST_EFFORT_FIFO);
	assert_null(c.spec.namespace_selector); /* unset selects no namespace */
	assert_int_equal(c.spec.preemption.within_cluster_queue, ENG_WITHIN_NEVER);
	assert_int_equal(c.spec.preemption.reclaim_within_cohort, ENG_RECLAIM_NEVER);
	assert_int_equal(c.spec.preemption.borrow_within_cohort, ENG_BORROW_WITHIN_NEVER);
	assert_false(c.spec.preemption.has_max_priority_threshold);
	assert_int_equal(c.spec.when_can_borrow, ENG_BORROW_MAY_STOP_SEARCH);
	assert_int_equal(c.spec.when_can_preempt, ENG_PREEMPT_TRY_NEXT_FLAVOR);
	assert_false(c.spec.prefer_preemption_over_borrowing);
	assert_int_equal(c.spec.stop_policy, ENG_STOP_NONE);
	eobj_cq_release(&c);
	json_decref(o);

	/* No spec at all: a queue with no quota. An empty selector selects everything. */
	o = J("{'metadata':{'name':'empty'},'spec':{'namespaceSelector':{}}}");
	assert_int_equal(eobj_cq_decode(o, &c, err, sizeof(err)), 0);
	assert_int_equal(c.spec.n_groups, 0);
	assert_non_null(c.spec.namespace_selector);
	assert_int_equal(c.spec.namespace_selector->n_labels, 0);
	assert_int_equal(c.spec.namespace_selector->n_exprs, 0);
	eobj_cq_release(&c);
	json_decref(o);
}

static void test_cq_unsupported_fields_are_named(void **state)
{
	json_t *o = J("{'metadata':{'name':'q'},'spec':{'admissionChecksStrategy':"
		      "{'admissionChecks':[{'name':'prov'}]}}}");
	struct eobj_cq c;
	char err[256];
	assert_int_equal(eobj_cq_decode(o, &c, err, sizeof(err)), 0);
	assert_string_equal(c.unsupported,
			    "spec.admissionChecksStrategy: admission checks are not implemented");
	eobj_cq_release(&c);
	json_decref(o);
	o = J("{'metadata':{'name':'q'},'spec':{'concurrentAdmissionPolicy':{'migration':{'mode':'"
	      "x'}}}}");
	assert_int_equal(eobj_cq_decode(o, &c, err, sizeof(err)), 0);
	assert_string_equal(c.unsupported, "spec.concurrentAdmissionPolicy: concurrent admission "
					   "is not implemented");
	eobj_cq_release(&c);
	json_decref(o);
}

#define CQ_HEAD "{'metadata':{'name':'q'},'spec':{"
#define RG1(res)                                                                                 \
	"'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f','resources':[" res \
	"]}]}]"

static void test_cq_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_CQ, "7", "ClusterQueue: must be an object" },
		{ D_CQ, CQ_HEAD "'fairSharing':{'weight':'-1'}}}",
		  "spec.fairSharing.weight: invalid quantity \"-1\": must not be negative" },
		{ D_CQ, CQ_HEAD "'fairSharing':{'weight':'abc'}}}",
		  "spec.fairSharing.weight: invalid quantity \"abc\"" },
		{ D_CQ, CQ_HEAD "'fairSharing':{'weight':true}}}",
		  "spec.fairSharing.weight: invalid quantity: must be a string or a number, not a "
		  "boolean" },
		{ D_CQ, CQ_HEAD "'fairSharing':{'weight':'100Ei'}}}",
		  "spec.fairSharing.weight: quantity \"100Ei\" is out of range: muster accounts "
		  "quantities exactly in int64 milli-units (at most about 9.2e15 units)" },
		{ D_CQ, CQ_HEAD "'fairSharing':{'share':1}}}",
		  "spec.fairSharing.share: unknown field" },
		{ D_CQ, CQ_HEAD "'fairSharing':2}}",
		  "spec.fairSharing: must be an object, not a number" },
		{ D_CQ, CQ_HEAD "'admissionScope':{}}}",
		  "spec.admissionScope.admissionMode: required" },
		{ D_CQ, CQ_HEAD "'admissionScope':{'admissionMode':'Usage'}}}",
		  "spec.admissionScope.admissionMode: unsupported value \"Usage\": must be one of "
		  "\"UsageBasedAdmissionFairSharing\", \"NoAdmissionFairSharing\"" },
		{ D_CQ,
		  CQ_HEAD "'admissionScope':{'admissionMode':'NoAdmissionFairSharing','x':1}}}",
		  "spec.admissionScope.x: unknown field" },
		{ D_CQ, CQ_HEAD "'admissionScope':'UsageBasedAdmissionFairSharing'}}",
		  "spec.admissionScope: must be an object, not a string" },
		{ D_CQ, "{'metadata':{}}", "metadata.name: required" },
		{ D_CQ, "{'metadata':{'name':''}}", "metadata.name: required" },
		{ D_CQ, "{'metadata':{'name':'q'},'status':{},'spec':{'x':1}}",
		  "spec.x: unknown field" },
		{ D_CQ, CQ_HEAD "'cohortName':'Org'}}",
		  "spec.cohortName: invalid name \"Org\": must be lowercase letters, digits, '-' "
		  "and '.', "
		  "start and end with a letter or digit, at most 253 characters" },
		{ D_CQ, CQ_HEAD "'cohortName':5}}",
		  "spec.cohortName: must be a string, not a number" },
		{ D_CQ, CQ_HEAD RG1("{'name':'cpu','nominalQuota':'12x'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: invalid quantity "
		  "\"12x\"" },
		{ D_CQ,
		  CQ_HEAD "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f','"
			  "resources':["
			  "{'name':'cpu','nominalQuota':'1'}]},{'name':'g','resources':[{'name':'"
			  "cpu','nominalQuota':'12x'}]}]}]}}",
		  "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: invalid quantity "
		  "\"12x\"" },
		{ D_CQ, CQ_HEAD RG1("{'name':'cpu'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: required" },
		{ D_CQ, CQ_HEAD RG1("{'name':'cpu','nominalQuota':'-1'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: invalid quantity "
		  "\"-1\": "
		  "must not be negative" },
		{ D_CQ, CQ_HEAD RG1("{'name':'cpu','nominalQuota':'100Ei'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: quantity \"100Ei\" "
		  "is out "
		  "of range: muster accounts quantities exactly in int64 milli-units (at most "
		  "about "
		  "9.2e15 units)" },
		{ D_CQ, CQ_HEAD RG1("{'name':'cpu','nominalQuota':{}}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: invalid quantity: "
		  "must be "
		  "a string or a number, not an object" },
		{ D_CQ, CQ_HEAD RG1("{'name':'cpu','nominalQuota':'1','borrowingLimit':'1'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: must be unset "
		  "when "
		  "cohortName is empty" },
		{ D_CQ, CQ_HEAD RG1("{'name':'cpu','nominalQuota':'1','lendingLimit':'1'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be unset when "
		  "cohortName is empty" },
		{ D_CQ,
		  CQ_HEAD "'cohortName':'c'," RG1(
			  "{'name':'cpu','nominalQuota':'1','lendingLimit':'2'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be less than "
		  "or equal "
		  "to nominalQuota" },
		{ D_CQ,
		  CQ_HEAD "'cohortName':'c'," RG1(
			  "{'name':'cpu','nominalQuota':'1','borrowingLimit':'x'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: invalid quantity "
		  "\"x\"" },
		{ D_CQ,
		  CQ_HEAD "'cohortName':'c'," RG1(
			  "{'name':'cpu','nominalQuota':'1','lendingLimit':'-1'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: invalid quantity "
		  "\"-1\": "
		  "must not be negative" },
		{ D_CQ, CQ_HEAD RG1("{'name':'memory','nominalQuota':'1'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].name: \"memory\" must match "
		  "coveredResources[0] (\"cpu\")" },
		{ D_CQ, CQ_HEAD RG1("{'nominalQuota':'1'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].name: required" },
		{ D_CQ, CQ_HEAD RG1("{'name':'cpu','nominalquota':'1'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].nominalquota: unknown field" },
		{ D_CQ, CQ_HEAD RG1("'cpu'") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0]: must be an object, not a "
		  "string" },
		{ D_CQ,
		  CQ_HEAD RG1("{'name':'cpu','nominalQuota':'1'},{'name':'memory','nominalQuota':'"
			      "1'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources: must list exactly the 1 "
		  "coveredResources, "
		  "in their order (got 2 entries)" },
		{ D_CQ, CQ_HEAD "'resourceGroups':{}}}",
		  "spec.resourceGroups: must be a list, not an object" },
		{ D_CQ, CQ_HEAD "'resourceGroups':[1]}}",
		  "spec.resourceGroups[0]: must be an object, not a number" },
		{ D_CQ, CQ_HEAD "'resourceGroups':[{'flavors':[]}]}}",
		  "spec.resourceGroups[0].coveredResources: required: list at least one resource" },
		{ D_CQ, CQ_HEAD "'resourceGroups':[{'coveredResources':'cpu'}]}}",
		  "spec.resourceGroups[0].coveredResources: must be a list, not a string" },
		{ D_CQ, CQ_HEAD "'resourceGroups':[{'coveredResources':[1]}]}}",
		  "spec.resourceGroups[0].coveredResources[0]: must be a resource name, not a "
		  "number" },
		{ D_CQ, CQ_HEAD "'resourceGroups':[{'coveredResources':['']}]}}",
		  "spec.resourceGroups[0].coveredResources[0]: must be a resource name, not an "
		  "empty string" },
		{ D_CQ, CQ_HEAD "'resourceGroups':[{'coveredResources':['cpu','cpu']}]}}",
		  "spec.resourceGroups[0].coveredResources[1]: duplicate resource \"cpu\": a "
		  "resource can be "
		  "covered by one resource group only" },
		{ D_CQ,
		  CQ_HEAD "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f',"
			  "'resources':[{'name':'cpu','nominalQuota':1}]}]},{'coveredResources':['"
			  "cpu']}]}}",
		  "spec.resourceGroups[1].coveredResources[0]: duplicate resource \"cpu\": a "
		  "resource can be "
		  "covered by one resource group only" },
		{ D_CQ, CQ_HEAD "'resourceGroups':[{'coveredResources':['cpu']}]}}",
		  "spec.resourceGroups[0].flavors: required: list at least one flavor" },
		{ D_CQ,
		  CQ_HEAD
		  "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'resources':[]}]}]}}",
		  "spec.resourceGroups[0].flavors[0].name: required" },
		{ D_CQ,
		  CQ_HEAD
		  "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'F_1'}]}]}}",
		  "spec.resourceGroups[0].flavors[0].name: invalid name \"F_1\": must be lowercase "
		  "letters, "
		  "digits, '-' and '.', start and end with a letter or digit, at most 253 "
		  "characters" },
		{ D_CQ,
		  CQ_HEAD
		  "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f',"
		  "'resources':[{'name':'cpu','nominalQuota':1}]}]},{'coveredResources':['memory'],"
		  "'flavors':[{'name':'f','resources':[{'name':'memory','nominalQuota':1}]}]}]}}",
		  "spec.resourceGroups[1].flavors[0].name: duplicate flavor \"f\": a flavor can "
		  "appear in "
		  "one resource group only, once" },
		{ D_CQ,
		  CQ_HEAD "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f','"
			  "resources':{}}]}]}}",
		  "spec.resourceGroups[0].flavors[0].resources: must be a list, not an object" },
		{ D_CQ,
		  CQ_HEAD "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f','x'"
			  ":1}]}]}}",
		  "spec.resourceGroups[0].flavors[0].x: unknown field" },
		{ D_CQ, CQ_HEAD "'resourceGroups':[{'coveredResources':['cpu'],'flavor':[]}]}}",
		  "spec.resourceGroups[0].flavor: unknown field" },
		{ D_CQ,
		  CQ_HEAD "'resourceGroups':[{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}]}}",
		  "spec.resourceGroups: at most 16 resource groups, got 17" },
		{ D_CQ, CQ_HEAD "'queueingStrategy':'FIFO'}}",
		  "spec.queueingStrategy: unsupported value \"FIFO\": must be one of "
		  "\"BestEffortFIFO\", "
		  "\"StrictFIFO\"" },
		{ D_CQ, CQ_HEAD "'stopPolicy':'Drain'}}",
		  "spec.stopPolicy: unsupported value \"Drain\": must be one of \"None\", "
		  "\"Hold\", "
		  "\"HoldAndDrain\"" },
		{ D_CQ, CQ_HEAD "'preemption':{'withinClusterQueue':'Any'}}}",
		  "spec.preemption.withinClusterQueue: unsupported value \"Any\": must be one of "
		  "\"Never\", "
		  "\"LowerPriority\", \"LowerOrNewerEqualPriority\"" },
		{ D_CQ, CQ_HEAD "'preemption':{'reclaimWithinCohort':'Always'}}}",
		  "spec.preemption.reclaimWithinCohort: unsupported value \"Always\": must be one "
		  "of "
		  "\"Never\", \"LowerPriority\", \"Any\"" },
		{ D_CQ, CQ_HEAD "'preemption':{'borrowWithinCohort':{'policy':'Any'}}}}",
		  "spec.preemption.borrowWithinCohort.policy: unsupported value \"Any\": must be "
		  "one of "
		  "\"Never\", \"LowerPriority\"" },
		{ D_CQ, CQ_HEAD "'preemption':{'borrowWithinCohort':{'policy':'LowerPriority'}}}}",
		  "spec.preemption: reclaimWithinCohort=Never and "
		  "borrowWithinCohort.policy!=Never: "
		  "borrowing with preemption needs reclaimWithinCohort" },
		{ D_CQ,
		  CQ_HEAD "'preemption':{'borrowWithinCohort':{'maxPriorityThreshold':'high'}}}}",
		  "spec.preemption.borrowWithinCohort.maxPriorityThreshold: must be an integer, "
		  "not high" },
		{ D_CQ,
		  CQ_HEAD
		  "'preemption':{'borrowWithinCohort':{'maxPriorityThreshold':3000000000}}}}",
		  "spec.preemption.borrowWithinCohort.maxPriorityThreshold: 3000000000 is out of "
		  "range "
		  "[-2147483648, 2147483647]" },
		{ D_CQ, CQ_HEAD "'preemption':{'within':'Never'}}}",
		  "spec.preemption.within: unknown field" },
		{ D_CQ, CQ_HEAD "'preemption':'Never'}}",
		  "spec.preemption: must be an object, not a string" },
		{ D_CQ, CQ_HEAD "'flavorFungibility':{'whenCanBorrow':'Borrow'}}}",
		  "spec.flavorFungibility.whenCanBorrow: unsupported value \"Borrow\": must be one "
		  "of "
		  "\"MayStopSearch\", \"TryNextFlavor\"" },
		{ D_CQ, CQ_HEAD "'flavorFungibility':{'whenCanPreempt':'Preempt'}}}",
		  "spec.flavorFungibility.whenCanPreempt: unsupported value \"Preempt\": must be "
		  "one of "
		  "\"MayStopSearch\", \"TryNextFlavor\"" },
		{ D_CQ, CQ_HEAD "'flavorFungibility':{'preference':'Borrowing'}}}",
		  "spec.flavorFungibility.preference: unsupported value \"Borrowing\": must be one "
		  "of "
		  "\"BorrowingOverPreemption\", \"PreemptionOverBorrowing\"" },
		{ D_CQ, CQ_HEAD "'flavorFungibility':{'preference':'BorrowingOverPreemption'}}}",
		  "spec.flavorFungibility.preference: \"BorrowingOverPreemption\" requires both "
		  "whenCanBorrow and whenCanPreempt to be TryNextFlavor" },
		{ D_CQ,
		  CQ_HEAD
		  "'namespaceSelector':{'matchExpressions':[{'key':'a','operator':'In'}]}}}",
		  "spec.namespaceSelector.matchExpressions[0].values: must be non-empty when "
		  "operator is In" },
		{ D_CQ,
		  CQ_HEAD "'namespaceSelector':{'matchExpressions':[{'key':'a','operator':'NotIn','"
			  "values':[]}]}}}",
		  "spec.namespaceSelector.matchExpressions[0].values: must be non-empty when "
		  "operator is NotIn" },
		{ D_CQ,
		  CQ_HEAD "'namespaceSelector':{'matchExpressions':[{'key':'a','operator':'Exists',"
			  "'values':['x']}]}}}",
		  "spec.namespaceSelector.matchExpressions[0].values: may not be specified when "
		  "operator is Exists" },
		{ D_CQ,
		  CQ_HEAD "'namespaceSelector':{'matchExpressions':[{'key':'a','operator':'Gt','"
			  "values':['1']}]}}}",
		  "spec.namespaceSelector.matchExpressions[0].operator: unsupported value \"Gt\": "
		  "must be one "
		  "of \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\"" },
		{ D_CQ,
		  CQ_HEAD "'namespaceSelector':{'matchExpressions':[{'operator':'Exists'}]}}}",
		  "spec.namespaceSelector.matchExpressions[0].key: required" },
		{ D_CQ, CQ_HEAD "'namespaceSelector':{'matchExpressions':[{'key':'a'}]}}}",
		  "spec.namespaceSelector.matchExpressions[0].operator: required" },
		{ D_CQ,
		  CQ_HEAD "'namespaceSelector':{'matchExpressions':[{'key':'a','operator':'In','"
			  "values':[1]}]}}}",
		  "spec.namespaceSelector.matchExpressions[0].values[0]: must be a string, not a "
		  "number" },
		{ D_CQ, CQ_HEAD "'namespaceSelector':{'matchExpressions':['a']}}}",
		  "spec.namespaceSelector.matchExpressions[0]: must be an object, not a string" },
		{ D_CQ, CQ_HEAD "'namespaceSelector':{'matchLabels':{'a':true}}}}",
		  "spec.namespaceSelector.matchLabels.a: must be a string, not a boolean" },
		{ D_CQ, CQ_HEAD "'namespaceSelector':{'labels':{}}}}",
		  "spec.namespaceSelector.labels: unknown field" },
	};
	run_bad_cases(cases, N(cases));
}

/* ---------------------------------------------------------------- Cohort */

static void test_cohort_every_field(void **state)
{
	json_t *o = J(
		"{'metadata':{'name':'org'},'spec':{'parentName':'root','fairSharing':{'weight':1},"
		"'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f',"
		"'resources':[{'name':'cpu','nominalQuota':'10','borrowingLimit':'5',"
		"'lendingLimit':'20'}]}]}]}}");
	struct eobj_cohort c;
	char err[256];
	/* Unlike a ClusterQueue's, a cohort's lendingLimit may exceed its own nominalQuota: it
	 * lends what its members lend up too. */
	assert_int_equal(eobj_cohort_decode(o, &c, err, sizeof(err)), 0);
	json_decref(o);
	assert_string_equal(c.spec.name, "org");
	assert_string_equal(c.spec.parent, "root");
	assert_int_equal(c.spec.n_groups, 1);
	const struct eng_resource_quota *r = &c.spec.groups[0].flavors[0].resources[0];
	assert_int_equal(r->nominal, MILLI(10));
	assert_int_equal(r->borrowing_limit, MILLI(5));
	assert_int_equal(r->lending_limit, MILLI(20));
	assert_true(c.spec.has_fair_weight);
	assert_true(c.spec.fair_weight == 1.0);
	eobj_cohort_release(&c);

	o = J("{'metadata':{'name':'root'},'spec':{'parentName':''}}");
	assert_int_equal(eobj_cohort_decode(o, &c, err, sizeof(err)), 0);
	assert_null(c.spec.parent);
	assert_false(c.spec.has_fair_weight);
	assert_int_equal(c.spec.n_groups, 0);
	eobj_cohort_release(&c);
	json_decref(o);
}

static void test_cohort_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_COHORT, "null", "Cohort: must be an object" },
		{ D_COHORT, "{'spec':{}}", "metadata.name: required" },
		{ D_COHORT, "{'metadata':{'name':'c'},'spec':{'fairSharing':{'weight':'-1'}}}",
		  "spec.fairSharing.weight: invalid quantity \"-1\": must not be negative" },
		{ D_COHORT, "{'metadata':{'name':'c'},'spec':{'fairSharing':{'weight':'abc'}}}",
		  "spec.fairSharing.weight: invalid quantity \"abc\"" },
		{ D_COHORT, "{'metadata':{'name':'c'},'spec':{'parent':'x'}}",
		  "spec.parent: unknown field" },
		{ D_COHORT, "{'metadata':{'name':'c'},'spec':{'parentName':'P'}}",
		  "spec.parentName: invalid name \"P\": must be lowercase letters, digits, '-' and "
		  "'.', "
		  "start and end with a letter or digit, at most 253 characters" },
		{ D_COHORT,
		  "{'metadata':{'name':'c'},'spec':{" RG1(
			  "{'name':'cpu','nominalQuota':'1','borrowingLimit':'1'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: must be unset "
		  "when "
		  "parentName is empty" },
		{ D_COHORT,
		  "{'metadata':{'name':'c'},'spec':{" RG1(
			  "{'name':'cpu','nominalQuota':'1','lendingLimit':'1'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be unset when "
		  "parentName is empty" },
		{ D_COHORT,
		  "{'metadata':{'name':'c'},'spec':{" RG1(
			  "{'name':'cpu','nominalQuota':'1.5.'}") "}}",
		  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: invalid quantity "
		  "\"1.5.\"" },
	};
	run_bad_cases(cases, N(cases));
}

/* ---------------------------------------------------------------- LocalQueue, Namespace */

static void test_local_queue(void **state)
{
	json_t *o = J("{'metadata':{'name':'main','namespace':'team-a'},"
		      "'spec':{'clusterQueue':'cq','stopPolicy':'Hold'}}");
	struct eobj_local_queue q;
	char err[256];
	assert_int_equal(eobj_local_queue_decode(o, "default", &q, err, sizeof(err)), 0);
	json_decref(o);
	assert_string_equal(q.namespace_name, "team-a");
	assert_string_equal(q.name, "main");
	assert_string_equal(q.cluster_queue, "cq");
	assert_int_equal(q.stop, ENG_STOP_HOLD);
	assert_false(q.has_fair_weight);
	eobj_local_queue_release(&q);

	o = J("{'metadata':{'name':'main'},'spec':{'clusterQueue':'cq','fairSharing':{'weight':'0."
	      "5'}}}");
	assert_int_equal(eobj_local_queue_decode(o, "default", &q, err, sizeof(err)), 0);
	assert_string_equal(q.namespace_name, "default");
	assert_int_equal(q.stop, ENG_STOP_NONE);
	assert_true(q.has_fair_weight);
	assert_true(q.fair_weight == 0.5);
	eobj_local_queue_release(&q);
	/* Without a default the namespace is required. */
	assert_int_equal(eobj_local_queue_decode(o, NULL, &q, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "metadata.namespace: required");
	eobj_local_queue_release(&q);
	json_decref(o);
}

static void test_local_queue_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_LQ, "'lq'", "LocalQueue: must be an object" },
		{ D_LQ,
		  "{'metadata':{'name':'lq'},'spec':{'clusterQueue':'cq','fairSharing':{'weight':'-"
		  "1'}}}",
		  "spec.fairSharing.weight: invalid quantity \"-1\": must not be negative" },
		{ D_LQ,
		  "{'metadata':{'name':'lq'},'spec':{'clusterQueue':'cq','fairSharing':{'weight':'"
		  "abc'}}}",
		  "spec.fairSharing.weight: invalid quantity \"abc\"" },
		{ D_LQ, "{'metadata':{'name':'lq'},'spec':{}}", "spec.clusterQueue: required" },
		{ D_LQ, "{'metadata':{'name':'lq'}}", "spec.clusterQueue: required" },
		{ D_LQ, "{'metadata':{'name':'lq'},'spec':{'clusterQueue':'a b'}}",
		  "spec.clusterQueue: invalid name \"a b\": must be lowercase letters, digits, '-' "
		  "and '.', "
		  "start and end with a letter or digit, at most 253 characters" },
		{ D_LQ,
		  "{'metadata':{'name':'lq'},'spec':{'clusterQueue':'cq','stopPolicy':'Stop'}}",
		  "spec.stopPolicy: unsupported value \"Stop\": must be one of \"None\", \"Hold\", "
		  "\"HoldAndDrain\"" },
		{ D_LQ, "{'metadata':{'name':'lq'},'spec':{'clusterqueue':'cq'}}",
		  "spec.clusterqueue: unknown field" },
		{ D_LQ, "{'metadata':{'name':'lq','namespace':'a.b'},'spec':{'clusterQueue':'cq'}}",
		  "metadata.namespace: invalid name \"a.b\": must be lowercase letters, digits and "
		  "'-', "
		  "start and end with a letter or digit, at most 63 characters" },
		{ D_LQ, "{'metadata':{'name':'lq','namespace':1},'spec':{'clusterQueue':'cq'}}",
		  "metadata.namespace: must be a string, not a number" },
	};
	run_bad_cases(cases, N(cases));
}

/* What the manager seeds the engine from after a restart. */
static void test_local_queue_afs_status(void **state)
{
	json_t *o =
		J("{'metadata':{'name':'lq'},'spec':{'clusterQueue':'cq'},'status':{'fairSharing':"
		  "{'weightedShare':0,'admissionFairSharingStatus':{'consumedResources':"
		  "{'cpu':'1500m','memory':'1Gi','nvidia.com/gpu':2},"
		  "'lastUpdate':'2025-01-01T00:00:01.5Z'}}}}");
	struct eobj_afs_status a;
	char err[256];
	assert_int_equal(eobj_local_queue_afs_decode(o, &a, err, sizeof(err)), 0);
	json_decref(o); /* self-contained */
	assert_true(a.present);
	assert_int_equal(a.n, 3);
	assert_string_equal(a.consumed[0].resource, "cpu");
	assert_true(a.consumed[0].consumed == 1.5);
	assert_string_equal(a.consumed[1].resource, "memory");
	assert_true(a.consumed[1].consumed == 1073741824.0);
	assert_string_equal(a.consumed[2].resource, "nvidia.com/gpu");
	assert_true(a.consumed[2].consumed == 2.0);
	assert_int_equal(a.last_update, INT64_C(1735689601500000000));
	eobj_afs_status_release(&a);

	/* None yet (a LocalQueue never sampled, or fair sharing off): nothing to seed. */
	static const char *const none[] = {
		"{'metadata':{'name':'lq'}}",
		"{'status':{}}",
		"{'status':{'fairSharing':{'weightedShare':0}}}",
	};
	for (size_t i = 0; i < N(none); i++) {
		o = J(none[i]);
		assert_int_equal(eobj_local_queue_afs_decode(o, &a, err, sizeof(err)), 0);
		assert_false(a.present);
		assert_int_equal(a.n, 0);
		eobj_afs_status_release(&a);
		json_decref(o);
	}
	/* An empty record is one: usage nothing, as of lastUpdate. */
	o = J("{'status':{'fairSharing':{'admissionFairSharingStatus':{'consumedResources':{},"
	      "'lastUpdate':'2025-01-01T00:00:00Z'}}}}");
	assert_int_equal(eobj_local_queue_afs_decode(o, &a, err, sizeof(err)), 0);
	assert_true(a.present);
	assert_int_equal(a.n, 0);
	eobj_afs_status_release(&a);
	json_decref(o);
}

#define AFS(x) "{'status':{'fairSharing':{'admissionFairSharingStatus':" x "}}}"
#define AFS_PATH "status.fairSharing.admissionFairSharingStatus"

static void test_local_queue_afs_status_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_LQ_AFS, "{'status':[]}", "status: must be an object, not a list" },
		{ D_LQ_AFS, "{'status':{'fairSharing':1}}",
		  "status.fairSharing: must be an object, not a number" },
		{ D_LQ_AFS, AFS("'x'"), AFS_PATH ": must be an object, not a string" },
		{ D_LQ_AFS, AFS("{'consumedResources':{}}"), AFS_PATH ".lastUpdate: required" },
		{ D_LQ_AFS, AFS("{'consumedResources':{},'lastUpdate':'yesterday'}"),
		  AFS_PATH ".lastUpdate: invalid time \"yesterday\": want RFC 3339, e.g. "
			   "\"2025-01-01T00:00:00Z\"" },
		{ D_LQ_AFS, AFS("{'consumedResources':{},'lastUpdate':5}"),
		  AFS_PATH ".lastUpdate: must be a string, not a number" },
		{ D_LQ_AFS, AFS("{'lastUpdate':'2025-01-01T00:00:00Z'}"),
		  AFS_PATH ".consumedResources: required" },
		{ D_LQ_AFS,
		  AFS("{'consumedResources':['cpu'],'lastUpdate':'2025-01-01T00:00:00Z'}"),
		  AFS_PATH ".consumedResources: must be an object, not a list" },
		{ D_LQ_AFS,
		  AFS("{'consumedResources':{'cpu':'-1'},'lastUpdate':'2025-01-01T00:00:00Z'}"),
		  AFS_PATH
		  ".consumedResources.cpu: invalid quantity \"-1\": must not be negative" },
		{ D_LQ_AFS,
		  AFS("{'consumedResources':{'cpu':'abc'},'lastUpdate':'2025-01-01T00:00:00Z'}"),
		  AFS_PATH ".consumedResources.cpu: invalid quantity \"abc\"" },
		{ D_LQ_AFS,
		  AFS("{'consumedResources':{'':'1'},'lastUpdate':'2025-01-01T00:00:00Z'}"),
		  AFS_PATH ".consumedResources: a resource name is empty" },
	};
	run_bad_cases(cases, N(cases));

	/* More resources than the engine keeps for a LocalQueue. */
	json_t *o = J(AFS("{'consumedResources':{},'lastUpdate':'2025-01-01T00:00:00Z'}"));
	json_t *consumed =
		json_object_get(json_object_get(json_object_get(json_object_get(o, "status"),
								"fairSharing"),
						"admissionFairSharingStatus"),
				"consumedResources");
	for (int i = 0; i <= QUOTA_MAX_RESOURCES; i++) {
		char name[32];
		snprintf(name, sizeof(name), "r%d", i);
		json_object_set_new(consumed, name, json_string("1"));
	}
	struct eobj_afs_status a;
	char err[256];
	assert_int_equal(eobj_local_queue_afs_decode(o, &a, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, AFS_PATH ".consumedResources: at most 64 resources, got 65");
	eobj_afs_status_release(&a);
	json_decref(o);
}

static const char *label(const struct eobj_namespace *n, const char *key)
{
	for (size_t i = 0; i < n->n_labels; i++)
		if (!strcmp(n->labels[i].key, key))
			return n->labels[i].value;
	return NULL;
}

static void test_namespace(void **state)
{
	json_t *o = J("{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'team-a',"
		      "'labels':{'team':'a','kubernetes.io/metadata.name':'wrong'}},'status':{}}");
	struct eobj_namespace n;
	char err[256];
	assert_int_equal(eobj_namespace_decode(o, &n, err, sizeof(err)), 0);
	json_decref(o);
	assert_string_equal(n.name, "team-a");
	assert_int_equal(n.n_labels, 2);
	assert_string_equal(label(&n, "team"), "a");
	/* The apiserver owns this label: it always holds the name. */
	assert_string_equal(label(&n, LABEL_METADATA_NAME), "team-a");
	eobj_namespace_release(&n);

	assert_int_equal(eobj_namespace_default("ml", &n), 0);
	assert_string_equal(n.name, "ml");
	assert_int_equal(n.n_labels, 1);
	assert_string_equal(label(&n, LABEL_METADATA_NAME), "ml");
	eobj_namespace_release(&n);

	static const struct bad_case cases[] = {
		{ D_NS, "[]", "Namespace: must be an object" },
		{ D_NS, "{'metadata':{}}", "metadata.name: required" },
		{ D_NS, "{'metadata':{'name':'a.b'}}",
		  "metadata.name: invalid name \"a.b\": must be lowercase letters, digits and '-', "
		  "start "
		  "and end with a letter or digit, at most 63 characters" },
		{ D_NS, "{'metadata':{'name':'a','labels':[]}}",
		  "metadata.labels: must be an object, not a list" },
		{ D_NS, "{'metadata':{'name':'a','labels':{'x':null}}}",
		  "metadata.labels.x: must be a string, not null" },
	};
	run_bad_cases(cases, N(cases));
}

/* ---------------------------------------------------------------- priority classes */

static void test_priority_class(void **state)
{
	json_t *o = J("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'WorkloadPriorityClass',"
		      "'metadata':{'name':'high'},'value':-5,'description':'d'}");
	const char *name;
	int32_t v;
	char err[256];
	assert_int_equal(eobj_priority_class_decode(o, &name, &v, err, sizeof(err)), 0);
	assert_string_equal(name, "high");
	assert_int_equal(v, -5);
	json_decref(o);
	o = J("{'apiVersion':'scheduling.k8s.io/v1','kind':'PriorityClass','metadata':{'name':'p'},"
	      "'value':1000000,'globalDefault':false,'preemptionPolicy':'Never'}");
	assert_int_equal(eobj_priority_class_decode(o, &name, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1000000);
	json_decref(o);

	static const struct bad_case cases[] = {
		{ D_WPC, "1", "priority class: must be an object" },
		{ D_WPC, "{'metadata':{'name':'a'}}", "value: required" },
		{ D_WPC, "{'metadata':{'name':'a'},'value':'high'}",
		  "value: must be an integer, not high" },
		{ D_WPC, "{'metadata':{'name':'a'},'value':1.5}",
		  "value: must be an integer, not a number" },
		{ D_WPC, "{'metadata':{'name':'a'},'value':2147483648}",
		  "value: 2147483648 is out of range [-2147483648, 2147483647]" },
		{ D_WPC, "{'metadata':{'name':'a'},'value':1,'spec':{}}", "spec: unknown field" },
		{ D_WPC, "{'value':1}", "metadata.name: required" },
	};
	run_bad_cases(cases, N(cases));
}

/* ---------------------------------------------------------------- names */

/* apimachinery's IsDNS1123Subdomain and IsDNS1123Label, the one check every caller uses. */
static void test_dns_names(void **state)
{
	char part64[65], long254[256];
	memset(part64, 'a', 64);
	part64[64] = 0;
	memset(long254, 'a', 254);
	long254[254] = 0;
	long254[100] = '.';
	static const struct {
		const char *s;
		int subdomain, label;
	} rows[] = {
		{ "a", 1, 1 },  { "a-b", 1, 1 }, { "0", 1, 1 },  { "a.b", 1, 0 }, { "a..b", 0, 0 },
		{ ".a", 0, 0 }, { "a.", 0, 0 },  { "-a", 0, 0 }, { "a-", 0, 0 },  { "a.-b", 0, 0 },
		{ "A", 0, 0 },  { "a_b", 0, 0 }, { "", 0, 0 },   { "a b", 0, 0 },
	};
	for (size_t i = 0; i < N(rows); i++) {
		if (eobj_is_dns_subdomain(rows[i].s, strlen(rows[i].s)) != rows[i].subdomain ||
		    eobj_is_dns_label(rows[i].s, strlen(rows[i].s)) != rows[i].label)
			fail_msg("\"%s\": want subdomain %d, label %d", rows[i].s,
				 rows[i].subdomain, rows[i].label);
	}
	/* A 64-character part: a subdomain (no cap per part), not a label. */
	assert_true(eobj_is_dns_subdomain(part64, 64));
	assert_false(eobj_is_dns_label(part64, 64));
	assert_true(eobj_is_dns_label(part64, 63));
	/* 253 characters at most in all. */
	assert_true(eobj_is_dns_subdomain(long254, 253));
	assert_false(eobj_is_dns_subdomain(long254, 254));
	/* The length given counts, not a NUL: a label-key prefix is checked in place. */
	assert_true(eobj_is_dns_subdomain("example.com/rack", 11));
}

/* ---------------------------------------------------------------- Workload */

static const char *req_name(const struct eng_podset *ps, size_t i)
{
	return ps->pod.resources[i];
}

static int64_t request(const struct eng_podset *ps, const char *res)
{
	for (size_t i = 0; i < ps->pod.n_requests; i++)
		if (!strcmp(req_name(ps, i), res))
			return ps->pod.per_pod[i];
	return -1;
}

static void test_workload_every_field(void **state)
{
	json_t *o =
		J("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload',"
		  "'metadata':{'name':'train','namespace':'ml','creationTimestamp':'2025-01-02T03:"
		  "04:05Z'},"
		  "'spec':{'queueName':'main','priority':7,'active':true,'podSets':["
		  "{'name':'driver','count':1,'template':{'spec':{'containers':[{'name':'c',"
		  "'resources':{'requests':{'cpu':'1','memory':'1Gi'}}}]}}},"
		  "{'name':'workers','count':4,'minCount':2,'template':{'spec':{"
		  "'nodeSelector':{'pool':'gpu'},'tolerations':[{'key':'gpu','operator':'Exists'}],"
		  "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
		  "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'zone','operator':'In','"
		  "values':['a']}]}]}}},"
		  "'initContainers':[{'name':'i','resources':{'requests':{'cpu':'3'}}}],"
		  "'containers':[{'name':'a','resources':{'requests':{'cpu':'500m'},"
		  "'limits':{'nvidia.com/"
		  "gpu':2}}},{'name':'b','resources':{'requests':{'cpu':'1'}}}]}}}]}}");
	struct eobj_workload w;
	char err[256];
	assert_int_equal(eobj_workload_decode(o, "default", NULL, NULL, &w, err, sizeof(err)), 0);
	json_decref(o); /* the owner keeps its own reference */
	assert_string_equal(w.spec.key, "ml/train");
	assert_string_equal(w.spec.namespace_name, "ml");
	assert_string_equal(w.name, "train");
	assert_string_equal(w.spec.queue, "main");
	assert_int_equal(w.spec.priority, 7);
	assert_true(w.has_queue_time);
	assert_int_equal(w.spec.queue_time, INT64_C(1735787045) * 1000000000);
	assert_false(w.admitted);
	assert_null(w.admission);
	assert_false(w.finished);
	assert_false(w.inactive);
	assert_int_equal(w.spec.n_podsets, 2);
	const struct eng_podset *d = &w.spec.podsets[0], *k = &w.spec.podsets[1];
	assert_string_equal(d->name, "driver");
	assert_int_equal(d->count, 1);
	assert_int_equal(d->min_count, 0);
	assert_int_equal(request(d, "cpu"), MILLI(1));
	assert_int_equal(request(d, "memory"), GI(1));
	assert_string_equal(k->name, "workers");
	assert_int_equal(k->count, 4);
	assert_int_equal(k->min_count, 2);
	/* Containers sum to 1.5 CPU; the init container's 3 is the max. Limits stand in for
	 * missing requests. */
	assert_int_equal(request(k, "cpu"), MILLI(3));
	assert_int_equal(request(k, "nvidia.com/gpu"), MILLI(2));
	assert_int_equal(k->pod.n_selector, 1);
	assert_string_equal(k->pod.node_selector[0].key, "pool");
	assert_int_equal(k->pod.n_terms, 1);
	assert_string_equal(k->pod.terms[0].exprs[0].key, "zone");
	assert_int_equal(k->pod.n_tolerations, 1);
	assert_true(k->pod.tolerations[0].exists);
	eobj_workload_release(&w);
	eobj_workload_release(&w);
}

/* Strings are packed byte by byte; anything else is aligned as its size needs (up to
 * max_align_t), zeroed, and blocks keep coming past the largest block size. */
static void test_arena_packs_strings_and_aligns_the_rest(void **state)
{
	struct eobj_arena a = { 0 };
	(void)state;
	for (int round = 0; round < 3000; round++) {
		char *s = eobj_arena_strdup(&a, "cpu");
		int64_t *v = eobj_arena_alloc(&a, 3, sizeof(*v));
		char *t = eobj_arena_alloc(&a, 5, 1);
		max_align_t *m = eobj_arena_alloc(&a, 1, sizeof(*m));
		void *none = eobj_arena_alloc(&a, 0, sizeof(*v));
		assert_non_null(s);
		assert_string_equal(s, "cpu");
		assert_true((uintptr_t)v % _Alignof(int64_t) == 0);
		assert_true((uintptr_t)m % _Alignof(max_align_t) == 0);
		assert_true(v[0] == 0 && v[1] == 0 && v[2] == 0);
		assert_true(t[0] == 0 && t[4] == 0);
		assert_non_null(none);
		memset(m, 0xff, sizeof(*m));
		v[2] = round;
	}
	eobj_arena_release(&a);
}

/* Records decoded into one shared arena: each owns nothing, each stays whole after the
 * others are released, and the shared arena frees it all (ASan checks both). */
static void test_workload_records_share_an_arena(void **state)
{
	struct eobj_arena shared = { 0 };
	struct eobj_workload w[3];
	char err[256];
	for (int i = 0; i < 3; i++) {
		char text[400];
		snprintf(text, sizeof(text),
			 "{'apiVersion':'kueue.x-k8s.io/"
			 "v1beta2','kind':'Workload','metadata':{'name':'w%d'},"
			 "'spec':{'queueName':'q','podSets':[{'count':2,'template':{'spec':{'"
			 "containers':"
			 "[{'resources':{'requests':{'cpu':'%d'}}}]}}}]}}",
			 i, i + 1);
		json_t *o = J(text);
		assert_int_equal(eobj_workload_decode_shared(&shared, o, "default", NULL, NULL,
							     &w[i], err, sizeof(err)),
				 0);
		json_decref(o);
		assert_null(w[i].arena.blocks); /* the record owns no memory */
	}
	assert_non_null(shared.blocks);
	eobj_workload_release(&w[0]);
	eobj_workload_release(&w[2]);
	assert_string_equal(w[1].spec.key, "default/w1");
	assert_string_equal(w[1].spec.podsets[0].name, "main");
	assert_int_equal(request(&w[1].spec.podsets[0], "cpu"), MILLI(2));
	eobj_workload_release(&w[1]);
	eobj_arena_release(&shared);
	assert_null(shared.blocks);
}

/* A Workload with podSets [{name, count, template}], the template set as it is (no copy). */
static json_t *workload_with(const char *name, const char *queue, int count, json_t *template)
{
	char text[300];
	snprintf(text, sizeof(text),
		 "{'apiVersion':'kueue.x-k8s.io/"
		 "v1beta2','kind':'Workload','metadata':{'name':'%s'},"
		 "'spec':{'queueName':'%s','podSets':[{'count':%d}]}}",
		 name, queue, count);
	json_t *o = J(text);
	json_t *ps = json_array_get(json_object_get(json_object_get(o, "spec"), "podSets"), 0);
	assert_int_equal(json_object_set(ps, "template", template), 0);
	return o;
}

/* The shared arena's template memo: the same template value decodes to the same pod once,
 * each podSet keeping its own count; an equal template elsewhere decodes alike; the memo's
 * references go with the arena's release. */
static void test_workload_templates_decoded_once_per_value(void **state)
{
	struct eobj_template_memo *memo = calloc(1, sizeof(*memo));
	struct eobj_arena shared = { .memo = memo };
	struct eobj_workload w[4];
	char err[256];
	assert_non_null(memo);
	json_t *t = J(
		"{'spec':{'containers':[{'resources':{'requests':{'cpu':'2','memory':'1Gi'}}}],"
		"'nodeSelector':{'zone':'a'},'tolerations':[{'key':'gpu','operator':'Exists'}]}}");
	json_t *copy = json_deep_copy(t);
	json_t *o[4] = { workload_with("a", "q", 2, t), workload_with("b", "q", 3, t),
			 workload_with("c", "q", 4, copy), workload_with("d", "a..b", 1, t) };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(eobj_workload_decode_shared(&shared, o[i], "default", NULL, NULL,
							     &w[i], err, sizeof(err)),
				 0);
		const struct eng_podset *ps = &w[i].spec.podsets[0];
		assert_int_equal(ps->count, 2 + i);
		assert_int_equal(ps->pod.count, 2 + i);
		assert_int_equal(request(ps, "cpu"), MILLI(2));
		assert_int_equal(request(ps, "memory"), MILLI((int64_t)1 << 30));
		assert_int_equal(ps->pod.n_selector, 1);
		assert_string_equal(ps->pod.node_selector[0].value, "a");
		assert_int_equal(ps->pod.n_tolerations, 1);
	}
	/* b's pod is a's (one decode); c's template is another value, decoded on its own. */
	assert_ptr_equal(w[1].spec.podsets[0].pod.per_pod, w[0].spec.podsets[0].pod.per_pod);
	assert_ptr_not_equal(w[2].spec.podsets[0].pod.per_pod, w[0].spec.podsets[0].pod.per_pod);
	assert_int_equal(t->refcount, 1 + 3 + 1); /* ours, three Workloads (d's too), the memo */
	/* A known template doesn't excuse the rest of the Workload. */
	assert_int_equal(eobj_workload_decode_shared(&shared, o[3], "default", NULL, NULL, &w[3],
						     err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "spec.queueName"));
	eobj_workload_release(&w[3]);
	for (int i = 0; i < 4; i++) {
		if (i < 3)
			eobj_workload_release(&w[i]);
		json_decref(o[i]);
	}
	eobj_arena_release(&shared);
	assert_int_equal(t->refcount, 1);
	json_decref(t);
	json_decref(copy);
	free(memo);
}

/* The memo keeps no reference into the JSON arena: a document there may be dropped unfreed
 * and its memory reused, so a template's address would name another template. */
static void test_workload_template_memo_skips_arena_documents(void **state)
{
	struct eobj_template_memo *memo = calloc(1, sizeof(*memo));
	struct eobj_arena shared = { .memo = memo };
	struct eobj_workload w;
	char err[256];
	assert_non_null(memo);
	assert_int_equal(json_arena_install(), 0);
	json_arena_begin();
	json_t *t = J("{'spec':{'containers':[{'resources':{'requests':{'cpu':'1'}}}]}}");
	json_t *o = workload_with("a", "q", 1, t);
	json_arena_pause();
	assert_true(json_arena_owns(t));
	assert_int_equal(eobj_workload_decode_shared(&shared, o, "default", NULL, NULL, &w, err,
						     sizeof(err)),
			 0);
	assert_int_equal(t->refcount, 2); /* ours and the Workload's: none for the memo */
	for (size_t i = 0; i < EOBJ_TEMPLATE_MEMO; i++)
		assert_null(memo->slot[i].template);
	eobj_workload_release(&w);
	json_decref(o);
	json_decref(t);
	json_arena_end();
	eobj_arena_release(&shared);
	assert_int_equal(json_arena_live(), 0);
	json_arena_uninstall();
	free(memo);
}

static void test_workload_defaults_and_priority_classes(void **state)
{
	json_t *wpcs = J("{'high':{'value':1000}}"), *pcs = J("{'system':{'value':2000}}");
	struct eobj_workload w;
	char err[256];

	/* No namespace, queue, priority, time, podSet name or count: their defaults. */
	json_t *o = J("{'metadata':{'name':'w'},'spec':{'podSets':[{'template':{}}]}}");
	assert_int_equal(eobj_workload_decode(o, "default", wpcs, pcs, &w, err, sizeof(err)), 0);
	assert_string_equal(w.spec.key, "default/w");
	assert_string_equal(w.spec.queue, "");
	assert_int_equal(w.spec.priority, 0);
	assert_false(w.has_queue_time);
	assert_int_equal(w.spec.queue_time, 0);
	assert_string_equal(w.spec.podsets[0].name, "main");
	assert_int_equal(w.spec.podsets[0].count, 1);
	assert_int_equal(w.spec.podsets[0].pod.n_requests, 0);
	eobj_workload_release(&w);
	json_decref(o);

	o = J("{'metadata':{'name':'w'},'spec':{'priorityClassRef':{'group':'kueue.x-k8s.io',"
	      "'kind':'WorkloadPriorityClass','name':'high'},'podSets':[{'template':{}}]}}");
	assert_int_equal(eobj_workload_decode(o, "default", wpcs, pcs, &w, err, sizeof(err)), 0);
	assert_int_equal(w.spec.priority, 1000);
	eobj_workload_release(&w);
	json_decref(o);

	o = J("{'metadata':{'name':'w'},'spec':{'priorityClassRef':{'group':'scheduling.k8s.io',"
	      "'kind':'PriorityClass','name':'system'},'podSets':[{'template':{}}]}}");
	assert_int_equal(eobj_workload_decode(o, "default", wpcs, pcs, &w, err, sizeof(err)), 0);
	assert_int_equal(w.spec.priority, 2000);
	eobj_workload_release(&w);
	json_decref(o);

	/* What the webhook resolved into spec.priority wins over the class's current value. */
	o = J("{'metadata':{'name':'w'},'spec':{'priority':3,'priorityClassRef':{'group':'kueue.x-"
	      "k8s.io',"
	      "'kind':'WorkloadPriorityClass','name':'gone'},'podSets':[{'template':{}}]}}");
	assert_int_equal(eobj_workload_decode(o, "default", wpcs, pcs, &w, err, sizeof(err)), 0);
	assert_int_equal(w.spec.priority, 3);
	eobj_workload_release(&w);
	json_decref(o);

	o = J("{'metadata':{'name':'w'},'spec':{'active':false,'podSets':[{'template':{}}]},"
	      "'status':{'conditions':[{'type':'Finished','status':'True'}]}}");
	assert_int_equal(eobj_workload_decode(o, "default", wpcs, pcs, &w, err, sizeof(err)), 0);
	assert_true(w.inactive);
	assert_true(w.finished);
	eobj_workload_release(&w);
	json_decref(o);
	json_decref(wpcs);
	json_decref(pcs);
}

static void test_workload_admitted(void **state)
{
	json_t *o = J(
		"{'metadata':{'name':'w','namespace':'ns'},'spec':{'queueName':'q','podSets':["
		"{'name':'a','count':4,'template':{'spec':{'containers':[{'resources':{'requests':"
		"{'cpu':'2','memory':'1Gi'}}}]}}},"
		"{'name':'b','count':2,'template':{'spec':{'containers':[{'resources':{'requests':"
		"{'cpu':'1'}}}]}}}]},"
		"'status':{'conditions':[{'type':'QuotaReserved','status':'True'},"
		"{'type':'Admitted','status':'True'}],'admission':{'clusterQueue':'cq',"
		"'podSetAssignments':[{'name':'b','flavors':{'cpu':'spot'}},"
		"{'name':'a','count':3,'flavors':{'cpu':'on-demand','memory':'on-demand'},"
		"'resourceUsage':{'cpu':'6','memory':'3Gi'}}]}}}");
	struct eobj_workload w;
	char err[256];
	assert_int_equal(eobj_workload_decode(o, "default", NULL, NULL, &w, err, sizeof(err)), 0);
	json_decref(o);
	assert_true(w.admitted);
	const struct eng_assignment *a = w.admission;
	assert_non_null(a);
	assert_string_equal(a->cluster_queue, "cq");
	assert_int_equal(a->n_podsets, 2);
	/* b: count from the spec, usage count x request where resourceUsage is missing. */
	assert_string_equal(a->podsets[0].name, "b");
	assert_int_equal(a->podsets[0].count, 2);
	assert_int_equal(a->podsets[0].n, 1);
	assert_string_equal(a->podsets[0].resources[0], "cpu");
	assert_string_equal(a->podsets[0].flavors[0], "spot");
	assert_int_equal(a->podsets[0].usage[0], MILLI(2));
	/* a: partially admitted, usage as recorded. */
	assert_string_equal(a->podsets[1].name, "a");
	assert_int_equal(a->podsets[1].count, 3);
	assert_int_equal(a->podsets[1].n, 2);
	assert_string_equal(a->podsets[1].resources[0], "cpu");
	assert_string_equal(a->podsets[1].flavors[0], "on-demand");
	assert_int_equal(a->podsets[1].usage[0], MILLI(6));
	assert_string_equal(a->podsets[1].resources[1], "memory");
	assert_int_equal(a->podsets[1].usage[1], GI(3));
	eobj_workload_release(&w);
}

#define WL_HEAD "{'metadata':{'name':'w'},'spec':{"
#define PS_CPU(cpu)                                                                          \
	"'podSets':[{'template':{'spec':{'containers':[{'resources':{'requests':{'cpu':" cpu \
	"}}}]}}}]"
#define ADMITTED "'status':{'conditions':[{'type':'QuotaReserved','status':'True'}],"

static void test_workload_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_WL, "[]", "Workload: must be an object" },
		{ D_WL, "{'metadata':{'name':'w'}}", "spec: required" },
		{ D_WL, "{'metadata':{'namespace':'x'},'spec':{}}", "metadata.name: required" },
		{ D_WL, "{'metadata':{'name':'w','creationTimestamp':'yesterday'},'spec':{}}",
		  "metadata.creationTimestamp: invalid time \"yesterday\": must be RFC 3339, e.g. "
		  "2025-01-02T03:04:05Z" },
		{ D_WL, "{'metadata':{'name':'w','creationTimestamp':5},'spec':{}}",
		  "metadata.creationTimestamp: must be a string, not a number" },
		{ D_WL, WL_HEAD "}}", "spec.podSets: required: list 1 to 18 podSets" },
		{ D_WL, WL_HEAD "'podSets':[]}}", "spec.podSets: required: list 1 to 18 podSets" },
		{ D_WL, WL_HEAD "'podSets':{}}}", "spec.podSets: must be a list, not an object" },
		{ D_WL,
		  WL_HEAD "'podSets':[{'name':'a1','template':{}},{'name':'a2','template':{}},"
			  "{'name':'a3','template':{}},{'name':'a4','template':{}},{'name':'a5','"
			  "template':{}},"
			  "{'name':'a6','template':{}},{'name':'a7','template':{}},{'name':'a8','"
			  "template':{}},"
			  "{'name':'a9','template':{}},{'name':'b1','template':{}},{'name':'b2','"
			  "template':{}},"
			  "{'name':'b3','template':{}},{'name':'b4','template':{}},{'name':'b5','"
			  "template':{}},"
			  "{'name':'b6','template':{}},{'name':'b7','template':{}},{'name':'b8','"
			  "template':{}},"
			  "{'name':'b9','template':{}},{'name':'c1','template':{}}]}}",
		  "spec.podSets: at most 18 podSets, got 19" },
		{ D_WL, WL_HEAD "'podSets':[{}]}}", "spec.podSets[0].template: required" },
		{ D_WL, WL_HEAD "'podSets':[5]}}",
		  "spec.podSets[0]: must be an object, not a number" },
		{ D_WL, WL_HEAD "'podSets':[{'template':{}},{'template':{}}]}}",
		  "spec.podSets[1].name: duplicate podSet \"main\"" },
		{ D_WL, WL_HEAD "'podSets':[{'name':'Main','template':{}}]}}",
		  "spec.podSets[0].name: invalid name \"Main\": must be lowercase letters, digits "
		  "and '-', "
		  "start and end with a letter or digit, at most 63 characters" },
		{ D_WL, WL_HEAD "'podSets':[{'count':-1,'template':{}}]}}",
		  "spec.podSets[0].count: -1 is out of range [0, 2147483647]" },
		{ D_WL, WL_HEAD "'podSets':[{'count':'3','template':{}}]}}",
		  "spec.podSets[0].count: must be an integer, not 3" },
		{ D_WL, WL_HEAD "'podSets':[{'count':2,'minCount':3,'template':{}}]}}",
		  "spec.podSets[0].minCount: 3 must be at most count (2)" },
		{ D_WL, WL_HEAD "'podSets':[{'count':2,'minCount':0,'template':{}}]}}",
		  "spec.podSets[0].minCount: 0 is out of range [1, 2147483647]" },
		{ D_WL,
		  WL_HEAD "'podSets':[{'name':'a','count':2,'minCount':1,'template':{}},"
			  "{'name':'b','count':2,'minCount':1,'template':{}}]}}",
		  "spec.podSets[1].minCount: at most one podSet may set minCount" },
		{ D_WL, WL_HEAD "'podSets':[{'template':{},'replicas':1}]}}",
		  "spec.podSets[0].replicas: unknown field" },
		{ D_WL, WL_HEAD PS_CPU("'12x'") "}}",
		  "spec.podSets[0].template.spec.containers[0].resources.requests.cpu: invalid "
		  "quantity \"12x\"" },
		{ D_WL, WL_HEAD PS_CPU("'-1'") "}}",
		  "spec.podSets[0].template.spec.containers[0].resources.requests.cpu: invalid "
		  "quantity "
		  "\"-1\": must not be negative" },
		{ D_WL,
		  WL_HEAD "'podSets':[{'template':{'spec':{'initContainers':[{'resources':{'limits'"
			  ":{'memory':'lots'}}}]}}}]}}",
		  "spec.podSets[0].template.spec.initContainers[0].resources.limits.memory: "
		  "invalid quantity "
		  "\"lots\"" },
		{ D_WL, WL_HEAD "'podSets':[{'template':{'spec':{'overhead':{'cpu':[]}}}}]}}",
		  "spec.podSets[0].template.spec.overhead.cpu: invalid quantity: must be a string "
		  "or a "
		  "number, not a list" },
		{ D_WL, WL_HEAD "'podSets':[{'template':{'spec':{'containers':{}}}}]}}",
		  "spec.podSets[0].template.spec.containers: must be a list, not an object" },
		{ D_WL, WL_HEAD "'podSets':[{'template':{'spec':{'containers':[1]}}}]}}",
		  "spec.podSets[0].template.spec.containers[0]: must be an object, not a number" },
		{ D_WL,
		  WL_HEAD "'podSets':[{'template':{'spec':{'containers':[{'resources':{'requests':["
			  "]}}]}}}]}}",
		  "spec.podSets[0].template.spec.containers[0].resources.requests: must be an "
		  "object, not a list" },
		{ D_WL, WL_HEAD "'podSets':[{'template':'x'}]}}",
		  "spec.podSets[0].template: must be an object, not a string" },
		{ D_WL, WL_HEAD "'podSets':[{'template':{'spec':{'nodeSelector':{'a':1}}}}]}}",
		  "spec.podSets[0].template.spec.nodeSelector.a: must be a string, not a number" },
		{ D_WL,
		  WL_HEAD "'podSets':[{'template':{'spec':{'tolerations':[{'key':'a','operator':'"
			  "Is'}]}}}]}}",
		  "spec.podSets[0].template.spec.tolerations[0].operator: unsupported value "
		  "\"Is\": must be "
		  "one of \"Equal\", \"Exists\"" },
		{ D_WL,
		  WL_HEAD "'podSets':[{'template':{'spec':{'affinity':{'nodeAffinity':{"
			  "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"
			  "'matchExpressions':"
			  "[{'key':'a','operator':'Near'}]}]}}}}}}]}}",
		  "spec.podSets[0].template.spec.affinity.nodeAffinity."
		  "requiredDuringSchedulingIgnoredDuringExecution"
		  ".nodeSelectorTerms[0].matchExpressions[0].operator: unsupported value \"Near\": "
		  "must be one "
		  "of \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"" },
		{ D_WL,
		  WL_HEAD "'podSets':[{'template':{'spec':{'affinity':{'nodeAffinity':{"
			  "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"
			  "'matchExpressions':"
			  "[{'operator':'Exists'}]}]}}}}}}]}}",
		  "spec.podSets[0].template.spec.affinity.nodeAffinity."
		  "requiredDuringSchedulingIgnoredDuringExecution"
		  ".nodeSelectorTerms[0].matchExpressions[0].key: required" },
		{ D_WL,
		  WL_HEAD "'podSets':[{'template':{'spec':{'affinity':{'nodeAffinity':{"
			  "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"
			  "'matchExpressions':"
			  "[{'key':'a'}]}]}}}}}}]}}",
		  "spec.podSets[0].template.spec.affinity.nodeAffinity."
		  "requiredDuringSchedulingIgnoredDuringExecution"
		  ".nodeSelectorTerms[0].matchExpressions[0].operator: required" },
		{ D_WL,
		  WL_HEAD "'podSets':[{'template':{'spec':{'affinity':{'nodeAffinity':{"
			  "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"
			  "'matchExpressions':"
			  "[{'key':'a','operator':'In','values':[1]}]}]}}}}}}]}}",
		  "spec.podSets[0].template.spec.affinity.nodeAffinity."
		  "requiredDuringSchedulingIgnoredDuringExecution"
		  ".nodeSelectorTerms[0].matchExpressions[0].values[0]: must be a string, not a "
		  "number" },
		{ D_WL,
		  WL_HEAD "'podSets':[{'template':{'spec':{'affinity':{'nodeAffinity':{"
			  "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':['"
			  "x']}}}}}}]}}",
		  "spec.podSets[0].template.spec.affinity.nodeAffinity."
		  "requiredDuringSchedulingIgnoredDuringExecution"
		  ".nodeSelectorTerms[0]: must be an object, not a string" },
		{ D_WL,
		  WL_HEAD
		  "'podSets':[{'count':2147483647,'template':{'spec':{'containers':[{'resources':"
		  "{'requests':{'memory':'1Pi'}}}]}}}]}}",
		  "spec.podSets[0].count: 2147483647 pods x memory request overflows int64 "
		  "milli-units" },
		{ D_WL, WL_HEAD "'queueName':'Main'," PS_CPU("1") "}}",
		  "spec.queueName: invalid name \"Main\": must be lowercase letters, digits, '-' "
		  "and '.', "
		  "start and end with a letter or digit, at most 253 characters" },
		{ D_WL, WL_HEAD "'priority':'high'," PS_CPU("1") "}}",
		  "spec.priority: must be an integer, not high" },
		{ D_WL, WL_HEAD "'priority':-2147483649," PS_CPU("1") "}}",
		  "spec.priority: -2147483649 is out of range [-2147483648, 2147483647]" },
		{ D_WL, WL_HEAD "'active':'no'," PS_CPU("1") "}}",
		  "spec.active: must be a boolean, not a string" },
		{ D_WL, WL_HEAD "'queue':'q'," PS_CPU("1") "}}", "spec.queue: unknown field" },
		{ D_WL,
		  WL_HEAD
		  "'priorityClassRef':{'group':'kueue.x-k8s.io','kind':'WorkloadPriorityClass',"
		  "'name':'low'}," PS_CPU("1") "}}",
		  "spec.priorityClassRef.name: WorkloadPriorityClass \"low\" doesn't exist" },
		{ D_WL,
		  WL_HEAD "'priorityClassRef':{'group':'scheduling.k8s.io','kind':'PriorityClass',"
			  "'name':'high'}," PS_CPU("1") "}}",
		  "spec.priorityClassRef.name: PriorityClass \"high\" doesn't exist" },
		{ D_WL,
		  WL_HEAD "'priorityClassRef':{'group':'kueue.x-k8s.io','kind':'PriorityClass',"
			  "'name':'high'}," PS_CPU("1") "}}",
		  "spec.priorityClassRef: must be a kueue.x-k8s.io WorkloadPriorityClass or a "
		  "scheduling.k8s.io PriorityClass" },
		{ D_WL,
		  WL_HEAD "'priorityClassRef':{'group':'kueue.x-k8s.io','kind':'"
			  "WorkloadPriorityClass'}," PS_CPU("1") "}}",
		  "spec.priorityClassRef.name: required" },
		{ D_WL,
		  WL_HEAD "'priorityClassRef':{'name':'high','version':'v1'}," PS_CPU("1") "}}",
		  "spec.priorityClassRef.version: unknown field" },
		{ D_WL, WL_HEAD "'priorityClassRef':'high'," PS_CPU("1") "}}",
		  "spec.priorityClassRef: must be an object, not a string" },
		{ D_WL, WL_HEAD PS_CPU("1") "},'status':[]}",
		  "status: must be an object, not a list" },
		{ D_WL, WL_HEAD PS_CPU("1") "},'status':{'conditions':[1]}}",
		  "status.conditions[0]: must be an object, not a number" },
		{ D_WL, WL_HEAD PS_CPU("1") "},'status':{'conditions':{}}}",
		  "status.conditions: must be a list, not an object" },
		{ D_WL, WL_HEAD PS_CPU("1") "}," ADMITTED "'x':1}}",
		  "status.admission: required when the QuotaReserved condition is True" },
		{ D_WL, WL_HEAD PS_CPU("1") "},'status':{'admission':{'clusterQueue':'cq'}}}",
		  "status.admission: set, but the QuotaReserved condition is not True: an admitted "
		  "Workload has both, a pending one neither" },
		{ D_WL, WL_HEAD PS_CPU("1") "}," ADMITTED "'admission':{}}}",
		  "status.admission.clusterQueue: required" },
		{ D_WL,
		  WL_HEAD PS_CPU("1") "}," ADMITTED
				      "'admission':{'clusterQueue':'cq','podSets':[]}}}",
		  "status.admission.podSets: unknown field" },
		{ D_WL, WL_HEAD PS_CPU("1") "}," ADMITTED "'admission':{'clusterQueue':'cq'}}}",
		  "status.admission.podSetAssignments: no assignment for podSet \"main\"" },
		{ D_WL,
		  WL_HEAD PS_CPU(
			  "1") "}," ADMITTED "'admission':{'clusterQueue':'cq',"
			       "'podSetAssignments':[{'name':'other','flavors':{'cpu':'f'}}]}}}",
		  "status.admission.podSetAssignments[0].name: \"other\" is not a podSet of "
		  "spec.podSets" },
		{ D_WL,
		  WL_HEAD PS_CPU("1") "}," ADMITTED "'admission':{'clusterQueue':'cq',"
				      "'podSetAssignments':[{'flavors':{'cpu':'f'}},{'flavors':{'"
				      "cpu':'f'}}]}}}",
		  "status.admission.podSetAssignments[1].name: duplicate podSet \"main\"" },
		{ D_WL,
		  WL_HEAD PS_CPU("1") "}," ADMITTED "'admission':{'clusterQueue':'cq',"
				      "'podSetAssignments':[{'flavors':{}}]}}}",
		  "status.admission.podSetAssignments[0].flavors: no flavor for requested resource "
		  "cpu" },
		{ D_WL,
		  WL_HEAD PS_CPU("1") "}," ADMITTED "'admission':{'clusterQueue':'cq',"
				      "'podSetAssignments':[{'flavors':{'cpu':'f'},'resourceUsage':"
				      "{'memory':'1'}}]}}}",
		  "status.admission.podSetAssignments[0].resourceUsage.memory: no flavor for it in "
		  "flavors" },
		{ D_WL,
		  WL_HEAD PS_CPU("1") "}," ADMITTED "'admission':{'clusterQueue':'cq',"
				      "'podSetAssignments':[{'flavors':{'cpu':'f'},'resourceUsage':"
				      "{'cpu':'1y'}}]}}}",
		  "status.admission.podSetAssignments[0].resourceUsage.cpu: invalid quantity "
		  "\"1y\"" },
		{ D_WL,
		  WL_HEAD PS_CPU("1") "}," ADMITTED "'admission':{'clusterQueue':'cq',"
				      "'podSetAssignments':[{'flavors':{'cpu':1}}]}}}",
		  "status.admission.podSetAssignments[0].flavors.cpu: must be a string, not a "
		  "number" },
		{ D_WL,
		  WL_HEAD PS_CPU("1") "}," ADMITTED "'admission':{'clusterQueue':'cq',"
				      "'podSetAssignments':[{'flavors':{'cpu':'f'},'count':-1}]}}}",
		  "status.admission.podSetAssignments[0].count: -1 is out of range [0, "
		  "2147483647]" },
		{ D_WL,
		  WL_HEAD PS_CPU("1") "}," ADMITTED "'admission':{'clusterQueue':'cq',"
				      "'podSetAssignments':['main']}}}",
		  "status.admission.podSetAssignments[0]: must be an object, not a string" },
		{ D_WL,
		  WL_HEAD PS_CPU("1") "}," ADMITTED "'admission':{'clusterQueue':'cq',"
				      "'podSetAssignments':[{'flavors':{'cpu':'f'},'usage':{}}]}}}",
		  "status.admission.podSetAssignments[0].usage: unknown field" },
	};
	run_bad_cases(cases, N(cases));
}

/* ---------------------------------------------------------------- Job */

static void test_job_conversion(void **state)
{
	json_t *wpcs = J("{'high':{'value':1000}}");
	json_t *o = J(
		"{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'train','namespace':'ml',"
		"'uid':'0b5c6a44-1111-2222-3333-444455556666','creationTimestamp':'2025-01-02T03:"
		"04:05Z',"
		"'labels':{'kueue.x-k8s.io/queue-name':'main','kueue.x-k8s.io/"
		"priority-class':'high'},"
		"'annotations':{'kueue.x-k8s.io/job-min-parallelism':'2'}},"
		"'spec':{'parallelism':4,'completions':8,'template':{'spec':{'priority':5,"
		"'containers':[{'resources':{'requests':{'cpu':'2'}}}]}}}}");
	struct eobj_workload w;
	char err[256], name[300];
	assert_int_equal(eobj_workload_for(&integration_job, o, "default", wpcs, NULL, &w, err,
					   sizeof(err)),
			 0);
	assert_int_equal(integration_workload_name(&integration_job, "train",
						   "0b5c6a44-1111-2222-3333-444455556666", name,
						   sizeof(name)),
			 0);
	assert_string_equal(w.name, name);
	assert_string_equal(w.spec.namespace_name, "ml");
	assert_string_equal(w.spec.queue, "main");
	assert_int_equal(w.spec.priority, 1000); /* the class wins over the pod's priority */
	assert_true(w.has_queue_time);
	assert_int_equal(w.spec.queue_time, INT64_C(1735787045) * 1000000000);
	assert_int_equal(w.spec.n_podsets, 1);
	assert_string_equal(w.spec.podsets[0].name, "main");
	assert_int_equal(w.spec.podsets[0].count, 4); /* min(parallelism, completions) */
	assert_int_equal(w.spec.podsets[0].min_count, 2);
	assert_int_equal(request(&w.spec.podsets[0], "cpu"), MILLI(2));
	/* The Workload is the manager's: priority and its class written as the manager writes
	 * them. */
	assert_int_equal(json_integer_value(obj_path(w.obj, "spec.priority")), 1000);
	assert_string_equal(obj_str(w.obj, "spec.priorityClassRef.name"), "high");
	assert_string_equal(obj_label(w.obj, LABEL_JOB_UID),
			    "0b5c6a44-1111-2222-3333-444455556666");
	eobj_workload_release(&w);
	json_decref(o);

	/* No uid, namespace or class: a deterministic name, the default namespace, pod priority;
	 * parallelism defaults to 1 and completions to parallelism. */
	o = J("{'metadata':{'name':'j','labels':{'kueue.x-k8s.io/queue-name':'q'}},"
	      "'spec':{'template':{'spec':{'priority':-3,'containers':[]}}}}");
	assert_int_equal(eobj_workload_for(&integration_job, o, "default", wpcs, NULL, &w, err,
					   sizeof(err)),
			 0);
	assert_int_equal(integration_workload_name(&integration_job, "j", "default.j", name,
						   sizeof(name)),
			 0);
	assert_string_equal(w.name, name);
	assert_string_equal(w.spec.namespace_name, "default");
	assert_int_equal(w.spec.priority, -3);
	assert_false(w.has_queue_time);
	assert_int_equal(w.spec.podsets[0].count, 1);
	assert_int_equal(w.spec.podsets[0].min_count, 0);
	eobj_workload_release(&w);
	json_decref(o);

	o = J("{'metadata':{'name':'j','labels':{'kueue.x-k8s.io/queue-name':'q'}},"
	      "'spec':{'parallelism':3,'template':{}}}");
	assert_int_equal(eobj_workload_for(&integration_job, o, "default", NULL, NULL, &w, err,
					   sizeof(err)),
			 0);
	assert_int_equal(w.spec.podsets[0].count, 3);
	assert_int_equal(w.spec.priority, 0);
	eobj_workload_release(&w);
	json_decref(o);
	json_decref(wpcs);
}

#define JOB_HEAD "{'metadata':{'name':'j','labels':{'kueue.x-k8s.io/queue-name':'q'}"

static void test_job_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_JOB, "1", "Job: must be an object" },
		{ D_JOB,
		  "{'metadata':{'labels':{'kueue.x-k8s.io/"
		  "queue-name':'q'}},'spec':{'template':{}}}",
		  "metadata.name: required" },
		{ D_JOB, "{'metadata':{'name':'j'},'spec':{'template':{}}}",
		  "metadata.labels[\"kueue.x-k8s.io/queue-name\"]: required: muster manages only "
		  "Jobs "
		  "with this label" },
		{ D_JOB,
		  "{'metadata':{'name':'j','labels':{'kueue.x-k8s.io/"
		  "queue-name':'Q'}},'spec':{'template':{}}}",
		  "metadata.labels[\"kueue.x-k8s.io/queue-name\"]: invalid name \"Q\": must be "
		  "lowercase "
		  "letters, digits, '-' and '.', start and end with a letter or digit, at most 253 "
		  "characters" },
		{ D_JOB, "{'metadata':{'name':'j','labels':[]},'spec':{'template':{}}}",
		  "metadata.labels: must be an object, not a list" },
		{ D_JOB, JOB_HEAD "}}", "spec: required" },
		{ D_JOB, JOB_HEAD "},'spec':{}}", "spec.template: required" },
		{ D_JOB, JOB_HEAD "},'spec':{'parallelism':-1,'template':{}}}",
		  "spec.parallelism: -1 is out of range [0, 2147483647]" },
		{ D_JOB, JOB_HEAD "},'spec':{'completions':'2','template':{}}}",
		  "spec.completions: must be an integer, not 2" },
		{ D_JOB,
		  JOB_HEAD "},'spec':{'template':{'spec':{'containers':[{'resources':{'requests':{'"
			   "cpu':'12x'}}}]}}}}",
		  "spec.template.spec.containers[0].resources.requests.cpu: invalid quantity "
		  "\"12x\"" },
		{ D_JOB, JOB_HEAD "},'spec':{'template':{'spec':{'priority':'1'}}}}",
		  "spec.template.spec.priority: must be an integer, not 1" },
		{ D_JOB, JOB_HEAD "},'spec':{'template':{'spec':{'priorityClassName':'missing'}}}}",
		  "spec.template.spec.priorityClassName: PriorityClass missing doesn't exist" },
		{ D_JOB,
		  "{'metadata':{'name':'j','labels':{'kueue.x-k8s.io/queue-name':'q',"
		  "'kueue.x-k8s.io/priority-class':'low'}},'spec':{'template':{}}}",
		  "metadata.labels[\"kueue.x-k8s.io/priority-class\"]: WorkloadPriorityClass low "
		  "doesn't exist" },
		{ D_JOB,
		  JOB_HEAD ",'annotations':{'kueue.x-k8s.io/job-min-parallelism':'NaN'}},"
			   "'spec':{'parallelism':4,'template':{}}}",
		  "metadata.annotations[\"kueue.x-k8s.io/job-min-parallelism\"]: invalid value "
		  "\"NaN\": must "
		  "be an integer from 1 to 3 (below the Job's pod count 4)" },
		{ D_JOB,
		  JOB_HEAD ",'annotations':{'kueue.x-k8s.io/job-min-parallelism':'4'}},"
			   "'spec':{'parallelism':4,'template':{}}}",
		  "metadata.annotations[\"kueue.x-k8s.io/job-min-parallelism\"]: invalid value "
		  "\"4\": must "
		  "be an integer from 1 to 3 (below the Job's pod count 4)" },
		{ D_JOB,
		  JOB_HEAD ",'annotations':{'kueue.x-k8s.io/job-min-parallelism':'0'}},"
			   "'spec':{'parallelism':4,'template':{}}}",
		  "metadata.annotations[\"kueue.x-k8s.io/job-min-parallelism\"]: invalid value "
		  "\"0\": must "
		  "be an integer from 1 to 3 (below the Job's pod count 4)" },
		{ D_JOB,
		  JOB_HEAD ",'annotations':{'kueue.x-k8s.io/job-min-parallelism':'1'}},"
			   "'spec':{'template':{}}}",
		  "metadata.annotations[\"kueue.x-k8s.io/job-min-parallelism\"]: invalid value "
		  "\"1\": must "
		  "be an integer from 1 to 0 (below the Job's pod count 1)" },
		{ D_JOB, JOB_HEAD ",'creationTimestamp':'now'},'spec':{'template':{}}}",
		  "metadata.creationTimestamp: invalid time \"now\": must be RFC 3339, e.g. "
		  "2025-01-02T03:04:05Z" },
	};
	run_bad_cases(cases, N(cases));
}

/* ---------------------------------------------------------------- yamljson_load_lines */

static void test_yamljson_load_lines(void **state)
{
	const char *yaml = "# comment\n"
			   "a: 1\n"
			   "---\n"
			   "---\n"
			   "\n"
			   "b:\n"
			   "  c: 2\n"
			   "--- [1, 2]\n"
			   "---\n"
			   "# nothing but a comment\n";
	json_t *docs;
	int *lines;
	struct yamljson_error err;
	assert_int_equal(yamljson_load_lines(yaml, strlen(yaml), &docs, &lines, &err), 0);
	/* Empty documents are skipped, and so are their lines. */
	assert_int_equal(json_array_size(docs), 3);
	assert_int_equal(lines[0], 2);
	assert_int_equal(lines[1], 6);
	assert_int_equal(lines[2], 8);
	free(lines);
	json_decref(docs);

	assert_int_equal(yamljson_load_lines("", 0, &docs, &lines, &err), 0);
	assert_int_equal(json_array_size(docs), 0);
	assert_non_null(lines);
	free(lines);
	json_decref(docs);

	const char *broken = "a: 1\n---\nb: [\n";
	docs = (json_t *)1;
	lines = (int *)1;
	assert_int_equal(yamljson_load_lines(broken, strlen(broken), &docs, &lines, &err), -EINVAL);
	assert_null(docs);
	assert_null(lines);
	assert_int_equal(err.line, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dns_names),
		cmocka_unit_test(test_flavor_every_field),
		cmocka_unit_test(test_flavor_minimal),
		cmocka_unit_test(test_flavor_errors),
		cmocka_unit_test(test_cq_every_field),
		cmocka_unit_test(test_cq_defaults),
		cmocka_unit_test(test_cq_unsupported_fields_are_named),
		cmocka_unit_test(test_cq_fair_sharing),
		cmocka_unit_test(test_cq_errors),
		cmocka_unit_test(test_cohort_every_field),
		cmocka_unit_test(test_cohort_errors),
		cmocka_unit_test(test_local_queue),
		cmocka_unit_test(test_local_queue_errors),
		cmocka_unit_test(test_local_queue_afs_status),
		cmocka_unit_test(test_local_queue_afs_status_errors),
		cmocka_unit_test(test_namespace),
		cmocka_unit_test(test_priority_class),
		cmocka_unit_test(test_workload_every_field),
		cmocka_unit_test(test_arena_packs_strings_and_aligns_the_rest),
		cmocka_unit_test(test_workload_records_share_an_arena),
		cmocka_unit_test(test_workload_templates_decoded_once_per_value),
		cmocka_unit_test(test_workload_template_memo_skips_arena_documents),
		cmocka_unit_test(test_workload_defaults_and_priority_classes),
		cmocka_unit_test(test_workload_admitted),
		cmocka_unit_test(test_workload_errors),
		cmocka_unit_test(test_job_conversion),
		cmocka_unit_test(test_job_errors),
		cmocka_unit_test(test_yamljson_load_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
