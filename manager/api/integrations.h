/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The integration seam: what muster needs to know about one kind of workload (batch/v1 Job,
 * RayJob, RayCluster, plain Pods) to admit it whole. Kueue's jobframework answers the same
 * questions; a kind is one `struct integration` of pure functions over the kind's own JSON,
 * so the manager (ctrl/integrations.c) and the simulator drive every kind the same way:
 *
 *   queue and priority   the kueue.x-k8s.io/queue-name and priority-class labels (every kind),
 *                        then the first PodSet template's priorityClassName or spec.priority;
 *   PodSets              podsets(): one per role, with counts, templates and minCount;
 *   hold and release     held()/set_held() (spec.suspend for Jobs and Ray); the manager edits
 *                        each PodSet's template in a copy (template_at) with the flavors' node
 *                        labels, tolerations and placement hints, sets admitted counts
 *                        (set_count), and sends the difference as one merge patch;
 *   restore              the same on a copy, with the Workload's original templates and counts;
 *   status               finished(), pods_ready(), active_pods(), started_at().
 *
 * Nothing here does I/O; objects are borrowed unless a function says "new reference".
 *
 * Adding an integrated kind (JobSet, say) takes exactly this:
 *   - api/integration_<kind>.c, its `struct integration` of pure functions (and the file's
 *     line among the sources in CMakeLists.txt);
 *   - its line in INTEGRATED_OWNERS below. From that line come integration_all() and
 *     integration_for(); the manager's kind K_<NAME> and its row in the kind table
 *     (ctrl/kinds.c: an informer on the queue label, optional for a CRD's group, a compact
 *     store, API paths, Events, the owner lookups and reconciles); its framework name in
 *     integrations.frameworks (api/config.c, on by default); its webhooks and hold policies
 *     (webhooks/, ctrl/hold.c); and the simulator's reading of it;
 *   - its RBAC in config/rbac/role.yaml: list, watch and patch on its resource, patch on its
 *     status when before_restore writes there, and its hold policy's name muster-hold-<plural>
 *     when it holds by spec.suspend (test_kinds fails until they are there);
 *   - its test fixtures: its cases in tests/unit/test_integrations.c, and in test_ctrl.c to
 *     drive it through the manager.
 */
#ifndef MUSTER_INTEGRATIONS_H
#define MUSTER_INTEGRATIONS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* How a finished workload ended. */
struct integration_result {
	const char *reason; /* "Succeeded" or "Failed" */
	const char *message;
};

struct integration {
	const char *framework; /* Kueue's integrations.frameworks name: "batch/job" */
	const char *api_version; /* "batch/v1" */
	const char *kind; /* "Job" */
	const char *group; /* "batch": with kind, part of the Workload name's hash */
	const char *plural; /* "jobs" */
	/* The Workload's spec.podSets for obj (new reference): name, count, a copy of the pod
	 * template, minCount and topologyRequest where the kind has them. NULL with err naming
	 * the field of obj that is wrong. */
	json_t *(*podsets)(json_t *obj, char *err, size_t errlen);
	/* Where PodSet i's pod template is in obj, for messages: "spec.template". */
	void (*template_path)(json_t *obj, size_t i, char *buf, size_t size);
	/* The pod template of PodSet i inside obj (borrowed; editing it edits obj), or NULL when
	 * the kind keeps none it can change (then the pods get no flavor labels or hints). */
	json_t *(*template_at)(json_t *obj, size_t i);
	/* Sets the pod count of PodSet i in obj (partial admission; restore on eviction). 0, or
	 * -ENOTSUP when the kind can't change it, -ENOMEM. */
	int (*set_count)(json_t *obj, size_t i, int64_t count);
	int (*held)(json_t *obj);
	int (*set_held)(json_t *obj, int held); /* 0 or -ENOMEM */
	/* Held by spec.suspend: true, which an admission policy can set at create
	 * (webhooks/policies.h); 0 for a kind held some other way (Pods: a scheduling gate). */
	int holds_by_suspend;
	/* Has batch/v1 Job's spec.scheduling (Kubernetes 1.37, WorkloadWithJob): a queued one
	 * can be created with gang scheduling, and kube-scheduler then binds its pods all or
	 * nothing. */
	int gang_by_scheduling;
	/* 1 when obj finished (out filled, strings borrowed from obj or static), else 0. */
	int (*finished)(json_t *obj, struct integration_result *out);
	/* Whether the pods of an admitted obj run or have succeeded: want is the admitted count. */
	int (*pods_ready)(json_t *obj, int64_t want);
	/* Pods that may still run: an evicted workload keeps its quota until none is left. */
	int64_t (*active_pods)(json_t *obj);
	/* When obj's pods were last started (RFC 3339; a resume resets it), or NULL: the
	 * pods-ready clock runs from the later of that and the admission. */
	const char *(*started_at)(json_t *obj);
	/* A step of the eviction due once obj is held and before its templates may be restored
	 * (the Job API lets a template change only while status.startTime is unset): fills
	 * *patch (new reference) and *subresource ("/status") and returns 1; 0 when none is due.
	 * NULL for kinds without one. */
	int (*before_restore)(json_t *obj, json_t **patch, const char **subresource);
	/* Optional, NULL for the defaults: the Workload's name (integration_workload_name), and
	 * its ownerReferences (one controller reference to obj), new reference. */
	int (*workload_name)(json_t *obj, char *buf, size_t size);
	json_t *(*owner_references)(json_t *obj);
};

/* Kueue's pod integration: the labels, annotations, gate and finalizer a Kueue user sets or
 * sees on plain Pods. */
#define LABEL_POD_GROUP "kueue.x-k8s.io/pod-group-name"
/* A Job's own gang minCount while partial admission runs it lowered (integration_job.c). */
#define ANNOTATION_GANG_MIN_COUNT "muster.kueue.x-k8s.io/gang-min-count"
#define ANNOTATION_POD_GROUP_TOTAL "kueue.x-k8s.io/pod-group-total-count"
#define ANNOTATION_RETRIABLE_IN_GROUP "kueue.x-k8s.io/retriable-in-group"
#define GATE_ADMISSION "kueue.x-k8s.io/admission"
#define LABEL_MANAGED "kueue.x-k8s.io/managed"
#define FINALIZER_MANAGED "kueue.x-k8s.io/managed"
/* The largest pod group muster takes (a Workload of more pods is beyond any cluster here). */
#define POD_GROUP_MAX 10000

/* The integrated kinds that own their Workload whole, one line each: X(NAME, integration),
 * in the order tables list them. Everything else reads this list: integration_all() and
 * integration_for() here, ctrl/'s kind K_<NAME> with its informer, store and reconciler
 * (ctrl/kinds.c), and the simulator's kinds. Plain Pods (integration_pod, below) are not among
 * them: their Workload is a pod group's, not one object's. */
#define INTEGRATED_OWNERS(X)          \
	X(JOB, integration_job)       \
	X(RAYJOB, integration_rayjob) \
	X(RAYCLUSTER, integration_raycluster)

#define INTEGRATION_DECLARE(name, in) extern const struct integration in;
INTEGRATED_OWNERS(INTEGRATION_DECLARE)
#undef INTEGRATION_DECLARE
/* Plain Pods: a single Pod, or a group of Pods sharing kueue.x-k8s.io/pod-group-name. Its
 * object is a pod group (pod_group_new), not a Pod: the seam's read side (PodSets by role,
 * finished, pods ready, active) works on it; holding and releasing go pod by pod (the
 * scheduling gate), so template_at is NULL and the manager's pod-group stage does them. */
extern const struct integration integration_pod;

/* The Workload name of a queued Pod's group, and the group's pod count: the group name and
 * kueue.x-k8s.io/pod-group-total-count (a positive integer, at most POD_GROUP_MAX), or for a
 * Pod alone "pod-<name>-<hash>" and 1. 0, or -EINVAL with err naming the label or annotation
 * that is wrong (one rule for the webhook and the manager). */
int pod_group_of(json_t *pod, char *wl_name, size_t size, int64_t *total, char *err, size_t errlen);
/* A pod group as integration_pod's object (new reference): metadata from its pods (name: the
 * Workload's name; namespace; uid and creationTimestamp of the oldest pod; the queue and
 * priority-class labels), and "pods": the pods given (borrowed references are taken). The
 * pods must agree on their queue name and total count: NULL with err saying how they differ. */
json_t *pod_group_new(json_t *const *pods, size_t n, char *err, size_t errlen);
/* The PodSet a pod of group belongs to: "main" for a Pod alone, else its role's name. 0 or
 * -errno. */
int pod_podset_name(json_t *group, json_t *pod, char *buf, size_t size);
/* Whether a Pod carries the admission gate; whether it ended (Succeeded or Failed); whether it
 * succeeded. */
int pod_gated(json_t *pod);
int pod_terminal(json_t *pod);
int pod_succeeded(json_t *pod);

/* The kind of obj by apiVersion and kind, or NULL when muster has no integration for it. */
const struct integration *integration_for(const char *api_version, const char *kind);
/* The integration a Kueue integrations.frameworks name names ("batch/job", "ray.io/rayjob",
 * "ray.io/raycluster", "pod"), or NULL. */
const struct integration *integration_by_framework(const char *framework);
/* The integrated owner of obj as Kueue finds it (jobframework: metav1.GetControllerOf, then
 * IsOwnerManagedByKueue): obj's controller reference when it names an integrated kind,
 * borrowed, with *in (when not NULL) set to that kind's integration; else NULL. The one rule
 * for "which object owns this Workload, or this Pod". */
json_t *integration_owner_ref(json_t *obj, const struct integration **in);
/* Whether obj has an integrated owner (a RayJob's submitter Job, a Job's pods): such an object
 * is its owner's business, never queued on its own. */
int integration_owned(json_t *obj);
/* The version of in's apiVersion ("v1" of "batch/v1" and of the core group's "v1"), borrowed:
 * what webhook and admission policy rules match the kind's objects by. */
const char *integration_version(const struct integration *in);
/* Every integration, for tables: *n gets the count. */
const struct integration *const *integration_all(size_t *n);

/* Kueue's Workload name for an owner: "<kind, lower case>-<name>-<5 hex of sha1(kind, group,
 * name, uid)>", the name cut so the whole fits 253 characters. 0, -EINVAL, -ENOSPC. */
int integration_workload_name(const struct integration *in, const char *name, const char *uid,
			      char *buf, size_t size);

/*
 * The Workload (new reference) for obj: podsets() with its priority left to the caller
 * (eobj_workload_for resolves it), a controller owner reference to obj, the job-uid label and
 * queueName from obj's queue label. NULL with err filled.
 */
json_t *integration_workload_new(const struct integration *in, json_t *obj, char *err,
				 size_t errlen);

/* --- Helpers for the kinds' own files ---------------------------------------------------- */

/* A PodSet {name, count, template: copy of template} (new reference), with its
 * topologyRequest from the template's kueue.x-k8s.io/podset-*-topology annotations (one at
 * most; podIndexLabel when not NULL). path names template in errors. */
json_t *integration_podset(const char *name, int64_t count, json_t *template, const char *path,
			   const char *pod_index_label, char *err, size_t errlen);

#endif
