/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What one cached Node and one cached pending Workload cost the manager, in heap bytes, without
 * a cluster: N Nodes and N Workloads shaped like tests/bench/manager_scale.sh's go through the
 * informers' path (ingest_keep, then ingest_event, as test_ctrl's harness drives ctrl/), the
 * pump takes the Workloads into the engine, and glibc's heap in use is read before and after
 * each step (mallinfo2). A breakdown says where the bytes are. It prints figures; it judges
 * nothing.
 *
 *   bench_memory [--nodes N] [--workloads N]
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "ctrl/internal.h"
#include "util/log.h"
#include "../unit/fake_apiserver.h"

#define N_NS 10

/* What glibc hands out for p: its usable size and its header. */
static size_t chunk(const void *p)
{
	return p ? malloc_usable_size((void *)p) + sizeof(size_t) : 0;
}

static size_t map_table(const struct strmap *s)
{
	return s->cap * sizeof(*s->slots);
}

/* The key copies of a map that owns them. */
static size_t map_keys(const struct strmap *s)
{
	size_t n = 0;
	for (size_t i = 0; !s->borrowed && i < s->cap; i++)
		n += chunk(s->slots[i].key);
	return n;
}

/* A Node as the apiserver serves it to a watch (managedFields cut, as the informer cuts them):
 * manager_scale.sh's gen_nodes. */
static int node_text(size_t i, char *buf, size_t size)
{
	size_t rack = i / 16;
	char zone = "abcd"[rack % 4];
	int gpu = i % 4 != 3;
	char name[32];
	snprintf(name, sizeof(name), "scale-node-%05zu", i);
	const char *ts = "2026-11-29T05:00:00Z";
	int n = snprintf(
		buf, size,
		"{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
		"\"uid\":\"%08zx-1c2d-4e5f-8a9b-%012zx\",\"resourceVersion\":\"%zu\","
		"\"creationTimestamp\":\"%s\",\"labels\":{\"kubernetes.io/hostname\":\"%s\","
		"\"kubernetes.io/arch\":\"amd64\",\"kubernetes.io/os\":\"linux\","
		"\"node.kubernetes.io/instance-type\":\"%s\","
		"\"topology.kubernetes.io/region\":\"region-1\","
		"\"topology.kubernetes.io/zone\":\"zone-%c\",\"example.com/rack\":\"rack-%04zu\","
		"\"example.com/pool\":\"%s\"%s},"
		"\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\","
		"\"volumes.kubernetes.io/controller-managed-attach-detach\":\"true\"}},"
		"\"spec\":{\"providerID\":\"fake://region-1/zone-%c/%s\"%s},"
		"\"status\":{\"capacity\":{\"cpu\":\"96\",\"memory\":\"1152Gi\",\"pods\":\"110\","
		"\"ephemeral-storage\":\"3840Gi\"%s},"
		"\"allocatable\":{\"cpu\":\"95500m\",\"memory\":\"1120Gi\",\"pods\":\"110\","
		"\"ephemeral-storage\":\"3840Gi\"%s},\"conditions\":["
		"{\"type\":\"MemoryPressure\",\"status\":\"False\",\"lastHeartbeatTime\":\"%s\","
		"\"lastTransitionTime\":\"%s\",\"reason\":\"KubeletHasSufficientMemory\","
		"\"message\":\"simulated\"},"
		"{\"type\":\"DiskPressure\",\"status\":\"False\",\"lastHeartbeatTime\":\"%s\","
		"\"lastTransitionTime\":\"%s\",\"reason\":\"KubeletHasNoDiskPressure\","
		"\"message\":\"simulated\"},"
		"{\"type\":\"PIDPressure\",\"status\":\"False\",\"lastHeartbeatTime\":\"%s\","
		"\"lastTransitionTime\":\"%s\",\"reason\":\"KubeletHasSufficientPID\","
		"\"message\":\"simulated\"},"
		"{\"type\":\"Ready\",\"status\":\"True\",\"lastHeartbeatTime\":\"%s\","
		"\"lastTransitionTime\":\"%s\",\"reason\":\"KubeletReady\",\"message\":"
		"\"simulated\"}],"
		"\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.%zu.%zu.%zu\"},"
		"{\"type\":\"Hostname\",\"address\":\"%s\"}],"
		"\"nodeInfo\":{\"architecture\":\"amd64\",\"operatingSystem\":\"linux\","
		"\"kubeletVersion\":\"v1.35.4\",\"containerRuntimeVersion\":\"containerd://2.1.4\","
		"\"kernelVersion\":\"6.8.0-1021-aws\",\"osImage\":\"Ubuntu 24.04.2 LTS\","
		"\"machineID\":\"%032zx\",\"systemUUID\":\"ec2%029zx\",\"bootID\":\"b%031zx\","
		"\"kubeProxyVersion\":\"\"}}}",
		name, i, i, 1000 + i, ts, name, gpu ? "p4d.24xlarge" : "m6i.32xlarge", zone, rack,
		gpu ? "gpu" : "cpu",
		gpu ? ",\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-80GB\","
		      "\"nvidia.com/gpu.count\":\"8\"" :
		      "",
		zone, name,
		gpu ? ",\"taints\":[{\"key\":\"nvidia.com/gpu\",\"value\":\"present\","
		      "\"effect\":\"NoSchedule\"}]" :
		      "",
		gpu ? ",\"nvidia.com/gpu\":\"8\"" : "", gpu ? ",\"nvidia.com/gpu\":\"8\"" : "", ts,
		ts, ts, ts, ts, ts, ts, ts, i / 65536 + 64, (i / 256) % 256, i % 256, name, i, i,
		i);
	return n > 0 && (size_t)n < size ? n : -1;
}

/* A pending Workload as served to a watch (managedFields cut): manager_scale.sh's
 * gen_workloads, with what the apiserver adds to metadata. */
static int workload_text(size_t i, char *buf, size_t size)
{
	size_t ns = i % N_NS;
	int n = snprintf(
		buf, size,
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
		"\"name\":\"job-train-%07zu\",\"namespace\":\"scale-%zu\","
		"\"uid\":\"%08zx-2b3c-4d5e-8f90-%012zx\",\"resourceVersion\":\"%zu\","
		"\"generation\":1,\"creationTimestamp\":\"2026-11-29T05:00:00Z\","
		"\"labels\":{\"kueue.x-k8s.io/job-uid\":\"%08zx-6f7e-4b5d-9c61-%012zx\","
		"\"app.kubernetes.io/name\":\"trainer\",\"team\":\"team-%zu\"},"
		"\"annotations\":{\"example.com/submitted-by\":\"user-%zu@example.com\","
		"\"example.com/experiment\":\"exp-%05zu\"}},"
		"\"spec\":{\"queueName\":\"team-queue\",\"priority\":%zu,\"active\":true,"
		"\"podSets\":[{\"name\":\"main\",\"count\":2,\"template\":{\"metadata\":{"
		"\"labels\":{\"app\":\"trainer\",\"run\":\"run-%07zu\"},"
		"\"annotations\":{\"example.com/checkpoint\":"
		"\"s3://ckpt-bucket/team-%zu/run-%07zu/\"}},"
		"\"spec\":{\"restartPolicy\":\"Never\",\"serviceAccountName\":\"trainer\","
		"\"nodeSelector\":{\"node.kubernetes.io/instance-type\":\"p4d.24xlarge\"},"
		"\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\","
		"\"effect\":\"NoSchedule\"}],"
		"\"containers\":[{\"name\":\"trainer\","
		"\"image\":\"registry.example.com/ml/trainer:2025.06.1-cuda12.4\","
		"\"imagePullPolicy\":\"IfNotPresent\","
		"\"command\":[\"python\",\"-m\",\"trainer.main\"],"
		"\"args\":[\"--config=/etc/trainer/config.yaml\",\"--epochs=10\","
		"\"--batch-size=256\",\"--run-id=run-%07zu\"],"
		"\"env\":[{\"name\":\"RUN_ID\",\"value\":\"run-%07zu\"},"
		"{\"name\":\"NCCL_DEBUG\",\"value\":\"WARN\"},"
		"{\"name\":\"NCCL_IB_DISABLE\",\"value\":\"0\"},"
		"{\"name\":\"OMP_NUM_THREADS\",\"value\":\"4\"},"
		"{\"name\":\"WANDB_PROJECT\",\"value\":\"team-%zu-training\"},"
		"{\"name\":\"DATA_DIR\",\"value\":\"/data/shards\"},"
		"{\"name\":\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":"
		"\"metadata.name\"}}}],"
		"\"resources\":{\"requests\":{\"cpu\":\"4\",\"memory\":\"16Gi\","
		"\"nvidia.com/gpu\":\"1\"},\"limits\":{\"memory\":\"16Gi\",\"nvidia.com/"
		"gpu\":\"1\"}},"
		"\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":\"/data\",\"readOnly\":true},"
		"{\"name\":\"config\",\"mountPath\":\"/etc/trainer\"},"
		"{\"name\":\"shm\",\"mountPath\":\"/dev/shm\"}]}],"
		"\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":"
		"\"team-%zu-datasets\",\"readOnly\":true}},"
		"{\"name\":\"config\",\"configMap\":{\"name\":\"trainer-config\"}},"
		"{\"name\":\"shm\",\"emptyDir\":{\"medium\":\"Memory\",\"sizeLimit\":\"8Gi\"}}]}}}]"
		"}}",
		i, ns, i, i, 100000 + i, i, i, ns, i % 97, i / 10, (i % 3) * 100, i, ns, i, i, i,
		ns, ns);
	return n > 0 && (size_t)n < size ? n : -1;
}

static json_t *parse(const char *text, size_t len)
{
	json_error_t err;
	json_t *v = json_loadb(text, len, 0, &err);
	if (!v) {
		fprintf(stderr, "bench_memory: bad JSON: %s\n", err.text);
		exit(1);
	}
	return v;
}

/* What an informer does with an object from a watch: keeps it, then reports it. */
static void inform(struct mgr *m, json_t *store, enum kind kind, const char *text, size_t len)
{
	char key[600];
	json_t *obj = parse(text, len);
	if (informer_key(obj, key, sizeof(key)) != 0)
		exit(1);
	/* A compact kind's object is kept from its text alone, as the informer does
	 * (transform_text); the parse above only finds its key. */
	const char *rv = obj_str(obj, "metadata.resourceVersion");
	json_t *kept = m->compact[kind] && rv ? store_keep_text(m, kind, key, rv, text, len) : NULL;
	if (!kept)
		kept = ingest_keep(m, kind, obj, text, len);
	json_decref(obj);
	json_object_set_new(store, key, kept);
	ingest_event(m, kind, WATCH_ADDED, key, NULL, kept);
	state_release_views(m);
}

static void seed(struct mgr *m, json_t *store, enum kind kind, const char *text)
{
	inform(m, store, kind, text, strlen(text));
}

/* Runs the loop until the pump has nothing left and no cycle is held back. */
static void settle(struct mgr *m, uv_loop_t *loop)
{
	int64_t deadline = bench_wall_ns() + 120 * 1000000000ll;
	do
		uv_run(loop, UV_RUN_NOWAIT);
	while ((uv_is_active((uv_handle_t *)&m->pump) || mgr_cycle_held(m)) &&
	       bench_wall_ns() < deadline);
	for (int i = 0; i < 20; i++) /* answers of the few writes */
		uv_run(loop, UV_RUN_NOWAIT);
}

static double per(long long bytes, size_t n)
{
	return n ? (double)bytes / (double)n : 0;
}

/* The bytes a Workload's record holds (records.c), with what its stages hung on it: the
 * record, its queue contribution, the rest. */
struct record_bytes {
	size_t record, queued, unwritten, other;
};

static void record_bytes(const struct wl_record *r, struct record_bytes *b)
{
	b->record += chunk(r); /* its unwritten wait is shared: counted from the waits map */
	b->other += chunk(r->open_admission) + chunk(r->preempting_cq) + chunk(r->write.landed) +
		    chunk(r->write.evented);
	const struct queue_contrib *q = r->queued;
	if (q) {
		b->queued += chunk(q) + chunk(q->usage); /* its names are in its allocation */
		for (size_t i = 0; i < q->n; i++)
			b->queued += chunk(q->usage[i].flavor) + chunk(q->usage[i].resource);
	}
}

int main(int argc, char **argv)
{
	size_t n_nodes = 5000, n_wl = 20000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
			n_nodes = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--workloads") && i + 1 < argc)
			n_wl = strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: bench_memory [--nodes N] [--workloads N]\n");
			return 2;
		}
	}
	uv_loop_t loop;
	struct fake_api *api;
	struct mgr m;
	struct muster_config conf;
	json_t *stores[K_KINDS];
	log_set_level(LOG_ERROR); /* the fake answers the few writes 404: not news here */
	if (uv_loop_init(&loop) != 0 || fake_api_start(&loop, NULL, NULL, &api) != 0)
		return 1;
	config_defaults(&conf); /* nodeFeasibility on, as manager_scale.sh configures it */
	struct kube_config cfg = { .server = (char *)fake_api_url(api) };
	if (mgr_init_for_test(&m, &loop, &cfg, &conf) != 0)
		return 1;
	for (int k = 0; k < K_KINDS; k++)
		m.stores[k] = stores[k] = json_object();

	/* The queue objects: manager_scale.sh's, one ClusterQueue with room for 4 Workloads. */
	seed(&m, stores[K_FLAVOR], K_FLAVOR,
	     "{\"metadata\":{\"name\":\"a100\",\"uid\":\"f\",\"resourceVersion\":\"1\"},"
	     "\"spec\":{\"nodeLabels\":{\"node.kubernetes.io/instance-type\":\"p4d.24xlarge\"},"
	     "\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\","
	     "\"effect\":\"NoSchedule\"}]}}");
	seed(&m, stores[K_CQ], K_CQ,
	     "{\"metadata\":{\"name\":\"training\",\"uid\":\"c\",\"resourceVersion\":\"1\"},"
	     "\"spec\":{\"namespaceSelector\":{},\"queueingStrategy\":\"BestEffortFIFO\","
	     "\"resourceGroups\":[{\"coveredResources\":[\"cpu\",\"memory\",\"nvidia.com/gpu\"],"
	     "\"flavors\":[{\"name\":\"a100\",\"resources\":[{\"name\":\"cpu\","
	     "\"nominalQuota\":\"32\"},{\"name\":\"memory\",\"nominalQuota\":\"128Gi\"},"
	     "{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":\"8\"}]}]}]}}");
	for (size_t i = 0; i < N_NS; i++) {
		char text[512];
		snprintf(text, sizeof(text),
			 "{\"metadata\":{\"name\":\"scale-%zu\",\"uid\":\"n%zu\","
			 "\"resourceVersion\":\"1\"}}",
			 i, i);
		seed(&m, stores[K_NAMESPACE], K_NAMESPACE, text);
		snprintf(text, sizeof(text),
			 "{\"metadata\":{\"name\":\"team-queue\",\"namespace\":\"scale-%zu\","
			 "\"uid\":\"l%zu\",\"resourceVersion\":\"1\"},"
			 "\"spec\":{\"clusterQueue\":\"training\"}}",
			 i, i);
		seed(&m, stores[K_LQ], K_LQ, text);
	}
	settle(&m, &loop);

	static char text[16384];
	int len;
	long long node_text_len = 0, wl_text_len = 0;

	/* --- Nodes ------------------------------------------------------------------------------
	 */
	long long h0 = bench_heap_bytes();
	for (size_t i = 0; i < n_nodes; i++) {
		if ((len = node_text(i, text, sizeof(text))) < 0)
			return 1;
		node_text_len += len;
		inform(&m, stores[K_NODE], K_NODE, text, (size_t)len);
	}
	settle(&m, &loop);
	state_release_fresh(&m);
	state_drop_views(&m);
	long long h1 = bench_heap_bytes();
	/* The store's share: what emptying it gives back (placement keeps its model). */
	json_object_clear(stores[K_NODE]);
	long long node_store_bytes = h1 - bench_heap_bytes();

	/* --- Workloads --------------------------------------------------------------------------
	 */
	long long h2 = bench_heap_bytes();
	for (size_t i = 0; i < n_wl; i++) {
		if ((len = workload_text(i, text, sizeof(text))) < 0)
			return 1;
		wl_text_len += len;
		inform(&m, stores[K_WORKLOAD], K_WORKLOAD, text, (size_t)len);
	}
	long long h3_keep = bench_heap_bytes();
	settle(&m, &loop);
	state_release_fresh(&m);
	state_drop_views(&m);
	long long h3 = bench_heap_bytes();
	size_t texts = 0;
	const struct strmap *tm = &m.texts[K_WORKLOAD];
	for (size_t i = 0; i < tm->cap; i++)
		texts += chunk(tm->slots[i].key); /* a text's allocation begins with its key */
	size_t n_records = 0, n_pending = 0;
	struct record_bytes rb = { 0, 0, 0, 0 };
	const struct wl_record *r;
	WL_RECORDS_FOREACH(&m, i, r)
	{
		record_bytes(r, &rb);
		n_records++;
		n_pending += r->pending;
	}
	/* Waits are shared (records.c): each counted once. */
	const struct strmap *waits = &m.records.waits;
	rb.unwritten = map_table(waits);
	for (size_t i = 0; i < waits->cap; i++)
		rb.unwritten += chunk(waits->slots[i].value);
	size_t records =
		map_table(&m.records.workloads) + rb.record + rb.queued + rb.unwritten + rb.other;
	long long h3c = bench_heap_bytes();
	json_object_clear(stores[K_WORKLOAD]);
	long long wl_store_bytes = h3c - bench_heap_bytes();
	long long wl_total = h3 - h2;
	long long text_map = (long long)(map_table(tm) + map_keys(tm));

	printf("bench_memory: %zu Nodes, %zu Workloads (%zu pending), shaped as "
	       "manager_scale.sh's\n",
	       n_nodes, n_wl, n_pending);
	printf("as a watch serves them (no managedFields): Node %.0f B, Workload %.0f B of JSON\n",
	       per(node_text_len, n_nodes), per(wl_text_len, n_wl));
	printf("\nbytes per cached Node: %.0f\n", per(h1 - h0, n_nodes));
	printf("  store (informer's kept object and its key)   %8.0f\n",
	       per(node_store_bytes, n_nodes));
	printf("  placement's node model and the rest           %8.0f\n",
	       per(h1 - h0 - node_store_bytes, n_nodes));
	printf("\nbytes per cached Workload: %.0f (%.0f right after the informer kept them)\n",
	       per(wl_total, n_wl), per(h3_keep - h2, n_wl));
	printf("  store (informer's stub and its key)           %8.0f\n",
	       per(wl_store_bytes, n_wl));
	printf("  compact text (and its key)                    %8.0f\n",
	       per((long long)texts, n_wl));
	printf("  compact text map                              %8.0f\n", per(text_map, n_wl));
	printf("  wl_record and what hangs on it                %8.0f  (%zu records)\n",
	       per((long long)records, n_wl), n_records);
	printf("    the record and its map slot                 %8.0f\n",
	       per((long long)(rb.record + map_table(&m.records.workloads)), n_wl));
	printf("    queue contribution (queues.c)               %8.0f\n",
	       per((long long)rb.queued, n_wl));
	printf("    unwritten waits (admission.c)               %8.0f  (%zu distinct)\n",
	       per((long long)rb.unwritten, n_wl), waits->len);
	printf("    the rest                                    %8.0f\n",
	       per((long long)rb.other, n_wl));
	printf("  engine record and the rest                    %8.0f\n",
	       per(wl_total - wl_store_bytes - (long long)texts - text_map - (long long)records,
		   n_wl));

	mgr_release_for_test(&m);
	for (int k = 0; k < K_KINDS; k++)
		json_decref(stores[k]);
	fake_api_stop(api);
	for (int i = 0; i < 100 && uv_run(&loop, UV_RUN_NOWAIT); i++)
		;
	return 0;
}
