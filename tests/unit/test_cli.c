/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubectl muster (manager/cli): its command line, name resolution and the exact text of each
 * command, end to end through the real kube client. Two fake servers on the test's loop answer
 * from route tables: the apiserver over HTTP with a bearer token from a kubeconfig written
 * here, and muster's visibility endpoint over HTTPS with a certificate made here.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "api/objects.h"
#include "cli/cli.h"
#include "cli/cli_internal.h"
#include "fake_apiserver.h"
#include "net/certs.h"

#define KUEUE "/apis/kueue.x-k8s.io/v1beta2"
#define VIS "/apis/visibility.kueue.x-k8s.io/v1beta2"
#define MUSTER "/apis/visibility.muster.io/v1alpha1"
#define NOW "2026-11-27T10:00:00Z"
#define MAX_ROUTES 32
#define MAX_ARGS 32

/* --- fake servers: canned answers by path ---------------------------------------------------- */

struct route {
	const char *path;
	const char *query; /* NULL: any query */
	int status;
	const char *body; /* JSON, or text */
};

struct routes {
	struct route r[MAX_ROUTES];
	size_t n;
	char auth[256]; /* the Authorization header of the last request, "" when none */
};

static void route(struct routes *rs, const char *path, const char *query, int status,
		  const char *body)
{
	assert_true(rs->n < MAX_ROUTES);
	rs->r[rs->n++] = (struct route){ path, query, status, body };
}

static void respond(void *arg, const struct httpd_request *req, struct httpd_response *resp)
{
	struct routes *rs = arg;
	const char *auth = httpd_request_header(req, "Authorization");
	snprintf(rs->auth, sizeof(rs->auth), "%s", auth ? auth : "");
	resp->content_type = "application/json";
	for (size_t i = 0; i < rs->n; i++) {
		const struct route *r = &rs->r[i];
		if (strcmp(r->path, req->path) || (r->query && strcmp(r->query, req->query)))
			continue;
		resp->status = r->status;
		resp->body = strdup(r->body);
		resp->body_len = strlen(r->body);
		return;
	}
	char body[1024];
	snprintf(body, sizeof(body),
		 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
		 "\"message\":\"%s not found\",\"reason\":\"NotFound\",\"code\":404}",
		 req->path);
	resp->status = 404;
	resp->body = strdup(body);
	resp->body_len = strlen(body);
}

/* --- the fixture ----------------------------------------------------------------------------- */

struct t {
	uv_loop_t loop;
	struct fake_api *api; /* the apiserver, HTTP */
	struct fake_api *muster; /* muster's endpoint, HTTPS */
	struct routes api_routes, muster_routes;
	struct certs certs;
	char dir[64], kubeconfig[128], ca_file[128];
	char endpoint[96];
	char *out, *err; /* what the last run wrote */
	size_t out_len, err_len;
};

static int64_t fixed_now_ms;

static int64_t fixed_clock(void)
{
	return fixed_now_ms;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));
	static const char *const ips[] = { "127.0.0.1", NULL };
	char text[4096];
	assert_non_null(t);
	assert_int_equal(uv_loop_init(&t->loop), 0);
	assert_int_equal(fake_api_start(&t->loop, respond, &t->api_routes, &t->api), 0);
	assert_int_equal(certs_generate(NULL, ips, &t->certs), 0);
	assert_int_equal(fake_api_start_tls(&t->loop, respond, &t->muster_routes, t->certs.cert_pem,
					    t->certs.key_pem, &t->muster),
			 0);
	snprintf(t->endpoint, sizeof(t->endpoint), "%s", fake_api_url(t->muster));
	snprintf(t->dir, sizeof(t->dir), "/tmp/test_cli.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->kubeconfig, sizeof(t->kubeconfig), "%s/kubeconfig", t->dir);
	snprintf(t->ca_file, sizeof(t->ca_file), "%s/ca.crt", t->dir);
	snprintf(text, sizeof(text),
		 "apiVersion: v1\n"
		 "kind: Config\n"
		 "current-context: main\n"
		 "contexts:\n"
		 "- name: main\n"
		 "  context: {cluster: fake, user: me, namespace: team-a}\n"
		 "- name: other\n"
		 "  context: {cluster: fake, user: me, namespace: team-b}\n"
		 "- name: plain\n"
		 "  context: {cluster: fake, user: me}\n"
		 "clusters:\n"
		 "- name: fake\n"
		 "  cluster: {server: '%s'}\n"
		 "users:\n"
		 "- name: me\n"
		 "  user: {token: secret-token}\n",
		 fake_api_url(t->api));
	write_file(t->kubeconfig, text);
	write_file(t->ca_file, t->certs.ca_pem);
	setenv("KUBECONFIG", t->kubeconfig, 1);
	unsetenv("MUSTER_ENDPOINT");
	unsetenv("MUSTER_ENDPOINT_CA");
	assert_int_equal(time_parse_rfc3339(NOW, &fixed_now_ms), 0);
	time_set_clock(fixed_clock);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;
	char path[192];
	fake_api_stop(t->api);
	fake_api_stop(t->muster);
	for (int i = 0; i < 200 && uv_run(&t->loop, UV_RUN_NOWAIT); i++)
		usleep(1000);
	assert_int_equal(uv_loop_close(&t->loop), 0);
	certs_release(&t->certs);
	unlink(t->kubeconfig);
	unlink(t->ca_file);
	snprintf(path, sizeof(path), "%s/empty", t->dir);
	unlink(path);
	rmdir(t->dir);
	free(t->out);
	free(t->err);
	free(t);
	unsetenv("KUBECONFIG");
	unsetenv("MUSTER_ENDPOINT");
	unsetenv("MUSTER_ENDPOINT_CA");
	time_set_clock(NULL);
	return 0;
}

/* Runs `kubectl muster` with the words of line; "{E}" stands for the endpoint's URL and "{CA}"
 * for its CA file. Returns the exit code; t->out and t->err hold what it wrote. */
static int run(struct t *t, const char *line)
{
	char words[2048], *argv[MAX_ARGS], *save = NULL;
	int argc = 0;
	snprintf(words, sizeof(words), "%s", line);
	argv[argc++] = "kubectl-muster";
	for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		assert_true(argc < MAX_ARGS);
		argv[argc++] = !strcmp(w, "{E}")  ? t->endpoint :
			       !strcmp(w, "{CA}") ? t->ca_file :
						    w;
	}
	free(t->out);
	free(t->err);
	FILE *out = open_memstream(&t->out, &t->out_len);
	FILE *err = open_memstream(&t->err, &t->err_len);
	assert_non_null(out);
	assert_non_null(err);
	struct cli_io io = { .out = out, .err = err, .loop = &t->loop };
	int rc = cli_main(argc, argv, &io);
	fclose(out);
	fclose(err);
	return rc;
}

/* Runs line and checks the exit code and both outputs exactly. */
static void expect(struct t *t, const char *line, int code, const char *out, const char *err)
{
	int rc = run(t, line);
	if (strcmp(t->out, out) || strcmp(t->err, err) || rc != code)
		fail_msg("kubectl muster %s\nexit %d (want %d)\n--- stdout:\n%s--- want:\n%s"
			 "--- stderr:\n%s--- want:\n%s",
			 line, rc, code, t->out, out, t->err, err);
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The query of the last request the server logged. */
static const char *last_query(const struct fake_api *f)
{
	size_t n = fake_api_nrequests(f);
	assert_true(n > 0);
	return fake_api_request(f, n - 1)->query;
}

static const char *last_path(const struct fake_api *f)
{
	size_t n = fake_api_nrequests(f);
	assert_true(n > 0);
	return fake_api_request(f, n - 1)->path;
}

/* --- answers --------------------------------------------------------------------------------- */

static const char clusterqueues[] =
	"{\"kind\":\"ClusterQueueList\",\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"items\":["
	"{\"metadata\":{\"name\":\"cq-a\"},\"spec\":{\"cohortName\":\"pool\",\"resourceGroups\":["
	"{\"coveredResources\":[\"cpu\",\"nvidia.com/gpu\"],\"flavors\":[{\"name\":\"a100\","
	"\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"32\"},"
	"{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":16}]}]}]},"
	"\"status\":{\"pendingWorkloads\":3,\"admittedWorkloads\":2,\"flavorsReservation\":["
	"{\"name\":\"a100\",\"resources\":[{\"name\":\"cpu\",\"total\":\"4\",\"borrowed\":\"0\"},"
	"{\"name\":\"nvidia.com/gpu\",\"total\":\"18\",\"borrowed\":\"2\"}]}]}},"
	"{\"metadata\":{\"name\":\"cq-b\"},\"spec\":{\"resourceGroups\":["
	"{\"flavors\":[{\"name\":\"h100\",\"resources\":[{\"name\":\"nvidia.com/gpu\","
	"\"nominalQuota\":\"8\"}]}]},{\"flavors\":[{\"name\":\"default\",\"resources\":["
	"{\"name\":\"memory\",\"nominalQuota\":\"64Gi\"}]}]}]},"
	"\"status\":{\"flavorsUsage\":[{\"name\":\"default\",\"resources\":[{\"name\":\"memory\","
	"\"total\":\"2Gi\"}]}]}}]}";

static const char localqueues_a[] =
	"{\"kind\":\"LocalQueueList\",\"items\":[{\"metadata\":{\"name\":\"lq-a\",\"namespace\":"
	"\"team-a\"},\"spec\":{\"clusterQueue\":\"cq-a\"},\"status\":{\"pendingWorkloads\":1,"
	"\"admittedWorkloads\":1}}]}";

static const char localqueues_all[] =
	"{\"kind\":\"LocalQueueList\",\"items\":[{\"metadata\":{\"name\":\"lq-a\",\"namespace\":"
	"\"team-a\"},\"spec\":{\"clusterQueue\":\"cq-a\"},\"status\":{\"pendingWorkloads\":1,"
	"\"admittedWorkloads\":1}},{\"metadata\":{\"name\":\"research\",\"namespace\":"
	"\"team-b\"},\"spec\":{\"clusterQueue\":\"cq-b\"},\"status\":{}}]}";

static const char pending[] =
	"{\"kind\":\"PendingWorkloadsSummary\",\"apiVersion\":\"visibility.kueue.x-k8s.io/"
	"v1beta2\","
	"\"metadata\":{\"creationTimestamp\":null},\"items\":["
	"{\"metadata\":{\"name\":\"job-a-1b2c3\",\"namespace\":\"team-a\",\"creationTimestamp\":"
	"\"2026-11-27T08:00:00Z\"},\"priority\":100,\"localQueueName\":\"lq-a\","
	"\"positionInClusterQueue\":0,\"positionInLocalQueue\":0},"
	"{\"metadata\":{\"name\":\"sweep-77\",\"namespace\":\"team-b\",\"creationTimestamp\":"
	"\"2026-11-27T09:58:30Z\"},\"priority\":0,\"localQueueName\":\"research\","
	"\"positionInClusterQueue\":1,\"positionInLocalQueue\":0}]}";

static const char why[] =
	"{\"kind\":\"WorkloadExplanation\",\"apiVersion\":\"visibility.muster.io/v1alpha1\","
	"\"workload\":{\"namespace\":\"team-a\",\"name\":\"job-a-1b2c3\",\"clusterQueue\":\"cq-a\","
	"\"localQueue\":\"lq-a\",\"priority\":0},\"state\":\"Pending\",\"reason\":"
	"\"WaitingForQuota\","
	"\"message\":\"couldn't assign flavors to pod set main: insufficient unused quota for "
	"nvidia.com/gpu in flavor a100, 6 more needed\",\"positionInClusterQueue\":3,"
	"\"positionInLocalQueue\":1,\"lacking\":[{\"podSet\":\"main\",\"flavor\":\"a100\","
	"\"resource\":\"nvidia.com/"
	"gpu\",\"requested\":\"8\",\"available\":\"2\",\"missing\":\"6\"}],"
	"\"holders\":[{\"namespace\":\"team-b\",\"name\":\"job-b-9f8e7\",\"clusterQueue\":\"cq-b\","
	"\"via\":\"Cohort\",\"priority\":0,\"flavor\":\"a100\",\"resource\":\"nvidia.com/gpu\","
	"\"amount\":\"4\",\"borrowing\":true,\"preemptible\":true},{\"namespace\":\"team-a\","
	"\"name\":\"job-a-0a0a0\",\"clusterQueue\":\"cq-a\",\"via\":\"ClusterQueue\",\"priority\":"
	"10,"
	"\"flavor\":\"a100\",\"resource\":\"nvidia.com/gpu\",\"amount\":\"4\",\"borrowing\":false,"
	"\"preemptible\":false}],\"toFit\":[{\"action\":\"preempt\",\"namespace\":\"team-b\","
	"\"name\":\"job-b-9f8e7\",\"frees\":\"4\"},{\"action\":\"end\",\"namespace\":\"team-a\","
	"\"name\":\"job-a-0a0a0\",\"frees\":\"4\"}],\"nodes\":[{\"name\":\"node-3\",\"free\":"
	"{\"nvidia.com/gpu\":\"6\"},\"short\":{\"nvidia.com/gpu\":\"2\"}},{\"name\":\"node-1\","
	"\"free\":{\"nvidia.com/gpu\":\"4\",\"cpu\":\"30\"},\"short\":{\"nvidia.com/"
	"gpu\":\"4\"}}]}";

static const char why_out[] =
	"Name:           job-a-1b2c3\n"
	"Namespace:      team-a\n"
	"LocalQueue:     lq-a\n"
	"ClusterQueue:   cq-a\n"
	"Priority:       0\n"
	"State:          Pending\n"
	"Reason:         WaitingForQuota\n"
	"Message:        couldn't assign flavors to pod set main: insufficient unused quota for "
	"nvidia.com/gpu in flavor a100, 6 more needed\n"
	"Position:       3 in ClusterQueue cq-a, 1 in LocalQueue lq-a (0 is next)\n"
	"\n"
	"Lacking:\n"
	"  PODSET   FLAVOR   RESOURCE         REQUESTED   AVAILABLE   MISSING\n"
	"  main     a100     nvidia.com/gpu   8           2           6\n"
	"\n"
	"Held by:\n"
	"  WORKLOAD             CLUSTERQUEUE   VIA            PRIORITY   FLAVOR   RESOURCE         "
	"AMOUNT   BORROWING   PREEMPTIBLE\n"
	"  team-b/job-b-9f8e7   cq-b           Cohort         0          a100     nvidia.com/gpu   "
	"4        true        true\n"
	"  team-a/job-a-0a0a0   cq-a           ClusterQueue   10         a100     nvidia.com/gpu   "
	"4        false       false\n"
	"\n"
	"To make room (preempt, or wait for the end of):\n"
	"  ACTION    WORKLOAD             FREES\n"
	"  preempt   team-b/job-b-9f8e7   4\n"
	"  end       team-a/job-a-0a0a0   4\n"
	"\n"
	"Closest nodes:\n"
	"  NODE     FREE                      SHORT\n"
	"  node-3   nvidia.com/gpu=6          nvidia.com/gpu=2\n"
	"  node-1   nvidia.com/gpu=4,cpu=30   nvidia.com/gpu=4\n";

static const char eta[] =
	"{\"kind\":\"WorkloadEstimate\",\"apiVersion\":\"visibility.muster.io/v1alpha1\","
	"\"workload\":{\"namespace\":\"team-a\",\"name\":\"job-a-1b2c3\",\"clusterQueue\":\"cq-a\","
	"\"localQueue\":\"lq-a\",\"priority\":0},\"state\":\"Pending\",\"estimatedAdmission\":"
	"\"2026-11-27T14:20:00Z\",\"ahead\":3,\"basis\":\"3 workloads ahead; the earliest end "
	"frees 8 "
	"nvidia.com/gpu at ~14:20\",\"runtimeSources\":{\"activeDeadlineSeconds\":1,"
	"\"maximumExecutionTimeSeconds\":0,\"history\":2,\"none\":0}}";

static const char history[] =
	"{\"kind\":\"DecisionList\",\"apiVersion\":\"visibility.muster.io/v1alpha1\",\"items\":["
	"{\"id\":18,\"time\":\"2026-11-27T09:30:00.5Z\",\"event\":\"preempt\",\"namespace\":\"team-"
	"a\","
	"\"name\":\"job-a-1b2c3\",\"clusterQueue\":\"cq-a\",\"reason\":\"InCohortReclamation\","
	"\"message\":\"Preempted to accommodate a workload (UID: u-9) due to reclamation within "
	"the "
	"cohort\",\"preemptor\":\"team-b/job-b-9f8e7\"},"
	"{\"id\":17,\"time\":\"2026-11-27T08:01:02.123Z\",\"event\":\"admit\",\"namespace\":\"team-"
	"a\","
	"\"name\":\"job-a-1b2c3\",\"uid\":\"u-1\",\"clusterQueue\":\"cq-a\",\"localQueue\":\"lq-"
	"a\","
	"\"flavors\":{\"main\":{\"nvidia.com/gpu\":\"a100\"}},\"resources\":{\"nvidia.com/"
	"gpu\":\"8\","
	"\"cpu\":\"4\"},\"reason\":\"QuotaReserved\",\"message\":\"Quota reserved in ClusterQueue "
	"cq-a\",\"preemptor\":null,\"clusterQueueUsage\":{\"a100\":{\"nvidia.com/gpu\":\"8\"}}}]}";

static const char usage[] =
	"{\"kind\":\"UsageReport\",\"apiVersion\":\"visibility.muster.io/v1alpha1\",\"since\":"
	"\"2026-11-26T10:00:00Z\",\"until\":\"" NOW "\",\"by\":\"queue\",\"items\":["
	"{\"key\":\"cq-a\",\"resourceHours\":{\"nvidia.com/gpu\":12.5,\"cpu\":40.0,"
	"\"memory\":1024},\"workloads\":7},"
	"{\"key\":\"cq-long-name\",\"resourceHours\":{\"cpu\":0.25},\"workloads\":1}]}";

/* A Job and its Workloads: the one it owns carries its uid as a label (found by the label
 * selector); a decoy named like a Job's Workload belongs to another Job. */
static const char job_trainer[] =
	"{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\",\"metadata\":{\"name\":\"trainer\","
	"\"namespace\":\"team-a\",\"uid\":\"uid-trainer\"}}";
#define JOB_CONTROLLER "\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"controller\":true,"
static const char trainer_workloads[] =
	"{\"kind\":\"WorkloadList\",\"items\":[{\"metadata\":{\"name\":\"job-trainer-3c4d5\","
	"\"namespace\":\"team-a\",\"creationTimestamp\":\"2026-11-27T09:00:00Z\","
	"\"ownerReferences\":"
	"[{" JOB_CONTROLLER "\"name\":\"trainer\",\"uid\":\"uid-trainer\"}]}}]}";
static const char all_workloads[] =
	"{\"kind\":\"WorkloadList\",\"items\":[{\"metadata\":{\"name\":\"job-trainer-aaaaa\","
	"\"namespace\":\"team-a\",\"ownerReferences\":[{" JOB_CONTROLLER "\"name\":\"trainer\","
	"\"uid\":\"uid-old-trainer\"}]}},{\"metadata\":{\"name\":\"job-trainer-old\","
	"\"namespace\":\"team-a\",\"creationTimestamp\":\"2026-11-27T08:00:00Z\","
	"\"ownerReferences\":[{" JOB_CONTROLLER "\"uid\":\"uid-unlabelled\"}]}},{\"metadata\":"
	"{\"name\":\"job-trainer-new\",\"namespace\":\"team-a\",\"creationTimestamp\":"
	"\"2026-11-27T09:00:00Z\",\"ownerReferences\":[{" JOB_CONTROLLER "\"uid\":"
	"\"uid-unlabelled\"}]}},{\"metadata\":{\"name\":\"job-trainer-going\",\"namespace\":"
	"\"team-a\",\"creationTimestamp\":\"2026-11-27T09:30:00Z\",\"deletionTimestamp\":"
	"\"2026-11-27T09:31:00Z\",\"ownerReferences\":[{" JOB_CONTROLLER "\"uid\":"
	"\"uid-unlabelled\"}]}},{\"metadata\":{\"name\":\"job-trainer-adopted\",\"namespace\":"
	"\"team-a\",\"creationTimestamp\":\"2026-11-27T10:00:00Z\",\"ownerReferences\":"
	"[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"uid\":\"uid-unlabelled\"}]}}]}";
static const char empty_list[] = "{\"kind\":\"WorkloadList\",\"items\":[]}";

#define TRAINER_SELECTOR "labelSelector=kueue.x-k8s.io%2Fjob-uid%3Duid-trainer"

/* --- the command line ------------------------------------------------------------------------ */

static void test_usage_errors_exit_2_before_any_request(void **state)
{
	struct t *t = *state;
	static const struct {
		const char *line, *err;
	} cases[] = {
		{ "", "error: a command is needed: list, pending, why, eta, history or usage "
		      "(kubectl muster --help)\n" },
		{ "frobnicate", "error: unknown command \"frobnicate\" for \"kubectl muster\"\n" },
		{ "list --frob", "error: unknown flag: --frob\n" },
		{ "list -x", "error: unknown shorthand flag: 'x' in -x\n" },
		{ "list -n", "error: flag needs an argument: 'n' in -n\n" },
		{ "list --namespace", "error: flag needs an argument: --namespace\n" },
		{ "list -o yaml", "error: --output must be table or json, not \"yaml\"\n" },
		{ "list -A=maybe", "error: unknown shorthand flag: '=' in -A=maybe\n" },
		{ "list --all-namespaces=maybe",
		  "error: invalid argument \"maybe\" for \"--all-namespaces\" flag\n" },
		{ "list extra", "error: unexpected argument \"extra\" for list\n" },
		{ "why", "error: why needs an argument: kubectl muster why [-n NAMESPACE] NAME | "
			 "job/NAME | workload/NAME\n" },
		{ "why a b", "error: unexpected argument \"b\" for why\n" },
		{ "why a b c", "error: unexpected argument \"b\" for why\n" },
		{ "why -A job-a", "error: --all-namespaces does not apply to why\n" },
		{ "why --limit 3 job-a", "error: --limit does not apply to why\n" },
		{ "why cq/cq-a", "error: why does not take \"cq/cq-a\": kubectl muster why "
				 "[-n NAMESPACE] NAME | job/NAME | workload/NAME\n" },
		{ "eta pod/x", "error: eta does not take \"pod/x\": kubectl muster eta "
			       "[-n NAMESPACE] NAME | job/NAME | workload/NAME\n" },
		{ "why job/", "error: invalid name \"\"\n" },
		{ "why job/a/b", "error: invalid name \"a/b\"\n" },
		{ "why -n a/b x", "error: invalid namespace \"a/b\"\n" },
		{ "pending",
		  "error: pending needs an argument: kubectl muster pending CLUSTERQUEUE | "
		  "lq/LOCALQUEUE [-n NAMESPACE] [--limit N] [--offset N]\n" },
		{ "pending job/x", "error: pending does not take \"job/x\": kubectl muster pending "
				   "CLUSTERQUEUE | lq/LOCALQUEUE [-n NAMESPACE] [--limit N] "
				   "[--offset N]\n" },
		{ "pending cq-a --limit 0", "error: --limit must be a number from 1 to 100000, not "
					    "\"0\"\n" },
		{ "pending cq-a --limit 100001",
		  "error: --limit must be a number from 1 to 100000, "
		  "not \"100001\"\n" },
		{ "pending cq-a --offset -1",
		  "error: --offset must be a number from 0, not \"-1\"\n" },
		{ "pending cq-a --limit 5x",
		  "error: --limit must be a number from 1 to 100000, not "
		  "\"5x\"\n" },
		{ "history job-a --since 1h", "error: --since applies to a ClusterQueue's history "
					      "(cq/NAME)\n" },
		{ "history cq/cq-a --since yesterday", "error: --since must be a duration (90m, "
						       "1h30m, 7d) or an RFC 3339 time, not "
						       "\"yesterday\"\n" },
		{ "usage --since 5", "error: --since must be a duration (90m, 1h30m, 7d) or an RFC "
				     "3339 time, not \"5\"\n" },
		{ "usage --since 999999d", "error: --since must be a duration (90m, 1h30m, 7d) or "
					   "an RFC 3339 time, not \"999999d\"\n" },
		{ "usage --by team", "error: --by must be queue or namespace, not \"team\"\n" },
		{ "usage --offset 3", "error: --offset does not apply to usage\n" },
		{ "usage --endpoint-ca /x", "error: --endpoint-ca needs --endpoint or "
					    "MUSTER_ENDPOINT\n" },
		{ "usage --endpoint ftp://x", "error: --endpoint must be an https:// URL, not "
					      "\"ftp://x\"\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect(t, cases[i].line, CLI_EXIT_USAGE, "", cases[i].err);
	setenv("MUSTER_ENDPOINT", "127.0.0.1:8082", 1);
	expect(t, "usage", CLI_EXIT_USAGE, "",
	       "error: MUSTER_ENDPOINT must be an https:// URL, not \"127.0.0.1:8082\"\n");
	assert_int_equal(fake_api_nrequests(t->api) + fake_api_nrequests(t->muster), 0);
}

static void test_help_exits_0_on_stdout(void **state)
{
	struct t *t = *state;
	assert_int_equal(run(t, "--help"), 0);
	assert_non_null(strstr(t->out, "  kubectl muster pending CLUSTERQUEUE | lq/LOCALQUEUE"));
	assert_non_null(strstr(t->out, "  kubectl muster history cq/CLUSTERQUEUE"));
	assert_string_equal(t->err, "");
	/* A command's help, also with flags that would be wrong for it. */
	assert_int_equal(run(t, "why -h --limit 3"), 0);
	assert_true(starts_with(t->out, "Why a Workload is where it is"));
	assert_int_equal(run(t, "help pending"), 0);
	assert_true(starts_with(t->out, "The pending Workloads of a ClusterQueue"));
	assert_int_equal(run(t, "help"), 0);
	assert_true(starts_with(t->out, "kubectl muster: muster's queues"));
	assert_int_equal(run(t, "-h"), 0);
	assert_non_null(strstr(t->out, "Exit status: 0 success, 1 an error"));
	assert_int_equal(fake_api_nrequests(t->api), 0);
}

/* pflag's spellings, parsed straight. */
static void test_flag_spellings(void **state)
{
	struct cli_options o;
	FILE *err = fopen("/dev/null", "w");
	(void)state;
	char *a1[] = { "k", "-nteam-a",    "--output=json", "history", "--limit",
		       "7", "job/trainer", "--since=",      NULL };
	assert_int_equal(cli_parse(8, a1, &o, err), CLI_EXIT_USAGE); /* an empty --since */
	assert_int_equal(cli_parse(7, a1, &o, err), 0);
	assert_int_equal(o.command, CLI_HISTORY);
	assert_string_equal(o.namespace_name, "team-a");
	assert_true(o.json);
	assert_int_equal(o.limit, 7);
	assert_int_equal(o.offset, -1);
	assert_int_equal(o.kind, CLI_KIND_JOB);
	assert_string_equal(o.name, "trainer");
	char *a2[] = { "k",
		       "list",
		       "-n=team-b",
		       "-A",
		       "--all-namespaces=false",
		       "--insecure-skip-tls-verify",
		       "--endpoint",
		       "https://m:8082/",
		       NULL };
	assert_int_equal(cli_parse(8, a2, &o, err), 0);
	assert_string_equal(o.namespace_name, "team-b");
	assert_false(o.all_namespaces);
	assert_true(o.insecure);
	assert_string_equal(o.endpoint, "https://m:8082/");
	/* "--" ends the flags: a name may then start with a dash. */
	char *a3[] = { "k", "why", "--", "-odd-name", NULL };
	assert_int_equal(cli_parse(4, a3, &o, err), 0);
	assert_int_equal(o.kind, CLI_KIND_BARE);
	assert_string_equal(o.name, "-odd-name");
	/* Combined booleans, and a value glued to the last shorthand. */
	char *a4[] = { "k", "list", "-Ao", "json", NULL };
	assert_int_equal(cli_parse(4, a4, &o, err), 0);
	assert_true(o.all_namespaces);
	assert_true(o.json);
	/* The environment fills in the endpoint where no flag does. */
	setenv("MUSTER_ENDPOINT", "https://env:8082", 1);
	setenv("MUSTER_ENDPOINT_CA", "/env/ca.crt", 1);
	char *a5[] = { "k", "usage", "--since", "2026-11-01T00:00:00Z", "--by", "namespace", NULL };
	assert_int_equal(cli_parse(6, a5, &o, err), 0);
	assert_string_equal(o.endpoint, "https://env:8082");
	assert_string_equal(o.endpoint_ca, "/env/ca.crt");
	assert_string_equal(o.by, "namespace");
	unsetenv("MUSTER_ENDPOINT");
	unsetenv("MUSTER_ENDPOINT_CA");
	fclose(err);
}

/* --- list ------------------------------------------------------------------------------------ */

#define LIST_CQ_TABLE                                                                              \
	"CLUSTERQUEUE   COHORT   PENDING   ADMITTED   USAGE                                      " \
	"       "                                                                                  \
	"BORROWED\n"                                                                               \
	"cq-a           pool     3         2          a100:cpu=4/32,nvidia.com/gpu=18/16         " \
	"       "                                                                                  \
	"a100:nvidia.com/gpu=2\n"                                                                  \
	"cq-b           <none>   0         0          "                                            \
	"h100:nvidia.com/gpu=0/8;default:memory=2Gi/64Gi   "                                       \
	"0\n"

static void test_list_tables(void **state)
{
	struct t *t = *state;
	route(&t->api_routes, KUEUE "/clusterqueues", NULL, 200, clusterqueues);
	route(&t->api_routes, KUEUE "/namespaces/team-a/localqueues", NULL, 200, localqueues_a);
	route(&t->api_routes, KUEUE "/localqueues", NULL, 200, localqueues_all);
	/* The namespace is the kubeconfig context's. */
	expect(t, "list", 0,
	       LIST_CQ_TABLE "\n"
			     "NAMESPACE   LOCALQUEUE   CLUSTERQUEUE   PENDING   ADMITTED\n"
			     "team-a      lq-a         cq-a           1         1\n",
	       "");
	assert_string_equal(t->api_routes.auth, "Bearer secret-token");
	expect(t, "list -A", 0,
	       LIST_CQ_TABLE "\n"
			     "NAMESPACE   LOCALQUEUE   CLUSTERQUEUE   PENDING   ADMITTED\n"
			     "team-a      lq-a         cq-a           1         1\n"
			     "team-b      research     cq-b           0         0\n",
	       "");
	assert_string_equal(last_path(t->api), KUEUE "/localqueues");
	/* Nothing is printed until both lists are in. */
	expect(t, "list -n elsewhere", 1, "",
	       "error: " KUEUE "/namespaces/elsewhere/localqueues not found\n");
}

static void test_list_empty_and_json(void **state)
{
	struct t *t = *state;
	route(&t->api_routes, KUEUE "/clusterqueues", NULL, 200, "{\"items\":[]}");
	route(&t->api_routes, KUEUE "/namespaces/team-b/localqueues", NULL, 200, "{\"items\":[]}");
	route(&t->api_routes, KUEUE "/namespaces/team-a/localqueues", NULL, 200, localqueues_a);
	expect(t, "list -n team-b", 0, "",
	       "No ClusterQueues found.\nNo LocalQueues found in team-b namespace.\n");
	/* The objects themselves as a List, kubectl's indentation. */
	expect(t, "list -o json", 0,
	       "{\n"
	       "    \"apiVersion\": \"v1\",\n"
	       "    \"kind\": \"List\",\n"
	       "    \"items\": [\n"
	       "        {\n"
	       "            \"metadata\": {\n"
	       "                \"name\": \"lq-a\",\n"
	       "                \"namespace\": \"team-a\"\n"
	       "            },\n"
	       "            \"spec\": {\n"
	       "                \"clusterQueue\": \"cq-a\"\n"
	       "            },\n"
	       "            \"status\": {\n"
	       "                \"pendingWorkloads\": 1,\n"
	       "                \"admittedWorkloads\": 1\n"
	       "            }\n"
	       "        }\n"
	       "    ],\n"
	       "    \"metadata\": {\n"
	       "        \"resourceVersion\": \"\"\n"
	       "    }\n"
	       "}\n",
	       "");
}

/* The namespace: -n, else the context's (--context picks another), else "default". */
static void test_namespace_from_kubeconfig_context(void **state)
{
	struct t *t = *state;
	route(&t->api_routes, KUEUE "/clusterqueues", NULL, 200, "{\"items\":[]}");
	assert_int_equal(run(t, "list"), 1); /* no LocalQueue list answers: 404 */
	assert_string_equal(last_path(t->api), KUEUE "/namespaces/team-a/localqueues");
	assert_int_equal(run(t, "list --context other"), 1);
	assert_string_equal(last_path(t->api), KUEUE "/namespaces/team-b/localqueues");
	assert_int_equal(run(t, "list --context plain"), 1);
	assert_string_equal(last_path(t->api), KUEUE "/namespaces/default/localqueues");
	assert_int_equal(run(t, "list --context other -n mine"), 1);
	assert_string_equal(last_path(t->api), KUEUE "/namespaces/mine/localqueues");
	size_t before = fake_api_nrequests(t->api);
	char want[512];
	snprintf(want, sizeof(want), "error: kubeconfig %s: context \"missing\" not found\n",
		 t->kubeconfig);
	expect(t, "list --context missing", 1, "", want);
	expect(t, "list --kubeconfig /nonexistent/config", 1, "",
	       "error: kubeconfig /nonexistent/config:0: No such file or directory\n");
	assert_int_equal(fake_api_nrequests(t->api), before);
	/* No kubeconfig at all: "default", as kubectl, for a command that needs only muster. */
	setenv("KUBECONFIG", "/nonexistent/config", 1);
	route(&t->muster_routes, MUSTER "/namespaces/default/workloads/w/eta", NULL, 200, eta);
	assert_int_equal(run(t, "eta workload/w --endpoint {E} --endpoint-ca {CA}"), 0);
}

/* A user with an exec credential plugin: the CLI runs it once, with its args, its env and
 * KUBERNETES_EXEC_INFO, and sends the token it prints. The manager's loader refuses it (its
 * credential would expire under a long-running process). */
static void test_exec_credential_plugin(void **state)
{
	struct t *t = *state;
	char plugin[192], config[192], text[2048], line[256];
	snprintf(plugin, sizeof(plugin), "%s/plugin.sh", t->dir);
	snprintf(config, sizeof(config), "%s/exec-config", t->dir);
	write_file(plugin,
		   "#!/bin/sh\n"
		   "case \"$KUBERNETES_EXEC_INFO\" in *ExecCredential*) ;; *) exit 3 ;; esac\n"
		   "[ \"$1\" = fail ] && exit 4\n"
		   "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",'\n"
		   "printf '\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s-%s\"}}' "
		   "\"$1\" \"$PLUGIN_SUFFIX\"\n");
	assert_int_equal(chmod(plugin, 0700), 0);
	snprintf(text, sizeof(text),
		 "apiVersion: v1\n"
		 "current-context: main\n"
		 "contexts:\n"
		 "- {name: main, context: {cluster: fake, user: exec, namespace: team-a}}\n"
		 "- {name: failing, context: {cluster: fake, user: failing}}\n"
		 "- {name: missing, context: {cluster: fake, user: missing}}\n"
		 "clusters:\n"
		 "- {name: fake, cluster: {server: '%s'}}\n"
		 "users:\n"
		 "- name: exec\n"
		 "  user:\n"
		 "    exec:\n"
		 "      apiVersion: client.authentication.k8s.io/v1\n"
		 "      command: ./plugin.sh\n" /* relative to the kubeconfig's directory */
		 "      args: [exec-token]\n"
		 "      env: [{name: PLUGIN_SUFFIX, value: ok}]\n"
		 "- {name: failing, user: {exec: {apiVersion: client.authentication.k8s.io/v1, "
		 "command: ./plugin.sh, args: [fail]}}}\n"
		 "- {name: missing, user: {exec: {apiVersion: client.authentication.k8s.io/v1, "
		 "command: no-such-plugin}}}\n",
		 fake_api_url(t->api));
	write_file(config, text);
	route(&t->api_routes, KUEUE "/clusterqueues", NULL, 200, "{\"items\":[]}");
	route(&t->api_routes, KUEUE "/namespaces/team-a/localqueues", NULL, 200, "{\"items\":[]}");
	snprintf(line, sizeof(line), "list --kubeconfig %s", config);
	assert_int_equal(run(t, line), 0);
	assert_string_equal(t->api_routes.auth, "Bearer exec-token-ok");
	snprintf(line, sizeof(line), "list --kubeconfig %s --context failing", config);
	snprintf(text, sizeof(text), "error: exec plugin %s/./plugin.sh failed (exit status 4)\n",
		 t->dir);
	expect(t, line, 1, "", text);
	snprintf(line, sizeof(line), "list --kubeconfig %s --context missing", config);
	expect(t, line, 1, "", "error: exec plugin no-such-plugin: No such file or directory\n");
	struct kube_config cfg;
	char err[256];
	assert_int_equal(kube_config_load(config, &cfg, err, sizeof(err)), -ENOTSUP);
	unlink(plugin);
	unlink(config);
}

/* A cluster's server without its trailing slashes; one that is empty, or only slashes, names
 * nowhere to connect to and is refused (found by fuzz_kubeconfig: server '' once loaded). */
static void test_kubeconfig_server_must_name_somewhere(void **state)
{
	(void)state;
	static const char *const refused[] = { "''", "/", "'//'" };
	char path[] = "/tmp/muster-kubeconfig-XXXXXX", text[512], err[256];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct kube_config cfg;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(text, sizeof(text),
			 "current-context: main\n"
			 "contexts: [{name: main, context: {cluster: c, user: u}}]\n"
			 "clusters: [{name: c, cluster: {server: %s}}]\n",
			 refused[i]);
		write_file(path, text);
		err[0] = '\0';
		assert_int_equal(kube_config_load(path, &cfg, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "no usable current-context with a cluster server"));
	}
	write_file(path,
		   "current-context: main\n"
		   "contexts: [{name: main, context: {cluster: c, user: u}}]\n"
		   "clusters: [{name: c, cluster: {server: 'https://api.example:6443//'}}]\n");
	assert_int_equal(kube_config_load(path, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.server, "https://api.example:6443");
	kube_config_release(&cfg);
	unlink(path);
}

/* --- pending --------------------------------------------------------------------------------- */

static const char pending_table[] =
	"POSITION(CQ)   POSITION(LQ)   NAMESPACE   NAME          LOCALQUEUE   PRIORITY   AGE\n"
	"0              0              team-a      job-a-1b2c3   lq-a         100        120m\n"
	"1              0              team-b      sweep-77      research     0          90s\n";

static void test_pending_cluster_and_local_queue(void **state)
{
	struct t *t = *state;
	route(&t->muster_routes, VIS "/clusterqueues/cq-a/pendingworkloads", NULL, 200, pending);
	route(&t->muster_routes, VIS "/namespaces/team-a/localqueues/lq-a/pendingworkloads", NULL,
	      200, pending);
	route(&t->muster_routes, VIS "/clusterqueues/idle/pendingworkloads", NULL, 200,
	      "{\"kind\":\"PendingWorkloadsSummary\",\"items\":[]}");
	expect(t, "pending cq-a --endpoint {E} --endpoint-ca {CA}", 0, pending_table, "");
	assert_string_equal(last_query(t->muster), "");
	/* No credentials go to a direct endpoint: the kubeconfig's are the apiserver's. */
	assert_string_equal(t->muster_routes.auth, "");
	expect(t, "pending cq/cq-a --limit 2 --offset 1 --endpoint {E} --endpoint-ca {CA}", 0,
	       pending_table, "");
	assert_string_equal(last_query(t->muster), "limit=2&offset=1");
	expect(t, "pending lq/lq-a --endpoint {E} --endpoint-ca {CA}", 0, pending_table, "");
	expect(t, "pending idle --endpoint {E} --endpoint-ca {CA}", 0, "",
	       "No pending workloads in ClusterQueue idle.\n");
	expect(t, "pending lq/nothing -n team-x --endpoint {E} --endpoint-ca {CA}", 1, "",
	       "error: " VIS "/namespaces/team-x/localqueues/nothing/pendingworkloads not found\n");
}

/* --- why, eta, history and name resolution --------------------------------------------------- */

static void test_why_sections(void **state)
{
	struct t *t = *state;
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/job-a-1b2c3/why", NULL, 200,
	      why);
	expect(t, "why workload/job-a-1b2c3 --endpoint {E} --endpoint-ca {CA}", 0, why_out, "");
	/* Only the apiserver resolves names: workload/ asks it nothing. */
	assert_int_equal(fake_api_nrequests(t->api), 0);
	/* An admitted Workload: no queue position, no sections. */
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/done/why", NULL, 200,
	      "{\"kind\":\"WorkloadExplanation\",\"workload\":{\"namespace\":\"team-a\",\"name\":"
	      "\"done\",\"clusterQueue\":\"cq-a\",\"localQueue\":\"lq-a\",\"priority\":5},"
	      "\"state\":"
	      "\"Admitted\",\"reason\":\"QuotaReserved\",\"message\":\"Quota reserved\\nin "
	      "ClusterQueue \\u001b[31mcq-a\",\"lacking\":[],\"holders\":[]}");
	expect(t, "why wl/done --endpoint {E} --endpoint-ca {CA}", 0,
	       "Name:           done\n"
	       "Namespace:      team-a\n"
	       "LocalQueue:     lq-a\n"
	       "ClusterQueue:   cq-a\n"
	       "Priority:       5\n"
	       "State:          Admitted\n"
	       "Reason:         QuotaReserved\n"
	       "Message:        Quota reserved in ClusterQueue  [31mcq-a\n",
	       "");
}

static void test_eta_line(void **state)
{
	struct t *t = *state;
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/job-a-1b2c3/eta", NULL, 200,
	      eta);
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/stuck/eta", NULL, 200,
	      "{\"kind\":\"WorkloadEstimate\",\"workload\":{\"namespace\":\"team-a\",\"name\":"
	      "\"stuck\"},\"state\":\"Pending\",\"estimatedAdmission\":null,\"ahead\":0,\"basis\":"
	      "\"no workload holding the quota has a known end\"}");
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/late/eta", NULL, 200,
	      "{\"kind\":\"WorkloadEstimate\",\"workload\":{\"namespace\":\"team-a\",\"name\":"
	      "\"late\"},\"state\":\"Pending\",\"estimatedAdmission\":\"2026-11-27T09:55:00Z\"}");
	expect(t, "eta workload/job-a-1b2c3 --endpoint {E} --endpoint-ca {CA}", 0,
	       "team-a/job-a-1b2c3: Pending, estimated admission 2026-11-27T14:20:00Z (in 4h20m); "
	       "basis: 3 workloads ahead; the earliest end frees 8 nvidia.com/gpu at ~14:20\n",
	       "");
	expect(t, "eta workload/stuck --endpoint {E} --endpoint-ca {CA}", 0,
	       "team-a/stuck: Pending, no estimate; basis: no workload holding the quota has a "
	       "known end\n",
	       "");
	expect(t, "eta workload/late --endpoint {E} --endpoint-ca {CA}", 0,
	       "team-a/late: Pending, estimated admission 2026-11-27T09:55:00Z (5m ago)\n", "");
	/* -o json: the server's answer, pretty-printed. */
	assert_int_equal(run(t,
			     "eta workload/job-a-1b2c3 -o json --endpoint {E} --endpoint-ca {CA}"),
			 0);
	json_t *back = json_loads(t->out, 0, NULL), *sent = json_loads(eta, 0, NULL);
	assert_true(json_equal(back, sent));
	assert_true(starts_with(t->out, "{\n    \"kind\": \"WorkloadEstimate\",\n"));
	json_decref(back);
	json_decref(sent);
}

static const char history_table[] =
	"TIME                   EVENT     CLUSTERQUEUE   REASON                MESSAGE\n"
	"2026-11-27T09:30:00Z   preempt   cq-a           InCohortReclamation   Preempted to "
	"accommodate a workload (UID: u-9) due to reclamation within the cohort\n"
	"2026-11-27T08:01:02Z   admit     cq-a           QuotaReserved         Quota reserved in "
	"ClusterQueue cq-a\n";

static void test_history_of_workload_and_cluster_queue(void **state)
{
	struct t *t = *state;
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/job-a-1b2c3/history", NULL,
	      200, history);
	route(&t->muster_routes, MUSTER "/clusterqueues/cq-a/history", NULL, 200, history);
	route(&t->muster_routes, MUSTER "/clusterqueues/quiet/history", NULL, 200,
	      "{\"kind\":\"DecisionList\",\"items\":[]}");
	expect(t, "history workload/job-a-1b2c3 --limit 2 --endpoint {E} --endpoint-ca {CA}", 0,
	       history_table, "");
	assert_string_equal(last_query(t->muster), "limit=2");
	expect(t, "history cq/cq-a --since 90m --endpoint {E} --endpoint-ca {CA}", 0,
	       "TIME                   EVENT     WORKLOAD             REASON                "
	       "MESSAGE\n"
	       "2026-11-27T09:30:00Z   preempt   team-a/job-a-1b2c3   InCohortReclamation   "
	       "Preempted to accommodate a workload (UID: u-9) due to reclamation within the "
	       "cohort\n"
	       "2026-11-27T08:01:02Z   admit     team-a/job-a-1b2c3   QuotaReserved         Quota "
	       "reserved in ClusterQueue cq-a\n",
	       "");
	/* A duration goes as the time it reaches back to. */
	assert_string_equal(last_query(t->muster), "since=2026-11-27T08%3A30%3A00Z");
	assert_int_equal(run(t, "history clusterqueue/cq-a --since 2026-11-01T00:00:00+01:00 "
				"--endpoint {E} --endpoint-ca {CA}"),
			 0);
	assert_string_equal(last_query(t->muster), "since=2026-10-31T23%3A00%3A00Z");
	expect(t, "history cq/quiet --endpoint {E} --endpoint-ca {CA}", 0, "",
	       "No decisions recorded for ClusterQueue quiet.\n");
}

/* job/NAME and bare names go through the apiserver: the Job's uid, then the Workload whose
 * ownerReferences hold it. */
static void test_job_names_resolve_by_owner_uid(void **state)
{
	struct t *t = *state;
	route(&t->api_routes, "/apis/batch/v1/namespaces/team-a/jobs/trainer", NULL, 200,
	      job_trainer);
	route(&t->api_routes, KUEUE "/namespaces/team-a/workloads", TRAINER_SELECTOR, 200,
	      trainer_workloads);
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/job-trainer-3c4d5/why", NULL,
	      200, why);
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/job-a-1b2c3/why", NULL, 200,
	      why);
	expect(t, "why job/trainer --endpoint {E} --endpoint-ca {CA}", 0, why_out, "");
	assert_string_equal(last_path(t->muster),
			    MUSTER "/namespaces/team-a/workloads/job-trainer-3c4d5/why");
	assert_int_equal(fake_api_count(t->api, "GET", KUEUE "/namespaces/team-a/workloads/", 0),
			 0);
	/* A bare name: a Workload first (none is called trainer), then the Job. */
	expect(t, "why trainer --endpoint {E} --endpoint-ca {CA}", 0, why_out, "");
	assert_int_equal(fake_api_count(t->api, "GET", KUEUE "/namespaces/team-a/workloads/trainer",
					404),
			 1);
	assert_string_equal(last_path(t->muster),
			    MUSTER "/namespaces/team-a/workloads/job-trainer-3c4d5/why");
	/* A bare name that is a Workload. */
	route(&t->api_routes, KUEUE "/namespaces/team-a/workloads/job-a-1b2c3", NULL, 200,
	      "{\"kind\":\"Workload\",\"metadata\":{\"name\":\"job-a-1b2c3\"}}");
	expect(t, "why job-a-1b2c3 --endpoint {E} --endpoint-ca {CA}", 0, why_out, "");
	assert_int_equal(fake_api_count(t->api, "GET",
					"/apis/batch/v1/namespaces/team-a/jobs/job-a", 0),
			 0);
	/* Neither, and a Job that isn't there. */
	expect(t, "why ghost --endpoint {E} --endpoint-ca {CA}", 1, "",
	       "error: no Workload or Job named \"ghost\" in namespace \"team-a\"\n");
	expect(t, "eta job/ghost --endpoint {E} --endpoint-ca {CA}", 1, "",
	       "error: /apis/batch/v1/namespaces/team-a/jobs/ghost not found\n");
}

/* A Workload without the job-uid label is found among them all by its controller reference
 * (one that only names the Job, job-trainer-adopted, is not the Job's), not by its name; of
 * two, the one not being deleted, then the newest. */
static void test_job_workload_without_label(void **state)
{
	struct t *t = *state;
	route(&t->api_routes, "/apis/batch/v1/namespaces/team-a/jobs/trainer", NULL, 200,
	      "{\"metadata\":{\"name\":\"trainer\",\"uid\":\"uid-unlabelled\"}}");
	route(&t->api_routes, "/apis/batch/v1/namespaces/team-a/jobs/lonely", NULL, 200,
	      "{\"metadata\":{\"name\":\"lonely\",\"uid\":\"uid-lonely\"}}");
	route(&t->api_routes, KUEUE "/namespaces/team-a/workloads", "", 200, all_workloads);
	route(&t->api_routes, KUEUE "/namespaces/team-a/workloads", NULL, 200, empty_list);
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/job-trainer-new/history",
	      NULL, 200, history);
	expect(t, "history job/trainer --endpoint {E} --endpoint-ca {CA}", 0, history_table, "");
	assert_int_equal(fake_api_count(t->api, "GET", KUEUE "/namespaces/team-a/workloads", 200),
			 2);
	expect(t, "history job/lonely --endpoint {E} --endpoint-ca {CA}", 1, "",
	       "error: job team-a/lonely has no Workload (yet: muster makes one when it sees the "
	       "Job)\n");
}

/* --- usage ----------------------------------------------------------------------------------- */

static void test_usage_table(void **state)
{
	struct t *t = *state;
	route(&t->muster_routes, MUSTER "/usage", NULL, 200, usage);
	expect(t, "usage --since 1d --by queue --endpoint {E} --endpoint-ca {CA}", 0,
	       "KEY            GPU-HOURS   CPU-HOURS   WORKLOADS\n"
	       "cq-a           12.50       40.00       7\n"
	       "cq-long-name   0.00        0.25        1\n",
	       "");
	assert_string_equal(last_query(t->muster), "since=2026-11-26T10%3A00%3A00Z&by=queue");
	/* Every resource is in the JSON. */
	assert_int_equal(run(t, "usage -o json --endpoint {E} --endpoint-ca {CA}"), 0);
	assert_non_null(strstr(t->out, "\"memory\": 1024"));
	assert_string_equal(last_query(t->muster), "");
}

/* --- errors ---------------------------------------------------------------------------------- */

static void test_server_errors_exit_1(void **state)
{
	struct t *t = *state;
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/broken/why", NULL, 500,
	      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
	      "\"the ledger is unavailable\",\"reason\":\"InternalError\",\"code\":500}");
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/text/why", NULL, 502,
	      "bad gateway\nmore");
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/empty/why", NULL, 500, "");
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/garbled/why", NULL, 200,
	      "{oops");
	route(&t->muster_routes, MUSTER "/namespaces/team-a/workloads/other/why", NULL, 200, eta);
	expect(t, "why workload/broken --endpoint {E} --endpoint-ca {CA}", 1, "",
	       "error: the ledger is unavailable\n");
	expect(t, "why workload/text --endpoint {E} --endpoint-ca {CA}", 1, "",
	       "error: bad gateway\n");
	expect(t, "why workload/empty --endpoint {E} --endpoint-ca {CA}", 1, "",
	       "error: muster's endpoint answered HTTP 500\n");
	expect(t, "why workload/garbled --endpoint {E} --endpoint-ca {CA}", 1, "",
	       "error: muster's endpoint answered " MUSTER
	       "/namespaces/team-a/workloads/garbled/why "
	       "with something other than JSON\n");
	expect(t, "why workload/other --endpoint {E} --endpoint-ca {CA}", 1, "",
	       "error: unexpected answer: kind WorkloadEstimate, expected WorkloadExplanation\n");
	/* The apiserver, unreachable. */
	fake_api_down(t->api);
	char want[256];
	snprintf(want, sizeof(want),
		 "error: cannot reach the apiserver at %s: Couldn't connect to "
		 "server\n",
		 fake_api_url(t->api));
	expect(t, "list", 1, "", want);
	assert_int_equal(fake_api_up(t->api), 0);
}

/* Without an endpoint, muster is asked through the apiserver, with the kubeconfig's
 * credentials; the APIService missing gets a hint. */
static void test_through_the_apiserver(void **state)
{
	struct t *t = *state;
	route(&t->api_routes, MUSTER "/namespaces/team-a/workloads/job-a-1b2c3/eta", NULL, 200,
	      eta);
	route(&t->api_routes, VIS "/clusterqueues/cq-a/pendingworkloads", NULL, 200, pending);
	route(&t->api_routes, MUSTER "/usage", NULL, 404,
	      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
	      "\"message\":\"the server could not find the requested resource\",\"reason\":"
	      "\"NotFound\",\"details\":{},\"code\":404}");
	route(&t->api_routes, MUSTER "/namespaces/team-a/workloads/x/history", NULL, 503,
	      "{\"kind\":\"Status\",\"message\":\"service unavailable\",\"code\":503}");
	expect(t, "eta workload/job-a-1b2c3", 0,
	       "team-a/job-a-1b2c3: Pending, estimated admission 2026-11-27T14:20:00Z (in 4h20m); "
	       "basis: 3 workloads ahead; the earliest end frees 8 nvidia.com/gpu at ~14:20\n",
	       "");
	assert_string_equal(t->api_routes.auth, "Bearer secret-token");
	expect(t, "pending cq-a", 0, pending_table, "");
	expect(t, "usage", 1, "",
	       "error: the server could not find the requested resource (muster's visibility API "
	       "through the apiserver: is its APIService installed and available? --endpoint or "
	       "MUSTER_ENDPOINT reach muster directly)\n");
	expect(t, "history workload/x", 1, "",
	       "error: service unavailable (muster's visibility API through the apiserver: is its "
	       "APIService installed and available? --endpoint or MUSTER_ENDPOINT reach muster "
	       "directly)\n");
	assert_int_equal(fake_api_nrequests(t->muster), 0);
}

/* The endpoint's TLS: its CA from the flag or the environment, or no verification at all;
 * without either the system's CAs refuse the test's certificate. */
static void test_endpoint_tls(void **state)
{
	struct t *t = *state;
	route(&t->muster_routes, MUSTER "/usage", NULL, 200, usage);
	assert_int_equal(run(t, "usage --endpoint {E} --endpoint-ca {CA}"), 0);
	assert_int_equal(run(t, "usage --endpoint {E} --insecure-skip-tls-verify"), 0);
	assert_int_equal(run(t, "usage --endpoint {E}"), 1);
	assert_true(
		starts_with(t->err, "error: cannot reach muster's endpoint at https://127.0.0.1:"));
	setenv("MUSTER_ENDPOINT", t->endpoint, 1);
	setenv("MUSTER_ENDPOINT_CA", t->ca_file, 1);
	assert_int_equal(run(t, "usage"), 0);
	assert_string_equal(t->err, "");
	expect(t, "usage --endpoint-ca /nonexistent/ca.crt", 1, "",
	       "error: cannot read the endpoint CA /nonexistent/ca.crt: No such file or "
	       "directory\n");
	char empty[192], line[256];
	snprintf(empty, sizeof(empty), "%s/empty", t->dir);
	write_file(empty, "");
	snprintf(line, sizeof(line), "usage --endpoint-ca %s", empty);
	assert_int_equal(run(t, line), 1);
	assert_non_null(strstr(t->err, "empty or unreadable"));
	/* A trailing slash on the URL is no double slash on the path. */
	char url[128];
	snprintf(url, sizeof(url), "%s/", t->endpoint);
	setenv("MUSTER_ENDPOINT", url, 1);
	assert_int_equal(run(t, "usage"), 0);
	assert_string_equal(last_path(t->muster), MUSTER "/usage");
}

/* --- the production path: a private loop ----------------------------------------------------- */

struct server_thread {
	uv_loop_t loop;
	uv_async_t stop;
	struct fake_api *api;
	struct routes routes;
	uv_sem_t ready;
	char url[64];
};

static void on_stop(uv_async_t *a)
{
	struct server_thread *s = a->data;
	fake_api_stop(s->api);
	uv_close((uv_handle_t *)a, NULL);
}

static void *serve(void *arg)
{
	struct server_thread *s = arg;
	assert_int_equal(uv_loop_init(&s->loop), 0);
	assert_int_equal(fake_api_start(&s->loop, respond, &s->routes, &s->api), 0);
	snprintf(s->url, sizeof(s->url), "%s", fake_api_url(s->api));
	uv_async_init(&s->loop, &s->stop, on_stop);
	s->stop.data = s;
	uv_sem_post(&s->ready);
	uv_run(&s->loop, UV_RUN_DEFAULT);
	uv_loop_close(&s->loop);
	return NULL;
}

/* As the binary runs it: cli_main on a loop of its own, which it leaves closed, with the
 * server elsewhere. */
static void test_private_loop(void **state)
{
	struct server_thread s = { 0 };
	pthread_t th;
	char *out = NULL, *err = NULL;
	size_t out_len, err_len;
	(void)state;
	route(&s.routes, MUSTER "/usage", NULL, 200, usage);
	uv_sem_init(&s.ready, 0);
	assert_int_equal(pthread_create(&th, NULL, serve, &s), 0);
	uv_sem_wait(&s.ready);
	char *argv[] = { "kubectl-muster", "usage", "--endpoint", s.url, NULL };
	FILE *o = open_memstream(&out, &out_len), *e = open_memstream(&err, &err_len);
	struct cli_io io = { .out = o, .err = e };
	assert_int_equal(cli_main(4, argv, &io), 0);
	fclose(o);
	fclose(e);
	assert_string_equal(out, "KEY            GPU-HOURS   CPU-HOURS   WORKLOADS\n"
				 "cq-a           12.50       40.00       7\n"
				 "cq-long-name   0.00        0.25        1\n");
	assert_string_equal(err, "");
	uv_async_send(&s.stop);
	pthread_join(th, NULL);
	uv_sem_destroy(&s.ready);
	free(out);
	free(err);
}

/* --- text helpers ---------------------------------------------------------------------------- */

static void test_human_durations_as_kubectl(void **state)
{
	static const struct {
		int64_t s;
		const char *want;
	} cases[] = {
		{ -5, "<invalid>" },   { -1, "0s" },        { 0, "0s" },      { 119, "119s" },
		{ 120, "2m" },         { 303, "5m3s" },     { 600, "10m" },   { 10799, "179m" },
		{ 10800, "3h" },       { 12000, "3h20m" },  { 28800, "8h" },  { 172799, "47h" },
		{ 172800, "2d" },      { 180000, "2d2h" },  { 691200, "8d" }, { 63072000, "2y" },
		{ 63936000, "2y10d" }, { 252288000, "8y" },
	};
	char buf[32];
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cli_human_duration(cases[i].s * 1000, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
	}
	cli_age(NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "<unknown>");
	cli_age("yesterday", 0, buf, sizeof(buf));
	assert_string_equal(buf, "<unknown>");
}

/* Cells are aligned by characters, not bytes; control characters become spaces; missing
 * values print as <none>; the last column is not padded. */
static void test_table_alignment(void **state)
{
	struct cli_table t;
	char *text = NULL;
	size_t len;
	(void)state;
	FILE *out = open_memstream(&text, &len);
	cli_table_init(&t, 3);
	cli_table_row(&t, (const char *[]){ "NAME", "NOTE", "LAST" });
	cli_table_row(&t, (const char *[]){ "caf\xc3\xa9", "a\tb\x1b[0m\xc2\x9b", "" });
	cli_table_row(&t, (const char *[]){ NULL, "x", "end" });
	assert_int_equal(cli_table_print(&t, out, "> "), 0);
	cli_table_release(&t);
	fclose(out);
	assert_string_equal(text, "> NAME     NOTE       LAST\n"
				  "> caf\xc3\xa9     a b [0m\n"
				  "> <none>   x          end\n");
	free(text);
}

/* Answers with every field missing or of the wrong type still render, as <none>. */
static void test_render_tolerates_odd_answers(void **state)
{
	FILE *out = fopen("/dev/null", "w"), *err = fopen("/dev/null", "w");
	(void)state;
	json_t *odd = json_loads("{\"kind\":\"WorkloadExplanation\",\"workload\":7,\"lacking\":[1,"
				 "{\"podSet\":[]}],\"holders\":[null],\"toFit\":[{}],\"nodes\":"
				 "[{\"free\":3,\"short\":{\"a\":{}}}]}",
				 0, NULL);
	assert_int_equal(cli_render_why(out, err, odd), 0);
	json_object_set_new(odd, "kind", json_string("DecisionList"));
	json_object_set_new(odd, "items", json_pack("[{s:i}, 3]", "time", 5));
	assert_int_equal(cli_render_history(out, err, odd, "x", 1), 0);
	json_object_set_new(odd, "kind", json_string("UsageReport"));
	assert_int_equal(cli_render_usage(out, err, odd), 0);
	json_object_set_new(odd, "kind", json_string("WorkloadEstimate"));
	json_object_set_new(odd, "estimatedAdmission", json_integer(5));
	assert_int_equal(cli_render_eta(out, err, odd, 0), 0);
	assert_int_equal(cli_render_pending(out, err, odd, "x", 0), -EPROTO);
	json_decref(odd);
	json_t *cqs =
		json_loads("{\"items\":[{\"spec\":{\"resourceGroups\":[{\"flavors\":[{\"name\":"
			   "\"f\",\"resources\":[{\"name\":\"cpu\"},{}]},{}]}]},\"status\":"
			   "{\"flavorsReservation\":[{\"name\":\"f\",\"resources\":[{\"name\":"
			   "\"cpu\",\"borrowed\":\"1x\"}]}]}}]}",
			   0, NULL);
	json_t *lqs = json_loads("{\"items\":[{}]}", 0, NULL);
	assert_int_equal(cli_render_list(out, err, cqs, lqs, NULL), 0);
	assert_int_equal(cli_render_list(out, err, lqs, cqs, "ns"), 0);
	json_decref(cqs);
	json_decref(lqs);
	fclose(out);
	fclose(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_usage_errors_exit_2_before_any_request, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_help_exits_0_on_stdout, setup, teardown),
		cmocka_unit_test(test_flag_spellings),
		cmocka_unit_test_setup_teardown(test_list_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_empty_and_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_namespace_from_kubeconfig_context, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_exec_credential_plugin, setup, teardown),
		cmocka_unit_test(test_kubeconfig_server_must_name_somewhere),
		cmocka_unit_test_setup_teardown(test_pending_cluster_and_local_queue, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_why_sections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eta_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history_of_workload_and_cluster_queue, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_job_names_resolve_by_owner_uid, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_job_workload_without_label, setup, teardown),
		cmocka_unit_test_setup_teardown(test_usage_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_errors_exit_1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_through_the_apiserver, setup, teardown),
		cmocka_unit_test_setup_teardown(test_endpoint_tls, setup, teardown),
		cmocka_unit_test(test_private_loop),
		cmocka_unit_test(test_human_durations_as_kubectl),
		cmocka_unit_test(test_table_alignment),
		cmocka_unit_test(test_render_tolerates_odd_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
