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

#endif
