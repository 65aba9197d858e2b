/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ClusterQueue and LocalQueue status: pending, reserving and admitted counts, flavor usage and
 * the Active condition, written only when they change. Also where a ClusterQueue's spec enters
 * the engine, and where fields muster does not implement yet are named, never ignored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/log.h"

struct patch_ctx {
	struct mgr *m;
	char kind;
	char *key;
	status_done_fn done;
};

/* Brings a Workload's Job back to jobs_reconcile: now, or after the retry delay. */
static void mark_owner_job(struct mgr *m, json_t *wl, int later)
{
	json_t *owner = json_array_get(obj_path(wl, "metadata.ownerReferences"), 0);
	const char *job = json_string_value(json_object_get(owner, "name"));
	if (!job || !obj_namespace(wl))
		return;
	char key[600];
	snprintf(key, sizeof(key), "%s/%s", obj_namespace(wl), job);
	if (later)
		mgr_retry_key(m, MGR_JOB, key);
	else
		mgr_mark(m, m->dirty_jobs, key);
}

static void on_patched(void *arg, const struct kube_response *resp)
{
	struct patch_ctx *ctx = arg;
	struct mgr *m = ctx->m;
	int ok = resp->error == 0 && resp->status == 200;
	json_t *updated = NULL;

	char inflight_key[700];
	snprintf(inflight_key, sizeof(inflight_key), "%c:%s", ctx->kind, ctx->key);
	json_object_del(m->inflight, inflight_key);
	if (ok) {
		json_error_t jerr;
		updated = json_loadb(resp->body, resp->body_len, 0, &jerr);
	} else if (resp->status == 409) {
		log_debug("write conflict; the next event decides again", LF_STR("object", ctx->key),
			  LF_END);
	} else {
		log_warn("write failed", LF_STR("object", ctx->key), LF_INT("status", resp->status),
			 LF_STR("error", resp->error_text), LF_STR("body", resp->body), LF_END);
	}
	if (ctx->done)
		ctx->done(m, ctx->key, updated, ok);
	else if (!ok)
		mgr_retry_key(m, ctx->kind, ctx->key);
	/* Events for this key that arrived while the write was in flight were skipped: look at
	 * it once more now. */
	if (ok && ctx->kind == MGR_WL)
		m->admission_needed = 1; /* a Workload's change may start or end an admission */
	if (ok && ctx->kind != MGR_POD) /* an ungated pod needs nothing more */
		mgr_mark(m, mgr_set_for_kind(m, ctx->kind), ctx->key);
	/* A Workload's Job skipped its own events while the write was in flight (jobs_reconcile
	 * waits for it), and the Workload's watch event, which marks the Job, may have come
	 * before this response; and a write the Job made (Finished, PodsReady) may have lost to a
	 * newer Workload. Either way the Job must be looked at once more, or a Job that finished
	 * meanwhile would never mark its Workload Finished: at once after a success, after the
	 * retry delay after a failure (so a stale cache can't spin). */
	if (ctx->kind == MGR_WL)
		mark_owner_job(m, updated ? updated : informer_get(m->workloads, ctx->key), !ok);
	json_decref(updated);
	free(ctx->key);
	free(ctx);
}

int mgr_inflight(struct mgr *m, char kind, const char *key)
{
	char k[700];
	snprintf(k, sizeof(k), "%c:%s", kind, key);
	return json_object_get(m->inflight, k) != NULL;
}

void mgr_inflight_set(struct mgr *m, char kind, const char *key, int on)
{
	char k[700];
	snprintf(k, sizeof(k), "%c:%s", kind, key);
	if (on)
		json_object_set(m->inflight, k, json_true());
	else
		json_object_del(m->inflight, k);
}

int patch_object(struct mgr *m, const char *path, char kind, const char *key, json_t *patch,
		 status_done_fn done)
{
	struct patch_ctx *ctx = calloc(1, sizeof(*ctx));
	char inflight_key[700];
	snprintf(inflight_key, sizeof(inflight_key), "%c:%s", kind, key);
	char *body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
	int rc = -1;
	json_decref(patch);
	if (!ctx || !body || !(ctx->key = strdup(key)))
		goto fail;
	ctx->m = m;
	ctx->done = done;
	rc = kube_request(m->kube, "PATCH", path, "application/merge-patch+json", body, on_patched,
			  ctx, NULL);
	if (rc != 0)
		goto fail;
	ctx->kind = kind;
	json_object_set(m->inflight, inflight_key, json_true());
	free(body);
	return 0;
fail:
	free(body);
	if (ctx)
		free(ctx->key);
	free(ctx);
	mgr_retry_later(m);
	return rc ? rc : -1;
}

int patch_workload_status(struct mgr *m, const char *key, json_t *wl, json_t *patch,
			  status_done_fn done)
{
	char path[1024];
	snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads/%s/status",
		 obj_namespace(wl), obj_name(wl));
	return patch_object(m, path, MGR_WL, key, patch, done);
}

/* A ClusterQueue's spec enters the engine here. What the decoder reports as not implemented
 * (fairSharing, admissionScope, …) is named in the UnsupportedFields condition; admission
 * checks make the queue inactive, since admitting without them would skip them. */
void cq_apply(struct mgr *m, const char *name, json_t *obj)
{
	char err[256] = "";
	struct eobj_cq cq;
	json_t *info = json_object();

	if (!obj) {
		engine_remove_cq(m->engine, name);
		json_object_del(m->unsupported, name);
		json_decref(info);
		return;
	}
	if (json_array_size(obj_path(obj, "spec.admissionChecksStrategy.admissionChecks")) > 0)
		json_object_set_new(info, "inactive",
				    json_string("admission checks are not implemented yet, and admitting without them would skip them"));
	if (eobj_cq_decode(obj, &cq, err, sizeof(err)) != 0) {
		engine_remove_cq(m->engine, name);
		json_object_set_new(info, "inactive", json_string(err));
		log_error("cannot use ClusterQueue", LF_STR("clusterQueue", name), LF_STR("error", err),
			  LF_END);
	} else {
		if (cq.unsupported && *cq.unsupported)
			json_object_set_new(info, "notImplemented", json_string(cq.unsupported));
		if (json_object_get(info, "inactive"))
			engine_remove_cq(m->engine, name);
		else if (engine_set_cq(m->engine, &cq.spec) != 0)
			json_object_set_new(info, "inactive", json_string("the engine refused its spec"));
		eobj_cq_release(&cq);
	}
	json_object_set_new(m->unsupported, name, info);
}

/* Per-LocalQueue counters and usage, gathered in one pass over the Workloads (pending ones
 * from the pending set, admitted ones from the engine). ClusterQueue figures come from the engine. */
struct queue_stats {
	json_t *pending; /* queue key -> count */
	json_t *reserving;
	json_t *admitted;
	json_t *lq_usage; /* lq key -> {flavor: {resource: milli}} */
};

static void bump(json_t *counts, const char *key)
{
	json_int_t n = json_integer_value(json_object_get(counts, key));
	json_object_set_new(counts, key, json_integer(n + 1));
}

static void gather(struct mgr *m, struct queue_stats *s)
{
	const char *key;
	json_t *wl;
	char lq_key[600];

	s->pending = json_object();
	s->reserving = json_object();
	s->admitted = json_object();
	s->lq_usage = json_object();
	json_object_foreach(informer_store(m->workloads), key, wl)
	{
		const struct eng_assignment *a = engine_admission(m->engine, key);
		json_t *view = workload_view(m, key);
		snprintf(lq_key, sizeof(lq_key), "%s/%s", obj_namespace(wl), obj_str(wl, "spec.queueName"));
		if (!a) {
			if (json_object_get(m->pending, key))
				bump(s->pending, lq_key);
			continue;
		}
		bump(s->reserving, lq_key);
		if (condition_true(view, "Admitted"))
			bump(s->admitted, lq_key);
		json_t *usage = json_object_get(s->lq_usage, lq_key);
		if (!usage) {
			usage = json_object();
			json_object_set_new(s->lq_usage, lq_key, usage);
		}
		for (size_t p = 0; p < a->n_podsets; p++) {
			for (size_t k = 0; k < a->podsets[p].n; k++) {
				const char *fname = a->podsets[p].flavors[k];
				const char *rname = a->podsets[p].resources[k];
				json_t *fl = json_object_get(usage, fname);
				if (!fl) {
					fl = json_object();
					json_object_set_new(usage, fname, fl);
				}
				json_int_t have = json_integer_value(json_object_get(fl, rname));
				json_object_set_new(fl, rname, json_integer(have + a->podsets[p].usage[k]));
			}
		}
	}
}

static void stats_release(struct queue_stats *s)
{
	json_decref(s->pending);
	json_decref(s->reserving);
	json_decref(s->admitted);
	json_decref(s->lq_usage);
}

static json_int_t count_of(json_t *counts, const char *key)
{
	return json_integer_value(json_object_get(counts, key));
}

static json_t *qty(const char *resource, int64_t milli)
{
	char buf[64];
	quantity_to_string(resource, milli, buf, sizeof(buf));
	return json_string(buf);
}

/* Writes obj's status when `status` differs from it in any of the fields it sets. */
static void write_status_if_changed(struct mgr *m, json_t *obj, const char *path, char kind,
				    const char *key, json_t *status)
{
	json_t *current = json_object_get(obj, "status");
	const char *field;
	json_t *v;
	int differs = 0;
	json_object_foreach(status, field, v)
		differs |= !json_equal(v, json_object_get(current, field));
	if (!differs || mgr_inflight(m, kind, key)) {
		json_decref(status);
		return;
	}
	patch_object(m, path, kind, key, json_pack("{s:o}", "status", status), NULL);
}

static json_t *cq_conditions(struct mgr *m, json_t *obj, const char *name)
{
	json_t *info = json_object_get(m->unsupported, name);
	const char *inactive = json_string_value(json_object_get(info, "inactive"));
	const char *notes = json_string_value(json_object_get(info, "notImplemented"));
	const char *reason = "Unsupported", *message = NULL;
	char msg[512];
	int active = 0, changed;

	if (inactive) {
		snprintf(msg, sizeof(msg), "Can't admit new workloads: %s", inactive);
	} else {
		active = engine_cq_active(m->engine, name, &reason, &message);
		snprintf(msg, sizeof(msg), "%s", message ? message : (active ? "Can admit new workloads" : ""));
	}
	json_t *conds = conditions_with(obj, "Active", active ? "True" : "False", reason ? reason : "Ready",
					msg, &changed);
	json_t *tmp = json_pack("{s:O, s:{s:O}}", "metadata", json_object_get(obj, "metadata"),
				"status", "conditions", conds);
	json_decref(conds);
	conds = conditions_with(tmp, "UnsupportedFields", notes ? "True" : "False",
				notes ? "NotImplemented" : "AllFieldsSupported",
				notes ? notes : "muster implements every field this ClusterQueue sets",
				&changed);
	json_decref(tmp);
	return conds;
}

static void cq_status(struct mgr *m, const char *name)
{
	json_t *obj = informer_get(m->cqs, name);
	json_t *groups = obj_path(obj, "spec.resourceGroups"), *g;
	char path[512];
	size_t gi, pending = 0, admitted = 0;
	if (!obj)
		return;
	json_t *usage = json_array();
	json_array_foreach(groups, gi, g)
	{
		json_t *f;
		size_t fi;
		json_array_foreach(json_object_get(g, "flavors"), fi, f)
		{
			const char *fname = json_string_value(json_object_get(f, "name"));
			json_t *res = json_array(), *r;
			size_t ri;
			json_array_foreach(json_object_get(g, "coveredResources"), ri, r)
			{
				const char *rname = json_string_value(r);
				struct eng_cq_usage u = { 0, 0 };
				if (!fname || !rname)
					continue;
				engine_cq_usage(m->engine, name, fname, rname, &u);
				json_array_append_new(res, json_pack("{s:s, s:o, s:o}", "name", rname, "total",
								     qty(rname, u.total), "borrowed",
								     qty(rname, u.borrowed)));
			}
			if (fname)
				json_array_append_new(usage, json_pack("{s:s, s:o}", "name", fname, "resources", res));
			else
				json_decref(res);
		}
	}
	engine_cq_counts(m->engine, name, &pending, &admitted);
	json_t *status = json_pack("{s:o, s:I, s:I, s:I, s:O, s:O}", "conditions",
				   cq_conditions(m, obj, name), "pendingWorkloads", (json_int_t)pending,
				   "reservingWorkloads", (json_int_t)admitted, "admittedWorkloads",
				   (json_int_t)admitted, "flavorsReservation", usage, "flavorsUsage", usage);
	json_decref(usage);
	snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/%s/status", name);
	if (status)
		write_status_if_changed(m, obj, path, MGR_CQ, name, status);
}

static void lq_status(struct mgr *m, struct queue_stats *s, const char *key)
{
	json_t *obj = informer_get(m->lqs, key);
	char path[1024], msg[512] = "Can submit new workloads to ClusterQueue";
	const char *reason = "Ready";
	int changed;
	if (!obj)
		return;
	const char *cq_name = obj_str(obj, "spec.clusterQueue");
	const char *cq_reason = NULL, *cq_message = NULL;
	int active = cq_name && informer_get(m->cqs, cq_name) != NULL;
	if (!active) {
		reason = "ClusterQueueDoesNotExist";
		snprintf(msg, sizeof(msg), "Can't submit new workloads to ClusterQueue %s: it doesn't exist",
			 cq_name ? cq_name : "");
	} else if (json_object_get(json_object_get(m->unsupported, cq_name), "inactive") ||
		   !engine_cq_active(m->engine, cq_name, &cq_reason, &cq_message)) {
		active = 0;
		reason = "ClusterQueueIsInactive";
		snprintf(msg, sizeof(msg), "Can't submit new workloads to ClusterQueue %s: it is inactive",
			 cq_name);
	}
	const char *stop = obj_str(obj, "spec.stopPolicy");
	if (stop && strcmp(stop, "None") != 0) {
		active = 0;
		reason = "Stopped";
		snprintf(msg, sizeof(msg), "LocalQueue is stopped (stopPolicy %s)", stop);
	}
	json_t *usage = json_array();
	const char *flavor;
	json_t *res;
	json_object_foreach(json_object_get(s->lq_usage, key), flavor, res)
	{
		json_t *list = json_array();
		const char *rname;
		json_t *milli;
		json_object_foreach(res, rname, milli)
			json_array_append_new(list, json_pack("{s:s, s:o}", "name", rname, "total",
							      qty(rname, json_integer_value(milli))));
		json_array_append_new(usage, json_pack("{s:s, s:o}", "name", flavor, "resources", list));
	}
	json_t *conds = conditions_with(obj, "Active", active ? "True" : "False", reason, msg, &changed);
	json_t *status = json_pack("{s:o, s:I, s:I, s:I, s:O, s:O}", "conditions", conds,
				   "pendingWorkloads", count_of(s->pending, key), "reservingWorkloads",
				   count_of(s->reserving, key), "admittedWorkloads",
				   count_of(s->admitted, key), "flavorsReservation", usage, "flavorsUsage",
				   usage);
	json_decref(usage);
	snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/localqueues/%s/status",
		 obj_namespace(obj), obj_name(obj));
	if (status)
		write_status_if_changed(m, obj, path, MGR_LQ, key, status);
}

void status_sync(struct mgr *m)
{
	struct queue_stats s;
	const char *key;
	json_t *v;
	if (json_object_size(m->dirty_cqs) == 0 && json_object_size(m->dirty_lqs) == 0)
		return;
	gather(m, &s);
	json_object_foreach(m->dirty_cqs, key, v)
		cq_status(m, key);
	json_object_foreach(m->dirty_lqs, key, v)
		lq_status(m, &s, key);
	json_object_clear(m->dirty_cqs);
	json_object_clear(m->dirty_lqs);
	stats_release(&s);
}
