/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RayCluster and RayJob (ray.io/v1, KubeRay) on the integration seam, as Kueue maps them:
 * a PodSet "head" of one pod, one per worker group named by its groupName with replicas x
 * numOfHosts pods, and for a RayJob in K8sJobMode a PodSet "submitter" for the pod of the Job
 * that submits it. Both are held and released through spec.suspend: KubeRay creates no pod for
 * a suspended one and deletes the pods of one suspended while running.
 *
 * With in-tree autoscaling a worker group's replicas is where the autoscaler stands; its
 * minReplicas is what the cluster needs to be of use, so it becomes the PodSet's minCount
 * (partial admission), for one autoscaled group at most (Kueue allows minCount on one PodSet).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/integrations.h"
#include "api/objects.h"

#define PATH_LEN 160

/* What KubeRay v1.5 runs as a RayJob's submitter when spec.submitterPodTemplate is unset
 * (its default template: one container with these requests). */
#define SUBMITTER_CPU "500m"
#define SUBMITTER_MEMORY "200Mi"

static void cluster_template_path(const char *path, size_t i, char *buf, size_t size)
{
	if (i == 0)
		snprintf(buf, size, "%s.headGroupSpec.template", path);
	else
		snprintf(buf, size, "%s.workerGroupSpecs[%zu].template", path, i - 1);
}

/* The PodSets of a RayClusterSpec at path; appends to list. */
static int cluster_podsets(json_t *spec, const char *path, json_t *list, char *err, size_t errlen)
{
	char p[PATH_LEN], tp[PATH_LEN];
	json_t *workers, *w;
	size_t i;
	int autoscaled = json_is_true(eobj_field(spec, "enableInTreeAutoscaling")), min_seen = 0;

	if (!spec)
		return eobj_bad(err, errlen, "%s: required", path);
	if (eobj_want_object(spec, path, err, errlen) != 0)
		return -EINVAL;
	snprintf(p, sizeof(p), "%s.headGroupSpec", path);
	json_t *head = eobj_field(spec, "headGroupSpec");
	if (!head)
		return eobj_bad(err, errlen, "%s: required", p);
	if (eobj_want_object(head, p, err, errlen) != 0)
		return -EINVAL;
	cluster_template_path(path, 0, tp, sizeof(tp));
	json_t *ps =
		integration_podset("head", 1, eobj_field(head, "template"), tp, NULL, err, errlen);
	if (!ps || json_array_append_new(list, ps) != 0)
		return ps ? eobj_nomem(err, errlen) : -EINVAL;
	snprintf(p, sizeof(p), "%s.workerGroupSpecs", path);
	workers = eobj_field(spec, "workerGroupSpecs");
	if (eobj_want_array(workers, p, err, errlen) != 0)
		return -EINVAL;
	json_array_foreach(workers, i, w)
	{
		const char *name;
		int64_t replicas = 1, min = 0, hosts = 1;
		int has_rep, has_min, has_hosts;
		snprintf(p, sizeof(p), "%s.workerGroupSpecs[%zu]", path, i);
		if (eobj_want_object(w, p, err, errlen) != 0 ||
		    eobj_get_string(w, "groupName", p, &name, err, errlen) != 0 ||
		    eobj_get_int(w, "replicas", p, 0, INT32_MAX, &has_rep, &replicas, err,
				 errlen) != 0 ||
		    eobj_get_int(w, "minReplicas", p, 0, INT32_MAX, &has_min, &min, err, errlen) !=
			    0 ||
		    eobj_get_int(w, "numOfHosts", p, 1, INT32_MAX, &has_hosts, &hosts, err,
				 errlen) != 0)
			return -EINVAL;
		if (!w || !json_is_object(w))
			return eobj_bad(err, errlen, "%s: must be an object", p);
		if (!name || !*name || !eobj_is_dns_label(name, strlen(name)) ||
		    !strcmp(name, "head") || !strcmp(name, "submitter"))
			return eobj_bad(err, errlen,
					"%s.groupName: \"%.64s\" must be a DNS label other than "
					"\"head\" and "
					"\"submitter\" (it names the Workload's PodSet)",
					p, name ? name : "");
		if (!has_rep)
			replicas = 1;
		if (!has_hosts)
			hosts = 1;
		cluster_template_path(path, i + 1, tp, sizeof(tp));
		ps = integration_podset(name, replicas * hosts, eobj_field(w, "template"), tp, NULL,
					err, errlen);
		if (!ps)
			return -EINVAL;
		if (autoscaled && has_min && min < replicas && !min_seen) {
			min_seen = 1;
			if (json_object_set_new(ps, "minCount",
						json_integer(min * hosts > 0 ? min * hosts : 1)) !=
			    0) {
				json_decref(ps);
				return eobj_nomem(err, errlen);
			}
		}
		if (json_array_append_new(list, ps) != 0)
			return eobj_nomem(err, errlen);
	}
	return 0;
}

static json_t *cluster_template_at(json_t *spec, size_t i)
{
	if (i == 0)
		return obj_path(spec, "headGroupSpec.template");
	return json_object_get(json_array_get(json_object_get(spec, "workerGroupSpecs"), i - 1),
			       "template");
}

static int cluster_set_count(json_t *spec, size_t i, int64_t count)
{
	if (i == 0)
		return count == 1 ? 0 : -ENOTSUP;
	json_t *w = json_array_get(json_object_get(spec, "workerGroupSpecs"), i - 1);
	if (!json_is_object(w))
		return -ENOTSUP;
	json_int_t hosts = json_integer_value(json_object_get(w, "numOfHosts"));
	if (hosts < 1)
		hosts = 1;
	if (count % hosts)
		return -ENOTSUP;
	return json_object_set_new(w, "replicas", json_integer(count / hosts)) == 0 ? 0 : -ENOMEM;
}

static int set_suspend(json_t *obj, int held)
{
	json_t *spec = json_object_get(obj, "spec");
	return json_is_object(spec) &&
			       json_object_set_new(spec, "suspend", json_boolean(held)) == 0 ?
		       0 :
		       -ENOMEM;
}

static int suspended(json_t *obj)
{
	return json_is_true(obj_path(obj, "spec.suspend"));
}

/* --- RayCluster ----------------------------------------------------------------------------- */

static json_t *raycluster_podsets(json_t *rc, char *err, size_t errlen)
{
	json_t *list = json_array();
	if (!list) {
		eobj_nomem(err, errlen);
		return NULL;
	}
	if (cluster_podsets(eobj_field(rc, "spec"), "spec", list, err, errlen) != 0) {
		json_decref(list);
		return NULL;
	}
	return list;
}

static void raycluster_template_path(json_t *rc, size_t i, char *buf, size_t size)
{
	(void)rc;
	cluster_template_path("spec", i, buf, size);
}

static json_t *raycluster_template_at(json_t *rc, size_t i)
{
	return cluster_template_at(json_object_get(rc, "spec"), i);
}

static int raycluster_set_count(json_t *rc, size_t i, int64_t count)
{
	return cluster_set_count(json_object_get(rc, "spec"), i, count);
}

/* A RayCluster serves until it is deleted: it never finishes. */
static int raycluster_finished(json_t *rc, struct integration_result *out)
{
	(void)rc, (void)out;
	return 0;
}

static int raycluster_pods_ready(json_t *rc, int64_t want)
{
	(void)want;
	const char *state = obj_str(rc, "status.state");
	return state && !strcmp(state, "ready");
}

/* KubeRay deletes a suspended cluster's pods, then says "suspended". */
static int64_t raycluster_active_pods(json_t *rc)
{
	const char *state = obj_str(rc, "status.state");
	return state && !strcmp(state, "suspended") ? 0 : 1;
}

static const char *no_start(json_t *obj)
{
	(void)obj;
	return NULL;
}

const struct integration integration_raycluster = {
	.framework = "ray.io/raycluster",
	.api_version = "ray.io/v1",
	.kind = "RayCluster",
	.group = "ray.io",
	.plural = "rayclusters",
	.podsets = raycluster_podsets,
	.template_path = raycluster_template_path,
	.template_at = raycluster_template_at,
	.set_count = raycluster_set_count,
	.held = suspended,
	.set_held = set_suspend,
	.holds_by_suspend = 1,
	.finished = raycluster_finished,
	.pods_ready = raycluster_pods_ready,
	.active_pods = raycluster_active_pods,
	.started_at = no_start,
	.before_restore = NULL,
};

/* --- RayJob -------------------------------------------------------------------------------- */

/* K8sJobMode, the default, runs the submitter as a Job of its own: its pod needs quota too. */
static int has_submitter(json_t *job)
{
	const char *mode = obj_str(job, "spec.submissionMode");
	return !mode || !strcmp(mode, "K8sJobMode");
}

static json_t *rayjob_podsets(json_t *job, char *err, size_t errlen)
{
	json_t *spec = eobj_field(job, "spec"), *list = NULL, *tmpl = NULL, *ps;
	const char *mode;

	if (!spec) {
		eobj_bad(err, errlen, "spec: required");
		return NULL;
	}
	if (eobj_want_object(spec, "spec", err, errlen) != 0 ||
	    eobj_get_string(spec, "submissionMode", "spec", &mode, err, errlen) != 0)
		return NULL;
	if (mode && strcmp(mode, "K8sJobMode") && strcmp(mode, "HTTPMode") &&
	    strcmp(mode, "InteractiveMode") && strcmp(mode, "SidecarMode")) {
		eobj_bad(err, errlen,
			 "spec.submissionMode: unsupported value \"%.32s\": must be one of "
			 "K8sJobMode, HTTPMode, InteractiveMode, SidecarMode",
			 mode);
		return NULL;
	}
	/* Kueue's RayJob webhook: quota is held for the cluster the RayJob brings, and given back
	 * only when that cluster goes with the finished job. */
	if (json_object_size(eobj_field(spec, "clusterSelector")) > 0) {
		eobj_bad(err, errlen,
			 "spec.clusterSelector: a queued RayJob must bring its own cluster "
			 "(spec.rayClusterSpec), not use an existing one");
		return NULL;
	}
	/* KubeRay ignores a RayJob managed by someone else: admitting it would hold quota for
	 * nothing that runs. */
	const char *managed_by = json_string_value(eobj_field(spec, "managedBy"));
	if (managed_by && strcmp(managed_by, "ray.io/kuberay-operator") != 0) {
		eobj_bad(err, errlen,
			 "spec.managedBy: \"%.64s\": muster queues only RayJobs the KubeRay "
			 "operator runs (ray.io/kuberay-operator)",
			 managed_by);
		return NULL;
	}
	if (!json_is_true(eobj_field(spec, "shutdownAfterJobFinishes"))) {
		eobj_bad(err, errlen,
			 "spec.shutdownAfterJobFinishes: must be true for a queued RayJob, "
			 "so that its cluster goes when the job finishes and its quota is free");
		return NULL;
	}
	if ((list = json_array()) == NULL) {
		eobj_nomem(err, errlen);
		return NULL;
	}
	if (cluster_podsets(eobj_field(spec, "rayClusterSpec"), "spec.rayClusterSpec", list, err,
			    errlen) != 0)
		goto fail;
	if (has_submitter(job)) {
		json_t *given = eobj_field(spec, "submitterPodTemplate");
		tmpl = given ? json_incref(given) :
			       json_pack("{s:{s:s, s:[{s:s, s:{s:{s:s, s:s}}}]}}", "spec",
					 "restartPolicy", "Never", "containers", "name",
					 "ray-job-submitter", "resources", "requests", "cpu",
					 SUBMITTER_CPU, "memory", SUBMITTER_MEMORY);
		if (!tmpl) {
			eobj_nomem(err, errlen);
			goto fail;
		}
		ps = integration_podset("submitter", 1, tmpl, "spec.submitterPodTemplate", NULL,
					err, errlen);
		json_decref(tmpl);
		if (!ps)
			goto fail;
		if (json_array_append_new(list, ps) != 0) {
			eobj_nomem(err, errlen);
			goto fail;
		}
	}
	return list;
fail:
	json_decref(list);
	return NULL;
}

static void rayjob_template_path(json_t *job, size_t i, char *buf, size_t size)
{
	size_t n_workers = json_array_size(obj_path(job, "spec.rayClusterSpec.workerGroupSpecs"));
	if (i <= n_workers)
		cluster_template_path("spec.rayClusterSpec", i, buf, size);
	else
		snprintf(buf, size, "spec.submitterPodTemplate");
}

static json_t *rayjob_template_at(json_t *job, size_t i)
{
	json_t *cluster = obj_path(job, "spec.rayClusterSpec");
	size_t n_workers = json_array_size(json_object_get(cluster, "workerGroupSpecs"));
	if (i <= n_workers)
		return cluster_template_at(cluster, i);
	return i == n_workers + 1 && has_submitter(job) ?
		       obj_path(job, "spec.submitterPodTemplate") :
		       NULL;
}

static int rayjob_set_count(json_t *job, size_t i, int64_t count)
{
	json_t *cluster = obj_path(job, "spec.rayClusterSpec");
	if (i <= json_array_size(json_object_get(cluster, "workerGroupSpecs")))
		return cluster_set_count(cluster, i, count);
	return count == 1 ? 0 : -ENOTSUP;
}

/* Kueue's reading: a RayJob is done when its deployment is Complete (succeeded if the Ray
 * job SUCCEEDED) or Failed. */
static int rayjob_finished(json_t *job, struct integration_result *out)
{
	const char *deployment = obj_str(job, "status.jobDeploymentStatus");
	const char *status = obj_str(job, "status.jobStatus");
	const char *message = obj_str(job, "status.message");
	if (!deployment)
		return 0;
	if (!strcmp(deployment, "Complete")) {
		int ok = status && !strcmp(status, "SUCCEEDED");
		*out = (struct integration_result){ ok ? "Succeeded" : "Failed",
						    message && *message ? message :
						    ok ? "RayJob finished successfully" :
							 "RayJob failed" };
		return 1;
	}
	/* ValidationFailed is where KubeRay leaves a RayJob it refused for good. */
	if (!strcmp(deployment, "Failed") || !strcmp(deployment, "ValidationFailed")) {
		*out = (struct integration_result){ "Failed", message && *message ?
								      message :
								      "RayJob failed" };
		return 1;
	}
	return 0;
}

static int rayjob_pods_ready(json_t *job, int64_t want)
{
	(void)want;
	const char *state = obj_str(job, "status.rayClusterStatus.state");
	return state && !strcmp(state, "ready");
}

/* Suspending a RayJob deletes its cluster and submitter; KubeRay then says "Suspended". */
static int64_t rayjob_active_pods(json_t *job)
{
	const char *deployment = obj_str(job, "status.jobDeploymentStatus");
	return !deployment || !strcmp(deployment, "Suspended") || !strcmp(deployment, "New") ? 0 :
											       1;
}

static const char *rayjob_started_at(json_t *job)
{
	return obj_str(job, "status.startTime");
}

const struct integration integration_rayjob = {
	.framework = "ray.io/rayjob",
	.api_version = "ray.io/v1",
	.kind = "RayJob",
	.group = "ray.io",
	.plural = "rayjobs",
	.podsets = rayjob_podsets,
	.template_path = rayjob_template_path,
	.template_at = rayjob_template_at,
	.set_count = rayjob_set_count,
	.held = suspended,
	.set_held = set_suspend,
	.holds_by_suspend = 1,
	.finished = rayjob_finished,
	.pods_ready = rayjob_pods_ready,
	.active_pods = rayjob_active_pods,
	.started_at = rayjob_started_at,
	.before_restore = NULL,
};
