/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for sim/replay: the openb CSV readers (good files, every kind of malformed row,
 * bounds) and the FGD replay protocol on hand-made traces small enough that every line of the
 * output is known in advance, whatever the policy.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim/replay.h"

#define NODES_HDR "sn,cpu_milli,memory_mib,gpu,model\n"
#define PODS_HDR "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"

/* Output captured from one call. */
struct cap {
	char *out, *err;
	size_t out_len, err_len;
	FILE *fout, *ferr;
};

static void cap_open(struct cap *c)
{
	memset(c, 0, sizeof(*c));
	c->fout = open_memstream(&c->out, &c->out_len);
	c->ferr = open_memstream(&c->err, &c->err_len);
	assert_non_null(c->fout);
	assert_non_null(c->ferr);
}

static void cap_close(struct cap *c)
{
	fclose(c->fout);
	fclose(c->ferr);
}

static void cap_free(struct cap *c)
{
	free(c->out);
	free(c->err);
}

static int parse_nodes(const char *text, struct replay_nodes *n, struct cap *c)
{
	cap_open(c);
	int rc = replay_parse_nodes("n.csv", text, strlen(text), n, c->ferr);
	cap_close(c);
	return rc;
}

static int parse_pods(const char *text, struct replay_pods *p, struct cap *c)
{
	cap_open(c);
	int rc = replay_parse_pods("p.csv", text, strlen(text), p, c->ferr);
	cap_close(c);
	return rc;
}

/* Pods parsing must fail with exactly this stderr. */
static void pods_reject(const char *text, const char *err)
{
	struct replay_pods p;
	struct cap c;
	assert_int_equal(parse_pods(text, &p, &c), REPLAY_INVALID);
	assert_string_equal(c.err, err);
	assert_int_equal(p.n, 0);
	assert_null(p.v);
	cap_free(&c);
}

static void nodes_reject(const char *text, const char *err)
{
	struct replay_nodes n;
	struct cap c;
	assert_int_equal(parse_nodes(text, &n, &c), REPLAY_INVALID);
	assert_string_equal(c.err, err);
	assert_int_equal(n.n, 0);
	cap_free(&c);
}

/* ------------------------------------------------------------------------- CSV: good */

static void test_nodes_good(void **state)
{
	/* Columns by name in any order, an extra one, a BOM, CRLF, blank lines, quotes. */
	const char *text = "\xef\xbb\xbfgpu,extra,memory_mib,sn,cpu_milli,model\r\n"
			   "8,x,786432,openb-node-0001,96000,V100M32\r\n"
			   "\r\n"
			   "  \n"
			   "0,\"a,b\",1024,\"node \"\"q\"\"\",32000,\n"
			   "2,,262144,n3,64000,P100";
	struct replay_nodes n;
	struct cap c;
	assert_int_equal(parse_nodes(text, &n, &c), REPLAY_OK);
	assert_int_equal(c.err_len, 0);
	assert_int_equal(n.n, 3);
	assert_string_equal(n.v[0].name, "openb-node-0001");
	assert_string_equal(n.v[0].model, "V100M32");
	assert_int_equal(n.v[0].cpu_milli, 96000);
	assert_int_equal(n.v[0].memory_mib, 786432);
	assert_int_equal(n.v[0].gpus, 8);
	assert_int_equal(n.v[0].line, 2);
	assert_string_equal(n.v[1].name, "node \"q\"");
	assert_string_equal(n.v[1].model, "");
	assert_int_equal(n.v[1].gpus, 0);
	assert_int_equal(n.v[1].line, 5);
	assert_string_equal(n.v[2].name, "n3");
	assert_int_equal(n.v[2].line, 6);
	replay_nodes_free(&n);
	cap_free(&c);
}

static void test_nodes_model_optional(void **state)
{
	struct replay_nodes n;
	struct cap c;
	assert_int_equal(parse_nodes("sn,cpu_milli,memory_mib,gpu\na,1,2,4\n", &n, &c), REPLAY_OK);
	assert_int_equal(n.n, 1);
	assert_string_equal(n.v[0].model, "");
	assert_int_equal(n.v[0].gpus, 4);
	replay_nodes_free(&n);
	cap_free(&c);
}

static void test_pods_good_default_columns(void **state)
{
	const char *text =
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
		"deletion_time,scheduled_time\n"
		"openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
		"openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
		"openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497\n"
		"openb-pod-0035,16000,32768,1,1000,V100M16|V100M32,LS,Running,1,2,3\n"
		"cpu-only,4000,8192,0,0,,BE,Failed,,,\n";
	struct replay_pods p;
	struct cap c;
	assert_int_equal(parse_pods(text, &p, &c), REPLAY_OK);
	assert_int_equal(c.err_len, 0);
	assert_int_equal(p.n, 5);
	assert_string_equal(p.v[1].name, "openb-pod-0001");
	assert_int_equal(p.v[1].cpu_milli, 6000);
	assert_int_equal(p.v[1].memory_mib, 12288);
	assert_int_equal(p.v[1].num_gpu, 1);
	assert_int_equal(p.v[1].gpu_milli, 460);
	assert_int_equal(replay_pod_gpu(&p.v[0]), 1000);
	assert_int_equal(replay_pod_gpu(&p.v[1]), 460);
	assert_int_equal(replay_pod_gpu(&p.v[2]), 8000);
	assert_int_equal(replay_pod_gpu(&p.v[4]), 0);
	assert_string_equal(p.v[3].gpu_spec, "V100M16|V100M32");
	assert_string_equal(p.v[0].gpu_spec, "");
	replay_pods_free(&p);
	cap_free(&c);
}

static void test_pods_good_five_columns(void **state)
{
	/* The multigpu traces: only the first five columns; pandas-style "2.0" is a whole 2. */
	struct replay_pods p;
	struct cap c;
	assert_int_equal(parse_pods(PODS_HDR "a,12000,16384,1,1000\nb,1000.0,0,2.00,1000\n", &p,
				    &c),
			 REPLAY_OK);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.v[0].gpu_spec, "");
	assert_int_equal(p.v[1].cpu_milli, 1000);
	assert_int_equal(p.v[1].num_gpu, 2);
	assert_int_equal(replay_pod_gpu(&p.v[1]), 2000);
	replay_pods_free(&p);
	cap_free(&c);
}

/* -------------------------------------------------------------------- CSV: malformed */

static void test_missing_columns(void **state)
{
	pods_reject("name,cpu_milli,num_gpu\na,1,0\n",
		    "p.csv:1: no column memory_mib\np.csv:1: no column gpu_milli\n");
	nodes_reject("sn,cpu,memory_mib,gpu\na,1,2,3\n", "n.csv:1: no column cpu_milli\n");
	pods_reject(PODS_HDR "", "p.csv: no pods\n");
	nodes_reject(NODES_HDR "\n\n", "n.csv: no nodes\n");
	pods_reject("", "p.csv:1: no header row\n");
	pods_reject("\n\n\n", "p.csv:3: no header row\n");
	pods_reject("name,cpu_milli,memory_mib,num_gpu,gpu_milli,cpu_milli\na,1,1,0,0,1\n",
		    "p.csv:1: column cpu_milli appears twice\n");
}

static void test_field_count(void **state)
{
	pods_reject(PODS_HDR "a,1,1,0,0\nb,1,1,0\nc,1,1,0,0,9\n",
		    "p.csv:3: 4 fields, the header has 5\np.csv:4: 6 fields, the header has 5\n");
}

static void test_bad_numbers(void **state)
{
	pods_reject(PODS_HDR "a,abc,1,0,0\n", "p.csv:2: cpu_milli \"abc\" is not a whole number\n");
	pods_reject(PODS_HDR "a,-5,1,0,0\n", "p.csv:2: cpu_milli \"-5\" is not a whole number\n");
	pods_reject(PODS_HDR "a,1.5,1,0,0\n", "p.csv:2: cpu_milli \"1.5\" is not a whole number\n");
	pods_reject(PODS_HDR "a,1,,0,0\n", "p.csv:2: memory_mib is empty\n");
	pods_reject(PODS_HDR "a,1,1,0,.0\n", "p.csv:2: gpu_milli \".0\" is not a whole number\n");
	pods_reject(PODS_HDR "a,1,1,0x1,0\n", "p.csv:2: num_gpu \"0x1\" is not a whole number\n");
	pods_reject(PODS_HDR ",1,1,0,0\n", "p.csv:2: name is empty\n");
	pods_reject(PODS_HDR "a\tb,1,1,0,0\n",
		    "p.csv:2: name \"a?b\": only printable ASCII is accepted\n");
	nodes_reject(NODES_HDR "a,1,1,x,\n", "n.csv:2: gpu \"x\" is not a whole number\n");
}

static void test_huge_values(void **state)
{
	pods_reject(PODS_HDR "a,99999999999999999999999,1,0,0\n",
		    "p.csv:2: cpu_milli 99999999999999999999999 is out of range (0..1000000000)\n");
	pods_reject(PODS_HDR "a,1000000001,1,0,0\n",
		    "p.csv:2: cpu_milli 1000000001 is out of range (0..1000000000)\n");
	pods_reject(PODS_HDR "a,1,1073741825,0,0\n",
		    "p.csv:2: memory_mib 1073741825 is out of range (0..1073741824)\n");
	pods_reject(PODS_HDR "a,1,1,1,1001\n",
		    "p.csv:2: gpu_milli 1001 is out of range (0..1000)\n");
	pods_reject(PODS_HDR "a,1,1,1025,1000\n",
		    "p.csv:2: num_gpu 1025 is out of range (0..1024)\n");
	nodes_reject(NODES_HDR "a,1,1,1025,T4\n", "n.csv:2: gpu 1025 is out of range (0..1024)\n");
	/* The biggest accepted values parse exactly. */
	struct replay_pods p;
	struct cap c;
	assert_int_equal(parse_pods(PODS_HDR "a,1000000000,1073741824,1024,1000\n", &p, &c),
			 REPLAY_OK);
	assert_int_equal(p.v[0].cpu_milli, REPLAY_MAX_CPU_MILLI);
	assert_int_equal(p.v[0].memory_mib, REPLAY_MAX_MEMORY_MIB);
	assert_int_equal(replay_pod_gpu(&p.v[0]), 1024000);
	replay_pods_free(&p);
	cap_free(&c);
	/* A name, a line, and a row of columns beyond the bounds. */
	char *big = malloc(REPLAY_MAX_LINE + 64);
	assert_non_null(big);
	strcpy(big, PODS_HDR);
	size_t at = strlen(big);
	memset(big + at, 'x', REPLAY_MAX_NAME + 1);
	strcpy(big + at + REPLAY_MAX_NAME + 1, ",1,1,0,0\n");
	pods_reject(big, "p.csv:2: name is longer than 253 bytes\n");
	memset(big + at, 'x', REPLAY_MAX_LINE + 1);
	strcpy(big + at + REPLAY_MAX_LINE + 1, "\n");
	pods_reject(big, "p.csv:2: line longer than 65536 bytes\n");
	at = strlen(PODS_HDR);
	for (int i = 0; i < REPLAY_MAX_COLUMNS; i++)
		big[at + (size_t)i] = ',';
	strcpy(big + at + REPLAY_MAX_COLUMNS, "\n");
	pods_reject(big, "p.csv:2: more than 256 fields\n");
	free(big);
}

static void test_gpu_columns_must_agree(void **state)
{
	pods_reject(PODS_HDR "a,1,1,0,500\n", "p.csv:2: gpu_milli 500 without a GPU (num_gpu 0)\n");
	pods_reject(PODS_HDR "a,1,1,1,0\n", "p.csv:2: num_gpu 1 with gpu_milli 0\n");
	pods_reject(PODS_HDR "a,1,1,2,500\n",
		    "p.csv:2: num_gpu 2 with gpu_milli 500: a multi-GPU pod takes whole GPUs "
		    "(1000)\n");
}

static void test_quotes_and_duplicates(void **state)
{
	pods_reject(PODS_HDR "\"a,1,1,0,0\n", "p.csv:2: field 1: no closing quote\n");
	pods_reject(PODS_HDR "\"a\"b,1,1,0,0\n",
		    "p.csv:2: field 1: text after the closing quote\n");
	pods_reject(PODS_HDR "a\"b,1,1,0,0\n",
		    "p.csv:2: field 1: a quote inside an unquoted field\n");
	nodes_reject(NODES_HDR "a,1,1,1,T4\nb,1,1,1,T4\na,1,1,1,T4\n",
		     "n.csv:4: node a is already on line 2\n");
	/* Pod names need not be unique: pods get their own keys. */
	struct replay_pods p;
	struct cap c;
	assert_int_equal(parse_pods(PODS_HDR "a,1,1,0,0\na,1,1,0,0\n", &p, &c), REPLAY_OK);
	assert_int_equal(p.n, 2);
	replay_pods_free(&p);
	cap_free(&c);
}

static void test_problems_are_capped(void **state)
{
	char text[4096];
	size_t at = (size_t)snprintf(text, sizeof(text), "%s", PODS_HDR);
	for (int i = 0; i < 30; i++)
		at += (size_t)snprintf(text + at, sizeof(text) - at, "a,x,1,0,0\n");
	struct replay_pods p;
	struct cap c;
	assert_int_equal(parse_pods(text, &p, &c), REPLAY_INVALID);
	int lines = 0;
	for (size_t i = 0; i < c.err_len; i++)
		lines += c.err[i] == '\n';
	assert_int_equal(lines, REPLAY_MAX_PROBLEMS + 1);
	assert_non_null(strstr(c.err, "p.csv:21: cpu_milli \"x\" is not a whole number\n"));
	assert_null(strstr(c.err, "p.csv:22:"));
	assert_non_null(strstr(c.err, "p.csv: 10 more problems\n"));
	cap_free(&c);
}

/* ---------------------------------------------------------------------- the protocol */

/* What the placement holds after each arrival, for the expected lines. */
struct step {
	int64_t arrived; /* milli-GPU, cumulative */
	double alloc_pct;
	int free8;
	int failed;
};

/* The specified output: line p shows the state after the first step whose arrived reaches p %
 * of capacity; percents never reached show the final state. */
static char *expected(int64_t capacity, const struct step *init, const struct step *steps, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	size_t k = 0;
	const struct step *cur = init;
	for (int pct = 0; pct <= 130; pct++) {
		while (cur->arrived * 100 < (int64_t)pct * capacity && k < n)
			cur = &steps[k++];
		fprintf(f,
			"{\"arrived_pct\":%d,\"allocated_gpu_pct\":%.2f,\"free_8gpu_nodes\":%d,"
			"\"failed_pods\":%d}\n",
			pct, cur->alloc_pct, cur->free8, cur->failed);
	}
	fclose(f);
	return buf;
}

static int run(const char *nodes_csv, const char *pods_csv, enum plc_policy policy, uint64_t seed,
	       struct cap *c)
{
	struct replay_nodes n;
	struct replay_pods p;
	struct cap pc;
	assert_int_equal(parse_nodes(nodes_csv, &n, &pc), REPLAY_OK);
	cap_free(&pc);
	assert_int_equal(parse_pods(pods_csv, &p, &pc), REPLAY_OK);
	cap_free(&pc);
	struct replay_options opt = { .seed = seed, .policy = policy };
	cap_open(c);
	int rc = replay_run(&n, &p, &opt, c->fout, c->ferr);
	cap_close(c);
	replay_nodes_free(&n);
	replay_pods_free(&p);
	return rc;
}

static const enum plc_policy policies[] = { PLC_MUSTER, PLC_BEST_FIT, PLC_SPREAD, PLC_RANDOM };

/* One 8-GPU node with cpu for 4 pods; one whole-GPU pod, topped up to 10 (10,000 of 10,400
 * milli: an 11th would pass 130 %). Pods 5..10 fail on cpu though GPUs are free. */
static void test_protocol_cpu_bound_node(void **state)
{
	struct step init = { 0, 0, 1, 0 }, steps[10];
	for (int k = 1; k <= 10; k++)
		steps[k - 1] =
			(struct step){ 1000 * k, 12.5 * (k < 4 ? k : 4), 0, k > 4 ? k - 4 : 0 };
	char *want = expected(8000, &init, steps, 10);
	for (size_t i = 0; i < 4; i++) {
		struct cap c;
		assert_int_equal(run(NODES_HDR "big,4000,1024,8,T4\n", PODS_HDR "p,1000,1,1,1000\n",
				     policies[i], 7, &c),
				 REPLAY_OK);
		assert_int_equal(c.err_len, 0);
		assert_string_equal(c.out, want);
		cap_free(&c);
	}
	free(want);
}

/* GPU share is per GPU: two 600-milli pods can't share one GPU, so on a 2-GPU node the third
 * fails with 800 milli free in all. */
static void test_protocol_share_per_gpu(void **state)
{
	struct step init = { 0, 0, 0, 0 };
	struct step steps[4] = {
		{ 600, 30, 0, 0 },
		{ 1200, 60, 0, 0 },
		{ 1800, 60, 0, 1 },
		{ 2400, 60, 0, 2 },
	};
	char *want = expected(2000, &init, steps, 4);
	for (size_t i = 0; i < 4; i++) {
		struct cap c;
		assert_int_equal(run(NODES_HDR "n,64000,262144,2,P100\n",
				     PODS_HDR "s,1000,1024,1,600\n", policies[i], 1, &c),
				 REPLAY_OK);
		assert_string_equal(c.out, want);
		cap_free(&c);
	}
	free(want);
}

/* Memory is a request too: a node with 10 GiB takes one 6 GiB pod of two, with half its
 * GPU free. */
static void test_protocol_memory(void **state)
{
	struct cap c;
	assert_int_equal(run(NODES_HDR "n,64000,10240,1,T4\n", PODS_HDR "g,1000,6144,1,500\n",
			     PLC_BEST_FIT, 3, &c),
			 REPLAY_OK);
	/* 500 -> 1000 (the top-up stops: 1500 > 1300): the second fails on memory. */
	struct step init = { 0, 0, 0, 0 };
	struct step steps[2] = { { 500, 50, 0, 0 }, { 1000, 50, 0, 1 } };
	char *want = expected(1000, &init, steps, 2);
	assert_string_equal(c.out, want);
	free(want);
	cap_free(&c);
}

/* Above 130 %, random pods are removed until the total is within it: five whole-GPU pods on
 * one GPU leave one. */
static void test_protocol_tune_down(void **state)
{
	struct cap c;
	assert_int_equal(run(NODES_HDR "n,64000,10240,1,T4\n",
			     PODS_HDR "a,1,1,1,1000\nb,1,1,1,1000\nc,1,1,1,1000\nd,1,1,1,1000\n"
				      "e,1,1,1,1000\n",
			     PLC_MUSTER, 5, &c),
			 REPLAY_OK);
	struct step init = { 0, 0, 0, 0 };
	struct step steps[1] = { { 1000, 100, 0, 0 } };
	char *want = expected(1000, &init, steps, 1);
	assert_string_equal(c.out, want);
	free(want);
	cap_free(&c);
}

/* gpu_spec keeps a GPU pod to nodes of those models. */
static void test_protocol_gpu_spec(void **state)
{
	struct cap c;
	assert_int_equal(run(NODES_HDR "x,64000,10240,1,T4\ny,64000,10240,1,V100M32\n",
			     "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
			     "v,1000,1,1,1000,||V100M16|V100M32\n",
			     PLC_SPREAD, 2, &c),
			 REPLAY_OK);
	/* 1000 -> 2000 (3000 > 2600): the second V100 pod finds the only V100 taken. */
	struct step init = { 0, 0, 0, 0 };
	struct step steps[2] = { { 1000, 50, 0, 0 }, { 2000, 50, 0, 1 } };
	char *want = expected(2000, &init, steps, 2);
	assert_string_equal(c.out, want);
	free(want);
	cap_free(&c);
}

/* A trace where order matters: mixed shares and whole GPUs on small nodes. */
static char *mixed_trace(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fputs(PODS_HDR, f);
	static const int shares[] = { 1000, 500, 250, 810, 470, 1000, 320 };
	for (int i = 0; i < 40; i++) {
		int s = shares[i % 7];
		int ngpu = i % 11 == 0 ? 2 : 1;
		fprintf(f, "pod-%02d,%d,%d,%d,%d\n", i, 1000 * (1 + i % 5), 1024 * (1 + i % 3),
			ngpu, ngpu > 1 ? 1000 : s);
	}
	fclose(f);
	return buf;
}

static void test_seed_determinism(void **state)
{
	const char *nodes = NODES_HDR "a,16000,65536,2,T4\nb,32000,65536,4,T4\n"
				      "c,96000,262144,8,G2\nd,8000,32768,1,P100\n";
	char *pods = mixed_trace();
	for (size_t i = 0; i < 4; i++) {
		struct cap a, b;
		assert_int_equal(run(nodes, pods, policies[i], 42, &a), REPLAY_OK);
		assert_int_equal(run(nodes, pods, policies[i], 42, &b), REPLAY_OK);
		assert_string_equal(a.out, b.out);
		int lines = 0;
		for (size_t k = 0; k < a.out_len; k++)
			lines += a.out[k] == '\n';
		assert_int_equal(lines, 131);
		/* Some other seed gives a different arrival order and so different lines. */
		int differs = 0;
		for (uint64_t s = 0; s < 8 && !differs; s++) {
			struct cap o;
			assert_int_equal(run(nodes, pods, policies[i], s, &o), REPLAY_OK);
			differs = strcmp(o.out, a.out) != 0;
			cap_free(&o);
		}
		assert_true(differs);
		cap_free(&a);
		cap_free(&b);
	}
	free(pods);
}

static void test_run_rejects_what_cannot_replay(void **state)
{
	struct cap c;
	assert_int_equal(run(NODES_HDR "n,1000,1024,0,\n", PODS_HDR "a,1,1,1,500\n", PLC_MUSTER, 0,
			     &c),
			 REPLAY_INVALID);
	assert_string_equal(c.err, "replay-openb: the nodes have no GPU\n");
	assert_int_equal(c.out_len, 0);
	cap_free(&c);
	assert_int_equal(run(NODES_HDR "n,1000,1024,1,T4\n", PODS_HDR "a,1,1,0,0\n", PLC_MUSTER, 0,
			     &c),
			 REPLAY_INVALID);
	assert_string_equal(c.err, "replay-openb: no pod asks for a GPU: nothing to top up with\n");
	assert_int_equal(c.out_len, 0);
	cap_free(&c);

	/* A top-up beyond max_pods: 16 GPUs of 1-milli shares. */
	struct replay_nodes n;
	struct replay_pods p;
	assert_int_equal(parse_nodes(NODES_HDR "n,1000,1024,16,T4\n", &n, &c), REPLAY_OK);
	cap_free(&c);
	assert_int_equal(parse_pods(PODS_HDR "a,1,1,1,1\n", &p, &c), REPLAY_OK);
	cap_free(&c);
	struct replay_options opt = { .policy = PLC_MUSTER, .max_pods = 1000 };
	cap_open(&c);
	assert_int_equal(replay_run(&n, &p, &opt, c.fout, c.ferr), REPLAY_INVALID);
	cap_close(&c);
	assert_string_equal(c.err, "replay-openb: topping up to 130 % of 16000 milli-GPU needs "
				   "more than 1000 pods\n");
	assert_int_equal(c.out_len, 0);
	cap_free(&c);
	replay_nodes_free(&n);
	replay_pods_free(&p);
}

static void test_failures_log(void **state)
{
	struct replay_nodes n;
	struct replay_pods p;
	struct cap c;
	assert_int_equal(parse_nodes(NODES_HDR "n,64000,262144,2,P100\n", &n, &c), REPLAY_OK);
	cap_free(&c);
	assert_int_equal(parse_pods(PODS_HDR "s,1000,1024,1,600\n", &p, &c), REPLAY_OK);
	cap_free(&c);
	struct replay_options opt = { .policy = PLC_BEST_FIT, .log_failures = 1 };
	cap_open(&c);
	assert_int_equal(replay_run(&n, &p, &opt, c.fout, c.ferr), REPLAY_OK);
	cap_close(&c);
	/* Pods 3 and 4 (seq 2 and 3) fail; one JSON line each. */
	assert_non_null(strstr(c.err, "{\"failed\":\"s\",\"seq\":2,\"arrived_pct\":90.00,"
				      "\"cpu_milli\":1000,\"memory_mib\":1024,\"gpu_milli\":600,"));
	assert_non_null(strstr(c.err, "{\"failed\":\"s\",\"seq\":3,\"arrived_pct\":120.00,"));
	int lines = 0;
	for (size_t k = 0; k < c.err_len; k++)
		lines += c.err[k] == '\n';
	assert_int_equal(lines, 2);
	cap_free(&c);
	replay_nodes_free(&n);
	replay_pods_free(&p);
}

static void test_parse_policy(void **state)
{
	enum plc_policy pol = PLC_RANDOM;
	assert_int_equal(replay_parse_policy("muster", &pol), 0);
	assert_int_equal(pol, PLC_MUSTER);
	assert_int_equal(replay_parse_policy("bestfit", &pol), 0);
	assert_int_equal(pol, PLC_BEST_FIT);
	assert_int_equal(replay_parse_policy("best-fit", &pol), 0);
	assert_int_equal(pol, PLC_BEST_FIT);
	assert_int_equal(replay_parse_policy("spread", &pol), 0);
	assert_int_equal(pol, PLC_SPREAD);
	assert_int_equal(replay_parse_policy("random", &pol), 0);
	assert_int_equal(pol, PLC_RANDOM);
	assert_int_equal(replay_parse_policy("fgd", &pol), -EINVAL);
	assert_int_equal(replay_parse_policy("", &pol), -EINVAL);
}

static void test_main_usage_errors(void **state)
{
	char *a1[] = { "replay-openb", "--nodes", "n.csv", "--pods", "p.csv", NULL };
	assert_int_equal(replay_main(5, a1), REPLAY_INVALID); /* no --seed */
	char *a2[] = { "replay-openb", "--nodes", "n", "--pods", "p", "--seed", "x", NULL };
	assert_int_equal(replay_main(7, a2), REPLAY_INVALID);
	char *a3[] = { "replay-openb", "--nodes", "n", "--pods", "p", "--seed", "-1", NULL };
	assert_int_equal(replay_main(7, a3), REPLAY_INVALID);
	char *a4[] = { "replay-openb", "--policy", "fgd", NULL };
	assert_int_equal(replay_main(3, a4), REPLAY_INVALID);
	char *a5[] = { "replay-openb",
		       "--nodes",
		       "/nonexistent/n.csv",
		       "--pods",
		       "/nonexistent/p",
		       "--seed",
		       "1",
		       NULL };
	assert_int_equal(replay_main(7, a5), REPLAY_INVALID);
	char *a6[] = { "replay-openb", "--bogus", NULL };
	assert_int_equal(replay_main(2, a6), REPLAY_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes_good),
		cmocka_unit_test(test_nodes_model_optional),
		cmocka_unit_test(test_pods_good_default_columns),
		cmocka_unit_test(test_pods_good_five_columns),
		cmocka_unit_test(test_missing_columns),
		cmocka_unit_test(test_field_count),
		cmocka_unit_test(test_bad_numbers),
		cmocka_unit_test(test_huge_values),
		cmocka_unit_test(test_gpu_columns_must_agree),
		cmocka_unit_test(test_quotes_and_duplicates),
		cmocka_unit_test(test_problems_are_capped),
		cmocka_unit_test(test_protocol_cpu_bound_node),
		cmocka_unit_test(test_protocol_share_per_gpu),
		cmocka_unit_test(test_protocol_memory),
		cmocka_unit_test(test_protocol_tune_down),
		cmocka_unit_test(test_protocol_gpu_spec),
		cmocka_unit_test(test_seed_determinism),
		cmocka_unit_test(test_run_rejects_what_cannot_replay),
		cmocka_unit_test(test_failures_log),
		cmocka_unit_test(test_parse_policy),
		cmocka_unit_test(test_main_usage_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
