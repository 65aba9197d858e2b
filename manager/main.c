/* SPDX-License-Identifier: Apache-2.0 */
/*
 * muster: one binary, several subcommands.
 *   muster manager [flags]    run the admission and quota manager
 *   muster simulate FILE...   run admission on manifests, without a cluster
 *   muster replay-openb ...   replay the Alibaba GPU trace through placement (FGD protocol)
 *   muster kubectl ...        the kubectl plugin, also run as kubectl-muster (cli/cli.h)
 *   muster replay-philly ...  replay the Philly job trace and measure the forecast's accuracy
 *   muster --version
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ctrl/manager.h"
#include "sim/philly.h"
#include "sim/replay.h"
#include "sim/simulate.h"
#include "util/flags.h"
#include "util/log.h"

#define MANAGER_NFLAGS 11

/* The manager's flags: the destinations are the caller's. */
static void manager_flags(struct flag t[MANAGER_NFLAGS], struct manager_options *opt,
			  int64_t ports[4], int *log_level, int *help)
{
	static const char *const levels[] = { "debug", "info", "warn", "error", NULL };
	const struct flag flags[MANAGER_NFLAGS] = {
		{ "kubeconfig", 0, FLAG_STRING, &opt->kubeconfig, "FILE",
		  .help = "kubeconfig to use (default: $KUBECONFIG, in-cluster, ~/.kube/config)" },
		{ "config", 0, FLAG_STRING, &opt->config, "FILE",
		  .help = "configuration (Kueue's Configuration shape; see config/manager.yaml)" },
		{ "state-dir", 0, FLAG_STRING, &opt->state_dir, "DIR",
		  .help = "keep the webhook CA and certificate here across restarts\n"
			  "(URL mode; with internalCertManagement.webhookServiceName\n"
			  "they live in a Secret)" },
		{ "webhook-host", 0, FLAG_STRING, &opt->webhook_host, "ADDR",
		  .help = "address the webhook listens on and, in URL mode, the apiserver\n"
			  "calls (config webhook.host; 127.0.0.1, or all in service mode)" },
		{ "webhook-port", 0, FLAG_INT, &ports[0], "PORT",
		  .help = "webhook HTTPS port (config webhook.port; 9443; 0 picks a free one)",
		  .min = 0, .max = 65535 },
		{ "health-host", 0, FLAG_STRING, &opt->health_host, "ADDR",
		  .help = "address of /healthz and /readyz\n"
			  "(config health.healthProbeBindAddress; 127.0.0.1)" },
		{ "health-port", 0, FLAG_INT, &ports[1], "PORT",
		  .help = "port of /healthz and /readyz (likewise; 8081)", .min = 0, .max = 65535 },
		{ "metrics-port", 0, FLAG_INT, &ports[2], "PORT",
		  .help = "port of /metrics, over the configuration's metrics.bindAddress\n"
			  "(whose default is :8080)",
		  .min = 0, .max = 65535 },
		{ "visibility-port", 0, FLAG_INT, &ports[3], "PORT",
		  .help = "port of the visibility endpoint (HTTPS: positions, why, eta,\n"
			  "history, usage), over visibilityServer.bindPort (8082)",
		  .min = 0, .max = 65535 },
		{ "log-level", 0, FLAG_CHOICE, log_level, "LEVEL",
		  .help = "debug, info, warn or error (info)", .choices = levels },
		{ "help", 0, FLAG_BOOL, help, .help = NULL },
	};
	memcpy(t, flags, sizeof(flags));
}

static void usage(FILE *out)
{
	struct flag flags[MANAGER_NFLAGS];
	struct manager_options opt;
	int64_t ports[4];
	int level, help;
	manager_flags(flags, &opt, ports, &level, &help);
	struct flag_parser parser = { .flags = flags, .nflags = MANAGER_NFLAGS };
	fprintf(out,
		"usage: muster <command> [flags]\n"
		"\n"
		"commands:\n"
		"  manager     run the admission and quota manager against a cluster\n"
		"  simulate    run admission on the objects in FILE... without a cluster\n"
		"              (muster simulate --help)\n"
		"  replay-openb\n"
		"              replay the Alibaba GPU trace through placement under the FGD "
		"paper's\n"
		"              protocol (muster replay-openb --help)\n"
		"  kubectl     the kubectl plugin: queues, pending workloads, why, eta, history, "
		"usage\n"
		"              (muster kubectl --help; run as kubectl-muster, it is `kubectl "
		"muster`)\n"
		"  replay-philly\n"
		"              replay the Philly job trace and measure how close the forecast's\n"
		"              admission times come (muster replay-philly --help)\n"
		"  --version   print the version\n"
		"\n"
		"manager flags:\n");
	(void)flags_help(&parser, out, 24); /* a failed write to the terminal changes nothing */
}

static int cmd_manager(int argc, char **argv)
{
	static const enum log_level levels[] = { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };
	struct flag flags[MANAGER_NFLAGS];
	/* Unset (NULL, -1): the configuration file's value, else the default. */
	struct manager_options opt = { 0 };
	int64_t ports[4] = { -1, -1, -1, -1 };
	int level = -1, help = 0;
	uint64_t seen;
	manager_flags(flags, &opt, ports, &level, &help);
	struct flag_parser parser = {
		.flags = flags, .nflags = MANAGER_NFLAGS, .prefix = "muster: ", .err = stderr
	};
	/* --help prints to stdout and exits 0, as every other command's does (before the shared
	 * parser it went to stderr with status 2, getopt's '?' standing for both). */
	int rc = flags_parse_command(&parser, argc, argv, &help, usage, &seen);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (level >= 0)
		log_set_level(levels[level]);
	opt.webhook_port = (int)ports[0];
	opt.health_port = (int)ports[1];
	opt.metrics_port = (int)ports[2];
	opt.visibility_port = (int)ports[3];
	return manager_run(&opt);
}

int main(int argc, char **argv)
{
	/* kubectl runs plugins by their file name: kubectl-muster is this binary. */
	const char *self = argc > 0 ? strrchr(argv[0], '/') : NULL;
	self = self ? self + 1 : argc > 0 ? argv[0] : "";
	if (!strcmp(self, "kubectl-muster"))
		return cli_main(argc, argv, NULL);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("muster %s (%s)\n", MUSTER_VERSION, MUSTER_GIT);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "manager"))
		return cmd_manager(argc - 1, argv + 1);
	if (!strcmp(argv[1], "simulate"))
		return sim_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "replay-openb"))
		return replay_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "kubectl"))
		return cli_main(argc - 1, argv + 1, NULL);
	if (!strcmp(argv[1], "replay-philly"))
		return philly_main(argc - 1, argv + 1);
	fprintf(stderr, "muster: unknown command %s\n", argv[1]);
	usage(stderr);
	return 2;
}
