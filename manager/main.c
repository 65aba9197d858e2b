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
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/num.h"
#include "ctrl/manager.h"
#include "sim/philly.h"
#include "sim/replay.h"
#include "sim/simulate.h"
#include "util/log.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: muster <command> [flags]\n"
		"\n"
		"commands:\n"
		"  manager     run the admission and quota manager against a cluster\n"
		"  simulate    run admission on the objects in FILE... without a cluster\n"
		"              (muster simulate --help)\n"
		"  replay-openb\n"
		"              replay the Alibaba GPU trace through placement under the FGD paper's\n"
		"              protocol (muster replay-openb --help)\n"
		"  kubectl     the kubectl plugin: queues, pending workloads, why, eta, history, usage\n"
		"              (muster kubectl --help; run as kubectl-muster, it is `kubectl muster`)\n"
		"  replay-philly\n"
		"              replay the Philly job trace and measure how close the forecast's\n"
		"              admission times come (muster replay-philly --help)\n"
		"  --version   print the version\n"
		"\n"
		"manager flags:\n"
		"  --kubeconfig FILE     kubeconfig to use (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
		"  --config FILE         configuration (Kueue's Configuration shape; see config/manager.yaml)\n"
		"  --state-dir DIR       keep the webhook CA and certificate here across restarts\n"
		"                        (URL mode; with internalCertManagement.webhookServiceName\n"
		"                        they live in a Secret)\n"
		"  --webhook-host ADDR   address the webhook listens on and, in URL mode, the apiserver\n"
		"                        calls (config webhook.host; 127.0.0.1, or all in service mode)\n"
		"  --webhook-port PORT   webhook HTTPS port (config webhook.port; 9443; 0 picks a free one)\n"
		"  --health-host ADDR    address of /healthz and /readyz\n"
		"                        (config health.healthProbeBindAddress; 127.0.0.1)\n"
		"  --health-port PORT    port of /healthz and /readyz (likewise; 8081)\n"
		"  --metrics-port PORT   port of /metrics, over the configuration's metrics.bindAddress\n"
		"                        (whose default is :8080)\n"
		"  --visibility-port PORT  port of the visibility endpoint (HTTPS: positions, why, eta,\n"
		"                        history, usage), over visibilityServer.bindPort (8082)\n"
		"  --log-level LEVEL     debug, info, warn or error (info)\n");
}

static int parse_port(const char *s, int *out)
{
	int64_t v;
	if (num_parse_i64(s, 0, 65535, &v) != 0)
		return -1;
	*out = (int)v;
	return 0;
}

static int cmd_manager(int argc, char **argv)
{
	static const struct option options[] = {
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "webhook-host", required_argument, NULL, 'w' },
		{ "webhook-port", required_argument, NULL, 'p' },
		{ "health-host", required_argument, NULL, 'h' },
		{ "health-port", required_argument, NULL, 'P' },
		{ "metrics-port", required_argument, NULL, 'M' },
		{ "visibility-port", required_argument, NULL, 'V' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, '?' },
		{ NULL, 0, NULL, 0 },
	};
	/* Unset (NULL, -1): the configuration file's value, else the default. */
	struct manager_options opt = { .webhook_port = -1, .health_port = -1, .metrics_port = -1,
				       .visibility_port = -1 };
	int c;
	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (c) {
		case 'k':
			opt.kubeconfig = optarg;
			break;
		case 'c':
			opt.config = optarg;
			break;
		case 's':
			opt.state_dir = optarg;
			break;
		case 'w':
			opt.webhook_host = optarg;
			break;
		case 'h':
			opt.health_host = optarg;
			break;
		case 'p':
		case 'P':
		case 'M':
		case 'V':
			if (parse_port(optarg, c == 'p' ? &opt.webhook_port :
					       c == 'P' ? &opt.health_port :
					       c == 'M' ? &opt.metrics_port :
							  &opt.visibility_port) != 0) {
				fprintf(stderr, "muster: invalid port %s\n", optarg);
				return 2;
			}
			break;
		case 'l':
			if (!strcmp(optarg, "debug"))
				log_set_level(LOG_DEBUG);
			else if (!strcmp(optarg, "info"))
				log_set_level(LOG_INFO);
			else if (!strcmp(optarg, "warn"))
				log_set_level(LOG_WARN);
			else if (!strcmp(optarg, "error"))
				log_set_level(LOG_ERROR);
			else {
				fprintf(stderr, "muster: invalid log level %s\n", optarg);
				return 2;
			}
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "muster: unexpected argument %s\n", argv[optind]);
		return 2;
	}
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
