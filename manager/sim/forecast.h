/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission-time estimate (the visibility API's "eta", docs/observability.md): when will
 * a pending Workload be admitted if the workloads running now end when they are expected to? The
 * forecast loads the current objects the way `muster simulate` does (sim/simulate.h: the same
 * decoders, the same engine, the same cycles, victims evicted at once) and runs the engine
 * forward in virtual time:
 *
 *   1. at now, a cycle to a fixed point (a workload that fits now is admitted now);
 *   2. then, repeatedly, the earliest expected end: every workload ending at that instant is
 *      removed (quota and nodes released) and the engine cycled again; what it admits is
 *      admitted at that instant and gets an expected end of its own;
 *   until the targets are admitted, no running workload has a known end left, the next end is
 *   beyond the horizon, or the step bound is reached.
 *
 * Expected end of a running workload: its start (the QuotaReserved condition's
 * lastTransitionTime; now when unknown; the instant of the forecast's own admission) plus a
 * runtime, taken from (runtime sources, each counted in the answer's runtimeSources):
 *   maximumExecutionTimeSeconds  spec.maximumExecutionTimeSeconds of the Workload;
 *   activeDeadlineSeconds        the caller's value for the Workload's key (its Job's);
 *                                both are hard limits, so when both are set the smaller wins
 *                                (a tie counts as maximumExecutionTimeSeconds);
 *   history                      otherwise the caller's runtimes of its ClusterQueue (the
 *                                manager's ledger): a typical runtime (e.g. the median of
 *                                recent ones), or better a sample of recent runtimes, of which
 *                                the forecast takes the median of those longer than what the
 *                                workload has run so far (one that has outlived them all is
 *                                expected to run a median runtime more);
 *   none                         otherwise: no expected end; it is never removed.
 * An end already past (it ran longer than its runtime) is taken as now: it is due. Runtimes
 * are heavy-tailed, so with a single typical runtime most long-running workloads are "due";
 * the sample avoids that (docs/performance.md has the figures on the Philly trace).
 *
 * Not modelled: workloads that arrive after now (a later, higher-priority arrival may well
 * overtake the target, so estimates are lower bounds in a busy cluster), failures and
 * restarts, eviction by waitForPodsReady, and anything ending before its expected end. Nodes
 * and Pods, when given, take part as in `muster simulate`.
 *
 * Per target: the estimated admission time (or none), the number of workloads ahead (those the
 * run admits before it in the same cohort tree, or its ClusterQueue when it has no cohort),
 * the runtime sources of the running workloads its cohort tree saw up to its admission, and a
 * basis sentence, for people:
 *   "3 workloads ahead; the earliest end frees 8 nvidia.com/gpu at ~14:20"
 *   "0 workloads ahead; it fits now"
 *   "no basis: it waits for team-b/job-x, running with no expected end (no
 *    maximumExecutionTimeSeconds, activeDeadlineSeconds or runtime history)"
 *   "no basis: it does not fit even with nothing else running: <the engine's message>"
 * Times in basis sentences are UTC, "~HH:MM" on now's day, else "~YYYY-MM-DD HH:MM".
 *
 * Cost: bounded by max_steps ends (each a cycle) and the horizon. The forecast owns a whole
 * simulation for the duration of the call; nothing is kept after it returns.
 *
 * Errors are negative errno values, with a message in err: -EINVAL invalid input (the
 * problems, "FILE:LINE: what", as simulate reports them), -ENOENT no such workload, -ENOMEM,
 * -ELOOP no fixed point. Threads: none; one call at a time per set of inputs.
 */
#ifndef MUSTER_FORECAST_H
#define MUSTER_FORECAST_H

#include <stddef.h>
#include <stdint.h>

#include "sim/simulate.h"

#define FORECAST_HORIZON_MS (INT64_C(30) * 24 * 3600 * 1000) /* 30 days */
#define FORECAST_MAX_STEPS 100000 /* ends processed, each followed by a cycle */
#define FORECAST_BASIS_MAX 512

/* Where a running workload's expected end came from; the names are the contract's keys. */
enum forecast_source {
	FORECAST_ACTIVE_DEADLINE,
	FORECAST_MAX_EXECUTION,
	FORECAST_HISTORY,
	FORECAST_NO_RUNTIME,
	FORECAST_N_SOURCES
};
/* "activeDeadlineSeconds", "maximumExecutionTimeSeconds", "history", "none". */
const char *forecast_source_name(enum forecast_source s);

/* A Workload's (its Job's) activeDeadlineSeconds. */
struct forecast_deadline {
	const char *workload; /* key "namespace/name" */
	int64_t seconds;
};

/* The runtimes of workloads admitted by a ClusterQueue: a typical one (ms), or, when
 * n_sample > 0, recent runtimes sorted ascending (ms is then unused). */
struct forecast_runtime {
	const char *cluster_queue;
	int64_t ms;
	const int64_t *sample; /* ms, ascending; borrowed for the call */
	size_t n_sample;
};

/* The current objects: texts (YAML or JSON, as `muster simulate` reads them) or, when objects
 * is set, objects already parsed (a manager's stores). Borrowed for the call. */
struct forecast_input {
	const struct sim_input *texts;
	size_t n_texts;
	const struct sim_objects *objects;
};

struct forecast_options {
	int64_t now_ms; /* ms since the epoch */
	const struct forecast_deadline *deadlines; /* by workload; a key absent has none */
	size_t n_deadlines;
	const struct forecast_runtime *runtimes; /* by ClusterQueue; absent: no history */
	size_t n_runtimes;
	int64_t horizon_ms; /* no estimate beyond now + horizon; 0: FORECAST_HORIZON_MS */
	size_t max_steps; /* 0: FORECAST_MAX_STEPS */
	/* Objects that are invalid (or that the engine refuses) are left out instead of failing
	 * the forecast, and counted in forecast_result.skipped: in a live cluster one bad object
	 * must not stop answers about the others. */
	int skip_invalid;
};

enum forecast_state {
	FORECAST_PENDING, /* waiting at now: the forecast's subject */
	FORECAST_ADMITTED, /* admitted at now; estimate = its admission time when known */
	FORECAST_NOT_QUEUED, /* not given to the engine (inactive, finished, no queue) */
};

struct forecast_estimate {
	char *workload; /* key "namespace/name"; owned (forecast_estimate_release) */
	enum forecast_state state;
	int has_admission; /* 0: no estimate (see basis) */
	int64_t admission_ms;
	size_t ahead;
	size_t sources[FORECAST_N_SOURCES];
	char basis[FORECAST_BASIS_MAX];
};

/* Why a run stopped. */
enum forecast_stop {
	FORECAST_STOP_DONE, /* every target admitted */
	FORECAST_STOP_NO_ENDS, /* no running workload with a known end is left */
	FORECAST_STOP_HORIZON, /* the next end is beyond the horizon */
	FORECAST_STOP_STEPS, /* max_steps ends processed */
};

struct forecast_result {
	struct forecast_estimate *items; /* one per workload pending at now, sorted by key */
	size_t n;
	size_t steps; /* ends processed */
	enum forecast_stop stop;
	size_t running; /* workloads admitted at now */
	size_t skipped; /* objects left out (skip_invalid) */
};

/*
 * The estimate for one Workload (key "namespace/name"): the run stops once it is admitted.
 * out->workload is a copy of key. 0 or -errno (see above); out is released and zeroed on
 * error.
 */
int forecast_workload(const struct forecast_input *in, const struct forecast_options *opt,
		      const char *key, struct forecast_estimate *out, char *err, size_t errlen);

/* Estimates for every Workload pending at now, from one run. 0 or -errno; on error out is
 * empty. Release with forecast_result_release. */
int forecast_pending(const struct forecast_input *in, const struct forecast_options *opt,
		     struct forecast_result *out, char *err, size_t errlen);

void forecast_estimate_release(struct forecast_estimate *e);
void forecast_result_release(struct forecast_result *r);

#endif
