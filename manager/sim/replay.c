/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/replay.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/quota.h"
#include "core/strmap.h"
#include "sim/csv.h"
#include "util/flags.h"

#define MIB_MILLI (INT64_C(1048576) * 1000) /* one MiB in milli-bytes */
#define DEFAULT_TARGET_PCT 130
/* The artifact's podPopularityThreshold: its typical pods cover this percentage of all pods. */
#define MIX_COVER_PCT 95

/* ------------------------------------------------------------------------------ nodes */

void replay_nodes_free(struct replay_nodes *n)
{
	for (size_t i = 0; i < n->n; i++) {
		free(n->v[i].name);
		free(n->v[i].model);
	}
	free(n->v);
	n->v = NULL;
	n->n = 0;
}

enum { NC_SN, NC_CPU, NC_MEM, NC_GPU, NC_MODEL, NC_COUNT };

int replay_parse_nodes(const char *name, const char *data, size_t len, struct replay_nodes *out,
		       FILE *errout)
{
	struct csv_column cols[NC_COUNT] = {
		[NC_SN] = { "sn", 1, -1 },          [NC_CPU] = { "cpu_milli", 1, -1 },
		[NC_MEM] = { "memory_mib", 1, -1 }, [NC_GPU] = { "gpu", 1, -1 },
		[NC_MODEL] = { "model", 0, -1 },
	};
	struct csv *c = malloc(sizeof(*c));
	struct strmap names;
	size_t cap = 0, width;
	int oom = 0;
	out->n = 0;
	out->v = NULL;
	strmap_init(&names);
	if (!c)
		return REPLAY_FAILED;
	int rc = csv_start(c, name, data, len, errout, cols, NC_COUNT, &width);
	oom = rc == -ENOMEM;
	while (rc == 0 && csv_row(c, width, out->n, REPLAY_MAX_NODES, "nodes")) {
		struct replay_node nd = { .line = c->line };
		int64_t gpus = 0;
		int before = c->problems;
		nd.name = csv_text(c, &c->fields[cols[NC_SN].index], "sn", 0);
		csv_int(c, &c->fields[cols[NC_CPU].index], "cpu_milli", REPLAY_MAX_CPU_MILLI,
			&nd.cpu_milli);
		csv_int(c, &c->fields[cols[NC_MEM].index], "memory_mib", REPLAY_MAX_MEMORY_MIB,
			&nd.memory_mib);
		csv_int(c, &c->fields[cols[NC_GPU].index], "gpu", PLC_MAX_GPUS, &gpus);
		nd.gpus = (int)gpus;
		if (cols[NC_MODEL].index >= 0)
			nd.model = csv_text(c, &c->fields[cols[NC_MODEL].index], "model", 1);
		else
			nd.model = strdup("");
		if (c->problems == before && (!nd.name || !nd.model))
			oom = 1;
		if (c->problems == before && !oom) {
			/* The map holds index + 1: out->v moves as it grows. */
			uintptr_t dup = (uintptr_t)strmap_get(&names, nd.name);
			if (dup) {
				csv_problem(c, c->line, "node %s is already on line %d", nd.name,
					    out->v[dup - 1].line);
			} else if (GROW(out->v, cap, out->n + 1) != 0) {
				oom = 1;
			}
		}
		if (c->problems != before || oom) {
			free(nd.name);
			free(nd.model);
			if (oom)
				break;
			continue;
		}
		out->v[out->n++] = nd;
		if (strmap_put(&names, nd.name, (void *)(uintptr_t)out->n, NULL) != 0) {
			oom = 1;
			break;
		}
	}
	strmap_release(&names, NULL);
	int status = csv_finish(c) ? REPLAY_INVALID : REPLAY_OK;
	if (!oom && status == REPLAY_OK && out->n == 0) {
		fprintf(errout, "%s: no nodes\n", name);
		status = REPLAY_INVALID;
	}
	free(c);
	if (oom)
		status = REPLAY_FAILED;
	if (status != REPLAY_OK)
		replay_nodes_free(out);
	return status;
}

/* ------------------------------------------------------------------------------- pods */

void replay_pods_free(struct replay_pods *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].gpu_spec);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

int64_t replay_pod_gpu(const struct replay_pod *p)
{
	if (p->num_gpu <= 0)
		return 0;
	if (p->num_gpu == 1)
		return p->gpu_milli;
	return (int64_t)p->num_gpu * 1000;
}

enum { PC_NAME, PC_CPU, PC_MEM, PC_NGPU, PC_GMILLI, PC_SPEC, PC_COUNT };

/* The GPU columns must agree: what a pod asks for must be unambiguous. 0 or -1 (reported). */
static int check_gpu(struct csv *c, const struct replay_pod *p)
{
	if (p->num_gpu == 0 && p->gpu_milli != 0) {
		csv_problem(c, c->line, "gpu_milli %" PRId64 " without a GPU (num_gpu 0)",
			    p->gpu_milli);
		return -1;
	}
	if (p->num_gpu == 1 && p->gpu_milli == 0) {
		csv_problem(c, c->line, "num_gpu 1 with gpu_milli 0");
		return -1;
	}
	if (p->num_gpu > 1 && p->gpu_milli != 1000) {
		csv_problem(c, c->line,
			    "num_gpu %d with gpu_milli %" PRId64
			    ": a multi-GPU pod takes whole GPUs (1000)",
			    p->num_gpu, p->gpu_milli);
		return -1;
	}
	return 0;
}

int replay_parse_pods(const char *name, const char *data, size_t len, struct replay_pods *out,
		      FILE *errout)
{
	struct csv_column cols[PC_COUNT] = {
		[PC_NAME] = { "name", 1, -1 },        [PC_CPU] = { "cpu_milli", 1, -1 },
		[PC_MEM] = { "memory_mib", 1, -1 },   [PC_NGPU] = { "num_gpu", 1, -1 },
		[PC_GMILLI] = { "gpu_milli", 1, -1 }, [PC_SPEC] = { "gpu_spec", 0, -1 },
	};
	struct csv *c = malloc(sizeof(*c));
	size_t cap = 0, width;
	int oom = 0;
	out->n = 0;
	out->v = NULL;
	if (!c)
		return REPLAY_FAILED;
	int rc = csv_start(c, name, data, len, errout, cols, PC_COUNT, &width);
	oom = rc == -ENOMEM;
	while (rc == 0 && csv_row(c, width, out->n, REPLAY_MAX_PODS, "pods")) {
		struct replay_pod pd = { .line = c->line };
		int64_t ngpu = 0;
		int before = c->problems;
		pd.name = csv_text(c, &c->fields[cols[PC_NAME].index], "name", 0);
		csv_int(c, &c->fields[cols[PC_CPU].index], "cpu_milli", REPLAY_MAX_CPU_MILLI,
			&pd.cpu_milli);
		csv_int(c, &c->fields[cols[PC_MEM].index], "memory_mib", REPLAY_MAX_MEMORY_MIB,
			&pd.memory_mib);
		int ok = csv_int(c, &c->fields[cols[PC_NGPU].index], "num_gpu", REPLAY_MAX_POD_GPUS,
				 &ngpu) == 0;
		ok &= csv_int(c, &c->fields[cols[PC_GMILLI].index], "gpu_milli", 1000,
			      &pd.gpu_milli) == 0;
		pd.num_gpu = (int)ngpu;
		if (ok)
			check_gpu(c, &pd);
		if (cols[PC_SPEC].index >= 0)
			pd.gpu_spec = csv_text(c, &c->fields[cols[PC_SPEC].index], "gpu_spec", 1);
		else
			pd.gpu_spec = strdup("");
		if (c->problems == before && (!pd.name || !pd.gpu_spec))
			oom = 1;
		if (c->problems == before && !oom && GROW(out->v, cap, out->n + 1) != 0)
			oom = 1;
		if (c->problems != before || oom) {
			free(pd.name);
			free(pd.gpu_spec);
			if (oom)
				break;
			continue;
		}
		out->v[out->n++] = pd;
	}
	int status = csv_finish(c) ? REPLAY_INVALID : REPLAY_OK;
	if (!oom && status == REPLAY_OK && out->n == 0) {
		fprintf(errout, "%s: no pods\n", name);
		status = REPLAY_INVALID;
	}
	free(c);
	if (oom)
		status = REPLAY_FAILED;
	if (status != REPLAY_OK)
		replay_pods_free(out);
	return status;
}

/* ---------------------------------------------------------------------------- protocol */

int replay_parse_policy(const char *s, enum plc_policy *out)
{
	if (!strcmp(s, "muster"))
		*out = PLC_MUSTER;
	else if (!strcmp(s, "bestfit") || !strcmp(s, "best-fit"))
		*out = PLC_BEST_FIT;
	else if (!strcmp(s, "spread"))
		*out = PLC_SPREAD;
	else if (!strcmp(s, "random"))
		*out = PLC_RANDOM;
	else
		return -EINVAL;
	return 0;
}

/* splitmix64: small, seedable with any value, and good enough to shuffle and sample. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in 0..n-1 (n > 0), without modulo bias. */
static uint64_t rng_below(uint64_t *s, uint64_t n)
{
	uint64_t threshold = (0 - n) % n; /* 2^64 mod n */
	uint64_t x;
	do
		x = rng_next(s);
	while (x < threshold);
	return x % n;
}

struct name_idx {
	const char *name;
	size_t idx;
};

static int cmp_name_idx(const void *a, const void *b)
{
	const struct name_idx *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

struct shape_count {
	int64_t cpu, gpu;
	size_t count;
};

static int cmp_shape(const void *a, const void *b)
{
	const struct shape_count *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return 0;
}

static int cmp_shape_popular(const void *a, const void *b)
{
	const struct shape_count *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return cmp_shape(a, b);
}

/* The artifact's typical pods (see replay.h) as the placement module's mix: the most frequent
 * (cpu, GPU) shapes of the pod list that together cover MIX_COVER_PCT of its pods, each
 * weighted by its count. */
static int set_mix(struct placement *p, const struct replay_pods *pods)
{
	struct shape_count *v = malloc(pods->n * sizeof(*v));
	struct plc_shape shapes[REPLAY_MAX_SHAPES];
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < pods->n; i++)
		v[i] = (struct shape_count){ pods->v[i].cpu_milli, replay_pod_gpu(&pods->v[i]), 1 };
	qsort(v, pods->n, sizeof(*v), cmp_shape);
	size_t n = 0;
	for (size_t i = 0; i < pods->n; i++) {
		if (n > 0 && !cmp_shape(&v[n - 1], &v[i]))
			v[n - 1].count++;
		else
			v[n++] = v[i];
	}
	qsort(v, n, sizeof(*v), cmp_shape_popular);
	size_t k = 0, covered = 0;
	while (k < n && k < REPLAY_MAX_SHAPES && covered * 100 < pods->n * MIX_COVER_PCT)
		covered += v[k++].count;
	for (size_t i = 0; i < k; i++)
		shapes[i] = (struct plc_shape){ v[i].cpu, v[i].gpu, (double)v[i].count };
	free(v);
	return placement_set_mix(p, shapes, k);
}

static const char *const res_names[] = { "cpu", "memory", REPLAY_GPU_RESOURCE };

static int add_nodes(struct placement *p, const struct replay_nodes *nodes)
{
	for (size_t i = 0; i < nodes->n; i++) {
		const struct replay_node *nd = &nodes->v[i];
		int64_t alloc[3] = { nd->cpu_milli, nd->memory_mib * MIB_MILLI,
				     (int64_t)nd->gpus * 1000 };
		/* quota_kv's strings aren't const, but placement_set_node only copies them. */
		struct quota_kv label = { (char *)REPLAY_MODEL_LABEL, nd->model };
		struct plc_node_spec spec = {
			.name = nd->name,
			.n_labels = nd->model[0] ? 1 : 0,
			.labels = &label,
			.schedulable = 1,
			.n_resources = nd->gpus > 0 ? 3 : 2,
			.resources = res_names,
			.allocatable = alloc,
		};
		int rc = placement_set_node(p, &spec);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Writes s as a JSON string (names are printable ASCII; why-messages may be anything). */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(f, "\\u%04x", ch < 0x20 ? ch : '?');
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

struct run {
	struct placement *p;
	const struct replay_options *opt;
	int target;
	int64_t capacity; /* milli-GPU */
	int64_t arrived; /* milli-GPU asked for by the pods attempted so far */
	size_t failed;
	int next_pct; /* the next line to print */
	FILE *out, *errout;
};

static void print_line(struct run *r)
{
	struct plc_totals t;
	placement_totals(r->p, &t);
	double alloc =
		t.gpu_capacity > 0 ? 100.0 * (double)t.gpu_allocated / (double)t.gpu_capacity : 0.0;
	fprintf(r->out,
		"{\"arrived_pct\":%d,\"allocated_gpu_pct\":%.2f,\"free_8gpu_nodes\":%zu,"
		"\"failed_pods\":%zu}\n",
		r->next_pct, alloc, t.free_8gpu_nodes, r->failed);
	r->next_pct++;
}

/* Prints every percent that arrivals have reached (all that remain, when final). */
static void print_reached(struct run *r, int final)
{
	while (r->next_pct <= r->target &&
	       (final || r->arrived * 100 >= (int64_t)r->next_pct * r->capacity))
		print_line(r);
}

/* One pod's one attempt. 0 placed or failed, or -errno from the placement module. */
static int attempt(struct run *r, const struct replay_pod *pd, size_t seq)
{
	int64_t gpu = replay_pod_gpu(pd);
	int64_t req[3] = { pd->cpu_milli, pd->memory_mib * MIB_MILLI, gpu };
	char key[48], spec[REPLAY_MAX_NAME + 1], why[256];
	const char *models[REPLAY_MAX_NAME / 2 + 1];
	struct quota_match_expr expr = { REPLAY_MODEL_LABEL, "In", 0, models };
	struct quota_affinity_term term = { 1, &expr, 0 };
	struct quota_podset ps = {
		.count = 1,
		.n_requests = gpu > 0 ? 3 : 2,
		.resources = res_names,
		.per_pod = req,
	};
	/* The artifact's GPU-model filter applies to GPU pods only; empty models are dropped. */
	if (gpu > 0 && pd->gpu_spec[0]) {
		snprintf(spec, sizeof(spec), "%s", pd->gpu_spec);
		size_t n = 0;
		for (char *tok = strtok(spec, "|"); tok; tok = strtok(NULL, "|"))
			models[n++] = tok;
		if (n > 0) {
			expr.n_values = n;
			ps.n_terms = 1;
			ps.terms = &term;
		}
	}
	snprintf(key, sizeof(key), "replay/%zu", seq);
	struct plc_request req_ = {
		.workload = key,
		.podset = "main",
		.count = 1,
		.pod = &ps,
		.policy = r->opt->policy,
	};
	struct plc_plan plan;
	why[0] = '\0';
	int rc = placement_plan(r->p, &req_, &plan, why, sizeof(why));
	r->arrived += gpu;
	if (rc < 0)
		return rc;
	if (rc == 0 && (plan.n_slots == 0 || !plan.slots[0].node || plan.slots[0].count < 1))
		return -EPROTO; /* a plan for one pod that places none */
	if (rc == 1) {
		r->failed++;
		if (r->opt->log_failures) {
			fprintf(r->errout, "{\"failed\":");
			json_str(r->errout, pd->name);
			fprintf(r->errout,
				",\"seq\":%zu,\"arrived_pct\":%.2f,\"cpu_milli\":%" PRId64
				",\"memory_mib\":%" PRId64 ",\"gpu_milli\":%" PRId64 ",\"why\":",
				seq, 100.0 * (double)r->arrived / (double)r->capacity,
				pd->cpu_milli, pd->memory_mib, gpu);
			json_str(r->errout, why);
			fprintf(r->errout, "}\n");
		}
		return 0;
	}
	struct plc_pod_spec bind = {
		.key = key,
		.node = plan.slots[0].node,
		.n_resources = ps.n_requests,
		.resources = res_names,
		.requests = req,
	};
	return placement_bind_pod(r->p, &bind);
}

/* The arrival sequence (indices into pods): sorted by name, shuffled, tuned to the target. */
static int arrivals(const struct replay_pods *pods, const struct replay_options *opt, int target,
		    int64_t capacity, size_t max_pods, size_t **out, size_t *n_out, FILE *errout)
{
	uint64_t rng = opt->seed;
	size_t n = pods->n;
	struct name_idx *byname = malloc(n * sizeof(*byname));
	size_t *sorted = malloc(n * sizeof(*sorted));
	size_t *seq = NULL;
	unsigned char *gone = NULL;
	int status = REPLAY_FAILED;
	if (!byname || !sorted)
		goto out;
	for (size_t i = 0; i < n; i++)
		byname[i] = (struct name_idx){ pods->v[i].name, i };
	qsort(byname, n, sizeof(*byname), cmp_name_idx);
	for (size_t i = 0; i < n; i++)
		sorted[i] = byname[i].idx;

	size_t cap = n > 1024 ? n : 1024, len = n;
	seq = malloc(cap * sizeof(*seq));
	if (!seq)
		goto out;
	memcpy(seq, sorted, n * sizeof(*seq));
	for (size_t i = n; i > 1; i--) { /* Fisher-Yates, as Go's rand.Shuffle */
		size_t j = (size_t)rng_below(&rng, i);
		size_t t = seq[i - 1];
		seq[i - 1] = seq[j];
		seq[j] = t;
	}

	int64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += replay_pod_gpu(&pods->v[i]);
	if (total == 0) {
		fprintf(errout, "replay-openb: no pod asks for a GPU: nothing to top up with\n");
		status = REPLAY_INVALID;
		goto out;
	}
	const int64_t goal = (int64_t)target * capacity; /* compared with total * 100 */
	if (total * 100 > goal) {
		/* Remove pods drawn uniformly from those left (a draw that hits a removed one is
		 * drawn again: the same distribution, without an O(n) removal each time). */
		gone = calloc(n, 1);
		if (!gone)
			goto out;
		while (total * 100 > goal) {
			size_t i = (size_t)rng_below(&rng, n);
			if (gone[i])
				continue;
			gone[i] = 1;
			total -= replay_pod_gpu(&pods->v[seq[i]]);
		}
		len = 0;
		for (size_t i = 0; i < n; i++)
			if (!gone[i])
				seq[len++] = seq[i];
	} else {
		for (;;) {
			const struct replay_pod *pd = &pods->v[sorted[rng_below(&rng, n)]];
			/* The artifact's test: the draw's per-GPU share, not its whole request. */
			if ((total + pd->gpu_milli) * 100 > goal)
				break;
			if (len == max_pods) {
				fprintf(errout,
					"replay-openb: topping up to %d %% of %" PRId64
					" milli-GPU needs more than %zu pods\n",
					target, capacity, max_pods);
				status = REPLAY_INVALID;
				goto out;
			}
			if (GROW(seq, cap, len + 1) != 0)
				goto out;
			seq[len++] = (size_t)(pd - pods->v);
			total += replay_pod_gpu(pd);
		}
	}
	if (len > max_pods) {
		fprintf(errout, "replay-openb: more than %zu pods to replay\n", max_pods);
		status = REPLAY_INVALID;
		goto out;
	}
	*out = seq;
	*n_out = len;
	seq = NULL;
	status = REPLAY_OK;
out:
	free(byname);
	free(sorted);
	free(seq);
	free(gone);
	return status;
}

int replay_run(const struct replay_nodes *nodes, const struct replay_pods *pods,
	       const struct replay_options *opt, FILE *out, FILE *errout)
{
	struct run r = {
		.opt = opt,
		.target = opt->target_pct > 0 ? opt->target_pct : DEFAULT_TARGET_PCT,
		.out = out,
		.errout = errout,
	};
	size_t max_pods = opt->max_pods ? opt->max_pods : REPLAY_MAX_PODS;
	size_t *seq = NULL, n_seq = 0;
	int rc, status;
	for (size_t i = 0; i < nodes->n; i++)
		r.capacity += (int64_t)nodes->v[i].gpus * 1000;
	if (r.capacity == 0) {
		fprintf(errout, "replay-openb: the nodes have no GPU\n");
		return REPLAY_INVALID;
	}
	if (pods->n == 0) {
		fprintf(errout, "replay-openb: no pods\n");
		return REPLAY_INVALID;
	}
	status = arrivals(pods, opt, r.target, r.capacity, max_pods, &seq, &n_seq, errout);
	if (status != REPLAY_OK)
		return status;

	if ((rc = placement_new(&r.p)) < 0)
		goto failed;
	if ((rc = placement_set_gpu_resource(r.p, REPLAY_GPU_RESOURCE)) < 0)
		goto failed;
	placement_set_seed(r.p, opt->seed);
	if ((rc = set_mix(r.p, pods)) < 0 || (rc = add_nodes(r.p, nodes)) < 0)
		goto failed;
	print_reached(&r, 0);
	for (size_t i = 0; i < n_seq; i++) {
		if ((rc = attempt(&r, &pods->v[seq[i]], i)) < 0)
			goto failed;
		print_reached(&r, 0);
	}
	print_reached(&r, 1);
	placement_free(r.p);
	free(seq);
	return REPLAY_OK;
failed:
	fprintf(errout, "replay-openb: %s\n", strerror(-rc));
	placement_free(r.p);
	free(seq);
	return REPLAY_FAILED;
}

/* ---------------------------------------------------------------------- replay_main */

static int load(const char *path, char **data, size_t *len)
{
	int rc = csv_read_file(path, REPLAY_MAX_FILE, data, len);
	if (rc == 0)
		return REPLAY_OK;
	if (rc == -EFBIG)
		fprintf(stderr, "%s: larger than %u bytes\n", path, REPLAY_MAX_FILE);
	else
		fprintf(stderr, "%s: %s\n", path, strerror(-rc));
	return rc == -ENOMEM ? REPLAY_FAILED : REPLAY_INVALID;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: muster replay-openb --nodes NODES.csv --pods PODS.csv --seed N\n"
		"                           [--policy muster|bestfit|spread|random] [--failures]\n"
		"\n"
		"Replays an Alibaba GPU trace (cluster-trace-gpu-v2023 \"openb\" CSV files)\n"
		"through muster's placement under the FGD paper's protocol: pods shuffled by the\n"
		"seed and topped up to 130 %% of the GPU capacity, one attempt each, nothing\n"
		"departs. Prints one JSON line per arrived percent 0..130:\n"
		"  {\"arrived_pct\":P,\"allocated_gpu_pct\":X,\"free_8gpu_nodes\":N,"
		"\"failed_pods\":N}\n"
		"--failures also writes each failed pod to stderr. Exit status: 0 done, 2 invalid\n"
		"input (FILE:LINE: on stderr), 1 failure.\n");
}


static int policy_flag(void *dest, const char *value)
{
	return replay_parse_policy(value, dest);
}

int replay_main(int argc, char **argv)
{
	struct replay_options opt = { .policy = PLC_MUSTER };
	const char *nodes_path = NULL, *pods_path = NULL;
	int help = 0;
	uint64_t seen;
	enum { F_NODES, F_PODS, F_SEED, F_POLICY, F_FAILURES, F_HELP, NFLAGS };
	const struct flag flags[NFLAGS] = {
		[F_NODES] = { "nodes", 0, FLAG_STRING, &nodes_path, .help = NULL },
		[F_PODS] = { "pods", 0, FLAG_STRING, &pods_path, .help = NULL },
		[F_SEED] = { "seed", 0, FLAG_UINT, &opt.seed, .umax = UINT64_MAX,
			     .expect = "a whole number" },
		[F_POLICY] = { "policy", 0, FLAG_CALL, &opt.policy, .call = policy_flag,
			       .expect = "muster, bestfit, spread or random" },
		[F_FAILURES] = { "failures", 0, FLAG_BOOL, &opt.log_failures, .help = NULL },
		[F_HELP] = { "help", 0, FLAG_BOOL, &help, .help = NULL },
	};
	const struct flag_parser parser = {
		.flags = flags, .nflags = NFLAGS, .prefix = "muster replay-openb: ", .err = stderr
	};
	int parsed = flags_parse_command(&parser, argc, argv, &help, usage, &seen);
	if (parsed != 0)
		return parsed > 0 ? REPLAY_OK : REPLAY_INVALID;
	int have_seed = (seen >> F_SEED) & 1;
	if (!nodes_path || !pods_path || !have_seed) {
		fprintf(stderr, "muster replay-openb: --nodes, --pods and --seed are required\n");
		usage(stderr);
		return REPLAY_INVALID;
	}
	char *nd = NULL, *pd = NULL;
	size_t nd_len = 0, pd_len = 0;
	struct replay_nodes nodes = { 0 };
	struct replay_pods pods = { 0 };
	int status = load(nodes_path, &nd, &nd_len);
	if (status == REPLAY_OK)
		status = load(pods_path, &pd, &pd_len);
	if (status == REPLAY_OK) {
		/* Both files are checked, so one run reports every problem. */
		int s1 = replay_parse_nodes(nodes_path, nd ? nd : "", nd_len, &nodes, stderr);
		int s2 = replay_parse_pods(pods_path, pd ? pd : "", pd_len, &pods, stderr);
		status = s1 == REPLAY_FAILED || s2 == REPLAY_FAILED ? REPLAY_FAILED :
			 s1 != REPLAY_OK                            ? s1 :
								      s2;
	}
	free(nd);
	free(pd);
	if (status == REPLAY_OK) {
		status = replay_run(&nodes, &pods, &opt, stdout, stderr);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "muster replay-openb: cannot write the output\n");
			status = REPLAY_FAILED;
		}
	}
	replay_nodes_free(&nodes);
	replay_pods_free(&pods);
	return status;
}
