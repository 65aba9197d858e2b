/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kind table: what each kind of object the manager watches or keys is, in one place. The
 * informers (ingest.c), Events and logs (writer.c), API paths, compact stores (state.c) and
 * the owner lookups all read it. An integrated kind's row is made from its integration
 * (api/integrations.h's INTEGRATED_OWNERS), so a new integrated kind adds no row here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/objects.h"
#include "ctrl/internal.h"

/* The slim and model functions are ingest.c's and nodes.c's, above this file: only the
 * informers call them, through the table, so the table adds no call from below. */
#define OWNER_ROW(name, in)                                                                        \
	[K_##name] = {                                                                             \
		.watched = 1, .label_selector = LABEL_QUEUE_NAME, .integration = &in, .compact = 1 \
	},
static const struct kind_def table[K_KINDS] = {
	INTEGRATED_OWNERS(OWNER_ROW)[K_WORKLOAD] = { .name = "Workload",
						     .api_version = KUEUE_API_VERSION,
						     .plural = "workloads",
						     .watched = 1,
						     .slim_rule = &obj_workload_rule,
						     .compact = 1 },
	[K_CQ] = { .name = "ClusterQueue",
		   .api_version = KUEUE_API_VERSION,
		   .plural = "clusterqueues",
		   .watched = 1,
		   .cluster_scoped = 1 },
	[K_LQ] = { .name = "LocalQueue",
		   .api_version = KUEUE_API_VERSION,
		   .plural = "localqueues",
		   .watched = 1 },
	[K_FLAVOR] = { .name = "ResourceFlavor",
		       .api_version = KUEUE_API_VERSION,
		       .plural = "resourceflavors",
		       .watched = 1,
		       .cluster_scoped = 1 },
	[K_NAMESPACE] = { .name = "Namespace",
			  .api_version = "v1",
			  .plural = "namespaces",
			  .watched = 1,
			  .cluster_scoped = 1 },
	[K_WPC] = { .name = "WorkloadPriorityClass",
		    .api_version = KUEUE_API_VERSION,
		    .plural = "workloadpriorityclasses",
		    .watched = 1,
		    .cluster_scoped = 1 },
	[K_PC] = { .name = "PriorityClass",
		   .api_version = "scheduling.k8s.io/v1",
		   .plural = "priorityclasses",
		   .watched = 1,
		   .cluster_scoped = 1 },
	[K_COHORT] = { .name = "Cohort",
		       .api_version = KUEUE_API_VERSION,
		       .plural = "cohorts",
		       .watched = 1,
		       .cluster_scoped = 1 },
	[K_TOPOLOGY] = { .name = "Topology",
			 .api_version = KUEUE_API_VERSION,
			 .plural = "topologies",
			 .watched = 1,
			 .cluster_scoped = 1 },
	[K_NODE] = { .name = "Node",
		     .api_version = "v1",
		     .plural = "nodes",
		     .watched = 1,
		     .model = nodes_model_node,
		     .cluster_scoped = 1 },
	[K_POD] = { .name = "Pod",
		    .api_version = "v1",
		    .plural = "pods",
		    .watched = 1,
		    .slim = nodes_slim_pod },
	/* Queued Pods whole, beside K_POD's slim copies of every pod. */
	[K_GPOD] = { .name = "Pod",
		     .api_version = "v1",
		     .plural = "pods",
		     .watched = 1,
		     .informer = "queuedpods",
		     .label_selector = LABEL_QUEUE_NAME,
		     .integration = &integration_pod,
		     .compact = 1 },
	/* A pod group is keyed by its Workload's key; its Events go to that Workload. */
	[K_PODGROUP] = { .name = "Workload",
			 .api_version = KUEUE_API_VERSION,
			 .plural = "workloads",
			 .integration = &integration_pod },
};
#undef OWNER_ROW

const struct kind_def *kind_def(enum kind kind)
{
	return &table[kind];
}

static int is_owner(enum kind kind)
{
	return kind >= K_OWNER_FIRST && kind <= K_OWNER_LAST;
}

const char *kind_name(enum kind kind)
{
	return is_owner(kind) ? table[kind].integration->kind : table[kind].name;
}

const char *kind_api_version(enum kind kind)
{
	return is_owner(kind) ? table[kind].integration->api_version : table[kind].api_version;
}

const char *kind_plural(enum kind kind)
{
	return is_owner(kind) ? table[kind].integration->plural : table[kind].plural;
}

int kind_optional(enum kind kind)
{
	return is_owner(kind) && strchr(table[kind].integration->group, '.') != NULL;
}

int kind_path(enum kind kind, const char *ns, const char *name, const char *subresource, char *buf,
	      size_t size)
{
	const char *api = kind_api_version(kind);
	/* The core group ("v1") is served under /api, every other under /apis. */
	int n = snprintf(buf, size, "%s/%s%s%s/%s%s%s%s", strchr(api, '/') ? "/apis" : "/api", api,
			 ns && !table[kind].cluster_scoped ? "/namespaces/" : "",
			 ns && !table[kind].cluster_scoped ? ns : "", kind_plural(kind),
			 name ? "/" : "", name ? name : "", subresource ? subresource : "");
	return n >= 0 && (size_t)n < size ? 0 : -ENOSPC;
}

const struct integration *owner_integration(enum kind kind)
{
	return is_owner(kind) || kind == K_PODGROUP ? table[kind].integration : NULL;
}

enum kind owner_kind_for(const char *api_version, const char *kind)
{
	const struct integration *in = integration_for(api_version, kind);
	for (enum kind k = K_OWNER_FIRST; in && k <= K_OWNER_LAST; k++)
		if (table[k].integration == in)
			return k;
	return K_KINDS;
}

int owner_enabled(struct mgr *m, enum kind kind)
{
	const struct integration *in = owner_integration(kind);
	return in && config_framework_enabled(&m->conf, in->framework);
}
