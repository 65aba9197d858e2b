/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Leader election on a thread of its own: kube/lease.h's elector, on its own uv loop with its
 * own kube client (a client belongs to one loop), so that Lease renewals never wait behind a
 * long turn of the caller's loop (a pump pass, an admission cycle, a large list).
 *
 * Threads. lease_thread_start, _release and _stop are called on the thread of the caller's
 * loop (the "main" loop); _may_write, _is_leader and _lapses may be called from any thread
 * (C11 atomics: the fence is current even while the main loop is busy). The callbacks of
 * lease_options (on_started, on_stopped) and release's done run on the main loop, in the
 * order the elector reported them, delivered through a uv_async; never after _stop.
 *
 * Watchdog. Before each write that would take or keep the Lease, the lease thread pings the
 * main loop (the same uv_async; answering it is all the main loop does). If a ping has gone
 * unanswered for leaseDuration, the main loop is wedged: the thread stops renewing, and says
 * so in a log line, so the lead lapses renewDeadline later and a follower takes over, rather
 * than a replica that decides nothing keeping the Lease forever. Renewals resume once the
 * main loop answers again.
 *
 * libcurl's global state is set up once, on the main thread, by the first kube_client_new
 * (kube/client.h), before this thread starts. util/log.h writes each line with one write(2),
 * so lines from the two threads never interleave.
 */
#ifndef MUSTER_KUBE_LEASE_THREAD_H
#define MUSTER_KUBE_LEASE_THREAD_H

#include <uv.h>

#include "kube/kubeconfig.h"
#include "kube/lease.h"

struct lease_thread;

/* Starts the elector (opt's strings are copied; opt->may_renew must be NULL: the watchdog is
 * this module's) on a new thread, talking to cfg's apiserver with requests that time out
 * after request_timeout_s. 0 or -errno. */
int lease_thread_start(uv_loop_t *main_loop, const struct kube_config *cfg, long request_timeout_s,
		       const struct lease_options *opt, struct lease_thread **out);
/* kube/lease.h's, from any thread; false once lease_thread_release was called. */
int lease_thread_may_write(const struct lease_thread *t);
int lease_thread_is_leader(const struct lease_thread *t);
unsigned long lease_thread_lapses(const struct lease_thread *t);
/* Gives the Lease up (lease_elector_release, on the lease thread), then runs done on the main
 * loop. Writes stop at once. */
void lease_thread_release(struct lease_thread *t, void (*done)(void *arg), void *arg);
/* Stops the elector, joins the thread and frees everything; the main loop must run afterwards
 * to close one handle. NULL is fine. */
void lease_thread_stop(struct lease_thread *t);

#endif
