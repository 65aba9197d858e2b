/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `muster replay-openb`: replays the Alibaba GPU cluster trace (cluster-trace-gpu-v2023, the
 * "openb" files) through the placement module (core/placement.h) under the protocol of the FGD
 * paper ("Beware of Fragmentation", USENIX ATC '23), so that muster's placer can be compared
 * with the paper's published figures and with the baselines on the same footing.
 *
 * Input: two CSV files with a header row; columns are found by name, in any order, and other
 * columns are ignored.
 *   nodes: sn, cpu_milli, memory_mib, gpu; model optional (a GPU model, "" for none)
 *   pods:  name, cpu_milli, memory_mib, num_gpu, gpu_milli; gpu_spec optional (models allowed,
 *          separated by '|'; the multigpu traces have only the first five columns)
 * Values are whole decimal numbers. A pod's GPU request in milli-GPU: num_gpu 0 -> 0 (then
 * gpu_milli must be 0); num_gpu 1 -> gpu_milli (1..1000: under 1000 it shares one GPU);
 * num_gpu > 1 -> num_gpu * 1000 (then gpu_milli must be 1000: multi-GPU pods take whole GPUs).
 * Blank lines are skipped; CRLF line ends, a UTF-8 BOM and RFC 4180 quoted fields (within one
 * line) are accepted. Anything else malformed is reported as "FILE:LINE: what" and the replay
 * does not start (exit 2). Sizes are bounded (REPLAY_MAX_*).
 *
 * The protocol, as the FGD artifact (github.com/hkust-adsl/kubernetes-scheduler-simulator,
 * scripts/generate_config_and_run.py, pkg/simulator) runs it:
 *   1. Pods are sorted by name (stable), then shuffled with the seed.
 *   2. Tuning to 130 % of the cluster's GPU capacity (sum of gpu * 1000 over the nodes). Below
 *      it, pods drawn uniformly with replacement from the name-sorted original list are
 *      appended (not shuffled in) until the next draw would pass the target; the artifact
 *      compares total + the draw's per-GPU share (gpu_milli, 1000 for a multi-GPU pod) with
 *      the target but adds its whole request, and so do we. Above it (multigpu30 asks for
 *      130.18 %), uniformly random pods are removed until the total is within it.
 *   3. Each pod in turn gets one attempt: placement_plan for one pod, then placement_bind_pod
 *      on the planned node. A pod that fits nowhere counts in failed_pods and is gone. Nothing
 *      departs. cpu and memory are requests like the GPU; GPUs are accounted one by one by
 *      the placement module (a share < 1000 fits on one GPU, more takes whole free GPUs).
 *   4. "Arrived" is the GPU request of every pod attempted so far, failed or not, as a percent
 *      of the capacity (the artifact's arrPodGpuMilli).
 * The FGD "target workload" (placement_set_mix) is the artifact's typical pods: the (cpu, GPU
 * request) shapes of the original pod list, CPU-only pods included, most frequent first, up to
 * the first prefix that covers 95 % of the pods (podPopularityThreshold 95: 35 of the default
 * trace's 91 shapes), each weighted by its count; at most REPLAY_MAX_SHAPES. Whether passing
 * every shape would do better depends on the placement module: it did by 0.9 point at one
 * stage of its development and 0.08 point worse at a later one (tests/bench/results/openb.md).
 * A gpu_spec restricts a GPU pod to nodes of those models (the artifact's Open-Gpu-Share
 * filter): nodes carry the label alibabacloud.com/gpu-card-model, and the pod a required node
 * affinity on it. None of the three traces we replay has one.
 * The seed also seeds placement_set_seed (PLC_RANDOM). Our RNG is our own (splitmix64), so seed
 * N does not reproduce the artifact's seed N (it used Go's math/rand with seeds 42..51); only
 * distributions over seeds are comparable.
 *
 * Deliberate differences from the artifact:
 *   - Output: one line per integer percent p = 0..130, the state right after the first pod
 *     whose arrival brings arrived to p % or more (p = 0: before any pod; a percent the top-up
 *     stops short of, by less than one pod, gets the final state). The artifact logs after
 *     every pod and its analysis averages, per p, the lines whose arrived rounds to p.
 *   - Baselines are the placement module's (placement.h), not the artifact's plugins. Our
 *     bestfit uses the paper's BestFit score exactly, where the artifact rounds it to an
 *     integer 0..100 (a unit is 160 milli-GPU or 2.56 cpu) and breaks the many ties at
 *     random; its Random also picks a random GPU within the node for a shared pod. Which GPU
 *     of a node a pod gets is always the placement module's choice here.
 *   - A pod with cpu_milli 0 asks for no cpu (kube-scheduler scores it as 100m, filters it as
 *     0; none of the traces has one).
 *
 * Output (stdout), exactly 131 lines:
 *   {"arrived_pct":P,"allocated_gpu_pct":X,"free_8gpu_nodes":N,"failed_pods":N}
 * allocated_gpu_pct is placement_totals' gpu_allocated / gpu_capacity in percent (2 decimals);
 * free_8gpu_nodes its count of nodes with at least 8 GPUs all free; failed_pods is cumulative.
 * With --failures, every failed pod is also written to stderr as one JSON line.
 *
 * Exit status: REPLAY_OK; REPLAY_INVALID (2) for invalid input or usage, with "FILE:LINE:
 * what" lines on errout; REPLAY_FAILED (1) when the run itself fails (out of memory, an error
 * from the placement module).
 */
#ifndef MUSTER_REPLAY_H
#define MUSTER_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/placement.h"
#include "sim/csv.h"

#define REPLAY_OK 0
#define REPLAY_FAILED 1
#define REPLAY_INVALID 2

#define REPLAY_MAX_FILE (256u << 20) /* bytes per input file */
#define REPLAY_MAX_LINE CSV_MAX_LINE /* bytes per line */
#define REPLAY_MAX_COLUMNS CSV_MAX_COLUMNS
#define REPLAY_MAX_NAME CSV_MAX_NAME /* a node or pod name, a model, a gpu_spec */
#define REPLAY_MAX_NODES 100000
#define REPLAY_MAX_PODS 4000000 /* in a file, and after the top-up */
#define REPLAY_MAX_CPU_MILLI INT64_C(1000000000) /* a million cores */
#define REPLAY_MAX_MEMORY_MIB (INT64_C(1) << 30) /* 1 PiB; 2^50 * 1000 milli-bytes fits int64 */
#define REPLAY_MAX_POD_GPUS 1024
#define REPLAY_MAX_SHAPES 128 /* mix shapes (see above) */
#define REPLAY_MAX_PROBLEMS CSV_MAX_PROBLEMS /* messages per file before a count of the rest */

/* The resource names requests are given in; GPU nodes carry the model label. */
#define REPLAY_GPU_RESOURCE "nvidia.com/gpu"
#define REPLAY_MODEL_LABEL "alibabacloud.com/gpu-card-model"

struct replay_node {
	char *name;
	char *model; /* "" when the file has no model column or the cell is empty */
	int64_t cpu_milli;
	int64_t memory_mib;
	int gpus;
	int line;
};

struct replay_pod {
	char *name;
	char *gpu_spec; /* "" for none, else models separated by '|' */
	int64_t cpu_milli;
	int64_t memory_mib;
	int num_gpu;
	int64_t gpu_milli; /* as given (per GPU) */
	int line;
};

struct replay_nodes {
	size_t n;
	struct replay_node *v;
};

struct replay_pods {
	size_t n;
	struct replay_pod *v;
};

/* A pod's GPU request in milli-GPU, as the placement module takes it (see above). */
int64_t replay_pod_gpu(const struct replay_pod *p);

/* Parse a file's bytes (name is what messages call it). REPLAY_OK with *out filled (free it
 * with replay_*_free), REPLAY_INVALID with the problems on errout, or REPLAY_FAILED (no
 * memory). *out is empty unless REPLAY_OK. */
int replay_parse_nodes(const char *name, const char *data, size_t len, struct replay_nodes *out,
		       FILE *errout);
int replay_parse_pods(const char *name, const char *data, size_t len, struct replay_pods *out,
		      FILE *errout);
void replay_nodes_free(struct replay_nodes *n);
void replay_pods_free(struct replay_pods *p);

struct replay_options {
	uint64_t seed;
	enum plc_policy policy;
	int target_pct; /* top-up target and last output line; 0 means 130 */
	size_t max_pods; /* bound on the pods after the top-up; 0 means REPLAY_MAX_PODS */
	int log_failures; /* write each failed pod to errout */
};

/* Parses a policy name (muster, bestfit or best-fit, spread, random). 0 or -EINVAL. */
int replay_parse_policy(const char *s, enum plc_policy *out);

/*
 * Replays pods on nodes (names for messages) and writes the lines to out. Returns an exit
 * status: REPLAY_INVALID when the inputs can't make a replay (no GPU in the cluster, no pod
 * asking for one, a top-up beyond max_pods), with a message on errout and nothing on out.
 */
int replay_run(const struct replay_nodes *nodes, const struct replay_pods *pods,
	       const struct replay_options *opt, FILE *out, FILE *errout);

/* `muster replay-openb --nodes FILE --pods FILE --seed N [--policy P] [--failures]`. */
int replay_main(int argc, char **argv);

#endif
