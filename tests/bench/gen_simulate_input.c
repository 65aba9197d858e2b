/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes a `muster simulate` input shaped like a cluster export, for bench_simulate_large.sh,
 * in one of the formats users export, the same objects in each:
 *   yaml-multi  block YAML, one document per object, small collections in flow style (the
 *               export of issue 8, and what people and generators often write);
 *   yaml-list   one `v1 List`, block YAML only, as `kubectl get -o yaml` writes it;
 *   json-multi  indented JSON, one document per object, documents separated by `---`;
 *   json-list   one `v1 List` in indented JSON, as `kubectl get -o json` writes it.
 * Two shapes:
 *   default  3 ResourceFlavors, 3 WorkloadPriorityClasses, 24 ClusterQueues in 4 cohorts
 *            (nominal quotas, borrowing and lending limits, preemption), one LocalQueue per
 *            team namespace, then N pending Workloads of mixed sizes: most with one podSet
 *            (cpu, memory), some with GPUs, some with a launcher and workers; about 30% name
 *            a priority class. About 17 MB as yaml-multi for 50,000 Workloads.
 *   large    Kueue's large-scale preset: 10 cohorts of 100 ClusterQueues (nominalQuota 20
 *            cpu, borrowingLimit 100, reclaimWithinCohort Any, withinClusterQueue
 *            LowerPriority), N Workloads spread over them, small / medium / large (1 / 5 / 20
 *            cpu, priority 50 / 100 / 200) in Kueue's ratio 7 : 2 : 1.
 * Deterministic for a seed; the objects don't depend on the format.
 *
 *   gen_simulate_input [-n WORKLOADS (50000)] [-s SEED (1)] [-f FORMAT (yaml-multi)]
 *                      [-p SHAPE (default)] > input
 *
 * Each object is built as a jansson tree and written, then freed: the generator holds one
 * object at a time, whatever the format. No part of muster is linked.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_COHORTS 4
#define CQS_PER_COHORT 6
#define N_CQS (N_COHORTS * CQS_PER_COHORT)

#define LARGE_COHORTS 10
#define LARGE_CQS_PER_COHORT 100
#define LARGE_CQS (LARGE_COHORTS * LARGE_CQS_PER_COHORT)

/* A collection whose flow text fits in this many characters is written flow style in
 * yaml-multi (as the export of issue 8 was); yaml-list writes block style only. */
#define FLOW_WIDTH 100

enum format { YAML_MULTI, YAML_LIST, JSON_MULTI, JSON_LIST };

static enum format format;
static unsigned long n_objects; /* written so far: the first has no separator before it */
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

static void die(const char *what)
{
	fprintf(stderr, "gen_simulate_input: %s\n", what);
	exit(1);
}

/* ------------------------------------------------------------------------------ YAML */

/* Whether s can be written plain: YAML's core schema would read it back as the same string
 * (not a number, bool or null), and it holds no indicator. */
static int yaml_plain_ok(const char *s)
{
	static const char *const words[] = { "null", "Null", "NULL",  "~",     "true",
					     "True", "TRUE", "false", "False", "FALSE" };
	if (!*s || *s == '-' || *s == '.')
		return 0;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(s, words[i]))
			return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '/' || *p == '-'))
			return 0;
	char *end;
	(void)strtod(s, &end);
	return *end != '\0'; /* a number's text is quoted */
}

static void yaml_scalar(FILE *f, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING: {
		const char *s = json_string_value(v);
		if (yaml_plain_ok(s)) {
			fputs(s, f);
			break;
		}
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"' || *s == '\\')
				fputc('\\', f);
			fputc(*s, f);
		}
		fputc('"', f);
		break;
	}
	case JSON_INTEGER:
		fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		fprintf(f, "%.17g", json_real_value(v));
		break;
	case JSON_TRUE:
		fputs("true", f);
		break;
	case JSON_FALSE:
		fputs("false", f);
		break;
	default:
		fputs("null", f);
		break;
	}
}

static void yaml_flow(FILE *f, const json_t *v)
{
	const char *key;
	json_t *x;
	size_t i;
	int first = 1;
	if (json_is_object(v)) {
		fputc('{', f);
		json_object_foreach((json_t *)v, key, x)
		{
			fprintf(f, "%s%s: ", first ? "" : ", ", key);
			yaml_flow(f, x);
			first = 0;
		}
		fputc('}', f);
	} else if (json_is_array(v)) {
		fputc('[', f);
		json_array_foreach(v, i, x)
		{
			fputs(first ? "" : ", ", f);
			yaml_flow(f, x);
			first = 0;
		}
		fputc(']', f);
	} else {
		yaml_scalar(f, v);
	}
}

/* Whether v is written flow style: a scalar, an empty collection, or (yaml-multi) one whose
 * flow text is short. */
static int yaml_inline(const json_t *v)
{
	if (!json_is_object(v) && !json_is_array(v))
		return 1;
	if ((json_is_object(v) ? json_object_size(v) : json_array_size(v)) == 0)
		return 1;
	if (format != YAML_MULTI)
		return 0;
	char buf[FLOW_WIDTH + 1];
	FILE *m = fmemopen(buf, sizeof(buf), "w");
	if (!m)
		die("out of memory");
	yaml_flow(m, v);
	long len = ftell(m);
	fclose(m);
	return len < FLOW_WIDTH;
}

static void indent(FILE *f, int n)
{
	fprintf(f, "%*s", n, "");
}

static void yaml_block(FILE *f, const json_t *v, int col, int first_done);

/* The members of a mapping whose keys are at column col; the first key's column is already
 * written when first_done is set (after "- "). */
static void yaml_map(FILE *f, const json_t *v, int col, int first_done)
{
	const char *key;
	json_t *x;
	json_object_foreach((json_t *)v, key, x)
	{
		if (!first_done)
			indent(f, col);
		first_done = 0;
		fprintf(f, "%s:", key);
		if (yaml_inline(x)) {
			fputc(' ', f);
			yaml_flow(f, x);
			fputc('\n', f);
		} else {
			fputc('\n', f);
			/* A list at its key's column, as kubectl writes it. */
			yaml_block(f, x, json_is_array(x) ? col : col + 2, 0);
		}
	}
}

static void yaml_block(FILE *f, const json_t *v, int col, int first_done)
{
	json_t *x;
	size_t i;
	if (json_is_object(v)) {
		yaml_map(f, v, col, first_done);
		return;
	}
	json_array_foreach(v, i, x)
	{
		if (!first_done)
			indent(f, col);
		first_done = 0;
		fputs("- ", f);
		if (yaml_inline(x)) {
			yaml_flow(f, x);
			fputc('\n', f);
		} else {
			yaml_block(f, x, col + 2, 1);
		}
	}
}

/* ------------------------------------------------------------------------------ JSON */

/* The object as indented JSON, every line after the first indented by more. */
static void json_indented(FILE *f, const json_t *v, int more)
{
	char *text = json_dumps(v, JSON_INDENT(4) | JSON_PRESERVE_ORDER);
	if (!text)
		die("out of memory");
	for (const char *p = text; *p; p++) {
		fputc(*p, f);
		if (*p == '\n')
			indent(f, more);
	}
	free(text);
}

/* ------------------------------------------------------------------------------ output */

static void begin(FILE *f)
{
	if (format == YAML_LIST)
		fputs("apiVersion: v1\nitems:\n", f);
	else if (format == JSON_LIST)
		fputs("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n", f);
}

/* Writes one object in the format and frees it. */
static void emit(FILE *f, json_t *obj)
{
	if (!obj)
		die("out of memory");
	switch (format) {
	case YAML_MULTI:
		fputs("---\n", f);
		yaml_block(f, obj, 0, 0);
		break;
	case YAML_LIST:
		fputs("- ", f);
		yaml_block(f, obj, 2, 1);
		break;
	case JSON_MULTI:
		if (n_objects)
			fputs("---\n", f);
		json_indented(f, obj, 0);
		fputc('\n', f);
		break;
	case JSON_LIST:
		fputs(n_objects ? ",\n        " : "        ", f);
		json_indented(f, obj, 8);
		break;
	}
	n_objects++;
	json_decref(obj);
}

static void end(FILE *f)
{
	if (format == YAML_LIST)
		fputs("kind: List\nmetadata:\n  resourceVersion: \"\"\n", f);
	else if (format == JSON_LIST)
		fputs("\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n"
		      "        \"resourceVersion\": \"\"\n    }\n}\n",
		      f);
}

/* ------------------------------------------------------------------------------ objects */

static json_t *object(const char *kind, json_t *metadata)
{
	return json_pack("{s:s, s:s, s:o}", "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", kind,
			 "metadata", metadata);
}

static json_t *flavor(const char *name, const char *label, const char *value)
{
	json_t *o = object("ResourceFlavor", json_pack("{s:s}", "name", name));
	json_object_set_new(o, "spec", json_pack("{s:{s:s}}", "nodeLabels", label, value));
	return o;
}

static json_t *priority_class(const char *name, int value)
{
	json_t *o = object("WorkloadPriorityClass", json_pack("{s:s}", "name", name));
	json_object_set_new(o, "value", json_integer(value));
	return o;
}

static json_t *local_queue(const char *ns, const char *cq)
{
	json_t *o = object("LocalQueue",
			   json_pack("{s:s, s:s}", "name", "user-queue", "namespace", ns));
	json_object_set_new(o, "spec", json_pack("{s:s}", "clusterQueue", cq));
	return o;
}

static json_t *cluster_queue(const char *name, const char *cohort, json_t *groups)
{
	json_t *o = object("ClusterQueue", json_pack("{s:s}", "name", name));
	json_t *spec = json_pack("{s:s, s:{}, s:{s:s, s:s}, s:o}", "cohortName", cohort,
				 "namespaceSelector", "preemption", "reclaimWithinCohort", "Any",
				 "withinClusterQueue", "LowerPriority", "resourceGroups", groups);
	json_object_set_new(o, "spec", spec);
	return o;
}

/* A quantity as the export writes it: a whole number of cores is a number, else text. */
static json_t *quantity(const char *text)
{
	char *end;
	long v = strtol(text, &end, 10);
	return *end ? json_string(text) : json_integer(v);
}

static json_t *workload(const char *name, const char *ns, const char *created,
			const char *priority_class_name, json_t *pod_sets)
{
	json_t *o = object("Workload", json_pack("{s:s, s:s, s:s}", "name", name, "namespace", ns,
						 "creationTimestamp", created));
	json_t *spec = json_pack("{s:s}", "queueName", "user-queue");
	if (priority_class_name)
		json_object_set_new(spec, "priorityClassRef",
				    json_pack("{s:s, s:s, s:s}", "group", "kueue.x-k8s.io", "kind",
					      "WorkloadPriorityClass", "name",
					      priority_class_name));
	json_object_set_new(spec, "podSets", pod_sets);
	json_object_set_new(o, "spec", spec);
	return o;
}

/* One podSet: count 0 leaves it out (1 is the default: exports omit it or not). */
static json_t *pod_set(const char *name, unsigned count, const char *container, json_t *requests)
{
	json_t *ps = json_pack("{s:s}", "name", name);
	if (count)
		json_object_set_new(ps, "count", json_integer(count));
	json_object_set_new(ps, "template",
			    json_pack("{s:{s:[{s:s, s:{s:o}}]}}", "spec", "containers", "name",
				      container, "resources", "requests", requests));
	return ps;
}

/* One LocalQueue "user-queue" per ClusterQueue cq-NN, in namespace PREFIX-NN. */
static void local_queues(FILE *f, unsigned n, const char *prefix, int digits)
{
	char name[32], ns[32];
	for (unsigned q = 0; q < n; q++) {
		snprintf(ns, sizeof(ns), "%s-%0*u", prefix, digits, q);
		snprintf(name, sizeof(name), "cq-%0*u", digits, q);
		emit(f, local_queue(ns, name));
	}
}

/* "2025-03-DDTHH:MM:SSZ" for a count of seconds from 2025-03-01T00:00:00Z. */
static void timestamp(char *buf, size_t size, unsigned secs)
{
	snprintf(buf, size, "2025-03-%02uT%02u:%02u:%02uZ", 1 + secs / 86400, secs / 3600 % 24,
		 secs / 60 % 60, secs % 60);
}

static void default_config(FILE *f)
{
	static const char *const wpcs[] = { "low", "medium", "high" };
	static const int values[] = { 100, 500, 1000 };
	char name[32], cohort[32];

	emit(f, flavor("on-demand", "cloud.example.com/capacity", "on-demand"));
	emit(f, flavor("spot", "cloud.example.com/capacity", "spot"));
	emit(f, flavor("a100", "cloud.example.com/gpu", "a100"));
	for (size_t i = 0; i < 3; i++)
		emit(f, priority_class(wpcs[i], values[i]));
	for (unsigned q = 0; q < N_CQS; q++) {
		/* Mixed quotas: some queues only borrow, some lend most of theirs. */
		unsigned cpu = q % 8 == 0 ? 0 : 40 + 20 * below(10);
		unsigned spot = 20 + 10 * below(8);
		unsigned gpus = q % 3 == 0 ? 8 * (1 + below(4)) : 0;
		char mem[32], mem_limit[32], spot_mem[32];
		snprintf(mem, sizeof(mem), "%uGi", 4 * cpu);
		snprintf(mem_limit, sizeof(mem_limit), "%uGi", 4 * (cpu + 100));
		snprintf(spot_mem, sizeof(spot_mem), "%uGi", 4 * spot);
		json_t *groups =
			json_pack("[{s:[s,s], s:[{s:s, s:[{s:s, s:i, s:i}, {s:s, s:s, s:s}]},"
				  " {s:s, s:[{s:s, s:i, s:i}, {s:s, s:s}]}]},"
				  " {s:[s], s:[{s:s, s:[{s:s, s:i, s:i}]}]}]",
				  "coveredResources", "cpu", "memory", "flavors", "name",
				  "on-demand", "resources", "name", "cpu", "nominalQuota", (int)cpu,
				  "borrowingLimit", (int)cpu + 100, "name", "memory",
				  "nominalQuota", mem, "borrowingLimit", mem_limit, "name", "spot",
				  "resources", "name", "cpu", "nominalQuota", (int)spot,
				  "lendingLimit", (int)spot / 2, "name", "memory", "nominalQuota",
				  spot_mem, "coveredResources", "nvidia.com/gpu", "flavors", "name",
				  "a100", "resources", "name", "nvidia.com/gpu", "nominalQuota",
				  (int)gpus, "borrowingLimit", 16);
		snprintf(name, sizeof(name), "cq-%02u", q);
		snprintf(cohort, sizeof(cohort), "cohort-%u", q / CQS_PER_COHORT);
		emit(f, cluster_queue(name, cohort, groups));
	}
	local_queues(f, N_CQS, "team", 2);
}

/* One container's requests. */
static json_t *requests(unsigned gpus)
{
	static const char *const cpus[] = { "250m", "500m", "1", "1500m", "2", "4", "8" };
	static const char *const mems[] = { "512Mi", "1Gi", "2Gi", "4Gi", "8Gi", "16Gi" };
	/* One draw per statement: argument evaluation order is unspecified. */
	const char *cpu = cpus[below(7)];
	const char *mem = mems[below(6)];
	json_t *r = json_pack("{s:o, s:s}", "cpu", quantity(cpu), "memory", mem);
	if (gpus)
		json_object_set_new(r, "nvidia.com/gpu", json_integer(gpus));
	return r;
}

static void default_workload(FILE *f, unsigned i)
{
	static const char *const classes[] = { "low", "medium", "high" };
	static unsigned secs; /* creation times one to three seconds apart */
	char name[32], ns[32], created[32];
	unsigned team = below(N_CQS);
	unsigned kind = below(100);
	secs += 1 + below(3);
	snprintf(name, sizeof(name), "wl-%06u", i);
	snprintf(ns, sizeof(ns), "team-%02u", team);
	timestamp(created, sizeof(created), secs);
	const char *cls = below(10) < 3 ? classes[below(3)] : NULL;
	json_t *sets = json_array();
	if (kind < 10) {
		/* MPI-style: a launcher and a gang of workers. */
		json_array_append_new(sets, pod_set("launcher", 0, "l", requests(0)));
		unsigned count = 2 + below(15);
		json_array_append_new(sets, pod_set("workers", count, "w",
						    requests(kind < 3 ? 1 + below(8) : 0)));
	} else {
		unsigned count = 1 + below(kind < 80 ? 4 : 8);
		if (count == 1 && !below(2))
			count = 0;
		json_array_append_new(sets, pod_set("main", count, "c",
						    requests(kind >= 88 ? 1 + below(4) : 0)));
	}
	emit(f, workload(name, ns, created, cls, sets));
}

static void large_config(FILE *f)
{
	static const char *const wpcs[] = { "small", "medium", "large" };
	static const int values[] = { 50, 100, 200 };
	char name[32], cohort[32];

	emit(f, flavor("default", "cloud.example.com/pool", "default"));
	for (size_t i = 0; i < 3; i++)
		emit(f, priority_class(wpcs[i], values[i]));
	for (unsigned q = 0; q < LARGE_CQS; q++) {
		json_t *groups = json_pack("[{s:[s], s:[{s:s, s:[{s:s, s:i, s:i}]}]}]",
					   "coveredResources", "cpu", "flavors", "name", "default",
					   "resources", "name", "cpu", "nominalQuota", 20,
					   "borrowingLimit", 100);
		snprintf(name, sizeof(name), "cq-%03u", q);
		snprintf(cohort, sizeof(cohort), "cohort-%u", q / LARGE_CQS_PER_COHORT);
		emit(f, cluster_queue(name, cohort, groups));
	}
	local_queues(f, LARGE_CQS, "ns", 3);
}

static void large_workload(FILE *f, unsigned i)
{
	static const char *const classes[] = { "small", "medium", "large" };
	static const int cpus[] = { 1, 5, 20 };
	char name[32], ns[32], created[32];
	unsigned draw = below(10); /* 7 : 2 : 1 */
	unsigned cls = draw < 7 ? 0 : draw < 9 ? 1 : 2;
	snprintf(name, sizeof(name), "%s-%06u", classes[cls], i);
	snprintf(ns, sizeof(ns), "ns-%03u", i % LARGE_CQS);
	timestamp(created, sizeof(created), i / 10);
	json_t *sets = json_array();
	json_array_append_new(sets, pod_set("main", 0, "c", json_pack("{s:i}", "cpu", cpus[cls])));
	emit(f, workload(name, ns, created, classes[cls], sets));
}

int main(int argc, char **argv)
{
	static const char *const formats[] = { "yaml-multi", "yaml-list", "json-multi",
					       "json-list" };
	unsigned long n = 50000, seed = 1;
	const char *fmt = "yaml-multi", *shape = "default";
	int opt;
	while ((opt = getopt(argc, argv, "n:s:f:p:")) != -1) {
		switch (opt) {
		case 'n':
			n = strtoul(optarg, NULL, 10);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 10);
			break;
		case 'f':
			fmt = optarg;
			break;
		case 'p':
			shape = optarg;
			break;
		default:
			goto usage;
		}
	}
	size_t k;
	for (k = 0; k < 4 && strcmp(fmt, formats[k]); k++)
		;
	if (k == 4 || (strcmp(shape, "default") && strcmp(shape, "large")))
		goto usage;
	format = (enum format)k;
	int large = !strcmp(shape, "large");
	rng_state = seed;
	begin(stdout);
	if (large)
		large_config(stdout);
	else
		default_config(stdout);
	for (unsigned long i = 0; i < n; i++) {
		if (large)
			large_workload(stdout, (unsigned)i);
		else
			default_workload(stdout, (unsigned)i);
	}
	end(stdout);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("gen_simulate_input");
		return 1;
	}
	return 0;
usage:
	fprintf(stderr,
		"usage: %s [-n WORKLOADS] [-s SEED] [-f yaml-multi|yaml-list|json-multi|json-list]"
		" [-p default|large]\n",
		argv[0]);
	return 2;
}
