/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What one loop turn costs a leader taking over a backlog: N pending Workloads (default 50,000)
 * in one ClusterQueue, cached and dirty as after the caches sync, drained by the pump pass by
 * pass (mgr_pump_once, the budget of ctrl/internal.h). Prints the passes it took, the longest
 * pass, the first admission cycle's time and the queue-status time, and what a pass would be
 * without the budget (-u). No apiserver: writes go to a closed port and are never answered
 * within the run, so this times the loop's own work, not I/O.
 *
 *   bench_pump_cycle [-n workloads] [-q cpu_quota] [-u]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_mgr.h"

/* This thread's CPU time (ns): the machine is shared, and wall time counts the others. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

int main(int argc, char **argv)
{
	int n = 50000, quota = 100, opt;
	int unbounded = 0;
	char buf[2048];
	while ((opt = getopt(argc, argv, "n:q:u")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'q')
			quota = atoi(optarg);
		else if (opt == 'u')
			unbounded = 1;
		else {
			fprintf(stderr, "usage: %s [-n workloads] [-q cpu_quota] [-u]\n", argv[0]);
			return 2;
		}
	}
	uv_loop_t loop;
	struct mgr m;
	uv_loop_init(&loop);
	if (bench_mgr_init(&m, &loop, "http://127.0.0.1:9") != 0)
		return 1;
	m.cycle_ms = 0;
	m.front_ms = 0;
	if (unbounded)
		m.pump_budget_ns = UINT64_MAX / 2;
	bench_mgr_cache(&m, K_FLAVOR, "default",
			bench_mgr_parse("{\"metadata\":{\"name\":\"default\"}}"));
	bench_mgr_cache(&m, K_NAMESPACE, "ns",
			bench_mgr_parse(
				"{\"metadata\":{\"name\":\"ns\",\"labels\":{\"kubernetes.io/"
				"metadata.name\":\"ns\"}}}"));
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},"
		 "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":"
		 "\"default\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"%d\"}]}]}]}}",
		 quota);
	bench_mgr_cache(&m, K_CQ, "cq", bench_mgr_parse(buf));
	bench_mgr_cache(&m, K_LQ, "ns/lq",
			bench_mgr_parse(
				"{\"metadata\":{\"namespace\":\"ns\",\"name\":\"lq\"},\"spec\":{"
				"\"clusterQueue\":\"cq\"}}"));
	mgr_pump_once(&m);
	uint64_t t0 = uv_hrtime();
	for (int i = 0; i < n; i++) {
		char key[64];
		snprintf(key, sizeof(key), "ns/w%d", i);
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"w%d\",\"uid\":\"u%d\","
			 "\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2026-01-01T%02d:%02d:"
			 "%02dZ\"},\"spec\":{\"queueName\":\"lq\",\"priority\":%d,\"podSets\":[{"
			 "\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{"
			 "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}]}}",
			 i, i, i + 10, (i / 3600) % 24, (i / 60) % 60, i % 60, i % 7);
		bench_mgr_cache(&m, K_WORKLOAD, key, bench_mgr_parse(buf));
	}
	uint64_t cached = uv_hrtime() - t0;
	/* The first cycle is the one the sync wants (pump() sets it as the caches sync). */
	m.admission_needed = 1;
	int passes = 0;
	uint64_t longest = 0, total = 0, drain_longest = 0, cpu_longest = 0, cpu_total = 0;
	uint64_t *each = calloc((size_t)n + 16, sizeof(*each));
	while (state_pending(&m, K_WORKLOAD) > 0 || m.admission_needed) {
		m.pump_turn = (struct pump_turn){ 0 };
		uint64_t s = uv_hrtime(), c = cpu_ns();
		mgr_pump_once(&m);
		uint64_t d = uv_hrtime() - s;
		c = cpu_ns() - c;
		cpu_total += c;
		if (c > cpu_longest)
			cpu_longest = c;
		if (each && (size_t)passes < (size_t)n + 16)
			each[passes] = d;
		passes++;
		total += d;
		if (d > longest)
			longest = d;
		if (m.pump_turn.drain_ns > drain_longest)
			drain_longest = m.pump_turn.drain_ns;
		if (m.pump_turn.cycle_ns)
			printf("cycle after pass %d: %.1f ms wall (queue status %.1f ms; that pass "
			       "%.1f ms wall, %.1f ms CPU)\n",
			       passes, ms(m.pump_turn.cycle_ns), ms(m.pump_turn.queues_ns), ms(d),
			       ms(c));
		if (passes > n + 10)
			break;
	}
	/* The passes' p99 (a sort of a few thousand numbers). */
	uint64_t p99 = 0;
	if (each && passes > 0) {
		for (int i = 1; i < passes; i++)
			for (int j = i; j > 0 && each[j - 1] > each[j]; j--) {
				uint64_t x = each[j];
				each[j] = each[j - 1];
				each[j - 1] = x;
			}
		p99 = each[(size_t)((passes - 1) * 0.99)];
	}
	free(each);
	struct eng_cq_usage u = { 0, 0 };
	engine_cq_usage(m.engine, "cq", "default", "cpu", &u);
	printf("workloads %d, quota %d cpu, budget %s: cached in %.0f ms; %d passes, %.0f ms wall "
	       "(%.0f ms CPU) in all; longest pass %.1f ms wall (%.1f ms CPU; its keys %.1f ms "
	       "wall), p99 %.1f ms wall; admitted %" PRId64 " cpu\n",
	       n, quota, unbounded ? "none" : "10 ms", ms(cached), passes, ms(total), ms(cpu_total),
	       ms(longest), ms(cpu_longest), ms(drain_longest), ms(p99), u.total / 1000);
	bench_mgr_release(&m);
	bench_mgr_close_loop(&loop);
	return 0;
}
