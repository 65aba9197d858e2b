/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for api/placement_objects: the Node, Pod and Topology decoders (every field they
 * read, every error with its exact message), the flavor/topology catalog, the step from an
 * engine assignment to placement requests (merged flavors, topology requests from
 * topologyRequest or annotations), pobj_place_workload's all-or-nothing reservations, and the
 * topologyRequest that the Job -> Workload conversion copies from the template's annotations.
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
#include "api/placement_objects.h"

#define MILLI(x) ((int64_t)(x)*1000)
#define GI(x) ((int64_t)(x)*1024 * 1024 * 1024 * 1000)
#define N(a) (sizeof(a) / sizeof((a)[0]))

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

static const char *label(const struct quota_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return kv[i].value;
	return NULL;
}

static int64_t amount(const char *const *names, const int64_t *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return v[i];
	return -1;
}

/* --------------------------------------------------------------------------- Node */

static void test_node_every_field(void **state)
{
	json_t *o =
		J("{'apiVersion':'v1','kind':'Node','metadata':{'name':'gpu-1',"
		  "'labels':{'topology.kubernetes.io/zone':'z1','rack':'r1'}},"
		  "'spec':{'taints':[{'key':'nvidia.com/"
		  "gpu','value':'present','effect':'NoSchedule'},"
		  "{'key':'maint','effect':'NoExecute','timeAdded':'2025-01-01T00:00:00Z',"
		  "'addedBy':'a-later-kubelet'}]},"
		  "'status':{'allocatable':{'cpu':'95500m','memory':'750Gi','nvidia.com/gpu':8},"
		  "'capacity':{'cpu':'96'},"
		  "'conditions':[{'type':'MemoryPressure','status':'False'},"
		  "{'type':'Ready','status':'True'}]}}");
	struct pobj_node n;
	char err[256];
	assert_int_equal(pobj_node_decode(o, &n, err, sizeof(err)), 0);
	json_decref(o); /* the owner is self-contained */
	const struct plc_node_spec *s = &n.spec;
	assert_string_equal(s->name, "gpu-1");
	assert_int_equal(s->n_labels, 3);
	assert_string_equal(label(s->labels, s->n_labels, "rack"), "r1");
	assert_string_equal(label(s->labels, s->n_labels, "topology.kubernetes.io/zone"), "z1");
	/* The kubelet's hostname label, added because it is missing. */
	assert_string_equal(label(s->labels, s->n_labels, "kubernetes.io/hostname"), "gpu-1");
	assert_int_equal(s->n_taints, 2);
	assert_string_equal(s->taints[0].key, "nvidia.com/gpu");
	assert_string_equal(s->taints[0].value, "present");
	assert_string_equal(s->taints[0].effect, "NoSchedule");
	assert_string_equal(s->taints[1].value, "");
	assert_string_equal(s->taints[1].effect, "NoExecute");
	/* A field Taint may grow is the kubelet's business: a Node keeps its taints (a
	 * ResourceFlavor's nodeTaints, written by hand, refuse it: test_engine_objects). */
	assert_true(s->schedulable);
	/* allocatable wins over capacity */
	assert_int_equal(s->n_resources, 3);
	assert_int_equal(amount(s->resources, s->allocatable, s->n_resources, "cpu"), 95500);
	assert_int_equal(amount(s->resources, s->allocatable, s->n_resources, "memory"), GI(750));
	assert_int_equal(amount(s->resources, s->allocatable, s->n_resources, "nvidia.com/gpu"),
			 MILLI(8));
	pobj_node_release(&n);
	pobj_node_release(&n); /* twice is harmless */
}

static void test_node_defaults_and_schedulable(void **state)
{
	struct {
		const char *json;
		int schedulable;
	} cases[] = {
		/* no conditions: Ready (hand-written inputs have no status) */
		{ "{'metadata':{'name':'a'}}", 1 },
		{ "{'metadata':{'name':'a'},'spec':{'unschedulable':true}}", 0 },
		{ "{'metadata':{'name':'a'},'spec':{'unschedulable':false}}", 1 },
		{ "{'metadata':{'name':'a'},'status':{'conditions':[{'type':'Ready','status':'"
		  "False'}]}}",
		  0 },
		{ "{'metadata':{'name':'a'},'status':{'conditions':[{'type':'Ready','status':'"
		  "Unknown'}]}}",
		  0 },
		{ "{'metadata':{'name':'a'},'status':{'conditions':[{'type':'Ready'}]}}", 0 },
		{ "{'metadata':{'name':'a'},'status':{'conditions':[{'type':'DiskPressure',"
		  "'status':'True'}]}}",
		  1 },
		{ "{'metadata':{'name':'a'},'spec':{'unschedulable':true},"
		  "'status':{'conditions':[{'type':'Ready','status':'True'}]}}",
		  0 },
	};
	for (size_t i = 0; i < N(cases); i++) {
		json_t *o = J(cases[i].json);
		struct pobj_node n;
		char err[256];
		if (pobj_node_decode(o, &n, err, sizeof(err)) != 0)
			fail_msg("case %zu: %s", i, err);
		if (n.spec.schedulable != cases[i].schedulable)
			fail_msg("case %zu: schedulable %d", i, n.spec.schedulable);
		assert_int_equal(n.spec.n_taints, 0);
		assert_int_equal(n.spec.n_resources, 0);
		assert_int_equal(n.spec.n_labels, 1);
		pobj_node_release(&n);
		json_decref(o);
	}

	/* capacity stands in for a missing allocatable; a hostname label given is kept */
	json_t *o = J("{'metadata':{'name':'cpu-1','labels':{'kubernetes.io/hostname':'host-7'}},"
		      "'status':{'capacity':{'cpu':4,'memory':'16Gi'}}}");
	struct pobj_node n;
	char err[256];
	assert_int_equal(pobj_node_decode(o, &n, err, sizeof(err)), 0);
	assert_int_equal(n.spec.n_labels, 1);
	assert_string_equal(n.spec.labels[0].value, "host-7");
	assert_int_equal(amount(n.spec.resources, n.spec.allocatable, n.spec.n_resources, "cpu"),
			 MILLI(4));
	assert_int_equal(amount(n.spec.resources, n.spec.allocatable, n.spec.n_resources, "memory"),
			 GI(16));
	pobj_node_release(&n);
	json_decref(o);
}

/* ---------------------------------------------------------------- error tables */

enum decoder { D_NODE, D_POD, D_TOPOLOGY, D_FLAVOR };

struct bad_case {
	enum decoder d;
	const char *json;
	const char *message;
};

static int decode(enum decoder d, json_t *o, char *err, size_t errlen)
{
	int rc = 0;
	switch (d) {
	case D_NODE: {
		struct pobj_node n;
		rc = pobj_node_decode(o, &n, err, errlen);
		pobj_node_release(&n);
		break;
	}
	case D_POD: {
		struct pobj_pod p;
		rc = pobj_pod_decode(o, "default", &p, err, errlen);
		pobj_pod_release(&p);
		break;
	}
	case D_TOPOLOGY: {
		struct pobj_topology t;
		rc = pobj_topology_decode(o, &t, err, errlen);
		pobj_topology_release(&t);
		break;
	}
	case D_FLAVOR: {
		struct pobj_catalog c;
		pobj_catalog_init(&c);
		rc = pobj_catalog_set_flavor(&c, o, err, errlen);
		assert_null(pobj_catalog_flavor(&c, "a", NULL)); /* unchanged on error */
		pobj_catalog_release(&c);
		break;
	}
	}
	return rc;
}

#define NOT_A_SUBDOMAIN                                                                          \
	"must be lowercase letters, digits, '-' and '.', start and end with a letter or digit, " \
	"at most 253 characters"

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

static void test_node_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_NODE, "[]", "Node: must be an object" },
		{ D_NODE, "{}", "metadata.name: required" },
		{ D_NODE, "{'metadata':{'name':''}}", "metadata.name: required" },
		/* One metadata.name rule for every decoder (eobj_meta_name): Kubernetes names
		 * Nodes, Pods and Topologies with RFC 1123 subdomains, so no other can exist. */
		{ D_NODE, "{'metadata':{'name':'Node_1'}}",
		  "metadata.name: invalid name \"Node_1\": " NOT_A_SUBDOMAIN },
		{ D_NODE, "{'metadata':{'name':1}}",
		  "metadata.name: must be a string, not a number" },
		{ D_NODE, "{'metadata':{'name':'a','labels':[]}}",
		  "metadata.labels: must be an object, not a list" },
		{ D_NODE, "{'metadata':{'name':'a','labels':{'rack':1}}}",
		  "metadata.labels.rack: must be a string, not a number" },
		{ D_NODE, "{'metadata':{'name':'a'},'spec':[]}",
		  "spec: must be an object, not a list" },
		{ D_NODE, "{'metadata':{'name':'a'},'spec':{'unschedulable':'yes'}}",
		  "spec.unschedulable: must be a boolean, not a string" },
		{ D_NODE, "{'metadata':{'name':'a'},'spec':{'taints':{}}}",
		  "spec.taints: must be a list, not an object" },
		{ D_NODE, "{'metadata':{'name':'a'},'spec':{'taints':['x']}}",
		  "spec.taints[0]: must be an object, not a string" },
		{ D_NODE, "{'metadata':{'name':'a'},'spec':{'taints':[{'effect':'NoSchedule'}]}}",
		  "spec.taints[0].key: required" },
		{ D_NODE, "{'metadata':{'name':'a'},'spec':{'taints':[{'key':'k'}]}}",
		  "spec.taints[0].effect: required" },
		{ D_NODE, "{'metadata':{'name':'a'},'spec':{'taints':[{'key':'k','effect':''}]}}",
		  "spec.taints[0].effect: required" },
		{ D_NODE,
		  "{'metadata':{'name':'a'},'spec':{'taints':[{'key':'k','effect':'Never'}]}}",
		  "spec.taints[0].effect: unsupported value \"Never\": must be one of "
		  "\"NoSchedule\", "
		  "\"PreferNoSchedule\", \"NoExecute\"" },
		{ D_NODE,
		  "{'metadata':{'name':'a'},'spec':{'taints':[{'key':'k','value':2,"
		  "'effect':'NoSchedule'}]}}",
		  "spec.taints[0].value: must be a string, not a number" },
		{ D_NODE, "{'metadata':{'name':'a'},'status':[]}",
		  "status: must be an object, not a list" },
		{ D_NODE, "{'metadata':{'name':'a'},'status':{'conditions':{}}}",
		  "status.conditions: must be a list, not an object" },
		{ D_NODE, "{'metadata':{'name':'a'},'status':{'conditions':[1]}}",
		  "status.conditions[0]: must be an object, not a number" },
		{ D_NODE,
		  "{'metadata':{'name':'a'},'status':{'conditions':[{'type':'Ready',"
		  "'status':true}]}}",
		  "status.conditions[0].status: must be a string, not a boolean" },
		{ D_NODE, "{'metadata':{'name':'a'},'status':{'allocatable':[]}}",
		  "status.allocatable: must be an object, not a list" },
		{ D_NODE,
		  "{'metadata':{'name':'a'},'status':{'allocatable':{'nvidia.com/gpu':'8x'}}}",
		  "status.allocatable.nvidia.com/gpu: invalid quantity \"8x\"" },
		{ D_NODE, "{'metadata':{'name':'a'},'status':{'capacity':{'cpu':'-1'}}}",
		  "status.capacity.cpu: invalid quantity \"-1\": must not be negative" },
		{ D_NODE, "{'metadata':{'name':'a'},'status':{'capacity':{'cpu':true}}}",
		  "status.capacity.cpu: invalid quantity: must be a string or a number, not a "
		  "boolean" },
		{ D_NODE,
		  "{'metadata':{'name':'a'},'status':{'allocatable':{'cpu':'99999999999999999'}}}",
		  "status.allocatable.cpu: quantity \"99999999999999999\" is out of range: muster "
		  "accounts quantities exactly in int64 milli-units (at most about 9.2e15 units)" },
	};
	run_bad_cases(cases, N(cases));
}

/* A Node into the placement: modelled, or refused under its name with the reason, which the
 * placement keeps (the manager's Event) and plans that find no layout repeat. */
static void test_node_apply(void **state)
{
	struct placement *p;
	char err[256], why[1024];
	assert_int_equal(placement_new(&p), 0);
	json_t *mig = J("{'metadata':{'name':'mig-1'},'status':{'allocatable':{'cpu':'224',"
			"'nvidia.com/gpu':'56'}}}");
	json_t *huge = J("{'metadata':{'name':'huge'},'status':{'allocatable':{'cpu':'8',"
			 "'nvidia.com/gpu':'5000'}}}");
	json_t *bad = J("{'metadata':{'name':'bad'},'status':{'allocatable':{'cpu':'8x'}}}");
	json_t *nameless = J("{'metadata':{},'status':{}}");
	assert_int_equal(pobj_node_apply(p, mig, err, sizeof(err)), 0);
	struct plc_node_usage u;
	assert_int_equal(placement_node_usage(p, "mig-1", &u), 0);
	assert_int_equal(u.gpus, 56);
	assert_int_equal(pobj_node_apply(p, huge, err, sizeof(err)), POBJ_NODE_REFUSED);
	assert_string_equal(err, "5000 nvidia.com/gpu is more than the 1024 GPUs muster models on "
				 "one node");
	assert_string_equal(placement_node_refusal(p, "huge"), err);
	assert_int_equal(pobj_node_apply(p, bad, err, sizeof(err)), POBJ_NODE_REFUSED);
	assert_string_equal(err, "status.allocatable.cpu: invalid quantity \"8x\"");
	assert_string_equal(placement_node_refusal(p, "bad"), err);
	assert_int_equal(pobj_node_apply(p, nameless, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "metadata.name: required");
	/* Seen again unchanged (a heartbeat), modelled or refused alike: nothing to do. */
	assert_int_equal(pobj_node_apply(p, mig, err, sizeof(err)), POBJ_NODE_SAME);
	assert_int_equal(pobj_node_apply(p, huge, err, sizeof(err)), POBJ_NODE_SAME);
	assert_int_equal(pobj_node_apply(p, bad, err, sizeof(err)), POBJ_NODE_SAME);
	json_t *mig2 = J("{'metadata':{'name':'mig-1','labels':{'zone':'a'}},'status':{"
			 "'allocatable':{'cpu':'224','nvidia.com/gpu':'56'}}}");
	assert_int_equal(pobj_node_apply(p, mig2, err, sizeof(err)), 0);
	assert_string_equal(placement_node_label(p, "mig-1", "zone"), "a");
	assert_int_equal(pobj_node_apply(p, mig2, err, sizeof(err)), POBJ_NODE_SAME);
	json_decref(mig2);
	/* A gang bigger than mig-1 says which nodes it couldn't consider. */
	const char *rn[] = { "nvidia.com/gpu" };
	int64_t per[] = { 1000 };
	struct quota_podset ps = { .n_requests = 1, .resources = rn, .per_pod = per };
	struct plc_request r = { .workload = "ns/w", .podset = "main", .count = 57, .pod = &ps };
	struct plc_plan pl;
	assert_int_equal(placement_plan(p, &r, &pl, why, sizeof(why)), 1);
	assert_string_equal(why,
			    "no node layout fits 57 pods of {nvidia.com/gpu: 1}: at most 56 fit "
			    "on the 1 node they may use; node bad not used: "
			    "status.allocatable.cpu: invalid quantity \"8x\"; node huge not "
			    "used: 5000 nvidia.com/gpu is more than the 1024 GPUs muster models "
			    "on one node");
	json_decref(mig);
	json_decref(huge);
	json_decref(bad);
	json_decref(nameless);
	placement_free(p);
}

/* ---------------------------------------------------------------------------- Pod */

#define JOB_UID "6e0f3d3c-7a36-4b38-9f0a-2d9a5c0c1f55"

static void test_pod_bound_to_job(void **state)
{
	json_t *o =
		J("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'train-0-abcde',"
		  "'namespace':'ml','ownerReferences':[{'apiVersion':'v1','kind':'ConfigMap',"
		  "'name':'x','uid':'1'},{'apiVersion':'batch/v1','kind':'Job','name':'train',"
		  "'uid':'" JOB_UID "','controller':true}]},"
		  "'spec':{'nodeName':'gpu-1','initContainers':[{'name':'init','resources':"
		  "{'requests':{'cpu':'4'}}}],'containers':[{'name':'a','resources':{'requests':"
		  "{'cpu':'1','memory':'2Gi'},'limits':{'nvidia.com/gpu':'2'}}},{'name':'b',"
		  "'resources':{'requests':{'cpu':'500m'}}}],'overhead':{'memory':'1Gi'}},"
		  "'status':{'phase':'Running'}}");
	struct pobj_pod p;
	char err[256], wl[300], key[400];
	assert_int_equal(pobj_pod_decode(o, "default", &p, err, sizeof(err)), 0);
	json_decref(o);
	assert_string_equal(p.spec.key, "ml/train-0-abcde");
	assert_string_equal(p.spec.node, "gpu-1");
	assert_false(p.terminal);
	assert_int_equal(p.spec.n_resources, 3);
	/* max(1 + 0.5, init 4) cpu; 2Gi + 1Gi overhead; the GPU limit stands for its request */
	const char *const *names = p.spec.resources;
	assert_int_equal(amount(names, p.spec.requests, p.spec.n_resources, "cpu"), MILLI(4));
	assert_int_equal(amount(names, p.spec.requests, p.spec.n_resources, "memory"), GI(3));
	assert_int_equal(amount(names, p.spec.requests, p.spec.n_resources, "nvidia.com/gpu"),
			 MILLI(2));
	assert_int_equal(integration_workload_name(&integration_job, "train", JOB_UID, wl,
						   sizeof(wl)),
			 0);
	snprintf(key, sizeof(key), "ml/%s", wl);
	assert_string_equal(p.spec.workload, key);
	assert_string_equal(p.spec.podset, "main");
	pobj_pod_release(&p);
	pobj_pod_release(&p);
}

static void test_pod_variants(void **state)
{
	struct pobj_pod p;
	char err[256], wl[300], key[400];

	/* Unbound, in the default namespace, with Kueue's podset label: that name wins. */
	json_t *o = J("{'metadata':{'name':'w','labels':{'kueue.x-k8s.io/podset':'workers'},"
		      "'ownerReferences':[{'apiVersion':'batch/v1','kind':'Job','name':'train',"
		      "'uid':'" JOB_UID "','controller':true}]},'spec':{'containers':[]}}");
	assert_int_equal(pobj_pod_decode(o, "default", &p, err, sizeof(err)), POBJ_POD_UNBOUND);
	assert_string_equal(p.spec.key, "default/w");
	assert_null(p.spec.node);
	assert_int_equal(p.spec.n_resources, 0);
	assert_string_equal(p.spec.podset, "workers");
	pobj_pod_release(&p);
	json_decref(o);

	/* An empty nodeName is unbound too. */
	o = J("{'metadata':{'name':'w','namespace':'a'},'spec':{'nodeName':''}}");
	assert_int_equal(pobj_pod_decode(o, NULL, &p, err, sizeof(err)), POBJ_POD_UNBOUND);
	pobj_pod_release(&p);
	json_decref(o);

	/* Terminal phases. */
	static const char *const phases[] = { "Succeeded", "Failed", "Pending", "Running",
					      "Unknown" };
	for (size_t i = 0; i < N(phases); i++) {
		char text[256];
		snprintf(text, sizeof(text),
			 "{'metadata':{'name':'w','namespace':'a'},'spec':{'nodeName':'n'},"
			 "'status':{'phase':'%s'}}",
			 phases[i]);
		o = J(text);
		assert_int_equal(pobj_pod_decode(o, NULL, &p, err, sizeof(err)), 0);
		assert_int_equal(p.terminal, i < 2);
		pobj_pod_release(&p);
		json_decref(o);
	}

	/* Not a Job's, or not its controller: no workload. */
	static const char *const owners[] = {
		"[]",
		"[{'apiVersion':'batch/v1','kind':'Job','name':'train','uid':'u'}]",
		"[{'apiVersion':'batch/"
		"v1','kind':'Job','name':'train','uid':'u','controller':false}]",
		"[{'apiVersion':'apps/"
		"v1','kind':'ReplicaSet','name':'rs','uid':'u','controller':true}]",
		"[{'apiVersion':'batch/"
		"v2','kind':'Job','name':'train','uid':'u','controller':true}]",
	};
	for (size_t i = 0; i < N(owners); i++) {
		char text[512];
		snprintf(text, sizeof(text),
			 "{'metadata':{'name':'w','namespace':'a','ownerReferences':%s,"
			 "'labels':{'kueue.x-k8s.io/podset':'main'}},'spec':{'nodeName':'n'}}",
			 owners[i]);
		o = J(text);
		assert_int_equal(pobj_pod_decode(o, NULL, &p, err, sizeof(err)), 0);
		if (p.spec.workload || p.spec.podset)
			fail_msg("owner case %zu has a workload", i);
		pobj_pod_release(&p);
		json_decref(o);
	}

	/* A Job owner without uid stands for uid "<namespace>.<name>", as the simulator's Jobs. */
	o = J("{'metadata':{'name':'w','namespace':'ml','ownerReferences':[{'apiVersion':'batch/"
	      "v1',"
	      "'kind':'Job','name':'train','controller':true}]},'spec':{'nodeName':'n'}}");
	assert_int_equal(pobj_pod_decode(o, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(integration_workload_name(&integration_job, "train", "ml.train", wl,
						   sizeof(wl)),
			 0);
	snprintf(key, sizeof(key), "ml/%s", wl);
	assert_string_equal(p.spec.workload, key);
	pobj_pod_release(&p);
	json_decref(o);

	/* A RayCluster's pod maps to its own Workload; one a RayJob released says the RayJob's. */
	o = J("{'metadata':{'name':'w','namespace':'ml','uid':'x','labels':{'kueue.x-k8s.io/"
	      "podset':'workers'},"
	      "'ownerReferences':[{'apiVersion':'ray.io/"
	      "v1','kind':'RayCluster','name':'c','uid':'rc-1',"
	      "'controller':true}]},'spec':{'nodeName':'n'}}");
	assert_int_equal(pobj_pod_decode(o, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(integration_workload_name(&integration_raycluster, "c", "rc-1", wl,
						   sizeof(wl)),
			 0);
	snprintf(key, sizeof(key), "ml/%s", wl);
	assert_string_equal(p.spec.workload, key);
	assert_string_equal(p.spec.podset, "workers");
	pobj_pod_release(&p);
	json_object_set_new(json_object_get(o, "metadata"), "annotations",
			    json_pack("{s:s}", ANNOTATION_WORKLOAD, "rayjob-train-5866d"));
	assert_int_equal(pobj_pod_decode(o, NULL, &p, err, sizeof(err)), 0);
	assert_string_equal(p.spec.workload, "ml/rayjob-train-5866d");
	assert_string_equal(p.spec.podset, "workers");
	pobj_pod_release(&p);
	json_decref(o);
}

static void test_pod_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_POD, "'x'", "Pod: must be an object" },
		{ D_POD, "{'spec':{}}", "metadata.name: required" },
		{ D_POD, "{'metadata':{'name':'-p'},'spec':{}}",
		  "metadata.name: invalid name \"-p\": " NOT_A_SUBDOMAIN },
		{ D_POD, "{'metadata':{'name':'p'}}", "spec: required" },
		{ D_POD, "{'metadata':{'name':'p','namespace':3},'spec':{}}",
		  "metadata.namespace: must be a string, not a number" },
		{ D_POD, "{'metadata':{'name':'p','labels':'x'},'spec':{}}",
		  "metadata.labels: must be an object, not a string" },
		{ D_POD, "{'metadata':{'name':'p'},'spec':[]}",
		  "spec: must be an object, not a list" },
		{ D_POD, "{'metadata':{'name':'p'},'spec':{'nodeName':1}}",
		  "spec.nodeName: must be a string, not a number" },
		{ D_POD, "{'metadata':{'name':'p'},'spec':{},'status':{'phase':1}}",
		  "status.phase: must be a string, not a number" },
		{ D_POD, "{'metadata':{'name':'p'},'spec':{'containers':{}}}",
		  "spec.containers: must be a list, not an object" },
		{ D_POD, "{'metadata':{'name':'p'},'spec':{'containers':[1]}}",
		  "spec.containers[0]: must be an object, not a number" },
		{ D_POD, "{'metadata':{'name':'p'},'spec':{'containers':[{'resources':[]}]}}",
		  "spec.containers[0].resources: must be an object, not a list" },
		{ D_POD,
		  "{'metadata':{'name':'p'},'spec':{'containers':[{'resources':{'requests':"
		  "{'cpu':'1x'}}}]}}",
		  "spec.containers[0].resources.requests.cpu: invalid quantity \"1x\"" },
		{ D_POD,
		  "{'metadata':{'name':'p'},'spec':{'initContainers':[{'resources':{'limits':"
		  "{'memory':'-1Gi'}}}]}}",
		  "spec.initContainers[0].resources.limits.memory: invalid quantity \"-1Gi\": must "
		  "not be "
		  "negative" },
		{ D_POD, "{'metadata':{'name':'p'},'spec':{'overhead':{'cpu':'x'}}}",
		  "spec.overhead.cpu: invalid quantity \"x\"" },
		{ D_POD,
		  "{'metadata':{'name':'p'},'spec':{'containers':[{'resources':{'requests':"
		  "{'cpu':'5000000000000000'}}},{'resources':{'requests':"
		  "{'cpu':'5000000000000000'}}}]}}",
		  "spec: requests for cpu overflow" },
		{ D_POD, "{'metadata':{'name':'p','ownerReferences':{}},'spec':{}}",
		  "metadata.ownerReferences: must be a list, not an object" },
		{ D_POD, "{'metadata':{'name':'p','ownerReferences':[1]},'spec':{}}",
		  "metadata.ownerReferences[0]: must be an object, not a number" },
		{ D_POD,
		  "{'metadata':{'name':'p','ownerReferences':[{'controller':'yes'}]},'spec':{}}",
		  "metadata.ownerReferences[0].controller: must be a boolean, not a string" },
		{ D_POD,
		  "{'metadata':{'name':'p','ownerReferences':[{'apiVersion':'batch/v1',"
		  "'kind':'Job','controller':true}]},'spec':{}}",
		  "metadata.ownerReferences[0].name: required" },
	};
	run_bad_cases(cases, N(cases));

	/* No namespace and no default. */
	json_t *o = J("{'metadata':{'name':'p'},'spec':{}}");
	struct pobj_pod p;
	char err[256];
	assert_int_equal(pobj_pod_decode(o, NULL, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "metadata.namespace: required");
	pobj_pod_release(&p);
	json_decref(o);
}

/* ----------------------------------------------------------------------- Topology */

static void test_topology(void **state)
{
	json_t *o = J(
		"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Topology','metadata':"
		"{'name':'dc'},'spec':{'levels':[{'nodeLabel':'topology.kubernetes.io/zone'},"
		"{'nodeLabel':'cloud.example.com/rack'},{'nodeLabel':'kubernetes.io/hostname'}]}}");
	struct pobj_topology t;
	char err[256];
	assert_int_equal(pobj_topology_decode(o, &t, err, sizeof(err)), 0);
	json_decref(o);
	assert_string_equal(t.name, "dc");
	assert_int_equal(t.n_levels, 3);
	assert_string_equal(t.levels[0], "topology.kubernetes.io/zone");
	assert_string_equal(t.levels[1], "cloud.example.com/rack");
	assert_string_equal(t.levels[2], "kubernetes.io/hostname");
	pobj_topology_release(&t);
	pobj_topology_release(&t);

	/* 16 levels, names without a prefix. */
	char text[2048] = "{'metadata':{'name':'deep'},'spec':{'levels':[";
	for (int i = 0; i < 16; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s{'nodeLabel':'l%d'}",
			 i ? "," : "", i);
	strcat(text, "]}}");
	o = J(text);
	assert_int_equal(pobj_topology_decode(o, &t, err, sizeof(err)), 0);
	assert_int_equal(t.n_levels, 16);
	assert_string_equal(t.levels[15], "l15");
	pobj_topology_release(&t);
	json_decref(o);
}

static void test_topology_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_TOPOLOGY, "[]", "Topology: must be an object" },
		{ D_TOPOLOGY, "{'metadata':{}}", "metadata.name: required" },
		{ D_TOPOLOGY, "{'metadata':{'name':'DC'}}",
		  "metadata.name: invalid name \"DC\": " NOT_A_SUBDOMAIN },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'},'status':{}}", "status: unknown field" },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'}}", "spec: required" },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'},'spec':{}}",
		  "spec.levels: required: list 1 to 16 levels" },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'},'spec':{'levels':[]}}",
		  "spec.levels: required: list 1 to 16 levels" },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'},'spec':{'levels':{}}}",
		  "spec.levels: must be a list, not an object" },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'},'spec':{'levels':[],'extra':1}}",
		  "spec.extra: unknown field" },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'},'spec':{'levels':['rack']}}",
		  "spec.levels[0]: must be an object, not a string" },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'},'spec':{'levels':[{'label':'rack'}]}}",
		  "spec.levels[0].label: unknown field" },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'},'spec':{'levels':[{}]}}",
		  "spec.levels[0].nodeLabel: required" },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'},'spec':{'levels':[{'nodeLabel':5}]}}",
		  "spec.levels[0].nodeLabel: must be a string, not a number" },
		{ D_TOPOLOGY,
		  "{'metadata':{'name':'t'},'spec':{'levels':[{'nodeLabel':'Bad_/x'}]}}",
		  "spec.levels[0].nodeLabel: invalid label key \"Bad_/x\": an optional DNS "
		  "subdomain "
		  "prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and "
		  "ending "
		  "with a letter or digit" },
		{ D_TOPOLOGY, "{'metadata':{'name':'t'},'spec':{'levels':[{'nodeLabel':'rack-'}]}}",
		  "spec.levels[0].nodeLabel: invalid label key \"rack-\": an optional DNS "
		  "subdomain "
		  "prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and "
		  "ending "
		  "with a letter or digit" },
		{ D_TOPOLOGY,
		  "{'metadata':{'name':'t'},'spec':{'levels':[{'nodeLabel':'rack'},"
		  "{'nodeLabel':'rack'}]}}",
		  "spec.levels[1].nodeLabel: duplicate level \"rack\"" },
		{ D_TOPOLOGY,
		  "{'metadata':{'name':'t'},'spec':{'levels':[{'nodeLabel':"
		  "'kubernetes.io/hostname'},{'nodeLabel':'rack'}]}}",
		  "spec.levels[0].nodeLabel: kubernetes.io/hostname can only be the lowest (last) "
		  "level" },
		{ D_TOPOLOGY,
		  "{'metadata':{'name':'t'},'spec':{'levels':[{'nodeLabel':'a'},"
		  "{'nodeLabel':'b'},"
		  "{'nodeLabel':'c'},{'nodeLabel':'d'},{'nodeLabel':'e'},{'nodeLabel':'f'},"
		  "{'nodeLabel':'g'},{'nodeLabel':'h'},{'nodeLabel':'i'},{'nodeLabel':'j'},"
		  "{'nodeLabel':'k'},{'nodeLabel':'l'},{'nodeLabel':'m'},{'nodeLabel':'n'},"
		  "{'nodeLabel':'o'},{'nodeLabel':'p'},{'nodeLabel':'q'}]}}",
		  "spec.levels: at most 16 levels, got 17" },
	};
	run_bad_cases(cases, N(cases));
}

/* ------------------------------------------------------------------------ catalog */

static void catalog_add(struct pobj_catalog *c, const char *flavor_or_topology)
{
	json_t *o = J(flavor_or_topology);
	char err[256];
	const char *kind = json_string_value(json_object_get(o, "kind"));
	int rc = kind && !strcmp(kind, "Topology") ?
			 pobj_catalog_set_topology(c, o, err, sizeof(err)) :
			 pobj_catalog_set_flavor(c, o, err, sizeof(err));
	if (rc != 0)
		fail_msg("catalog: %s", err);
	json_decref(o);
}

static void test_catalog(void **state)
{
	struct pobj_catalog c;
	const char *tn = "unset";
	pobj_catalog_init(&c);
	assert_null(pobj_catalog_flavor(&c, "gpu", &tn));
	assert_null(tn);
	catalog_add(&c, "{'kind':'ResourceFlavor','metadata':{'name':'gpu'},'spec':{'nodeLabels':"
			"{'pool':'gpu'},'topologyName':'dc'}}");
	const struct quota_flavor *f = pobj_catalog_flavor(&c, "gpu", &tn);
	assert_non_null(f);
	assert_string_equal(f->name, "gpu");
	assert_string_equal(f->labels[0].value, "gpu");
	assert_string_equal(tn, "dc");
	/* A flavor may name a Topology that doesn't exist yet. */
	assert_null(pobj_catalog_topology(&c, "dc"));
	catalog_add(&c, "{'kind':'Topology','metadata':{'name':'dc'},'spec':{'levels':"
			"[{'nodeLabel':'rack'}]}}");
	const struct pobj_topology *t = pobj_catalog_topology(&c, "dc");
	assert_non_null(t);
	assert_int_equal(t->n_levels, 1);

	/* Replacing: no topology any more; a Topology replaced in place. */
	catalog_add(&c, "{'kind':'ResourceFlavor','metadata':{'name':'gpu'},'spec':{}}");
	assert_non_null(pobj_catalog_flavor(&c, "gpu", &tn));
	assert_null(tn);
	catalog_add(&c, "{'kind':'Topology','metadata':{'name':'dc'},'spec':{'levels':"
			"[{'nodeLabel':'zone'},{'nodeLabel':'rack'}]}}");
	assert_int_equal(pobj_catalog_topology(&c, "dc")->n_levels, 2);

	/* A bad object leaves the catalog as it was. */
	json_t *o = J("{'kind':'Topology','metadata':{'name':'dc'},'spec':{'levels':[]}}");
	char err[256];
	assert_int_equal(pobj_catalog_set_topology(&c, o, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "spec.levels: required: list 1 to 16 levels");
	assert_int_equal(pobj_catalog_topology(&c, "dc")->n_levels, 2);
	json_decref(o);

	pobj_catalog_remove_flavor(&c, "gpu");
	pobj_catalog_remove_flavor(&c, "gpu"); /* absent: nothing happens */
	assert_null(pobj_catalog_flavor(&c, "gpu", NULL));
	pobj_catalog_remove_topology(&c, "dc");
	assert_null(pobj_catalog_topology(&c, "dc"));
	pobj_catalog_release(&c);
}

static void test_catalog_flavor_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'topologyName':''}}",
		  "spec.topologyName: must not be empty" },
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'topologyName':['dc']}}",
		  "spec.topologyName: must be a string, not a list" },
		/* eobj_flavor_decode's own checks */
		{ D_FLAVOR, "{'metadata':{'name':'a'},'spec':{'nodeLabels':{'x':1}}}",
		  "spec.nodeLabels.x: must be a string, not a number" },
	};
	run_bad_cases(cases, N(cases));
}

/* ----------------------------------------------------------------------- requests */

static void catalog_for_requests(struct pobj_catalog *c)
{
	pobj_catalog_init(c);
	catalog_add(c, "{'kind':'ResourceFlavor','metadata':{'name':'gpu-a'},'spec':{'nodeLabels':"
		       "{'pool':'gpu','zone':'a'},'nodeTaints':[{'key':'nvidia.com/gpu','effect':"
		       "'NoSchedule'}],'tolerations':[{'key':'nvidia.com/gpu','operator':'Exists',"
		       "'effect':'NoSchedule'}],'topologyName':'dc'}}");
	catalog_add(c, "{'kind':'ResourceFlavor','metadata':{'name':'cpu-a'},'spec':{'nodeLabels':"
		       "{'zone':'a','cpu':'fast'},'tolerations':[{'key':'spot','operator':'Equal',"
		       "'value':'true'}]}}");
	catalog_add(c, "{'kind':'ResourceFlavor','metadata':{'name':'cpu-b'},'spec':{'nodeLabels':"
		       "{'zone':'b'}}}");
	catalog_add(c, "{'kind':'ResourceFlavor','metadata':{'name':'lost'},'spec':"
		       "{'topologyName':'nowhere'}}");
	catalog_add(c, "{'kind':'ResourceFlavor','metadata':{'name':'other'},'spec':"
		       "{'topologyName':'dc2'}}");
	catalog_add(c, "{'kind':'Topology','metadata':{'name':'dc'},'spec':{'levels':[{'nodeLabel':"
		       "'zone'},{'nodeLabel':'rack'},{'nodeLabel':'kubernetes.io/hostname'}]}}");
	catalog_add(c, "{'kind':'Topology','metadata':{'name':'dc2'},'spec':{'levels':"
		       "[{'nodeLabel':'block'}]}}");
}

/* An assignment of cpu and GPU to the given flavors. */
static struct eng_podset_assignment assignment(const char *cpu_flavor, const char *gpu_flavor,
					       int64_t count)
{
	struct eng_podset_assignment pa = { .name = "main", .count = count };
	if (cpu_flavor) {
		pa.resources[pa.n] = "cpu";
		pa.flavors[pa.n] = cpu_flavor;
		pa.usage[pa.n++] = MILLI(count);
	}
	if (gpu_flavor) {
		pa.resources[pa.n] = "nvidia.com/gpu";
		pa.flavors[pa.n] = gpu_flavor;
		pa.usage[pa.n++] = MILLI(count);
	}
	return pa;
}

/* A podSet with the given extra podSet fields and template metadata. */
static json_t *podset(const char *extra, const char *template_meta)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{'name':'main','count':8,%s%s'template':{'metadata':{%s},'spec':{'nodeSelector':"
		 "{'disk':'ssd'},'tolerations':[{'key':'team','operator':'Exists'}],'containers':"
		 "[{'name':'c','resources':{'requests':{'cpu':'1','nvidia.com/gpu':'1'}}}]}}}",
		 extra, *extra ? "," : "", template_meta);
	return J(text);
}

static void test_request_merged_flavors(void **state)
{
	struct pobj_catalog c;
	struct pobj_request r;
	char err[512];
	catalog_for_requests(&c);
	json_t *ps = podset("", "");
	struct eng_podset_assignment pa = assignment("cpu-a", "gpu-a", 4);
	int rc = pobj_request_build(&c, "ml/train", ps, &pa, PLC_BEST_FIT, &r, err, sizeof(err));
	assert_int_equal(rc, 0);
	json_decref(ps); /* the request holds its own reference */
	assert_string_equal(r.req.workload, "ml/train");
	assert_string_equal(r.req.podset, "main");
	assert_int_equal(r.req.count, 4); /* the assignment's, not the podSet's 8 */
	assert_int_equal(r.req.policy, PLC_BEST_FIT);
	/* the pod's own constraints */
	assert_int_equal(r.req.pod->n_requests, 2);
	assert_int_equal(amount(r.req.pod->resources, r.req.pod->per_pod, 2, "nvidia.com/gpu"),
			 MILLI(1));
	assert_int_equal(r.req.pod->n_selector, 1);
	assert_string_equal(r.req.pod->node_selector[0].value, "ssd");
	assert_int_equal(r.req.pod->n_tolerations, 1);
	/* both flavors, merged */
	const struct quota_flavor *f = r.req.flavor;
	assert_non_null(f);
	assert_string_equal(f->name, "cpu-a+gpu-a");
	assert_int_equal(f->n_labels, 3);
	assert_string_equal(label(f->labels, f->n_labels, "zone"), "a");
	assert_string_equal(label(f->labels, f->n_labels, "cpu"), "fast");
	assert_string_equal(label(f->labels, f->n_labels, "pool"), "gpu");
	assert_int_equal(f->n_tolerations, 2);
	assert_string_equal(f->tolerations[0].key, "spot");
	assert_false(f->tolerations[0].exists);
	assert_string_equal(f->tolerations[1].key, "nvidia.com/gpu");
	assert_true(f->tolerations[1].exists);
	assert_int_equal(f->n_taints, 0); /* the nodes' own taints decide */
	/* gpu-a names Topology dc; no request: its levels, nothing required or preferred */
	assert_non_null(r.req.topology);
	assert_int_equal(r.req.topology->n_levels, 3);
	assert_string_equal(r.req.topology->levels[1], "rack");
	assert_null(r.req.topology->required);
	assert_null(r.req.topology->preferred);
	/* the catalog may change while the request lives */
	pobj_catalog_release(&c);
	assert_string_equal(label(f->labels, f->n_labels, "pool"), "gpu");
	assert_string_equal(r.req.topology->levels[2], "kubernetes.io/hostname");
	pobj_request_release(&r);
	pobj_request_release(&r);
}

static void test_request_no_flavor_no_topology(void **state)
{
	struct pobj_catalog c;
	struct pobj_request r;
	char err[512];
	catalog_for_requests(&c);
	json_t *ps = podset("", "");
	struct eng_podset_assignment pa = assignment(NULL, NULL, 2);
	assert_int_equal(pobj_request_build(&c, "ml/x", ps, &pa, PLC_MUSTER, &r, err, sizeof(err)),
			 0);
	assert_null(r.req.flavor);
	assert_null(r.req.topology);
	pobj_request_release(&r);
	/* cpu-b alone: a flavor, no Topology */
	pa = assignment("cpu-b", "cpu-b", 2);
	assert_int_equal(pobj_request_build(&c, "ml/x", ps, &pa, PLC_MUSTER, &r, err, sizeof(err)),
			 0);
	assert_string_equal(r.req.flavor->name, "cpu-b"); /* once, however many resources */
	assert_null(r.req.topology);
	pobj_request_release(&r);
	json_decref(ps);
	pobj_catalog_release(&c);
}

static void test_request_topology_sources(void **state)
{
	static const struct {
		const char *extra, *meta;
		const char *required, *preferred;
		int has_topology;
	} cases[] = {
		{ "'topologyRequest':{'required':'rack'}", "", "rack", NULL, 1 },
		{ "'topologyRequest':{'preferred':'zone','podIndexLabel':'idx'}", "", NULL, "zone",
		  1 },
		{ "'topologyRequest':{'unconstrained':true}", "", NULL, NULL, 0 },
		{ "'topologyRequest':{'unconstrained':false}", "", NULL, NULL, 1 },
		{ "'topologyRequest':{}", "", NULL, NULL, 1 },
		/* topologyRequest wins over the annotations */
		{ "'topologyRequest':{'required':'zone'}",
		  "'annotations':{'kueue.x-k8s.io/podset-required-topology':'rack'}", "zone", NULL,
		  1 },
		{ "", "'annotations':{'kueue.x-k8s.io/podset-required-topology':'rack'}", "rack",
		  NULL, 1 },
		{ "",
		  "'annotations':{'kueue.x-k8s.io/podset-preferred-topology':'kubernetes.io/"
		  "hostname'}",
		  NULL, "kubernetes.io/hostname", 1 },
		{ "", "'annotations':{'kueue.x-k8s.io/podset-unconstrained-topology':'true'}", NULL,
		  NULL, 0 },
		{ "", "'annotations':{'kueue.x-k8s.io/podset-unconstrained-topology':'F'}", NULL,
		  NULL, 1 },
		{ "", "'annotations':{'other':'x'}", NULL, NULL, 1 },
	};
	struct pobj_catalog c;
	catalog_for_requests(&c);
	for (size_t i = 0; i < N(cases); i++) {
		struct pobj_request r;
		char err[512];
		json_t *ps = podset(cases[i].extra, cases[i].meta);
		struct eng_podset_assignment pa = assignment("cpu-a", "gpu-a", 1);
		if (pobj_request_build(&c, "ml/x", ps, &pa, PLC_MUSTER, &r, err, sizeof(err)) != 0)
			fail_msg("case %zu: %s", i, err);
		if ((r.req.topology != NULL) != cases[i].has_topology)
			fail_msg("case %zu: topology %p", i, (const void *)r.req.topology);
		if (r.req.topology) {
			const char *req = r.req.topology->required,
				   *pref = r.req.topology->preferred;
			if ((req == NULL) != (cases[i].required == NULL) ||
			    (req && strcmp(req, cases[i].required)) ||
			    (pref == NULL) != (cases[i].preferred == NULL) ||
			    (pref && strcmp(pref, cases[i].preferred)))
				fail_msg("case %zu: required %s preferred %s", i, req ? req : "-",
					 pref ? pref : "-");
		}
		pobj_request_release(&r);
		json_decref(ps);
	}
	pobj_catalog_release(&c);
}

static void test_request_errors(void **state)
{
	static const struct {
		const char *extra, *meta, *cpu, *gpu;
		const char *message;
	} cases[] = {
		{ "'topologyRequest':[]", "", "cpu-a", "gpu-a",
		  "topologyRequest: must be an object, not a list" },
		{ "'topologyRequest':{'required':1}", "", "cpu-a", "gpu-a",
		  "topologyRequest.required: must be a string, not a number" },
		{ "'topologyRequest':{'unconstrained':'yes'}", "", "cpu-a", "gpu-a",
		  "topologyRequest.unconstrained: must be a boolean, not a string" },
		{ "'topologyRequest':{'required':'rack','preferred':'zone'}", "", "cpu-a", "gpu-a",
		  "topologyRequest: set at most one of required, preferred and unconstrained" },
		{ "'topologyRequest':{'required':''}", "", "cpu-a", "gpu-a",
		  "topologyRequest.required: must not be empty" },
		{ "", "'annotations':[]", "cpu-a", "gpu-a",
		  "template.metadata.annotations: must be an object, not a list" },
		{ "",
		  "'annotations':{'kueue.x-k8s.io/podset-required-topology':'rack',"
		  "'kueue.x-k8s.io/podset-unconstrained-topology':'false'}",
		  "cpu-a", "gpu-a",
		  "template.metadata.annotations: must not contain more than one topology "
		  "annotation: "
		  "[\"kueue.x-k8s.io/podset-required-topology\", "
		  "\"kueue.x-k8s.io/podset-preferred-topology\", "
		  "\"kueue.x-k8s.io/podset-unconstrained-topology\"]" },
		{ "", "'annotations':{'kueue.x-k8s.io/podset-unconstrained-topology':'maybe'}",
		  "cpu-a", "gpu-a",
		  "template.metadata.annotations[\"kueue.x-k8s.io/"
		  "podset-unconstrained-topology\"]: "
		  "invalid value \"maybe\": must be a boolean value" },
		{ "", "'annotations':{'kueue.x-k8s.io/podset-preferred-topology':''}", "cpu-a",
		  "gpu-a",
		  "template.metadata.annotations[\"kueue.x-k8s.io/podset-preferred-topology\"]: "
		  "must not "
		  "be empty" },
		{ "", "'annotations':{'kueue.x-k8s.io/podset-required-topology':7}", "cpu-a",
		  "gpu-a",
		  "template.metadata.annotations.kueue.x-k8s.io/podset-required-topology: must be "
		  "a "
		  "string, not a number" },
		/* a level the flavor's Topology doesn't have */
		{ "'topologyRequest':{'required':'block'}", "", "cpu-a", "gpu-a",
		  "topologyRequest.required: \"block\" is not a level of Topology dc (of flavor "
		  "gpu-a), "
		  "whose levels are zone, rack, kubernetes.io/hostname" },
		{ "", "'annotations':{'kueue.x-k8s.io/podset-preferred-topology':'row'}", "cpu-a",
		  "gpu-a",
		  "template.metadata.annotations[\"kueue.x-k8s.io/podset-preferred-topology\"]: "
		  "\"row\" "
		  "is not a level of Topology dc (of flavor gpu-a), whose levels are zone, rack, "
		  "kubernetes.io/hostname" },
		/* a level, but no Topology at all */
		{ "'topologyRequest':{'preferred':'rack'}", "", "cpu-b", "cpu-b",
		  "topologyRequest.preferred: topology level \"rack\" requested, but no flavor of "
		  "the "
		  "podSet (cpu-b) names a Topology (spec.topologyName)" },
		{ "'topologyRequest':{'required':'rack'}", "", NULL, NULL,
		  "topologyRequest.required: topology level \"rack\" requested, but no flavor of "
		  "the "
		  "podSet (none) names a Topology (spec.topologyName)" },
		/* objects that don't exist or don't agree */
		{ "", "", "cpu-a", "lost",
		  "ResourceFlavor lost names Topology \"nowhere\", which doesn't exist" },
		{ "", "", "missing", "gpu-a", "ResourceFlavor \"missing\" doesn't exist" },
		{ "", "", "other", "gpu-a",
		  "flavors other and gpu-a name different Topologies (dc2, dc): a podSet is placed "
		  "within one" },
		{ "", "", "cpu-b", "gpu-a",
		  "flavors cpu-b and gpu-a set node label zone to different values (\"b\", \"a\"): "
		  "no "
		  "node has both" },
		{ "'template':{'spec':{'containers':[{'resources':{'requests':{'cpu':'x'}}}]}}", "",
		  "cpu-a", "gpu-a",
		  "template.spec.containers[0].resources.requests.cpu: invalid quantity \"x\"" },
	};
	struct pobj_catalog c;
	catalog_for_requests(&c);
	for (size_t i = 0; i < N(cases); i++) {
		struct pobj_request r;
		char err[512] = "";
		json_t *ps;
		if (!strncmp(cases[i].extra, "'template'", 10)) {
			char text[512];
			snprintf(text, sizeof(text), "{'name':'main',%s}", cases[i].extra);
			ps = J(text);
		} else {
			ps = podset(cases[i].extra, cases[i].meta);
		}
		struct eng_podset_assignment pa = assignment(cases[i].cpu, cases[i].gpu, 1);
		int rc = pobj_request_build(&c, "ml/x", ps, &pa, PLC_MUSTER, &r, err, sizeof(err));
		pobj_request_release(&r);
		json_decref(ps);
		if (rc != -EINVAL)
			fail_msg("case %zu: rc %d", i, rc);
		if (strcmp(err, cases[i].message) != 0)
			fail_msg("case %zu:\n got: %s\nwant: %s", i, err, cases[i].message);
	}
	pobj_catalog_release(&c);
}

/* ------------------------------------------------------------ pobj_place_workload */

static void add_node(struct placement *p, const char *json)
{
	json_t *o = J(json);
	struct pobj_node n;
	char err[256];
	if (pobj_node_decode(o, &n, err, sizeof(err)) != 0)
		fail_msg("node: %s", err);
	assert_int_equal(placement_set_node(p, &n.spec), 0);
	pobj_node_release(&n);
	json_decref(o);
}

static void test_place_workload(void **state)
{
	struct placement *p;
	struct pobj_catalog c;
	struct pobj_plan plan = { 0 };
	char msg[1024];
	assert_int_equal(placement_new(&p), 0);
	catalog_for_requests(&c);
	/* Two 8-GPU nodes in zone a, racks r1 and r2, tainted for GPU pods. */
	add_node(p, "{'metadata':{'name':'n1','labels':{'pool':'gpu','zone':'a','rack':'r1',"
		    "'cpu':'fast','disk':'ssd'}},'spec':{'taints':[{'key':'nvidia.com/gpu',"
		    "'effect':'NoSchedule'}]},'status':{'allocatable':{'cpu':64,'nvidia.com/"
		    "gpu':8}}}");
	add_node(p, "{'metadata':{'name':'n2','labels':{'pool':'gpu','zone':'a','rack':'r2',"
		    "'cpu':'fast','disk':'ssd'}},'spec':{'taints':[{'key':'nvidia.com/gpu',"
		    "'effect':'NoSchedule'}]},'status':{'allocatable':{'cpu':64,'nvidia.com/"
		    "gpu':8}}}");
	json_t *wl = J("{'metadata':{'name':'train','namespace':'ml'},'spec':{'podSets':["
		       "{'name':'driver','count':1,'template':{'spec':{'containers':[{'resources':"
		       "{'requests':{'cpu':'1','nvidia.com/gpu':'1'}}}]}}},"
		       "{'name':'workers','count':5,'topologyRequest':{'required':'rack'},"
		       "'template':{'spec':{'containers':[{'resources':{'requests':{'cpu':'1',"
		       "'nvidia.com/gpu':'1'}}}]}}},"
		       "{'name':'none','count':0,'template':{'spec':{}}}]}}");
	struct eng_assignment a = { .cluster_queue = "cq", .n_podsets = 3 };
	a.podsets[0] = assignment("cpu-a", "gpu-a", 1);
	a.podsets[0].name = "driver";
	a.podsets[1] = assignment("cpu-a", "gpu-a", 5);
	a.podsets[1].name = "workers";
	a.podsets[2] = assignment(NULL, NULL, 0);
	a.podsets[2].name = "none";
	assert_int_equal(pobj_place_workload(p, &c, wl, "ml/train", &a, PLC_MUSTER, &plan, msg,
					     sizeof(msg)),
			 0);
	assert_int_equal(plan.n_podsets, 3);
	assert_string_equal(plan.podsets[0].podset, "driver");
	assert_int_equal(plan.podsets[0].count, 1);
	assert_int_equal(plan.podsets[0].n_slots, 1);
	assert_string_equal(plan.podsets[1].podset, "workers");
	/* required rack: the five workers share one node (one rack) */
	int64_t total = 0;
	for (size_t i = 0; i < plan.podsets[1].n_slots; i++)
		total += plan.podsets[1].slots[i].count;
	assert_int_equal(total, 5);
	assert_int_equal(plan.podsets[1].n_slots, 1);
	assert_int_equal(plan.podsets[2].count, 0);
	assert_int_equal(plan.podsets[2].n_slots, 0);
	/* reserved: 6 of 16 GPUs */
	struct plc_totals t;
	placement_totals(p, &t);
	assert_int_equal(t.gpu_allocated, MILLI(6));

	/* A second gang of 11 doesn't fit the 10 GPUs left: nothing of it stays reserved. */
	a.podsets[1].count = 11;
	a.podsets[1].usage[1] = MILLI(11);
	a.n_podsets = 2;
	assert_int_equal(pobj_place_workload(p, &c, wl, "ml/big", &a, PLC_MUSTER, &plan, msg,
					     sizeof(msg)),
			 1);
	assert_int_equal(strncmp(msg, "couldn't place pod set workers on nodes: ", 41), 0);
	assert_int_equal(plan.n_podsets, 0);
	placement_totals(p, &t);
	assert_int_equal(t.gpu_allocated, MILLI(6));

	/* A request that can't be built: 1, with the reason. */
	a.podsets[0].flavors[1] = "lost";
	assert_int_equal(pobj_place_workload(p, &c, wl, "ml/other", &a, PLC_MUSTER, &plan, msg,
					     sizeof(msg)),
			 1);
	assert_string_equal(msg,
			    "couldn't place pod set driver: ResourceFlavor lost names Topology "
			    "\"nowhere\", which doesn't exist");
	a.podsets[0].name = "ghost";
	assert_int_equal(pobj_place_workload(p, &c, wl, "ml/other", &a, PLC_MUSTER, &plan, msg,
					     sizeof(msg)),
			 1);
	assert_string_equal(msg, "couldn't place pod set ghost: not in spec.podSets");

	/* Releasing the first gang frees its GPUs. */
	placement_release(p, "ml/train");
	placement_totals(p, &t);
	assert_int_equal(t.gpu_allocated, 0);
	pobj_plan_release(&plan);
	json_decref(wl);
	pobj_catalog_release(&c);
	placement_free(p);
}

/* ------------------------------------------------------- Job -> Workload topology */

static json_t *job_with_annotations(const char *annotations)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j','namespace':'ml',"
		 "'uid':'" JOB_UID "','labels':{'kueue.x-k8s.io/queue-name':'q'}},'spec':{"
		 "'parallelism':4,'template':{'metadata':{'annotations':{%s}},'spec':{'containers':"
		 "[{'name':'c','resources':{'requests':{'cpu':'1'}}}]}}}}",
		 annotations);
	return J(text);
}

static void test_job_topology_request(void **state)
{
	static const struct {
		const char *annotations;
		const char *want; /* the podSet's topologyRequest as JSON, or NULL */
	} cases[] = {
		{ "", NULL },
		{ "'other':'x'", NULL },
		{ "'kueue.x-k8s.io/podset-required-topology':'rack'",
		  "{'required':'rack','podIndexLabel':'batch.kubernetes.io/"
		  "job-completion-index'}" },
		{ "'kueue.x-k8s.io/podset-preferred-topology':'kubernetes.io/hostname'",
		  "{'preferred':'kubernetes.io/hostname',"
		  "'podIndexLabel':'batch.kubernetes.io/job-completion-index'}" },
		{ "'kueue.x-k8s.io/podset-unconstrained-topology':'true'",
		  "{'unconstrained':true,'podIndexLabel':'batch.kubernetes.io/"
		  "job-completion-index'}" },
		{ "'kueue.x-k8s.io/podset-unconstrained-topology':'0'",
		  "{'unconstrained':false,'podIndexLabel':'batch.kubernetes.io/"
		  "job-completion-index'}" },
	};
	for (size_t i = 0; i < N(cases); i++) {
		json_t *job = job_with_annotations(cases[i].annotations);
		char err[512];
		json_t *wl = integration_workload_new(&integration_job, job, err, sizeof(err));
		if (!wl)
			fail_msg("case %zu: %s", i, err);
		json_t *ps = json_array_get(obj_path(wl, "spec.podSets"), 0);
		json_t *tr = json_object_get(ps, "topologyRequest");
		if (!cases[i].want) {
			assert_null(tr);
		} else {
			json_t *want = J(cases[i].want);
			if (!json_equal(tr, want)) {
				char *got = json_dumps(tr, JSON_COMPACT);
				fail_msg("case %zu: got %s", i, got ? got : "null");
			}
			json_decref(want);
		}
		/* The annotations stay on the template, as Kueue leaves them. */
		assert_int_equal(json_object_size(obj_path(ps, "template.metadata.annotations")),
				 *cases[i].annotations ? 1 : 0);
		json_decref(wl);
		json_decref(job);
	}
}

static void test_job_topology_errors(void **state)
{
	static const struct {
		const char *annotations, *message;
	} cases[] = {
		{ "'kueue.x-k8s.io/podset-required-topology':'rack','kueue.x-k8s.io/"
		  "podset-preferred-"
		  "topology':'zone'",
		  "spec.template.metadata.annotations: must not contain more than one topology "
		  "annotation: [\"kueue.x-k8s.io/podset-required-topology\", "
		  "\"kueue.x-k8s.io/podset-"
		  "preferred-topology\", \"kueue.x-k8s.io/podset-unconstrained-topology\"]" },
		{ "'kueue.x-k8s.io/podset-unconstrained-topology':'yes'",
		  "spec.template.metadata.annotations[\"kueue.x-k8s.io/"
		  "podset-unconstrained-topology\"]: "
		  "invalid value \"yes\": must be a boolean value" },
		{ "'kueue.x-k8s.io/podset-unconstrained-topology':true",
		  "spec.template.metadata.annotations[\"kueue.x-k8s.io/"
		  "podset-unconstrained-topology\"]: "
		  "must be a non-empty string" },
		{ "'kueue.x-k8s.io/podset-required-topology':''",
		  "spec.template.metadata.annotations[\"kueue.x-k8s.io/"
		  "podset-required-topology\"]: "
		  "must be a non-empty string" },
	};
	for (size_t i = 0; i < N(cases); i++) {
		json_t *job = job_with_annotations(cases[i].annotations);
		char err[512] = "";
		json_t *wl = integration_workload_new(&integration_job, job, err, sizeof(err));
		if (wl)
			fail_msg("case %zu: converted", i);
		if (strcmp(err, cases[i].message) != 0)
			fail_msg("case %zu:\n got: %s\nwant: %s", i, err, cases[i].message);
		json_decref(job);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_every_field),
		cmocka_unit_test(test_node_defaults_and_schedulable),
		cmocka_unit_test(test_node_errors),
		cmocka_unit_test(test_node_apply),
		cmocka_unit_test(test_pod_bound_to_job),
		cmocka_unit_test(test_pod_variants),
		cmocka_unit_test(test_pod_errors),
		cmocka_unit_test(test_topology),
		cmocka_unit_test(test_topology_errors),
		cmocka_unit_test(test_catalog),
		cmocka_unit_test(test_catalog_flavor_errors),
		cmocka_unit_test(test_request_merged_flavors),
		cmocka_unit_test(test_request_no_flavor_no_topology),
		cmocka_unit_test(test_request_topology_sources),
		cmocka_unit_test(test_request_errors),
		cmocka_unit_test(test_place_workload),
		cmocka_unit_test(test_job_topology_request),
		cmocka_unit_test(test_job_topology_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
