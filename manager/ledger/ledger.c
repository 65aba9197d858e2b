/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decision ledger (ledger.h): an in-memory queue filled by ledger_append, a writer thread
 * that commits it to SQLite in batches and applies retention, and a read connection for the
 * queries. The schema and the guarantees are documented in ledger.h, in one place.
 */
#include "ledger/ledger.h"

#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "core/quantity.h"
#include "util/log.h"

/* The text fields of a record, in the order of ledger_record and of the insert's parameters. */
enum text_field {
	TEXT_NS,
	TEXT_NAME,
	TEXT_UID,
	TEXT_CLUSTER_QUEUE,
	TEXT_LOCAL_QUEUE,
	TEXT_FLAVORS,
	TEXT_RESOURCES,
	TEXT_REASON,
	TEXT_MESSAGE,
	TEXT_PREEMPTOR,
	TEXT_CLUSTER_QUEUE_USAGE,
	TEXT_COUNT
};

/* A record copied by ledger_append: one allocation, the strings right after the struct. */
struct queued {
	struct queued *next;
	size_t bytes; /* the allocation's size, counted against queue_max_bytes */
	int64_t time_ms;
	enum ledger_event event;
	const char *text[TEXT_COUNT]; /* into the same allocation, or NULL */
};

struct ledger {
	char *path;
	struct ledger_options opts; /* defaults applied; opts.path points at path */
	size_t wake_records, wake_bytes; /* a queue this large is committed without waiting */

	/* The queue and the counters, guarded by lock. The writer waits on wake; ledger_flush on
	 * settled. */
	uv_mutex_t lock;
	uv_cond_t wake, settled_cond;
	struct queued *head, *tail;
	size_t count, bytes;
	uint64_t first_ns; /* monotonic time the oldest queued record arrived */
	bool closing, flush_wanted;
	uint64_t settled; /* records written or failed, retention after them applied */
	struct ledger_stats stats;

	/* The writer thread's own: the write connection and its statements. */
	uv_thread_t thread;
	sqlite3 *wdb;
	sqlite3_stmt *begin, *commit, *rollback, *find_open, *close_admission, *insert, *any_aged,
		*delete_aged, *delete_oldest, *id_range, *page_count, *freelist_count;
	int64_t page_size;
	uint64_t last_error_log_ns, errors_unlogged;

	/* The read connection and its statements, guarded by read_lock. */
	uv_mutex_t read_lock;
	sqlite3 *rdb;
	sqlite3_stmt *workload_history, *cluster_queue_history, *usage_by_queue,
		*usage_by_namespace, *runtimes, *open_admissions;
};

static const char *const event_names[] = {
	[LEDGER_ADMIT] = "admit",   [LEDGER_PREEMPT] = "preempt",
	[LEDGER_EVICT] = "evict",   [LEDGER_REQUEUE] = "requeue",
	[LEDGER_FINISH] = "finish", [LEDGER_DEACTIVATE] = "deactivate",
};

const char *ledger_event_name(enum ledger_event event)
{
	if ((unsigned)event >= sizeof(event_names) / sizeof(event_names[0]))
		return NULL;
	return event_names[event];
}

/* ------------------------------------------------------------------------------------------ */
/* SQLite plumbing */

/* SQLite's result code as a negative errno (see the list in ledger.h). */
static int sqlite_errno(sqlite3 *db, int rc)
{
	int sys = db ? sqlite3_system_errno(db) : 0;
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return sys > 0 ? -sys : -ENOENT;
	case SQLITE_IOERR:
		return sys > 0 ? -sys : -EIO;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EBADMSG;
	case SQLITE_TOOBIG:
		return -E2BIG;
	default:
		return -EIO;
	}
}

/* Runs sql (no results wanted). 0 or a negative errno; the failure is logged. */
static int exec_sql(sqlite3 *db, const char *path, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		return 0;
	log_error("ledger statement failed", LF_STR("path", path), LF_STR("sql", sql),
		  LF_STR("error", msg ? msg : sqlite3_errstr(rc)), LF_END);
	sqlite3_free(msg);
	return sqlite_errno(db, rc);
}

/* Prepares a statement kept for the connection's lifetime. */
static int prepare(sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **out)
{
	int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
	if (rc == SQLITE_OK)
		return 0;
	log_error("ledger cannot prepare a statement", LF_STR("path", path), LF_STR("sql", sql),
		  LF_STR("error", sqlite3_errmsg(db)), LF_END);
	return sqlite_errno(db, rc);
}

/* The single integer a statement such as a PRAGMA answers, into *out. */
static int step_int64(sqlite3 *db, sqlite3_stmt *st, int64_t *out)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	int err = rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -EPROTO : sqlite_errno(db, rc);
	sqlite3_reset(st);
	return err;
}

static int query_int64(sqlite3 *db, const char *path, const char *sql, int64_t *out)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		log_error("ledger statement failed", LF_STR("path", path), LF_STR("sql", sql),
			  LF_STR("error", sqlite3_errmsg(db)), LF_END);
		return sqlite_errno(db, rc);
	}
	rc = step_int64(db, st, out);
	sqlite3_finalize(st);
	return rc;
}

static int open_connection(const char *path, int flags, unsigned busy_timeout_ms, sqlite3 **out)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		int err = sqlite_errno(db, rc);
		log_error("ledger cannot open its file", LF_STR("path", path),
			  LF_STR("error", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)),
			  LF_STR("cause", strerror(-err)), LF_END);
		sqlite3_close(db);
		return err;
	}
	sqlite3_busy_timeout(db, (int)(busy_timeout_ms > INT_MAX ? INT_MAX : busy_timeout_ms));
	*out = db;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Schema */

/* The time a row's age counts from: an admission's end (NULL, never aged, while it lasts), any
 * other row's own time. Written once: the index and the queries must use the same expression. */
#define ROW_AGE "(CASE WHEN event = 'admit' THEN ended_ms ELSE time_ms END)"

static const char schema_v1[] =
	"CREATE TABLE decisions ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" time_ms INTEGER NOT NULL,"
	" event TEXT NOT NULL CHECK (event IN"
	"  ('admit','preempt','evict','requeue','finish','deactivate')),"
	" namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,"
	" cluster_queue TEXT, local_queue TEXT, flavors TEXT, resources TEXT,"
	" reason TEXT, message TEXT, preemptor TEXT, cluster_queue_usage TEXT,"
	" ended_ms INTEGER, end_event TEXT);"
	"CREATE INDEX decisions_by_workload ON decisions(namespace, name, time_ms);"
	"CREATE INDEX decisions_by_cluster_queue ON decisions(cluster_queue, time_ms);"
	"CREATE INDEX decisions_by_age ON decisions(" ROW_AGE ");"
	"CREATE INDEX admissions_open ON decisions(uid) WHERE event = 'admit' AND ended_ms IS NULL;"
	"CREATE INDEX admissions_by_end ON decisions(ended_ms) WHERE event = 'admit';"
	"CREATE INDEX admissions_finished ON decisions(cluster_queue, ended_ms)"
	" WHERE event = 'admit' AND end_event = 'finish';"
	"PRAGMA user_version = 1;";

/*
 * Brings the file to LEDGER_SCHEMA_VERSION inside one write transaction, so two processes
 * opening a new file at once cannot both create it. A newer file is refused: this build would
 * not know what its columns mean.
 */
static int ensure_schema(sqlite3 *db, const char *path)
{
	int64_t version = 0, tables = 0;
	int rc = exec_sql(db, path, "BEGIN IMMEDIATE");
	if (rc < 0)
		return rc;
	rc = query_int64(db, path, "PRAGMA user_version", &version);
	if (rc == 0)
		rc = query_int64(db, path, "SELECT count(*) FROM sqlite_master", &tables);
	if (rc < 0)
		goto out;
	if (version > LEDGER_SCHEMA_VERSION) {
		log_error("ledger file has a newer schema than this muster understands",
			  LF_STR("path", path), LF_INT("fileVersion", version),
			  LF_INT("supportedVersion", LEDGER_SCHEMA_VERSION), LF_END);
		rc = -EPROTO;
		goto out;
	}
	if (version == 0 && tables > 0) {
		log_error("ledger file holds tables but is not a ledger", LF_STR("path", path),
			  LF_END);
		rc = -EPROTO;
		goto out;
	}
	/* Each version's step, in order; version 1 is the first. */
	if (version < 1)
		rc = exec_sql(db, path, schema_v1);
out:
	if (rc == 0)
		rc = exec_sql(db, path, "COMMIT");
	if (rc < 0)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* auto_vacuum only takes effect before the first table exists, so it comes first; WAL is
 * refused by some file systems (no shared memory), which is an error: the design needs it. */
static int configure_writer(sqlite3 *db, const char *path)
{
	int rc = exec_sql(db, path, "PRAGMA auto_vacuum = INCREMENTAL");
	if (rc < 0)
		return rc;
	sqlite3_stmt *st;
	if ((rc = prepare(db, path, "PRAGMA journal_mode = WAL", &st)) < 0)
		return rc;
	int step = sqlite3_step(st);
	const char *mode = step == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
	bool wal = mode && !strcmp(mode, "wal");
	rc = step == SQLITE_ROW ? 0 : sqlite_errno(db, step);
	sqlite3_finalize(st);
	if (rc == 0 && !wal) {
		log_error("ledger file cannot use write-ahead logging", LF_STR("path", path),
			  LF_END);
		rc = -ENOTSUP;
	}
	/* The CHECK on event is the schema's, for other writers; this one writes only
	 * event_names[], and the CHECK's IN list would build a temporary table for every row. */
	if (rc == 0)
		rc = exec_sql(db, path,
			      "PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = 16777216;"
			      "PRAGMA ignore_check_constraints = 1");
	return rc;
}

#define DECISION_COLUMNS                                                                  \
	"id, time_ms, event, namespace, name, uid, cluster_queue, local_queue, flavors, " \
	"resources, reason, message, preemptor, cluster_queue_usage"

/* One query per usage grouping: the admissions that overlap [?1 since, ?2 until], each with
 * its group key, uid, resources and the overlap in ms. Two branches so that each uses its
 * partial index: admissions still open, and admissions that ended after since. */
#define USAGE_SQL(key)                                                                         \
	"SELECT grp, uid, resources, min(coalesce(ended_ms, ?2), ?2) - max(time_ms, ?1) AS ms" \
	" FROM (SELECT coalesce(" key ", '') AS grp, uid, resources, time_ms, ended_ms"        \
	"  FROM decisions WHERE event = 'admit' AND ended_ms IS NULL AND time_ms < ?2"         \
	"  UNION ALL"                                                                          \
	"  SELECT coalesce(" key ", '') AS grp, uid, resources, time_ms, ended_ms"             \
	"  FROM decisions WHERE event = 'admit' AND ended_ms > ?1 AND time_ms < ?2)"           \
	" WHERE ms > 0 ORDER BY grp, uid"

static int prepare_writer(struct ledger *l)
{
	sqlite3 *db = l->wdb;
	int rc = prepare(db, l->path, "BEGIN IMMEDIATE", &l->begin);
	if (rc == 0)
		rc = prepare(db, l->path, "COMMIT", &l->commit);
	if (rc == 0)
		rc = prepare(db, l->path, "ROLLBACK", &l->rollback);
	/* An open admission is found first, then closed by id: an UPDATE that looked for the row
	 * itself would change the index it searches (admissions_open), which SQLite does through
	 * a temporary table, built and dropped for every record. */
	if (rc == 0)
		rc = prepare(db, l->path,
			     "SELECT id FROM decisions"
			     " WHERE uid = ?1 AND event = 'admit' AND ended_ms IS NULL LIMIT 1",
			     &l->find_open);
	if (rc == 0)
		rc = prepare(db, l->path,
			     "UPDATE decisions SET ended_ms = ?1, end_event = ?2 WHERE id = ?3",
			     &l->close_admission);
	if (rc == 0)
		rc = prepare(db, l->path,
			     "INSERT INTO decisions (time_ms, event, namespace, name, uid,"
			     " cluster_queue, local_queue, flavors, resources, reason, message,"
			     " preemptor, cluster_queue_usage)"
			     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
			     &l->insert);
	if (rc == 0)
		rc = prepare(db, l->path,
			     "SELECT EXISTS (SELECT 1 FROM decisions WHERE " ROW_AGE " < ?1)",
			     &l->any_aged);
	if (rc == 0)
		rc = prepare(db, l->path,
			     "DELETE FROM decisions WHERE id IN (SELECT id FROM decisions"
			     " WHERE " ROW_AGE " < ?1 ORDER BY " ROW_AGE " LIMIT ?2)",
			     &l->delete_aged);
	if (rc == 0)
		rc = prepare(db, l->path,
			     "DELETE FROM decisions WHERE id IN (SELECT id FROM decisions"
			     " WHERE NOT (event = 'admit' AND ended_ms IS NULL) ORDER BY id LIMIT "
			     "?1)",
			     &l->delete_oldest);
	if (rc == 0)
		rc = prepare(db, l->path,
			     "SELECT coalesce(max(id) - min(id) + 1, 0) FROM decisions",
			     &l->id_range);
	if (rc == 0)
		rc = prepare(db, l->path, "PRAGMA page_count", &l->page_count);
	if (rc == 0)
		rc = prepare(db, l->path, "PRAGMA freelist_count", &l->freelist_count);
	if (rc == 0)
		rc = query_int64(db, l->path, "PRAGMA page_size", &l->page_size);
	return rc;
}

static int prepare_reader(struct ledger *l)
{
	sqlite3 *db = l->rdb;
	int rc = prepare(db, l->path,
			 "SELECT " DECISION_COLUMNS " FROM decisions WHERE namespace = ?1 AND"
			 " name = ?2 ORDER BY time_ms DESC, id DESC LIMIT ?3",
			 &l->workload_history);
	if (rc == 0)
		rc = prepare(db, l->path,
			     "SELECT " DECISION_COLUMNS " FROM decisions WHERE cluster_queue = ?1"
			     " AND time_ms >= ?2 ORDER BY time_ms DESC, id DESC LIMIT ?3",
			     &l->cluster_queue_history);
	if (rc == 0)
		rc = prepare(db, l->path, USAGE_SQL("cluster_queue"), &l->usage_by_queue);
	if (rc == 0)
		rc = prepare(db, l->path, USAGE_SQL("namespace"), &l->usage_by_namespace);
	if (rc == 0)
		rc = prepare(db, l->path,
			     "SELECT ended_ms, ended_ms - time_ms FROM decisions"
			     " WHERE event = 'admit' AND end_event = 'finish' AND cluster_queue = "
			     "?1"
			     " ORDER BY ended_ms DESC LIMIT ?2",
			     &l->runtimes);
	if (rc == 0)
		rc = prepare(db, l->path,
			     "SELECT uid, namespace, name, cluster_queue, time_ms FROM decisions"
			     " WHERE event = 'admit' AND ended_ms IS NULL ORDER BY id",
			     &l->open_admissions);
	return rc;
}

static void finalize_all(sqlite3_stmt **stmts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sqlite3_finalize(stmts[i]);
		stmts[i] = NULL;
	}
}

static void close_writer_db(struct ledger *l)
{
	sqlite3_stmt *stmts[] = {
		l->begin,           l->commit,   l->rollback,   l->find_open,
		l->close_admission, l->insert,   l->any_aged,   l->delete_aged,
		l->delete_oldest,   l->id_range, l->page_count, l->freelist_count
	};
	finalize_all(stmts, sizeof(stmts) / sizeof(stmts[0]));
	if (l->wdb)
		sqlite3_exec(l->wdb, "PRAGMA optimize", NULL, NULL, NULL);
	sqlite3_close(l->wdb);
	l->wdb = NULL;
}

static void close_reader_db(struct ledger *l)
{
	sqlite3_stmt *stmts[] = { l->workload_history, l->cluster_queue_history,
				  l->usage_by_queue,   l->usage_by_namespace,
				  l->runtimes,         l->open_admissions };
	finalize_all(stmts, sizeof(stmts) / sizeof(stmts[0]));
	sqlite3_close(l->rdb);
	l->rdb = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* The writer thread */

static int64_t realtime_ms(void *arg)
{
	struct timespec ts;
	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Logs a disk error at most once a minute, with how many went unlogged, so a full disk does not
 * flood the log five times a second. Writer thread only. */
static void log_disk_error(struct ledger *l, const char *what, int err, uint64_t records)
{
	uint64_t now = uv_hrtime();
	if (l->last_error_log_ns && now - l->last_error_log_ns < 60ull * 1000000000ull) {
		l->errors_unlogged++;
		return;
	}
	log_error(what, LF_STR("path", l->path), LF_STR("error", sqlite3_errmsg(l->wdb)),
		  LF_STR("cause", strerror(-err)), LF_INT("records", records),
		  LF_INT("errorsNotLogged", l->errors_unlogged), LF_END);
	l->last_error_log_ns = now;
	l->errors_unlogged = 0;
}

static int bind_texts(sqlite3_stmt *st, int first, const char *const *texts, int n)
{
	int rc = SQLITE_OK;
	for (int i = 0; i < n && rc == SQLITE_OK; i++)
		rc = sqlite3_bind_text(st, first + i, texts[i], -1, SQLITE_STATIC);
	return rc;
}

static int run(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Closes the uid's open admissions (at most one, unless a file was written otherwise) at the
 * time of q, one by one: each close takes its row out of admissions_open. */
static int close_admissions(struct ledger *l, const struct queued *q, const char *event)
{
	for (;;) {
		int rc = sqlite3_bind_text(l->find_open, 1, q->text[TEXT_UID], -1, SQLITE_STATIC);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(l->find_open);
		int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(l->find_open, 0) : 0;
		sqlite3_reset(l->find_open);
		sqlite3_clear_bindings(l->find_open);
		if (rc != SQLITE_ROW)
			return rc == SQLITE_DONE ? SQLITE_OK : rc;
		rc = sqlite3_bind_int64(l->close_admission, 1, q->time_ms);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_text(l->close_admission, 2, event, -1, SQLITE_STATIC);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(l->close_admission, 3, id);
		if (rc == SQLITE_OK)
			rc = run(l->close_admission);
		if (rc == SQLITE_OK && sqlite3_changes64(l->wdb) != 1)
			rc = SQLITE_INTERNAL; /* found but not closed: never loop */
		if (rc != SQLITE_OK)
			return rc;
	}
}

/* Writes one record: every event ends the uid's open admission first (an admit ends one left
 * open, see ledger.h), then the row goes in. */
static int write_record(struct ledger *l, const struct queued *q)
{
	const char *event = event_names[q->event];
	int rc = close_admissions(l, q, event);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_bind_int64(l->insert, 1, q->time_ms);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(l->insert, 2, event, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = bind_texts(l->insert, 3, q->text, TEXT_COUNT);
	if (rc == SQLITE_OK)
		rc = run(l->insert);
	return rc;
}

/* Pages in use (not on the free list), in bytes. */
static int used_bytes(struct ledger *l, int64_t *out)
{
	int64_t pages = 0, free_pages = 0;
	int rc = step_int64(l->wdb, l->page_count, &pages);
	if (rc == 0)
		rc = step_int64(l->wdb, l->freelist_count, &free_pages);
	if (rc == 0)
		*out = (pages - free_pages) * l->page_size;
	return rc;
}

static int delete_rows(struct ledger *l, sqlite3_stmt *st, uint64_t *deleted)
{
	int rc = run(st);
	if (rc != SQLITE_OK)
		return sqlite_errno(l->wdb, rc);
	*deleted += (uint64_t)sqlite3_changes64(l->wdb);
	return 0;
}

/* Whether rows are past the retention age, and the time that age starts from. */
static int rows_aged(struct ledger *l, int64_t *cutoff, int64_t *any)
{
	*cutoff = l->opts.clock(l->opts.clock_arg) - l->opts.retention_age_ms;
	if (sqlite3_bind_int64(l->any_aged, 1, *cutoff) != SQLITE_OK)
		return -EINVAL;
	return step_int64(l->wdb, l->any_aged, any);
}

/* Deletes a chunk of the rows past the retention age. A DELETE takes the write lock even when
 * it finds nothing, so a read asks first. */
static int delete_aged(struct ledger *l, uint64_t *deleted)
{
	int64_t cutoff, any = 0;
	int rc = rows_aged(l, &cutoff, &any);
	if (rc < 0 || !any)
		return rc;
	if (sqlite3_bind_int64(l->delete_aged, 1, cutoff) != SQLITE_OK ||
	    sqlite3_bind_int64(l->delete_aged, 2, LEDGER_RETENTION_CHUNK) != SQLITE_OK)
		return -EINVAL;
	return delete_rows(l, l->delete_aged, deleted);
}

/*
 * Trims the file to its bounds (see ledger.h): rows past the age, a chunk per batch, then the
 * oldest rows while the pages in use exceed retention_bytes, down to 90 % of it. The number to
 * delete is estimated from the id range, which is the row count but for the open admissions
 * kept behind; a few rounds correct the estimate. Writer thread
 * only. */
static int apply_retention(struct ledger *l, uint64_t *deleted, int64_t *db_bytes)
{
	int rc = l->opts.retention_age_ms >= 0 ? delete_aged(l, deleted) : 0;
	int64_t used = 0;
	if (rc == 0)
		rc = used_bytes(l, &used);
	int64_t limit = l->opts.retention_bytes, target = limit - limit / 10;
	for (int round = 0; rc == 0 && limit >= 0 && used > limit && round < 8; round++) {
		int64_t rows = 0;
		if ((rc = step_int64(l->wdb, l->id_range, &rows)) < 0 || rows == 0)
			break;
		int64_t n = (int64_t)((double)rows * (double)(used - target) / (double)used) + 1;
		uint64_t before = *deleted;
		if (sqlite3_bind_int64(l->delete_oldest, 1, n) != SQLITE_OK)
			rc = -EINVAL;
		else
			rc = delete_rows(l, l->delete_oldest, deleted);
		if (rc < 0 || *deleted == before)
			break; /* only open admissions are left */
		rc = used_bytes(l, &used);
	}
	if (rc == 0 && *deleted)
		rc = exec_sql(l->wdb, l->path, "PRAGMA incremental_vacuum");
	if (rc == 0)
		rc = used_bytes(l, &used);
	if (rc == 0)
		*db_bytes = used;
	return rc;
}

/* What retention will find after a batch, read inside the batch's transaction: reads of their
 * own would each take the file's locks again, for nothing in all but a few batches. */
struct retention_check {
	bool due; /* rows past the age, pages above the size bound, or a read failed */
	int64_t used; /* pages in use, in bytes */
};

static void check_retention(struct ledger *l, struct retention_check *c)
{
	int64_t cutoff, any = 0;
	int rc = l->opts.retention_age_ms >= 0 ? rows_aged(l, &cutoff, &any) : 0;
	if (rc == 0)
		rc = used_bytes(l, &c->used);
	c->due = rc < 0 || any ||
		 (l->opts.retention_bytes >= 0 && c->used > l->opts.retention_bytes);
}

/* Commits the batch in one transaction, all or nothing, and sees whether retention has work.
 * 0 or a negative errno. */
static int commit_batch(struct ledger *l, const struct queued *batch, struct retention_check *c)
{
	int rc = run(l->begin);
	for (const struct queued *q = batch; q && rc == SQLITE_OK; q = q->next)
		rc = write_record(l, q);
	if (rc == SQLITE_OK) {
		check_retention(l, c);
		rc = run(l->commit);
	}
	if (rc == SQLITE_OK)
		return 0;
	int err = sqlite_errno(l->wdb, rc);
	if (!sqlite3_get_autocommit(l->wdb))
		run(l->rollback);
	return err ? err : -EIO;
}

static void free_batch(struct queued *q)
{
	while (q) {
		struct queued *next = q->next;
		free(q);
		q = next;
	}
}

/* Waits (lock held) until the queue is due: batch_ms after its oldest record arrived, or now
 * when it is large, a flush waits or the ledger closes. False when closing with nothing left. */
static bool wait_for_batch(struct ledger *l)
{
	while (!l->head && !l->closing)
		uv_cond_wait(&l->wake, &l->lock);
	if (!l->head)
		return false;
	uint64_t deadline = l->first_ns + (uint64_t)l->opts.batch_ms * 1000000u;
	while (!l->closing && !l->flush_wanted && l->count < l->wake_records &&
	       l->bytes < l->wake_bytes) {
		uint64_t now = uv_hrtime();
		if (now >= deadline)
			break;
		uv_cond_timedwait(&l->wake, &l->lock, deadline - now);
	}
	return true;
}

/* Detaches the oldest LEDGER_BATCH_MAX records at most (lock held); returns how many. What stays
 * keeps its arrival time, so it is due at once. A flush is served once the queue is empty. */
static uint64_t take_batch(struct ledger *l, struct queued **batch)
{
	struct queued *last = l->head;
	size_t n = 1, bytes = last->bytes;
	for (; n < LEDGER_BATCH_MAX && last->next; n++) {
		last = last->next;
		bytes += last->bytes;
	}
	*batch = l->head;
	l->head = last->next;
	last->next = NULL;
	if (!l->head)
		l->tail = NULL;
	l->count -= n;
	l->bytes -= bytes;
	l->flush_wanted = l->flush_wanted && l->head;
	return n;
}

static void writer_main(void *arg)
{
	struct ledger *l = arg;
	struct queued *batch;
	uv_mutex_lock(&l->lock);
	while (wait_for_batch(l)) {
		uint64_t n = take_batch(l, &batch);
		uv_mutex_unlock(&l->lock);

		struct retention_check check = { .due = true, .used = -1 };
		int rc = commit_batch(l, batch, &check);
		free_batch(batch);
		uv_mutex_lock(&l->lock);
		if (rc == 0) {
			l->stats.written += n;
			l->stats.batches++;
		} else {
			l->stats.failed += n;
			l->stats.errors++;
		}
		uv_mutex_unlock(&l->lock);
		if (rc < 0)
			log_disk_error(l, "ledger lost a batch of decisions", rc, n);

		uint64_t deleted = 0;
		int64_t db_bytes = check.used;
		int retention = rc < 0 || check.due ? apply_retention(l, &deleted, &db_bytes) : 0;
		if (retention < 0)
			log_disk_error(l, "ledger retention failed", retention, 0);

		uv_mutex_lock(&l->lock);
		l->stats.deleted += deleted;
		if (db_bytes >= 0)
			l->stats.db_bytes = db_bytes;
		if (retention < 0)
			l->stats.errors++;
		l->settled += n;
		uv_cond_broadcast(&l->settled_cond);
	}
	uv_mutex_unlock(&l->lock);
}

/* ------------------------------------------------------------------------------------------ */
/* Life cycle */

static int apply_options(struct ledger *l, const struct ledger_options *opts)
{
	if (!opts || !opts->path || !*opts->path)
		return -EINVAL;
	l->opts = *opts;
	if (!(l->path = strdup(opts->path)))
		return -ENOMEM;
	l->opts.path = l->path;
	if (!l->opts.retention_age_ms)
		l->opts.retention_age_ms = LEDGER_DEFAULT_RETENTION_AGE_MS;
	if (!l->opts.retention_bytes)
		l->opts.retention_bytes = LEDGER_DEFAULT_RETENTION_BYTES;
	if (!l->opts.batch_ms)
		l->opts.batch_ms = LEDGER_DEFAULT_BATCH_MS;
	if (!l->opts.queue_max)
		l->opts.queue_max = LEDGER_DEFAULT_QUEUE_MAX;
	if (!l->opts.queue_max_bytes)
		l->opts.queue_max_bytes = LEDGER_DEFAULT_QUEUE_MAX_BYTES;
	if (!l->opts.busy_timeout_ms)
		l->opts.busy_timeout_ms = LEDGER_DEFAULT_BUSY_TIMEOUT_MS;
	if (!l->opts.clock)
		l->opts.clock = realtime_ms;
	l->wake_records = l->opts.queue_max / 2 ? l->opts.queue_max / 2 : 1;
	if (l->wake_records > LEDGER_WAKE_RECORDS)
		l->wake_records = LEDGER_WAKE_RECORDS;
	l->wake_bytes = l->opts.queue_max_bytes / 2;
	return 0;
}

static int open_databases(struct ledger *l)
{
	int rc = open_connection(l->path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
				 l->opts.busy_timeout_ms, &l->wdb);
	if (rc < 0)
		return rc;
	if ((rc = configure_writer(l->wdb, l->path)) < 0 ||
	    (rc = ensure_schema(l->wdb, l->path)) < 0 || (rc = prepare_writer(l)) < 0 ||
	    (rc = used_bytes(l, &l->stats.db_bytes)) < 0)
		goto fail_writer;
	/* Readers wait briefly at most: in WAL mode only recovery or a truncating checkpoint
	 * holds them off, and the caller may be the loop. */
	rc = open_connection(l->path, SQLITE_OPEN_READWRITE, 250, &l->rdb);
	if (rc < 0)
		goto fail_writer;
	if ((rc = exec_sql(l->rdb, l->path, "PRAGMA query_only = 1")) < 0 ||
	    (rc = prepare_reader(l)) < 0)
		goto fail_reader;
	return 0;

fail_reader:
	close_reader_db(l);
fail_writer:
	close_writer_db(l);
	return rc;
}

/* SQLite's memory statistics take a global mutex around every allocation of every statement;
 * nothing reads them. Only possible before SQLite's first use in the process (later it is
 * refused, harmlessly). */
static void configure_sqlite(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int ledger_open(const struct ledger_options *opts, struct ledger **out)
{
	if (!out)
		return -EINVAL;
	static uv_once_t configured = UV_ONCE_INIT;
	uv_once(&configured, configure_sqlite);
	if (!sqlite3_threadsafe()) {
		log_error("ledger needs a thread-safe SQLite build", LF_END);
		return -ENOTSUP;
	}
	struct ledger *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	int rc = apply_options(l, opts);
	if (rc < 0)
		goto fail_options;
	if ((rc = uv_mutex_init(&l->lock)) < 0)
		goto fail_options;
	if ((rc = uv_cond_init(&l->wake)) < 0)
		goto fail_wake;
	if ((rc = uv_cond_init(&l->settled_cond)) < 0)
		goto fail_settled;
	if ((rc = uv_mutex_init(&l->read_lock)) < 0)
		goto fail_read_lock;
	if ((rc = open_databases(l)) < 0)
		goto fail_databases;
	if ((rc = uv_thread_create(&l->thread, writer_main, l)) < 0)
		goto fail_thread;
	*out = l;
	return 0;

fail_thread:
	close_reader_db(l);
	close_writer_db(l);
fail_databases:
	uv_mutex_destroy(&l->read_lock);
fail_read_lock:
	uv_cond_destroy(&l->settled_cond);
fail_settled:
	uv_cond_destroy(&l->wake);
fail_wake:
	uv_mutex_destroy(&l->lock);
fail_options:
	free(l->path);
	free(l);
	return rc;
}

void ledger_close(struct ledger *l)
{
	if (!l)
		return;
	uv_mutex_lock(&l->lock);
	l->closing = true;
	uv_cond_signal(&l->wake);
	uv_mutex_unlock(&l->lock);
	uv_thread_join(&l->thread);
	close_reader_db(l);
	close_writer_db(l);
	uv_mutex_destroy(&l->read_lock);
	uv_cond_destroy(&l->settled_cond);
	uv_cond_destroy(&l->wake);
	uv_mutex_destroy(&l->lock);
	free(l->path);
	free(l);
}

/* ------------------------------------------------------------------------------------------ */
/* Appending */

int ledger_append(struct ledger *l, const struct ledger_record *rec)
{
	if (!l || !rec || !ledger_event_name(rec->event) || !rec->ns || !*rec->ns || !rec->name ||
	    !*rec->name || !rec->uid || !*rec->uid)
		return -EINVAL;
	const char *src[TEXT_COUNT] = {
		[TEXT_NS] = rec->ns,
		[TEXT_NAME] = rec->name,
		[TEXT_UID] = rec->uid,
		[TEXT_CLUSTER_QUEUE] = rec->cluster_queue,
		[TEXT_LOCAL_QUEUE] = rec->local_queue,
		[TEXT_FLAVORS] = rec->flavors,
		[TEXT_RESOURCES] = rec->resources,
		[TEXT_REASON] = rec->reason,
		[TEXT_MESSAGE] = rec->message,
		[TEXT_PREEMPTOR] = rec->preemptor,
		[TEXT_CLUSTER_QUEUE_USAGE] = rec->cluster_queue_usage,
	};
	size_t len[TEXT_COUNT], bytes = sizeof(struct queued);
	for (int i = 0; i < TEXT_COUNT; i++) {
		len[i] = src[i] ? strnlen(src[i], LEDGER_TEXT_MAX + 1) : 0;
		if (len[i] > LEDGER_TEXT_MAX)
			return -E2BIG;
		bytes += src[i] ? len[i] + 1 : 0;
	}
	struct queued *q = malloc(bytes);
	if (!q)
		return -ENOMEM;
	q->next = NULL;
	q->bytes = bytes;
	q->time_ms = rec->time_ms ? rec->time_ms : l->opts.clock(l->opts.clock_arg);
	q->event = rec->event;
	char *p = (char *)(q + 1);
	for (int i = 0; i < TEXT_COUNT; i++) {
		q->text[i] = src[i] ? p : NULL;
		if (src[i]) {
			memcpy(p, src[i], len[i]);
			p[len[i]] = '\0';
			p += len[i] + 1;
		}
	}

	uint64_t now_ns = uv_hrtime();
	uv_mutex_lock(&l->lock);
	if (l->count >= l->opts.queue_max || l->bytes + bytes > l->opts.queue_max_bytes) {
		l->stats.dropped++;
		uv_mutex_unlock(&l->lock);
		free(q);
		return -ENOBUFS;
	}
	if (l->tail)
		l->tail->next = q;
	else
		l->head = q;
	l->tail = q;
	if (++l->count == 1)
		l->first_ns = now_ns;
	l->bytes += bytes;
	l->stats.appended++;
	/* The writer sleeps until the queue has a record, then until the batch is due or large;
	 * signalling without a waiter costs no system call. */
	if (l->count == 1 || l->count >= l->wake_records || l->bytes >= l->wake_bytes)
		uv_cond_signal(&l->wake);
	uv_mutex_unlock(&l->lock);
	return 0;
}

int ledger_flush(struct ledger *l)
{
	uv_mutex_lock(&l->lock);
	uint64_t target = l->stats.appended, failed = l->stats.failed;
	l->flush_wanted = true;
	uv_cond_signal(&l->wake);
	while (l->settled < target)
		uv_cond_wait(&l->settled_cond, &l->lock);
	int rc = l->stats.failed > failed ? -EIO : 0;
	uv_mutex_unlock(&l->lock);
	return rc;
}

void ledger_stats(struct ledger *l, struct ledger_stats *out)
{
	uv_mutex_lock(&l->lock);
	*out = l->stats;
	out->queued = l->count;
	uv_mutex_unlock(&l->lock);
}

/* ------------------------------------------------------------------------------------------ */
/* Queries */

/* RFC 3339 in UTC with milliseconds, as the contract's "time": 2026-11-27T08:01:02.123Z. */
static void format_time(int64_t ms, char *buf, size_t size)
{
	int64_t secs = ms / 1000, frac = ms % 1000;
	if (frac < 0) {
		frac += 1000;
		secs--;
	}
	time_t t = (time_t)secs;
	struct tm tm;
	size_t n = gmtime_r(&t, &tm) ? strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm) : 0;
	if (n == 0)
		n = (size_t)snprintf(buf, size, "1970-01-01T00:00:00");
	snprintf(buf + n, size - n, ".%03dZ", (int)frac);
}

static json_t *time_json(int64_t ms)
{
	char buf[64];
	format_time(ms, buf, sizeof(buf));
	return json_string(buf);
}

/* A text column as a JSON string, or null. */
static json_t *text_json(sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);
	return s ? json_stringn(s, (size_t)sqlite3_column_bytes(st, col)) : json_null();
}

/* A JSON text column decoded, or null when absent or not JSON. */
static json_t *embedded_json(sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);
	json_t *v = s ? json_loadb(s, (size_t)sqlite3_column_bytes(st, col), 0, NULL) : NULL;
	return v ? v : json_null();
}

/* One "DecisionList" item from a row of DECISION_COLUMNS. NULL on ENOMEM. */
static json_t *decision_json(sqlite3_stmt *st)
{
	json_t *item = json_object();
	if (!item)
		return NULL;
	int bad = json_object_set_new(item, "id", json_integer(sqlite3_column_int64(st, 0)));
	bad |= json_object_set_new(item, "time", time_json(sqlite3_column_int64(st, 1)));
	bad |= json_object_set_new(item, "event", text_json(st, 2));
	bad |= json_object_set_new(item, "namespace", text_json(st, 3));
	bad |= json_object_set_new(item, "name", text_json(st, 4));
	bad |= json_object_set_new(item, "uid", text_json(st, 5));
	bad |= json_object_set_new(item, "clusterQueue", text_json(st, 6));
	bad |= json_object_set_new(item, "localQueue", text_json(st, 7));
	bad |= json_object_set_new(item, "flavors", embedded_json(st, 8));
	bad |= json_object_set_new(item, "resources", embedded_json(st, 9));
	bad |= json_object_set_new(item, "reason", text_json(st, 10));
	bad |= json_object_set_new(item, "message", text_json(st, 11));
	bad |= json_object_set_new(item, "preemptor", text_json(st, 12));
	bad |= json_object_set_new(item, "clusterQueueUsage", embedded_json(st, 13));
	if (bad) {
		json_decref(item);
		return NULL;
	}
	return item;
}

/* {"kind":kind,"apiVersion":...}, or NULL on ENOMEM. */
static json_t *answer_new(const char *kind)
{
	json_t *o = json_object();
	if (o && (json_object_set_new(o, "kind", json_string(kind)) ||
		  json_object_set_new(o, "apiVersion", json_string(LEDGER_API_VERSION)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Steps a bound history statement into a DecisionList. Read lock held. */
static int decision_list(struct ledger *l, sqlite3_stmt *st, json_t **out)
{
	json_t *answer = answer_new("DecisionList"), *items = json_array();
	int rc = answer && items ? 0 : -ENOMEM, step = SQLITE_DONE;
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *item = decision_json(st);
		if (!item || json_array_append_new(items, item))
			rc = -ENOMEM;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = sqlite_errno(l->rdb, step);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == 0 && json_object_set(answer, "items", items))
		rc = -ENOMEM;
	json_decref(items);
	if (rc < 0) {
		if (rc != -ENOMEM)
			log_warn("ledger query failed", LF_STR("path", l->path),
				 LF_STR("error", sqlite3_errmsg(l->rdb)), LF_END);
		json_decref(answer);
		return rc;
	}
	*out = answer;
	return 0;
}

int ledger_workload_history(struct ledger *l, const char *ns, const char *name, unsigned limit,
			    json_t **out)
{
	if (!l || !ns || !name || !out || limit == 0 || limit > LEDGER_HISTORY_MAX)
		return -EINVAL;
	uv_mutex_lock(&l->read_lock);
	sqlite3_stmt *st = l->workload_history;
	int rc = sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 3, limit);
	rc = rc == SQLITE_OK ? decision_list(l, st, out) : sqlite_errno(l->rdb, rc);
	uv_mutex_unlock(&l->read_lock);
	return rc;
}

int ledger_cluster_queue_history(struct ledger *l, const char *cluster_queue, int64_t since_ms,
				 unsigned limit, json_t **out)
{
	if (!l || !cluster_queue || !out || limit == 0 || limit > LEDGER_HISTORY_MAX)
		return -EINVAL;
	uv_mutex_lock(&l->read_lock);
	sqlite3_stmt *st = l->cluster_queue_history;
	int rc = sqlite3_bind_text(st, 1, cluster_queue, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, since_ms);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 3, limit);
	rc = rc == SQLITE_OK ? decision_list(l, st, out) : sqlite_errno(l->rdb, rc);
	uv_mutex_unlock(&l->read_lock);
	return rc;
}

/* Adds resources (a JSON text {resource:"quantity"}) times ms, in hours, to hours. Entries that
 * are not quantities count for nothing: the ledger keeps what the manager wrote. */
static int add_resource_hours(json_t *hours, const char *resources, size_t len, int64_t ms)
{
	json_t *list = resources ? json_loadb(resources, len, 0, NULL) : NULL;
	const char *resource;
	json_t *value;
	int rc = 0;
	json_object_foreach(list, resource, value)
	{
		struct quantity q;
		if (!json_is_string(value) || quantity_parse(json_string_value(value), &q) < 0)
			continue;
		double add = (double)q.milli / 1000.0 * (double)ms / 3600000.0;
		json_t *sum = json_object_get(hours, resource);
		if (sum)
			json_real_set(sum, json_real_value(sum) + add);
		else if (json_object_set_new(hours, resource, json_real(add)))
			rc = -ENOMEM;
	}
	json_decref(list);
	return rc;
}

/* Appends {"key":key,"resourceHours":hours,"workloads":n} to items; takes hours, even on
 * failure (jansson's _new functions release what they could not keep). */
static int usage_item_append(json_t *items, const char *key, json_t *hours, json_int_t workloads)
{
	json_t *item = json_object();
	if (!item) {
		json_decref(hours);
		return -ENOMEM;
	}
	int bad = json_object_set_new(item, "key", json_string(key));
	bad |= json_object_set_new(item, "resourceHours", hours);
	bad |= json_object_set_new(item, "workloads", json_integer(workloads));
	if (bad) {
		json_decref(item);
		return -ENOMEM;
	}
	return json_array_append_new(items, item) ? -ENOMEM : 0;
}

/* Steps the usage statement (rows sorted by key, then uid) into items. Read lock held. */
static int usage_items(struct ledger *l, sqlite3_stmt *st, json_t *items)
{
	char *key = NULL, *uid = NULL;
	json_t *hours = NULL;
	json_int_t workloads = 0;
	size_t intervals = 0;
	int rc = 0, step = SQLITE_DONE;
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *row_key = (const char *)sqlite3_column_text(st, 0);
		const char *row_uid = (const char *)sqlite3_column_text(st, 1);
		if (!row_key || !row_uid) {
			rc = -ENOMEM;
			break;
		}
		if (++intervals > LEDGER_USAGE_MAX_INTERVALS) {
			rc = -E2BIG;
			break;
		}
		if (!key || strcmp(key, row_key)) {
			if (key)
				rc = usage_item_append(items, key, hours, workloads);
			hours = NULL;
			free(key);
			free(uid);
			uid = NULL;
			workloads = 0;
			if (rc < 0)
				break;
			key = strdup(row_key);
			hours = json_object();
			if (!key || !hours) {
				rc = -ENOMEM;
				break;
			}
		}
		if (!uid || strcmp(uid, row_uid)) {
			free(uid);
			if (!(uid = strdup(row_uid))) {
				rc = -ENOMEM;
				break;
			}
			workloads++;
		}
		rc = add_resource_hours(hours, (const char *)sqlite3_column_text(st, 2),
					(size_t)sqlite3_column_bytes(st, 2),
					sqlite3_column_int64(st, 3));
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = sqlite_errno(l->rdb, step);
	if (rc == 0 && key) {
		rc = usage_item_append(items, key, hours, workloads);
		hours = NULL;
	}
	json_decref(hours);
	free(key);
	free(uid);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

int ledger_usage(struct ledger *l, int64_t since_ms, int64_t until_ms, enum ledger_usage_by by,
		 json_t **out)
{
	if (!l || !out || until_ms < since_ms ||
	    (by != LEDGER_BY_QUEUE && by != LEDGER_BY_NAMESPACE))
		return -EINVAL;
	json_t *answer = answer_new("UsageReport"), *items = json_array();
	int rc = 0;
	if (!answer || !items || json_object_set_new(answer, "since", time_json(since_ms)) ||
	    json_object_set_new(answer, "until", time_json(until_ms)) ||
	    json_object_set_new(answer, "by",
				json_string(by == LEDGER_BY_QUEUE ? "queue" : "namespace")))
		rc = -ENOMEM;
	if (rc == 0) {
		uv_mutex_lock(&l->read_lock);
		sqlite3_stmt *st = by == LEDGER_BY_QUEUE ? l->usage_by_queue :
							   l->usage_by_namespace;
		int bind = sqlite3_bind_int64(st, 1, since_ms);
		if (bind == SQLITE_OK)
			bind = sqlite3_bind_int64(st, 2, until_ms);
		rc = bind == SQLITE_OK ? usage_items(l, st, items) : sqlite_errno(l->rdb, bind);
		uv_mutex_unlock(&l->read_lock);
	}
	if (rc == 0 && json_object_set(answer, "items", items))
		rc = -ENOMEM;
	json_decref(items);
	if (rc < 0) {
		json_decref(answer);
		return rc;
	}
	*out = answer;
	return 0;
}

int ledger_recent_runtimes(struct ledger *l, const char *cluster_queue, struct ledger_runtime *out,
			   size_t max, size_t *n)
{
	if (!l || !cluster_queue || !n || (max && !out))
		return -EINVAL;
	*n = 0;
	if (max == 0)
		return 0;
	uv_mutex_lock(&l->read_lock);
	sqlite3_stmt *st = l->runtimes;
	int rc = sqlite3_bind_text(st, 1, cluster_queue, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, max > INT64_MAX ? INT64_MAX : (int64_t)max);
	while (rc == SQLITE_OK && *n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		out[*n].finished_ms = sqlite3_column_int64(st, 0);
		out[*n].runtime_ms = sqlite3_column_int64(st, 1);
		++*n;
		rc = SQLITE_OK;
	}
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sqlite_errno(l->rdb, rc);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	uv_mutex_unlock(&l->read_lock);
	return rc;
}

int ledger_open_admissions(struct ledger *l, ledger_admission_fn fn, void *arg)
{
	if (!l || !fn)
		return -EINVAL;
	uv_mutex_lock(&l->read_lock);
	sqlite3_stmt *st = l->open_admissions;
	int rc, stop = 0;
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ledger_admission a = {
			(const char *)sqlite3_column_text(st, 0),
			(const char *)sqlite3_column_text(st, 1),
			(const char *)sqlite3_column_text(st, 2),
			(const char *)sqlite3_column_text(st, 3),
			sqlite3_column_int64(st, 4),
		};
		stop = fn(arg, &a);
	}
	rc = stop || rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sqlite_errno(l->rdb, rc);
	sqlite3_reset(st);
	uv_mutex_unlock(&l->read_lock);
	return rc;
}
