/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Answers as text. Every field may be missing or of the wrong type (the answer comes from a
 * server, perhaps an older one): a missing value prints as <none>, never as a crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "cli/cli_internal.h"
#include "util/buf.h"

#define GPU "nvidia.com/gpu"
#define MAX_TEXT ((size_t)1 << 20) /* one cell built from many values */

/* Checks the answer's kind; on a mismatch says so on err. 0 or -EPROTO. */
static int expect_kind(FILE *err, json_t *v, const char *kind)
{
	const char *got = json_string_value(json_object_get(v, "kind"));
	if (json_is_object(v) && got && !strcmp(got, kind))
		return 0;
	fprintf(err, "error: unexpected answer: kind %s, expected %s\n", got ? got : "<none>",
		kind);
	return -EPROTO;
}

/* A number or a quantity as text: strings as they are, numbers in decimal; NULL when v is
 * neither (the table prints <none>). */
static const char *scalar_text(json_t *v, char *buf, size_t size)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, size, "%g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, size, "%s", json_is_true(v) ? "true" : "false");
	else
		return NULL;
	return buf;
}

/* An integer count that defaults to 0 (a status counter Kubernetes omits when zero). */
static const char *count_text(json_t *v, char *buf, size_t size)
{
	const char *text = scalar_text(v, buf, size);
	return text ? text : "0";
}

/* An RFC 3339 time at whole seconds ("2026-11-27T08:01:02Z"), or the text as given. */
static const char *time_text(const char *s, char *buf, size_t size)
{
	int64_t ms;
	if (!s || time_parse_rfc3339(s, &ms) != 0)
		return s;
	time_format_rfc3339(ms, buf, size);
	return buf;
}

/* "namespace/name" of a reference object, or what of it there is. */
static const char *workload_text(json_t *ref, char *buf, size_t size)
{
	const char *ns = json_string_value(json_object_get(ref, "namespace"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	if (!name)
		return NULL;
	if (!ns)
		return name;
	snprintf(buf, size, "%s/%s", ns, name);
	return buf;
}

/* Appends "key=value" pairs of a {resource: quantity} map, comma-separated. */
static int append_resources(struct buf *b, json_t *map)
{
	const char *key;
	json_t *v;
	char num[64];
	int rc = 0;
	json_object_foreach(map, key, v)
	{
		const char *text = scalar_text(v, num, sizeof(num));
		if (b->len)
			rc = rc ? rc : buf_append_str(b, ",");
		rc = rc ? rc : buf_append_str(b, key);
		rc = rc ? rc : buf_append_str(b, "=");
		rc = rc ? rc : buf_append_str(b, text ? text : "?");
	}
	return rc;
}

static int print_table(FILE *out, struct cli_table *t, const char *indent)
{
	int rc = cli_table_print(t, out, indent);
	cli_table_release(t);
	return rc;
}

/* How a column's cell comes from an item of an answer's list. */
enum cell {
	CELL_TEXT, /* the string at the column's path */
	CELL_SCALAR, /* a string, number or boolean at the path */
	CELL_COUNT, /* a number at the path, 0 when absent */
	CELL_WORKLOAD, /* the item's namespace/name */
	CELL_TIME, /* an RFC 3339 time at the path, to whole seconds */
	CELL_AGE, /* the age of the time at the path */
	CELL_HOURS, /* the number under key (a resource name) at the path, as 0.00 */
};

struct column {
	const char *header;
	const char *path; /* dotted, as obj_path walks it */
	enum cell cell;
	const char *key; /* CELL_HOURS: the key below path (names have dots of their own) */
};

#define MAX_COLUMNS 10
#define COLUMNS(cols) cols, sizeof(cols) / sizeof(cols[0])

/* A table of items, a row each, after indent. 0 or -ENOMEM. */
static int print_items(FILE *out, const char *indent, json_t *items, const struct column *cols,
		       size_t ncols, int64_t now_ms)
{
	struct cli_table t;
	const char *cells[MAX_COLUMNS];
	char text[MAX_COLUMNS][2 * CLI_MAX_NAME + 2];
	json_t *item;
	size_t i;
	cli_table_init(&t, ncols);
	for (size_t c = 0; c < ncols; c++)
		cells[c] = cols[c].header;
	cli_table_row(&t, cells);
	json_array_foreach(items, i, item)
	{
		for (size_t c = 0; c < ncols; c++) {
			json_t *v = obj_path(item, cols[c].path);
			switch (cols[c].cell) {
			case CELL_TEXT:
				cells[c] = json_string_value(v);
				break;
			case CELL_SCALAR:
				cells[c] = scalar_text(v, text[c], sizeof(text[c]));
				break;
			case CELL_COUNT:
				cells[c] = count_text(v, text[c], sizeof(text[c]));
				break;
			case CELL_WORKLOAD:
				cells[c] = workload_text(item, text[c], sizeof(text[c]));
				break;
			case CELL_TIME:
				cells[c] =
					time_text(json_string_value(v), text[c], sizeof(text[c]));
				break;
			case CELL_AGE:
				cli_age(json_string_value(v), now_ms, text[c], sizeof(text[c]));
				cells[c] = text[c];
				break;
			case CELL_HOURS:
				v = json_object_get(v, cols[c].key);
				snprintf(text[c], sizeof(text[c]), "%.2f",
					 json_is_number(v) ? json_number_value(v) : 0.0);
				cells[c] = text[c];
				break;
			}
		}
		cli_table_row(&t, cells);
	}
	return print_table(out, &t, indent);
}

/* An answer of kind as a table of its items; an empty list gets empty_note on err instead. */
static int print_answer(FILE *out, FILE *err, json_t *answer, const char *kind,
			const struct column *cols, size_t ncols, int64_t now_ms,
			const char *empty_note)
{
	int rc = expect_kind(err, answer, kind);
	json_t *items = json_object_get(answer, "items");
	if (rc != 0)
		return rc;
	if (!json_array_size(items)) {
		fprintf(err, "%s\n", empty_note);
		return 0;
	}
	return print_items(out, "", items, cols, ncols, now_ms);
}

/* --- list ------------------------------------------------------------------------------------ */

/* The entry {name, total, borrowed} for flavor and resource in a flavorsReservation list. */
static json_t *flavor_resource(json_t *flavors, const char *flavor, const char *resource)
{
	size_t i, j;
	json_t *f, *r;
	json_array_foreach(flavors, i, f)
	{
		const char *fname = json_string_value(json_object_get(f, "name"));
		if (!fname || strcmp(fname, flavor))
			continue;
		json_array_foreach(json_object_get(f, "resources"), j, r)
		{
			const char *rname = json_string_value(json_object_get(r, "name"));
			if (rname && !strcmp(rname, resource))
				return r;
		}
	}
	return NULL;
}

/* Appends "resource=value" to a cell of flavors, "flavor:" before a flavor's first entry (after
 * ";" when another flavor came before), "," before its others. */
static int append_flavor_entry(struct buf *b, int first_of_flavor, const char *flavor,
			       const char *resource, const char *value)
{
	int rc = 0;
	if (first_of_flavor && b->len)
		rc = buf_append_str(b, ";");
	if (rc == 0 && first_of_flavor && (rc = buf_append_str(b, flavor)) == 0)
		rc = buf_append_str(b, ":");
	if (rc == 0 && !first_of_flavor)
		rc = buf_append_str(b, ",");
	if (rc == 0 && (rc = buf_append_str(b, resource)) == 0 &&
	    (rc = buf_append_str(b, "=")) == 0)
		rc = buf_append_str(b, value);
	return rc;
}

/*
 * A ClusterQueue's USAGE cell, "flavor:resource=used/nominal,...;flavor:..." in the order of
 * its spec, and its BORROWED cell, "flavor:resource=amount" for what is borrowed. Used is the
 * quota reserved (flavorsReservation; flavorsUsage when a server writes only that).
 */
static int usage_cells(json_t *cq, struct buf *usage, struct buf *borrowed)
{
	json_t *status_list = obj_path(cq, "status.flavorsReservation");
	json_t *rg, *f, *r;
	size_t i, j, k;
	char num[2][64], pair[160];
	int rc = 0;
	if (!json_is_array(status_list))
		status_list = obj_path(cq, "status.flavorsUsage");
	json_array_foreach(obj_path(cq, "spec.resourceGroups"), i, rg)
	{
		json_array_foreach(json_object_get(rg, "flavors"), j, f)
		{
			const char *flavor = json_string_value(json_object_get(f, "name"));
			int first = 1;
			json_array_foreach(json_object_get(f, "resources"), k, r)
			{
				const char *res = json_string_value(json_object_get(r, "name"));
				if (!flavor || !res || rc != 0)
					continue;
				json_t *used =
					json_object_get(flavor_resource(status_list, flavor, res),
							"total");
				const char *u = scalar_text(used, num[0], sizeof(num[0]));
				const char *n = scalar_text(json_object_get(r, "nominalQuota"),
							    num[1], sizeof(num[1]));
				snprintf(pair, sizeof(pair), "%s/%s", u ? u : "0", n ? n : "0");
				rc = append_flavor_entry(usage, first, flavor, res, pair);
				first = 0;
			}
		}
	}
	json_array_foreach(status_list, i, f)
	{
		const char *flavor = json_string_value(json_object_get(f, "name"));
		int first = 1;
		json_array_foreach(json_object_get(f, "resources"), k, r)
		{
			const char *res = json_string_value(json_object_get(r, "name"));
			json_t *v = json_object_get(r, "borrowed");
			const char *b = scalar_text(v, num[0], sizeof(num[0]));
			int64_t milli;
			if (!flavor || !res || !b || rc != 0 ||
			    (quantity_from_json(v, &milli) == 0 && milli == 0))
				continue;
			rc = append_flavor_entry(borrowed, first, flavor, res, b);
			first = 0;
		}
	}
	return rc;
}

int cli_render_list(FILE *out, FILE *err, json_t *clusterqueues, json_t *localqueues,
		    const char *ns)
{
	json_t *cqs = json_object_get(clusterqueues, "items");
	json_t *lqs = json_object_get(localqueues, "items");
	struct cli_table t;
	struct buf usage, borrowed;
	json_t *item;
	size_t i;
	char num[2][32];
	int rc = 0;

	if (!json_is_array(cqs) || !json_is_array(lqs)) {
		fprintf(err, "error: unexpected answer: a list without items\n");
		return -EPROTO;
	}
	if (json_array_size(cqs)) {
		cli_table_init(&t, 6);
		cli_table_row(&t, (const char *[]){ "CLUSTERQUEUE", "COHORT", "PENDING", "ADMITTED",
						    "USAGE", "BORROWED" });
		buf_init(&usage, MAX_TEXT);
		buf_init(&borrowed, MAX_TEXT);
		json_array_foreach(cqs, i, item)
		{
			usage.len = borrowed.len = 0;
			if ((rc = usage_cells(item, &usage, &borrowed)) != 0)
				break;
			cli_table_row(&t,
				      (const char *[]){
					      obj_name(item),
					      obj_str(item, "spec.cohortName"),
					      count_text(obj_path(item, "status.pendingWorkloads"),
							 num[0], sizeof(num[0])),
					      count_text(obj_path(item, "status.admittedWorkloads"),
							 num[1], sizeof(num[1])),
					      usage.len ? usage.data : NULL,
					      borrowed.len ? borrowed.data : "0",
				      });
		}
		buf_release(&usage);
		buf_release(&borrowed);
		if (rc != 0) {
			cli_table_release(&t);
			return rc;
		}
		if ((rc = print_table(out, &t, "")) != 0)
			return rc;
	} else {
		fprintf(err, "No ClusterQueues found.\n");
	}
	if (!json_array_size(lqs)) {
		if (ns)
			fprintf(err, "No LocalQueues found in %s namespace.\n", ns);
		else
			fprintf(err, "No LocalQueues found.\n");
		return 0;
	}
	if (json_array_size(cqs))
		fprintf(out, "\n");
	cli_table_init(&t, 5);
	cli_table_row(&t, (const char *[]){ "NAMESPACE", "LOCALQUEUE", "CLUSTERQUEUE", "PENDING",
					    "ADMITTED" });
	json_array_foreach(lqs, i, item)
	{
		cli_table_row(&t, (const char *[]){
					  obj_namespace(item),
					  obj_name(item),
					  obj_str(item, "spec.clusterQueue"),
					  count_text(obj_path(item, "status.pendingWorkloads"),
						     num[0], sizeof(num[0])),
					  count_text(obj_path(item, "status.admittedWorkloads"),
						     num[1], sizeof(num[1])),
				  });
	}
	return print_table(out, &t, "");
}

/* --- pending --------------------------------------------------------------------------------- */

int cli_render_pending(FILE *out, FILE *err, json_t *summary, const char *what, int64_t now_ms)
{
	static const struct column cols[] = {
		{ "POSITION(CQ)", "positionInClusterQueue", CELL_SCALAR, NULL },
		{ "POSITION(LQ)", "positionInLocalQueue", CELL_SCALAR, NULL },
		{ "NAMESPACE", "metadata.namespace", CELL_TEXT, NULL },
		{ "NAME", "metadata.name", CELL_TEXT, NULL },
		{ "LOCALQUEUE", "localQueueName", CELL_TEXT, NULL },
		{ "PRIORITY", "priority", CELL_COUNT, NULL },
		{ "AGE", "metadata.creationTimestamp", CELL_AGE, NULL },
	};
	char note[512];
	snprintf(note, sizeof(note), "No pending workloads in %s.", what);
	return print_answer(out, err, summary, "PendingWorkloadsSummary", COLUMNS(cols), now_ms,
			    note);
}

/* --- why ------------------------------------------------------------------------------------- */

static int why_fields(FILE *out, json_t *e)
{
	json_t *wl = json_object_get(e, "workload");
	struct cli_table t;
	char num[3][32], position[1024];
	const char *lq = json_string_value(json_object_get(wl, "localQueue"));
	const char *cq = json_string_value(json_object_get(wl, "clusterQueue"));
	const char *pcq =
		scalar_text(json_object_get(e, "positionInClusterQueue"), num[0], sizeof(num[0]));
	const char *plq =
		scalar_text(json_object_get(e, "positionInLocalQueue"), num[1], sizeof(num[1]));
	/* 0-based, as the API counts: "0 in ClusterQueue cq-a" is the next one tried. */
	position[0] = '\0';
	if (pcq && plq)
		snprintf(position, sizeof(position),
			 "%s in ClusterQueue %s, %s in LocalQueue %s (0 is next)", pcq,
			 cq ? cq : "<none>", plq, lq ? lq : "<none>");
	else if (pcq)
		snprintf(position, sizeof(position), "%s in ClusterQueue %s (0 is next)", pcq,
			 cq ? cq : "<none>");
	const struct {
		const char *label, *value;
	} fields[] = {
		{ "Name:", json_string_value(json_object_get(wl, "name")) },
		{ "Namespace:", json_string_value(json_object_get(wl, "namespace")) },
		{ "LocalQueue:", lq },
		{ "ClusterQueue:", cq },
		{ "Priority:",
		  scalar_text(json_object_get(wl, "priority"), num[2], sizeof(num[2])) },
		{ "State:", json_string_value(json_object_get(e, "state")) },
		{ "Reason:", json_string_value(json_object_get(e, "reason")) },
		{ "Message:", json_string_value(json_object_get(e, "message")) },
		{ "Position:", position },
	};
	cli_table_init(&t, 2);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].value && fields[i].value[0])
			cli_table_row(&t, (const char *[]){ fields[i].label, fields[i].value });
	return print_table(out, &t, "");
}

/* A section: a title line, then the items' table indented by two spaces. */
static int print_section(FILE *out, const char *title, json_t *items, const struct column *cols,
			 size_t ncols)
{
	fprintf(out, "\n%s\n", title);
	return print_items(out, "  ", items, cols, ncols, 0);
}

static const struct column lacking_cols[] = {
	{ "PODSET", "podSet", CELL_TEXT, NULL },
	{ "FLAVOR", "flavor", CELL_TEXT, NULL },
	{ "RESOURCE", "resource", CELL_TEXT, NULL },
	{ "REQUESTED", "requested", CELL_SCALAR, NULL },
	{ "AVAILABLE", "available", CELL_SCALAR, NULL },
	{ "MISSING", "missing", CELL_SCALAR, NULL },
};

static const struct column holder_cols[] = {
	{ "WORKLOAD", "", CELL_WORKLOAD, NULL },
	{ "CLUSTERQUEUE", "clusterQueue", CELL_TEXT, NULL },
	{ "VIA", "via", CELL_TEXT, NULL },
	{ "PRIORITY", "priority", CELL_SCALAR, NULL },
	{ "FLAVOR", "flavor", CELL_TEXT, NULL },
	{ "RESOURCE", "resource", CELL_TEXT, NULL },
	{ "AMOUNT", "amount", CELL_SCALAR, NULL },
	{ "BORROWING", "borrowing", CELL_SCALAR, NULL },
	{ "PREEMPTIBLE", "preemptible", CELL_SCALAR, NULL },
};

static const struct column to_fit_cols[] = {
	{ "ACTION", "action", CELL_TEXT, NULL },
	{ "WORKLOAD", "", CELL_WORKLOAD, NULL },
	{ "FREES", "frees", CELL_SCALAR, NULL },
};

static int why_nodes(FILE *out, json_t *nodes)
{
	struct cli_table t;
	struct buf free_text, short_text;
	json_t *n;
	size_t i;
	int rc = 0;
	cli_table_init(&t, 3);
	cli_table_row(&t, (const char *[]){ "NODE", "FREE", "SHORT" });
	buf_init(&free_text, MAX_TEXT);
	buf_init(&short_text, MAX_TEXT);
	json_array_foreach(nodes, i, n)
	{
		free_text.len = short_text.len = 0;
		if ((rc = append_resources(&free_text, json_object_get(n, "free"))) != 0 ||
		    (rc = append_resources(&short_text, json_object_get(n, "short"))) != 0)
			break;
		cli_table_row(&t, (const char *[]){
					  json_string_value(json_object_get(n, "name")),
					  free_text.len ? free_text.data : NULL,
					  short_text.len ? short_text.data : NULL,
				  });
	}
	buf_release(&free_text);
	buf_release(&short_text);
	if (rc != 0) {
		cli_table_release(&t);
		return rc;
	}
	fprintf(out, "\nClosest nodes:\n");
	return print_table(out, &t, "  ");
}

int cli_render_why(FILE *out, FILE *err, json_t *explanation)
{
	int rc = expect_kind(err, explanation, "WorkloadExplanation");
	json_t *lacking = json_object_get(explanation, "lacking");
	json_t *holders = json_object_get(explanation, "holders");
	json_t *to_fit = json_object_get(explanation, "toFit");
	json_t *nodes = json_object_get(explanation, "nodes");
	/* A section shows only when there is something in it. */
	if (rc == 0)
		rc = why_fields(out, explanation);
	if (rc == 0 && json_array_size(lacking))
		rc = print_section(out, "Lacking:", lacking, COLUMNS(lacking_cols));
	if (rc == 0 && json_array_size(holders))
		rc = print_section(out, "Held by:", holders, COLUMNS(holder_cols));
	if (rc == 0 && json_array_size(to_fit))
		rc = print_section(out, "To make room (preempt, or wait for the end of):", to_fit,
				   COLUMNS(to_fit_cols));
	if (rc == 0 && json_array_size(nodes))
		rc = why_nodes(out, nodes);
	return rc;
}

/* --- eta ------------------------------------------------------------------------------------- */

int cli_render_eta(FILE *out, FILE *err, json_t *estimate, int64_t now_ms)
{
	char name[2 * CLI_MAX_NAME + 2], when[256], dur[32];
	int rc = expect_kind(err, estimate, "WorkloadEstimate");
	if (rc != 0)
		return rc;
	const char *wl = workload_text(json_object_get(estimate, "workload"), name, sizeof(name));
	const char *state = json_string_value(json_object_get(estimate, "state"));
	const char *at = json_string_value(json_object_get(estimate, "estimatedAdmission"));
	const char *basis = json_string_value(json_object_get(estimate, "basis"));
	int64_t at_ms;
	if (at && time_parse_rfc3339(at, &at_ms) == 0) {
		if (at_ms >= now_ms) {
			cli_human_duration(at_ms - now_ms, dur, sizeof(dur));
			snprintf(when, sizeof(when), "estimated admission %s (in %s)", at, dur);
		} else {
			cli_human_duration(now_ms - at_ms, dur, sizeof(dur));
			snprintf(when, sizeof(when), "estimated admission %s (%s ago)", at, dur);
		}
	} else {
		snprintf(when, sizeof(when), "no estimate");
	}
	char *line = NULL;
	size_t len = 0;
	FILE *text = open_memstream(&line, &len);
	if (!text)
		return -ENOMEM;
	fprintf(text, "%s: %s, %s", wl ? wl : "<none>", state ? state : "<none>", when);
	if (basis && *basis)
		fprintf(text, "; basis: %s", basis);
	if (fclose(text) != 0) {
		free(line);
		return -ENOMEM;
	}
	char *clean = cli_sanitize(line);
	free(line);
	if (!clean)
		return -ENOMEM;
	fprintf(out, "%s\n", clean);
	free(clean);
	return 0;
}

/* --- history --------------------------------------------------------------------------------- */

int cli_render_history(FILE *out, FILE *err, json_t *decisions, const char *what, int by_queue)
{
	const struct column cols[] = {
		{ "TIME", "time", CELL_TIME, NULL },
		{ "EVENT", "event", CELL_TEXT, NULL },
		by_queue ? (struct column){ "WORKLOAD", "", CELL_WORKLOAD, NULL } :
			   (struct column){ "CLUSTERQUEUE", "clusterQueue", CELL_TEXT, NULL },
		{ "REASON", "reason", CELL_TEXT, NULL },
		{ "MESSAGE", "message", CELL_TEXT, NULL },
	};
	char note[512];
	snprintf(note, sizeof(note), "No decisions recorded for %s.", what);
	return print_answer(out, err, decisions, "DecisionList", COLUMNS(cols), 0, note);
}

/* --- usage ----------------------------------------------------------------------------------- */

int cli_render_usage(FILE *out, FILE *err, json_t *report)
{
	static const struct column cols[] = {
		{ "KEY", "key", CELL_TEXT, NULL },
		{ "GPU-HOURS", "resourceHours", CELL_HOURS, GPU },
		{ "CPU-HOURS", "resourceHours", CELL_HOURS, "cpu" },
		{ "WORKLOADS", "workloads", CELL_COUNT, NULL },
	};
	const char *since = json_string_value(json_object_get(report, "since"));
	const char *until = json_string_value(json_object_get(report, "until"));
	char note[512];
	snprintf(note, sizeof(note), "No usage between %s and %s.", since ? since : "<none>",
		 until ? until : "<none>");
	return print_answer(out, err, report, "UsageReport", COLUMNS(cols), 0, note);
}

int cli_render_json(FILE *out, json_t *value)
{
	char *text = json_dumps(value, JSON_INDENT(4) | JSON_PRESERVE_ORDER);
	if (!text)
		return -ENOMEM;
	fprintf(out, "%s\n", text);
	free(text);
	return 0;
}
