/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manager's configuration file, in the shape of Kueue's Configuration
 * (config.kueue.x-k8s.io/v1beta2), so a Kueue operator's settings carry over:
 *
 *   apiVersion: config.kueue.x-k8s.io/v1beta2
 *   kind: Configuration
 *   waitForPodsReady:
 *     timeout: 10m                 # admitted -> all pods ready or succeeded, else evicted
 *     recoveryTimeout: 5m          # ready -> not ready -> ready again, else evicted
 *     requeuingStrategy:
 *       timestamp: Eviction        # or Creation: where an evicted workload re-enters its queue
 *       backoffBaseSeconds: 60     # requeue after base * 2^(n-1) seconds (+ jitter) ...
 *       backoffMaxSeconds: 3600    # ... at most this
 *       backoffLimitCount: 5       # then deactivate (spec.active=false); unset = never
 *   placement:                     # muster's own section (Kueue has no node placement)
 *     mode: Preferred              # hints at start: Preferred (node affinity), Exact
 *                                  # (scheduling gate, then a node per pod) or None
 *     nodeFeasibility: true        # a gang with no node layout stays pending (kueue#407)
 *     gpuResource: nvidia.com/gpu  # the resource tracked GPU by GPU
 *   clientConnection:              # the apiserver client's rate limit, as Kueue's
 *     qps: 300                     # requests a second on average
 *     burst: 500                   # at most this many at once after a quiet spell
 *   leaderElection:                # one replica admits and writes (kube/lease.h)
 *     leaderElect: true
 *     resourceLock: leases         # the only lock there is
 *     resourceName: muster-manager # the coordination.k8s.io/v1 Lease
 *     resourceNamespace: muster-system  # default: the manager's namespace
 *     leaseDuration: 15s           # a follower takes over this long after the last renewal
 *     renewDeadline: 10s           # the leader stops writing if it could not renew this long
 *     retryPeriod: 2s              # renewals and retries
 *   metrics:                       # Prometheus text format on GET /metrics, plain HTTP
 *     bindAddress: ":8080"         # host:port; an empty host listens on every address
 *     enableClusterQueueResources: true  # the cluster_queue_resource, quota and limit series
 *   namespace: muster-system       # where the manager's Secret (and Service) live; unset:
 *                                  # $POD_NAMESPACE, the service account's namespace file,
 *                                  # else muster-system (resolved by the manager)
 *   visibilityServer:              # positions, why, eta, history, usage (ctrl/visibility.c),
 *     bindAddress: ""              # over HTTPS with the webhook's certificate; "" = every
 *     bindPort: 8082               # address; Kueue's field and default port
 *   ledger:                        # the decision ledger (ledger/ledger.h), SQLite
 *     enable: true
 *     path: ""                     # "" = <--state-dir>/ledger.db (off without --state-dir)
 *     maxAge: 720h                 # records older than this go
 *     maxSize: 256Mi               # and the oldest go while the file is larger
 *   webhook:
 *     port: 9443                   # --webhook-port overrides
 *     host: ""                     # listen address; "" = all (service mode) or 127.0.0.1
 *                                  # (URL mode, where it is also the address in the URL)
 *   health:
 *     healthProbeBindAddress: ":8081"  # /healthz, /readyz; unset = 127.0.0.1:8081
 *   internalCertManagement:
 *     enable: true                 # muster always manages its certificates; false is refused
 *     webhookServiceName: muster-webhook-service  # set: the webhook configurations reference
 *                                  # this Service (clientConfig.service), the serving
 *                                  # certificate names it, and CA and key pair live in ...
 *     webhookSecretName: muster-webhook-server-cert  # ... this Secret, shared by the
 *                                  # replicas. Unset: URL mode (https://host:port/path)
 *   fairSharing:                   # present (even {}): fair sharing on, as in Kueue
 *     preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
 *                                  # or either one alone; absent or []: both, in this order
 *   admissionFairSharing:          # present: admission fair sharing on, as in Kueue
 *     usageHalfLifeTime: 168h      # consumed usage halves in this long; absent or 0: none
 *                                  # is remembered (Kueue has no default: its zero value)
 *     usageSamplingInterval: 5m    # how often usage is sampled; > 0, default 5m
 *     resourceWeights:             # resource -> weight >= 0 in a LocalQueue's usage;
 *       nvidia.com/gpu: 4          # unlisted resources weigh 1
 *   admissionHold:                 # muster's own: how a queued object is held at create
 *     mode: Auto                   # Auto: by MutatingAdmissionPolicy where the server serves
 *                                  # it (Kubernetes 1.36+), else by the mutating webhook;
 *                                  # AdmissionPolicy (required) or Webhook (always)
 *   gangScheduling:                # muster's own: kube-scheduler binds an admitted Job's pods
 *     mode: Auto                   # all or nothing (scheduling.k8s.io/v1beta1 PodGroup).
 *                                  # Auto: where the server serves PodGroups and keeps a Job's
 *                                  # spec.scheduling (1.37+ with GenericWorkload and
 *                                  # WorkloadWithJob); Enabled (required) or Disabled
 *
 * Defaults follow Kueue v1beta2: waitForPodsReady is on, timeout 30m, recoveryTimeout = timeout,
 * Eviction, 60 s, 3600 s, no limit; clientConnection qps 300, burst 500; leaderElection on with
 * 15 s / 10 s / 2 s; metrics on ":8080", without the ClusterQueue resource series (Kueue's code
 * default; its shipped manager config turns them on, as ours does); fair sharing and admission
 * fair sharing off. One difference: Kueue silently turns usageSamplingInterval 0 into its
 * default, muster refuses it. A field muster does not know or implement is an error that
 * names it: an operator must never believe a setting is in force when it is not.
 */
#ifndef MUSTER_CONFIG_H
#define MUSTER_CONFIG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/engine.h"

struct eobj_arena;

enum placement_mode { PLACEMENT_PREFERRED, PLACEMENT_EXACT, PLACEMENT_NONE };
/* admissionHold.mode and gangScheduling.mode: Auto follows what the server serves (ctrl/hold.c
 * finds out at start); the others are demands, and one the server can't meet stops the start. */
enum hold_mode { HOLD_AUTO, HOLD_POLICY, HOLD_WEBHOOK };
enum gang_mode { GANG_AUTO, GANG_ENABLED, GANG_DISABLED };

#define CONFIG_API_VERSION "config.kueue.x-k8s.io/v1beta2"
#define CONFIG_NAME_MAX 254
#define CONFIG_HOST_MAX 64 /* an IPv4 or IPv6 literal */
#define CONFIG_WEBHOOK_SECRET_DEFAULT "muster-webhook-server-cert"

struct muster_config {
	int wait_for_pods_ready; /* enabled */
	int64_t pods_ready_timeout_ms;
	int64_t recovery_timeout_ms; /* 0 = no recovery timeout */
	int requeue_at_creation; /* requeuingStrategy.timestamp Creation (else Eviction) */
	int64_t backoff_base_s;
	int64_t backoff_max_s;
	int has_backoff_limit;
	int32_t backoff_limit_count;
	enum placement_mode placement_mode;
	int node_feasibility;
	char gpu_resource[CONFIG_NAME_MAX];
	double client_qps;
	int client_burst;
	int leader_elect;
	char lease_name[CONFIG_NAME_MAX];
	char lease_namespace[CONFIG_NAME_MAX]; /* "" = the manager's namespace */
	int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
	char metrics_host[CONFIG_HOST_MAX]; /* metrics.bindAddress's host; "" = every address */
	int metrics_port; /* and its port */
	int metrics_cq_resources; /* metrics.enableClusterQueueResources */
	char namespace_name[CONFIG_NAME_MAX]; /* "" = unset */
	char webhook_host[CONFIG_HOST_MAX];
	int has_webhook_host; /* webhook.host given ("" is a value: all interfaces) */
	int webhook_port; /* 9443 */
	char health_host[CONFIG_HOST_MAX]; /* "" = all interfaces */
	int health_port; /* -1 = health.healthProbeBindAddress unset */
	char webhook_service[CONFIG_NAME_MAX]; /* "" = URL mode */
	char webhook_secret[CONFIG_NAME_MAX];
	/* integrations.frameworks: which kinds muster manages, a bit per integration
	 * (config_framework_bit) */
	unsigned frameworks;
	int manage_without_queue_name; /* manageJobsWithoutQueueName */
	/* managedJobsNamespaceSelector as a LabelSelector (owned: config_release), or NULL for
	 * Kueue's default: every namespace but kube-system and the manager's own. The JSON is
	 * what the webhooks' namespaceSelector repeats; managed_selector is it decoded, for
	 * config_namespace_managed, its strings in managed_arena. */
	json_t *managed_namespaces;
	struct eobj_arena *managed_arena;
	const struct label_selector *managed_selector;
	/* visibilityServer.bindAddress; "" = every address */
	char visibility_host[CONFIG_HOST_MAX];
	int visibility_port; /* visibilityServer.bindPort, 8082 */
	int ledger_enable; /* ledger.enable, true */
	char ledger_path[1024]; /* ledger.path; "" = <--state-dir>/ledger.db */
	int64_t ledger_max_age_ms; /* ledger.maxAge, 720h */
	int64_t ledger_max_bytes; /* ledger.maxSize, 256Mi */
	/* fairSharing, as the engine takes it (engine_set_fair_sharing): enabled when the
	 * section is present; strategies always filled in (Kueue's default when none given). */
	struct eng_fair_sharing fair_sharing;
	/* admissionFairSharing (engine_set_admission_fair_sharing): enabled when present. Its
	 * weights point into afs_weights, which cfg owns (config_release). */
	struct eng_admission_fair_sharing admission_fair_sharing;
	struct eng_afs_weight *afs_weights; /* one block: the weights, then their names */
	enum hold_mode hold_mode; /* admissionHold.mode, Auto */
	enum gang_mode gang_mode; /* gangScheduling.mode, Auto */
};

/* The bit of frameworks for a Kueue integrations.frameworks name ("batch/job"): one per
 * integration muster implements (api/integrations.h), 0 for any other name. */
unsigned config_framework_bit(const char *framework);
/* Whether integrations.frameworks lists framework (a Kueue name, e.g. "batch/job"). */
int config_framework_enabled(const struct muster_config *cfg, const char *framework);
/* Whether muster manages objects in a namespace with this name and labels (a JSON object or
 * NULL): managedJobsNamespaceSelector, or its default. */
int config_namespace_managed(const struct muster_config *cfg, const char *name, json_t *labels);
/* Frees what cfg owns (after config_load or config_parse; copies share it). */
void config_release(struct muster_config *cfg);

/* Kueue's defaults. */
void config_defaults(struct muster_config *cfg);

/* Parses a configuration document (YAML or JSON) over cfg's current values. Returns 0, or
 * -EINVAL with err naming the field and the problem, or -ENOMEM. On failure cfg is released
 * (config_release) and must be set up again before use. */
int config_parse(const char *data, size_t len, struct muster_config *cfg, char *err, size_t errlen);
/* The same for a document already parsed (a JSON object, borrowed), e.g. one document of
 * `muster simulate`'s input: the same rules, in one place. */
int config_parse_json(json_t *doc, struct muster_config *cfg, char *err, size_t errlen);

/* Reads path and parses it over Kueue's defaults. -errno or -EINVAL with err. */
int config_load(const char *path, struct muster_config *cfg, char *err, size_t errlen);

/* Splits a Go listen address, "host:port" (":8080", "127.0.0.1:8080", "[::1]:8080"), into a
 * numeric host ("" for none; IPv6 without brackets) and a port from 0 to 65535. 0, or -EINVAL. */
int config_split_address(const char *addr, char *host, size_t host_size, int *port);

/* Parses a Go duration ("90s", "5m", "1h30m", "250ms"): 0 with *ms set, or -EINVAL. */
int config_parse_duration(const char *s, int64_t *ms);

#endif
