/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/simulate.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/config.h"
#include "api/engine_objects.h"
#include "api/objects.h"
#include "api/placement_objects.h"
#include "core/container_of.h"
#include "core/engine.h"
#include "core/grow.h"
#include "core/placement.h"
#include "core/quantity.h"
#include "core/quota.h"
#include "core/strmap.h"
#include "sim/sim_internal.h"
#include "util/buf.h"
#include "util/flags.h"
#include "util/export_reader.h"
#include "util/heap_hint.h"
#include "util/json_arena.h"
#include "util/sanitizer.h"

#define NS_PER_SECOND INT64_C(1000000000)

static const struct kind_info {
	enum sim_kind kind;
	const char *api_version;
	const char *name;
} kinds[] = {
	/* Looked up by name for every document: the kind a large export is made of first. */
	{ K_WORKLOAD, KUEUE_API_VERSION, "Workload" },
	{ K_FLAVOR, KUEUE_API_VERSION, "ResourceFlavor" },
	{ K_CQ, KUEUE_API_VERSION, "ClusterQueue" },
	{ K_COHORT, KUEUE_API_VERSION, "Cohort" },
	{ K_LQ, KUEUE_API_VERSION, "LocalQueue" },
	{ K_WPC, KUEUE_API_VERSION, "WorkloadPriorityClass" },
	{ K_TOPOLOGY, KUEUE_API_VERSION, "Topology" },
	{ K_PRIORITY_CLASS, "scheduling.k8s.io/v1", "PriorityClass" },
	{ K_NAMESPACE, "v1", "Namespace" },
	{ K_NODE, "v1", "Node" },
	{ K_POD, "v1", "Pod" },
	{ K_CONFIGURATION, CONFIG_API_VERSION, "Configuration" },
	/* Then every integrated owner kind (api/integrations.h; classify). */
};

/* ------------------------------------------------------------------------------ reporting */

__attribute__((format(printf, 3, 4))) static void report(struct sim *s, const struct doc *d,
							 const char *fmt, ...)
{
	char head[600], body[2048], item[40] = "";
	va_list ap;
	if (d->item)
		snprintf(item, sizeof(item), "items[%zu]: ", d->item - 1);
	if (d->line > 0)
		snprintf(head, sizeof(head), "%.500s:%d: %s", d->file, d->line, item);
	else
		snprintf(head, sizeof(head), "%.500s: %s", d->file, item);
	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (GROW(s->problems, s->cap_problems, s->invalid + 1) != 0) {
		s->failed = -ENOMEM;
		return;
	}
	struct problem *p = &s->problems[s->invalid];
	size_t n = strlen(head) + strlen(body) + 1;
	if (!(p->text = malloc(n))) {
		s->failed = -ENOMEM;
		return;
	}
	snprintf(p->text, n, "%s%s", head, body);
	p->file_no = d->file_no;
	p->line = d->line;
	p->stage = s->stage;
	/* The engine's problems come kind by kind (cohorts, ClusterQueues, ...): report order. */
	p->ordinal = s->stage == ST_ENGINE ? 0 : d->ordinal;
	p->seq = s->invalid;
	s->invalid++;
}

static int cmp_problem(const void *x, const void *y)
{
	const struct problem *a = x, *b = y;
	if (a->file_no != b->file_no)
		return a->file_no < b->file_no ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->stage != b->stage)
		return a->stage < b->stage ? -1 : 1;
	if (a->ordinal != b->ordinal)
		return a->ordinal < b->ordinal ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void sim_print_problems(struct sim *s)
{
	if (s->invalid)
		qsort(s->problems, s->invalid, sizeof(*s->problems), cmp_problem);
	for (size_t i = 0; i < s->invalid; i++) {
		fprintf(s->errout, "%s\n", s->problems[i].text);
		free(s->problems[i].text);
	}
	free(s->problems);
	s->problems = NULL;
}

/* "Kind namespace/name" or "Kind name" for messages, from the raw object. */
static const char *describe(const struct doc *d, char *buf, size_t size)
{
	const char *name = d->obj ? obj_name(d->obj) : d->name;
	const char *ns = d->obj ? obj_namespace(d->obj) : d->ns;
	int namespaced = d->kind == K_LQ || d->kind == K_WORKLOAD || d->kind == K_OWNER ||
			 d->kind == K_POD;
	if (!name)
		snprintf(buf, size, "%s", d->kind_name);
	else if (namespaced)
		/* An empty namespace is the default one, as the decoders and kubectl read it. */
		snprintf(buf, size, "%s %.100s/%.200s", d->kind_name,
			 ns && *ns ? ns : SIM_DEFAULT_NAMESPACE, name);
	else
		snprintf(buf, size, "%s %.200s", d->kind_name, name);
	return buf;
}

static void report_decode(struct sim *s, const struct doc *d, int rc, const char *err)
{
	char what[400];
	if (rc == -ENOMEM) {
		s->failed = -ENOMEM;
		return;
	}
	report(s, d, "%s: %s", describe(d, what, sizeof(what)), err);
}

/* Records kind/namespace/name; a second object with the same identity is an error. */
static int claim(struct sim *s, const struct doc *d, const char *kind, const char *ns,
		 const char *name)
{
	char key[700], what[400];
	snprintf(key, sizeof(key), "%s\n%s\n%s", kind, ns ? ns : "", name);
	const struct doc *first = strmap_get(&s->seen, key);
	if (first) {
		if (ns)
			snprintf(what, sizeof(what), "%s %.100s/%.200s", kind, ns, name);
		else
			snprintf(what, sizeof(what), "%s %.200s", kind, name);
		report(s, d, "duplicate %s: first defined at %s:%d", what, first->file,
		       first->line);
		return -EEXIST;
	}
	if (strmap_put(&s->seen, key, (void *)d, NULL) != 0) {
		s->failed = -ENOMEM;
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------------------------- loading */

/* Room for element n of a growing array, new elements zeroed when zero is set; arrp is the
 * array's address. 0, or -ENOMEM with s->failed set. */
static int grow_array(struct sim *s, void *arrp, size_t n, size_t *cap, size_t size, int zero)
{
	size_t old = *cap;
	char *arr;
	if (grow_size(arrp, cap, n + 1, size) != 0)
		return s->failed = -ENOMEM;
	if (zero && *cap > old) {
		memcpy(&arr, arrp, sizeof(arr));
		memset(arr + old * size, 0, (*cap - old) * size);
	}
	return 0;
}

static int reserve(struct sim *s, void *arrp, size_t n, size_t *cap, size_t size)
{
	return grow_array(s, arrp, n, cap, size, 1);
}

/* Room for the next Workload record, which its maker zeroes: the records are the largest
 * array, and zeroing its unused half up front touched megabytes never used. */
static int reserve_record(struct sim *s)
{
	return grow_array(s, &s->wls, s->n_wls, &s->cap_wls, sizeof(*s->wls), 0);
}

static struct doc *new_doc(struct sim *s, const char *file, size_t file_no, int line, json_t *obj)
{
	if (!s->docs || s->docs->n == DOCS_PER_CHUNK) {
		struct doc_chunk *c = malloc(sizeof(*c));
		if (!c) {
			s->failed = -ENOMEM;
			return NULL;
		}
		c->next = s->docs;
		c->n = 0;
		s->docs = c;
	}
	struct doc *d = &s->docs->docs[s->docs->n++];
	*d = (struct doc){
		.file = file, .file_no = file_no, .ordinal = ++s->n_docs, .line = line, .obj = obj
	};
	return d;
}

/* Keeps a document's JSON until the end of the run (doc.obj borrows it). */
static int keep(struct sim *s, json_t *obj)
{
	if (json_array_append(s->loaded, obj) != 0)
		return s->failed = -ENOMEM;
	return 0;
}

static void classify(struct sim *s, struct doc *d, const char *api, const char *kind);
static void decode_config(struct sim *s, const struct doc *d);
static void stream_workload(struct sim *s, struct doc *d);
static void reread_workload(struct sim *s, json_t *obj, size_t *cursor);
static void dispatch(struct sim *s, struct doc *d);

/* A document's apiVersion and kind, as classify reads them. */
static const char *obj_api_version(json_t *obj)
{
	return json_string_value(json_object_get(obj, "apiVersion"));
}

static const char *obj_kind(json_t *obj)
{
	return json_string_value(json_object_get(obj, "kind"));
}

/* One document of an input, or one item of a List: classified and, but for Pods (they need
 * every Node first), decoded at once. In the placement pass (see read_input) only Workloads
 * and Jobs whose JSON was dropped are read again. */
static void take(struct sim *s, const struct sim_input *in, size_t file_no,
		 const struct export_pos *pos, json_t *obj, const char *api, const char *kind,
		 size_t *cursor)
{
	if (cursor) {
		s->n_docs++;
		reread_workload(s, obj, cursor);
		return;
	}
	struct doc *d = new_doc(s, in->name, file_no, pos->line, obj);
	if (!d)
		return;
	d->item = pos->item >= 0 ? (size_t)pos->item + 1 : 0;
	s->stage = ST_CLASSIFY;
	classify(s, d, api, kind);
	dispatch(s, d);
}

/* A classified document, decoded by its kind (Pods wait for every Node). */
static void dispatch(struct sim *s, struct doc *d)
{
	json_t *obj = d->obj;
	switch (d->kind) {
	case K_WORKLOAD:
	case K_OWNER:
		s->stage = ST_WORKLOAD;
		/* The objects path keeps the Workload's JSON (the doc borrows it). */
		if (!s->from_objects || keep(s, obj) == 0)
			stream_workload(s, d);
		break;
	case K_POD:
		if (keep(s, obj) == 0 && reserve(s, &s->pod_docs, s->n_pod_docs, &s->cap_pod_docs,
						 sizeof(*s->pod_docs)) == 0)
			s->pod_docs[s->n_pod_docs++] = d;
		break;
	default:
		/* Unknown kinds too: their message borrowed the kind's name from the object. */
		if (keep(s, obj) == 0 && d->kind != K_NONE) {
			s->stage = ST_CONFIG;
			decode_config(s, d);
		}
		break;
	}
}

/* A mapped input's pages before offset, a few MB at a time: the reader won't come back. */
static void drop_read_pages(const struct sim_input *in, size_t offset, size_t *dropped)
{
	const size_t step = 4u << 20;
	long page = sysconf(_SC_PAGESIZE);
	if (!in->mapped || page <= 0 || offset < *dropped + step)
		return;
	uintptr_t from = (uintptr_t)in->data + *dropped;
	uintptr_t to = ((uintptr_t)in->data + offset) & ~((uintptr_t)page - 1);
	/* A hint: if the kernel says no, the pages just stay. */
	if (to > from)
		(void)madvise((void *)from, (size_t)(to - from), MADV_DONTNEED);
	*dropped = (size_t)(to - (uintptr_t)in->data);
}

/*
 * Streams one input's objects (documents, and a List's items one by one: util/export_reader.h)
 * through take(), so only what each object decodes to stays: a Workload's JSON is dropped once
 * decoded. Malformed input ends the input with one problem; the objects before it were read.
 * cursor non-NULL: the placement pass, which reads the inputs again for the JSON of the
 * Workloads and Jobs the placer needs (only when there are Nodes); it reports nothing, every
 * problem having been found by the first pass.
 */
static int read_input(struct sim *s, const struct sim_input *in, size_t file_no, size_t *cursor)
{
	struct export_reader *r;
	struct yamljson_error yerr;
	struct export_pos pos;
	json_t *obj;

	size_t dropped = 0;
	int rc = export_reader_new(in->data, in->len, &r, &yerr);
	/* Each object's tree comes from the JSON arena when sim_main installed it (else this is
	 * malloc as usual), and is handed back once take() is done with it: json_arena_end
	 * reuses its memory only if none of its nodes is still referenced, so objects kept
	 * (queues, classes, deferred Workloads) stay valid; util/json_arena.h says why that
	 * holds. */
	while (rc == 0 && !s->failed) {
		json_arena_begin();
		rc = export_reader_next(r, &obj, &pos, &yerr);
		json_arena_pause();
		if (rc != 1)
			break;
		rc = 0;
		drop_read_pages(in, export_reader_offset(r), &dropped);
		s->doc_unreferenced = 0;
		take(s, in, file_no, &pos, obj, obj_api_version(obj), obj_kind(obj), cursor);
		/* A decoded Workload's tree goes without a walk over its nodes to free them (see
		 * json_arena_discard), unless something else still holds it. */
		if (s->doc_unreferenced && obj->refcount == 1 && json_arena_discard() == 0) {
			export_reader_discarded(r);
			continue;
		}
		json_decref(obj);
		json_arena_end();
	}
	json_arena_end(); /* an object the reader gave up on mid-way */
	int json = r && export_reader_is_json(r);
	export_reader_free(r);
	if (rc == -ENOMEM || s->failed)
		return s->failed ? s->failed : rc;
	if (rc != 0 && !cursor) {
		struct doc d = { .file = in->name, .file_no = file_no, .line = yerr.line };
		s->stage = ST_LOAD;
		report(s, &d, "malformed %s: %s", json ? "JSON" : "YAML", yerr.text);
	}
	return 0;
}

/* api and kind: the object's apiVersion and kind (obj_api_version, obj_kind). */
static void classify(struct sim *s, struct doc *d, const char *api, const char *kind)
{
	d->kind = K_NONE;
	d->kind_name = kind;
	if (!json_is_object(d->obj)) {
		report(s, d, "a document must be a Kubernetes object (a mapping), not %s",
		       json_is_array(d->obj) ? "a list" : "a scalar");
		return;
	}
	if (!kind || !*kind) {
		report(s, d, "kind: required");
		return;
	}
	if (!api || !*api) {
		report(s, d, "%.100s: apiVersion: required", kind);
		return;
	}
	size_t n_owners, n_kinds = sizeof(kinds) / sizeof(kinds[0]);
	const struct integration *const *owners = integration_all(&n_owners);
	for (size_t i = 0; i < n_kinds + n_owners; i++) {
		/* Plain Pods are K_POD's (a pod alone or a group), not an owner of their own. */
		const struct integration *in = i < n_kinds ? NULL : owners[i - n_kinds];
		const char *name = in ? in->kind : kinds[i].name;
		const char *want = in ? in->api_version : kinds[i].api_version;
		if (in == &integration_pod || strcmp(name, kind) != 0)
			continue;
		if (strcmp(want, api) != 0) {
			report(s, d, "%s: apiVersion \"%.100s\" is not supported: use %s", kind,
			       api, want);
			return;
		}
		d->kind = in ? K_OWNER : kinds[i].kind;
		d->kind_name = name;
		/* Only an owner's kind is read through it (decode_workload). */
		d->in = in;
		return;
	}
	report(s, d,
	       "unknown kind \"%.100s\" (apiVersion %.100s): the simulator reads ResourceFlavor, "
	       "ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass, Topology and Workload "
	       "(" KUEUE_API_VERSION "), PriorityClass (scheduling.k8s.io/v1), Namespace and List "
	       "(v1), Job (batch/v1), RayJob and RayCluster (ray.io/v1), Configuration "
	       "(" CONFIG_API_VERSION ")",
	       kind, api);
}

/* ------------------------------------------------------------------------------ decoding */

/* The simulation's "now" moves to a time the input states (RFC 3339; unreadable ones are the
 * decoders' business, not the clock's). */
static void note_time(struct sim *s, const char *rfc3339)
{
	int64_t ns;
	if (rfc3339 && time_parse_rfc3339_ns(rfc3339, &ns) == 0 && ns > s->now)
		s->now = ns;
}

static void note_condition_times(struct sim *s, json_t *obj)
{
	json_t *conds = obj_path(obj, "status.conditions"), *c;
	size_t i;
	json_array_foreach(conds, i, c)
		note_time(s, json_string_value(json_object_get(c, "lastTransitionTime")));
}

/* The Configuration: the manager's parser, so a setting reads here as the manager reads it. */
static void decode_configuration(struct sim *s, const struct doc *d)
{
	char err[512];
	if (s->config_doc) {
		report(s, d,
		       "Configuration: a second one; the simulator takes one (the first is at "
		       "%s:%d)",
		       s->config_doc->file, s->config_doc->line);
		return;
	}
	s->config_doc = d;
	config_defaults(&s->config);
	int rc = config_parse_json(d->obj, &s->config, err, sizeof(err));
	if (rc != 0) {
		report_decode(s, d, rc, err);
		/* Nothing of it acts: the run stops at the problem anyway. */
		config_defaults(&s->config);
	}
}

/* A LocalQueue's admission-fair-sharing status, checked now so its problems come with the
 * others; build_engine reads it again for the engine. */
static void check_lq_afs(struct sim *s, const struct doc *d)
{
	struct eobj_afs_status a;
	char err[512];
	int rc = eobj_local_queue_afs_decode(d->obj, &a, err, sizeof(err));
	if (rc != 0)
		report_decode(s, d, rc, err);
	else if (a.present && a.last_update > s->now)
		s->now = a.last_update;
	eobj_afs_status_release(&a);
}

/* Everything but Workloads and Jobs, which need the priority classes and namespaces first. */
static void decode_config(struct sim *s, const struct doc *d)
{
	char err[512];
	int rc;

	switch (d->kind) {
	case K_NAMESPACE: {
		if (reserve(s, &s->ns, s->n_ns, &s->cap_ns, sizeof(*s->ns)) != 0)
			return;
		struct eobj_namespace *n = &s->ns[s->n_ns];
		if ((rc = eobj_namespace_decode(d->obj, n, err, sizeof(err))) != 0) {
			eobj_namespace_release(n);
			report_decode(s, d, rc, err);
			return;
		}
		if (claim(s, d, "Namespace", NULL, n->name) != 0 ||
		    strmap_put(&s->namespaces, n->name, (void *)n->name, NULL) != 0) {
			eobj_namespace_release(n);
			return;
		}
		s->n_ns++;
		return;
	}
	case K_WPC:
	case K_PRIORITY_CLASS: {
		const char *name;
		int32_t value;
		if ((rc = eobj_priority_class_decode(d->obj, &name, &value, err, sizeof(err))) !=
		    0) {
			report_decode(s, d, rc, err);
			return;
		}
		if (claim(s, d, d->kind_name, NULL, name) != 0)
			return;
		if (json_object_set(d->kind == K_WPC ? s->wpcs : s->pcs, name, d->obj) != 0)
			s->failed = -ENOMEM;
		return;
	}
	case K_FLAVOR: {
		if (reserve(s, &s->flavors, s->n_flavors, &s->cap_flavors, sizeof(*s->flavors)) !=
		    0)
			return;
		struct eobj_flavor *f = &s->flavors[s->n_flavors];
		if ((rc = eobj_flavor_decode(d->obj, f, err, sizeof(err))) != 0) {
			eobj_flavor_release(f);
			report_decode(s, d, rc, err);
			return;
		}
		if (claim(s, d, "ResourceFlavor", NULL, f->spec.name) != 0) {
			eobj_flavor_release(f);
			return;
		}
		s->n_flavors++;
		/* The same object again, for spec.topologyName (placement's part of it). */
		if ((rc = pobj_catalog_set_flavor(&s->catalog, d->obj, err, sizeof(err))) != 0)
			report_decode(s, d, rc, err);
		return;
	}
	case K_TOPOLOGY: {
		struct pobj_topology t;
		if ((rc = pobj_topology_decode(d->obj, &t, err, sizeof(err))) != 0) {
			pobj_topology_release(&t);
			report_decode(s, d, rc, err);
			return;
		}
		if (claim(s, d, "Topology", NULL, t.name) == 0 &&
		    (rc = pobj_catalog_set_topology(&s->catalog, d->obj, err, sizeof(err))) != 0)
			report_decode(s, d, rc, err);
		pobj_topology_release(&t);
		return;
	}
	case K_NODE: {
		if (reserve(s, &s->nodes, s->n_nodes, &s->cap_nodes, sizeof(*s->nodes)) != 0)
			return;
		if (reserve(s, &s->node_docs, s->n_nodes, &s->cap_node_docs,
			    sizeof(*s->node_docs)) != 0)
			return;
		struct pobj_node *n = &s->nodes[s->n_nodes];
		if ((rc = pobj_node_decode(d->obj, n, err, sizeof(err))) != 0) {
			pobj_node_release(n);
			report_decode(s, d, rc, err);
			return;
		}
		if (claim(s, d, "Node", NULL, n->spec.name) != 0) {
			pobj_node_release(n);
			return;
		}
		s->node_docs[s->n_nodes++] = d;
		return;
	}
	case K_COHORT: {
		if (reserve(s, &s->cohorts, s->n_cohorts, &s->cap_cohorts, sizeof(*s->cohorts)) !=
		    0)
			return;
		if (reserve(s, &s->cohort_docs, s->n_cohorts, &s->cap_cohort_docs,
			    sizeof(*s->cohort_docs)) != 0)
			return;
		struct eobj_cohort *c = &s->cohorts[s->n_cohorts];
		if ((rc = eobj_cohort_decode(d->obj, c, err, sizeof(err))) != 0) {
			eobj_cohort_release(c);
			report_decode(s, d, rc, err);
			return;
		}
		if (claim(s, d, "Cohort", NULL, c->spec.name) != 0) {
			eobj_cohort_release(c);
			return;
		}
		s->cohort_docs[s->n_cohorts++] = d;
		return;
	}
	case K_CQ: {
		if (reserve(s, &s->cqs, s->n_cqs, &s->cap_cqs, sizeof(*s->cqs)) != 0)
			return;
		struct cq_rec *c = &s->cqs[s->n_cqs];
		char what[400];
		if ((rc = eobj_cq_decode(d->obj, &c->c, err, sizeof(err))) != 0) {
			eobj_cq_release(&c->c);
			report_decode(s, d, rc, err);
			return;
		}
		/* What the engine can't do would make every answer about this queue wrong. */
		if (c->c.unsupported) {
			report(s, d, "%s: %s", describe(d, what, sizeof(what)), c->c.unsupported);
			eobj_cq_release(&c->c);
			return;
		}
		if (claim(s, d, "ClusterQueue", NULL, c->c.spec.name) != 0) {
			eobj_cq_release(&c->c);
			return;
		}
		c->doc = d;
		s->n_cqs++;
		return;
	}
	case K_LQ: {
		if (reserve(s, &s->lqs, s->n_lqs, &s->cap_lqs, sizeof(*s->lqs)) != 0)
			return;
		if (reserve(s, &s->lq_docs, s->n_lqs, &s->cap_lq_docs, sizeof(*s->lq_docs)) != 0)
			return;
		struct eobj_local_queue *q = &s->lqs[s->n_lqs];
		if ((rc = eobj_local_queue_decode(d->obj, SIM_DEFAULT_NAMESPACE, q, err,
						  sizeof(err))) != 0) {
			eobj_local_queue_release(q);
			report_decode(s, d, rc, err);
			return;
		}
		if (claim(s, d, "LocalQueue", q->namespace_name, q->name) != 0) {
			eobj_local_queue_release(q);
			return;
		}
		s->lq_docs[s->n_lqs++] = d;
		check_lq_afs(s, d);
		return;
	}
	case K_CONFIGURATION:
		decode_configuration(s, d);
		return;
	default:
		return;
	}
}

/* After every Node: a bound Pod must name one of them. */
static void decode_pod(struct sim *s, const struct doc *d)
{
	if (reserve(s, &s->pods, s->n_pods, &s->cap_pods, sizeof(*s->pods)) != 0)
		return;
	struct pobj_pod *p = &s->pods[s->n_pods];
	char err[512], what[400], key[700];
	int rc = pobj_pod_decode(d->obj, SIM_DEFAULT_NAMESPACE, p, err, sizeof(err));
	if (rc < 0) {
		pobj_pod_release(p);
		report_decode(s, d, rc, err);
		return;
	}
	const char *name = obj_name(d->obj), *ns = obj_namespace(d->obj);
	if (claim(s, d, "Pod", ns && *ns ? ns : SIM_DEFAULT_NAMESPACE, name) != 0) {
		pobj_pod_release(p);
		return;
	}
	/* A queued pod not bound yet is a workload (a Pod alone, or one of a pod group); an
	 * integrated owner's pods are its owner's. */
	if (rc == POBJ_POD_UNBOUND && !p->terminal && !s->from_objects &&
	    obj_label(d->obj, LABEL_QUEUE_NAME) && !integration_owned(d->obj)) {
		pobj_pod_release(p);
		if (reserve(s, &s->queued_pods, s->n_queued_pods, &s->cap_queued_pods,
			    sizeof(*s->queued_pods)) == 0)
			s->queued_pods[s->n_queued_pods++] = d;
		return;
	}
	/* Unbound pods take nothing yet; finished ones nothing any more. */
	if (rc == POBJ_POD_UNBOUND || p->terminal) {
		pobj_pod_release(p);
		return;
	}
	snprintf(key, sizeof(key), "Node\n\n%s", p->spec.node);
	if (!strmap_get(&s->seen, key)) {
		report(s, d, "%s: spec.nodeName: Node \"%.200s\" is not among the inputs",
		       describe(d, what, sizeof(what)), p->spec.node);
		pobj_pod_release(p);
		return;
	}
	s->n_pods++;
}

/* A Workload, or a Job's, with the priority classes known so far; err as the decoders. A
 * record (kept to the end) takes a Workload's memory from s->wl_arena. */
static int decode_workload(struct sim *s, const struct doc *d, json_t *obj, struct eobj_workload *w,
			   int record, char *err, size_t errlen)
{
	if (d->kind == K_OWNER)
		return eobj_workload_for(d->in, obj, SIM_DEFAULT_NAMESPACE, s->wpcs, s->pcs, w, err,
					 errlen);
	if (record)
		return eobj_workload_decode_shared(&s->wl_arena, obj, SIM_DEFAULT_NAMESPACE,
						   s->wpcs, s->pcs, w, err, errlen);
	return eobj_workload_decode(obj, SIM_DEFAULT_NAMESPACE, s->wpcs, s->pcs, w, err, errlen);
}

/* metadata.namespace as obj_namespace reads it, from what outlives the object. */
static const char *same_namespace(const char *ns, const char *copy)
{
	return !ns ? NULL : !*ns ? "" : copy;
}

/*
 * While streaming: a Job's identity is claimed at once (a duplicate is not decoded), and the
 * Workload decoded with the priority classes read so far. Decoded, it keeps only its record
 * (eobj_workload_detach). A decode that fails may only lack a class that comes later: that
 * document is kept and decoded again after the last input, when its problem, if still one, is
 * reported. Success can't depend on classes to come (a class is looked up by name, and the
 * first of a name wins), so decoding early decides nothing differently. Records stay in input
 * order; identities are claimed after the last input, in that order (finish_workloads).
 */
static void stream_workload(struct sim *s, struct doc *d)
{
	char err[512];
	json_t *obj = d->obj;
	if (d->kind == K_OWNER) {
		const char *name = obj_name(obj), *ns = obj_namespace(obj);
		if (name &&
		    claim(s, d, d->kind_name, ns && *ns ? ns : SIM_DEFAULT_NAMESPACE, name) != 0) {
			d->obj = NULL; /* reported and done with: the message is made */
			return;
		}
	}
	if (reserve_record(s) != 0)
		return;
	struct wl_rec *r = &s->wls[s->n_wls];
	memset(r, 0, sizeof(*r));
	r->doc = d;
	/* Read now: the JSON may go below. creationTimestamp counts through queue_time. */
	note_condition_times(s, obj);
	int rc = decode_workload(s, d, obj, &r->w, 1, err, sizeof(err));
	if (rc == 0 && s->from_objects) {
		/* The caller's objects outlive the run: nothing to drop, nothing to read again. */
	} else if (rc == 0 && (rc = eobj_workload_detach(&r->w)) == 0) {
		if (d->kind == K_WORKLOAD) {
			/* The decoded names: the namespace with its default applied, as describe()
			 * prints it (no lookup in the document again). */
			d->name = r->w.name;
			d->ns = r->w.spec.namespace_name;
			/* Only read (a Job's document isn't: its Workload is built from it). */
			s->doc_unreferenced = 1;
		} else {
			/* An owner's name is not its Workload's. */
			const char *name = obj_name(obj), *ns = obj_namespace(obj);
			char *copy = ns && *ns ? eobj_arena_strdup(&r->w.arena, ns) : NULL;
			d->name = name ? eobj_arena_strdup(&r->w.arena, name) : NULL;
			d->ns = same_namespace(ns, copy);
			if ((name && !d->name) || (ns && *ns && !copy))
				rc = -ENOMEM;
		}
		d->obj = NULL;
		r->detached = 1;
		s->n_detached++;
	} else if (rc != 0 && rc != -ENOMEM) {
		eobj_workload_release(&r->w);
		memset(&r->w, 0, sizeof(r->w));
		r->deferred = 1;
		rc = keep(s, obj);
	}
	if (rc == -ENOMEM) {
		s->failed = rc;
		eobj_workload_release(&r->w);
		return;
	}
	s->n_wls++;
}

/* A Workload's identity, claimed in the index by key (unique as namespace and name are, both
 * being checked names without '/'), so 50,000 Workloads take one map rather than two. slot is
 * where r goes once kept; a duplicate is reported as claim() reports one. */
static int claim_workload(struct sim *s, const struct wl_rec *r, struct wl_rec *slot)
{
	void *old;
	char what[400];
	if (strmap_put(&s->wl_index, r->w.spec.key, slot, &old) != 0)
		return s->failed = -ENOMEM;
	if (!old)
		return 0;
	const struct wl_rec *first = old;
	(void)strmap_put(&s->wl_index, r->w.spec.key, old, NULL); /* present: can't fail */
	snprintf(what, sizeof(what), "Workload %.100s/%.200s", r->w.spec.namespace_name, r->w.name);
	report(s, r->doc, "duplicate %s: first defined at %s:%d", what, first->doc->file,
	       first->doc->line);
	return -EEXIST;
}

/* After the last input: decodes the deferred Workloads, claims every identity in input order
 * (indexing each by key), and drops the records that failed. */
static void finish_workloads(struct sim *s)
{
	size_t kept = 0;
	char err[512];
	/* Every identity goes into the index: sized once, not doubled up to 50,000 and more. */
	if (strmap_reserve(&s->wl_index, s->wl_index.len + s->n_wls) != 0)
		s->failed = -ENOMEM;
	for (size_t i = 0; i < s->n_wls; i++) {
		struct wl_rec *r = &s->wls[i];
		int rc = 0;
		if (s->failed) {
			eobj_workload_release(&r->w);
			continue;
		}
		if (r->deferred) {
			r->deferred = 0;
			rc = decode_workload(s, r->doc, r->doc->obj, &r->w, 1, err, sizeof(err));
			if (rc != 0)
				report_decode(s, r->doc, rc, err);
		}
		if (rc == 0)
			rc = claim_workload(s, r, &s->wls[kept]);
		if (rc != 0) {
			if (r->detached)
				s->n_detached--;
			eobj_workload_release(&r->w);
			continue;
		}
		if (kept != i)
			s->wls[kept] = *r;
		kept++;
	}
	s->n_wls = kept;
}

/* The placement pass: the JSON of the next detached record, when obj is its document. */
static void reread_workload(struct sim *s, json_t *obj, size_t *cursor)
{
	while (*cursor < s->n_wls &&
	       (!s->wls[*cursor].detached || s->wls[*cursor].doc->ordinal < s->n_docs))
		++*cursor;
	if (*cursor == s->n_wls || s->wls[*cursor].doc->ordinal != s->n_docs)
		return;
	struct wl_rec *r = &s->wls[(*cursor)++];
	struct eobj_workload w;
	char err[512];
	/* The same decoder on the same object with the same classes: the same Workload, and for
	 * a Job the Workload object it converts to. */
	int rc = decode_workload(s, r->doc, obj, &w, 0, err, sizeof(err));
	if (rc == 0)
		r->obj = json_incref(w.obj);
	else
		s->failed = rc == -ENOMEM ? rc : -EIO;
	eobj_workload_release(&w);
}

/* ---------------------------------------------------------------------------- the engine */

static void engine_problem(struct sim *s, const struct doc *d, int rc, const char *what)
{
	char desc[400];
	if (rc == -EINVAL)
		report(s, d, "%s: rejected by the admission engine as invalid%s%s",
		       describe(d, desc, sizeof(desc)), what ? ": " : "", what ? what : "");
	else if (!s->failed)
		s->failed = rc;
}

/* A namespace used but not given exists, as in a cluster, with only its automatic label. */
static int ensure_namespace(struct sim *s, const char *name)
{
	struct eobj_namespace n;
	if (strmap_get(&s->namespaces, name))
		return 0;
	int rc = eobj_namespace_default(name, &n);
	if (rc == 0)
		rc = engine_set_namespace(s->engine, n.name, n.n_labels, n.labels);
	if (rc == 0)
		rc = strmap_put(&s->namespaces, name, (void *)1, NULL);
	eobj_namespace_release(&n);
	return rc;
}

/* The engine's placer: plans and reserves the admitted workload's podSets. */
static int sim_place(void *arg, const char *workload, const struct eng_assignment *a, char *msg,
		     size_t size)
{
	struct sim *s = arg;
	struct wl_rec *r = strmap_get(&s->wl_index, workload);
	if (!r)
		return -ENOENT;
	if (!r->plan && !(r->plan = calloc(1, sizeof(*r->plan)))) {
		s->failed = -ENOMEM;
		return -ENOMEM;
	}
	int rc = pobj_place_workload(s->placement, &s->catalog, r->w.obj ? r->w.obj : r->obj,
				     workload, a, PLC_MUSTER, r->plan, msg, size);
	if (rc == -ENOMEM)
		s->failed = rc;
	r->placed = rc == 0;
	return rc;
}

/* Nodes, then the pods bound to them, in input order; then the placer. Admitted Workloads
 * given as input hold nodes only through their bound Pods: where else they run is unknown. */
static int build_placement(struct sim *s)
{
	int rc = placement_new(&s->placement);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < s->n_nodes; i++) {
		rc = placement_set_node(s->placement, &s->nodes[i].spec);
		if (rc == -EINVAL) {
			char what[400];
			report(s, s->node_docs[i], "%s: rejected by the placement module: %s",
			       describe(s->node_docs[i], what, sizeof(what)),
			       placement_node_refusal(s->placement, s->nodes[i].spec.name));
		} else if (rc != 0) {
			return rc;
		}
	}
	s->pod_bound = calloc(s->n_pods + 1, sizeof(*s->pod_bound));
	if (!s->pod_bound)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_pods; i++) {
		if ((rc = placement_bind_pod(s->placement, &s->pods[i].spec)) != 0)
			return rc;
		s->pod_bound[i] = 1;
	}
	engine_set_placer(s->engine, sim_place, s);
	return s->failed;
}

/* An evicted workload's Job is suspended: its pods go and its reservation ends. */
static void release_nodes(struct sim *s, struct wl_rec *r)
{
	const char *key = r->w.spec.key;
	placement_release(s->placement, key);
	for (size_t i = 0; i < s->n_pods; i++) {
		if (s->pod_bound[i] && s->pods[i].spec.workload &&
		    !strcmp(s->pods[i].spec.workload, key)) {
			placement_unbind_pod(s->placement, s->pods[i].spec.key);
			s->pod_bound[i] = 0;
		}
	}
	r->placed = 0;
	if (r->plan)
		pobj_plan_release(r->plan);
}

/* The Configuration's fair sharing settings (none: both stay off). */
static void set_fair_sharing(struct sim *s)
{
	int rc;
	if (s->config.fair_sharing.enabled &&
	    (rc = engine_set_fair_sharing(s->engine, &s->config.fair_sharing)) != 0)
		engine_problem(s, s->config_doc, rc, "fairSharing");
	if (s->config.admission_fair_sharing.enabled &&
	    (rc = engine_set_admission_fair_sharing(s->engine,
						    &s->config.admission_fair_sharing)) != 0)
		engine_problem(s, s->config_doc, rc, "admissionFairSharing");
}

/* LocalQueues' weights and, with admission fair sharing on, the usage their status carries. */
static void set_lq_fair_sharing(struct sim *s)
{
	int afs = s->config.admission_fair_sharing.enabled;
	for (size_t i = 0; i < s->n_lqs && !s->failed; i++) {
		const struct eobj_local_queue *q = &s->lqs[i];
		struct eobj_afs_status a;
		char err[512];
		int rc;
		if (q->has_fair_weight &&
		    (rc = engine_set_lq_fair_weight(s->engine, q->namespace_name, q->name,
						    q->fair_weight)) != 0)
			engine_problem(s, s->lq_docs[i], rc, "spec.fairSharing.weight");
		if (!afs)
			continue;
		/* Checked when it was read: only memory can fail here. */
		rc = eobj_local_queue_afs_decode(s->lq_docs[i]->obj, &a, err, sizeof(err));
		if (rc == 0 && a.present)
			rc = engine_afs_seed(s->engine, q->namespace_name, q->name, a.consumed, a.n,
					     a.last_update);
		eobj_afs_status_release(&a);
		if (rc != 0)
			engine_problem(s, s->lq_docs[i], rc,
				       "status.fairSharing.admissionFairSharingStatus");
	}
}

static int build_engine(struct sim *s)
{
	int rc = engine_new(&s->engine);
	if (rc != 0)
		return rc;
	/* Every Workload is known: the engine's tables are sized once, not doubled up to it. */
	if ((rc = engine_reserve(s->engine, s->n_wls)) != 0)
		return rc;
	set_fair_sharing(s);
	/* In input order throughout, so nothing depends on hash order. */
	for (size_t i = 0; i < s->n_ns; i++)
		if ((rc = engine_set_namespace(s->engine, s->ns[i].name, s->ns[i].n_labels,
					       s->ns[i].labels)) != 0)
			return rc;
	for (size_t i = 0; i < s->n_lqs; i++)
		if ((rc = ensure_namespace(s, s->lqs[i].namespace_name)) != 0)
			return rc;
	for (size_t i = 0; i < s->n_wls; i++)
		if ((rc = ensure_namespace(s, s->wls[i].w.spec.namespace_name)) != 0)
			return rc;
	for (size_t i = 0; i < s->n_flavors; i++)
		if ((rc = engine_set_flavor(s->engine, &s->flavors[i].spec)) != 0)
			return rc;
	for (size_t i = 0; i < s->n_cohorts; i++)
		if ((rc = engine_set_cohort(s->engine, &s->cohorts[i].spec)) != 0)
			engine_problem(s, s->cohort_docs[i], rc, NULL);
	for (size_t i = 0; i < s->n_cqs; i++)
		if ((rc = engine_set_cq(s->engine, &s->cqs[i].c.spec)) != 0)
			engine_problem(s, s->cqs[i].doc, rc, NULL);
	for (size_t i = 0; i < s->n_lqs; i++)
		if ((rc = engine_set_local_queue(s->engine, s->lqs[i].namespace_name,
						 s->lqs[i].name, s->lqs[i].cluster_queue,
						 s->lqs[i].stop)) != 0)
			engine_problem(s, s->lq_docs[i], rc, NULL);
	set_lq_fair_sharing(s);

	/* Workloads without a creation time were created "now", after every given one, in
	 * input order: what applying the files to a cluster would do. */
	int64_t latest = 0;
	for (size_t i = 0; i < s->n_wls; i++)
		if (s->wls[i].w.has_queue_time && s->wls[i].w.spec.queue_time > latest)
			latest = s->wls[i].w.spec.queue_time;
	int64_t now = latest > INT64_MAX - NS_PER_SECOND ? latest : latest + NS_PER_SECOND;
	for (size_t i = 0; i < s->n_wls; i++) {
		struct wl_rec *r = &s->wls[i];
		if (!r->w.has_queue_time)
			r->w.spec.queue_time = now < INT64_MAX - (int64_t)i ? now + (int64_t)i :
									      INT64_MAX;
		if (r->fixed_reason)
			continue; /* decided before: a pod group short of pods */
		if (r->w.finished) {
			r->fixed_reason = "Finished";
			r->fixed_message =
				"the Workload finished before the simulation: it holds no quota";
			continue;
		}
		if (r->w.inactive) {
			r->fixed_reason = "Deactivated";
			r->fixed_message =
				"spec.active is false: the Workload is neither admitted nor "
				"queued until it is activated";
			continue;
		}
		if (!*r->w.spec.queue) {
			r->fixed_reason = ENG_WHY_MISCONFIGURED;
			r->fixed_message = "spec.queueName is not set: the Workload is in no queue";
			continue;
		}
		r->w.spec.tag = r; /* s->wls moves no more: decisions name their record */
		if ((rc = engine_add_workload(s->engine, &r->w.spec)) != 0) {
			engine_problem(s, r->doc, rc, NULL);
			continue;
		}
		if (r->w.admitted &&
		    (rc = engine_set_admitted(s->engine, r->w.spec.key, r->w.admission)) != 0)
			engine_problem(s, r->doc, rc, "status.admission");
		else if (r->w.admitted)
			r->ever_admitted = 1;
	}
	/* The input is a snapshot as of its latest time: usage decays from each LocalQueue's
	 * lastUpdate up to then, toward what is admitted, before the first cycle. */
	if (latest > s->now)
		s->now = latest;
	if (s->config.admission_fair_sharing.enabled && !s->failed &&
	    (rc = engine_afs_sample(s->engine, s->now)) != 0)
		return rc;
	if (s->n_nodes > 0 && !s->failed)
		return build_placement(s);
	return s->failed;
}

static char *dup_or_fail(struct sim *s, const char *text)
{
	char *p = strdup(text ? text : "");
	if (!p)
		s->failed = -ENOMEM;
	return p;
}

static const char *preemption_cause(const char *reason)
{
	if (reason && !strcmp(reason, "InClusterQueue"))
		return "prioritization in the ClusterQueue";
	if (reason && !strcmp(reason, "InCohortReclamation"))
		return "reclamation within the cohort";
	if (reason && !strcmp(reason, "InCohortReclaimWhileBorrowing"))
		return "reclamation within the cohort while borrowing";
	if (reason && !strcmp(reason, "InCohortFairSharing"))
		return "fair sharing within the cohort";
	return reason ? reason : "preemption";
}

/* A text held by records, kept once in s->messages however many hold it. */
struct shared_text {
	size_t holders;
	size_t len;
	uint64_t quick; /* quick_hash of the text: its slot in s->recent_texts */
	int plain; /* put_str would copy it as it is (see put_held) */
	char text[];
};

static int plain_json(const char *text);

/* A hash of text[0..n) eight bytes a step, for s->recent_texts: the map's byte-wise hash of a
 * 200-byte message took longer than the rest of a decision. */
static uint64_t quick_hash(const char *text, size_t n)
{
	const uint64_t mul = UINT64_C(0xff51afd7ed558ccd);
	uint64_t h = (uint64_t)n * UINT64_C(0x9e3779b97f4a7c15), w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, text + i, 8);
		h = (h ^ w) * mul;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, text + i, n - i);
	h = (h ^ w) * mul;
	return h ^ (h >> 29);
}

/* text, held once more; NULL (s->failed set) when out of memory. Texts held lately are found
 * in s->recent_texts first (most are: 50,000 waiting Workloads share about 2,000). */
static const char *hold_text(struct sim *s, const char *text)
{
	size_t n = strlen(text);
	uint64_t quick = quick_hash(text, n);
	struct shared_text **recent = &s->recent_texts[quick % SIM_RECENT_TEXTS];
	struct shared_text *t = *recent;
	if (!t || t->len != n || memcmp(t->text, text, n) != 0)
		t = strmap_get(&s->messages, text);
	if (!t) {
		if (!(t = malloc(sizeof(*t) + n + 1))) {
			s->failed = -ENOMEM;
			return NULL;
		}
		t->holders = 0;
		t->len = n;
		t->quick = quick;
		t->plain = plain_json(text);
		memcpy(t->text, text, n + 1);
		if (strmap_put(&s->messages, t->text, t, NULL) != 0) {
			free(t);
			s->failed = -ENOMEM;
			return NULL;
		}
	}
	*recent = t;
	t->holders++;
	return t->text;
}

/* Lets go of a text from hold_text (NULL: none); the last holder frees it. */
static void drop_text(struct sim *s, const char *text)
{
	if (!text)
		return;
	struct shared_text *t = CONTAINER_OF(text, struct shared_text, text);
	if (--t->holders == 0) {
		struct shared_text **recent = &s->recent_texts[t->quick % SIM_RECENT_TEXTS];
		if (*recent == t)
			*recent = NULL;
		strmap_remove(&s->messages, text);
		free(t);
	}
}

static void drop_reason(struct wl_rec *r)
{
	free(r->reason_copy);
	r->reason = r->reason_copy = NULL;
}

/* A pending reason, kept as the engine's constant when it is one of Kueue's few (a copy per
 * Workload was 50,000 allocations in a large run), else copied. */
static void keep_reason(struct sim *s, struct wl_rec *r, const char *reason)
{
	static const char *const whys[] = {
		ENG_WHY_MISCONFIGURED,     ENG_WHY_NO_MATCHING_FLAVOR, ENG_WHY_SUSPENDED,
		ENG_WHY_EXCEEDS_MAX_QUOTA, ENG_WHY_BORROWING_LIMIT,    ENG_WHY_WAITING_FOR_QUOTA,
		ENG_WHY_NO_NODE_LAYOUT,    ENG_WHY_PREEMPTION_PENDING,
	};
	const char *why = reason ? reason : "";
	if (r->reason && (r->reason == why || !strcmp(r->reason, why)))
		return;
	drop_reason(r);
	for (size_t i = 0; i < sizeof(whys) / sizeof(whys[0]); i++)
		if (whys[i] == why || !strcmp(whys[i], why)) { /* literals are often merged */
			r->reason = whys[i];
			return;
		}
	r->reason = r->reason_copy = dup_or_fail(s, why);
}

static void on_decision(void *arg, const struct eng_decision *d)
{
	struct sim *s = arg;
	struct wl_rec *r = d->tag;
	if (s->observe)
		s->observe(s->observe_arg, d);
	if (!r)
		return;
	switch (d->kind) {
	case ENG_ADMIT:
		r->ever_admitted = 1;
		drop_reason(r);
		drop_text(s, r->message);
		r->message = NULL;
		break;
	case ENG_PREEMPT: {
		char note[2600];
		/* No preemptor: a HoldAndDrain stop evicts it, which is no preemption. */
		if (d->preemptor) {
			snprintf(note, sizeof(note), "Preempted to accommodate %s due to %s",
				 d->preemptor, preemption_cause(d->reason));
			r->preempted = 1;
			r->drain_reason = NULL;
		} else {
			snprintf(note, sizeof(note), "Evicted: %s",
				 d->message && *d->message ? d->message : "its queue was stopped");
			r->drain_reason = !strcmp(d->reason ? d->reason : "", "LocalQueueStopped") ?
						  "LocalQueueStopped" :
						  "ClusterQueueStopped";
		}
		free(r->evicted_note);
		r->evicted_note = dup_or_fail(s, note);
		/* Victims keep their quota until evicted; evicting right after the cycle is
		 * "at once" for the simulation: no cycle runs in between. */
		if (!r->victim) {
			r->victim = 1;
			s->victims[s->n_victims++] = r;
		}
		break;
	}
	case ENG_PENDING:
		/* A workload left waiting is told why again each time it is looked at, mostly in
		 * the same words: keep the copy then. */
		keep_reason(s, r, d->reason);
		if (!r->message || strcmp(r->message, d->message ? d->message : "") != 0) {
			const char *held = hold_text(s, d->message ? d->message : "");
			drop_text(s, r->message);
			r->message = held;
		}
		break;
	}
}

int sim_settle(struct sim *s)
{
	/* Every cycle admits or preempts something until the fixed point; a preempted workload
	 * can come back, so allow many rounds per workload before calling it a livelock. */
	size_t max_cycles = 1000 + 100 * s->n_wls;
	/* Settled again and again by the forecast: the workloads don't change in number. */
	if (!s->victims)
		s->victims = calloc(s->n_wls ? s->n_wls : 1, sizeof(*s->victims));
	if (!s->victims)
		return -ENOMEM;
	for (size_t cycle = 0;; cycle++) {
		if (cycle == max_cycles) {
			fprintf(s->errout,
				"muster simulate: admission did not reach a fixed point after %zu "
				"cycles\n",
				max_cycles);
			return -ELOOP;
		}
		int rc = engine_cycle(s->engine, on_decision, s);
		if (rc < 0)
			return rc;
		if (s->failed)
			return s->failed;
		for (size_t i = 0; i < s->n_victims; i++) {
			struct wl_rec *r = s->victims[i];
			r->victim = 0;
			int erc = engine_evict(s->engine, r->w.spec.key);
			if (erc != 0)
				return erc;
			if (s->placement)
				release_nodes(s, r);
		}
		int evicted = s->n_victims > 0;
		if (evicted && s->placement)
			engine_capacity_changed(s->engine);
		s->n_victims = 0;
		if (rc == 0 && !evicted)
			return 0;
	}
}

/* ------------------------------------------------------------------------------ output */

/* A JSON string of text, with bytes that aren't UTF-8 (a message cut mid-character) as '?'. */
static json_t *jstr(const char *text)
{
	json_t *v = json_string(text ? text : "");
	if (v)
		return v;
	size_t n = strlen(text);
	char *copy = malloc(n + 1);
	if (!copy)
		return NULL;
	const unsigned char *p = (const unsigned char *)text;
	for (size_t i = 0; i < n;) {
		size_t len = p[i] < 0x80       ? 1 :
			     (p[i] >> 5) == 6  ? 2 :
			     (p[i] >> 4) == 14 ? 3 :
			     (p[i] >> 3) == 30 ? 4 :
						 0;
		int ok = len > 0 && i + len <= n;
		for (size_t k = 1; ok && k < len; k++)
			ok = (p[i + k] & 0xC0) == 0x80;
		/* jansson also refuses overlong forms and surrogates: let it judge the sequence. */
		json_t *probe = ok && len > 1 ? json_stringn(text + i, len) : NULL;
		if (ok && len > 1 && !probe)
			ok = 0;
		json_decref(probe);
		if (ok) {
			memcpy(copy + i, text + i, len);
			i += len;
		} else {
			copy[i++] = '?';
		}
	}
	copy[n] = '\0';
	v = json_string(copy);
	free(copy);
	return v;
}

/*
 * Output lines are written here rather than with json_pack and json_dumps: those took a fifth
 * of a 50,000-Workload run. The bytes are json_dumps(JSON_COMPACT)'s: keys in insertion order,
 * '"', '\\' and control characters escaped (\b \f \n \r \t, else \u00XX), the rest as is;
 * text that isn't UTF-8 goes through jstr first, as before.
 */

/* n bytes into b: a copy when they fit what b has (every line but the first few), else
 * buf_append, which grows it. */
static inline int put_n(struct buf *b, const void *p, size_t n)
{
	if (b->data && b->alloc - b->len > n && b->len + n <= b->max) { /* buf_append's cap */
		memcpy(b->data + b->len, p, n);
		b->len += n;
		b->data[b->len] = '\0';
		return 0;
	}
	return buf_append(b, p, n);
}

/* Inline, so that a literal's length is known when compiling: most texts put are. */
static inline int put(struct buf *b, const char *text)
{
	return put_n(b, text, strlen(text));
}

/* Bytes put_str copies as they are: ASCII from ' ' up, but '"' and '\\'. */
static const unsigned char json_plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Whether put_str copies text as it is (quoted). */
static int plain_json(const char *text)
{
	const unsigned char *p = (const unsigned char *)text;
	while (json_plain[*p])
		p++;
	return !*p;
}

/* n bytes that need no escape, quoted: one copy when b has room. */
static int put_quoted(struct buf *b, const void *p, size_t n)
{
	if (b->data && b->alloc - b->len > n + 2 && b->len + n + 2 <= b->max) {
		char *at = b->data + b->len;
		at[0] = '"';
		memcpy(at + 1, p, n);
		at[n + 1] = '"';
		at[n + 2] = '\0';
		b->len += n + 2;
		return 0;
	}
	int rc = put_n(b, "\"", 1);
	if (rc == 0)
		rc = put_n(b, p, n);
	return rc ? rc : put_n(b, "\"", 1);
}

static int put_str(struct buf *b, const char *text)
{
	const unsigned char *p = (const unsigned char *)(text ? text : ""), *run;
	json_t *fixed = NULL;
	int rc;
	/* Most strings are plain ASCII with nothing to escape: one scan by table, one copy. */
	for (run = p; json_plain[*run]; run++)
		;
	if (!*run)
		return put_quoted(b, p, (size_t)(run - p));
	for (run = p; *run; run++) {
		if (*run >= 0x80) {
			if (!(fixed = jstr((const char *)p)))
				return -ENOMEM;
			p = (const unsigned char *)json_string_value(fixed);
			break;
		}
	}
	rc = put_n(b, "\"", 1);
	for (run = p; rc == 0 && *p; p++) {
		char esc[8];
		if (*p >= 0x20 && *p != '"' && *p != '\\')
			continue;
		switch (*p) {
		case '"':
			snprintf(esc, sizeof(esc), "\\\"");
			break;
		case '\\':
			snprintf(esc, sizeof(esc), "\\\\");
			break;
		case '\b':
			snprintf(esc, sizeof(esc), "\\b");
			break;
		case '\f':
			snprintf(esc, sizeof(esc), "\\f");
			break;
		case '\n':
			snprintf(esc, sizeof(esc), "\\n");
			break;
		case '\r':
			snprintf(esc, sizeof(esc), "\\r");
			break;
		case '\t':
			snprintf(esc, sizeof(esc), "\\t");
			break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04X", *p);
			break;
		}
		if ((rc = put_n(b, run, (size_t)(p - run))) == 0)
			rc = put(b, esc);
		run = p + 1;
	}
	if (rc == 0)
		rc = put_n(b, run, (size_t)(p - run));
	if (rc == 0)
		rc = put_n(b, "\"", 1);
	json_decref(fixed);
	return rc;
}

/* A text held in s->messages, as put_str writes it: its bytes were looked at once, when it
 * was first held, rather than for each of the thousands of Workloads that share it. */
static int put_held(struct buf *b, const char *held)
{
	const struct shared_text *t = CONTAINER_OF(held, struct shared_text, text);
	if (!t->plain)
		return put_str(b, held);
	return put_quoted(b, held, t->len);
}

static int put_int(struct buf *b, long long v)
{
	char num[24];
	size_t k = sizeof(num);
	/* Digits of the magnitude as unsigned, so LLONG_MIN needs no special case. */
	unsigned long long m = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do
		num[--k] = (char)('0' + m % 10);
	while ((m /= 10) != 0);
	if (v < 0)
		num[--k] = '-';
	return put_n(b, num + k, sizeof(num) - k);
}

/* "key": with the separator before it unless first. */
static int put_key(struct buf *b, int first, const char *key)
{
	int rc = first ? 0 : put(b, ",");
	if (rc == 0)
		rc = put_str(b, key);
	return rc ? rc : put(b, ":");
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* A Workload's place in the output, its sort keys next to it: sorting pointers to the records
 * fetched two of their cache lines per comparison. */
struct wl_order {
	const char *namespace_name, *name;
	uint64_t ns_head, name_head; /* their first 8 bytes, see head8 */
	const struct wl_rec *r;
	/* What its line reads besides r, copied here while the records are read in memory
	 * order, so that print_result fetches them ahead without waiting for r first. */
	const void *message, *podsets;
};

/* The first 8 bytes of s (NUL-padded) as a number that orders as strcmp orders them: most
 * comparisons of the 50,000 Workloads' sort are decided by one subtraction, not strcmp. */
static uint64_t head8(const char *s)
{
	uint64_t h = 0;
	size_t i = 0;
	for (; i < 8 && s[i]; i++)
		h = h << 8 | (unsigned char)s[i];
	return h << (8 * (8 - i));
}

/* strcmp(a, b), given their head8: the rest is read only when the heads tie and go on. */
static int cmp_headed(const char *a, uint64_t ha, const char *b, uint64_t hb)
{
	if (ha != hb)
		return ha < hb ? -1 : 1;
	if ((ha & 0xff) == 0) /* both end within their first 8 bytes, the same ones */
		return 0;
	return strcmp(a + 8, b + 8);
}

static int cmp_wl(const void *x, const void *y)
{
	const struct wl_order *a = x, *b = y;
	int c = cmp_headed(a->namespace_name, a->ns_head, b->namespace_name, b->ns_head);
	return c ? c : cmp_headed(a->name, a->name_head, b->name, b->name_head);
}

static int cmp_cq(const void *x, const void *y)
{
	const struct cq_rec *a = *(const struct cq_rec *const *)x;
	const struct cq_rec *b = *(const struct cq_rec *const *)y;
	return cmp_str(a->c.spec.name, b->c.spec.name);
}

/* The flavors map of an admitted podSet, resources sorted by name as Kubernetes prints maps. */
static int put_flavors(struct buf *b, const struct eng_podset_assignment *pa)
{
	size_t order[QUOTA_MAX_RESOURCES];
	size_t n = pa->n < QUOTA_MAX_RESOURCES ? pa->n : QUOTA_MAX_RESOURCES;
	int rc = put(b, "{");
	for (size_t i = 0; i < n; i++) {
		size_t k = i;
		while (k > 0 && strcmp(pa->resources[order[k - 1]], pa->resources[i]) > 0) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = i;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		if ((rc = put_key(b, i == 0, pa->resources[order[i]])) == 0)
			rc = put_str(b, pa->flavors[order[i]]);
	return rc ? rc : put(b, "}");
}

/* A podSet's plan: its nodes in fill order, with the pods each takes. */
static int put_placement(struct buf *b, const struct pobj_plan *plan, const char *podset)
{
	int rc = put(b, "["), first = 1;
	for (size_t i = 0; rc == 0 && i < plan->n_podsets; i++) {
		const struct pobj_podset_plan *pp = &plan->podsets[i];
		if (strcmp(pp->podset, podset) != 0)
			continue;
		for (size_t k = 0; rc == 0 && k < pp->n_slots; k++) {
			rc = put(b, first ? "{\"node\":" : ",{\"node\":");
			first = 0;
			if (rc == 0)
				rc = put_str(b, pp->slots[k].node);
			if (rc == 0)
				rc = put(b, ",\"count\":");
			if (rc == 0)
				rc = put_int(b, (long long)pp->slots[k].count);
			if (rc == 0)
				rc = put(b, "}");
		}
	}
	return rc ? rc : put(b, "]");
}

/* A message as the output prints it, cut to size - 1 bytes: s itself when it fits (most do),
 * else its cut copy in buf. */
static const char *cut_to(const char *s, char *buf, size_t size)
{
	if (strnlen(s, size) < size)
		return s;
	snprintf(buf, size, "%s", s);
	return buf;
}

static int put_workload(struct sim *s, struct buf *b, const struct wl_rec *r)
{
	/* Most Workloads of a large run were never admitted: no lookup by key for them. */
	const struct eng_assignment *a = r->fixed_reason || !r->ever_admitted ?
						 NULL :
						 engine_admission(s->engine, r->w.spec.key);
	const char *reason;
	char message[2048];
	int rc;

	const char *text = message;
	if (r->fixed_reason) {
		reason = r->fixed_reason;
		text = cut_to(r->fixed_message, message, sizeof(message));
	} else if (a) {
		reason = "Admitted";
		snprintf(message, sizeof(message), "Admitted by ClusterQueue %s", a->cluster_queue);
	} else if (r->evicted_note) {
		reason = r->drain_reason ? r->drain_reason : "Preempted";
		snprintf(message, sizeof(message), "%s%s%s", r->evicted_note,
			 r->message && *r->message ? "; now waiting: " : "",
			 r->message ? r->message : "");
	} else if (r->reason) {
		reason = r->reason;
		text = cut_to(r->message ? r->message : "", message, sizeof(message));
	} else {
		reason = "PendingEvaluation";
		snprintf(message, sizeof(message), "waiting for admission");
	}
	rc = put(b, "{\"kind\":\"Workload\",\"namespace\":");
	if (rc == 0)
		rc = put_str(b, r->w.spec.namespace_name);
	if (rc == 0)
		rc = put(b, ",\"name\":");
	if (rc == 0)
		rc = put_str(b, r->w.name);
	if (rc == 0)
		rc = put(b, a ? ",\"admitted\":true,\"clusterQueue\":" :
				",\"admitted\":false,\"clusterQueue\":null");
	if (rc == 0 && a)
		rc = put_str(b, a->cluster_queue);
	if (rc == 0)
		rc = put(b, ",\"podSets\":[");
	for (size_t i = 0; rc == 0 && i < r->w.spec.n_podsets; i++) {
		const struct eng_podset *ps = &r->w.spec.podsets[i];
		const struct eng_podset_assignment *pa = NULL;
		for (size_t k = 0; a && k < a->n_podsets; k++)
			if (!strcmp(a->podsets[k].name, ps->name))
				pa = &a->podsets[k];
		rc = put(b, i ? ",{\"name\":" : "{\"name\":");
		if (rc == 0)
			rc = put_str(b, ps->name);
		if (rc == 0)
			rc = put(b, ",\"count\":");
		if (rc == 0)
			rc = put_int(b, (long long)(pa ? pa->count : ps->count));
		if (rc == 0)
			rc = put(b, ",\"flavors\":");
		if (rc == 0)
			rc = pa ? put_flavors(b, pa) : put(b, "{}");
		if (rc == 0 && pa && r->placed) {
			rc = put(b, ",\"placement\":");
			if (rc == 0)
				rc = put_placement(b, r->plan, ps->name);
		}
		if (rc == 0)
			rc = put(b, "}");
	}
	if (rc == 0)
		rc = put(b, r->preempted ? "],\"preempted\":true,\"reason\":" :
					   "],\"preempted\":false,\"reason\":");
	if (rc == 0)
		rc = put_str(b, reason);
	if (rc == 0)
		rc = put(b, ",\"message\":");
	if (rc == 0)
		rc = r->message && text == r->message ? put_held(b, text) : put_str(b, text);
	return rc ? rc : put(b, "}");
}

/* A real as the shortest text that reads back the same (jansson would print 17 digits); with
 * a ".0" when it has no fraction, as JSON readers then still see a real; null for an infinity
 * (a LocalQueue of weight 0), which JSON can't hold. Usual magnitudes are written with a
 * decimal point (10 is "10.0": the shortest %g, "1e+01", reads badly); others in %g form. */
static int put_real(struct buf *b, double v)
{
	char num[48];
	if (!isfinite(v))
		return put(b, "null");
	double mag = fabs(v);
	int fixed = mag == 0 || (mag >= 1e-4 && mag < 1e15);
	/* 17 significant digits always read back; below 1 in fixed form they may need 4 more
	 * decimals (down to 1e-4). */
	int found = 0;
	for (int digits = 1; digits <= (fixed ? 21 : 17) && !found; digits++) {
		snprintf(num, sizeof(num), fixed ? "%.*f" : "%.*g", digits, v);
		found = strtod(num, NULL) == v;
	}
	if (!found)
		snprintf(num, sizeof(num), "%.17g", v);
	if (!strpbrk(num, ".e"))
		strcat(num, ".0");
	return put(b, num);
}

/* ,"weightedShare":N of a ClusterQueue or cohort (Kueue's status.fairSharing.weightedShare). */
static int put_share(struct sim *s, struct buf *b, const char *name, int cohort)
{
	struct eng_share share;
	int rc = cohort ? engine_cohort_share(s->engine, name, &share) :
			  engine_cq_share(s->engine, name, &share);
	if (rc != 0)
		return s->failed = rc;
	rc = put(b, ",\"weightedShare\":");
	return rc ? rc : put_int(b, (long long)share.weighted_share);
}

static int put_cq(struct sim *s, struct buf *b, const struct cq_rec *c)
{
	const struct eng_cq_spec *spec = &c->c.spec;
	size_t pending = 0, admitted = 0;
	int rc = engine_cq_counts(s->engine, spec->name, &pending, &admitted);
	if (rc != 0)
		return s->failed = rc;
	rc = put(b, "{\"kind\":\"ClusterQueue\",\"name\":");
	if (rc == 0)
		rc = put_str(b, spec->name);
	if (rc == 0)
		rc = put(b, ",\"pendingWorkloads\":");
	if (rc == 0)
		rc = put_int(b, (long long)pending);
	if (rc == 0)
		rc = put(b, ",\"admittedWorkloads\":");
	if (rc == 0)
		rc = put_int(b, (long long)admitted);
	if (rc == 0)
		rc = put(b, ",\"flavorsUsage\":[");
	int first = 1;
	for (size_t g = 0; rc == 0 && g < spec->n_groups; g++) {
		const struct eng_resource_group *rg = &spec->groups[g];
		for (size_t f = 0; rc == 0 && f < rg->n_flavors; f++) {
			const struct eng_flavor_quotas *fq = &rg->flavors[f];
			rc = put(b, first ? "{\"name\":" : ",{\"name\":");
			first = 0;
			if (rc == 0)
				rc = put_str(b, fq->flavor);
			if (rc == 0)
				rc = put(b, ",\"resources\":[");
			for (size_t r = 0; rc == 0 && r < fq->n_resources; r++) {
				struct eng_cq_usage u = { 0, 0 };
				char total[64], borrowed[64];
				rc = engine_cq_usage(s->engine, spec->name, fq->flavor,
						     fq->resources[r].name, &u);
				if (rc != 0)
					return s->failed = rc;
				quota_format_amount(fq->resources[r].name, u.total, total,
						    sizeof(total));
				quota_format_amount(fq->resources[r].name, u.borrowed, borrowed,
						    sizeof(borrowed));
				rc = put(b, r ? ",{\"name\":" : "{\"name\":");
				if (rc == 0)
					rc = put_str(b, fq->resources[r].name);
				if (rc == 0)
					rc = put(b, ",\"total\":");
				if (rc == 0)
					rc = put_str(b, total);
				if (rc == 0)
					rc = put(b, ",\"borrowed\":");
				if (rc == 0)
					rc = put_str(b, borrowed);
				if (rc == 0)
					rc = put(b, "}");
			}
			if (rc == 0)
				rc = put(b, "]}");
		}
	}
	if (rc == 0)
		rc = put(b, "]");
	if (rc == 0 && s->config.fair_sharing.enabled)
		rc = put_share(s, b, spec->name, 0);
	return rc ? rc : put(b, "}");
}

static int cmp_name(const void *x, const void *y)
{
	return cmp_str(*(const char *const *)x, *(const char *const *)y);
}

static int cmp_lq(const void *x, const void *y)
{
	const struct eobj_local_queue *a = *(const struct eobj_local_queue *const *)x;
	const struct eobj_local_queue *b = *(const struct eobj_local_queue *const *)y;
	int c = cmp_str(a->namespace_name, b->namespace_name);
	return c ? c : cmp_str(a->name, b->name);
}

/* Output lines gather in b and are written OUT_CHUNK bytes at a time: a write per line was
 * a tenth of the output's cost. Only whole lines are written, also after a failure. */
#define OUT_CHUNK ((size_t)64 << 10)

static void flush_lines(struct sim *s, struct buf *b)
{
	size_t whole = b->len;
	while (whole > 0 && b->data[whole - 1] != '\n')
		whole--; /* a line cut short by a failure */
	if (whole)
		fwrite(b->data, 1, whole, s->out);
	b->len = 0;
}

/* Ends b's current output line. */
static int write_line(struct sim *s, struct buf *b)
{
	int rc = put(b, "\n");
	if (rc == 0 && b->len >= OUT_CHUNK)
		flush_lines(s, b);
	return rc;
}

/* With fair sharing: every cohort, given or only named (by a ClusterQueue or as a parent),
 * sorted by name. */
static int print_cohorts(struct sim *s, struct buf *b)
{
	size_t cap = 2 * s->n_cohorts + s->n_cqs, n = 0;
	const char **names = calloc(cap ? cap : 1, sizeof(*names));
	int rc = 0;
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_cohorts; i++) {
		names[n++] = s->cohorts[i].spec.name;
		if (s->cohorts[i].spec.parent)
			names[n++] = s->cohorts[i].spec.parent;
	}
	for (size_t i = 0; i < s->n_cqs; i++)
		if (s->cqs[i].c.spec.cohort)
			names[n++] = s->cqs[i].c.spec.cohort;
	qsort(names, n, sizeof(*names), cmp_name);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (i > 0 && !strcmp(names[i], names[i - 1]))
			continue;
		rc = put(b, "{\"kind\":\"Cohort\",\"name\":");
		if (rc == 0)
			rc = put_str(b, names[i]);
		if (rc == 0)
			rc = put_share(s, b, names[i], 1);
		if (rc == 0)
			rc = put(b, "}");
		if (rc == 0)
			rc = write_line(s, b);
	}
	free(names);
	return rc;
}

/* One LocalQueue's admission-fair-sharing state: consumed usage as quantities (rounded to
 * the nearest milli-unit) and the usage that orders its workloads. */
static int put_lq(struct sim *s, struct buf *b, const struct eobj_local_queue *q)
{
	struct eng_afs_status st;
	int rc = engine_afs_status(s->engine, q->namespace_name, q->name, &st);
	if (rc != 0)
		return s->failed = rc;
	rc = put(b, "{\"kind\":\"LocalQueue\",\"namespace\":");
	if (rc == 0)
		rc = put_str(b, q->namespace_name);
	if (rc == 0)
		rc = put(b, ",\"name\":");
	if (rc == 0)
		rc = put_str(b, q->name);
	if (rc == 0)
		rc = put(b, ",\"consumedResources\":{");
	for (size_t i = 0; rc == 0 && i < st.n; i++) {
		char qty[QUANTITY_FORMAT_SIZE];
		double milli = st.consumed[i].consumed * 1000.0;
		int64_t m = !(milli > 0)    ? 0 :
			    milli >= 9.2e18 ? QUANTITY_MILLI_MAX :
					      llround(milli);
		if ((rc = quantity_format_milli(m, QUANTITY_DECIMAL_SI, qty, sizeof(qty))) < 0)
			return s->failed = rc;
		rc = put_key(b, i == 0, st.consumed[i].resource);
		if (rc == 0)
			rc = put_str(b, qty);
	}
	if (rc == 0)
		rc = put(b, "},\"usage\":");
	if (rc == 0)
		rc = put_real(b, st.usage);
	return rc ? rc : put(b, "}");
}

/* With admission fair sharing: every LocalQueue, sorted by namespace/name. */
static int print_local_queues(struct sim *s, struct buf *b)
{
	const struct eobj_local_queue **lqs = calloc(s->n_lqs ? s->n_lqs : 1, sizeof(*lqs));
	int rc = 0;
	if (!lqs)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_lqs; i++)
		lqs[i] = &s->lqs[i];
	qsort(lqs, s->n_lqs, sizeof(*lqs), cmp_lq);
	for (size_t i = 0; rc == 0 && i < s->n_lqs; i++) {
		rc = put_lq(s, b, lqs[i]);
		if (rc == 0)
			rc = write_line(s, b);
	}
	free(lqs);
	return rc;
}

/* One line per record, gathered in b (see write_line): a run makes no allocation per line. */
static int print_result(struct sim *s)
{
	struct wl_order *wls = calloc(s->n_wls ? s->n_wls : 1, sizeof(*wls));
	const struct cq_rec **cqs = calloc(s->n_cqs ? s->n_cqs : 1, sizeof(*cqs));
	struct buf b;
	int rc = 0;
	buf_init(&b, SIZE_MAX / 2);
	if (!wls || !cqs) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->n_wls; i++) {
		/* Both are set for every decoded Workload; "" sorts as cmp_str sorted NULL. */
		const char *ns = s->wls[i].w.spec.namespace_name ? s->wls[i].w.spec.namespace_name :
								   "";
		const char *name = s->wls[i].w.name ? s->wls[i].w.name : "";
		wls[i] = (struct wl_order){ ns,
					    name,
					    head8(ns),
					    head8(name),
					    &s->wls[i],
					    s->wls[i].message,
					    s->wls[i].w.spec.podsets };
	}
	for (size_t i = 0; i < s->n_cqs; i++)
		cqs[i] = &s->cqs[i];
	qsort(wls, s->n_wls, sizeof(*wls), cmp_wl);
	qsort(cqs, s->n_cqs, sizeof(*cqs), cmp_cq);
	for (size_t i = 0; rc == 0 && i < s->n_wls + s->n_cqs; i++) {
		/* Sorted by name, the records are visited in no order of their memory: fetch what
		 * the line a few ahead reads while this one is written, rather than wait on each
		 * cache miss in turn. */
		if (i + 8 < s->n_wls) {
			__builtin_prefetch(wls[i + 8].r);
			__builtin_prefetch(wls[i + 8].message);
			__builtin_prefetch(wls[i + 8].podsets);
		}
		rc = i < s->n_wls ? put_workload(s, &b, wls[i].r) :
				    put_cq(s, &b, cqs[i - s->n_wls]);
		if (rc == 0)
			rc = write_line(s, &b);
	}
	if (rc == 0 && s->config.fair_sharing.enabled)
		rc = print_cohorts(s, &b);
	if (rc == 0 && s->config.admission_fair_sharing.enabled)
		rc = print_local_queues(s, &b);
	flush_lines(s, &b);
	if (rc != 0 && s->failed)
		rc = s->failed;
	else if (rc == -E2BIG)
		rc = -ENOMEM;
out:
	buf_release(&b);
	free(wls);
	free(cqs);
	return rc;
}

/* ----------------------------------------------------------------------------- sim_run */

void sim_release(struct sim *s)
{
	for (size_t i = 0; s->problems && i < s->invalid; i++)
		free(s->problems[i].text);
	free(s->problems);
	for (size_t i = 0; i < s->n_ns; i++)
		eobj_namespace_release(&s->ns[i]);
	for (size_t i = 0; i < s->n_flavors; i++)
		eobj_flavor_release(&s->flavors[i]);
	for (size_t i = 0; i < s->n_cohorts; i++)
		eobj_cohort_release(&s->cohorts[i]);
	for (size_t i = 0; i < s->n_cqs; i++)
		eobj_cq_release(&s->cqs[i].c);
	for (size_t i = 0; i < s->n_lqs; i++)
		eobj_local_queue_release(&s->lqs[i]);
	for (size_t i = 0; i < s->n_wls; i++) {
		/* A Workload's memory is s->wl_arena's (released below); a Job's is its own. */
		eobj_workload_release(&s->wls[i].w);
		free(s->wls[i].reason_copy);
		free(s->wls[i].evicted_note);
		if (s->wls[i].plan)
			pobj_plan_release(s->wls[i].plan);
		free(s->wls[i].plan);
		json_decref(s->wls[i].obj);
	}
	for (size_t i = 0; i < s->n_nodes; i++)
		pobj_node_release(&s->nodes[i]);
	for (size_t i = 0; i < s->n_pods; i++)
		pobj_pod_release(&s->pods[i]);
	free(s->nodes);
	free(s->node_docs);
	free(s->pods);
	free(s->pod_docs);
	free(s->queued_pods);
	free(s->pod_bound);
	if (s->placement)
		placement_free(s->placement);
	pobj_catalog_release(&s->catalog);
	free(s->ns);
	free(s->flavors);
	free(s->cohorts);
	free(s->cohort_docs);
	free(s->cqs);
	free(s->lqs);
	free(s->lq_docs);
	free(s->wls);
	eobj_arena_release(&s->wl_arena);
	free(s->wl_arena.memo);
	free(s->victims);
	while (s->docs) {
		struct doc_chunk *next = s->docs->next;
		free(s->docs);
		s->docs = next;
	}
	engine_free(s->engine);
	config_release(&s->config);
	strmap_release(&s->seen, NULL);
	strmap_release(&s->namespaces, NULL);
	strmap_release(&s->wl_index, NULL);
	strmap_release(&s->messages, free); /* the records' messages */
	json_decref(s->wpcs);
	json_decref(s->pcs);
	json_decref(s->loaded);
}

/*
 * The queued Pods' workloads, as the manager makes them (integration_pod): the pods of a group
 * in input order, one Workload each group. A group short of pods is shown waiting whole, as
 * the manager keeps it (it holds no quota); pods that disagree are an input problem.
 */
struct pod_group_docs {
	const struct doc *first;
	json_t **objs;
	size_t n, cap;
	int64_t total;
};

static void form_pod_groups(struct sim *s)
{
	struct strmap index; /* group key -> its pod_group_docs */
	struct pod_group_docs *groups =
		calloc(s->n_queued_pods ? s->n_queued_pods : 1, sizeof(*groups));
	size_t n_groups = 0;
	char err[512], wl[300], key[600];
	strmap_init(&index);
	if (!groups) {
		s->failed = -ENOMEM;
		return;
	}
	/* One pass: each pod into its group, groups in the order of their first pod. */
	for (size_t i = 0; !s->failed && i < s->n_queued_pods; i++) {
		const struct doc *d = s->queued_pods[i];
		int64_t total;
		if (pod_group_of(d->obj, wl, sizeof(wl), &total, err, sizeof(err)) != 0) {
			report_decode(s, d, -EINVAL, err);
			continue;
		}
		const char *ns = obj_namespace(d->obj);
		snprintf(key, sizeof(key), "%s/%s", ns && *ns ? ns : SIM_DEFAULT_NAMESPACE, wl);
		struct pod_group_docs *g = strmap_get(&index, key);
		if (!g) {
			g = &groups[n_groups++];
			g->first = d;
			g->total = total;
			if (strmap_put(&index, key, g, NULL) != 0)
				s->failed = -ENOMEM;
		}
		if (GROW(g->objs, g->cap, g->n + 1) != 0) {
			s->failed = -ENOMEM;
			break;
		}
		g->objs[g->n++] = d->obj;
	}
	for (size_t i = 0; !s->failed && i < n_groups; i++) {
		struct pod_group_docs *g = &groups[i];
		json_t *group = pod_group_new(g->objs, g->n, err, sizeof(err));
		if (!group) {
			report(s, g->first, "pod group %s: %s", obj_name(g->first->obj), err);
			continue;
		}
		if (reserve_record(s) != 0) {
			json_decref(group);
			break;
		}
		struct wl_rec *r = &s->wls[s->n_wls];
		memset(r, 0, sizeof(*r));
		r->doc = g->first;
		int rc = eobj_workload_for(&integration_pod, group, SIM_DEFAULT_NAMESPACE, s->wpcs,
					   s->pcs, &r->w, err, sizeof(err));
		json_decref(group);
		if (rc != 0) {
			eobj_workload_release(&r->w);
			report_decode(s, g->first, rc, err);
			continue;
		}
		if ((int64_t)g->n < g->total) {
			r->fixed_reason = "WaitingForPods";
			r->fixed_message =
				"the pod group is admitted only whole, once all of its pods "
				"exist; until then it holds no quota";
		}
		s->n_wls++;
	}
	for (size_t i = 0; i < n_groups; i++)
		free(groups[i].objs);
	free(groups);
	strmap_release(&index, NULL);
}

/* After the last input: what needed every document first (see take). */
static int finish_load(struct sim *s)
{
	s->stage = ST_POD;
	for (size_t i = 0; !s->failed && i < s->n_pod_docs; i++)
		decode_pod(s, s->pod_docs[i]);
	form_pod_groups(s);
	s->stage = ST_WORKLOAD;
	finish_workloads(s);
	return s->failed;
}

int sim_init(struct sim *s, FILE *out, FILE *errout)
{
	memset(s, 0, sizeof(*s));
	s->out = out;
	s->errout = errout;
	strmap_init(&s->seen);
	strmap_init(&s->namespaces);
	strmap_init_borrowed(&s->wl_index); /* keys in the records' arenas */
	strmap_init_borrowed(&s->messages); /* keys in the shared_text values */
	pobj_catalog_init(&s->catalog);
	s->loaded = json_array();
	s->wpcs = json_object();
	s->pcs = json_object();
	/* Templates the reader shares (read_input) are decoded once into the records' arena. */
	s->wl_arena.memo = calloc(1, sizeof(*s->wl_arena.memo));
	return s->loaded && s->wpcs && s->pcs && s->wl_arena.memo ? 0 : -ENOMEM;
}

int sim_load_texts(struct sim *s, const struct sim_input *inputs, size_t n)
{
	int rc;
	for (size_t i = 0; i < n; i++)
		if ((rc = read_input(s, &inputs[i], i, NULL)) != 0)
			return rc;
	if ((rc = finish_load(s)) != 0 || s->invalid)
		return rc;
	if (s->n_nodes > 0 && s->n_detached > 0) {
		/* The placer reads Workload objects: read the inputs again for the ones dropped. */
		size_t cursor = 0;
		s->n_docs = 0;
		for (size_t i = 0; i < n; i++)
			if ((rc = read_input(s, &inputs[i], i, &cursor)) != 0)
				return rc;
	}
	return 0;
}

int sim_load_objects(struct sim *s, const struct sim_objects *o)
{
	/* In the order a file would list them: what Workloads need comes first. */
	const struct {
		json_t *objs;
		const char *slot;
		enum sim_kind kind;
		const char *kind_name;
	} slots[] = {
		{ o->namespaces, "namespaces", K_NAMESPACE, "Namespace" },
		{ o->priority_classes, "priorityClasses", K_PRIORITY_CLASS, "PriorityClass" },
		{ o->workload_priority_classes, "workloadPriorityClasses", K_WPC,
		  "WorkloadPriorityClass" },
		{ o->flavors, "resourceFlavors", K_FLAVOR, "ResourceFlavor" },
		{ o->topologies, "topologies", K_TOPOLOGY, "Topology" },
		{ o->cohorts, "cohorts", K_COHORT, "Cohort" },
		{ o->cluster_queues, "clusterQueues", K_CQ, "ClusterQueue" },
		{ o->local_queues, "localQueues", K_LQ, "LocalQueue" },
		{ o->nodes, "nodes", K_NODE, "Node" },
		{ o->pods, "pods", K_POD, "Pod" },
		{ o->workloads, "workloads", K_WORKLOAD, "Workload" },
	};
	s->from_objects = 1;
	/* The caller's settings, borrowed: config_release of s->config frees only its own
	 * weights block, which stays NULL here. */
	if (o->fair_sharing)
		s->config.fair_sharing = *o->fair_sharing;
	if (o->admission_fair_sharing)
		s->config.admission_fair_sharing = *o->admission_fair_sharing;
	for (size_t k = 0; k < sizeof(slots) / sizeof(slots[0]) && !s->failed; k++) {
		json_t *objs = slots[k].objs, *obj;
		void *iter = json_is_object(objs) ? json_object_iter(objs) : NULL;
		size_t i = 0, n = json_is_array(objs) ? json_array_size(objs) : 0;
		/* An array by position, or a store (key -> object) in its own order. */
		for (int line = 1; !s->failed; line++) {
			if (iter) {
				obj = json_object_iter_value(iter);
				iter = json_object_iter_next(objs, iter);
			} else if (i < n) {
				obj = json_array_get(objs, i++);
			} else {
				break;
			}
			struct doc *d = new_doc(s, slots[k].slot, k, line, obj);
			if (!d)
				break;
			d->kind = slots[k].kind;
			d->kind_name = slots[k].kind_name;
			if (!json_is_object(obj)) {
				s->stage = ST_CLASSIFY;
				report(s, d, "%s: must be an object, not %s", d->kind_name,
				       eobj_type_name(obj));
				continue;
			}
			dispatch(s, d);
		}
	}
	return s->failed ? s->failed : finish_load(s);
}

int sim_build_engine(struct sim *s)
{
	s->stage = ST_ENGINE;
	return build_engine(s);
}

struct wl_rec *sim_find_workload(struct sim *s, const char *key)
{
	return strmap_get(&s->wl_index, key);
}

void sim_end_workload(struct sim *s, struct wl_rec *r)
{
	engine_remove_workload(s->engine, r->w.spec.key);
	if (s->placement) {
		release_nodes(s, r);
		engine_capacity_changed(s->engine);
	}
}

/* sim_run; process_ends: the caller's process exits right after (sim_main). */
static int run(const struct sim_input *inputs, size_t n, FILE *out, FILE *errout, int process_ends)
{
	struct sim s;
	int rc = sim_init(&s, out, errout);
	if (rc == 0)
		rc = sim_load_texts(&s, inputs, n);
	if (rc == 0 && !s.invalid)
		rc = sim_build_engine(&s);
	if (rc == 0 && !s.invalid)
		rc = sim_settle(&s);
	if (rc == 0 && !s.invalid)
		rc = print_result(&s);
	if (rc == 0 && s.failed)
		rc = s.failed;
	if (rc == 0)
		sim_print_problems(&s);
	/* When the process ends with the run, the kernel takes its memory back at once: freeing
	 * 50,000 Workloads' records and the engine one by one was a fifteenth of a large run.
	 * Sanitizer builds still free everything, so leak checks see every allocation. */
	if (!process_ends || MUSTER_ASAN)
		sim_release(&s);
	if (rc == -ENOMEM)
		fprintf(errout, "muster simulate: out of memory\n");
	else if (rc != 0 && rc != -ELOOP)
		fprintf(errout, "muster simulate: %s\n", strerror(-rc));
	if (rc != 0)
		return SIM_FAILED;
	return s.invalid ? SIM_INVALID : SIM_OK;
}

int sim_run(const struct sim_input *inputs, size_t n, FILE *out, FILE *errout)
{
	return run(inputs, n, out, errout, 0);
}

/* ---------------------------------------------------------------------------- sim_main */

static void usage(FILE *f)
{
	fprintf(f, "usage: muster simulate FILE...\n"
		   "\n"
		   "Runs admission on the Kueue objects, Namespaces and workloads in FILEs (YAML "
		   "or JSON,\n"
		   "any number of documents each; - reads stdin) with no cluster, and prints one "
		   "JSON line\n"
		   "per Workload, then per ClusterQueue. Workloads: Workload, Job (batch/v1), "
		   "RayJob and\n"
		   "RayCluster (ray.io/v1), and Pods (v1) naming a LocalQueue and not bound to a "
		   "node, alone\n"
		   "or in pod groups (kueue.x-k8s.io/pod-group-name), each made into its Workload "
		   "as the\n"
		   "manager would. Exit status: 0 done, 2 invalid input (FILE:LINE: on stderr), 1 "
		   "failure.\n"
		   "\n"
		   "With Nodes (v1) among the inputs, admitted gangs are also placed on nodes: "
		   "each admitted\n"
		   "podSet lists \"placement\": [{\"node\", \"count\"}, ...], and a gang that fits "
		   "the\n"
		   "quota but no node layout stays pending with the reason. Pods (v1) bound to a "
		   "node\n"
		   "(spec.nodeName) take their requests from it; Topology objects and "
		   "ResourceFlavors'\n"
		   "spec.topologyName give podSets' topology requests their levels.\n"
		   "\n"
		   "A Configuration (config.kueue.x-k8s.io/v1beta2, at most one) among the inputs "
		   "turns on\n"
		   "fair sharing (fairSharing: ClusterQueue lines gain \"weightedShare\", and a "
		   "line per\n"
		   "Cohort follows them) and admission fair sharing (admissionFairSharing: a line "
		   "per\n"
		   "LocalQueue with its consumed usage follows). Usage decays up to the latest "
		   "time the\n"
		   "inputs state.\n");
}

/* Stdin or a pipe, whole: the input is trusted, so no cap but memory. */
static int read_all(FILE *f, char **data, size_t *len)
{
	size_t cap = 0;
	*data = NULL;
	*len = 0;
	for (;;) {
		if (*len == cap) {
			if (cap > SIZE_MAX / 4)
				return -EFBIG;
			if (GROW(*data, cap, *len + 65536) != 0)
				return -ENOMEM;
		}
		size_t got = fread(*data + *len, 1, cap - *len, f);
		*len += got;
		if (got == 0)
			return ferror(f) ? -EIO : 0;
	}
}

/* A regular file is mapped, not copied: cluster exports run to hundreds of MB, and the
 * reader goes through it once (twice with Nodes). *map is NULL for an empty file. */
static int map_file(int fd, void **map, size_t *len)
{
	struct stat st;
	*map = NULL;
	*len = 0;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOTSUP;
	if (st.st_size == 0)
		return 0;
	if ((uintmax_t)st.st_size > SIZE_MAX)
		return -EFBIG;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	(void)madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL); /* a hint: failure changes nothing */
	*map = p;
	*len = (size_t)st.st_size;
	return 0;
}

int sim_main(int argc, char **argv)
{
	int help = 0;
	uint64_t seen;
	const struct flag flags[] = { { "help", 'h', FLAG_BOOL, &help, .help = NULL } };
	/* POSIX: the flags end at the first FILE, so any name after it is a file's. */
	const struct flag_parser parser = {
		.flags = flags, .nflags = 1, .prefix = "muster simulate: ", .err = stderr
	};
	int first = flags_parse(&parser, argc, argv, &seen);
	if (first >= 0 && help) {
		usage(stdout);
		return SIM_OK;
	}
	if (first < 0 || first >= argc) {
		usage(stderr);
		return SIM_INVALID;
	}
	size_t n = (size_t)(argc - first);
	struct sim_input *inputs = calloc(n, sizeof(*inputs));
	char **bufs = calloc(n, sizeof(*bufs)); /* read whole (stdin, pipes) */
	void **maps = calloc(n, sizeof(*maps)); /* mapped (regular files) */
	int status = SIM_OK;
	if (!inputs || !bufs || !maps) {
		fprintf(stderr, "muster simulate: out of memory\n");
		status = SIM_FAILED;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const char *path = argv[first + (int)i];
		int is_stdin = !strcmp(path, "-");
		FILE *f = is_stdin ? stdin : fopen(path, "rb");
		if (!f) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			status = SIM_INVALID;
			goto out;
		}
		int rc = is_stdin ? -ENOTSUP : map_file(fileno(f), &maps[i], &inputs[i].len);
		if (rc == -ENOTSUP)
			rc = read_all(f, &bufs[i], &inputs[i].len);
		if (!is_stdin)
			fclose(f); /* a mapping outlives its descriptor */
		if (rc != 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(-rc));
			status = rc == -ENOMEM ? SIM_FAILED : SIM_INVALID;
			goto out;
		}
		inputs[i].name = is_stdin ? "<stdin>" : path;
		inputs[i].data = maps[i] ? maps[i] : bufs[i] ? bufs[i] : "";
		inputs[i].mapped = maps[i] != NULL;
	}
	/* A run fills its heap once and keeps it: in huge pages, faulted 2 MiB at a time (see
	 * util/heap_hint.h). Six times the input covers a large export's records and engine
	 * state; a run that needs more grows the heap as usual. Without it, nothing changes but
	 * the page faults. */
	size_t input_bytes = 0;
	for (size_t i = 0; i < n; i++)
		input_bytes += inputs[i].len;
	(void)heap_hint_huge_pages(input_bytes > SIZE_MAX / 6 ? SIZE_MAX : input_bytes * 6);
	/* The CLI runs once and single-threaded, the case the JSON arena is for; without it
	 * (no address space for it) jansson just keeps malloc. */
	(void)json_arena_install();
	status = run(inputs, n, stdout, stderr, 1);
	json_arena_uninstall();
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "muster simulate: cannot write the output\n");
		status = SIM_FAILED;
	}
out:
	for (size_t i = 0; bufs && i < n; i++)
		free(bufs[i]);
	for (size_t i = 0; maps && i < n; i++)
		if (maps[i])
			munmap(maps[i], inputs[i].len);
	free(bufs);
	free(maps);
	free(inputs);
	return status;
}
