/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the command-line client's files share: the parsed command line (cli.c), the
 * connections and name resolution (cli_kube.c), tables (cli_table.c) and the renderers that
 * turn answers into text (cli_render.c). The renderers are pure (JSON in, text out), so the
 * fuzz target and the tests call them without a network.
 */
#ifndef MUSTER_CLI_INTERNAL_H
#define MUSTER_CLI_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"

#define CLI_API_KUEUE "/apis/kueue.x-k8s.io/v1beta2"
#define CLI_API_KUEUE_VISIBILITY "/apis/visibility.kueue.x-k8s.io/v1beta2"
#define CLI_API_MUSTER_VISIBILITY "/apis/visibility.muster.io/v1alpha1"
#define CLI_MAX_LIMIT 100000 /* the visibility API's largest limit */
#define CLI_MAX_NAME 253 /* a Kubernetes object name (DNS subdomain) */
#define CLI_MAX_PATH 2048

/* --- the command line (cli.c) --------------------------------------------------------------- */

enum cli_command { CLI_LIST, CLI_PENDING, CLI_WHY, CLI_ETA, CLI_HISTORY, CLI_USAGE, CLI_NCOMMANDS };

/* What an argument names, by its "kind/" prefix (kubectl's TYPE/NAME). */
enum cli_kind {
	CLI_KIND_BARE, /* no prefix: what the command takes by default */
	CLI_KIND_WORKLOAD, /* workload/, workloads/, wl/ */
	CLI_KIND_JOB, /* job/, jobs/, job.batch/, jobs.batch/ */
	CLI_KIND_CLUSTERQUEUE, /* cq/, clusterqueue/, clusterqueues/ */
	CLI_KIND_LOCALQUEUE, /* lq/, localqueue/, localqueues/ */
	CLI_KIND_UNKNOWN,
};

/* Every string is borrowed from argv (or the environment); unset ones are NULL. */
struct cli_options {
	int command; /* enum cli_command, or -1 when none was named */
	const char *args[1]; /* the positional argument after the command (none or one) */
	size_t nargs;
	enum cli_kind kind; /* of args[0] */
	const char *name; /* args[0] without its kind prefix */
	int help; /* -h/--help: print the command's help and stop */
	const char *namespace_name; /* -n */
	int all_namespaces; /* -A */
	int json; /* -o json */
	const char *kubeconfig, *context;
	const char *endpoint; /* --endpoint, else MUSTER_ENDPOINT; NULL: through the apiserver */
	const char *endpoint_ca; /* --endpoint-ca, else MUSTER_ENDPOINT_CA */
	int insecure; /* --insecure-skip-tls-verify: the apiserver and the endpoint */
	int64_t limit, offset; /* -1: the server's default */
	const char *since; /* as given: a duration (90m, 1h30m, 7d) or an RFC 3339 time */
	const char *by; /* "queue" or "namespace", NULL: the server's default */
};

/* Parses argv (argv[0] is the program) into *opt, with the environment's endpoint settings.
 * Returns 0, or CLI_EXIT_USAGE after writing "error: ..." to err. */
int cli_parse(int argc, char **argv, struct cli_options *opt, FILE *err);

/* --- connections (cli_kube.c) ---------------------------------------------------------------- */

enum cli_target { CLI_APISERVER, CLI_MUSTER };

struct cli {
	FILE *out, *err;
	uv_loop_t *loop;
	struct cli_options opt;
	int64_t now_ms; /* one reading of the clock for the whole run (ages, --since) */
	struct kube_config kubeconfig; /* loaded on first need */
	int kubeconfig_state; /* 0 not tried, 1 loaded, negative errno: failed */
	char kubeconfig_error[512];
	struct kube_client *apiserver; /* made on first need */
	struct kube_client *endpoint; /* muster directly; NULL: through the apiserver */
	char error[1024]; /* the last failure, for cli_fail */
};

/* The namespace to use: -n, else the kubeconfig context's, else "default" (also when there is
 * no kubeconfig at all, unless --kubeconfig or --context named one). 0, or -errno with
 * c->error set. */
int cli_namespace(struct cli *c, const char **out);

/*
 * GETs path from the apiserver or from muster (directly, or through the apiserver) and parses
 * the answer. Returns 0 with *out (a new reference), or a negative errno with a message in
 * c->error: -ENOENT for a 404, -EACCES for 401/403, -EPROTO for an answer that is not JSON,
 * -EIO for other HTTP errors and transport failures, or what loading the kubeconfig returned.
 */
int cli_get(struct cli *c, enum cli_target target, const char *path, json_t **out);

/* Writes "error: <c->error>" and returns CLI_EXIT_FAILED. */
int cli_fail(struct cli *c);
/* Formats c->error like printf and returns CLI_EXIT_FAILED after writing it. */
int cli_failf(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes base + "/namespaces/NS/RESOURCE" (+ "/NAME" unless name is NULL) to path, names
 * percent-encoded. 0 or -ENOSPC. */
int cli_namespaced_path(char *path, size_t size, const char *base, const char *ns,
			const char *resource, const char *name);
/* Appends "?key=value", or "&key=value" when path has a query, the value percent-encoded.
 * 0 or -ENOSPC. */
int cli_query_append(char *path, size_t size, const char *key, const char *value);

/*
 * Resolves what why, eta and history name in namespace ns: workload/NAME is that Workload;
 * job/NAME is the Workload whose ownerReferences hold the Job's uid (listed in ns, never
 * guessed from names); a bare NAME is a Workload if one exists, else a Job's. Writes the
 * Workload's name to out. Returns 0, or CLI_EXIT_FAILED after writing the error.
 */
int cli_resolve_workload(struct cli *c, const char *ns, enum cli_kind kind, const char *name,
			 char *out, size_t size);

/* Releases the connections and the kubeconfig, leaving the loop to close their handles. */
void cli_release(struct cli *c);

/* --- tables and text (cli_table.c) ------------------------------------------------------------ */

/* Rows of cells printed in aligned columns, three spaces apart, as kubectl does. Adding rows
 * never fails visibly: an allocation failure is remembered and cli_table_print reports it. */
struct cli_table {
	size_t ncols, nrows, cap;
	char **cells; /* nrows * ncols, owned, control characters replaced */
	int failed; /* -ENOMEM once a row could not be kept */
};

void cli_table_init(struct cli_table *t, size_t ncols);
/* Copies a row of t->ncols cells; a NULL cell prints as "<none>". */
void cli_table_row(struct cli_table *t, const char *const *cells);
/* Prints every row after indent, the last column unpadded. 0, or -ENOMEM. */
int cli_table_print(const struct cli_table *t, FILE *out, const char *indent);
void cli_table_release(struct cli_table *t);

/* Copies s into a new string with control characters (C0, DEL, C1) as spaces, so an answer
 * cannot move the terminal's cursor. NULL when out of memory. */
char *cli_sanitize(const char *s);

/* An age as kubectl's AGE column writes it (apimachinery's HumanDuration): 45s, 5m3s, 3h20m,
 * 4d2h, 2y10d; "<invalid>" for a time more than a second ahead. */
void cli_human_duration(int64_t ms, char *buf, size_t size);

/* The age of an RFC 3339 time at now_ms, "<unknown>" when it is absent or unreadable. */
void cli_age(const char *rfc3339, int64_t now_ms, char *buf, size_t size);

/* --- renderers (cli_render.c) ---------------------------------------------------------------- */

/* Each writes its answer as tables or text to out; an empty answer gets a note on err, as
 * kubectl's "No resources found". Returns 0, -EPROTO for an answer of the wrong kind (a
 * message on err), or -ENOMEM. */
int cli_render_list(FILE *out, FILE *err, json_t *clusterqueues, json_t *localqueues,
		    const char *ns);
/* what names the queue for the empty note ("ClusterQueue cq-a"). */
int cli_render_pending(FILE *out, FILE *err, json_t *summary, const char *what, int64_t now_ms);
int cli_render_why(FILE *out, FILE *err, json_t *explanation);
int cli_render_eta(FILE *out, FILE *err, json_t *estimate, int64_t now_ms);
/* by_queue: a ClusterQueue's history (a WORKLOAD column) rather than a Workload's. */
int cli_render_history(FILE *out, FILE *err, json_t *decisions, const char *what, int by_queue);
int cli_render_usage(FILE *out, FILE *err, json_t *report);
/* -o json: the value pretty-printed, 4 spaces as kubectl. 0 or -ENOMEM. */
int cli_render_json(FILE *out, json_t *value);

#endif
