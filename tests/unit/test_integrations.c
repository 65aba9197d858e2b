/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The integration seam (api/integrations.h), kind by kind, with exact outcomes: the PodSets
 * each kind builds, the Workload's name, priority and owner references, holding and releasing
 * through the kind's own functions, what finished and ready mean, and the refusals (each
 * naming the field of the object that is wrong). The manager's use of them runs in test_ctrl.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/integrations.h"
#include "api/objects.h"
#include "test_json.h"

/* Fails unless got equals the JSON literal want (compared as values). Takes got. */
static void assert_json(json_t *got, const char *want)
{
	json_t *w = J("%s", want);
	if (!json_equal(got, w)) {
		char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
		char *e = json_dumps(w, JSON_COMPACT | JSON_SORT_KEYS);
		fail_msg("got  %s\nwant %s", g ? g : "(null)", e);
	}
	json_decref(w);
	json_decref(got);
}

#define CPU(c) "{'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':'" c "'}}}]}}"
#define GPU(g)                                                                                     \
	"{'spec':{'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'" g "'}}}]" \
	"}}"

static const char *fails(const struct integration *in, json_t *obj)
{
	static char err[512];
	err[0] = '\0';
	json_t *ps = in->podsets(obj, err, sizeof(err));
	json_decref(obj);
	if (ps)
		fail_msg("podsets succeeded where it should fail");
	return err;
}

static void assert_contains(const char *got, const char *want)
{
	if (!strstr(got, want))
		fail_msg("\"%s\" does not contain \"%s\"", got, want);
}

/* --- batch/v1 Job ------------------------------------------------------------------------- */

static void test_job_podsets(void **state)
{
	(void)state;
	char err[256];
	json_t *job = J(
		"{'metadata':{'name':'j','annotations':{'kueue.x-k8s.io/job-min-parallelism':'2'}},"
		"'spec':{'parallelism':4,'completions':6,'template':{'metadata':{'labels':"
		"{'job-name':'j','app':'x','batch.kubernetes.io/controller-uid':'u'},"
		"'annotations':{'kueue.x-k8s.io/podset-preferred-topology':'rack'}},"
		"'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]}}}}");
	assert_json(integration_job.podsets(job, err, sizeof(err)),
		    "[{'name':'main','count':4,'minCount':2,'topologyRequest':{'preferred':'rack',"
		    "'podIndexLabel':'batch.kubernetes.io/job-completion-index'},"
		    "'template':{'metadata':{'labels':{'app':'x'},'annotations':"
		    "{'kueue.x-k8s.io/podset-preferred-topology':'rack'}},"
		    "'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]}}}]");
	/* The kind's own functions. */
	assert_false(integration_job.held(job));
	assert_int_equal(integration_job.set_held(job, 1), 0);
	assert_true(integration_job.held(job));
	assert_int_equal(integration_job.set_count(job, 0, 3), 0);
	assert_int_equal(json_integer_value(obj_path(job, "spec.parallelism")), 3);
	assert_int_equal(integration_job.set_count(job, 1, 3), -ENOTSUP);
	assert_ptr_equal(integration_job.template_at(job, 0), obj_path(job, "spec.template"));
	assert_null(integration_job.template_at(job, 1));
	json_decref(job);

	assert_contains(fails(&integration_job,
			      J("{'spec':{'parallelism':'4','template':" CPU("1") "}}")),
			"spec.parallelism: must be an integer");
	assert_contains(fails(&integration_job,
			      J("{'metadata':{'annotations':{'kueue.x-k8s.io/"
				"job-min-parallelism':'4'}},"
				"'spec':{'parallelism':4,'template':" CPU("1") "}}")),
			"must be an integer from 1 to 3");
	assert_contains(fails(&integration_job,
			      J("{'spec':{'template':{'spec':{'containers':[{'name':'c',"
				"'resources':{'requests':{'cpu':'x'}}}]}}}}")),
			"spec.template.spec.containers[0].resources.requests.cpu");
}

/* Partial admission with gang scheduling: an unset minCount is left to follow parallelism;
 * an explicit one above the admitted count is lowered and comes back on restore. */
static void test_job_gang_follows_partial_admission(void **state)
{
	(void)state;
	json_t *job = J("{'metadata':{'name':'j'},'spec':{'parallelism':8,'scheduling':"
			"{'schedulingPolicy':{'gang':{}}},'template':{}}}");
	assert_int_equal(integration_job.set_count(job, 0, 5), 0);
	assert_null(obj_path(job, "spec.scheduling.schedulingPolicy.gang.minCount"));
	assert_null(obj_path(job, "metadata.annotations"));
	json_decref(job);

	job = J("{'metadata':{'name':'j'},'spec':{'parallelism':8,'scheduling':"
		"{'schedulingPolicy':{'gang':{'minCount':6}}},'template':{}}}");
	/* Admitted 4 of 8: the gang is the 4. */
	assert_int_equal(integration_job.set_count(job, 0, 4), 0);
	assert_int_equal(json_integer_value(
				 obj_path(job, "spec.scheduling.schedulingPolicy.gang.minCount")),
			 4);
	assert_string_equal(json_string_value(
				    obj_path(job, "metadata.annotations") ?
					    json_object_get(obj_path(job, "metadata.annotations"),
							    ANNOTATION_GANG_MIN_COUNT) :
					    NULL),
			    "6");
	/* Evicted: the count and the user's minCount come back, the note goes. */
	assert_int_equal(integration_job.set_count(job, 0, 8), 0);
	assert_int_equal(json_integer_value(
				 obj_path(job, "spec.scheduling.schedulingPolicy.gang.minCount")),
			 6);
	assert_null(
		json_object_get(obj_path(job, "metadata.annotations"), ANNOTATION_GANG_MIN_COUNT));
	/* Admitted 7: 6 fits, nothing to lower. */
	assert_int_equal(integration_job.set_count(job, 0, 7), 0);
	assert_int_equal(json_integer_value(
				 obj_path(job, "spec.scheduling.schedulingPolicy.gang.minCount")),
			 6);
	assert_null(
		json_object_get(obj_path(job, "metadata.annotations"), ANNOTATION_GANG_MIN_COUNT));
	json_decref(job);
}

static void test_job_status(void **state)
{
	(void)state;
	struct integration_result r;
	json_t *job = J("{'status':{'ready':2,'succeeded':1,'active':2,'startTime':'2026-01-01T00:"
			"00:00Z'}}");
	assert_false(integration_job.finished(job, &r));
	assert_true(integration_job.pods_ready(job, 3));
	assert_false(integration_job.pods_ready(job, 4));
	assert_int_equal(integration_job.active_pods(job), 2);
	assert_string_equal(integration_job.started_at(job), "2026-01-01T00:00:00Z");
	json_t *patch;
	const char *sub;
	assert_int_equal(integration_job.before_restore(job, &patch, &sub), 1);
	assert_string_equal(sub, "/status");
	assert_json(patch, "{'status':{'startTime':null}}");
	json_decref(job);
	job = J("{'status':{'conditions':[{'type':'Failed','status':'True'}]}}");
	assert_true(integration_job.finished(job, &r));
	assert_string_equal(r.reason, "Failed");
	assert_int_equal(integration_job.before_restore(job, &patch, &sub), 0);
	json_decref(job);
}

/* --- RayJob and RayCluster ----------------------------------------------------------------- */

#define RAYJOB(extra, workers)                                                                     \
	"{'apiVersion':'ray.io/v1','kind':'RayJob','metadata':{'name':'train','namespace':'ns',"   \
	"'uid':'uid-1','creationTimestamp':'2026-01-01T00:00:00Z',"                                \
	"'labels':{'kueue.x-k8s.io/queue-name':'lq'}},'spec':{'suspend':true,"                     \
	"'shutdownAfterJobFinishes':true," extra                                                   \
	"'rayClusterSpec':{'headGroupSpec':{'template':" CPU("1") "},'workerGroupSpecs':[" workers \
								  "]}}}"
#define WORKERS "{'groupName':'workers','replicas':2,'numOfHosts':2,'template':" GPU("2") "}"

static void test_rayjob_podsets(void **state)
{
	(void)state;
	char err[256];
	json_t *job = J(RAYJOB("", WORKERS));
	assert_json(integration_rayjob.podsets(job, err, sizeof(err)),
		    "[{'name':'head','count':1,'template':" CPU(
			    "1") "},"
				 "{'name':'workers','count':4,'template':" GPU(
					 "2") "},"
					      "{'name':'submitter','count':1,'template':{'spec':{'"
					      "restartPolicy':'Never',"
					      "'containers':[{'name':'ray-job-submitter','"
					      "resources':{'requests':"
					      "{'cpu':'500m','memory':'200Mi'}}}]}}}]");
	/* Templates and counts are the kind's to change. */
	assert_ptr_equal(integration_rayjob.template_at(job, 0),
			 obj_path(job, "spec.rayClusterSpec.headGroupSpec.template"));
	assert_ptr_equal(integration_rayjob.template_at(job, 1),
			 json_object_get(json_array_get(obj_path(job, "spec.rayClusterSpec."
								      "workerGroupSpecs"),
							0),
					 "template"));
	assert_null(integration_rayjob.template_at(job, 2)); /* KubeRay's default submitter */
	assert_int_equal(integration_rayjob.set_count(job, 1, 2), 0);
	assert_int_equal(json_integer_value(
				 json_object_get(json_array_get(obj_path(job, "spec.rayClusterSpec."
									      "workerGroupSpecs"),
								0),
						 "replicas")),
			 1);
	assert_int_equal(integration_rayjob.set_count(job, 1, 3), -ENOTSUP); /* not whole hosts */
	assert_int_equal(integration_rayjob.set_count(job, 0, 2), -ENOTSUP);
	char path[128];
	integration_rayjob.template_path(job, 1, path, sizeof(path));
	assert_string_equal(path, "spec.rayClusterSpec.workerGroupSpecs[0].template");
	integration_rayjob.template_path(job, 2, path, sizeof(path));
	assert_string_equal(path, "spec.submitterPodTemplate");
	json_decref(job);

	/* HTTPMode submits from the operator: no submitter pod, no PodSet for it. */
	job = J(RAYJOB("'submissionMode':'HTTPMode',", WORKERS));
	json_t *ps = integration_rayjob.podsets(job, err, sizeof(err));
	assert_int_equal(json_array_size(ps), 2);
	json_decref(ps);
	json_decref(job);

	assert_contains(fails(&integration_rayjob,
			      J(RAYJOB("'clusterSelector':{'ray.io/cluster':'c'},", WORKERS))),
			"spec.clusterSelector: a queued RayJob must bring its own cluster");
	job = J(RAYJOB("", WORKERS));
	json_object_set_new(json_object_get(job, "spec"), "shutdownAfterJobFinishes", json_false());
	assert_contains(fails(&integration_rayjob, job),
			"spec.shutdownAfterJobFinishes: must be true");
	assert_contains(fails(&integration_rayjob,
			      J(RAYJOB("", "{'groupName':'head','template':" CPU("1") "}"))),
			"spec.rayClusterSpec.workerGroupSpecs[0].groupName: \"head\" must be a DNS "
			"label");
	assert_contains(fails(&integration_rayjob,
			      J(RAYJOB("",
				       "{'groupName':'w','replicas':-1,'template':" CPU("1") "}"))),
			"spec.rayClusterSpec.workerGroupSpecs[0].replicas: -1 is out of range");
	assert_contains(fails(&integration_rayjob,
			      J(RAYJOB("",
				       "{'groupName':'w','template':{'spec':{'containers':"
				       "[{'name':'c','resources':{'requests':{'cpu':'1x'}}}]}}}"))),
			"spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0]."
			"resources.requests.cpu");
	assert_contains(fails(&integration_rayjob,
			      J(RAYJOB("'managedBy':'kueue.x-k8s.io/multikueue',", WORKERS))),
			"spec.managedBy: \"kueue.x-k8s.io/multikueue\": muster queues only RayJobs "
			"the KubeRay operator runs");
	assert_contains(fails(&integration_rayjob, J(RAYJOB("'submissionMode':'Magic',", WORKERS))),
			"spec.submissionMode: unsupported value \"Magic\"");
}

static void test_rayjob_workload(void **state)
{
	(void)state;
	char err[512], name[300];
	struct eobj_workload w;
	assert_int_equal(integration_workload_name(&integration_rayjob, "train", "uid-1", name,
						   sizeof(name)),
			 0);
	assert_string_equal(name, "rayjob-train-5866d");
	assert_int_equal(integration_workload_name(&integration_raycluster, "serve", "uid-2", name,
						   sizeof(name)),
			 0);
	assert_string_equal(name, "raycluster-serve-c9161");

	/* The priority class of the first template that names one. */
	json_t *pcs = J("{'high':{'value':1000}}");
	json_t *job = J(RAYJOB("", WORKERS));
	json_object_set_new(obj_path(job, "spec.rayClusterSpec.headGroupSpec.template.spec"),
			    "priorityClassName", json_string("high"));
	assert_int_equal(eobj_workload_for(&integration_rayjob, job, NULL, NULL, pcs, &w, err,
					   sizeof(err)),
			 0);
	assert_string_equal(obj_name(w.obj), "rayjob-train-5866d");
	assert_int_equal(json_integer_value(obj_path(w.obj, "spec.priority")), 1000);
	assert_json(json_incref(obj_path(w.obj, "metadata.ownerReferences")),
		    "[{'apiVersion':'ray.io/v1','kind':'RayJob','name':'train','uid':'uid-1',"
		    "'controller':true,'blockOwnerDeletion':true}]");
	eobj_workload_release(&w);
	json_object_set_new(obj_path(job, "spec.rayClusterSpec.headGroupSpec.template.spec"),
			    "priorityClassName", json_string("missing"));
	assert_int_equal(eobj_workload_for(&integration_rayjob, job, NULL, NULL, pcs, &w, err,
					   sizeof(err)),
			 -EINVAL);
	eobj_workload_release(&w);
	assert_string_equal(err,
			    "spec.rayClusterSpec.headGroupSpec.template.spec.priorityClassName: "
			    "PriorityClass missing doesn't exist");
	json_decref(job);
	json_decref(pcs);
}

static void test_ray_status(void **state)
{
	(void)state;
	struct integration_result r;
	json_t *job = J("{'status':{'jobDeploymentStatus':'Running','rayClusterStatus':{'state':'"
			"ready'}}}");
	assert_false(integration_rayjob.finished(job, &r));
	assert_true(integration_rayjob.pods_ready(job, 5));
	assert_int_equal(integration_rayjob.active_pods(job), 1);
	json_decref(job);
	job = J("{'status':{'jobDeploymentStatus':'Complete','jobStatus':'SUCCEEDED'}}");
	assert_true(integration_rayjob.finished(job, &r));
	assert_string_equal(r.reason, "Succeeded");
	json_decref(job);
	job = J("{'status':{'jobDeploymentStatus':'Complete','jobStatus':'STOPPED'}}");
	assert_true(integration_rayjob.finished(job, &r));
	assert_string_equal(r.reason, "Failed");
	json_decref(job);
	job = J("{'status':{'jobDeploymentStatus':'Failed','message':'deadline exceeded'}}");
	assert_true(integration_rayjob.finished(job, &r));
	assert_string_equal(r.message, "deadline exceeded");
	json_decref(job);
	job = J("{'status':{'jobDeploymentStatus':'ValidationFailed','message':'bad spec'}}");
	assert_true(integration_rayjob.finished(job, &r));
	assert_string_equal(r.reason, "Failed");
	json_decref(job);
	job = J("{'status':{'jobDeploymentStatus':'Suspended'}}");
	assert_int_equal(integration_rayjob.active_pods(job), 0);
	json_decref(job);

	json_t *rc = J("{'status':{'state':'suspended'}}");
	assert_false(integration_raycluster.finished(rc, &r)); /* it serves until deleted */
	assert_int_equal(integration_raycluster.active_pods(rc), 0);
	assert_false(integration_raycluster.pods_ready(rc, 1));
	json_decref(rc);
}

static void test_raycluster_autoscaling(void **state)
{
	(void)state;
	char err[256];
	json_t *rc = J("{'spec':{'enableInTreeAutoscaling':true,'headGroupSpec':{'template':" CPU(
		"1") "},"
		     "'workerGroupSpecs':[{'groupName':'a','replicas':4,'minReplicas':1,'template'"
		     ":" CPU("1") "},"
				  "{'groupName':'b','replicas':3,'minReplicas':2,'template':" CPU(
					  "1") "}]}}");
	json_t *ps = integration_raycluster.podsets(rc, err, sizeof(err));
	assert_non_null(ps);
	/* minCount on one group only: the engine admits partially along one PodSet. */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ps, 1), "minCount")), 1);
	assert_null(json_object_get(json_array_get(ps, 2), "minCount"));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ps, 2), "count")), 3);
	json_decref(ps);
	json_decref(rc);
}

/* --- plain Pods and pod groups --------------------------------------------------------------- */

static json_t *pod(const char *name, const char *group, const char *total, const char *cpu,
		   const char *phase, const char *created)
{
	char meta[512] = "";
	if (group)
		snprintf(meta, sizeof(meta), ",'kueue.x-k8s.io/pod-group-name':'%s'", group);
	json_t *p =
		J("{'metadata':{'name':'%s','namespace':'ns','uid':'uid-%s','creationTimestamp':'%"
		  "s',"
		  "'labels':{'kueue.x-k8s.io/queue-name':'lq','kueue.x-k8s.io/managed':'true'%s}},"
		  "'spec':{'schedulingGates':[{'name':'kueue.x-k8s.io/admission'}],"
		  "'containers':[{'name':'c','image':'busybox','resources':{'requests':{'cpu':'%s'}"
		  "}}]},"
		  "'status':{'phase':'%s'}}",
		  name, name, created, meta, cpu, phase);
	if (total)
		json_object_set_new(json_object_get(p, "metadata"), "annotations",
				    json_pack("{s:s}", ANNOTATION_POD_GROUP_TOTAL, total));
	return p;
}

static void test_pod_group_of(void **state)
{
	(void)state;
	char wl[300], err[256];
	int64_t total;
	json_t *p = pod("solo", NULL, NULL, "1", "Pending", "2026-01-01T00:00:00Z");
	assert_int_equal(pod_group_of(p, wl, sizeof(wl), &total, err, sizeof(err)), 0);
	assert_string_equal(wl, "pod-solo-532eb");
	assert_int_equal(total, 1);
	json_decref(p);
	p = pod("a", "train", "4", "1", "Pending", "2026-01-01T00:00:00Z");
	assert_int_equal(pod_group_of(p, wl, sizeof(wl), &total, err, sizeof(err)), 0);
	assert_string_equal(wl, "train");
	assert_int_equal(total, 4);
	json_decref(p);

	static const char *const bad[][3] = {
		{ "train", NULL,
		  "annotations[\"kueue.x-k8s.io/pod-group-total-count\"]: Required value" },
		{ "train", "0", "must be an integer from 1 to 10000" },
		{ "train", "four", "must be an integer from 1 to 10000" },
		{ "train", "10001", "must be an integer from 1 to 10000" },
		{ "Train_1", "2",
		  "labels[\"kueue.x-k8s.io/pod-group-name\"]: Invalid value: \"Train_1\"" },
		{ NULL, "2",
		  "only a Pod with the label kueue.x-k8s.io/pod-group-name belongs to a group" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = pod("a", bad[i][0], bad[i][1], "1", "Pending", "2026-01-01T00:00:00Z");
		assert_int_equal(pod_group_of(p, wl, sizeof(wl), &total, err, sizeof(err)),
				 -EINVAL);
		assert_contains(err, bad[i][2]);
		json_decref(p);
	}
}

static void test_pod_group_podsets(void **state)
{
	(void)state;
	char err[512];
	struct integration_result r;
	/* A launcher and three workers: two roles, two PodSets, named by their shapes. */
	json_t *pods[5] = {
		pod("w1", "mpi", "4", "2", "Pending", "2026-01-01T00:00:02Z"),
		pod("launcher", "mpi", "4", "1", "Pending", "2026-01-01T00:00:01Z"),
		pod("w2", "mpi", "4", "2", "Pending", "2026-01-01T00:00:03Z"),
		pod("w3", "mpi", "4", "2", "Pending", "2026-01-01T00:00:04Z"),
		pod("w4", "mpi", "4", "2", "Failed", "2026-01-01T00:00:05Z"),
	};
	json_t *group = pod_group_new(pods, 5, err, sizeof(err));
	assert_non_null(group);
	assert_string_equal(obj_name(group), "mpi");
	assert_string_equal(obj_uid(group), "uid-launcher"); /* the oldest pod */
	json_t *ps = integration_pod.podsets(group, err, sizeof(err));
	assert_non_null(ps);
	assert_int_equal(json_array_size(ps), 2);
	/* The oldest pod's role first; the failed pod (waiting for its replacement) is not one. */
	json_t *launcher = json_array_get(ps, 0), *workers = json_array_get(ps, 1);
	assert_int_equal(json_integer_value(json_object_get(launcher, "count")), 1);
	assert_int_equal(json_integer_value(json_object_get(workers, "count")), 3);
	char name[16];
	assert_int_equal(pod_podset_name(group, pods[0], name, sizeof(name)), 0);
	assert_string_equal(json_string_value(json_object_get(workers, "name")), name);
	/* The first 4 bytes of the SHA-1 of the role's shape, compact with sorted keys:
	 * {"containers":[{"name":"c","resources":{"requests":{"cpu":"2"}}}],"initContainers":[]}.
	 * Admitted groups' Workloads carry the name, so it must not change with the code. */
	assert_string_equal(name, "316480dd");
	/* The template keeps what muster reads, not the image, nor the managed label. */
	assert_json(json_incref(json_object_get(launcher, "template")),
		    "{'metadata':{'labels':{'kueue.x-k8s.io/queue-name':'lq','kueue.x-k8s.io/"
		    "pod-group-name':'mpi'}},"
		    "'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}],'"
		    "initContainers':[]}}");
	json_decref(ps);
	assert_true(integration_pod.held(group));
	assert_int_equal(integration_pod.active_pods(group), 0);
	assert_false(integration_pod.finished(group, &r));
	/* The group's pods own its Workload together, none as its controller. */
	json_t *refs = integration_pod.owner_references(group);
	assert_int_equal(json_array_size(refs), 5);
	assert_null(json_object_get(json_array_get(refs, 0), "controller"));
	json_decref(refs);
	json_decref(group);

	/* A failed pod that may not be retried fails the group. */
	json_object_set_new(json_object_get(pods[4], "metadata"), "annotations",
			    json_pack("{s:s, s:s}", ANNOTATION_POD_GROUP_TOTAL, "4",
				      ANNOTATION_RETRIABLE_IN_GROUP, "false"));
	group = pod_group_new(pods, 5, err, sizeof(err));
	assert_true(integration_pod.finished(group, &r));
	assert_string_equal(r.reason, "Failed");
	json_decref(group);

	/* Four successes finish it. */
	for (size_t i = 0; i < 4; i++)
		json_object_set_new(json_object_get(pods[i], "status"), "phase",
				    json_string("Succeeded"));
	group = pod_group_new(pods, 4, err, sizeof(err));
	assert_true(integration_pod.finished(group, &r));
	assert_string_equal(r.reason, "Succeeded");
	json_decref(group);
	for (size_t i = 0; i < 5; i++)
		json_decref(pods[i]);
}

static void test_pod_group_disagreement(void **state)
{
	(void)state;
	char err[512];
	json_t *pods[2] = { pod("a", "g", "4", "1", "Pending", "2026-01-01T00:00:01Z"),
			    pod("b", "g", "3", "1", "Pending", "2026-01-01T00:00:02Z") };
	assert_null(pod_group_new(pods, 2, err, sizeof(err)));
	assert_string_equal(err, "pods a and b of group g disagree on "
				 "kueue.x-k8s.io/pod-group-total-count: 4 and 3");
	json_object_set_new(json_object_get(pods[1], "metadata"), "annotations",
			    json_pack("{s:s}", ANNOTATION_POD_GROUP_TOTAL, "4"));
	json_object_set_new(obj_path(pods[1], "metadata.labels"), LABEL_QUEUE_NAME,
			    json_string("other"));
	assert_null(pod_group_new(pods, 2, err, sizeof(err)));
	assert_string_equal(err, "pods a and b of group g disagree on kueue.x-k8s.io/queue-name: "
				 "\"lq\" and \"other\"");
	json_decref(pods[0]);
	json_decref(pods[1]);
}

static void test_single_pod_workload(void **state)
{
	(void)state;
	char err[512];
	struct eobj_workload w;
	json_t *p = pod("solo", NULL, NULL, "1", "Pending", "2026-01-01T00:00:00Z");
	json_t *group = pod_group_new(&p, 1, err, sizeof(err));
	assert_int_equal(eobj_workload_for(&integration_pod, group, NULL, NULL, NULL, &w, err,
					   sizeof(err)),
			 0);
	assert_string_equal(obj_name(w.obj), "pod-solo-532eb");
	assert_json(json_incref(obj_path(w.obj, "metadata.ownerReferences")),
		    "[{'apiVersion':'v1','kind':'Pod','name':'solo','uid':'uid-solo','controller':"
		    "true,"
		    "'blockOwnerDeletion':true}]");
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(obj_path(w.obj, "spec.podSets"),
								   0),
						    "name")),
			    "main");
	eobj_workload_release(&w);
	json_decref(group);
	json_decref(p);
}

/* --- the merge difference every owner write is made of
 * ------------------------------------------ */

static void test_merge_diff(void **state)
{
	(void)state;
	json_t *a =
		J("{'spec':{'suspend':true,'template':{'spec':{'nodeSelector':{'a':'1','b':'2'},"
		  "'tolerations':[{'key':'x'}]}},'parallelism':4},'status':{'active':0}}");
	json_t *b =
		J("{'spec':{'suspend':false,'template':{'spec':{'nodeSelector':{'a':'1','c':'3'},"
		  "'tolerations':[{'key':'x'},{'key':'y'}]}},'parallelism':4},'status':{'active':0}"
		  "}");
	assert_json(obj_merge_diff(a, b), "{'spec':{'suspend':false,'template':{'spec':{'"
					  "nodeSelector':{'b':null,'c':'3'},"
					  "'tolerations':[{'key':'x'},{'key':'y'}]}}}}");
	assert_json(obj_merge_diff(a, a), "{}");
	json_decref(a);
	json_decref(b);
}

/* The one owner rule (Kueue's: the controller reference, when it names an integrated kind),
 * and the garbage collector's question beside it (any entry, by uid). The places that used
 * to walk ownerReferences on their own disagreed exactly on these objects. */
static void test_owner_rule(void **state)
{
	(void)state;
	const struct integration *in = NULL;
	/* An integrated kind listed first without being the controller is not the owner; the
	 * controller after it is. */
	json_t *wl = J("{'metadata':{'ownerReferences':["
		       "{'apiVersion':'ray.io/v1','kind':'RayJob','name':'r','uid':'u-r'},"
		       "{'apiVersion':'v1','kind':'ConfigMap','name':'c','uid':'u-c'},"
		       "{'apiVersion':'batch/v1','kind':'Job','name':'j','uid':'u-j',"
		       "'controller':true}]}}");
	json_t *ref = integration_owner_ref(wl, &in);
	assert_ptr_equal(in, &integration_job);
	assert_string_equal(json_string_value(json_object_get(ref, "uid")), "u-j");
	assert_true(integration_owned(wl));
	/* The garbage collector's reading: any entry of that uid, controller or not. */
	assert_non_null(obj_owner_ref(wl, 0, NULL, NULL, "u-c"));
	assert_null(obj_owner_ref(wl, 1, NULL, NULL, "u-c"));
	assert_non_null(obj_owner_ref(wl, 0, "ray.io/v1", "RayJob", NULL));
	json_decref(wl);
	/* A controller of a kind muster does not integrate: no integrated owner, even with an
	 * integrated kind listed beside it. */
	wl = J("{'metadata':{'ownerReferences':["
	       "{'apiVersion':'apps/v1','kind':'ReplicaSet','name':'rs','uid':'u-rs',"
	       "'controller':true},"
	       "{'apiVersion':'batch/v1','kind':'Job','name':'j','uid':'u-j'}]}}");
	assert_null(integration_owner_ref(wl, &in));
	assert_null(in);
	assert_false(integration_owned(wl));
	ref = obj_owner_ref(wl, 1, NULL, NULL, NULL);
	assert_string_equal(json_string_value(json_object_get(ref, "name")), "rs");
	json_decref(wl);
	/* None at all, or not a list. */
	wl = J("{'metadata':{'ownerReferences':{}}}");
	assert_null(integration_owner_ref(wl, NULL));
	assert_null(obj_owner_ref(wl, 0, NULL, NULL, NULL));
	json_decref(wl);
}

/* The version webhook and policy rules match a kind by: not always v1 (JobSet's is
 * v1alpha2), so it comes from the kind's apiVersion. */
static void test_integration_version(void **state)
{
	(void)state;
	const struct integration jobset = { .api_version = "jobset.x-k8s.io/v1alpha2" };
	assert_string_equal(integration_version(&integration_job), "v1");
	assert_string_equal(integration_version(&integration_rayjob), "v1");
	assert_string_equal(integration_version(&integration_pod), "v1");
	assert_string_equal(integration_version(&jobset), "v1alpha2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_podsets),
		cmocka_unit_test(test_job_status),
		cmocka_unit_test(test_job_gang_follows_partial_admission),
		cmocka_unit_test(test_rayjob_podsets),
		cmocka_unit_test(test_rayjob_workload),
		cmocka_unit_test(test_ray_status),
		cmocka_unit_test(test_raycluster_autoscaling),
		cmocka_unit_test(test_pod_group_of),
		cmocka_unit_test(test_pod_group_podsets),
		cmocka_unit_test(test_pod_group_disagreement),
		cmocka_unit_test(test_single_pod_workload),
		cmocka_unit_test(test_merge_diff),
		cmocka_unit_test(test_owner_rule),
		cmocka_unit_test(test_integration_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
