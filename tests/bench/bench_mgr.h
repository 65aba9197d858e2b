/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller as the ctrl/ benchmarks run it: a manager without informers, webhooks or
 * servers (mgr_init_for_test), no node placement, no client rate limit, an empty store for
 * every kind (the caller owns them: bench_mgr_release frees them), logging off. Header-only,
 * as bench_common.h.
 */
#ifndef MUSTER_BENCH_MGR_H
#define MUSTER_BENCH_MGR_H

#include <stdio.h>
#include <stdlib.h>

#include "ctrl/internal.h"
#include "util/log.h"

/* 0, or -1 after saying why. server: where its client sends (a closed port when the bench
 * wants no answers). */
static inline int bench_mgr_init(struct mgr *m, uv_loop_t *loop, const char *server)
{
	struct muster_config conf;
	log_set_level(LOG_ERROR + 1);
	config_defaults(&conf);
	conf.node_feasibility = 0;
	conf.placement_mode = PLACEMENT_NONE;
	conf.client_qps = 0;
	struct kube_config cfg = { .server = (char *)server };
	if (mgr_init_for_test(m, loop, &cfg, &conf) != 0) {
		fprintf(stderr, "cannot make a manager\n");
		return -1;
	}
	for (int k = 0; k < K_KINDS; k++)
		m->stores[k] = json_object();
	return 0;
}

static inline void bench_mgr_release(struct mgr *m)
{
	mgr_release_for_test(m);
	for (int k = 0; k < K_KINDS; k++)
		json_decref(m->stores[k]);
}

/* text parsed; a bench's own JSON, so a parse error exits. */
static inline json_t *bench_mgr_parse(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, 0, &err);
	if (!v) {
		fprintf(stderr, "bad JSON: %s: %s\n", err.text, text);
		exit(2);
	}
	return v;
}

/* As an informer would: obj (stolen) kept in the store, then reported (the key marked dirty). */
static inline void bench_mgr_cache(struct mgr *m, enum kind kind, const char *key, json_t *obj)
{
	json_t *kept = ingest_keep(m, kind, obj, NULL, 0);
	json_decref(obj);
	json_object_set_new(m->stores[kind], key, kept);
	ingest_event(m, kind, WATCH_ADDED, key, NULL, kept);
	state_release_views(m);
}

static inline void bench_mgr_close_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* Closes what the manager left on the loop (after bench_mgr_release), then the loop. */
static inline void bench_mgr_close_loop(uv_loop_t *loop)
{
	uv_walk(loop, bench_mgr_close_handle, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_loop_close(loop);
}

#endif
