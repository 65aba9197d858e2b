/* SPDX-License-Identifier: Apache-2.0 */
/* The manager's configuration file: Kueue's defaults, every field, and every refusal. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "api/config.h"
#include "api/objects.h"
#include "kube/lease.h"

static int parse(const char *text, struct muster_config *cfg, char *err, size_t errlen)
{
	config_defaults(cfg);
	return config_parse(text, strlen(text), cfg, err, errlen);
}

static void test_config_defaults_follow_kueue_v1beta2(void **state)
{
	struct muster_config c;
	char err[256];
	assert_int_equal(parse("", &c, err, sizeof(err)), 0);
	assert_true(c.wait_for_pods_ready);
	assert_int_equal(c.pods_ready_timeout_ms, 30 * 60 * 1000);
	assert_int_equal(c.recovery_timeout_ms, 30 * 60 * 1000);
	assert_int_equal(c.backoff_base_s, 60);
	assert_int_equal(c.backoff_max_s, 3600);
	assert_false(c.has_backoff_limit);
	assert_false(c.requeue_at_creation);
	assert_int_equal(c.placement_mode, PLACEMENT_PREFERRED);
	assert_true(c.node_feasibility);
	assert_string_equal(c.gpu_resource, "nvidia.com/gpu");
}

static void test_config_placement_section(void **state)
{
	struct muster_config c;
	char err[256];
	assert_int_equal(parse("placement: {mode: Exact, nodeFeasibility: false, gpuResource: "
			       "amd.com/gpu}\n",
			       &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.placement_mode, PLACEMENT_EXACT);
	assert_false(c.node_feasibility);
	assert_string_equal(c.gpu_resource, "amd.com/gpu");
	assert_int_equal(parse("placement: {mode: None}\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.placement_mode, PLACEMENT_NONE);
	assert_true(c.node_feasibility);
}

static void test_config_hold_and_gang(void **state)
{
	(void)state;
	struct muster_config c;
	char err[256];
	assert_int_equal(parse("placement: {}\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.hold_mode, HOLD_AUTO);
	assert_int_equal(c.gang_mode, GANG_AUTO);
	assert_int_equal(parse("admissionHold: {mode: Webhook}\ngangScheduling: {mode: Disabled}\n",
			       &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.hold_mode, HOLD_WEBHOOK);
	assert_int_equal(c.gang_mode, GANG_DISABLED);
	assert_int_equal(parse("admissionHold: {mode: AdmissionPolicy}\ngangScheduling: {mode: "
			       "Enabled}\n",
			       &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.hold_mode, HOLD_POLICY);
	assert_int_equal(c.gang_mode, GANG_ENABLED);
}

static void test_config_full_document_is_read(void **state)
{
	struct muster_config c;
	char err[256];
	const char *doc = "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
			  "kind: Configuration\n"
			  "waitForPodsReady:\n"
			  "  timeout: 1h30m\n"
			  "  recoveryTimeout: 90s\n"
			  "  requeuingStrategy:\n"
			  "    timestamp: Creation\n"
			  "    backoffBaseSeconds: 5\n"
			  "    backoffMaxSeconds: 100\n"
			  "    backoffLimitCount: 3\n";
	assert_int_equal(parse(doc, &c, err, sizeof(err)), 0);
	assert_int_equal(c.pods_ready_timeout_ms, 90 * 60 * 1000);
	assert_int_equal(c.recovery_timeout_ms, 90 * 1000);
	assert_true(c.requeue_at_creation);
	assert_int_equal(c.backoff_base_s, 5);
	assert_int_equal(c.backoff_max_s, 100);
	assert_true(c.has_backoff_limit);
	assert_int_equal(c.backoff_limit_count, 3);
}

static void test_config_recovery_timeout_defaults_to_timeout(void **state)
{
	struct muster_config c;
	char err[256];
	assert_int_equal(parse("waitForPodsReady: {timeout: 2m}\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.recovery_timeout_ms, 120000);
}

static void test_config_disable(void **state)
{
	struct muster_config c;
	char err[256];
	assert_int_equal(parse("waitForPodsReady: {enable: false}\n", &c, err, sizeof(err)), 0);
	assert_false(c.wait_for_pods_ready);
}

static void test_config_refusals_name_the_field(void **state)
{
	static const struct {
		const char *doc;
		const char *expect;
	} cases[] = {
		{ "queueVisibility: {}\n", "queueVisibility: unknown or unsupported field" },
		{ "waitForPodsReady: {tiemout: 5m}\n", "waitForPodsReady.tiemout: unknown" },
		{ "waitForPodsReady: {blockAdmission: true}\n",
		  "blockAdmission: not implemented yet" },
		{ "waitForPodsReady: {timeout: 5 minutes}\n",
		  "waitForPodsReady.timeout: invalid duration" },
		{ "waitForPodsReady: {timeout: 0s}\n", "timeout: must be positive" },
		{ "waitForPodsReady: {requeuingStrategy: {timestamp: Later}}\n",
		  "must be Eviction or Creation" },
		{ "waitForPodsReady: {requeuingStrategy: {backoffLimitCount: -1}}\n",
		  "backoffLimitCount: must be an integer" },
		{ "waitForPodsReady: {requeuingStrategy: {backoffBaseSeconds: x}}\n",
		  "backoffBaseSeconds: must be an integer" },
		{ "kind: Deployment\n", "want kind Configuration" },
		{ "admissionHold: {mode: Policy}\n",
		  "admissionHold.mode: must be Auto, AdmissionPolicy or Webhook" },
		{ "admissionHold: Webhook\n", "admissionHold: must be a mapping" },
		{ "gangScheduling: {mode: Auto, minCount: 2}\n",
		  "gangScheduling.minCount: unknown" },
		{ "a: b\n---\nc: d\n", "expected one document" },
		{ "- 1\n", "must be a mapping" },
		{ "waitForPodsReady: [1]\n", "waitForPodsReady: must be a mapping" },
		{ "waitForPodsReady: {timeout: [}\n", "line" },
		{ "placement: {mode: Hints}\n",
		  "placement.mode: must be Preferred, Exact or None" },
		{ "placement: {nodeFeasibility: yes please}\n",
		  "placement.nodeFeasibility: must be true or false" },
		{ "placement: {gpuResource: \"\"}\n",
		  "placement.gpuResource: must be a resource name" },
		{ "placement: {spread: true}\n", "placement.spread: unknown" },
		{ "placement: 1\n", "placement: must be a mapping" },
		{ "visibilityServer: {bindPort: 70000}\n",
		  "visibilityServer.bindPort: must be an integer from 0" },
		{ "visibilityServer: {bindAddress: localhost}\n",
		  "visibilityServer.bindAddress: want a numeric address" },
		{ "visibilityServer: {port: 1}\n", "visibilityServer.port: unknown" },
		{ "ledger: {maxSize: 10k}\n", "ledger.maxSize: want a size of at least 1Mi" },
		{ "ledger: {maxSize: lots}\n", "ledger.maxSize: want a size" },
		{ "ledger: {maxAge: forever}\n", "ledger.maxAge: invalid duration" },
		{ "ledger: {enable: sure}\n", "ledger.enable: must be true or false" },
		{ "ledger: {path: [a]}\n", "ledger.path" },
		{ "clientConnection: {qps: 0}\n",
		  "clientConnection.qps: must be a number above 0" },
		{ "clientConnection: {qps: fast}\n",
		  "clientConnection.qps: must be a number above 0" },
		{ "clientConnection: {burst: 0}\n",
		  "clientConnection.burst: must be an integer from 1" },
		{ "clientConnection: {burst: 2.5}\n",
		  "clientConnection.burst: must be an integer from 1" },
		{ "clientConnection: {kubeconfig: x}\n", "clientConnection.kubeconfig: unknown" },
		{ "clientConnection: []\n", "clientConnection: must be a mapping" },
		{ "leaderElection: {leaderElect: maybe}\n",
		  "leaderElection.leaderElect: must be true or false" },
		{ "leaderElection: {resourceLock: configmaps}\n", "resourceLock: only \"leases\"" },
		{ "leaderElection: {resourceName: My_Lease}\n",
		  "resourceName: must be a lowercase DNS name" },
		{ "leaderElection: {resourceNamespace: \"\"}\n",
		  "resourceNamespace: must be a lowercase DNS name" },
		{ "leaderElection: {leaseDuration: 1500ms}\n",
		  "leaseDuration: must be whole seconds" },
		{ "leaderElection: {leaseDuration: 10s}\n",
		  "renewDeadline: must be shorter than leaseDuration" },
		{ "leaderElection: {retryPeriod: 9s}\n", "renewDeadline more than 1.2 times it" },
		{ "leaderElection: {retryPeriod: 50ms}\n", "retryPeriod: must be at least 100ms" },
		{ "leaderElection: {leaseDuration: soon}\n",
		  "leaderElection.leaseDuration: invalid duration" },
		{ "leaderElection: {lockName: x}\n", "leaderElection.lockName: unknown" },
		{ "leaderElection: true\n", "leaderElection: must be a mapping" },
		{ "metrics: {bindAddress: 8080}\n", "metrics.bindAddress: want host:port" },
		{ "metrics: {bindAddress: \":http\"}\n", "metrics.bindAddress: want host:port" },
		{ "metrics: {bindAddress: \":70000\"}\n", "metrics.bindAddress: want host:port" },
		{ "metrics: {bindAddress: \"localhost:8080\"}\n",
		  "metrics.bindAddress: want host:port" },
		{ "metrics: {bindAddress: \"::1:8080\"}\n", "metrics.bindAddress: want host:port" },
		{ "metrics: {enableClusterQueueResources: maybe}\n",
		  "enableClusterQueueResources: must be true or false" },
		{ "metrics: {customLabels: []}\n", "metrics.customLabels: unknown" },
		{ "fairSharing: true\n", "fairSharing: must be a mapping" },
		{ "fairSharing: {enable: true}\n",
		  "fairSharing.enable: unknown or unsupported field" },
		{ "fairSharing: {preemptionStrategies: LessThanInitialShare}\n",
		  "fairSharing.preemptionStrategies: must be a list" },
		{ "fairSharing: {preemptionStrategies: [LessThanFinalShare]}\n",
		  "fairSharing.preemptionStrategies[0]: \"LessThanFinalShare\" is not a strategy "
		  "(LessThanOrEqualToFinalShare, LessThanInitialShare)" },
		{ "fairSharing: {preemptionStrategies: [LessThanInitialShare, 3]}\n",
		  "fairSharing.preemptionStrategies[1]: \"\" is not a strategy" },
		{ "fairSharing: {preemptionStrategies: [LessThanInitialShare, "
		  "LessThanOrEqualToFinalShare]}\n",
		  "fairSharing.preemptionStrategies: must be [LessThanOrEqualToFinalShare], "
		  "[LessThanInitialShare] or [LessThanOrEqualToFinalShare, LessThanInitialShare]" },
		{ "fairSharing: {preemptionStrategies: [LessThanInitialShare, "
		  "LessThanInitialShare]}\n",
		  "fairSharing.preemptionStrategies: must be [" },
		{ "fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare, "
		  "LessThanInitialShare, "
		  "LessThanInitialShare]}\n",
		  "fairSharing.preemptionStrategies: must be [" },
		{ "admissionFairSharing: []\n", "admissionFairSharing: must be a mapping" },
		{ "admissionFairSharing: {usageHalfLife: 1h}\n",
		  "admissionFairSharing.usageHalfLife: unknown or unsupported field" },
		{ "admissionFairSharing: {usageHalfLifeTime: -1h}\n",
		  "admissionFairSharing.usageHalfLifeTime: invalid duration" },
		{ "admissionFairSharing: {usageSamplingInterval: 0s}\n",
		  "admissionFairSharing.usageSamplingInterval: must be greater than 0 (leave it "
		  "out for "
		  "the default, 5m)" },
		{ "admissionFairSharing: {usageSamplingInterval: often}\n",
		  "admissionFairSharing.usageSamplingInterval: invalid duration" },
		{ "admissionFairSharing: {usageHalfLifeTime: 3000000h}\n",
		  "admissionFairSharing.usageHalfLifeTime: too long" },
		{ "admissionFairSharing: {resourceWeights: [cpu]}\n",
		  "admissionFairSharing.resourceWeights: must be a mapping of resource names to "
		  "weights" },
		{ "admissionFairSharing: {resourceWeights: {cpu: -1}}\n",
		  "admissionFairSharing.resourceWeights.cpu: must be a number of at least 0" },
		{ "admissionFairSharing: {resourceWeights: {cpu: heavy}}\n",
		  "admissionFairSharing.resourceWeights.cpu: must be a number of at least 0" },
		{ "admissionFairSharing: {resourceWeights: {\"\": 1}}\n",
		  "admissionFairSharing.resourceWeights: \"\" is not a resource name" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct muster_config c;
		char err[256] = "";
		assert_int_equal(parse(cases[i].doc, &c, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].expect))
			fail_msg("case %zu: error \"%s\" lacks \"%s\"", i, err, cases[i].expect);
	}
}

static void test_config_fair_sharing(void **state)
{
	struct muster_config c;
	char err[256];
	assert_int_equal(parse("", &c, err, sizeof(err)), 0);
	assert_false(c.fair_sharing.enabled); /* off unless the section is there */
	/* Present, even empty, turns it on, with Kueue's default strategies in their order. */
	static const char *const defaults[] = { "fairSharing: {}\n",
						"fairSharing: {preemptionStrategies: []}\n" };
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(parse(defaults[i], &c, err, sizeof(err)), 0);
		assert_true(c.fair_sharing.enabled);
		assert_int_equal(c.fair_sharing.n_strategies, 2);
		assert_int_equal(c.fair_sharing.strategies[0],
				 ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE);
		assert_int_equal(c.fair_sharing.strategies[1], ENG_FS_LESS_THAN_INITIAL_SHARE);
	}
	assert_int_equal(parse("fairSharing: {preemptionStrategies: [LessThanInitialShare]}\n", &c,
			       err, sizeof(err)),
			 0);
	assert_int_equal(c.fair_sharing.n_strategies, 1);
	assert_int_equal(c.fair_sharing.strategies[0], ENG_FS_LESS_THAN_INITIAL_SHARE);
	assert_int_equal(parse("fairSharing:\n  preemptionStrategies:\n  - "
			       "LessThanOrEqualToFinalShare\n",
			       &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.fair_sharing.n_strategies, 1);
	assert_int_equal(c.fair_sharing.strategies[0], ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE);
	assert_int_equal(parse("fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare, "
			       "LessThanInitialShare]}\n",
			       &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.fair_sharing.n_strategies, 2);
	assert_int_equal(c.fair_sharing.strategies[1], ENG_FS_LESS_THAN_INITIAL_SHARE);
}

static void test_config_admission_fair_sharing(void **state)
{
	struct muster_config c;
	char err[256];
	assert_int_equal(parse("", &c, err, sizeof(err)), 0);
	assert_false(c.admission_fair_sharing.enabled);
	/* Present turns it on: no half-life (Kueue's zero value), a 5-minute interval. */
	assert_int_equal(parse("admissionFairSharing: {}\n", &c, err, sizeof(err)), 0);
	assert_true(c.admission_fair_sharing.enabled);
	assert_int_equal(c.admission_fair_sharing.usage_half_life, 0);
	assert_int_equal(c.admission_fair_sharing.usage_sampling_interval, INT64_C(300000000000));
	assert_int_equal(c.admission_fair_sharing.n_weights, 0);
	assert_null(c.admission_fair_sharing.weights);
	config_release(&c);

	const char *doc = "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
			  "kind: Configuration\n"
			  "admissionFairSharing:\n"
			  "  usageHalfLifeTime: 168h\n"
			  "  usageSamplingInterval: 90s\n"
			  "  resourceWeights:\n"
			  "    cpu: 2.5\n"
			  "    nvidia.com/gpu: 4\n"
			  "    memory: 0\n";
	assert_int_equal(parse(doc, &c, err, sizeof(err)), 0);
	const struct eng_admission_fair_sharing *a = &c.admission_fair_sharing;
	assert_true(a->enabled);
	assert_int_equal(a->usage_half_life, INT64_C(168) * 3600 * 1000000000);
	assert_int_equal(a->usage_sampling_interval, INT64_C(90000000000));
	assert_int_equal(a->n_weights, 3);
	assert_ptr_equal(a->weights, c.afs_weights); /* owned by the config */
	assert_string_equal(a->weights[0].resource, "cpu");
	assert_true(a->weights[0].weight == 2.5);
	assert_string_equal(a->weights[1].resource, "nvidia.com/gpu");
	assert_true(a->weights[1].weight == 4.0);
	assert_string_equal(a->weights[2].resource, "memory");
	assert_true(a->weights[2].weight == 0.0);
	/* Parsing again over it replaces the weights (ASan sees the old block freed once). */
	const char *again = "admissionFairSharing: {resourceWeights: {cpu: 1}}\n";
	assert_int_equal(config_parse(again, strlen(again), &c, err, sizeof(err)), 0);
	assert_int_equal(c.admission_fair_sharing.n_weights, 1);
	assert_int_equal(c.admission_fair_sharing.usage_sampling_interval, INT64_C(300000000000));
	config_release(&c);
	assert_null(c.afs_weights);
	assert_int_equal(c.admission_fair_sharing.n_weights, 0);

	/* A failed parse leaves nothing owned behind. */
	assert_int_equal(parse("admissionFairSharing: {resourceWeights: {cpu: 1}}\nfairSharing: "
			       "1\n",
			       &c, err, sizeof(err)),
			 -EINVAL);
	assert_null(c.afs_weights);
}

static void test_config_client_connection(void **state)
{
	struct muster_config c;
	char err[256] = "";
	config_defaults(&c);
	assert_true(c.client_qps == 300 && c.client_burst == 500); /* Kueue's defaults */
	assert_int_equal(parse("clientConnection: {qps: 50, burst: 100}\n", &c, err, sizeof(err)),
			 0);
	assert_true(c.client_qps == 50 && c.client_burst == 100);
	assert_int_equal(parse("clientConnection: {qps: 2.5}\n", &c, err, sizeof(err)), 0);
	assert_true(c.client_qps == 2.5 && c.client_burst == 500);
}

/* Kueue's leaderElection section, with client-go's timings as defaults. */
static void test_config_leader_election(void **state)
{
	struct muster_config c;
	char err[256] = "";
	assert_int_equal(parse("", &c, err, sizeof(err)), 0);
	assert_true(c.leader_elect);
	assert_string_equal(c.lease_name, "muster-manager");
	assert_string_equal(c.lease_namespace, "");
	assert_int_equal(c.lease_duration_ms, 15000);
	assert_int_equal(c.renew_deadline_ms, 10000);
	assert_int_equal(c.retry_period_ms, 2000);
	assert_int_equal(parse("leaderElection:\n  leaderElect: false\n", &c, err, sizeof(err)), 0);
	assert_false(c.leader_elect);
	assert_int_equal(
		parse("leaderElection: {leaderElect: true, resourceLock: leases, resourceName: "
		      "c1f6bfd2.kueue.x-k8s.io, resourceNamespace: kueue-system, leaseDuration: "
		      "30s, renewDeadline: 20s, retryPeriod: 500ms}\n",
		      &c, err, sizeof(err)),
		0);
	assert_true(c.leader_elect);
	assert_string_equal(c.lease_name, "c1f6bfd2.kueue.x-k8s.io");
	assert_string_equal(c.lease_namespace, "kueue-system");
	assert_int_equal(c.lease_duration_ms, 30000);
	assert_int_equal(c.renew_deadline_ms, 20000);
	assert_int_equal(c.retry_period_ms, 500);
}

/* A Lease's times are MicroTimes: microseconds, always six digits, UTC. */
static void test_lease_micro_time(void **state)
{
	char buf[40];
	lease_format_micro_time(1764095400123LL, buf, sizeof(buf));
	assert_string_equal(buf, "2025-11-25T18:30:00.123000Z");
	lease_format_micro_time(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00.000000Z");
}

static void test_config_metrics(void **state)
{
	struct muster_config c;
	char err[256] = "";
	config_defaults(&c);
	assert_string_equal(c.metrics_host, "");
	assert_int_equal(c.metrics_port, 8080);
	assert_false(c.metrics_cq_resources); /* Kueue's code default */
	assert_int_equal(parse("metrics: {bindAddress: \"127.0.0.1:18082\", "
			       "enableClusterQueueResources: true}\n",
			       &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.metrics_host, "127.0.0.1");
	assert_int_equal(c.metrics_port, 18082);
	assert_true(c.metrics_cq_resources);
	assert_int_equal(parse("metrics: {bindAddress: \"[::1]:9090\"}\n", &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.metrics_host, "::1");
	assert_int_equal(c.metrics_port, 9090);
	assert_int_equal(parse("metrics: {bindAddress: \":0\"}\n", &c, err, sizeof(err)), 0);
	assert_string_equal(c.metrics_host, "");
	assert_int_equal(c.metrics_port, 0);
}

static void test_config_visibility_and_ledger(void **state)
{
	struct muster_config c;
	char err[256] = "";
	config_defaults(&c);
	assert_string_equal(c.visibility_host, "");
	assert_int_equal(c.visibility_port, 8082);
	assert_true(c.ledger_enable);
	assert_string_equal(c.ledger_path, "");
	assert_int_equal(c.ledger_max_age_ms, (int64_t)720 * 3600 * 1000);
	assert_int_equal(c.ledger_max_bytes, (int64_t)256 << 20);
	assert_int_equal(parse("visibilityServer: {bindAddress: 127.0.0.1, bindPort: 0}\n"
			       "ledger: {path: /var/lib/muster/ledger.db, maxAge: 24h, maxSize: "
			       "1Gi}\n",
			       &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.visibility_host, "127.0.0.1");
	assert_int_equal(c.visibility_port, 0);
	assert_string_equal(c.ledger_path, "/var/lib/muster/ledger.db");
	assert_int_equal(c.ledger_max_age_ms, (int64_t)24 * 3600 * 1000);
	assert_int_equal(c.ledger_max_bytes, (int64_t)1 << 30);
	assert_int_equal(parse("ledger: {enable: false}\n", &c, err, sizeof(err)), 0);
	assert_false(c.ledger_enable);
}

static void test_config_durations(void **state)
{
	int64_t ms;
	assert_int_equal(config_parse_duration("250ms", &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(config_parse_duration("1h2m3s", &ms), 0);
	assert_int_equal(ms, 3723000);
	assert_int_equal(config_parse_duration("0", &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(config_parse_duration("", &ms), -EINVAL);
	assert_int_equal(config_parse_duration("5", &ms), -EINVAL);
	assert_int_equal(config_parse_duration("m", &ms), -EINVAL);
	assert_int_equal(config_parse_duration("1d", &ms), -EINVAL);
	assert_int_equal(config_parse_duration("-5s", &ms), -EINVAL);
	assert_int_equal(config_parse_duration("99999999999999999999h", &ms), -EINVAL);
}

static void test_config_load_names_the_file(void **state)
{
	struct muster_config c;
	char err[512], path[] = "/tmp/muster-config-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("waitForPodsReady: {timeout: soon}\n", f);
	fclose(f);
	assert_int_equal(config_load(path, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "invalid duration"));
	remove(path);
	assert_true(config_load("/nonexistent/muster.yaml", &c, err, sizeof(err)) < 0);
}

/* namespace, webhook, health and internalCertManagement: Kueue's fields for how the manager
 * is reached in a cluster. Unset, the manager keeps URL mode on 127.0.0.1 (manager.c). */
static void test_config_serving_sections(void **state)
{
	struct muster_config c;
	char err[256];
	assert_int_equal(parse("", &c, err, sizeof(err)), 0);
	assert_string_equal(c.namespace_name, "");
	assert_int_equal(c.webhook_port, 9443);
	assert_false(c.has_webhook_host);
	assert_int_equal(c.health_port, -1);
	assert_string_equal(c.webhook_service, "");
	assert_string_equal(c.webhook_secret, "muster-webhook-server-cert");
	assert_int_equal(parse("namespace: ops\n"
			       "webhook: {port: 9444, host: \"\"}\n"
			       "health: {healthProbeBindAddress: \":8082\"}\n"
			       "internalCertManagement: {enable: true, webhookServiceName: svc,"
			       " webhookSecretName: sec}\n",
			       &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.namespace_name, "ops");
	assert_int_equal(c.webhook_port, 9444);
	assert_true(c.has_webhook_host);
	assert_string_equal(c.webhook_host, "");
	assert_string_equal(c.health_host, "");
	assert_int_equal(c.health_port, 8082);
	assert_string_equal(c.webhook_service, "svc");
	assert_string_equal(c.webhook_secret, "sec");
	static const char *const refused[][2] = {
		{ "internalCertManagement: {enable: false}\n", "internalCertManagement.enable" },
		{ "internalCertManagement: {webhookServiceName: \"\"}\n",
		  "internalCertManagement.webhookServiceName" },
		{ "internalCertManagement: {certDir: /tmp}\n", "internalCertManagement.certDir" },
		{ "webhook: {port: 0}\n", "webhook.port" },
		{ "webhook: {port: 70000}\n", "webhook.port" },
		{ "webhook: {certDir: /tmp}\n", "webhook.certDir" },
		{ "webhook: 9443\n", "webhook: must be a mapping" },
		{ "health: {healthProbeBindAddress: \"8081\"}\n", "health.healthProbeBindAddress" },
		{ "health: {readinessEndpointName: /r}\n", "health.readinessEndpointName" },
		{ "namespace: 3\n", "namespace" },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse(refused[i][0], &c, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, refused[i][1]));
	}
}

static void test_config_bind_address(void **state)
{
	char host[CONFIG_HOST_MAX];
	int port = 0;
	assert_int_equal(config_split_address(":8081", host, sizeof(host), &port), 0);
	assert_string_equal(host, "");
	assert_int_equal(port, 8081);
	assert_int_equal(config_split_address("10.0.0.1:80", host, sizeof(host), &port), 0);
	assert_string_equal(host, "10.0.0.1");
	assert_int_equal(port, 80);
	assert_int_equal(config_split_address("[::1]:8443", host, sizeof(host), &port), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 8443);
	static const char *const bad[] = { "",      "8081", ":",       ":65536",  ":80x", "::1:80",
					   "host:", ":-1",  "[::1:80", "name:80", NULL };
	for (size_t i = 0; bad[i]; i++)
		assert_int_equal(config_split_address(bad[i], host, sizeof(host), &port), -EINVAL);
	assert_int_equal(config_split_address(NULL, host, sizeof(host), &port), -EINVAL);
	/* A host longer than the buffer is refused, not cut. */
	assert_int_equal(config_split_address("10.10.10.10:80", host, 8, &port), -EINVAL);
}

/* integrations.frameworks, manageJobsWithoutQueueName and managedJobsNamespaceSelector, with
 * Kueue's names and defaults; a framework muster can't manage is refused, not ignored. */
static void test_config_integrations(void **state)
{
	(void)state;
	struct muster_config c;
	char err[512];
	config_defaults(&c);
	assert_true(config_framework_enabled(&c, "batch/job"));
	assert_true(config_framework_enabled(&c, "ray.io/rayjob"));
	assert_true(config_framework_enabled(&c, "ray.io/raycluster"));
	assert_false(config_framework_enabled(&c, "pod"));
	assert_false(c.manage_without_queue_name);
	assert_true(config_namespace_managed(&c, "team-a", NULL));
	assert_false(config_namespace_managed(&c, "kube-system", NULL));
	assert_false(config_namespace_managed(&c, "muster-system", NULL));

	assert_int_equal(parse("integrations:\n  frameworks: [pod, batch/job]\n"
			       "manageJobsWithoutQueueName: true\n"
			       "managedJobsNamespaceSelector:\n  matchLabels: {team: ml}\n",
			       &c, err, sizeof(err)),
			 0);
	assert_true(config_framework_enabled(&c, "pod"));
	assert_true(config_framework_enabled(&c, "batch/job"));
	assert_false(config_framework_enabled(&c, "ray.io/rayjob"));
	assert_true(c.manage_without_queue_name);
	json_t *ml = json_pack("{s:s}", "team", "ml"), *other = json_pack("{s:s}", "team", "web");
	assert_true(config_namespace_managed(&c, "a", ml));
	assert_false(config_namespace_managed(&c, "a", other));
	assert_false(config_namespace_managed(&c, "a", NULL));
	config_release(&c);

	/* Expressions too, decoded once and asked of core/labels like a namespaceSelector. */
	assert_int_equal(parse("managedJobsNamespaceSelector:\n  matchExpressions:\n"
			       "  - {key: team, operator: NotIn, values: [web]}\n",
			       &c, err, sizeof(err)),
			 0);
	assert_true(config_namespace_managed(&c, "a", ml));
	assert_false(config_namespace_managed(&c, "a", other));
	assert_true(config_namespace_managed(&c, "kube-system", NULL));
	config_release(&c);
	assert_int_equal(parse("managedJobsNamespaceSelector: {}\n", &c, err, sizeof(err)), 0);
	assert_true(config_namespace_managed(&c, "kube-system", NULL));
	config_release(&c);
	json_decref(ml);
	json_decref(other);

	static const char *const bad[][2] = {
		{ "integrations:\n  frameworks: [kubeflow.org/mpijob]\n",
		  "integrations.frameworks[0]: \"kubeflow.org/mpijob\" is not a framework muster "
		  "manages" },
		{ "integrations:\n  frameworks: batch/job\n",
		  "integrations.frameworks: must be a list" },
		{ "integrations:\n  externalFrameworks: [Foo.v1.example.com]\n",
		  "integrations.externalFrameworks: not implemented" },
		{ "manageJobsWithoutQueueName: yes please\n",
		  "manageJobsWithoutQueueName: must be true or false" },
		{ "managedJobsNamespaceSelector:\n  matchExpressions: [{key: a, operator: Near}]\n",
		  "managedJobsNamespaceSelector.matchExpressions[0].operator" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		config_defaults(&c);
		assert_int_equal(parse(bad[i][0], &c, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i][1]))
			fail_msg("%s: got \"%s\"", bad[i][0], err);
		assert_null(c.managed_namespaces);
	}
}

static void test_time_rfc3339_round_trip(void **state)
{
	int64_t ms;
	char buf[32];
	assert_int_equal(time_parse_rfc3339("1970-01-01T00:00:00Z", &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(time_parse_rfc3339("2026-11-21T19:35:18Z", &ms), 0);
	time_format_rfc3339(ms, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-21T19:35:18Z");
	assert_int_equal(time_parse_rfc3339("2024-02-29T12:00:00.5Z", &ms), 0);
	assert_int_equal(ms % 1000, 500);
	/* An offset, as Go reads a metav1.Time: the same instant in UTC. */
	assert_int_equal(time_parse_rfc3339("2026-11-21T20:35:18+01:00", &ms), 0);
	time_format_rfc3339(ms, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-21T19:35:18Z");
	assert_int_equal(time_parse_rfc3339("2026-13-01T00:00:00Z", &ms), -EINVAL);
	assert_int_equal(time_parse_rfc3339("yesterday", &ms), -EINVAL);
	assert_int_equal(time_parse_rfc3339(NULL, &ms), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_defaults_follow_kueue_v1beta2),
		cmocka_unit_test(test_config_full_document_is_read),
		cmocka_unit_test(test_config_placement_section),
		cmocka_unit_test(test_config_hold_and_gang),
		cmocka_unit_test(test_config_recovery_timeout_defaults_to_timeout),
		cmocka_unit_test(test_config_disable),
		cmocka_unit_test(test_config_refusals_name_the_field),
		cmocka_unit_test(test_config_durations),
		cmocka_unit_test(test_config_load_names_the_file),
		cmocka_unit_test(test_config_fair_sharing),
		cmocka_unit_test(test_config_admission_fair_sharing),
		cmocka_unit_test(test_config_client_connection),
		cmocka_unit_test(test_config_leader_election),
		cmocka_unit_test(test_lease_micro_time),
		cmocka_unit_test(test_config_metrics),
		cmocka_unit_test(test_config_visibility_and_ledger),
		cmocka_unit_test(test_config_serving_sections),
		cmocka_unit_test(test_config_integrations),
		cmocka_unit_test(test_config_bind_address),
		cmocka_unit_test(test_time_rfc3339_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
