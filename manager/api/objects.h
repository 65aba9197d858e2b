/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes and Kueue objects as muster reads and writes them: small accessors over jansson
 * values, conditions, pod resource requests and containers, priorities, lists of names
 * (gates, finalizers) and the node constraints of a podSet; selectors are evaluated in
 * core/labels.h. The engine's objects (ClusterQueues, ResourceFlavors, Workloads and their
 * admissions) are decoded in engine_objects.h.
 *
 * Borrowed vs owned follows jansson: functions returning `json_t *` from a getter are borrowed;
 * functions named *_new or documented "new reference" return something the caller releases.
 *
 * api/'s files call each other one way: config.c (--config) and placement_objects.c (nodes,
 * pods, topologies) on top; the kinds' own files (integration_*.c) above the seam they plug
 * into (integrations.c), which builds on the engine's decoders (engine_objects.c), which build
 * on these accessors (objects.c).
 * Layers, top to bottom (tests/unit/test_layers.sh checks that no file calls one above it):
 *   config.c placement_objects.c integration_job.c integration_pod.c integration_ray.c
 *   integrations.c engine_objects.c objects.c
 */
#ifndef MUSTER_OBJECTS_H
#define MUSTER_OBJECTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/quota.h"
#include "util/json_slim.h"

#define KUEUE_GROUP "kueue.x-k8s.io"
#define KUEUE_API_VERSION "kueue.x-k8s.io/v1beta2"
#define LABEL_QUEUE_NAME "kueue.x-k8s.io/queue-name"
#define LABEL_PRIORITY_CLASS "kueue.x-k8s.io/priority-class"
#define LABEL_JOB_UID "kueue.x-k8s.io/job-uid"
#define LABEL_PODSET "kueue.x-k8s.io/podset"
/* On the pod templates muster releases: the Workload the pods belong to. */
#define ANNOTATION_WORKLOAD "kueue.x-k8s.io/workload"
#define FINALIZER_RESOURCE_IN_USE "kueue.x-k8s.io/resource-in-use"

/* Walks "a.b.c" through nested objects; borrowed, NULL if any step is missing. */
json_t *obj_path(json_t *obj, const char *dotted);
/* The string at a dotted path, or NULL. */
const char *obj_str(json_t *obj, const char *dotted);
/* Several fields of obj in one walk over its keys: out[i] is the value of names[i] (a
 * NULL-terminated list), NULL when absent or JSON null, as Kubernetes reads a null. Returns
 * obj's first key (in its order) that is not among names, NULL if none; obj not an object:
 * all NULL. Decoders read many fields that are mostly absent, and a lookup hashes its key:
 * one pass over an object's few keys is cheaper than a lookup per field. */
const char *obj_pick(json_t *obj, const char *const *names, json_t **out);

const char *obj_name(json_t *obj);
const char *obj_namespace(json_t *obj);
const char *obj_uid(json_t *obj);
const char *obj_label(json_t *obj, const char *key);
const char *obj_annotation(json_t *obj, const char *key);

/* Lists of names, as schedulingGates ({"name": ...} entries: field "name") and finalizers
 * (plain strings: field NULL) are. obj_list_has: whether list (an array; anything else is
 * empty) has an entry for value: the string value, or an object whose field is it.
 * obj_list_without: a new array (new reference, entries shared) of list's other entries;
 * NULL when out of memory. */
int obj_list_has(json_t *list, const char *field, const char *value);
json_t *obj_list_without(json_t *list, const char *field, const char *value);
/*
 * The one walk over obj's metadata.ownerReferences; the entry asked for, borrowed, or NULL.
 * controller 1: obj's controller reference (controller: true; the apiserver allows one), which
 * is how Kubernetes controllers and Kueue find an object's owner (metav1.GetControllerOf), and
 * NULL when it is not of api_version, kind and uid. controller 0: the first entry of those,
 * controller or not, which is how the garbage collector reads them (each Pod of a pod group
 * owns the group's Workload, none as its controller). api_version, kind and uid NULL: any.
 * integration_owner_ref (api/integrations.h) is Kueue's rule for an integrated owner.
 */
json_t *obj_owner_ref(json_t *obj, int controller, const char *api_version, const char *kind,
		      const char *uid);

/* The JSON merge patch (RFC 7386) that turns object from into object to (new reference; {} when
 * equal, NULL when out of memory): changed keys, nested objects as their own difference, arrays
 * whole, removed keys as null. */
json_t *obj_merge_diff(json_t *from, json_t *to);

/* The condition of the given type in status.conditions, borrowed, or NULL. */
json_t *condition_get(json_t *obj, const char *type);
/* Whether that condition exists with status "True". */
int condition_true(json_t *obj, const char *type);

/*
 * Returns a new conditions array (new reference) equal to obj's status.conditions with the
 * condition of `type` set as given. lastTransitionTime changes only when status changes, as
 * metav1.Condition requires; generation goes to observedGeneration. *changed says whether
 * anything differs from before (so callers skip writes that change nothing).
 */
json_t *conditions_with(json_t *obj, const char *type, const char *status, const char *reason,
			const char *message, int *changed);

/* The current time as RFC 3339 (seconds), e.g. "2026-11-21T19:35:18Z". */
void time_now_rfc3339(char *buf, size_t size);
/* The current time, and an RFC 3339 time as Go's time.RFC3339 parses a metav1.Time (offsets
 * and fractions allowed; objects.c has the grammar), in ns or ms (floored) since the epoch.
 * One parser: 0, or -EINVAL for anything else, also for times outside int64 ns (1677-2262). */
int64_t time_now_ms(void);
/* Replaces the wall clock both read (NULL: the real one again). For tests, which move time
 * themselves; everything that stamps or compares times goes through time_now_ms. */
void time_set_clock(int64_t (*now_ms)(void));
int time_parse_rfc3339(const char *s, int64_t *ms);
int time_parse_rfc3339_ns(const char *s, int64_t *ns);
void time_format_rfc3339(int64_t ms, char *buf, size_t size);

/* A quantity given as a JSON string or number, in milli-units. 0 or -EINVAL/-ERANGE. */
int quantity_from_json(json_t *v, int64_t *milli);
/* Formats milli-units of a resource canonically: byte-valued resources (memory, storage,
 * hugepages) in binary SI where exact ("1536Gi"), others in decimal SI (16000 -> "16"). */
void quantity_to_string(const char *resource, int64_t milli, char *buf, size_t size);

/* Resource requests of one pod: per container, requests (or limits where a request is
 * missing), summed, then the max with each init container, plus overhead — the effective
 * request Kubernetes schedules by (eobj_pod_requests, api/engine_objects.h). */
struct pod_requests {
	size_t n;
	/* Borrowed from the template: valid while it lives. Each name is one of its resource
	 * lists' keys (a copy per name per Workload was a sizeable part of decoding). */
	const char *names[QUOTA_MAX_RESOURCES];
	int64_t milli[QUOTA_MAX_RESOURCES];
};
/* Empties r (it owns nothing: kept for callers that pair it with the decode). */
void pod_requests_release(struct pod_requests *r);
/* What muster reads of a container list (containers or initContainers), of a pod template and
 * of a Workload, as slim rules (util/json_slim.h): objects.c states each once, with why. */
extern const struct json_slim_rule obj_containers_rule, obj_pod_template_rule, obj_workload_rule;
/* Cuts each container of list, in place, to what muster reads of one (obj_containers_rule:
 * name, resources, restartPolicy). Returns how many fields went. */
size_t obj_slim_containers(json_t *list);
/* Cuts a pod template, in place, to what muster reads of it (obj_pod_template_rule: no labels,
 * only Kueue's annotations, no pod-level field nothing reads, its containers slimmed; metadata
 * left empty goes). Returns how many fields went. */
size_t obj_slim_pod_template(json_t *tmpl);

/* A Workload's priority as Kueue derives it for an owner: the WorkloadPriorityClass named by
 * the owner's kueue.x-k8s.io/priority-class label; else the first PodSet template's
 * priorityClassName (a scheduling.k8s.io PriorityClass); else the first template's
 * spec.priority; else 0. */
struct job_priority {
	int32_t value;
	const char *class_group; /* "kueue.x-k8s.io" or "scheduling.k8s.io"; NULL: no class */
	const char *class_kind; /* "WorkloadPriorityClass" or "PriorityClass" */
	const char *class_name; /* borrowed from obj or podsets */
};

/* podsets is the Workload's spec.podSets; wpcs and pcs map class names to objects (e.g.
 * informer stores; either may be NULL). *from is the PodSet whose template named the class.
 * Returns 0, or -ENOENT with err naming the class when the one named does not exist. */
int workload_priority_resolve(json_t *obj, json_t *podsets, json_t *wpcs, json_t *pcs,
			      struct job_priority *out, size_t *from, char *err, size_t errlen);
/* Writes spec.priority and spec.priorityClassRef of a Workload (new or not yet admitted). */
int workload_apply_priority(json_t *wl, const struct job_priority *p);

/* A podSet of a Workload as the engine sees it: ps holds its per-pod requests and node
 * constraints (matched against flavors by quota_flavor_match). The view owns its arrays; its
 * name, resource names and the constraints' strings are borrowed from podset, which must outlive
 * it. */
struct podset_view {
	const char *name; /* the podSet's, or "main" */
	struct pod_requests requests;
	struct quota_podset ps;
	struct quota_kv *selector;
	struct quota_affinity_term *terms;
	struct quota_match_expr *exprs;
	size_t n_exprs; /* allocated expressions, each owning its values array */
	struct quota_taint *tolerations;
};

/* The pod spec fields the decoders read, as obj_pick takes them (NULL-terminated), so that a
 * decoder that checks a template and then views it picks its fields once. */
enum {
	POD_SPEC_CONTAINERS,
	POD_SPEC_INIT,
	POD_SPEC_OVERHEAD,
	POD_SPEC_SELECTOR,
	POD_SPEC_TOLERATIONS,
	POD_SPEC_AFFINITY,
	POD_SPEC_PRIORITY,
	POD_SPEC_CLASS,
	POD_SPEC_N
};
extern const char *const pod_spec_fields[POD_SPEC_N + 1];
/* A view from the podSet's name and count (either may be NULL), its pod spec's fields f,
 * picked with pod_spec_fields, and the pod's requests (copied; their names stay borrowed). The
 * decoders call it (podset_view_decode and the Workload decoder, api/engine_objects.h). */
int podset_view_from_fields(json_t *name, json_t *count, json_t *const *f,
			    const struct pod_requests *requests, struct podset_view *v, char *err,
			    size_t errlen);
void podset_view_release(struct podset_view *v);
/* An empty view, owning nothing (what release leaves). */
void podset_view_clear(struct podset_view *v);

#endif
