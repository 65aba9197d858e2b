/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes a `muster simulate` input shaped like a cluster export, for bench_simulate_large.sh:
 * 3 ResourceFlavors, 3 WorkloadPriorityClasses, 24 ClusterQueues in 4 cohorts (nominal quotas,
 * borrowing and lending limits, preemption), one LocalQueue per team namespace, then N pending
 * Workloads of mixed sizes: most with one podSet (cpu, memory), some with GPUs, some with a
 * launcher and workers; about 30% name a priority class. Deterministic for a seed.
 *
 *   gen_simulate_input [-n WORKLOADS (50000)] [-s SEED (1)] > input.yaml
 *
 * With the defaults the file is about 17 MB (about 340 bytes per Workload), the size of the
 * export in issue 8. Pure C and stdio: no part of muster is linked.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N_COHORTS 4
#define CQS_PER_COHORT 6
#define N_CQS (N_COHORTS * CQS_PER_COHORT)

static uint64_t rng_state;

/* splitmix64: tiny, seedable and the same on every platform, unlike rand(). */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static void config(FILE *f)
{
	static const char *const wpcs[][2] = { { "low", "100" }, { "medium", "500" }, { "high", "1000" } };

	fputs("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: on-demand}\n"
	      "spec: {nodeLabels: {cloud.example.com/capacity: on-demand}}\n"
	      "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: spot}\n"
	      "spec: {nodeLabels: {cloud.example.com/capacity: spot}}\n"
	      "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n"
	      "spec: {nodeLabels: {cloud.example.com/gpu: a100}}\n",
	      f);
	for (size_t i = 0; i < 3; i++)
		fprintf(f,
			"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
			"metadata: {name: %s}\nvalue: %s\n",
			wpcs[i][0], wpcs[i][1]);
	for (unsigned q = 0; q < N_CQS; q++) {
		/* Mixed quotas: some queues only borrow, some lend most of theirs. */
		unsigned cpu = q % 8 == 0 ? 0 : 40 + 20 * below(10);
		unsigned spot = 20 + 10 * below(8);
		unsigned gpus = q % 3 == 0 ? 8 * (1 + below(4)) : 0;
		fprintf(f,
			"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
			"metadata:\n  name: cq-%02u\nspec:\n  cohortName: cohort-%u\n"
			"  namespaceSelector: {}\n"
			"  preemption:\n    reclaimWithinCohort: Any\n"
			"    withinClusterQueue: LowerPriority\n"
			"  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n"
			"    - name: on-demand\n      resources:\n"
			"      - {name: cpu, nominalQuota: %u, borrowingLimit: %u}\n"
			"      - {name: memory, nominalQuota: %uGi, borrowingLimit: %uGi}\n"
			"    - name: spot\n      resources:\n"
			"      - {name: cpu, nominalQuota: %u, lendingLimit: %u}\n"
			"      - {name: memory, nominalQuota: %uGi}\n"
			"  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
			"    - name: a100\n      resources:\n"
			"      - {name: nvidia.com/gpu, nominalQuota: %u, borrowingLimit: 16}\n",
			q, q / CQS_PER_COHORT, cpu, cpu + 100, 4 * cpu, 4 * (cpu + 100), spot, spot / 2,
			4 * spot, gpus);
	}
	for (unsigned q = 0; q < N_CQS; q++)
		fprintf(f,
			"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
			"metadata: {name: user-queue, namespace: team-%02u}\nspec: {clusterQueue: cq-%02u}\n",
			q, q);
}

/* One container's requests: a flow mapping, as `kubectl get -o yaml` never writes but people
 * and generators often do; it keeps the file at the size per Workload. */
static void requests(FILE *f, unsigned gpus)
{
	static const char *const cpus[] = { "250m", "500m", "1", "1500m", "2", "4", "8" };
	static const char *const mems[] = { "512Mi", "1Gi", "2Gi", "4Gi", "8Gi", "16Gi" };
	/* One draw per statement: argument evaluation order is unspecified. */
	const char *cpu = cpus[below(7)];
	const char *mem = mems[below(6)];
	fprintf(f, "{cpu: %s, memory: %s", cpu, mem);
	if (gpus)
		fprintf(f, ", nvidia.com/gpu: %u", gpus);
	fputc('}', f);
}

static void workload(FILE *f, unsigned i)
{
	static const char *const classes[] = { "low", "medium", "high" };
	unsigned team = below(N_CQS);
	unsigned kind = below(100);
	/* Creation times one to three seconds apart, from 2025-03-01T00:00:00Z. */
	static unsigned secs;
	secs += 1 + below(3);
	fprintf(f,
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
		"metadata: {name: wl-%06u, namespace: team-%02u, creationTimestamp: "
		"\"2025-03-%02uT%02u:%02u:%02uZ\"}\n"
		"spec:\n  queueName: user-queue\n",
		i, team, 1 + secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
	if (below(10) < 3)
		fprintf(f,
			"  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, "
			"name: %s}\n",
			classes[below(3)]);
	fputs("  podSets:\n", f);
	if (kind < 10) {
		/* MPI-style: a launcher and a gang of workers. */
		fputs("  - name: launcher\n    template: {spec: {containers: [{name: l, resources: "
		      "{requests: ",
		      f);
		requests(f, 0);
		fprintf(f, "}}]}}\n  - name: workers\n    count: %u\n", 2 + below(15));
		fputs("    template: {spec: {containers: [{name: w, resources: {requests: ", f);
		requests(f, kind < 3 ? 1 + below(8) : 0);
		fputs("}}]}}\n", f);
		return;
	}
	unsigned count = 1 + below(kind < 80 ? 4 : 8);
	fputs("  - name: main\n", f);
	if (count > 1 || below(2)) /* count 1 is the default: exports omit it or not */
		fprintf(f, "    count: %u\n", count);
	fputs("    template: {spec: {containers: [{name: c, resources: {requests: ", f);
	requests(f, kind >= 88 ? 1 + below(4) : 0);
	fputs("}}]}}\n", f);
}

int main(int argc, char **argv)
{
	unsigned long n = 50000, seed = 1;
	int opt;
	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		switch (opt) {
		case 'n':
			n = strtoul(optarg, NULL, 10);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: %s [-n WORKLOADS] [-s SEED]\n", argv[0]);
			return 2;
		}
	}
	rng_state = seed;
	config(stdout);
	for (unsigned long i = 0; i < n; i++)
		workload(stdout, (unsigned)i);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("gen_simulate_input");
		return 1;
	}
	return 0;
}
