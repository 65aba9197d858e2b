/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `muster replay-philly`: how good are the forecast's admission times (sim/forecast.h) on a
 * real trace? The Microsoft Philly-derived job trace (82,247 jobs of 15 virtual clusters,
 * Sept-Dec 2017; where to get it: tests/bench/README.md, "Trace data") is replayed through
 * the admission engine as ground truth, and at sampled moments the forecast is asked about
 * every pending workload, knowing only what a manager would know then; its answers are
 * compared with the true admission times.
 *
 * Input: a CSV file with a header row; columns found by name, in any order, others ignored:
 *   timestamp  submission, "YYYY-MM-DD HH:MM:SS" (UTC; RFC 3339 is accepted too), 1970-2199
 *   duration   run time in seconds, a decimal number >= 0 (fractions are rounded to the ms)
 *   num_gpus   a whole number 1..PHILLY_MAX_GPUS
 *   cluster    the virtual cluster: a DNS label (it names a ClusterQueue)
 * (gpu_time, duration x num_gpus in the trace, is not read.) The file need not be sorted.
 * Blank lines, CRLF, a BOM and quoted fields are accepted (sim/csv.h). Anything else malformed
 * is reported as "FILE:LINE: what" and nothing is replayed (exit 2). Sizes are bounded.
 *
 * The replay:
 *   - Clusters: the ones named (--cluster, repeatable), or the one with the most jobs. Each is
 *     a ClusterQueue of its own (no cohort, BestEffortFIFO unless --queueing strict, no
 *     preemption) with a LocalQueue of its name in namespace "philly", and a quota of
 *     nvidia.com/gpu in one flavor: --quota N, or --quota-fraction F (default 0.3) of its
 *     peak demand (the most GPUs its jobs would hold at once if each started at submission),
 *     rounded up, and never below its largest job.
 *   - Jobs: the first --jobs N (default all) of those clusters by submission time. A job of g
 *     GPUs is a Workload of one podSet of ceil(g/8) pods x min(8, g) GPUs (an 8-GPU node per
 *     pod: 12 GPUs become 2 x 8), created at its submission (ties in file order).
 *   - Ground truth: a discrete-event run in virtual time: at each instant, the jobs ending then
 *     are removed, the jobs submitted then are added, and the engine is cycled to a fixed
 *     point; an admitted job runs for its true duration.
 *   - Samples: after every Nth arrival (--sample-every, default arrivals / --max-samples,
 *     --max-samples default 200), the forecast is run from the current objects (Workloads with
 *     status.admission and QuotaReserved's lastTransitionTime, as a manager's caches hold them)
 *     for every pending workload, three times:
 *       median       runtime per ClusterQueue = the median duration of its jobs finished
 *                    before that moment (nothing of the future; none before the first ends);
 *       conditional  the same finished durations as a sample: a running workload's runtime is
 *                    the median of those longer than it has run so far (sim/forecast.h);
 *       perfect      every workload's true duration as its activeDeadlineSeconds: the error
 *                    left is that of the arrivals the forecast doesn't model.
 *   - Figures, per variant: estimates made, how many had no basis (no estimate), and for the
 *     workloads the ground truth admitted, the absolute error |estimate - truth| in minutes
 *     (mean, median, p90; and the share within a minute), the signed error (median: below 0
 *     is early), and the relative error, |error| / true remaining wait (median, p90).
 *
 * Output (stdout): lines starting "replay-philly:" describing the setup and the ground truth,
 * then per variant one line
 *   FORECAST runtime=median|conditional|perfect estimates=N no_basis=N compared=N
 *            within_1min_pct=X abs_mean_min=X abs_median_min=X abs_p90_min=X
 *            signed_median_min=X rel_median=X rel_p90=X
 * (X with 2 decimals, "-" when nothing was compared).
 *
 * Exit status: PHILLY_OK; PHILLY_INVALID (2) for invalid input or usage; PHILLY_FAILED (1) when
 * the run fails (out of memory, an engine or forecast error).
 */
#ifndef MUSTER_PHILLY_H
#define MUSTER_PHILLY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PHILLY_OK 0
#define PHILLY_FAILED 1
#define PHILLY_INVALID 2

#define PHILLY_MAX_FILE (256u << 20) /* bytes */
#define PHILLY_MAX_JOBS 2000000
#define PHILLY_MAX_GPUS 4096 /* per job */
#define PHILLY_MAX_DURATION_S (INT64_C(10) * 366 * 86400) /* ten years */
#define PHILLY_MAX_CLUSTER 63 /* a DNS label */
#define PHILLY_MAX_CLUSTERS 1024 /* distinct clusters in a file */
#define PHILLY_MAX_TIME_MS INT64_C(7258118400000) /* 2200-01-01: times in ns stay in int64 */

struct philly_job {
	int64_t submit_ms; /* since the epoch */
	int64_t duration_ms;
	int gpus;
	size_t cluster; /* index into philly_trace.clusters */
	int line;
};

struct philly_trace {
	struct philly_job *jobs; /* in file order */
	size_t n;
	char **clusters; /* distinct names, in order of first appearance */
	size_t n_clusters;
};

/* Parses a file's bytes (name is what messages call it). PHILLY_OK with *out filled (free it
 * with philly_trace_free), PHILLY_INVALID with the problems on errout, or PHILLY_FAILED (no
 * memory). *out is empty unless PHILLY_OK. */
int philly_parse(const char *name, const char *data, size_t len, struct philly_trace *out,
		 FILE *errout);
void philly_trace_free(struct philly_trace *t);

/* The pods and GPUs per pod of a job of gpus GPUs: ceil(gpus / 8) x min(8, gpus). */
void philly_shape(int gpus, int *pods, int *per_pod);

struct philly_options {
	const char *const *clusters; /* NULL or empty: the one with the most jobs */
	size_t n_clusters;
	double quota_fraction; /* of the peak demand; 0: 0.3 */
	int64_t quota; /* GPUs per ClusterQueue; 0: from quota_fraction */
	int strict_fifo;
	size_t max_jobs; /* 0: all */
	size_t sample_every; /* 0: arrivals / max_samples, at least 1 */
	size_t max_samples; /* 0: 200 */
};

/* Replays the trace and writes the figures to out (see above). Returns an exit status;
 * PHILLY_INVALID for options the trace can't satisfy (an unknown cluster), with a message on
 * errout. */
int philly_replay(const struct philly_trace *t, const struct philly_options *opt, FILE *out,
		  FILE *errout);

/* `muster replay-philly --trace FILE [--cluster NAME]... [--quota N | --quota-fraction F]
 * [--queueing best-effort|strict] [--jobs N] [--sample-every N] [--max-samples N]`. */
int philly_main(int argc, char **argv);

#endif
