/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubectl muster's command line and commands. Flags are parsed as kubectl's (pflag) are:
 * anywhere on the line, --flag VALUE or --flag=VALUE, -n VALUE or -nVALUE, booleans as -A or
 * --all-namespaces[=true|false], "--" ending them; every problem with the line is a usage
 * error (exit 2) found before anything is asked of a server.
 */
#include "cli/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "cli/cli_internal.h"
#include "core/num.h"
#include "util/flags.h"

#define MAX_URL 1024
/* --since further back than this is a typo, and would overflow the arithmetic. */
#define MAX_SINCE_MS ((int64_t)100 * 365 * 86400 * 1000)

enum flag_id {
	F_NAMESPACE,
	F_ALL_NAMESPACES,
	F_OUTPUT,
	F_KUBECONFIG,
	F_CONTEXT,
	F_ENDPOINT,
	F_ENDPOINT_CA,
	F_INSECURE,
	F_HELP,
	F_LIMIT,
	F_OFFSET,
	F_SINCE,
	F_BY,
	NFLAGS,
};

#define BIT(f) (1u << (f))
#define COMMON_FLAGS                                                                               \
	(BIT(F_NAMESPACE) | BIT(F_OUTPUT) | BIT(F_KUBECONFIG) | BIT(F_CONTEXT) | BIT(F_ENDPOINT) | \
	 BIT(F_ENDPOINT_CA) | BIT(F_INSECURE) | BIT(F_HELP))

static const struct command {
	const char *name;
	unsigned flags; /* the flags it takes */
	size_t min_args, max_args;
	unsigned kinds; /* BIT(enum cli_kind) its argument may have */
	const char *synopsis;
	const char *help;
} commands[CLI_NCOMMANDS] = {
	[CLI_LIST] = {
		"list", COMMON_FLAGS | BIT(F_ALL_NAMESPACES), 0, 0, 0,
		"list [-n NAMESPACE | -A]",
		"ClusterQueues (cohort, pending and admitted Workloads, quota used/nominal per\n"
		"flavor and resource, borrowed) and the LocalQueues of a namespace, or of all with -A,\n"
		"as their status says. -o json prints them as a List.\n",
	},
	[CLI_PENDING] = {
		"pending", COMMON_FLAGS | BIT(F_LIMIT) | BIT(F_OFFSET), 1, 1,
		BIT(CLI_KIND_BARE) | BIT(CLI_KIND_CLUSTERQUEUE) | BIT(CLI_KIND_LOCALQUEUE),
		"pending CLUSTERQUEUE | lq/LOCALQUEUE [-n NAMESPACE] [--limit N] [--offset N]",
		"The pending Workloads of a ClusterQueue (a bare name, or cq/NAME), or of a LocalQueue\n"
		"(lq/NAME, in the namespace), in the order muster will try them; positions count\n"
		"from 0. --limit (1 to 100000) and --offset page through a long queue.\n",
	},
	[CLI_WHY] = {
		"why", COMMON_FLAGS, 1, 1,
		BIT(CLI_KIND_BARE) | BIT(CLI_KIND_WORKLOAD) | BIT(CLI_KIND_JOB),
		"why [-n NAMESPACE] NAME | job/NAME | workload/NAME",
		"Why a Workload is where it is: the reason and message, its position, what it lacks,\n"
		"who holds that quota, what would have to be preempted or end for it to fit, and the\n"
		"nodes that come closest when no node layout fits. NAME is a Workload, else a Job;\n"
		"job/NAME is the Workload of that batch/v1 Job.\n",
	},
	[CLI_ETA] = {
		"eta", COMMON_FLAGS, 1, 1,
		BIT(CLI_KIND_BARE) | BIT(CLI_KIND_WORKLOAD) | BIT(CLI_KIND_JOB),
		"eta [-n NAMESPACE] NAME | job/NAME | workload/NAME",
		"When a Workload should be admitted, with what the estimate rests on. NAME as for why.\n",
	},
	[CLI_HISTORY] = {
		"history", COMMON_FLAGS | BIT(F_LIMIT) | BIT(F_SINCE), 1, 1,
		BIT(CLI_KIND_BARE) | BIT(CLI_KIND_WORKLOAD) | BIT(CLI_KIND_JOB) |
			BIT(CLI_KIND_CLUSTERQUEUE),
		"history [-n NAMESPACE] NAME | job/NAME | workload/NAME [--limit N]\n"
		"  kubectl muster history cq/CLUSTERQUEUE [--since DURATION|TIME] [--limit N]",
		"muster's decisions (admit, preempt, evict, requeue, finish, deactivate), newest first,\n"
		"for a Workload (NAME as for why) or, with cq/NAME or clusterqueue/NAME, for every\n"
		"Workload of a ClusterQueue since a time (--since 24h, or an RFC 3339 time).\n",
	},
	[CLI_USAGE] = {
		"usage", COMMON_FLAGS | BIT(F_SINCE) | BIT(F_BY), 0, 0, 0,
		"usage [--since DURATION|TIME] [--by queue|namespace]",
		"Resource-hours used by admitted Workloads since a time (--since 7d, 1h30m, or an RFC\n"
		"3339 time; the server's default without it), per ClusterQueue or per namespace.\n"
		"The table shows GPU- and CPU-hours; -o json has every resource.\n",
	},
};

static int namespace_flag(void *dest, const char *value);
static int since_flag(void *dest, const char *value);

static const char *const outputs[] = { "table", "json", NULL };
static const char *const groupings[] = { "queue", "namespace", NULL };

/* The flags, into opt (and *by, the index of --by in groupings). */
static void flag_table(struct flag t[NFLAGS], struct cli_options *opt, int *by)
{
	const struct flag flags[NFLAGS] = {
		[F_NAMESPACE] = { "namespace", 'n', FLAG_CALL, &opt->namespace_name, "NAMESPACE",
				  .help = "the namespace (default: the kubeconfig context's, else\n"
					  "\"default\")",
				  .call = namespace_flag },
		[F_ALL_NAMESPACES] = { "all-namespaces", 'A', FLAG_BOOL, &opt->all_namespaces, NULL,
				       .help = "list: LocalQueues of every namespace" },
		[F_OUTPUT] = { "output", 'o', FLAG_CHOICE, &opt->json, "table|json",
			       .help = "table (the default), or the answer as JSON",
			       .choices = outputs },
		[F_KUBECONFIG] = { "kubeconfig", 0, FLAG_STRING, &opt->kubeconfig, "FILE",
				   .help = "the kubeconfig (default: $KUBECONFIG, in-cluster,\n"
					   "~/.kube/config)" },
		[F_CONTEXT] = { "context", 0, FLAG_STRING, &opt->context, "NAME",
				.help = "a kubeconfig context other than the current one" },
		[F_ENDPOINT] = { "endpoint", 0, FLAG_STRING, &opt->endpoint, "URL",
				 .help = "muster's visibility endpoint, asked directly\n"
					 "(default: $MUSTER_ENDPOINT, else through the "
					 "apiserver)" },
		[F_ENDPOINT_CA] = { "endpoint-ca", 0, FLAG_STRING, &opt->endpoint_ca, "FILE",
				    .help = "the CA that signed the endpoint's certificate\n"
					    "(default: $MUSTER_ENDPOINT_CA, else the system's)" },
		[F_INSECURE] = { "insecure-skip-tls-verify", 0, FLAG_BOOL, &opt->insecure, NULL,
				 .help = "verify neither the apiserver's nor the endpoint's\n"
					 "certificate" },
		[F_HELP] = { "help", 'h', FLAG_BOOL, &opt->help, NULL, .help = "this help" },
		/* The commands' own flags: their help says what they do. */
		[F_LIMIT] = { "limit", 0, FLAG_INT, &opt->limit, .min = 1, .max = CLI_MAX_LIMIT },
		[F_OFFSET] = { "offset", 0, FLAG_INT, &opt->offset, .min = 0, .max = 1000000000,
			       .expect = "a number from 0" },
		[F_SINCE] = { "since", 0, FLAG_CALL, &opt->since, .call = since_flag,
			      .expect = "a duration (90m, 1h30m, 7d) or an RFC 3339 time" },
		[F_BY] = { "by", 0, FLAG_CHOICE, by, .choices = groupings },
	};
	memcpy(t, flags, sizeof(flags));
}

static void print_common_help(FILE *out)
{
	struct flag flags[NFLAGS];
	struct cli_options opt;
	int by;
	flag_table(flags, &opt, &by);
	struct flag_parser parser = { .flags = flags, .nflags = NFLAGS };
	fprintf(out, "Flags:\n");
	(void)flags_help(&parser, out, 32); /* a failed write to the terminal changes nothing */
	fprintf(out, "\nExit status: 0 success, 1 an error (not found, refused, unreachable), 2 a "
		     "usage error.\n");
}

static void print_help(FILE *out, int command)
{
	if (command >= 0) {
		fprintf(out, "%s\nUsage:\n  kubectl muster %s\n\n", commands[command].help,
			commands[command].synopsis);
		print_common_help(out);
		return;
	}
	fprintf(out, "kubectl muster: muster's queues, and where a Workload stands and why.\n\n"
		     "Usage:\n");
	for (int i = 0; i < CLI_NCOMMANDS; i++)
		fprintf(out, "  kubectl muster %s\n", commands[i].synopsis);
	fprintf(out, "\nkubectl muster COMMAND --help tells more of each.\n\n");
	print_common_help(out);
}

static int usage_error(FILE *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage_error(FILE *err, const char *fmt, ...)
{
	va_list ap;
	fprintf(err, "error: ");
	va_start(ap, fmt);
	vfprintf(err, fmt, ap);
	va_end(ap);
	fprintf(err, "\n");
	return CLI_EXIT_USAGE;
}

/* --- values ---------------------------------------------------------------------------------- */

static enum cli_kind kind_of(const char *arg, const char **name)
{
	static const struct {
		const char *prefix;
		enum cli_kind kind;
	} kinds[] = {
		{ "workload/", CLI_KIND_WORKLOAD },
		{ "workloads/", CLI_KIND_WORKLOAD },
		{ "wl/", CLI_KIND_WORKLOAD },
		{ "job/", CLI_KIND_JOB },
		{ "jobs/", CLI_KIND_JOB },
		{ "job.batch/", CLI_KIND_JOB },
		{ "jobs.batch/", CLI_KIND_JOB },
		{ "cq/", CLI_KIND_CLUSTERQUEUE },
		{ "clusterqueue/", CLI_KIND_CLUSTERQUEUE },
		{ "clusterqueues/", CLI_KIND_CLUSTERQUEUE },
		{ "lq/", CLI_KIND_LOCALQUEUE },
		{ "localqueue/", CLI_KIND_LOCALQUEUE },
		{ "localqueues/", CLI_KIND_LOCALQUEUE },
	};
	*name = arg;
	if (!strchr(arg, '/'))
		return CLI_KIND_BARE;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i].prefix);
		if (!strncmp(arg, kinds[i].prefix, n)) {
			*name = arg + n;
			return kinds[i].kind;
		}
	}
	return CLI_KIND_UNKNOWN;
}

/* A Kubernetes object or namespace name as far as a path needs: kube_escape takes care of
 * the characters, this of the length and of a '/' that would make two names of one. */
static int valid_name(const char *s)
{
	size_t n = strlen(s);
	return n > 0 && n <= CLI_MAX_NAME && !strchr(s, '/');
}

/*
 * --since: an RFC 3339 time, or a duration back from now_ms as a sequence of numbers with
 * units (s, m, h, d; "90m", "1h30m", "7d", "1.5h"). Writes the time as RFC 3339 UTC, to the
 * second, to buf (if not NULL). 0 or -EINVAL.
 */
static int since_time(const char *s, int64_t now_ms, char *buf, size_t size)
{
	int64_t at, back;
	if (time_parse_rfc3339(s, &at) == 0) {
		if (buf) /* in UTC, as the API's times are */
			time_format_rfc3339(at, buf, size);
		return 0;
	}
	if (num_parse_duration_ms(s, 1, MAX_SINCE_MS, &back) != 0)
		return -EINVAL;
	if (buf)
		time_format_rfc3339(now_ms - back, buf, size);
	return 0;
}

static int namespace_flag(void *dest, const char *value)
{
	if (!valid_name(value))
		return -EINVAL;
	*(const char **)dest = value;
	return 0;
}

static int since_flag(void *dest, const char *value)
{
	if (since_time(value, 0, NULL, 0) != 0)
		return -EINVAL;
	*(const char **)dest = value;
	return 0;
}

static int find_command(const char *name)
{
	for (int i = 0; i < CLI_NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return i;
	return -1;
}

/* The endpoint's settings from the environment where no flag gave them, and their checks. */
static int endpoint_settings(struct cli_options *opt, FILE *err)
{
	const char *source = "--endpoint";
	if (!opt->endpoint && getenv("MUSTER_ENDPOINT") && *getenv("MUSTER_ENDPOINT")) {
		opt->endpoint = getenv("MUSTER_ENDPOINT");
		source = "MUSTER_ENDPOINT";
	}
	if (opt->endpoint_ca && !opt->endpoint)
		return usage_error(err, "--endpoint-ca needs --endpoint or MUSTER_ENDPOINT");
	if (!opt->endpoint_ca && getenv("MUSTER_ENDPOINT_CA") && *getenv("MUSTER_ENDPOINT_CA"))
		opt->endpoint_ca = getenv("MUSTER_ENDPOINT_CA");
	if (opt->endpoint &&
	    ((strncmp(opt->endpoint, "https://", 8) && strncmp(opt->endpoint, "http://", 7)) ||
	     strlen(opt->endpoint) >= MAX_URL))
		return usage_error(err, "%s must be an https:// URL, not \"%s\"", source,
				   opt->endpoint);
	return 0;
}

/* The command's arguments: how many, and of which kind. */
static int check_arguments(struct cli_options *opt, FILE *err)
{
	const struct command *cmd = &commands[opt->command];
	if (opt->nargs < cmd->min_args)
		return usage_error(err, "%s needs an argument: kubectl muster %s", cmd->name,
				   cmd->synopsis);
	if (!opt->nargs)
		return 0;
	opt->kind = kind_of(opt->args[0], &opt->name);
	if (!(cmd->kinds & BIT(opt->kind)))
		return usage_error(err, "%s does not take \"%s\": kubectl muster %s", cmd->name,
				   opt->args[0], cmd->synopsis);
	if (!valid_name(opt->name))
		return usage_error(err, "invalid name \"%s\"", opt->name);
	if (opt->since && opt->command == CLI_HISTORY && opt->kind != CLI_KIND_CLUSTERQUEUE)
		return usage_error(err, "--since applies to a ClusterQueue's history (cq/NAME)");
	return 0;
}

struct positional {
	struct cli_options *opt;
	FILE *err;
	int help_command;
};

/* The command, then its arguments, in order among the flags. 0, or -EINVAL (reported). */
static int take_positional(void *arg, const char *value)
{
	struct positional *pos = arg;
	struct cli_options *opt = pos->opt;
	if (opt->command < 0 && !pos->help_command && !strcmp(value, "help")) {
		pos->help_command = 1; /* kubectl's "help [COMMAND]" */
		opt->help = 1;
		return 0;
	}
	if (opt->command < 0) {
		if ((opt->command = find_command(value)) >= 0)
			return 0;
		(void)usage_error(pos->err, "unknown command \"%s\" for \"kubectl muster\"", value);
		return -EINVAL;
	}
	if (opt->nargs < commands[opt->command].max_args) {
		opt->args[opt->nargs++] = value;
		return 0;
	}
	if (opt->help) /* the help, whatever else the line says */
		return 0;
	(void)usage_error(pos->err, "unexpected argument \"%s\" for %s", value,
			  commands[opt->command].name);
	return -EINVAL;
}

int cli_parse(int argc, char **argv, struct cli_options *opt, FILE *err)
{
	struct flag flags[NFLAGS];
	struct positional pos = { .opt = opt, .err = err };
	uint64_t seen;
	int by = -1, rc;
	memset(opt, 0, sizeof(*opt));
	opt->command = -1;
	opt->limit = opt->offset = -1;
	flag_table(flags, opt, &by);
	struct flag_parser parser = { .flags = flags,
				      .nflags = NFLAGS,
				      .prefix = "error: ",
				      .err = err,
				      .positional = take_positional,
				      .arg = &pos };
	if (flags_parse(&parser, argc, argv, &seen) < 0)
		return CLI_EXIT_USAGE;
	opt->by = by >= 0 ? groupings[by] : NULL;
	if (opt->help)
		return 0;
	if (opt->command < 0)
		return usage_error(err,
				   "a command is needed: list, pending, why, eta, history or usage "
				   "(kubectl muster --help)");
	uint64_t foreign = seen & ~(uint64_t)commands[opt->command].flags;
	for (int f = 0; f < NFLAGS; f++)
		if (foreign & BIT(f))
			return usage_error(err, "--%s does not apply to %s", flags[f].name,
					   commands[opt->command].name);
	if ((rc = check_arguments(opt, err)) != 0)
		return rc;
	return endpoint_settings(opt, err);
}

/* --- commands -------------------------------------------------------------------------------- */

/* Prints an answer as JSON or through a renderer's return code: the exit code. */
static int finish(struct cli *c, json_t *answer, int rendered)
{
	int rc = rendered;
	if (c->opt.json)
		rc = cli_render_json(c->out, answer);
	json_decref(answer);
	if (rc == -ENOMEM)
		return cli_failf(c, "out of memory");
	return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED; /* the renderer said what was wrong */
}

static int run_list(struct cli *c)
{
	char path[CLI_MAX_PATH];
	const char *ns = NULL;
	json_t *cqs = NULL, *lqs = NULL;
	int rc;
	if (!c->opt.all_namespaces && cli_namespace(c, &ns) != 0)
		return cli_fail(c);
	if (ns)
		rc = cli_namespaced_path(path, sizeof(path), CLI_API_KUEUE, ns, "localqueues",
					 NULL);
	else
		rc = snprintf(path, sizeof(path), "%s/localqueues", CLI_API_KUEUE) < 0 ? -ENOSPC :
											 0;
	if (rc != 0)
		return cli_failf(c, "namespace name too long");
	if (cli_get(c, CLI_APISERVER, CLI_API_KUEUE "/clusterqueues", &cqs) != 0 ||
	    cli_get(c, CLI_APISERVER, path, &lqs) != 0) {
		json_decref(cqs);
		return cli_fail(c);
	}
	if (c->opt.json) {
		/* As `kubectl get clusterqueues,localqueues -o json` prints them. */
		json_t *items = json_array(), *list;
		json_array_extend(items, json_object_get(cqs, "items"));
		json_array_extend(items, json_object_get(lqs, "items"));
		list = json_pack("{s:s, s:s, s:o, s:{s:s}}", "apiVersion", "v1", "kind", "List",
				 "items", items, "metadata", "resourceVersion", "");
		json_decref(cqs);
		json_decref(lqs);
		return finish(c, list, list ? 0 : -ENOMEM);
	}
	rc = cli_render_list(c->out, c->err, cqs, lqs, ns);
	json_decref(cqs);
	return finish(c, lqs, rc);
}

static int path_append(char *path, size_t size, const char *text)
{
	size_t len = strlen(path);
	int n = snprintf(path + len, size - len, "%s", text);
	return n < 0 || (size_t)n >= size - len ? -ENOSPC : 0;
}

/* Appends --limit, --offset and --since (as a time) to path where given. 0 or -ENOSPC. */
static int add_paging(struct cli *c, char *path, size_t size)
{
	char limit[32], offset[32], since[64];
	int rc = 0;
	snprintf(limit, sizeof(limit), "%" PRId64, c->opt.limit);
	snprintf(offset, sizeof(offset), "%" PRId64, c->opt.offset);
	if (c->opt.limit >= 0)
		rc = cli_query_append(path, size, "limit", limit);
	if (rc == 0 && c->opt.offset >= 0)
		rc = cli_query_append(path, size, "offset", offset);
	if (rc == 0 && c->opt.since &&
	    since_time(c->opt.since, c->now_ms, since, sizeof(since)) == 0)
		rc = cli_query_append(path, size, "since", since);
	return rc;
}

static int run_pending(struct cli *c)
{
	char path[CLI_MAX_PATH] = CLI_API_KUEUE_VISIBILITY "/clusterqueues/",
	     what[2 * CLI_MAX_NAME + 32];
	const char *ns;
	json_t *summary;
	int rc;
	if (c->opt.kind == CLI_KIND_LOCALQUEUE) {
		if (cli_namespace(c, &ns) != 0)
			return cli_fail(c);
		snprintf(what, sizeof(what), "LocalQueue %s/%s", ns, c->opt.name);
		rc = cli_namespaced_path(path, sizeof(path), CLI_API_KUEUE_VISIBILITY, ns,
					 "localqueues", c->opt.name);
	} else {
		snprintf(what, sizeof(what), "ClusterQueue %s", c->opt.name);
		rc = kube_escape(path, sizeof(path), c->opt.name);
	}
	if (rc == 0)
		rc = path_append(path, sizeof(path), "/pendingworkloads");
	if (rc != 0 || add_paging(c, path, sizeof(path)) != 0)
		return cli_failf(c, "name too long: %s", c->opt.name);
	if (cli_get(c, CLI_MUSTER, path, &summary) != 0)
		return cli_fail(c);
	return finish(c, summary,
		      c->opt.json ? 0 :
				    cli_render_pending(c->out, c->err, summary, what, c->now_ms));
}

/* why, eta and history of a Workload, and history of a ClusterQueue. */
static int run_workload(struct cli *c)
{
	static const char *const subresource[CLI_NCOMMANDS] = {
		[CLI_WHY] = "why", [CLI_ETA] = "eta", [CLI_HISTORY] = "history"
	};
	char path[CLI_MAX_PATH], name[CLI_MAX_NAME + 1], what[2 * CLI_MAX_NAME + 32];
	const char *ns;
	json_t *answer;
	int rc, by_queue = c->opt.kind == CLI_KIND_CLUSTERQUEUE;
	if (by_queue) {
		snprintf(what, sizeof(what), "ClusterQueue %s", c->opt.name);
		snprintf(path, sizeof(path), "%s/clusterqueues/", CLI_API_MUSTER_VISIBILITY);
		rc = kube_escape(path, sizeof(path), c->opt.name);
	} else {
		if (cli_namespace(c, &ns) != 0)
			return cli_fail(c);
		if ((rc = cli_resolve_workload(c, ns, c->opt.kind, c->opt.name, name,
					       sizeof(name))) != 0)
			return rc;
		snprintf(what, sizeof(what), "Workload %s/%s", ns, name);
		rc = cli_namespaced_path(path, sizeof(path), CLI_API_MUSTER_VISIBILITY, ns,
					 "workloads", name);
	}
	if (rc == 0 && (rc = path_append(path, sizeof(path), "/")) == 0)
		rc = path_append(path, sizeof(path), subresource[c->opt.command]);
	if (rc != 0 || add_paging(c, path, sizeof(path)) != 0)
		return cli_failf(c, "name too long: %s", c->opt.name);
	if (cli_get(c, CLI_MUSTER, path, &answer) != 0)
		return cli_fail(c);
	if (c->opt.json)
		rc = 0;
	else if (c->opt.command == CLI_WHY)
		rc = cli_render_why(c->out, c->err, answer);
	else if (c->opt.command == CLI_ETA)
		rc = cli_render_eta(c->out, c->err, answer, c->now_ms);
	else
		rc = cli_render_history(c->out, c->err, answer, what, by_queue);
	return finish(c, answer, rc);
}

static int run_usage(struct cli *c)
{
	char path[CLI_MAX_PATH] = CLI_API_MUSTER_VISIBILITY "/usage";
	json_t *report;
	if (add_paging(c, path, sizeof(path)) != 0 ||
	    (c->opt.by && cli_query_append(path, sizeof(path), "by", c->opt.by) != 0))
		return cli_failf(c, "--since or --by too long");
	if (cli_get(c, CLI_MUSTER, path, &report) != 0)
		return cli_fail(c);
	return finish(c, report, c->opt.json ? 0 : cli_render_usage(c->out, c->err, report));
}

static int run(struct cli *c)
{
	switch (c->opt.command) {
	case CLI_LIST:
		return run_list(c);
	case CLI_PENDING:
		return run_pending(c);
	case CLI_USAGE:
		return run_usage(c);
	default:
		return run_workload(c);
	}
}

int cli_main(int argc, char **argv, const struct cli_io *io)
{
	struct cli c = { .out = io && io->out ? io->out : stdout,
			 .err = io && io->err ? io->err : stderr };
	uv_loop_t own;
	int rc = cli_parse(argc, argv, &c.opt, c.err);
	if (rc != 0)
		return rc;
	if (c.opt.help) {
		print_help(c.out, c.opt.command);
		return CLI_EXIT_OK;
	}
	c.loop = io && io->loop ? io->loop : &own;
	if (c.loop == &own && uv_loop_init(&own) != 0)
		return cli_failf(&c, "cannot start an event loop");
	c.now_ms = time_now_ms();
	rc = run(&c);
	cli_release(&c);
	/* The clients' handles close as the loop turns: to the end on our own loop, once on a
	 * caller's, which runs on. */
	if (c.loop == &own) {
		uv_run(&own, UV_RUN_DEFAULT);
		uv_loop_close(&own);
	} else {
		uv_run(c.loop, UV_RUN_NOWAIT);
	}
	fflush(c.out);
	return rc;
}
