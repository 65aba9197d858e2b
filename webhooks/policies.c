/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission policies of the hold (policies.h): CEL written from the same tables the
 * webhooks use (api/integrations.h), so the two holds take the same objects.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/config.h"
#include "api/integrations.h"
#include "api/objects.h"
#include "webhooks/policies.h"

#define API_VERSION "admissionregistration.k8s.io/v1"
#define MAP_KIND "MutatingAdmissionPolicy"
#define VAP_KIND "ValidatingAdmissionPolicy"
#define POLICY_QUEUE_NAME "muster-queue-name"
#define POLICY_QUEUE_FROZEN "muster-queue-frozen"
#define POLICY_GANG "muster-gang-jobs"
#define POLICY_PODS "muster-hold-pods"
#define CEL_MAX 2048

/* The label as CEL reads it; the queue-name label has no character CEL would need escaped. */
#define QUEUE_LABEL "object.metadata.labels['" LABEL_QUEUE_NAME "']"
#define HAS_QUEUE_LABEL \
	"has(object.metadata.labels) && '" LABEL_QUEUE_NAME "' in object.metadata.labels"
#define OLD_QUEUE_LABEL "oldObject.metadata.labels['" LABEL_QUEUE_NAME "']"
#define OLD_HAS_QUEUE_LABEL \
	"has(oldObject.metadata.labels) && '" LABEL_QUEUE_NAME "' in oldObject.metadata.labels"

int policies_decide(int hold_mode, int gang_mode, int jobs, const struct policy_served *s,
		    int *policy, int *gang, char *err, size_t errlen)
{
	int gang_served = s->podgroups && s->job_scheduling;
	if (hold_mode == HOLD_POLICY && !s->mutating_admission_policy) {
		snprintf(err, errlen,
			 "admissionHold.mode AdmissionPolicy: the server does not serve "
			 "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy (Kubernetes "
			 "1.36+)");
		return -ENOTSUP;
	}
	if (gang_mode == GANG_ENABLED && !gang_served) {
		snprintf(err, errlen, "gangScheduling.mode Enabled: %s",
			 !s->podgroups ?
				 "the server does not serve scheduling.k8s.io/v1beta1 PodGroup "
				 "(Kubernetes 1.37+ with GenericWorkload)" :
				 "the server drops a Job's spec.scheduling (needs the "
				 "WorkloadWithJob feature gate)");
		return -ENOTSUP;
	}
	*policy = s->mutating_admission_policy && hold_mode != HOLD_WEBHOOK;
	*gang = gang_served && gang_mode != GANG_DISABLED && jobs;
	return 0;
}

const char *policies_resource(const char *kind)
{
	static const char *const map[][2] = {
		{ MAP_KIND, "mutatingadmissionpolicies" },
		{ MAP_KIND "Binding", "mutatingadmissionpolicybindings" },
		{ VAP_KIND, "validatingadmissionpolicies" },
		{ VAP_KIND "Binding", "validatingadmissionpolicybindings" },
	};
	for (size_t i = 0; kind && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i][0], kind))
			return map[i][1];
	return NULL;
}

/* integration_owned(), in CEL: a controller reference to any integrated kind. */
static int owned_condition(char *buf, size_t size)
{
	size_t n;
	const struct integration *const *all = integration_all(&n);
	int len = snprintf(buf, size,
			   "!has(object.metadata.ownerReferences) || "
			   "!object.metadata.ownerReferences.exists(r, has(r.controller) && "
			   "r.controller && (");
	for (size_t i = 0; i < n && len > 0 && (size_t)len < size; i++)
		len += snprintf(buf + len, size - (size_t)len,
				"%s(r.apiVersion == '%s' && r.kind == '%s')", i ? " || " : "",
				all[i]->api_version, all[i]->kind);
	if (len > 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len, "))");
	return len > 0 && (size_t)len < size ? 0 : -1;
}

static json_t *condition(const char *name, const char *expression)
{
	return json_pack("{s:s, s:s}", "name", name, "expression", expression);
}

/* The conditions every policy of queued objects has: not owned by an integrated kind, and
 * (unless every object of the managed namespaces is taken) queued, or the manager's probe
 * (probe_token, may be NULL). */
static json_t *queued_conditions(int labelled_only, const char *probe_token)
{
	char owned[CEL_MAX], queued[512];
	json_t *c = json_array();
	if (probe_token)
		snprintf(queued, sizeof(queued),
			 "(" HAS_QUEUE_LABEL " && " QUEUE_LABEL
			 " != '') || (has(object.metadata.labels) && '" POLICY_PROBE_LABEL
			 "' in object.metadata.labels && "
			 "object.metadata.labels['" POLICY_PROBE_LABEL "'] == '%.40s')",
			 probe_token);
	else
		snprintf(queued, sizeof(queued), "%s", HAS_QUEUE_LABEL " && " QUEUE_LABEL " != ''");
	if (!c || owned_condition(owned, sizeof(owned)) != 0 ||
	    json_array_append_new(c, condition("not-owned-by-an-integrated-kind", owned)) != 0 ||
	    (labelled_only && json_array_append_new(c, condition("queued", queued)) != 0)) {
		json_decref(c);
		return NULL;
	}
	return c;
}

/* The rule matching objects of kind in: created, and updated too when with_update. */
static json_t *resource_rule(const struct integration *in, int with_update)
{
	const char *version = integration_version(in);
	return with_update ? json_pack("{s:[s], s:[s], s:[s, s], s:[s]}", "apiGroups", in->group,
				       "apiVersions", version, "operations", "CREATE", "UPDATE",
				       "resources", in->plural) :
			     json_pack("{s:[s], s:[s], s:[s], s:[s]}", "apiGroups", in->group,
				       "apiVersions", version, "operations", "CREATE", "resources",
				       in->plural);
}

/* The namespaces a webhook reaches (webhooks' namespaceSelector): all but the system's. */
static json_t *default_namespaces(void)
{
	return json_pack("{s:[{s:s, s:s, s:[s, s, s]}]}", "matchExpressions", "key",
			 "kubernetes.io/metadata.name", "operator", "NotIn", "values",
			 "kube-system", "kube-public", "kube-node-lease");
}

/* Appends a policy and its binding to out; steals rules, conditions and body (the spec's
 * mutations or validations member, named by body_key) and namespaces. */
static int add_policy(json_t *out, const char *kind, const char *name, json_t *rules,
		      json_t *conditions, const char *body_key, json_t *body, json_t *namespaces)
{
	int mutating = !strcmp(kind, MAP_KIND);
	char binding_kind[64];
	json_t *policy = rules && conditions && body ?
				 json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:o, s:s}, s:o, s:o}}",
					   "apiVersion", API_VERSION, "kind", kind, "metadata",
					   "name", name, "spec", "failurePolicy", "Fail",
					   "matchConstraints", "resourceRules", rules,
					   "matchPolicy", "Equivalent", "matchConditions",
					   conditions, body_key, body) :
				 NULL;
	if (!policy) {
		json_decref(rules);
		json_decref(conditions);
		json_decref(body);
		json_decref(namespaces);
		return -1;
	}
	/* A later mutating webhook or policy could change what the hold set: apply it again. */
	if (mutating)
		json_object_set_new(json_object_get(policy, "spec"), "reinvocationPolicy",
				    json_string("IfNeeded"));
	snprintf(binding_kind, sizeof(binding_kind), "%sBinding", kind);
	json_t *binding = namespaces ?
				  json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:o}}}", "apiVersion",
					    API_VERSION, "kind", binding_kind, "metadata", "name",
					    name, "spec", "policyName", name, "matchResources",
					    "namespaceSelector", namespaces) :
				  NULL;
	if (binding && !mutating)
		json_object_set_new(json_object_get(binding, "spec"), "validationActions",
				    json_pack("[s]", "Deny"));
	if (!binding || json_array_append_new(out, policy) != 0) {
		json_decref(binding);
		if (!binding)
			json_decref(policy);
		return -1;
	}
	return json_array_append_new(out, binding);
}

/* One ApplyConfiguration mutation. */
static json_t *apply_mutation(const char *expression)
{
	return json_pack("[{s:s, s:{s:s}}]", "patchType", "ApplyConfiguration",
			 "applyConfiguration", "expression", expression);
}

static int add_owner_hold(json_t *out, const struct policy_inputs *in, const struct integration *k)
{
	char name[128];
	int all = in->manage_without_queue_name;
	snprintf(name, sizeof(name), "muster-hold-%s", k->plural);
	return add_policy(out, MAP_KIND, name, json_pack("[o]", resource_rule(k, 0)),
			  queued_conditions(!all, in->probe_token), "mutations",
			  apply_mutation("Object{spec: Object.spec{suspend: true}}"),
			  all && in->managed_namespaces ? json_deep_copy(in->managed_namespaces) :
							  default_namespaces());
}

static int add_gang(json_t *out, const char *probe_token)
{
	json_t *conditions = queued_conditions(1, probe_token);
	/* The user's own spec.scheduling (basic, or gang with a minCount) is theirs to keep. */
	if (conditions &&
	    json_array_append_new(conditions, condition("no-scheduling-of-its-own",
							"!has(object.spec.scheduling)")) != 0) {
		json_decref(conditions);
		conditions = NULL;
	}
	return add_policy(out, MAP_KIND, POLICY_GANG,
			  json_pack("[o]", resource_rule(&integration_job, 0)), conditions,
			  "mutations",
			  apply_mutation(
				  "Object{spec: Object.spec{scheduling: Object.spec.scheduling{"
				  "schedulingPolicy: Object.spec.scheduling.schedulingPolicy{"
				  "gang: Object.spec.scheduling.schedulingPolicy.gang{}}}}}"),
			  default_namespaces());
}

static int add_pod_hold(json_t *out, const char *probe_token)
{
	return add_policy(out, MAP_KIND, POLICY_PODS,
			  json_pack("[o]", resource_rule(&integration_pod, 0)),
			  queued_conditions(1, probe_token), "mutations",
			  apply_mutation(
				  "Object{metadata: Object.metadata{"
				  "labels: {'" LABEL_MANAGED "': 'true'}, "
				  "finalizers: ['" FINALIZER_MANAGED "']}, "
				  "spec: Object.spec{schedulingGates: [Object.spec.schedulingGates{"
				  "name: '" GATE_ADMISSION "'}]}}"),
			  default_namespaces());
}

/* The rules of every owner kind (and pods), created or updated: NULL on out of memory. */
static json_t *queued_kinds_rules(const struct policy_inputs *in, int pods)
{
	json_t *rules = json_array();
	for (size_t i = 0; rules && i < in->n_owners; i++) {
		if (json_array_append_new(rules, resource_rule(in->owners[i], 1)) != 0) {
			json_decref(rules);
			return NULL;
		}
	}
	if (rules && pods &&
	    json_array_append_new(rules, resource_rule(&integration_pod, 1)) != 0) {
		json_decref(rules);
		return NULL;
	}
	return rules;
}

/* muster-queue-name: webhook_check_queue_name's rule and message, for every kind muster
 * queues. */
static int add_queue_name(json_t *out, const struct policy_inputs *in)
{
	json_t *validations = json_pack(
		"[{s:s, s:s, s:s}]", "expression",
		"!(" HAS_QUEUE_LABEL ") || !format.dns1123Subdomain().validate(" QUEUE_LABEL
		").hasValue()",
		"messageExpression",
		"'metadata.labels[" LABEL_QUEUE_NAME "]: Invalid value: \"' + " QUEUE_LABEL
		" + '\": must be a valid LocalQueue name (a lowercase RFC 1123 subdomain)'",
		"reason", "Invalid");
	return add_policy(out, VAP_KIND, POLICY_QUEUE_NAME, queued_kinds_rules(in, in->pods),
			  queued_conditions(0, NULL), "validations", validations,
			  default_namespaces());
}

/* muster-queue-frozen: validate_owner's rule, a running owner (not held by spec.suspend)
 * keeps its queue. Pods have theirs in the pod webhook: they are not held by spec.suspend. */
static int add_queue_frozen(json_t *out, const struct policy_inputs *in)
{
	json_t *validations =
		json_pack("[{s:s, s:s, s:s}]", "expression",
			  "request.operation != 'UPDATE' || !(" OLD_HAS_QUEUE_LABEL ") || "
			  "(has(oldObject.spec.suspend) && oldObject.spec.suspend == true) || "
			  "((" HAS_QUEUE_LABEL ") && " QUEUE_LABEL " == " OLD_QUEUE_LABEL ")",
			  "messageExpression",
			  "'metadata.labels[" LABEL_QUEUE_NAME
			  "]: Forbidden: the queue of a running ' + "
			  "object.kind + ' cannot change; suspend it first'",
			  "reason", "Invalid");
	return add_policy(out, VAP_KIND, POLICY_QUEUE_FROZEN, queued_kinds_rules(in, 0),
			  queued_conditions(0, NULL), "validations", validations,
			  default_namespaces());
}

json_t *policies_build(const struct policy_inputs *in)
{
	json_t *out = json_array();
	int rc = out ? 0 : -1;
	if (!in)
		return out;
	for (size_t i = 0; rc == 0 && i < in->n_owners; i++)
		rc = add_owner_hold(out, in, in->owners[i]);
	if (rc == 0 && in->gang)
		rc = add_gang(out, in->probe_token);
	if (rc == 0 && in->pods)
		rc = add_pod_hold(out, in->probe_token);
	if (rc == 0 && (in->n_owners || in->pods))
		rc = add_queue_name(out, in);
	if (rc == 0 && in->n_owners)
		rc = add_queue_frozen(out, in);
	if (rc != 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

static int uses(json_t *objects, const char *kind, const char *name)
{
	size_t i;
	json_t *o;
	json_array_foreach(objects, i,
			   o) if (!strcmp(json_string_value(json_object_get(o, "kind")), kind) &&
				  !strcmp(json_string_value(
						  json_object_get(json_object_get(o, "metadata"),
								  "name")),
					  name)) return 1;
	return 0;
}

json_t *policies_unused(const struct policy_inputs *in)
{
	/* Everything any configuration makes: every owner kind, gang, pods. */
	size_t n;
	const struct integration *const *all = integration_all(&n);
	const struct integration *owners[8];
	size_t n_owners = 0;
	for (size_t i = 0; i < n && n_owners < sizeof(owners) / sizeof(owners[0]); i++)
		if (all[i]->holds_by_suspend)
			owners[n_owners++] = all[i];
	const struct policy_inputs every = { owners, n_owners, 1, 1, 0, NULL, NULL };
	json_t *possible = policies_build(&every), *used = policies_build(in), *out = json_array();
	size_t i;
	json_t *o;
	int rc = possible && used && out ? 0 : -1;
	json_array_foreach(possible, i, o)
	{
		const char *kind = json_string_value(json_object_get(o, "kind"));
		const char *name =
			json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
		if (rc == 0 && !uses(used, kind, name))
			rc = json_array_append_new(out, json_pack("{s:s, s:s}", "kind", kind,
								  "name", name));
	}
	json_decref(possible);
	json_decref(used);
	if (rc != 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}
