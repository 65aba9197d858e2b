/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What happened, told as Kubernetes Events on the Workload and on its owner, with Kueue's
 * reasons (events.k8s.io/v1, as Kueue since v0.18), so that what users grep for keeps working.
 *
 * Everything here runs when a write has landed (its completion), so the Events say what
 * happened, not what was asked. Events go through writer_event, which deduplicates them and
 * holds them to a rate.
 */
#include <stdio.h>
#include <string.h>

#include "api/objects.h"
#include "ctrl/internal.h"

const char *workload_cluster_queue(struct mgr *m, json_t *wl)
{
	const char *cq = obj_str(wl, "status.admission.clusterQueue");
	const char *queue = obj_str(wl, "spec.queueName"), *ns = obj_namespace(wl);
	char lq[600];
	if (cq || !queue || !ns)
		return cq;
	snprintf(lq, sizeof(lq), "%s/%s", ns, queue);
	return obj_str(store_get(m, K_LQ, lq), "spec.clusterQueue");
}

/* The integrated owner of a Workload, borrowed from its store, or NULL (a pod group, an owner
 * not cached). */
static json_t *owner_of(struct mgr *m, json_t *wl, enum kind *kind)
{
	size_t i;
	json_t *o;
	const char *ns = obj_namespace(wl);
	json_array_foreach(obj_path(wl, "metadata.ownerReferences"), i, o)
	{
		const char *name = json_string_value(json_object_get(o, "name"));
		enum kind k = owner_kind_for(json_string_value(json_object_get(o, "apiVersion")),
					     json_string_value(json_object_get(o, "kind")));
		char key[600];
		if (k == K_KINDS || !name || !ns)
			continue;
		snprintf(key, sizeof(key), "%s/%s", ns, name);
		*kind = k;
		return store_get(m, k, key);
	}
	return NULL;
}

static void owner_event(struct mgr *m, json_t *wl, const char *type, const char *reason,
			const char *message)
{
	enum kind kind;
	json_t *owner = owner_of(m, wl, &kind);
	if (owner)
		writer_event(m, kind, owner, type, reason, message);
}

/* Whole seconds from one condition's lastTransitionTime (NULL: the creation) to another's,
 * or -1 when either is missing. */
static long long seconds_between(json_t *wl, const char *from, const char *to)
{
	int64_t a, b;
	const char *at = from ? json_string_value(json_object_get(condition_get(wl, from),
								  "lastTransitionTime"))
			      : obj_str(wl, "metadata.creationTimestamp");
	const char *bt = json_string_value(json_object_get(condition_get(wl, to), "lastTransitionTime"));
	if (time_parse_rfc3339(at, &a) != 0 || time_parse_rfc3339(bt, &b) != 0 || b < a)
		return -1;
	return (long long)((b - a) / 1000);
}

void history_admitted(struct mgr *m, json_t *wl)
{
	char msg[512];
	const char *cq = obj_str(wl, "status.admission.clusterQueue");
	if (!cq)
		return;
	snprintf(msg, sizeof(msg), "Quota reserved in ClusterQueue %s, wait time since queued was %llds",
		 cq, seconds_between(wl, NULL, "QuotaReserved"));
	writer_event(m, K_WORKLOAD, wl, "Normal", "QuotaReserved", msg);
	snprintf(msg, sizeof(msg), "Admitted by ClusterQueue %s, wait time since reservation was %llds",
		 cq, seconds_between(wl, "QuotaReserved", "Admitted"));
	writer_event(m, K_WORKLOAD, wl, "Normal", "Admitted", msg);
}

void history_pending(struct mgr *m, json_t *wl)
{
	json_t *c = condition_get(wl, "QuotaReserved");
	const char *reason = json_string_value(json_object_get(c, "reason"));
	const char *message = json_string_value(json_object_get(c, "message"));
	if (reason && message)
		writer_event(m, K_WORKLOAD, wl, "Warning", reason, message);
}

void history_evicted(struct mgr *m, json_t *wl)
{
	json_t *ev = condition_get(wl, "Evicted"), *pre = condition_get(wl, "Preempted");
	const char *reason = json_string_value(json_object_get(ev, "reason"));
	const char *message = json_string_value(json_object_get(ev, "message"));
	char why[160];
	if (!reason || !message)
		return;
	if (pre && !strcmp(reason, "Preempted"))
		writer_event(m, K_WORKLOAD, wl, "Normal", "Preempted", message);
	/* Kueue's ReasonWithCause: "EvictedDueTo" + the Evicted reason. */
	snprintf(why, sizeof(why), "EvictedDueTo%s", reason);
	writer_event(m, K_WORKLOAD, wl, "Normal", why, message);
}

void history_finished(struct mgr *m, json_t *wl)
{
	json_t *c = condition_get(wl, "Finished");
	const char *reason = json_string_value(json_object_get(c, "reason"));
	const char *message = json_string_value(json_object_get(c, "message"));
	char msg[600];
	if (!reason || !message)
		return;
	writer_event(m, K_WORKLOAD, wl, "Normal", "Finished", message);
	snprintf(msg, sizeof(msg), "Workload '%s/%s' is declared finished", obj_namespace(wl),
		 obj_name(wl));
	owner_event(m, wl, "Normal", "FinishedWorkload", msg);
}

void history_deactivated(struct mgr *m, json_t *wl)
{
	writer_event(m, K_WORKLOAD, wl, "Warning", "Deactivated",
		     "The workload is deactivated: its requeuing limit was exceeded");
}
