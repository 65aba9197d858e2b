/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the decision ledger costs per decision, on the loop and on its writer thread: N
 * decisions (default 30,000), admits and finishes in pairs as on Kueue's baseline, made through
 * the calls the controller makes when a write lands (history_admitted, history_finished_seen)
 * on a manager without a cluster (bench_mgr.h: Events go to a closed port, unanswered).
 *
 * The same decisions run twice, on Workloads of other names: without a ledger, then with one;
 * the loop's share of the ledger is the difference of the two runs' main-thread CPU, the
 * writer's is the process's CPU less the main thread's (no other thread runs). Every `-b`
 * records (default 13: the baseline's 6,000 records in 91 s, committed every 200 ms) the bench
 * waits for a commit (ledger_flush, whose CPU is left out of the main thread's: the manager's
 * loop never waits), so the writer commits batches of the baseline's size; -b 0
 * lets the queue fill as fast as the loop appends (LEDGER_WAKE_RECORDS per batch).
 *
 *   bench_ledger [-n decisions] [-b records_per_batch] [-q cluster_queues] [-d dir]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "bench_mgr.h"
#include "ledger/ledger.h"

/* Finishes trail admits by this many Workloads: about what the baseline holds admitted. */
#define OPEN_ADMISSIONS 64

static int64_t thread_cpu_ns(void)
{
	return bench_clock(CLOCK_THREAD_CPUTIME_ID);
}

static int64_t process_cpu_ns(void)
{
	return bench_clock(CLOCK_PROCESS_CPUTIME_ID);
}

/* Workload i of run `run` as the write's answer brings it: admitted (its conditions and
 * admission as Kueue writes them), and finished when `finished`. A new tree, owned by the
 * caller. */
static json_t *workload(int run, int i, int cqs, int finished)
{
	static const char *const cpu[] = { "1", "5", "20" }; /* small, medium, large */
	char buf[2048], now[40];
	time_format_rfc3339(time(NULL) * 1000LL, now, sizeof(now));
	snprintf(
		buf, sizeof(buf),
		"{\"metadata\":{\"namespace\":\"ns%d\",\"name\":\"r%d-w%d\",\"uid\":\"uid-r%d-%d\","
		"\"resourceVersion\":\"%d\",\"creationTimestamp\":\"%s\"},"
		"\"spec\":{\"queueName\":\"lq\",\"priority\":0,\"podSets\":[{\"name\":\"main\","
		"\"count\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
		"{\"requests\":{\"cpu\":\"%s\"}}}]}}}]},"
		"\"status\":{\"admission\":{\"clusterQueue\":\"cq%d\",\"podSetAssignments\":[{"
		"\"name\":\"main\",\"flavors\":{\"cpu\":\"default\"},\"resourceUsage\":{\"cpu\":"
		"\"%s\"},\"count\":1}]},\"conditions\":["
		"{\"type\":\"QuotaReserved\",\"status\":\"True\",\"reason\":\"QuotaReserved\","
		"\"message\":\"Quota reserved in ClusterQueue "
		"cq%d\",\"lastTransitionTime\":\"%s\"},"
		"{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\",\"message\":"
		"\"The workload is admitted\",\"lastTransitionTime\":\"%s\"}%s%s%s]}}",
		i % cqs, run, i, run, i, i + 10, now, cpu[i % 3], i % cqs, cpu[i % 3], i % cqs, now,
		now,
		finished ? ",{\"type\":\"Finished\",\"status\":\"True\",\"reason\":\"Succeeded\","
			   "\"message\":\"Job finished successfully\",\"lastTransitionTime\":\"" :
			   "",
		finished ? now : "", finished ? "\"}" : "");
	return bench_mgr_parse(buf);
}

struct figures {
	int64_t main_ns, writer_ns, wall_ns;
	int records;
};

/* Waits for a commit; returns the main thread's CPU time it took (the system calls of the
 * wait: the bench's, not the manager's, whose loop never waits for the writer). */
static int64_t timed_flush(struct ledger *l)
{
	int64_t t0 = thread_cpu_ns();
	ledger_flush(l);
	return thread_cpu_ns() - t0;
}

/* Makes `decisions` decisions about Workloads of run `run`: admit i, then finish i - OPEN. */
static void decide(struct mgr *m, int run, int decisions, int batch, int cqs, struct figures *f)
{
	int admits = (decisions + 1) / 2, records = 0;
	int64_t flush_ns = 0;
	int64_t main0 = thread_cpu_ns(), proc0 = process_cpu_ns(), wall0 = bench_wall_ns();
	for (int i = 0; records < decisions; i++) {
		int which[2] = { i < admits ? i : -1, i - OPEN_ADMISSIONS };
		for (int k = 0; k < 2 && records < decisions; k++) {
			if (which[k] < 0 || (k == 1 && which[k] >= admits))
				continue;
			json_t *wl = workload(run, which[k], cqs, k == 1);
			char key[64];
			snprintf(key, sizeof(key), "ns%d/r%d-w%d", which[k] % cqs, run, which[k]);
			if (k == 0)
				history_admitted(m, wl);
			else
				history_finished_seen(m, key, wl);
			json_decref(wl);
			state_release_views(m);
			records++;
			if (m->ledger && batch > 0 && records % batch == 0)
				flush_ns += timed_flush(m->ledger);
		}
	}
	if (m->ledger)
		flush_ns += timed_flush(m->ledger);
	f->main_ns = thread_cpu_ns() - main0 - flush_ns;
	f->writer_ns = process_cpu_ns() - proc0 - f->main_ns;
	f->wall_ns = bench_wall_ns() - wall0;
	f->records = records;
}

/* The JSON of one workload's generation, which both runs pay and the difference cancels, is
 * timed apart so that the main-thread figures can say what history costs alone. */
static int64_t generation_ns(int decisions, int cqs)
{
	int64_t t0 = thread_cpu_ns();
	for (int i = 0; i < decisions; i++)
		json_decref(workload(9, i / 2, cqs, i & 1));
	return thread_cpu_ns() - t0;
}

static double per_1000(int64_t ns, int records)
{
	return records ? (double)ns / 1e6 * 1000.0 / records : 0;
}

int main(int argc, char **argv)
{
	int decisions = 30000, batch = 13, cqs = 6, opt;
	char dir[256] = "";
	while ((opt = getopt(argc, argv, "n:b:q:d:")) != -1) {
		if (opt == 'n')
			decisions = atoi(optarg);
		else if (opt == 'b')
			batch = atoi(optarg);
		else if (opt == 'q')
			cqs = atoi(optarg);
		else if (opt == 'd')
			snprintf(dir, sizeof(dir), "%s", optarg);
		else {
			fprintf(stderr,
				"usage: %s [-n decisions] [-b records_per_batch] [-q "
				"cluster_queues]"
				" [-d dir]\n",
				argv[0]);
			return 2;
		}
	}
	if (decisions < 2 || batch < 0 || cqs < 1) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	int own_dir = !dir[0];
	if (own_dir) {
		snprintf(dir, sizeof(dir), "/tmp/bench-ledger-XXXXXX");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			return 1;
		}
	}
	uv_loop_t loop;
	struct mgr m;
	uv_loop_init(&loop);
	if (bench_mgr_init(&m, &loop, "http://127.0.0.1:9") != 0)
		return 1;
	bench_mgr_cache(&m, K_FLAVOR, "default",
			bench_mgr_parse("{\"metadata\":{\"name\":\"default\"}}"));
	for (int q = 0; q < cqs; q++) {
		char buf[1024], name[32], key[64];
		snprintf(name, sizeof(name), "cq%d", q);
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"namespaceSelector\":{},"
			 "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{"
			 "\"name\":"
			 "\"default\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"100\"}]}]"
			 "}]"
			 "}}",
			 name);
		bench_mgr_cache(&m, K_CQ, name, bench_mgr_parse(buf));
		snprintf(key, sizeof(key), "ns%d/lq", q);
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"namespace\":\"ns%d\",\"name\":\"lq\"},\"spec\":{"
			 "\"clusterQueue\":\"%s\"}}",
			 q, name);
		bench_mgr_cache(&m, K_LQ, key, bench_mgr_parse(buf));
	}
	mgr_pump_once(&m);

	struct figures without, with;
	int64_t gen = generation_ns(decisions, cqs);
	decide(&m, 1, decisions, batch, cqs, &without);
	snprintf(m.conf.ledger_path, sizeof(m.conf.ledger_path), "%s/ledger.db", dir);
	if (history_init(&m) != 0 || !m.ledger) {
		fprintf(stderr, "cannot open the ledger in %s\n", dir);
		return 1;
	}
	decide(&m, 2, decisions, batch, cqs, &with);
	struct ledger_stats st;
	ledger_stats(m.ledger, &st);

	int64_t ledger_main = with.main_ns - without.main_ns;
	int n = with.records;
	printf("decisions %d (admit + finish), %d ClusterQueues, ", n, cqs);
	if (batch)
		printf("a commit every %d records\n", batch);
	else
		printf("commits as the queue fills\n");
	printf("ledger: %llu written in %llu batches, %llu dropped, %.1f MiB in use\n",
	       (unsigned long long)st.written, (unsigned long long)st.batches,
	       (unsigned long long)st.dropped, (double)st.db_bytes / (1 << 20));
	printf("%-34s %12s %14s\n", "CPU", "total ms", "ms per 1,000");
	printf("%-34s %12.1f %14.2f\n", "main thread, no ledger", without.main_ns / 1e6 - gen / 1e6,
	       per_1000(without.main_ns - gen, n));
	printf("%-34s %12.1f %14.2f\n", "main thread, with the ledger",
	       with.main_ns / 1e6 - gen / 1e6, per_1000(with.main_ns - gen, n));
	printf("%-34s %12.1f %14.2f\n", "main thread: the ledger's part", ledger_main / 1e6,
	       per_1000(ledger_main, n));
	printf("%-34s %12.1f %14.2f\n", "writer thread", with.writer_ns / 1e6,
	       per_1000(with.writer_ns, n));
	printf("%-34s %12.1f %14.2f\n", "the ledger in all", (ledger_main + with.writer_ns) / 1e6,
	       per_1000(ledger_main + with.writer_ns, n));
	printf("(workload generation, %.1f ms, taken out of the main-thread rows; wall %.1f s)\n",
	       gen / 1e6, with.wall_ns / 1e9);

	bench_mgr_release(&m);
	bench_mgr_close_loop(&loop);
	if (own_dir) {
		char path[512];
		for (const char *const *f = (const char *const[]){ "ledger.db", "ledger.db-wal",
								   "ledger.db-shm", NULL };
		     *f; f++) {
			snprintf(path, sizeof(path), "%s/%s", dir, *f);
			unlink(path);
		}
		rmdir(dir);
	}
	return 0;
}
