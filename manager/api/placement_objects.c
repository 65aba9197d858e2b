/* SPDX-License-Identifier: Apache-2.0 */
#include "api/placement_objects.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"

/* Paths in messages name user-chosen keys (resource names, labels), so give them room. */
#define PATH_MAX_LEN 512

/* --------------------------------------------------------------- typed field access */

static int get_bool(json_t *obj, const char *key, const char *prefix, int *out, char *err,
		    size_t errlen)
{
	json_t *v = eobj_field(obj, key);
	*out = 0;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return eobj_bad(err, errlen, "%s%s%s: must be a boolean, not %s", prefix,
				*prefix ? "." : "", key, eobj_type_name(v));
	*out = json_is_true(v);
	return 0;
}

static int is_alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_alnum(char c)
{
	return is_alnum_lower(c) || (c >= 'A' && c <= 'Z');
}

/* A label key (Kubernetes' qualified name): an optional DNS-subdomain prefix and '/', then a
 * name of at most 63 letters, digits, '-', '_' and '.', starting and ending alphanumeric. */
static int is_label_key(const char *s)
{
	const char *slash = strchr(s, '/');
	const char *name = slash ? slash + 1 : s;
	size_t n = strlen(name);
	if (slash && !eobj_is_dns_subdomain(s, (size_t)(slash - s)))
		return 0;
	if (n == 0 || n > 63 || !is_alnum(name[0]) || !is_alnum(name[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
			return 0;
	return 1;
}

/* ------------------------------------------------------------------------------- Node */

/* Ready unless a Ready condition says otherwise: inputs written by hand rarely carry status. */
static int node_ready(json_t *node, char *err, size_t errlen)
{
	json_t *conds = eobj_field(eobj_field(node, "status"), "conditions"), *c;
	size_t i;
	int rc = eobj_want_array(conds, "status.conditions", err, errlen);
	if (rc != 0)
		return rc;
	int ready = 1;
	json_array_foreach(conds, i, c)
	{
		char p[64];
		const char *type, *status;
		eobj_pathf(p, sizeof(p), "status.conditions[%zu]", i);
		if (!json_is_object(c))
			return eobj_bad(err, errlen, "%s: must be an object, not %s", p,
					eobj_type_name(c));
		if ((rc = eobj_get_string(c, "type", p, &type, err, errlen)) != 0 ||
		    (rc = eobj_get_string(c, "status", p, &status, err, errlen)) != 0)
			return rc;
		if (type && !strcmp(type, "Ready"))
			ready = status && !strcmp(status, "True");
	}
	return ready;
}

int pobj_node_decode(json_t *node, struct pobj_node *out, char *err, size_t errlen)
{
	struct plc_node_spec *s = &out->spec;
	const char *name;
	int rc, unschedulable;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(node))
		return eobj_bad(err, errlen, "Node: must be an object");
	json_t *meta = eobj_field(node, "metadata"), *spec = eobj_field(node, "spec");
	json_t *status = eobj_field(node, "status");
	if ((rc = eobj_meta_name(node, 0, &name, err, errlen)) != 0 ||
	    (rc = eobj_want_object(spec, "spec", err, errlen)) != 0 ||
	    (rc = eobj_want_object(status, "status", err, errlen)) != 0 ||
	    (rc = get_bool(spec, "unschedulable", "spec", &unschedulable, err, errlen)) != 0)
		return rc;
	if (!(s->name = eobj_arena_strdup(&out->arena, name)))
		return eobj_nomem(err, errlen);

	struct quota_kv *labels;
	size_t n;
	if ((rc = eobj_decode_string_map(&out->arena, eobj_field(meta, "labels"), "metadata.labels",
					 1, &n, &labels, err, errlen)) != 0)
		return rc;
	size_t k;
	for (k = 0; k < n; k++)
		if (!strcmp(labels[k].key, LABEL_HOSTNAME))
			break;
	if (k == n) {
		/* The kubelet sets it on every node; a Topology's lowest level is usually it. */
		labels[n].key = eobj_arena_strdup(&out->arena, LABEL_HOSTNAME);
		labels[n].value = (char *)s->name;
		if (!labels[n].key)
			return eobj_nomem(err, errlen);
		n++;
	}
	s->n_labels = n;
	s->labels = labels;
	struct quota_taint *taints;
	if ((rc = eobj_decode_taints(&out->arena, eobj_field(spec, "taints"), "spec.taints", 0,
				     &s->n_taints, &taints, err, errlen)) != 0)
		return rc;
	s->taints = taints;
	int ready = node_ready(node, err, errlen);
	if (ready < 0)
		return ready;
	s->schedulable = !unschedulable && ready;

	const char *rpath = "status.allocatable";
	json_t *res = eobj_field(status, "allocatable");
	if (!res) {
		rpath = "status.capacity";
		res = eobj_field(status, "capacity");
	}
	if ((rc = eobj_want_object(res, rpath, err, errlen)) != 0)
		return rc;
	const char **names = eobj_arena_alloc(&out->arena, json_object_size(res), sizeof(*names));
	int64_t *amounts = eobj_arena_alloc(&out->arena, json_object_size(res), sizeof(*amounts));
	if (!names || !amounts)
		return eobj_nomem(err, errlen);
	const char *rname;
	json_t *v;
	size_t i = 0;
	json_object_foreach(res, rname, v)
	{
		char p[PATH_MAX_LEN];
		eobj_pathf(p, sizeof(p), "%s.%s", rpath, rname);
		if ((rc = eobj_get_quantity(v, p, &amounts[i], err, errlen)) != 0)
			return rc;
		if (!(names[i] = eobj_arena_strdup(&out->arena, rname)))
			return eobj_nomem(err, errlen);
		i++;
	}
	s->n_resources = i;
	s->resources = names;
	s->allocatable = amounts;
	return 0;
}

void pobj_node_release(struct pobj_node *n)
{
	eobj_arena_release(&n->arena);
	memset(n, 0, sizeof(*n));
}

int pobj_node_apply(struct placement *p, json_t *node, char *err, size_t errlen)
{
	struct pobj_node n;
	char why[PLC_REFUSAL_MAX];
	const char *name =
		json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
	int rc = pobj_node_decode(node, &n, why, sizeof(why));
	const char *was = name ? placement_node_refusal(p, name) : NULL;
	char was_why[PLC_REFUSAL_MAX];
	snprintf(was_why, sizeof(was_why), "%s", was ? was : "");
	if (rc == -EINVAL && name && *name)
		rc = was && !strcmp(was_why, why)        ? POBJ_NODE_SAME :
		     placement_refuse_node(p, name, why) ? -ENOMEM :
							   POBJ_NODE_REFUSED;
	else if (rc == -EINVAL)
		rc = eobj_bad(err, errlen, "%s", why);
	else if (rc == 0 && placement_node_same(p, &n.spec))
		rc = POBJ_NODE_SAME;
	else if (rc == 0 && (rc = placement_set_node(p, &n.spec)) == -EINVAL) {
		const char *reason = placement_node_refusal(p, name);
		snprintf(why, sizeof(why), "%s", reason ? reason : "refused by placement");
		rc = was && !strcmp(was_why, why) ? POBJ_NODE_SAME : POBJ_NODE_REFUSED;
	}
	if (rc == POBJ_NODE_REFUSED && err && errlen)
		snprintf(err, errlen, "%s", why);
	else if (rc == -ENOMEM)
		eobj_nomem(err, errlen);
	pobj_node_release(&n);
	return rc;
}

/* -------------------------------------------------------------------------------- Pod */

static int pod_requests(struct pobj_pod *out, json_t *spec, char *err, size_t errlen)
{
	struct plc_pod_spec *s = &out->spec;
	struct pod_requests req;
	int rc = eobj_pod_requests(spec, "spec", &req, err, errlen);
	if (rc != 0)
		return rc == -ENOMEM ? rc : -EINVAL;
	const char **names = eobj_arena_alloc(&out->arena, req.n, sizeof(*names));
	int64_t *amounts = eobj_arena_alloc(&out->arena, req.n, sizeof(*amounts));
	rc = names && amounts ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < req.n; i++) {
		amounts[i] = req.milli[i];
		if (!(names[i] = eobj_arena_strdup(&out->arena, req.names[i])))
			rc = -ENOMEM;
	}
	size_t n = req.n;
	pod_requests_release(&req);
	if (rc != 0)
		return eobj_nomem(err, errlen);
	s->n_resources = n;
	s->resources = names;
	s->requests = amounts;
	return 0;
}

/* The pod's workload key: the kueue.x-k8s.io/workload annotation muster puts on the templates
 * it releases (a RayJob's pods belong to a RayCluster it made), else its integrated owner
 * (integration_owner_ref: a Job's pods made before the annotation). */
static int pod_owner(struct pobj_pod *out, json_t *pod, const char *ns, char *err, size_t errlen)
{
	json_t *refs = eobj_field(eobj_field(pod, "metadata"), "ownerReferences"), *r;
	const struct integration *in;
	json_t *owner = integration_owner_ref(pod, &in);
	size_t i;
	int rc = eobj_want_array(refs, "metadata.ownerReferences", err, errlen);
	if (rc != 0)
		return rc;
	const char *named = obj_annotation(pod, ANNOTATION_WORKLOAD);
	if (named && *named) {
		char key[600];
		const char *podset = obj_label(pod, LABEL_PODSET);
		snprintf(key, sizeof(key), "%.290s/%.300s", ns, named);
		out->spec.workload = eobj_arena_strdup(&out->arena, key);
		out->spec.podset =
			eobj_arena_strdup(&out->arena, podset && *podset ? podset : "main");
		return out->spec.workload && out->spec.podset ? 0 : eobj_nomem(err, errlen);
	}
	/* Every entry is decoded, so a malformed one is refused wherever it is; the owner is
	 * the one integration_owner_ref chose. */
	json_array_foreach(refs, i, r)
	{
		char p[64], wl[300], key[600], uid_buf[600];
		const char *api, *kind, *name, *uid;
		int controller;
		eobj_pathf(p, sizeof(p), "metadata.ownerReferences[%zu]", i);
		if (!json_is_object(r))
			return eobj_bad(err, errlen, "%s: must be an object, not %s", p,
					eobj_type_name(r));
		if ((rc = get_bool(r, "controller", p, &controller, err, errlen)) != 0 ||
		    (rc = eobj_get_string(r, "apiVersion", p, &api, err, errlen)) != 0 ||
		    (rc = eobj_get_string(r, "kind", p, &kind, err, errlen)) != 0 ||
		    (rc = eobj_get_string(r, "name", p, &name, err, errlen)) != 0 ||
		    (rc = eobj_get_string(r, "uid", p, &uid, err, errlen)) != 0)
			return rc;
		if (r != owner)
			continue;
		if (!name || !*name)
			return eobj_bad(err, errlen, "%s.name: required", p);
		if (!uid || !*uid) {
			/* The simulator's Jobs may have no uid; eobj_workload_for uses this. */
			snprintf(uid_buf, sizeof(uid_buf), "%.290s.%.290s", ns, name);
			uid = uid_buf;
		}
		if ((rc = integration_workload_name(in, name, uid, wl, sizeof(wl))) != 0)
			return rc == -ENOMEM ? eobj_nomem(err, errlen) :
					       eobj_bad(err, errlen,
							"%s: cannot derive the Workload's name", p);
		snprintf(key, sizeof(key), "%s/%s", ns, wl);
		const char *podset = obj_label(pod, LABEL_PODSET);
		out->spec.workload = eobj_arena_strdup(&out->arena, key);
		out->spec.podset =
			eobj_arena_strdup(&out->arena, podset && *podset ? podset : "main");
		if (!out->spec.workload || !out->spec.podset)
			return eobj_nomem(err, errlen);
		return 0;
	}
	return 0;
}

int pobj_pod_decode(json_t *pod, const char *default_namespace, struct pobj_pod *out, char *err,
		    size_t errlen)
{
	struct plc_pod_spec *s = &out->spec;
	const char *name, *ns, *node, *phase;
	char key[600];
	int rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(pod))
		return eobj_bad(err, errlen, "Pod: must be an object");
	json_t *meta = eobj_field(pod, "metadata"), *spec = eobj_field(pod, "spec");
	json_t *status = eobj_field(pod, "status");
	if ((rc = eobj_meta_name(pod, 0, &name, err, errlen)) != 0 ||
	    (rc = eobj_get_string(meta, "namespace", "metadata", &ns, err, errlen)) != 0 ||
	    (rc = eobj_want_object(eobj_field(meta, "labels"), "metadata.labels", err, errlen)) !=
		    0 ||
	    (rc = eobj_want_object(status, "status", err, errlen)) != 0 ||
	    (rc = eobj_get_string(status, "phase", "status", &phase, err, errlen)) != 0)
		return rc;
	if (!ns || !*ns)
		ns = default_namespace;
	if (!ns)
		return eobj_bad(err, errlen, "metadata.namespace: required");
	if (!spec)
		return eobj_bad(err, errlen, "spec: required");
	if ((rc = eobj_want_object(spec, "spec", err, errlen)) != 0 ||
	    (rc = eobj_get_string(spec, "nodeName", "spec", &node, err, errlen)) != 0)
		return rc;
	snprintf(key, sizeof(key), "%.290s/%.290s", ns, name);
	if (!(s->key = eobj_arena_strdup(&out->arena, key)))
		return eobj_nomem(err, errlen);
	if ((rc = pod_requests(out, spec, err, errlen)) != 0 ||
	    (rc = pod_owner(out, pod, ns, err, errlen)) != 0)
		return rc;
	out->terminal = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
	if (!node || !*node)
		return POBJ_POD_UNBOUND;
	if (!(s->node = eobj_arena_strdup(&out->arena, node)))
		return eobj_nomem(err, errlen);
	return 0;
}

void pobj_pod_release(struct pobj_pod *p)
{
	eobj_arena_release(&p->arena);
	memset(p, 0, sizeof(*p));
}

/* --------------------------------------------------------------------------- Topology */

#define TOPOLOGY_MAX_LEVELS 16

int pobj_topology_decode(json_t *topology, struct pobj_topology *out, char *err, size_t errlen)
{
	static const char *const top[] = { "apiVersion", "kind", "metadata", "spec", NULL };
	static const char *const spec_keys[] = { "levels", NULL };
	static const char *const level_keys[] = { "nodeLabel", NULL };
	const char *name;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(topology))
		return eobj_bad(err, errlen, "Topology: must be an object");
	json_t *spec = eobj_field(topology, "spec");
	if ((rc = eobj_check_keys(topology, "", top, err, errlen)) != 0 ||
	    (rc = eobj_meta_name(topology, 0, &name, err, errlen)) != 0)
		return rc;
	if (!spec)
		return eobj_bad(err, errlen, "spec: required");
	if ((rc = eobj_want_object(spec, "spec", err, errlen)) != 0 ||
	    (rc = eobj_check_keys(spec, "spec", spec_keys, err, errlen)) != 0)
		return rc;
	json_t *levels = eobj_field(spec, "levels"), *l;
	if ((rc = eobj_want_array(levels, "spec.levels", err, errlen)) != 0)
		return rc;
	size_t n = json_array_size(levels), i;
	if (n == 0)
		return eobj_bad(err, errlen, "spec.levels: required: list 1 to %d levels",
				TOPOLOGY_MAX_LEVELS);
	if (n > TOPOLOGY_MAX_LEVELS)
		return eobj_bad(err, errlen, "spec.levels: at most %d levels, got %zu",
				TOPOLOGY_MAX_LEVELS, n);
	const char **keys = eobj_arena_alloc(&out->arena, n, sizeof(*keys));
	if (!(out->name = eobj_arena_strdup(&out->arena, name)) || !keys)
		return eobj_nomem(err, errlen);
	json_array_foreach(levels, i, l)
	{
		char p[64];
		const char *label;
		eobj_pathf(p, sizeof(p), "spec.levels[%zu]", i);
		if (!json_is_object(l))
			return eobj_bad(err, errlen, "%s: must be an object, not %s", p,
					eobj_type_name(l));
		if ((rc = eobj_check_keys(l, p, level_keys, err, errlen)) != 0 ||
		    (rc = eobj_get_string(l, "nodeLabel", p, &label, err, errlen)) != 0)
			return rc;
		if (!label || !*label)
			return eobj_bad(err, errlen, "%s.nodeLabel: required", p);
		if (!is_label_key(label))
			return eobj_bad(err, errlen,
					"%s.nodeLabel: invalid label key \"%.64s\": an optional "
					"DNS subdomain "
					"prefix and '/', then at most 63 letters, digits, '-', '_' "
					"or '.', "
					"starting and ending with a letter or digit",
					p, label);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(keys[k], label))
				return eobj_bad(err, errlen,
						"%s.nodeLabel: duplicate level \"%.64s\"", p,
						label);
		if (!strcmp(label, LABEL_HOSTNAME) && i != n - 1)
			return eobj_bad(err, errlen,
					"%s.nodeLabel: " LABEL_HOSTNAME
					" can only be the lowest (last) level",
					p);
		if (!(keys[i] = eobj_arena_strdup(&out->arena, label)))
			return eobj_nomem(err, errlen);
	}
	out->n_levels = n;
	out->levels = keys;
	return 0;
}

void pobj_topology_release(struct pobj_topology *t)
{
	eobj_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}

/* ---------------------------------------------------------------------------- catalog */

struct cat_flavor {
	struct eobj_flavor f;
	char *topology_name; /* NULL: none */
};

static void cat_flavor_free(void *p)
{
	struct cat_flavor *cf = p;
	if (!cf)
		return;
	eobj_flavor_release(&cf->f);
	free(cf->topology_name);
	free(cf);
}

static void cat_topology_free(void *p)
{
	struct pobj_topology *t = p;
	if (!t)
		return;
	pobj_topology_release(t);
	free(t);
}

void pobj_catalog_init(struct pobj_catalog *c)
{
	strmap_init(&c->flavors);
	strmap_init(&c->topologies);
}

void pobj_catalog_release(struct pobj_catalog *c)
{
	strmap_release(&c->flavors, cat_flavor_free);
	strmap_release(&c->topologies, cat_topology_free);
}

int pobj_catalog_set_flavor(struct pobj_catalog *c, json_t *rf, char *err, size_t errlen)
{
	struct cat_flavor *cf = calloc(1, sizeof(*cf));
	const char *topo;
	void *old;
	int rc;

	if (!cf)
		return eobj_nomem(err, errlen);
	if ((rc = eobj_flavor_decode(rf, &cf->f, err, errlen)) != 0 ||
	    (rc = eobj_get_string(eobj_field(rf, "spec"), "topologyName", "spec", &topo, err,
				  errlen)) != 0)
		goto fail;
	if (topo && !*topo) {
		rc = eobj_bad(err, errlen, "spec.topologyName: must not be empty");
		goto fail;
	}
	if (topo && !(cf->topology_name = strdup(topo))) {
		rc = eobj_nomem(err, errlen);
		goto fail;
	}
	if (strmap_put(&c->flavors, cf->f.spec.name, cf, &old) != 0) {
		rc = eobj_nomem(err, errlen);
		goto fail;
	}
	cat_flavor_free(old);
	return 0;
fail:
	cat_flavor_free(cf);
	return rc;
}

void pobj_catalog_remove_flavor(struct pobj_catalog *c, const char *name)
{
	cat_flavor_free(strmap_remove(&c->flavors, name));
}

int pobj_catalog_set_topology(struct pobj_catalog *c, json_t *topology, char *err, size_t errlen)
{
	struct pobj_topology *t = calloc(1, sizeof(*t));
	void *old;
	int rc;

	if (!t)
		return eobj_nomem(err, errlen);
	if ((rc = pobj_topology_decode(topology, t, err, errlen)) != 0) {
		cat_topology_free(t);
		return rc;
	}
	if (strmap_put(&c->topologies, t->name, t, &old) != 0) {
		cat_topology_free(t);
		return eobj_nomem(err, errlen);
	}
	cat_topology_free(old);
	return 0;
}

void pobj_catalog_remove_topology(struct pobj_catalog *c, const char *name)
{
	cat_topology_free(strmap_remove(&c->topologies, name));
}

const struct quota_flavor *pobj_catalog_flavor(const struct pobj_catalog *c, const char *name,
					       const char **topology_name)
{
	const struct cat_flavor *cf = strmap_get(&c->flavors, name);
	if (topology_name)
		*topology_name = cf ? cf->topology_name : NULL;
	return cf ? &cf->f.spec : NULL;
}

const struct pobj_topology *pobj_catalog_topology(const struct pobj_catalog *c, const char *name)
{
	return strmap_get(&c->topologies, name);
}

/* --------------------------------------------------------------------------- requests */

/* strconv.ParseBool's spellings, which Kueue uses for the unconstrained annotation. */
static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True", NULL };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False", NULL };
	for (size_t i = 0; yes[i]; i++) {
		if (!strcmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

#define ANNOTATIONS_PATH "template.metadata.annotations"
#define ONLY_ONE_ANNOTATION                                                                    \
	"must not contain more than one topology annotation: [\"" ANNOTATION_REQUIRED_TOPOLOGY \
	"\", \"" ANNOTATION_PREFERRED_TOPOLOGY "\", \"" ANNOTATION_UNCONSTRAINED_TOPOLOGY "\"]"

/*
 * The podSet's topology request: topologyRequest when set, else the template's annotations
 * (Kueue's Job integration copies those into topologyRequest; a Workload written by hand may
 * only have them). *level is the required or preferred level (NULL: neither), *level_path
 * the field it came from, for messages.
 */
static int topology_request(json_t *podset, const char **level, int *required, int *unconstrained,
			    const char **level_path, char *err, size_t errlen)
{
	static const char *const ann_paths[] = {
		ANNOTATIONS_PATH "[\"" ANNOTATION_REQUIRED_TOPOLOGY "\"]",
		ANNOTATIONS_PATH "[\"" ANNOTATION_PREFERRED_TOPOLOGY "\"]",
	};
	static const char *const tr_paths[] = { "topologyRequest.required",
						"topologyRequest.preferred" };
	json_t *tr = eobj_field(podset, "topologyRequest");
	const char *req, *pref;
	int rc;

	*level = *level_path = NULL;
	*required = *unconstrained = 0;
	if (tr) {
		if ((rc = eobj_want_object(tr, "topologyRequest", err, errlen)) != 0 ||
		    (rc = eobj_get_string(tr, "required", "topologyRequest", &req, err, errlen)) !=
			    0 ||
		    (rc = eobj_get_string(tr, "preferred", "topologyRequest", &pref, err,
					  errlen)) != 0 ||
		    (rc = get_bool(tr, "unconstrained", "topologyRequest", unconstrained, err,
				   errlen)) != 0)
			return rc;
		if ((req != NULL) + (pref != NULL) + (*unconstrained != 0) > 1)
			return eobj_bad(err, errlen,
					"topologyRequest: set at most one of required, preferred "
					"and "
					"unconstrained");
		*level_path = req ? tr_paths[0] : tr_paths[1];
	} else {
		json_t *ann = eobj_field(eobj_field(eobj_field(podset, "template"), "metadata"),
					 "annotations");
		json_t *unc = eobj_field(ann, ANNOTATION_UNCONSTRAINED_TOPOLOGY);
		if ((rc = eobj_want_object(ann, ANNOTATIONS_PATH, err, errlen)) != 0)
			return rc;
		if ((eobj_field(ann, ANNOTATION_REQUIRED_TOPOLOGY) != NULL) +
			    (eobj_field(ann, ANNOTATION_PREFERRED_TOPOLOGY) != NULL) +
			    (unc != NULL) >
		    1)
			return eobj_bad(err, errlen, ANNOTATIONS_PATH ": " ONLY_ONE_ANNOTATION);
		if ((rc = eobj_get_string(ann, ANNOTATION_REQUIRED_TOPOLOGY, ANNOTATIONS_PATH, &req,
					  err, errlen)) != 0 ||
		    (rc = eobj_get_string(ann, ANNOTATION_PREFERRED_TOPOLOGY, ANNOTATIONS_PATH,
					  &pref, err, errlen)) != 0)
			return rc;
		if (unc && (!json_is_string(unc) ||
			    parse_bool(json_string_value(unc), unconstrained) != 0)) {
			char text[96];
			return eobj_bad(err, errlen,
					ANNOTATIONS_PATH "[\"" ANNOTATION_UNCONSTRAINED_TOPOLOGY
							 "\"]: invalid "
							 "value \"%s\": must be a boolean value",
					eobj_show(unc, text, sizeof(text)));
		}
		*level_path = req ? ann_paths[0] : ann_paths[1];
	}
	*level = req ? req : pref;
	*required = req != NULL;
	if (*level && !**level)
		return eobj_bad(err, errlen, "%s: must not be empty", *level_path);
	return 0;
}

/* Merges the podSet's flavors the way Kueue merges them into the pod template. */
static int merge_flavors(const struct pobj_catalog *c, struct pobj_request *out,
			 const char *const *names, size_t n, char *err, size_t errlen)
{
	struct quota_flavor *m = &out->flavor;
	size_t n_labels = 0, n_tols = 0, name_len = 0;
	const struct quota_flavor *fl[QUOTA_MAX_RESOURCES];

	for (size_t i = 0; i < n; i++) {
		if (!(fl[i] = pobj_catalog_flavor(c, names[i], NULL)))
			return eobj_bad(err, errlen, "ResourceFlavor \"%.64s\" doesn't exist",
					names[i]);
		n_labels += fl[i]->n_labels;
		n_tols += fl[i]->n_tolerations;
		name_len += strlen(names[i]) + 1;
	}
	m->labels = eobj_arena_alloc(&out->arena, n_labels, sizeof(*m->labels));
	m->tolerations = eobj_arena_alloc(&out->arena, n_tols, sizeof(*m->tolerations));
	m->name = eobj_arena_alloc(&out->arena, name_len + 1, 1);
	if (!m->labels || !m->tolerations || !m->name)
		return eobj_nomem(err, errlen);
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(m->name, "+");
		strcat(m->name, names[i]);
		for (size_t l = 0; l < fl[i]->n_labels; l++) {
			const struct quota_kv *kv = &fl[i]->labels[l];
			size_t k;
			for (k = 0; k < m->n_labels; k++)
				if (!strcmp(m->labels[k].key, kv->key))
					break;
			if (k == m->n_labels) {
				m->labels[m->n_labels++] = *kv; /* its strings are copied below */
				continue;
			}
			if (strcmp(m->labels[k].value, kv->value) != 0) {
				/* Which earlier flavor set it, for the message. */
				size_t j;
				for (j = 0; j < i; j++) {
					size_t x;
					for (x = 0; x < fl[j]->n_labels; x++)
						if (!strcmp(fl[j]->labels[x].key, kv->key))
							break;
					if (x < fl[j]->n_labels)
						break;
				}
				return eobj_bad(err, errlen,
						"flavors %.64s and %.64s set node label %.64s to "
						"different "
						"values (\"%.64s\", \"%.64s\"): no node has both",
						names[j], names[i], kv->key, m->labels[k].value,
						kv->value);
			}
		}
		for (size_t t = 0; t < fl[i]->n_tolerations; t++)
			m->tolerations[m->n_tolerations++] = fl[i]->tolerations[t];
	}
	/* The catalog may replace a flavor while the request lives: copy the strings. */
	for (size_t k = 0; k < m->n_labels; k++) {
		m->labels[k].key = eobj_arena_strdup(&out->arena, m->labels[k].key);
		m->labels[k].value = eobj_arena_strdup(&out->arena, m->labels[k].value);
		if (!m->labels[k].key || !m->labels[k].value)
			return eobj_nomem(err, errlen);
	}
	for (size_t t = 0; t < m->n_tolerations; t++) {
		struct quota_taint *q = &m->tolerations[t];
		if ((q->key && !(q->key = eobj_arena_strdup(&out->arena, q->key))) ||
		    (q->value && !(q->value = eobj_arena_strdup(&out->arena, q->value))) ||
		    (q->effect && !(q->effect = eobj_arena_strdup(&out->arena, q->effect))))
			return eobj_nomem(err, errlen);
	}
	return 0;
}

/* The Topology the podSet's flavors name (NULL: none), its name in *name. */
static int flavors_topology(const struct pobj_catalog *c, const char *const *names, size_t n,
			    const struct pobj_topology **out, const char **flavor, char *err,
			    size_t errlen)
{
	const char *chosen = NULL;
	*out = NULL;
	*flavor = NULL;
	for (size_t i = 0; i < n; i++) {
		const char *tn;
		pobj_catalog_flavor(c, names[i], &tn);
		if (!tn)
			continue;
		if (chosen && strcmp(chosen, tn) != 0)
			return eobj_bad(err, errlen,
					"flavors %.64s and %.64s name different Topologies (%.64s, "
					"%.64s): a "
					"podSet is placed within one",
					*flavor, names[i], chosen, tn);
		if (chosen)
			continue;
		chosen = tn;
		*flavor = names[i];
		if (!(*out = pobj_catalog_topology(c, tn)))
			return eobj_bad(err, errlen,
					"ResourceFlavor %.64s names Topology \"%.64s\", which "
					"doesn't exist",
					names[i], tn);
	}
	return 0;
}

static int level_known(const struct pobj_topology *t, const char *level)
{
	for (size_t i = 0; i < t->n_levels; i++)
		if (!strcmp(t->levels[i], level))
			return 1;
	return 0;
}

static void levels_text(const struct pobj_topology *t, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < t->n_levels && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", t->levels[i]);
}

int pobj_request_build(const struct pobj_catalog *c, const char *workload_key, json_t *podset,
		       const struct eng_podset_assignment *pa, enum plc_policy policy,
		       struct pobj_request *out, char *err, size_t errlen)
{
	const char *names[QUOTA_MAX_RESOURCES];
	const char *level, *level_path, *tflavor;
	const struct pobj_topology *topo;
	size_t n_names = 0;
	int required, unconstrained, rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(podset))
		return eobj_bad(err, errlen, "podSet: must be an object");
	out->podset = json_incref(podset);
	rc = podset_view_decode(podset, &out->view, err, errlen); /* its messages name the field */
	if (rc != 0)
		return rc == -ENOMEM ? rc : -EINVAL;

	/* Each distinct flavor once, in the assignment's order. */
	for (size_t i = 0; i < pa->n && i < QUOTA_MAX_RESOURCES; i++) {
		size_t k;
		for (k = 0; k < n_names; k++)
			if (!strcmp(names[k], pa->flavors[i]))
				break;
		if (k == n_names)
			names[n_names++] = pa->flavors[i];
	}
	if ((rc = merge_flavors(c, out, names, n_names, err, errlen)) != 0 ||
	    (rc = topology_request(podset, &level, &required, &unconstrained, &level_path, err,
				   errlen)) != 0 ||
	    (rc = flavors_topology(c, names, n_names, &topo, &tflavor, err, errlen)) != 0)
		return rc;
	if (level && !topo)
		return eobj_bad(err, errlen,
				"%s: topology level \"%.64s\" requested, but no flavor of the "
				"podSet "
				"(%.200s) names a Topology (spec.topologyName)",
				level_path, level, n_names ? out->flavor.name : "none");
	if (level && !level_known(topo, level)) {
		char levels[600];
		levels_text(topo, levels, sizeof(levels));
		return eobj_bad(err, errlen,
				"%s: \"%.64s\" is not a level of Topology %.64s (of flavor %.64s), "
				"whose "
				"levels are %.300s",
				level_path, level, topo->name, tflavor, levels);
	}
	if (topo && !unconstrained) {
		/* Copied: the catalog may replace the Topology while the request lives. */
		const char **levels =
			eobj_arena_alloc(&out->arena, topo->n_levels, sizeof(*levels));
		if (!levels)
			return eobj_nomem(err, errlen);
		for (size_t i = 0; i < topo->n_levels; i++)
			if (!(levels[i] = eobj_arena_strdup(&out->arena, topo->levels[i])))
				return eobj_nomem(err, errlen);
		out->topology.n_levels = topo->n_levels;
		out->topology.levels = levels;
		/* The level is a string of the podSet, which out holds a reference to. */
		out->topology.required = required ? level : NULL;
		out->topology.preferred = required ? NULL : level;
		out->req.topology = &out->topology;
	}
	if (!(out->req.workload = eobj_arena_strdup(&out->arena, workload_key)) ||
	    !(out->req.podset = eobj_arena_strdup(&out->arena, pa->name)))
		return eobj_nomem(err, errlen);
	out->req.count = pa->count;
	out->req.pod = &out->view.ps;
	out->req.flavor = n_names ? &out->flavor : NULL;
	out->req.policy = policy;
	return 0;
}

void pobj_request_release(struct pobj_request *r)
{
	podset_view_release(&r->view);
	json_decref(r->podset);
	eobj_arena_release(&r->arena);
	memset(r, 0, sizeof(*r));
}

void pobj_plan_release(struct pobj_plan *plan)
{
	eobj_arena_release(&plan->arena);
	json_decref(plan->closest);
	memset(plan, 0, sizeof(*plan));
}

/* The nodes that come closest to a request no layout fits, as struct pobj_plan.closest says. */
static json_t *closest_json(const struct placement *p, const struct plc_request *req,
			    const char *podset)
{
	struct plc_closest c[PLC_CLOSEST_MAX];
	char q[64];
	int n = placement_closest(p, req, c, PLC_CLOSEST_MAX);
	json_t *out = json_array();
	for (int i = 0; i < n && out; i++) {
		json_t *free_ = json_object(), *shortage = json_object();
		for (size_t r = 0; r < c[i].n; r++) {
			quota_format_amount(c[i].resources[r], c[i].free[r], q, sizeof(q));
			json_object_set_new(free_, c[i].resources[r], json_string(q));
			if (c[i].short_by[r] > 0) {
				quota_format_amount(c[i].resources[r], c[i].short_by[r], q,
						    sizeof(q));
				json_object_set_new(shortage, c[i].resources[r], json_string(q));
			}
		}
		json_array_append_new(out,
				      json_pack("{s:s, s:s, s:I, s:o, s:o}", "podSet", podset,
						"node", c[i].node, "pods", (json_int_t)c[i].pods,
						"free", free_, "short", shortage));
	}
	return out;
}

/* spec.podSets entry named name ("main" for an unnamed one), or NULL. */
static json_t *find_podset(json_t *workload, const char *name)
{
	json_t *ps;
	size_t i;
	json_array_foreach(obj_path(workload, "spec.podSets"), i, ps)
	{
		const char *n = json_string_value(json_object_get(ps, "name"));
		if (!strcmp(n ? n : "main", name))
			return ps;
	}
	return NULL;
}

/* Copies the placement's plan (valid only until its next call) into out. */
static int keep_plan(struct pobj_plan *out, const char *podset, int64_t count,
		     const struct plc_plan *plan)
{
	struct pobj_podset_plan *pp = &out->podsets[out->n_podsets];
	struct plc_slot *slots =
		eobj_arena_alloc(&out->arena, plan ? plan->n_slots : 0, sizeof(*slots));
	if (!slots || !(pp->podset = eobj_arena_strdup(&out->arena, podset)))
		return -ENOMEM;
	pp->count = count;
	pp->slots = slots;
	if (plan) {
		for (size_t i = 0; i < plan->n_slots; i++) {
			slots[i].count = plan->slots[i].count;
			if (!(slots[i].node = eobj_arena_strdup(&out->arena, plan->slots[i].node)))
				return -ENOMEM;
		}
		pp->n_slots = plan->n_slots;
		if (plan->domain_level && plan->domain_value &&
		    (!(pp->domain_level = eobj_arena_strdup(&out->arena, plan->domain_level)) ||
		     !(pp->domain_value = eobj_arena_strdup(&out->arena, plan->domain_value))))
			return -ENOMEM;
	}
	out->n_podsets++;
	return 0;
}

int pobj_place_workload(struct placement *p, const struct pobj_catalog *c, json_t *workload,
			const char *key, const struct eng_assignment *a, enum plc_policy policy,
			struct pobj_plan *out, char *msg, size_t msg_size)
{
	char why[1024], err[768], none[1];
	int rc = 0;
	json_t *closest = NULL;

	if (!msg || !msg_size) {
		msg = none;
		msg_size = sizeof(none);
	}
	pobj_plan_release(out);
	msg[0] = 0;
	for (size_t i = 0; rc == 0 && i < a->n_podsets && i < 18; i++) {
		const struct eng_podset_assignment *pa = &a->podsets[i];
		struct pobj_request req;
		struct plc_plan plan;
		json_t *ps = find_podset(workload, pa->name);
		if (!ps) {
			snprintf(msg, msg_size, "couldn't place pod set %.64s: not in spec.podSets",
				 pa->name);
			rc = 1;
			break;
		}
		if (pa->count == 0) {
			if (keep_plan(out, pa->name, 0, NULL) != 0)
				rc = eobj_nomem(msg, msg_size);
			continue;
		}
		rc = pobj_request_build(c, key, ps, pa, policy, &req, err, sizeof(err));
		if (rc != 0) {
			/* Invalid: it can't be placed until the objects are fixed, so not now. */
			snprintf(msg, msg_size, "couldn't place pod set %.64s: %s", pa->name, err);
			if (rc == -EINVAL)
				rc = 1;
		} else {
			why[0] = 0;
			rc = placement_place(p, &req.req, &plan, why, sizeof(why));
			if (rc == 0 && keep_plan(out, pa->name, pa->count, &plan) != 0)
				rc = eobj_nomem(msg, msg_size);
			else if (rc == 1) {
				snprintf(msg, msg_size, "couldn't place pod set %.64s on nodes: %s",
					 pa->name, why[0] ? why : "no layout fits every pod");
				closest = closest_json(p, &req.req, pa->name);
			} else if (rc < 0)
				snprintf(msg, msg_size, "couldn't place pod set %.64s on nodes: %s",
					 pa->name, strerror(-rc));
		}
		pobj_request_release(&req);
	}
	if (rc != 0) {
		/* All or nothing: the podSets placed so far give their nodes back. */
		placement_release(p, key);
		pobj_plan_release(out);
		out->closest = closest;
		closest = NULL;
	}
	json_decref(closest);
	return rc;
}
