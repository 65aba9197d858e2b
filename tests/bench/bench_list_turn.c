/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What one loop turn of an informer's first list costs the manager: N pending Workloads
 * (default 50,000) shaped as tests/bench/manager_scale.sh creates them, served as the
 * apiserver serves them (JSON with metadata.managedFields, about 7 KB each) in pages of the
 * informer's size, through the real informer (kube/watch.c) into the controller's store and
 * ingest (ctrl/, as ingest_start wires them). The fake apiserver runs on a thread of its own,
 * so each of the main loop's turns is the informer's and the controller's work only; its CPU
 * time is this thread's. Prints the turns' count, p99 and max (CPU and wall), and the size of
 * one served Workload; with BENCH_VERBOSE set, every turn over 30 ms of CPU.
 *
 *   bench_list_turn [-n workloads]
 */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "bench_mgr.h"
#include "fake_apiserver.h"
#include "kube/watch.h"
#include "util/log.h"

#define PATH "/apis/kueue.x-k8s.io/v1beta2/workloads"
#define N_NS 10

static int total = 50000;

/* Workload i as manager_scale.sh's gen_workloads writes it, in JSON as the apiserver serves
 * it: with its metadata (uid, resourceVersion, generation, timestamps) and the managedFields
 * of kubectl's create (a fieldsV1 of every field it set) and of a status writer. */
static int workload(char *buf, size_t size, int i)
{
	int ns = i % N_NS;
	return snprintf(
		buf, size,
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
		"\"annotations\":{\"example.com/experiment\":\"exp-%05d\",\"example.com/"
		"submitted-by\":\"user-%d@example.com\"},\"creationTimestamp\":\"2026-11-28T10:00:"
		"00Z\",\"generation\":1,\"labels\":{\"app.kubernetes.io/name\":\"trainer\","
		"\"kueue.x-k8s.io/job-uid\":\"%08x-6f7e-4b5d-9c61-%012x\",\"team\":\"team-%d\"},"
		"\"managedFields\":[{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"fieldsType\":"
		"\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":{\".\":{},\"f:"
		"example.com/experiment\":{},\"f:example.com/"
		"submitted-by\":{}},\"f:labels\":{\".\":"
		"{},\"f:app.kubernetes.io/name\":{},\"f:kueue.x-k8s.io/"
		"job-uid\":{},\"f:team\":{}}},"
		"\"f:spec\":{\".\":{},\"f:active\":{},\"f:podSets\":{\".\":{},\"k:{\\\"name\\\":"
		"\\\"main\\\"}\":{\".\":{},\"f:count\":{},\"f:name\":{},\"f:template\":{\".\":{},"
		"\"f:metadata\":{\".\":{},\"f:annotations\":{\".\":{},\"f:example.com/"
		"checkpoint\":{}},\"f:labels\":{\".\":{},\"f:app\":{},\"f:run\":{}}},\"f:spec\":{"
		"\".\":{},\"f:containers\":{\".\":{},\"k:{\\\"name\\\":\\\"trainer\\\"}\":{\".\":{}"
		","
		"\"f:args\":{},\"f:command\":{},\"f:env\":{\".\":{},\"k:{\\\"name\\\":\\\"DATA_"
		"DIR\\\"}"
		"\":{\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"NCCL_DEBUG\\\"}"
		"\":{"
		"\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"NCCL_IB_DISABLE\\\"}"
		"\":{"
		"\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"OMP_NUM_THREADS\\\"}"
		"\":{"
		"\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"POD_NAME\\\"}\":{\"."
		"\":"
		"{},\"f:name\":{},\"f:valueFrom\":{\".\":{},\"f:fieldRef\":{}}},\"k:{\\\"name\\\":"
		"\\\"RUN_ID\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":"
		"\\\"WANDB_PROJECT\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}}},\"f:image\":{},"
		"\"f:imagePullPolicy\":{},\"f:name\":{},\"f:resources\":{\".\":{},\"f:limits\":{"
		"\".\":{},\"f:memory\":{},\"f:nvidia.com/"
		"gpu\":{}},\"f:requests\":{\".\":{},\"f:cpu\":"
		"{},\"f:memory\":{},\"f:nvidia.com/gpu\":{}}},\"f:volumeMounts\":{\".\":{},\"k:{"
		"\\\"mountPath\\\":\\\"/data\\\"}\":{\".\":{},\"f:mountPath\":{},\"f:name\":{},"
		"\"f:readOnly\":{}},\"k:{\\\"mountPath\\\":\\\"/dev/shm\\\"}\":{\".\":{},\"f:"
		"mountPath\":{},\"f:name\":{}},\"k:{\\\"mountPath\\\":\\\"/etc/"
		"trainer\\\"}\":{\".\":"
		"{},\"f:mountPath\":{},\"f:name\":{}}}}},\"f:nodeSelector\":{},\"f:restartPolicy\":"
		"{},"
		"\"f:serviceAccountName\":{},\"f:tolerations\":{},\"f:volumes\":{\".\":{},\"k:{"
		"\\\"name\\\":\\\"config\\\"}\":{\".\":{},\"f:configMap\":{\".\":{},\"f:name\":{}},"
		"\"f:name\":{}},\"k:{\\\"name\\\":\\\"data\\\"}\":{\".\":{},\"f:name\":{},\"f:"
		"persistentVolumeClaim\":{\".\":{},\"f:claimName\":{},\"f:readOnly\":{}}},\"k:{"
		"\\\"name\\\":\\\"shm\\\"}\":{\".\":{},\"f:emptyDir\":{\".\":{},\"f:medium\":{},"
		"\"f:"
		"sizeLimit\":{}},\"f:name\":{}}}}}}},\"f:priority\":{},\"f:queueName\":{}}},"
		"\"manager\":\"kubectl-create\",\"operation\":\"Update\",\"time\":\"2026-11-28T10:"
		"00:00Z\"},{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"fieldsType\":\"FieldsV1\","
		"\"fieldsV1\":{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":"
		"\\\"QuotaReserved\\\""
		"}\":{\".\":{},\"f:lastTransitionTime\":{},\"f:message\":{},\"f:"
		"observedGeneration\":"
		"{},\"f:reason\":{},\"f:status\":{},\"f:type\":{}}}}},\"manager\":\"muster\","
		"\"operation\":\"Apply\",\"subresource\":\"status\",\"time\":\"2026-11-28T10:01:"
		"00Z\""
		"}],\"name\":\"job-train-%07d\",\"namespace\":\"scale-%d\",\"resourceVersion\":\"%"
		"d\","
		"\"uid\":\"%08x-1c2d-4e5f-8a9b-%012x\"},\"spec\":{\"active\":true,\"podSets\":[{"
		"\"count\":2,\"name\":\"main\",\"template\":{\"metadata\":{\"annotations\":{"
		"\"example.com/checkpoint\":\"s3://ckpt-bucket/team-%d/run-%07d/\"},\"labels\":{"
		"\"app\":\"trainer\",\"run\":\"run-%07d\"}},\"spec\":{\"containers\":[{\"args\":["
		"\"--config=/etc/trainer/config.yaml\",\"--epochs=10\",\"--batch-size=256\","
		"\"--run-id=run-%07d\"],\"command\":[\"python\",\"-m\",\"trainer.main\"],\"env\":[{"
		"\"name\":\"RUN_ID\",\"value\":\"run-%07d\"},{\"name\":\"NCCL_DEBUG\",\"value\":"
		"\"WARN\"},{\"name\":\"NCCL_IB_DISABLE\",\"value\":\"0\"},{\"name\":"
		"\"OMP_NUM_THREADS\",\"value\":\"4\"},{\"name\":\"WANDB_PROJECT\",\"value\":\"team-"
		"%d-"
		"training\"},{\"name\":\"DATA_DIR\",\"value\":\"/data/shards\"},{\"name\":"
		"\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":"
		"\"metadata.name\"}}}],\"image\":\"registry.example.com/ml/"
		"trainer:2025.06.1-cuda12.4"
		"\",\"imagePullPolicy\":\"IfNotPresent\",\"name\":\"trainer\",\"resources\":{"
		"\"limits\":{\"memory\":\"16Gi\",\"nvidia.com/gpu\":\"1\"},\"requests\":{\"cpu\":"
		"\"4\",\"memory\":\"16Gi\",\"nvidia.com/gpu\":\"1\"}},\"terminationMessagePath\":"
		"\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"volumeMounts\":[{"
		"\"mountPath\":\"/data\",\"name\":\"data\",\"readOnly\":true},{\"mountPath\":"
		"\"/etc/trainer\",\"name\":\"config\"},{\"mountPath\":\"/dev/"
		"shm\",\"name\":\"shm\"}]}"
		"],\"dnsPolicy\":\"ClusterFirst\",\"nodeSelector\":{\"node.kubernetes.io/instance-"
		"type\":\"p4d.24xlarge\"},\"restartPolicy\":\"Never\",\"schedulerName\":\"default-"
		"scheduler\",\"securityContext\":{},\"serviceAccountName\":\"trainer\","
		"\"terminationGracePeriodSeconds\":30,\"tolerations\":[{\"effect\":\"NoSchedule\","
		"\"key\":\"nvidia.com/"
		"gpu\",\"operator\":\"Exists\"}],\"volumes\":[{\"name\":\"data\","
		"\"persistentVolumeClaim\":{\"claimName\":\"team-%d-datasets\",\"readOnly\":true}},"
		"{"
		"\"configMap\":{\"defaultMode\":420,\"name\":\"trainer-config\"},\"name\":"
		"\"config\"},"
		"{\"emptyDir\":{\"medium\":\"Memory\",\"sizeLimit\":\"8Gi\"},\"name\":\"shm\"}]}}}]"
		","
		"\"priority\":%d,\"queueName\":\"team-queue\"},\"status\":{\"conditions\":[{"
		"\"lastTransitionTime\":\"2026-11-28T10:01:00Z\",\"message\":\"couldn't assign "
		"flavors to pod set main: insufficient unused quota for cpu in flavor default, 8 "
		"more "
		"needed\",\"observedGeneration\":1,\"reason\":\"Pending\",\"status\":\"False\","
		"\"type\":\"QuotaReserved\"}]}}",
		i / 10, i % 97, i, i, ns, i, ns, 1000 + i, i, i, ns, i, i, i, i, ns, ns,
		(i % 3) * 100);
}

/* Serves page ?continue=<first index> of the list, LIST_PAGE items, the next as continue. */
static void on_request(void *arg, const struct httpd_request *req, struct httpd_response *resp)
{
	(void)arg;
	int limit = 500, from = 0;
	const char *q;
	if ((q = strstr(req->query, "limit=")))
		limit = atoi(q + 6);
	if ((q = strstr(req->query, "continue=")))
		from = atoi(q + 9);
	if (strstr(req->query, "watch=1") || strcmp(req->path, PATH) != 0) {
		resp->status = strstr(req->query, "watch=1") ? 200 : 404;
		resp->body = strdup("");
		return;
	}
	int to = from + limit < total ? from + limit : total;
	size_t cap = (size_t)(to - from) * 8192 + 256, len = 0;
	char *body = malloc(cap);
	len += (size_t)
		snprintf(body + len, cap - len,
			 "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"WorkloadList\","
			 "\"metadata\":{\"resourceVersion\":\"%d\",\"continue\":\"%s\"},"
			 "\"items\":[",
			 1000 + total, "");
	if (to < total) {
		len -= strlen("\"},\"items\":[");
		len += (size_t)snprintf(body + len, cap - len, "%d\"},\"items\":[", to);
	}
	for (int i = from; i < to; i++) {
		if (i > from)
			body[len++] = ',';
		len += (size_t)workload(body + len, cap - len, i);
	}
	len += (size_t)snprintf(body + len, cap - len, "]}");
	resp->status = 200;
	resp->content_type = "application/json";
	resp->body = body;
	resp->body_len = len;
}

struct server {
	uv_loop_t loop;
	uv_async_t stop;
	struct fake_api *api;
	uv_sem_t ready;
};

static void on_stop(uv_async_t *a)
{
	struct server *s = a->data;
	fake_api_stop(s->api);
	uv_close((uv_handle_t *)a, NULL);
}

static void serve(void *arg)
{
	struct server *s = arg;
	uv_loop_init(&s->loop);
	uv_async_init(&s->loop, &s->stop, on_stop);
	s->stop.data = s;
	if (fake_api_start(&s->loop, on_request, NULL, &s->api) != 0)
		exit(1);
	uv_sem_post(&s->ready);
	uv_run(&s->loop, UV_RUN_DEFAULT);
}

/* This thread's CPU time: the fake apiserver's thread and the machine's other load don't
 * count. */
static uint64_t thread_cpu_ns(void)
{
	return (uint64_t)bench_clock(CLOCK_THREAD_CPUTIME_ID);
}

struct bench {
	struct mgr *m;
	int synced;
	long events;
};

static json_t *keep(void *arg, json_t *obj, const char *text, size_t len)
{
	struct bench *b = arg;
	return ingest_keep(b->m, K_WORKLOAD, obj, text, len);
}

/* As the manager's informer: read from the text alone, as a compact kind is. */
static json_t *keep_text(void *arg, const char *key, const char *rv, const char *text, size_t len)
{
	struct bench *b = arg;
	return store_keep_text(b->m, K_WORKLOAD, key, rv, text, len);
}

static void on_event(void *arg, struct informer *inf, enum watch_event_type type, const char *key,
		     json_t *old, json_t *obj)
{
	struct bench *b = arg;
	(void)inf;
	b->events++;
	ingest_event(b->m, K_WORKLOAD, type, key, old, obj);
	state_release_views(b->m);
}

static void on_synced(void *arg, struct informer *inf)
{
	struct bench *b = arg;
	(void)inf;
	b->synced = 1;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void close_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

int main(int argc, char **argv)
{
	int opt;
	char one[16384];
	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt == 'n')
			total = atoi(optarg);
		else {
			fprintf(stderr, "usage: %s [-n workloads]\n", argv[0]);
			return 2;
		}
	}
	log_set_level(LOG_ERROR + 1); /* before the server's thread logs where it listens */
	struct server s;
	uv_sem_init(&s.ready, 0);
	uv_thread_t thread;
	uv_thread_create(&thread, serve, &s);
	uv_sem_wait(&s.ready);

	uv_loop_t loop;
	struct mgr m;
	uv_loop_init(&loop);
	if (bench_mgr_init(&m, &loop, fake_api_url(s.api)) != 0)
		return 1;
	/* As a manager whose caches are syncing: the pump waits for every informer (this one is
	 * not in m.informers, so it waits throughout), and no cycle runs. */
	m.synced = 0;
	struct bench b = { &m, 0, 0 };
	struct informer_options o = { .name = "workloads",
				      .path = PATH,
				      .on_event = on_event,
				      .arg = &b,
				      .on_synced = on_synced,
				      .transform = keep,
				      .transform_text = m.compact[K_WORKLOAD] ? keep_text : NULL,
				      .wants_text = m.compact[K_WORKLOAD] };
	struct informer *inf;
	if (informer_start(&loop, m.kube, &o, &inf) != 0)
		return 1;
	json_decref(m.stores[K_WORKLOAD]);
	m.stores[K_WORKLOAD] = informer_store(inf);

	size_t cap = (size_t)total + 64, turns = 0;
	uint64_t *cpu = calloc(cap, sizeof(*cpu));
	uint64_t t0 = uv_hrtime(), c0 = thread_cpu_ns();
	while (!b.synced && turns < cap) {
		uint64_t c = thread_cpu_ns();
		long ev = b.events;
		uv_run(&loop, UV_RUN_ONCE);
		cpu[turns++] = thread_cpu_ns() - c;
		if (getenv("BENCH_VERBOSE") && cpu[turns - 1] > 30000000)
			fprintf(stderr, "turn %zu: %.1f ms CPU, %ld events\n", turns - 1,
				(double)cpu[turns - 1] / 1e6, b.events - ev);
	}
	uint64_t all_wall = uv_hrtime() - t0, all_cpu = thread_cpu_ns() - c0;
	qsort(cpu, turns, sizeof(*cpu), by_value);
	printf("workloads %d (one served: %d B), events %ld, store %zu: %zu turns, %.0f ms CPU "
	       "(%.0f ms wall) in all; turn CPU p99 %.1f ms, max %.1f ms\n",
	       total, workload(one, sizeof(one), 0), b.events,
	       json_object_size(informer_store(inf)), turns, (double)all_cpu / 1e6,
	       (double)all_wall / 1e6, (double)cpu[(size_t)((double)(turns - 1) * 0.99)] / 1e6,
	       (double)cpu[turns - 1] / 1e6);
	free(cpu);
	informer_stop(inf);
	m.stores[K_WORKLOAD] = NULL;
	bench_mgr_release(&m);
	uv_walk(&loop, close_walk, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	uv_async_send(&s.stop);
	uv_thread_join(&thread);
	return 0;
}
