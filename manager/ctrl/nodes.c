/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Nodes, pods and placement (core/placement.h) in the manager: the node model fed by the Node
 * and Pod informers, the engine's node-feasibility hook, the plans kept for admitted
 * workloads, and the hints a Job gets at start.
 *
 * Memory: the Node and Pod informers keep slim copies (slim_node, slim_pod), only what
 * placement and the exact mode need, so watching every pod of a large cluster stays cheap.
 *
 * Lifetimes: a reservation and its plan live from the engine's admission (place_hook) until the
 * workload is no longer admitted (nodes_release: finished, evicted, deleted, or a lost write).
 * After a restart, admitted workloads have no reservation: their pods are bound or about to
 * be, and a workload not released yet gets a fresh plan at release (nodes_start_hints).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/placement_objects.h"
#include "core/grow.h"
#include "ctrl/internal.h"
#include "util/log.h"

/* Kueue's scheduling gate for topology-aware scheduling; the exact mode uses it the same way:
 * pods are created gated, get a node, then the gate goes. */
#define GATE_TOPOLOGY "kueue.x-k8s.io/topology"

/* Preferred node-affinity weights: the first node of a plan gets the most, the last at least
 * HINT_WEIGHT_MIN. kube-scheduler scales NodeAffinity so the best node scores 100, times the
 * plugin weight 2; with two tiers the gap (100) matches the most NodeResourcesFit (weight 1)
 * can move, and cpu/memory requests of GPU pods rarely differ that much between nodes. */
#define HINT_WEIGHT_MAX 100
#define HINT_WEIGHT_MIN 50

/* --- slim copies ----------------------------------------------------------------------- */

static void keep(json_t *dst, json_t *src, const char *name)
{
	json_t *v = json_object_get(src, name);
	if (v)
		json_object_set(dst, name, v);
}

json_t *nodes_slim_node(json_t *obj, int *cut)
{
	*cut = 1; /* a copy of the fields read: never the event's text */
	json_t *meta = json_object(), *spec = json_object(), *status = json_object();
	json_t *out =
		json_pack("{s:o, s:o, s:o}", "metadata", meta, "spec", spec, "status", status);
	if (!out)
		return NULL;
	json_t *m = json_object_get(obj, "metadata");
	keep(meta, m, "name");
	keep(meta, m, "resourceVersion");
	keep(meta, m, "uid"); /* for the Events muster records on a Node it can't model */
	keep(meta, m, "labels");
	keep(spec, json_object_get(obj, "spec"), "unschedulable");
	keep(spec, json_object_get(obj, "spec"), "taints");
	json_t *st = json_object_get(obj, "status");
	keep(status, st, "allocatable");
	if (!json_object_get(st, "allocatable"))
		keep(status, st, "capacity");
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(st, "conditions"), i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type"));
		if (type && !strcmp(type, "Ready"))
			json_object_set_new(status, "conditions",
					    json_pack("[{s:s, s:O}]", "type", "Ready", "status",
						      json_object_get(c, "status")));
	}
	return out;
}

json_t *nodes_slim_pod(json_t *obj, int *cut)
{
	*cut = 1; /* a copy of the fields read: never the event's text */
	json_t *meta = json_object(), *spec = json_object(), *status = json_object();
	json_t *out =
		json_pack("{s:o, s:o, s:o}", "metadata", meta, "spec", spec, "status", status);
	if (!out)
		return NULL;
	json_t *m = json_object_get(obj, "metadata");
	keep(meta, m, "name");
	keep(meta, m, "namespace");
	keep(meta, m, "resourceVersion");
	keep(meta, m, "deletionTimestamp");
	const char *podset = obj_label(obj, LABEL_PODSET);
	if (podset)
		json_object_set_new(meta, "labels", json_pack("{s:s}", LABEL_PODSET, podset));
	/* The Workload the pod belongs to, when muster released it: a RayJob's pods are owned by
	 * the RayCluster it made, and plain Pods by nothing. */
	const char *workload = obj_annotation(obj, ANNOTATION_WORKLOAD);
	if (workload)
		json_object_set_new(meta, "annotations",
				    json_pack("{s:s}", ANNOTATION_WORKLOAD, workload));
	/* Its controller only: placement reads the pod's integrated owner from it. */
	json_t *controller = obj_owner_ref(obj, 1, NULL, NULL, NULL);
	if (controller)
		json_object_set_new(meta, "ownerReferences", json_pack("[O]", controller));
	json_t *s = json_object_get(obj, "spec");
	keep(spec, s, "nodeName");
	keep(spec, s, "nodeSelector");
	keep(spec, s, "schedulingGates");
	keep(spec, s, "overhead");
	/* obj is the informer's to change (it drops it after): cut its lists and share them. */
	json_t *containers = json_object_get(s, "containers");
	json_t *init = json_object_get(s, "initContainers");
	obj_slim_containers(containers);
	obj_slim_containers(init);
	json_object_set_new(spec, "containers",
			    containers ? json_incref(containers) : json_array());
	if (init)
		json_object_set(spec, "initContainers", init);
	keep(status, json_object_get(obj, "status"), "phase");
	return out;
}

/* --- the node model ---------------------------------------------------------------------- */

static void capacity_changed(struct mgr *m)
{
	m->capacity_changed = 1;
	state_kick(m);
}

/* Whether two slim copies are the same but for their resourceVersion: most Node and Pod
 * updates (heartbeats, conditions, IPs) change nothing placement keeps. */
static int same_but_version(json_t *a, json_t *b)
{
	if (!a || !b || !json_equal(json_object_get(a, "spec"), json_object_get(b, "spec")) ||
	    !json_equal(json_object_get(a, "status"), json_object_get(b, "status")))
		return 0;
	json_t *ma = json_object_get(a, "metadata"), *mb = json_object_get(b, "metadata");
	const char *k;
	json_t *v;
	if (json_object_size(ma) != json_object_size(mb))
		return 0;
	json_object_foreach(ma, k, v) if (strcmp(k, "resourceVersion") != 0 &&
					  !json_equal(v, json_object_get(mb, k))) return 0;
	return 1;
}

void nodes_on_node(struct mgr *m, enum watch_event_type type, const char *key, json_t *old,
		   json_t *obj)
{
	if (type == WATCH_DELETED) {
		placement_remove_node(m->placement, key);
		return; /* less capacity: nobody waiting gets in */
	}
	if (same_but_version(old, obj))
		return;
	char err[512];
	int rc = pobj_node_apply(m->placement, obj, err, sizeof(err));
	if (rc == POBJ_NODE_REFUSED) {
		/* A node muster can't model takes no gangs, rather than some on a guess; the Node
		 * says why, and so does every "no node layout fits" message. */
		log_warn("cannot use Node for placement", LF_STR("node", key), LF_STR("error", err),
			 LF_END);
		writer_event(m, K_NODE, obj, EVENT_WARNING, "NodeNotUsable", err);
	} else if (rc != 0) {
		log_warn("cannot use Node for placement", LF_STR("node", key), LF_STR("error", err),
			 LF_INT("rc", rc), LF_END);
	}
	capacity_changed(m);
}

static int gated_by_us(json_t *pod)
{
	return obj_list_has(obj_path(pod, "spec.schedulingGates"), "name", GATE_TOPOLOGY);
}

void nodes_on_pod(struct mgr *m, enum watch_event_type type, const char *key, json_t *old,
		  json_t *obj)
{
	const char *old_node = obj_str(old, "spec.nodeName");
	const char *old_phase = obj_str(old, "status.phase");
	int was_bound =
		old_node && *old_node &&
		!(old_phase && (!strcmp(old_phase, "Succeeded") || !strcmp(old_phase, "Failed")));
	if (type == WATCH_DELETED) {
		placement_unbind_pod(m->placement, key);
		keyset_del(&m->dirty[K_POD], key);
		if (was_bound)
			capacity_changed(m);
		return;
	}
	if (same_but_version(old, obj))
		return;
	struct pobj_pod p;
	char err[256];
	int rc = pobj_pod_decode(obj, NULL, &p, err, sizeof(err));
	if (rc < 0) {
		log_warn("cannot use Pod for placement", LF_STR("pod", key), LF_STR("error", err),
			 LF_END);
	} else if (rc == 0 && !p.terminal) {
		if (placement_bind_pod(m->placement, &p.spec) != 0)
			log_warn("placement refused Pod", LF_STR("pod", key), LF_END);
	} else {
		placement_unbind_pod(m->placement, key);
		if (was_bound)
			capacity_changed(m);
	}
	if (rc == POBJ_POD_UNBOUND && !p.terminal && m->conf.placement_mode == PLACEMENT_EXACT &&
	    gated_by_us(obj) && !obj_path(obj, "metadata.deletionTimestamp")) {
		state_mark(m, K_POD, key);
	}
	pobj_pod_release(&p);
}

void nodes_on_topology(struct mgr *m, enum watch_event_type type, const char *key, json_t *obj)
{
	char err[256];
	if (type == WATCH_DELETED)
		pobj_catalog_remove_topology(&m->catalog, key);
	else if (pobj_catalog_set_topology(&m->catalog, obj, err, sizeof(err)) != 0) {
		log_warn("cannot use Topology", LF_STR("topology", key), LF_STR("error", err),
			 LF_END);
		pobj_catalog_remove_topology(&m->catalog, key);
	}
	/* Gangs refused for a missing topology may fit now. */
	capacity_changed(m);
}

void nodes_set_flavor(struct mgr *m, const char *name, json_t *rf)
{
	char err[256];
	if (!rf)
		pobj_catalog_remove_flavor(&m->catalog, name);
	else if (pobj_catalog_set_flavor(&m->catalog, rf, err, sizeof(err)) != 0)
		pobj_catalog_remove_flavor(&m->catalog, name);
	capacity_changed(m);
}

/* --- plans --------------------------------------------------------------------------------- */

/* A copy of one podSet's plan, into out (zeroed). 0 or -ENOMEM (out is then partly filled:
 * wl_plan_free frees it). */
static int podset_plan_copy(const struct pobj_podset_plan *ps, struct podset_plan *out)
{
	if (!(out->podset = strdup(ps->podset ? ps->podset : "")))
		return -ENOMEM;
	if (ps->n_slots && !(out->slots = calloc(ps->n_slots, sizeof(*out->slots))))
		return -ENOMEM;
	for (size_t k = 0; k < ps->n_slots; k++, out->n_slots++) {
		out->slots[k].count = ps->slots[k].count;
		if (!(out->slots[k].node = strdup(ps->slots[k].node ? ps->slots[k].node : "")))
			return -ENOMEM;
	}
	return 0;
}

/* The plan as the Workload's record keeps it: the placement's copy changes with its next call.
 * NULL when out of memory. */
static struct wl_plan *plan_copy(const struct pobj_plan *plan)
{
	struct wl_plan *out = calloc(1, sizeof(*out));
	if (!out ||
	    (plan->n_podsets && !(out->podsets = calloc(plan->n_podsets, sizeof(*out->podsets))))) {
		wl_plan_free(out);
		return NULL;
	}
	for (size_t i = 0; i < plan->n_podsets; i++, out->n_podsets++) {
		if (podset_plan_copy(&plan->podsets[i], &out->podsets[i]) != 0) {
			out->n_podsets++;
			wl_plan_free(out);
			return NULL;
		}
	}
	return out;
}

/* The plan of the podSet named podset, or NULL. */
static struct podset_plan *podset_of(struct wl_plan *plan, const char *podset)
{
	for (size_t i = 0; plan && i < plan->n_podsets; i++)
		if (!strcmp(plan->podsets[i].podset, podset))
			return &plan->podsets[i];
	return NULL;
}

static int place_workload(struct mgr *m, const char *key, json_t *wl,
			  const struct eng_assignment *a, char *msg, size_t size)
{
	struct pobj_plan plan;
	memset(&plan, 0, sizeof(plan));
	int rc = pobj_place_workload(m->placement, &m->catalog, wl, key, a, PLC_MUSTER, &plan, msg,
				     size);
	struct wl_record *r = rc == 0 || plan.closest ? wl_record_make(m, key) : NULL;
	observe_placement(m, rc);
	if (rc == 0 && r) {
		wl_plan_free(r->plan);
		if (!(r->plan = plan_copy(&plan)))
			log_error("out of memory: a placement plan is not kept",
				  LF_STR("workload", key), LF_END);
		json_decref(r->closest);
		r->closest = NULL;
		log_debug("placed", LF_STR("workload", key), LF_END);
	} else if (r) {
		json_decref(r->closest);
		r->closest = json_incref(plan.closest);
	}
	pobj_plan_release(&plan);
	return rc;
}

/* The engine's node-feasibility hook (engine_set_placer). */
static int place_hook(void *arg, const char *key, const struct eng_assignment *a, char *msg,
		      size_t size)
{
	struct mgr *m = arg;
	json_t *wl = store_get(m, K_WORKLOAD, key);
	if (!wl) {
		snprintf(msg, size, "the Workload is not in the cache yet");
		return 1;
	}
	return place_workload(m, key, wl, a, msg, size);
}

void nodes_release(struct mgr *m, const char *key)
{
	struct wl_record *r = wl_record_get(m, key);
	if (!r || !r->plan)
		return;
	placement_release(m->placement, key);
	wl_plan_free(r->plan);
	r->plan = NULL;
	capacity_changed(m);
}

/* The plan of an admitted workload: kept from admission, or (after a restart, or with the
 * feasibility check off) made now. NULL when no layout fits now. */
static struct wl_plan *plan_for(struct mgr *m, const char *key, json_t *wl)
{
	struct wl_record *r = wl_record_get(m, key);
	if (r && r->plan)
		return r->plan;
	const struct eng_assignment *a = engine_admission(m->engine, key);
	char msg[512];
	if (!a || place_workload(m, key, wl, a, msg, sizeof(msg)) != 0) {
		log_info("starting without placement hints", LF_STR("workload", key),
			 LF_STR("why", a ? msg : "no admission in the engine"), LF_END);
		return NULL;
	}
	return (r = wl_record_get(m, key)) != NULL ? r->plan : NULL;
}

/* The value a node has for a label, or NULL. */
static const char *node_label(struct mgr *m, const char *node, const char *label)
{
	return obj_label(store_get(m, K_NODE, node), label);
}

static const char *hostname_of(struct mgr *m, const char *node)
{
	const char *h = node_label(m, node, LABEL_HOSTNAME);
	return h ? h : node;
}

/* The level a podSet's topology must stay within, if any: its topologyRequest.required, or
 * the pod template's annotation. */
static const char *required_level(json_t *wl, const char *podset)
{
	size_t i;
	json_t *ps;
	json_array_foreach(obj_path(wl, "spec.podSets"), i, ps)
	{
		const char *name = json_string_value(json_object_get(ps, "name"));
		if (!name || strcmp(name, podset) != 0)
			continue;
		const char *r = obj_str(ps, "topologyRequest.required");
		return r ? r :
			   obj_annotation(json_object_get(ps, "template"),
					  ANNOTATION_REQUIRED_TOPOLOGY);
	}
	return NULL;
}

/*
 * Placement hints for a workload's release (mode Preferred or Exact), added in place to the
 * pod template spec of one PodSet (tspec, in a copy of the owner that ctrl/integrations.c
 * turns into a patch; its nodeSelector already has the flavors' labels):
 *   - preferred node affinity toward the plan's nodes, heaviest first, after the template's
 *     own preferred terms;
 *   - the required domain as a nodeSelector entry, when the podSet's topology is required;
 *   - in Exact mode, Kueue's topology scheduling gate: each pod then gets its node (ungate).
 */
void nodes_start_hints(struct mgr *m, const char *key, json_t *wl, const char *podset,
		       json_t *tspec)
{
	if (m->conf.placement_mode == PLACEMENT_NONE)
		return;
	const struct podset_plan *plan = podset_of(plan_for(m, key, wl), podset);
	size_t n = plan ? plan->n_slots : 0;
	if (n == 0)
		return;
	json_t *affinity = json_object_get(tspec, "affinity");
	if (!json_is_object(affinity)) {
		affinity = json_object();
		json_object_set_new(tspec, "affinity", affinity);
	}
	json_t *na = json_object_get(affinity, "nodeAffinity");
	if (!json_is_object(na)) {
		na = json_object();
		json_object_set_new(affinity, "nodeAffinity", na);
	}
	json_t *pref = json_object_get(na, "preferredDuringSchedulingIgnoredDuringExecution");
	if (!json_is_array(pref)) {
		pref = json_array();
		json_object_set_new(na, "preferredDuringSchedulingIgnoredDuringExecution", pref);
	}
	for (size_t i = 0; i < n; i++) {
		const char *node = plan->slots[i].node;
		json_int_t weight =
			n == 1 ?
				HINT_WEIGHT_MAX :
				HINT_WEIGHT_MAX - (json_int_t)((HINT_WEIGHT_MAX - HINT_WEIGHT_MIN) *
							       i / (n - 1));
		json_array_append_new(pref, json_pack("{s:I, s:{s:[{s:s, s:s, s:[s]}]}}", "weight",
						      weight, "preference", "matchExpressions",
						      "key", LABEL_HOSTNAME, "operator", "In",
						      "values", hostname_of(m, node)));
	}
	const char *level = required_level(wl, podset);
	const char *first = plan->slots[0].node;
	const char *value = level && first ? node_label(m, first, level) : NULL;
	json_t *selector = json_object_get(tspec, "nodeSelector");
	if (value && !json_is_object(selector)) {
		selector = json_object();
		json_object_set_new(tspec, "nodeSelector", selector);
	}
	if (value)
		json_object_set_new(selector, level, json_string(value));
	if (m->conf.placement_mode == PLACEMENT_EXACT) {
		json_t *gates = json_object_get(tspec, "schedulingGates");
		if (!json_is_array(gates)) {
			gates = json_array();
			json_object_set_new(tspec, "schedulingGates", gates);
		}
		if (!obj_list_has(gates, "name", GATE_TOPOLOGY))
			json_array_append_new(gates, json_pack("{s:s}", "name", GATE_TOPOLOGY));
	}
}

/* The template fields nodes_start_hints adds, back to what the Workload's template (orig)
 * says, in place: node affinity and scheduling gates. */
void nodes_stop_restore(json_t *orig, json_t *tspec)
{
	json_t *na = obj_path(orig, "affinity.nodeAffinity");
	json_t *affinity = json_object_get(tspec, "affinity");
	if (na && !json_is_object(affinity)) {
		affinity = json_object();
		json_object_set_new(tspec, "affinity", affinity);
	}
	if (na)
		json_object_set(affinity, "nodeAffinity", na);
	else if (json_is_object(affinity)) {
		json_object_del(affinity, "nodeAffinity");
		if (!json_object_size(affinity) && !obj_path(orig, "affinity"))
			json_object_del(tspec, "affinity");
	}
	json_t *gates = json_object_get(orig, "schedulingGates");
	if (gates)
		json_object_set(tspec, "schedulingGates", gates);
	else
		json_object_del(tspec, "schedulingGates");
}

/* --- exact mode: a node per pod ------------------------------------------------------------ */

/* The node the plan gave the pod, or NULL. */
static const char *assigned_node(const struct podset_plan *plan, const char *pod)
{
	for (size_t k = 0; k < plan->n_assigned; k++)
		if (!strcmp(plan->assigned[k].pod, pod))
			return plan->assigned[k].node;
	return NULL;
}

/* Pods given a node that are gone free their place in the plan. */
static void forget_gone_pods(struct mgr *m, struct podset_plan *plan)
{
	size_t kept = 0;
	for (size_t k = 0; k < plan->n_assigned; k++) {
		struct plan_pod *a = &plan->assigned[k];
		if (store_get(m, K_POD, a->pod)) {
			plan->assigned[kept++] = *a;
			continue;
		}
		free(a->pod);
		free(a->node);
	}
	plan->n_assigned = kept;
}

/* The plan gives the pod its node (out of memory: the next ungate counts without it). */
static void assign_pod(struct podset_plan *plan, const char *pod, const char *node)
{
	if (GROW(plan->assigned, plan->cap_assigned, plan->n_assigned + 1) != 0)
		return;
	struct plan_pod *a = &plan->assigned[plan->n_assigned];
	if (!(a->pod = strdup(pod)) || !(a->node = strdup(node))) {
		free(a->pod);
		return;
	}
	plan->n_assigned++;
}

static void on_ungated(struct mgr *m, enum kind kind, const char *key, enum write_outcome outcome,
		       struct write_answer *answer)
{
	(void)kind;
	(void)answer;
	if (outcome == WRITE_OK)
		log_info("pod ungated", LF_STR("pod", key), LF_END);
}

static void ungate(struct mgr *m, const char *key)
{
	json_t *pod = store_get(m, K_POD, key);
	if (!pod || !gated_by_us(pod) || obj_str(pod, "spec.nodeName") ||
	    writer_busy(m, K_POD, key))
		return;
	struct pobj_pod p;
	char err[256];
	int rc = pobj_pod_decode(pod, NULL, &p, err, sizeof(err));
	const char *wl_key = rc >= 0 ? p.spec.workload : NULL;
	json_t *wl = wl_key ? workload_view(m, wl_key) : NULL;
	const char *podset = p.spec.podset ? p.spec.podset : "main";
	struct podset_plan *plan = wl ? podset_of(plan_for(m, wl_key, wl), podset) : NULL;
	const char *node = plan ? assigned_node(plan, key) : NULL;
	int newly = 0;
	if (plan && !node && plan->n_slots)
		forget_gone_pods(m, plan);
	/* The first slot with room, counting the pods already given a node that still exist. */
	for (size_t s = 0; plan && !node && s < plan->n_slots; s++) {
		int64_t room = plan->slots[s].count;
		for (size_t k = 0; k < plan->n_assigned; k++)
			if (!strcmp(plan->assigned[k].node, plan->slots[s].node))
				room--;
		if (room > 0) {
			node = plan->slots[s].node;
			newly = 1;
		}
	}
	json_t *gates =
		obj_list_without(obj_path(pod, "spec.schedulingGates"), "name", GATE_TOPOLOGY);
	json_t *spec =
		json_pack("{s:o}", "schedulingGates", json_array_size(gates) ? gates : json_null());
	if (!json_array_size(gates))
		json_decref(gates);
	if (node) {
		json_t *sel = json_deep_copy(obj_path(pod, "spec.nodeSelector"));
		if (!sel)
			sel = json_object();
		json_object_set_new(sel, LABEL_HOSTNAME, json_string(hostname_of(m, node)));
		json_object_set_new(spec, "nodeSelector", sel);
		if (newly)
			assign_pod(plan, key, node);
	}
	json_t *patch = json_pack("{s:o}", "spec", spec);
	char path[1024];
	if (kind_path(K_POD, obj_namespace(pod), obj_name(pod), NULL, path, sizeof(path)) != 0)
		json_decref(patch);
	else if (writer_merge_patch(m, K_POD, key, path, patch,
				    obj_str(pod, "metadata.resourceVersion"), on_ungated) == 0)
		log_debug("ungating pod", LF_STR("pod", key), LF_STR("node", node ? node : "(any)"),
			  LF_END);
	pobj_pod_release(&p);
}

/* Once per pump: tells the engine when capacity grew, and gives gated pods their nodes. */
static void ungate_key(struct mgr *m, enum kind kind, const char *key)
{
	(void)kind;
	ungate(m, key);
}

void nodes_sync(struct mgr *m, struct pump_budget *b)
{
	if (m->capacity_changed) {
		m->capacity_changed = 0;
		engine_capacity_changed(m->engine);
		m->admission_needed = 1;
	}
	state_drain(m, K_POD, b, 1, ungate_key);
}

int nodes_init(struct mgr *m)
{
	struct plc_shape mix[] = { { 0, 1000, 1 }, { 0, 2000, 1 }, { 0, 4000, 1 }, { 0, 8000, 1 } };
	pobj_catalog_init(&m->catalog);
	if (placement_new(&m->placement) != 0 ||
	    placement_set_gpu_resource(m->placement, m->conf.gpu_resource) != 0 ||
	    placement_set_mix(m->placement, mix, sizeof(mix) / sizeof(mix[0])) != 0)
		return -1;
	if (m->conf.node_feasibility)
		engine_set_placer(m->engine, place_hook, m);
	return 0;
}

void nodes_free(struct mgr *m)
{
	placement_free(m->placement);
	pobj_catalog_release(&m->catalog);
}

json_t *nodes_closest(struct mgr *m, const char *key)
{
	const struct wl_record *r = wl_record_get(m, key);
	return r ? r->closest : NULL;
}
