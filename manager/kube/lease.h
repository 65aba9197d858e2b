/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules:
 *
 *   - A candidate takes the Lease when it does not exist, has no holder, or has not changed for
 *     the holder's leaseDurationSeconds. Expiry is judged on our own monotonic clock, from when
 *     we saw the record change, never from the remote renewTime (clocks differ).
 *   - Every write is a PUT guarded by the record's resourceVersion (a create for a new Lease):
 *     of two candidates, one wins and the other gets 409.
 *   - The leader renews every retry period. If no renewal has succeeded for renewDeadline, it
 *     has lost: on_stopped runs and it must stop writing at once. It keeps trying to renew:
 *     if the record still names it (nobody took over), the guarded PUT wins it back as soon
 *     as the apiserver answers, with no leaseDuration to wait out. If another replica holds
 *     the Lease, on_stopped says so (the manager then exits and restarts as a follower).
 *
 * Followers see the record through a watch (an informer on the namespace's Leases), so a
 * takeover happens within a few milliseconds of leaseDuration after the last renewal, not a
 * polling period later. The elector uses its own client, which the caller gives it: renewals
 * must never wait behind the controller's own requests or its rate limit.
 *
 * Fencing. lease_elector_may_write is the writer's gate: true only while the last successful
 * renewal was *sent* less than renewDeadline ago. A follower can take over only leaseDuration
 * after it *saw* that renewal, so a leader that stops in time leaves the difference
 * (leaseDuration - renewDeadline, 5 s by default) for its last requests to land before anyone
 * else may write. The apiserver-side fence (config/rbac/leader-fence.yaml) refuses writes from
 * any replica but the Lease's holder outright.
 *
 * Threads. Everything runs on the elector's loop thread, but lease_elector_may_write,
 * _is_leader and _lapses, which read C11 atomics and may be called from any thread (a
 * manager runs its elector on a thread of its own: kube/lease_thread.h). The elector owns its
 * informer, timer and requests.
 */
#ifndef MUSTER_KUBE_LEASE_H
#define MUSTER_KUBE_LEASE_H

#include <stdint.h>
#include <uv.h>

#include "kube/client.h"

struct lease_elector;

struct lease_options {
	const char *namespace_name;
	const char *name;
	const char *identity; /* holderIdentity we write; unique per replica */
	int64_t lease_duration_ms;
	int64_t renew_deadline_ms;
	int64_t retry_period_ms;
	void (*on_started)(void *arg); /* we became the leader (again) */
	/* We were the leader and are not any more. taken: another replica holds the Lease now.
	 * Otherwise no renewal succeeded within renewDeadline (the apiserver was unreachable, say):
	 * writes must stop, and the elector keeps trying to renew the record that still names
	 * us; on_started runs again if that succeeds before anyone else takes it. */
	void (*on_stopped)(void *arg, int taken);
	/* NULL, or asked on the elector's loop before each write that would take or keep the
	 * Lease: 0 skips it (asked again a retry period later), so a leader that may not renew
	 * loses the lead when renewDeadline passes (kube/lease_thread.h's watchdog). */
	int (*may_renew)(void *arg);
	void *arg;
};

/* Starts watching the Lease and campaigning. Strings are copied. 0 or -errno. */
int lease_elector_start(uv_loop_t *loop, struct kube_client *client,
			const struct lease_options *opt, struct lease_elector **out);
/* Whether we lead now and our last renewal is recent enough to write (see Fencing above). */
int lease_elector_may_write(const struct lease_elector *e);
int lease_elector_is_leader(const struct lease_elector *e);
/* How many times this elector led and lost the lead (on_stopped ran): renewDeadline passed with
 * no successful renewal, or another replica took the Lease. */
unsigned long lease_elector_lapses(const struct lease_elector *e);
/* Gives the Lease up if we hold it (holderIdentity "", so a follower takes it at once), then
 * runs done (also when we did not hold it, or the release failed). No writes may follow. */
void lease_elector_release(struct lease_elector *e, void (*done)(void *arg), void *arg);
/* Stops everything and frees the elector; callbacks never run afterwards. */
void lease_elector_stop(struct lease_elector *e);

/* A Kubernetes MicroTime ("2026-11-25T18:30:00.123456Z") for ms since the epoch. */
void lease_format_micro_time(int64_t ms, char *buf, size_t size);

#endif
