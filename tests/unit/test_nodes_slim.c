/* SPDX-License-Identifier: Apache-2.0 */
/* The manager keeps slim copies of Pods (what placement and the exact mode need, and nothing
 * else: watching every pod of a large cluster must stay cheap), and a stub of each Node, whose
 * fields are placement's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ctrl/internal.h"

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);
	assert_non_null(v);
	return v;
}

static void test_slim_pod_keeps_placement_fields_only(void **state)
{
	json_t *pod = load(
		"{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"resourceVersion\":\"7\","
		"\"uid\":\"u\",\"annotations\":{\"big\":\"xxxxxxxx\",\"kueue.x-k8s.io/"
		"workload\":\"w\"},"
		"\"labels\":{\"kueue.x-k8s.io/podset\":\"main\",\"app\":\"x\"},"
		"\"managedFields\":[{\"manager\":\"kubelet\"}],"
		"\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\",\"uid\":\"1\","
		"\"controller\":true},"
		"{\"kind\":\"Other\",\"name\":\"o\",\"uid\":\"2\"}]},"
		"\"spec\":{\"nodeName\":\"n1\",\"nodeSelector\":{\"a\":\"b\"},"
		"\"schedulingGates\":[{\"name\":\"g\"}],\"volumes\":[{\"name\":\"v\"}],"
		"\"containers\":[{\"name\":\"c\",\"image\":\"img\",\"env\":[{\"name\":\"E\"}],"
		"\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
		"\"initContainers\":[{\"name\":\"i\",\"image\":\"img\",\"restartPolicy\":"
		"\"Always\","
		"\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]},"
		"\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.1\",\"conditions\":[{}]}}");
	json_t *want = load(
		"{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"resourceVersion\":\"7\","
		"\"labels\":{\"kueue.x-k8s.io/podset\":\"main\"},"
		"\"annotations\":{\"kueue.x-k8s.io/workload\":\"w\"},"
		"\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\",\"uid\":\"1\","
		"\"controller\":true}]},"
		"\"spec\":{\"nodeName\":\"n1\",\"nodeSelector\":{\"a\":\"b\"},"
		"\"schedulingGates\":[{\"name\":\"g\"}],"
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
		"\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"2\"}},"
		"\"restartPolicy\":\"Always\"}]},"
		"\"status\":{\"phase\":\"Running\"}}");
	int cut = 0;
	json_t *slim = nodes_slim_pod(pod, &cut);
	assert_non_null(slim);
	if (!json_equal(slim, want)) {
		char *got = json_dumps(slim, JSON_SORT_KEYS);
		fail_msg("slim pod: %s", got);
	}
	json_decref(slim);
	json_decref(want);
	json_decref(pod);
}

/* A Node's fields live in placement's model (nodes_model_node): its store keeps the stub that
 * relists compare, however large the Node. */
static void test_node_store_keeps_a_stub(void **state)
{
	json_t *node =
		load("{\"metadata\":{\"name\":\"n\",\"resourceVersion\":\"3\",\"uid\":\"u\","
		     "\"labels\":{\"r\":\"1\"},\"annotations\":{\"a\":\"b\"}},"
		     "\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"k\",\"effect\":"
		     "\"NoSchedule\"}],"
		     "\"podCIDR\":\"10.0.0.0/24\"},"
		     "\"status\":{\"allocatable\":{\"cpu\":\"8\"},\"capacity\":{\"cpu\":\"9\"},"
		     "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
	json_t *want = json_integer(3); /* its resourceVersion, which relists compare */
	struct mgr m;
	(void)state;
	memset(&m, 0, sizeof(m)); /* a modelled kind's stub needs nothing of the manager */
	assert_non_null(kind_def(K_NODE)->model);
	json_t *stub = store_keep(&m, K_NODE, node, NULL, 0);
	assert_non_null(stub);
	if (!json_equal(stub, want)) {
		char *got = json_dumps(stub, JSON_SORT_KEYS);
		fail_msg("node stub: %s", got);
	}
	json_decref(stub);
	json_decref(want);
	/* A resourceVersion that is no plain number stays a string. */
	const char *const odd[] = { "007", "12a", "", "1234567890123456789012" };
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		json_object_set_new(json_object_get(node, "metadata"), "resourceVersion",
				    json_string(odd[i]));
		stub = store_keep(&m, K_NODE, node, NULL, 0);
		assert_true(json_is_string(stub));
		assert_string_equal(json_string_value(stub), odd[i]);
		json_decref(stub);
	}
	json_decref(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slim_pod_keeps_placement_fields_only),
		cmocka_unit_test(test_node_store_keeps_a_stub),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
