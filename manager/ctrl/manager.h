/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manager: caches the cluster through informers, turns queued Jobs into Workloads, admits
 * whole Workloads into ClusterQueues, starts their Jobs, keeps queue status current, and serves
 * the admission webhooks, /healthz and /readyz. Everything runs on one libuv loop.
 */
#ifndef MUSTER_MANAGER_H
#define MUSTER_MANAGER_H

struct manager_options {
	const char *kubeconfig; /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
	const char *config; /* configuration file (api/config.h), or NULL for Kueue's defaults */
	const char *state_dir; /* webhook certificates live here; NULL = in memory only */
	/* Flags over the configuration file: NULL or -1 takes the file's webhook and health
	 * fields, else the defaults (api/config.h). manager_run fills them in. */
	const char *webhook_host; /* address to listen on and, in URL mode, to advertise */
	int webhook_port;
	const char *health_host;
	int health_port;
	int metrics_port; /* overrides metrics.bindAddress's port; -1 = keep it */
	int visibility_port; /* overrides visibilityServer.bindPort; -1 = keep it */
};

/* Runs until SIGTERM or SIGINT. Returns the process exit status. */
int manager_run(const struct manager_options *opt);

#endif
