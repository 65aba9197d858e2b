/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubectl muster: the command-line client, the same binary as the manager run as
 * kubectl-muster (kubectl finds plugins on PATH by that name) or as `muster kubectl`.
 * It reads queues, Workloads and Jobs from the apiserver with the user's kubeconfig, and asks
 * muster's visibility endpoint (docs/observability.md) where a workload stands and why, either
 * directly (--endpoint, MUSTER_ENDPOINT) or through the apiserver, which routes the
 * visibility API groups to muster with an APIService in a cluster install.
 *
 * It follows kubectl's conventions: -n/--namespace, -A, --kubeconfig, --context, -o json|table,
 * errors on stderr as "error: ...", exit 0 on success, 1 on errors, 2 on usage errors.
 */
#ifndef MUSTER_CLI_H
#define MUSTER_CLI_H

#include <stdio.h>
#include <uv.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1 /* not found, refused, unreachable, a server error */
#define CLI_EXIT_USAGE 2 /* bad flags or arguments */

/* Where a run writes and which loop carries its requests. */
struct cli_io {
	FILE *out; /* NULL: stdout */
	FILE *err; /* NULL: stderr */
	/* NULL: a private loop for the run. Tests pass the loop their fake servers run on, so the
	 * requests and the answers turn on one thread. */
	uv_loop_t *loop;
};

/*
 * Runs one command line: argv[0] is the program's name, argv[1] the command (list, pending,
 * why, eta, history, usage). io may be NULL. Returns the exit code (CLI_EXIT_*). Borrows argv
 * and leaves nothing behind (getenv is read, never written).
 */
int cli_main(int argc, char **argv, const struct cli_io *io);

#endif
