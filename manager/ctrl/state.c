/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Typed state of the controller: key sets, marking keys dirty, the pump's trigger, deadlines
 * and store access. Calls no other file of ctrl/ but records.c (a Workload's deadline is in its
 * record); the pump itself is manager.c's (pump_fn).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/integrations.h"
#include "api/objects.h"
#include "core/invariant.h"
#include "core/grow.h"
#include "ctrl/internal.h"
#include "util/json_cut.h"
#include "util/json_slim.h"
#include "util/log.h"

static char present; /* the value of every key-set entry */

#define STORE_FRESH_MAX 1024

int keyset_add(struct keyset *s, const char *key)
{
	return strmap_put(&s->map, key, &present, NULL);
}

int keyset_has(const struct keyset *s, const char *key)
{
	return strmap_get(&s->map, key) != NULL;
}

void keyset_del(struct keyset *s, const char *key)
{
	strmap_remove(&s->map, key);
}

size_t keyset_size(const struct keyset *s)
{
	return s->map.len;
}

void keyset_take(struct keyset *s, struct keyset *out)
{
	*out = *s;
	strmap_init(&s->map);
}

void keyset_release(struct keyset *s)
{
	strmap_release(&s->map, NULL);
}

void pump_budget_start(struct mgr *m, struct pump_budget *b)
{
	*b = (struct pump_budget){ .until_ns = uv_hrtime() + m->pump_budget_ns };
}

int pump_budget_spent(struct pump_budget *b)
{
	if (!b->spent && b->keys > 0 && b->keys % PUMP_CHECK_EVERY == 0 &&
	    uv_hrtime() >= b->until_ns)
		b->spent = 1;
	return b->spent;
}

int state_drain(struct mgr *m, enum kind kind, struct pump_budget *b, int may_take,
		void (*reconcile)(struct mgr *m, enum kind kind, const char *key))
{
	struct drain *d = &m->draining[kind];
	if (d->left == 0) {
		if (!may_take || keyset_size(&m->dirty[kind]) == 0)
			return 1;
		keyset_release(&d->batch);
		keyset_take(&m->dirty[kind], &d->batch);
		d->next = 0;
		d->left = keyset_size(&d->batch);
	}
	/* Nothing but this loop changes the batch, so its slots stay where they are. */
	while (d->left > 0 && d->next < d->batch.map.cap) {
		struct strmap_slot *slot = &d->batch.map.slots[d->next];
		if (!slot->key || !slot->value) {
			d->next++;
			continue;
		}
		if (pump_budget_spent(b))
			return 0;
		slot->value = NULL; /* reconciled: keyset_has no longer finds it */
		d->next++;
		d->left--;
		b->keys++;
		reconcile(m, kind, slot->key);
		state_release_views(m);
	}
	d->left = 0;
	keyset_release(&d->batch);
	return 1;
}

int state_draining(struct mgr *m, enum kind kind)
{
	return m->draining[kind].left > 0;
}

size_t state_pending(struct mgr *m, enum kind kind)
{
	return keyset_size(&m->dirty[kind]) + m->draining[kind].left;
}

static void on_pump(uv_idle_t *h)
{
	struct mgr *m = h->data;
	m->pump_fn(m);
}

void state_kick(struct mgr *m)
{
	if (m->pump_fn && !uv_is_active((uv_handle_t *)&m->pump))
		uv_idle_start(&m->pump, on_pump);
}

void state_mark(struct mgr *m, enum kind kind, const char *key)
{
	/* Out of memory: the key's next event or deadline marks it again. (Not state_at: its own
	 * out-of-memory path marks, and the two would recurse.) */
	if (keyset_add(&m->dirty[kind], key) != 0)
		log_error("out of memory: a key is not marked", LF_STR("key", key), LF_END);
	state_kick(m);
}

void state_want_cycle(struct mgr *m)
{
	m->admission_needed = 1;
	state_kick(m);
}

json_t *store_get(struct mgr *m, enum kind kind, const char *key)
{
	if (!key)
		return NULL;
	if (m->compact[kind]) {
		json_t *view = strmap_get(&m->views[kind], key), *kept;
		const char *text;
		if (view || (view = strmap_get(&m->fresh[kind], key)) != NULL) {
			/* A view or a fresh object parses a kept text: its key is in the store. */
			MUSTER_ASSERT(strmap_get(&m->texts[kind], key) != NULL);
			return view;
		}
		if ((text = strmap_get(&m->texts[kind], key)) != NULL) {
			json_error_t jerr;
			view = json_loads(text, 0, &jerr);
			if (view && strmap_put(&m->views[kind], key, view, NULL) == 0)
				return view;
			json_decref(view);
			return NULL; /* out of memory: as if absent, until the next event */
		}
		/* No text: absent, or kept whole for want of memory (store_keep); never a stub. */
		kept = m->stores[kind] ? json_object_get(m->stores[kind], key) : NULL;
		return json_is_object(kept) ? kept : NULL;
	}
	return m->stores[kind] ? json_object_get(m->stores[kind], key) : NULL;
}

json_t *store_meta(struct mgr *m, enum kind kind, const char *key)
{
	static const char *const metadata[] = { "metadata", NULL };
	const char *text = m->compact[kind] && key ? strmap_get(&m->texts[kind], key) : NULL;
	json_t *whole = NULL, *meta;
	json_error_t jerr;
	size_t from, to;
	if (text && !(whole = strmap_get(&m->views[kind], key)))
		whole = strmap_get(&m->fresh[kind], key);
	if (!text || whole)
		return json_incref(whole ? whole : store_get(m, kind, key));
	if (json_member_span(text, strlen(text), metadata, &from, &to) != 0 ||
	    !(meta = json_loadb(text + from, to - from, 0, &jerr)))
		return NULL;
	return json_pack("{s:o}", "metadata", meta);
}

int store_may_hold(struct mgr *m, enum kind kind, const char *key, const char *needle)
{
	const char *text = m->compact[kind] && key ? strmap_get(&m->texts[kind], key) : NULL;
	return !text || strstr(text, needle) != NULL;
}

/* The stub a compact or modelled kind's store keeps: the object's resourceVersion, what relists
 * compare (kube/watch.h); null without one. A tree of metadata was a thousand bytes per object
 * (two jansson objects and their tables); a string is a tenth of that, and the integer a
 * resourceVersion mostly is (an etcd revision) one allocation less: an integer when it writes
 * back the same (digits, no leading zero, in range), else a string. */
static json_t *stub_of_rv(const char *rv)
{
	size_t n = rv ? strspn(rv, "0123456789") : 0;
	if (!rv)
		return json_null();
	if (n > 0 && n <= 18 && !rv[n] && (rv[0] != '0' || n == 1))
		return json_integer((json_int_t)strtoll(rv, NULL, 10));
	return json_string(rv);
}

static json_t *stub_of(json_t *obj)
{
	return stub_of_rv(obj_str(obj, "metadata.resourceVersion"));
}

/* A kept text in one allocation with its key (the texts map's, borrowed): the key, then a
 * NUL-terminated copy of the len bytes at text, which is what the map's value points at. */
static char *keyed_text(const char *key, const char *text, size_t len)
{
	size_t klen = strlen(key) + 1;
	char *kt = malloc(klen + len + 1);
	if (kt) {
		memcpy(kt, key, klen);
		memcpy(kt + klen, text, len);
		kt[klen + len] = '\0';
	}
	return kt;
}

/* Frees a kept text (a texts map's value, or NULL) and the key before it. */
static void text_free(const char *key, char *text)
{
	if (text)
		free(text - strlen(key) - 1);
}

json_t *store_keep(struct mgr *m, enum kind kind, json_t *obj, const char *as_text, size_t len)
{
	char key[600];
	if (kind_def(kind)->model) {
		json_t *stub = stub_of(obj);
		return stub ? stub : json_incref(obj); /* out of memory: whole rather than lost */
	}
	if (!m->compact[kind] || informer_key(obj, key, sizeof(key)) != 0)
		return json_incref(obj);
	char *dumped = as_text ? NULL : json_dumps(obj, JSON_COMPACT);
	char *kt = as_text || dumped ? keyed_text(key, as_text ? as_text : dumped,
						  as_text ? len : strlen(dumped)) :
				       NULL;
	free(dumped);
	json_t *stub = kt ? stub_of(obj) : NULL;
	/* The map keeps the key first put: the old text (and its key) goes before the new. */
	text_free(key, strmap_remove(&m->texts[kind], key));
	if (!stub || strmap_put(&m->texts[kind], kt, kt + strlen(key) + 1, NULL) != 0) {
		/* Out of memory: keep the whole object rather than lose it. */
		free(kt);
		json_decref(stub);
		store_forget(m, kind, key);
		return json_incref(obj);
	}
	json_decref(strmap_remove(&m->views[kind], key));
	/* The object itself serves the next read of it, unparsed (until the pump pass ends). */
	json_t *was = NULL;
	if (strmap_get(&m->fresh[kind], key) || m->fresh[kind].len < STORE_FRESH_MAX) {
		if (strmap_put(&m->fresh[kind], key, json_incref(obj), (void **)&was) != 0)
			json_decref(obj);
		json_decref(was);
	}
	return stub;
}

json_t *store_keep_text(struct mgr *m, enum kind kind, const char *key, const char *rv,
			const char *text, size_t len)
{
	size_t klen = strlen(key) + 1, slim_len, err_at;
	char *kt = malloc(klen + len + 1), *shrunk;
	json_t *stub = NULL;
	if (!kt)
		return NULL;
	memcpy(kt, key, klen);
	if (json_slim_text(text, len, kind_def(kind)->slim_rule, kt + klen, &slim_len, &err_at) !=
		    0 ||
	    !(stub = stub_of_rv(rv))) {
		free(kt);
		return NULL; /* parsed instead, which says what is wrong */
	}
	/* Slimmed, a Workload's text can be a fraction of what came: give the rest back. */
	if ((shrunk = realloc(kt, klen + slim_len + 1)) != NULL)
		kt = shrunk;
	text_free(key, strmap_remove(&m->texts[kind], key));
	if (strmap_put(&m->texts[kind], kt, kt + klen, NULL) != 0) {
		free(kt);
		json_decref(stub);
		store_forget(m, kind, key);
		return NULL; /* out of memory: parsed instead, and kept whole */
	}
	/* A tree of the older text is stale now; the next read parses the new one. */
	json_decref(strmap_remove(&m->views[kind], key));
	json_decref(strmap_remove(&m->fresh[kind], key));
	return stub;
}

void store_forget(struct mgr *m, enum kind kind, const char *key)
{
	if (!m->compact[kind])
		return;
	text_free(key, strmap_remove(&m->texts[kind], key));
	json_decref(strmap_remove(&m->views[kind], key));
	json_decref(strmap_remove(&m->fresh[kind], key));
}

static void view_free(void *v)
{
	json_decref(v);
}

void state_release_fresh(struct mgr *m)
{
	for (int k = 0; k < K_KINDS; k++) {
		if (!m->compact[k] || m->fresh[k].len == 0)
			continue;
		/* A fresh object is what its text parses to: it stays as the key's view while
		 * there is room (store_keep removed the older view when it came). */
		struct strmap *fresh = &m->fresh[k];
		for (size_t i = 0; i < fresh->cap; i++) {
			struct strmap_slot *slot = &fresh->slots[i];
			if (!slot->key || m->views[k].len >= STORE_VIEWS_MAX ||
			    strmap_get(&m->views[k], slot->key))
				continue;
			if (strmap_put(&m->views[k], slot->key, slot->value, NULL) == 0)
				slot->value = NULL; /* the view's now */
		}
		strmap_release(fresh, view_free);
		strmap_init(fresh);
	}
}

/* Every view of kind k goes. */
static void drop_views(struct mgr *m, int k)
{
	strmap_release(&m->views[k], view_free);
	strmap_init(&m->views[k]);
}

void state_release_views(struct mgr *m)
{
	for (int k = 0; k < K_KINDS; k++)
		if (m->compact[k] && m->views[k].len > STORE_VIEWS_MAX)
			drop_views(m, k);
}

void state_drop_views(struct mgr *m)
{
	for (int k = 0; k < K_KINDS; k++)
		if (m->compact[k] && m->views[k].len)
			drop_views(m, k);
}

json_t *workload_view(struct mgr *m, const char *key)
{
	struct wl_record *r = wl_record_get(m, key);
	return r && r->assumed ? r->assumed : store_get(m, K_WORKLOAD, key);
}

/* --- deadlines: a binary min-heap with lazy deletion ---------------------------------------- */

static void heap_swap(struct deadline *h, size_t a, size_t b)
{
	struct deadline t = h[a];
	h[a] = h[b];
	h[b] = t;
}

static void heap_up(struct deadline *h, size_t i)
{
	while (i > 0 && h[(i - 1) / 2].when > h[i].when) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_down(struct deadline *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i;
		if (l < n && h[l].when < h[min].when)
			min = l;
		if (r < n && h[r].when < h[min].when)
			min = r;
		if (min == i)
			return;
		heap_swap(h, i, min);
		i = min;
	}
}

static void heap_pop(struct mgr *m)
{
	free(m->heap[0].key);
	m->heap[0] = m->heap[--m->heap_len];
	heap_down(m->heap, m->heap_len, 0);
}

/* The key's current deadline: a Workload's is in its record, other kinds' in deadlines[]. */
static int deadline_of(struct mgr *m, enum kind kind, const char *key, int64_t *when)
{
	if (kind == K_WORKLOAD) {
		const struct wl_record *r = wl_record_get(m, key);
		*when = r ? r->deadline : 0;
		return r && r->has_deadline;
	}
	const int64_t *at = strmap_get(&m->deadlines[kind], key);
	*when = at ? *at : 0;
	return at != NULL;
}

static void deadline_clear(struct mgr *m, enum kind kind, const char *key)
{
	struct wl_record *r;
	if (kind != K_WORKLOAD)
		free(strmap_remove(&m->deadlines[kind], key));
	else if ((r = wl_record_get(m, key)) != NULL)
		r->has_deadline = 0;
}

/* 0, or -ENOMEM (the deadline is then unchanged). */
static int deadline_set(struct mgr *m, enum kind kind, const char *key, int64_t when_ms)
{
	if (kind == K_WORKLOAD) {
		struct wl_record *r = wl_record_make(m, key);
		if (!r)
			return -ENOMEM;
		r->deadline = when_ms;
		r->has_deadline = 1;
		return 0;
	}
	int64_t *when = strmap_get(&m->deadlines[kind], key);
	if (!when && (when = malloc(sizeof(*when))) != NULL &&
	    strmap_put(&m->deadlines[kind], key, when, NULL) != 0) {
		free(when);
		when = NULL;
	}
	if (!when)
		return -ENOMEM;
	*when = when_ms;
	return 0;
}

/* Whether the top entry is still the key's current deadline. */
static int top_current(struct mgr *m)
{
	const struct deadline *d = &m->heap[0];
	int64_t when;
	return deadline_of(m, d->kind, d->key, &when) && when == d->when;
}

static void on_deadline(uv_timer_t *t);

void state_run_deadlines(struct mgr *m);

static void arm_deadline_timer(struct mgr *m)
{
	while (m->heap_len > 0 && !top_current(m))
		heap_pop(m);
	if (m->heap_len == 0) {
		uv_timer_stop(&m->deadline_timer);
		return;
	}
	int64_t now = m->now_ms(), next = m->heap[0].when;
	uv_timer_start(&m->deadline_timer, on_deadline, next > now ? (uint64_t)(next - now) : 0, 0);
}

static void on_deadline(uv_timer_t *t)
{
	state_run_deadlines(t->data);
}

void state_run_deadlines(struct mgr *m)
{
	int64_t now = m->now_ms();
	while (m->heap_len > 0 && m->heap[0].when <= now) {
		if (top_current(m)) {
			struct deadline *d = &m->heap[0];
			deadline_clear(m, d->kind, d->key);
			keyset_add(&m->dirty[d->kind], d->key);
		}
		heap_pop(m);
	}
	state_want_cycle(m);
	arm_deadline_timer(m);
}

void state_at(struct mgr *m, enum kind kind, const char *key, int64_t when_ms)
{
	char *copy = strdup(key);
	if (!copy || GROW(m->heap, m->heap_cap, m->heap_len + 1) != 0 ||
	    deadline_set(m, kind, key, when_ms) != 0) {
		/* Out of memory: the key is looked at now rather than lost. */
		free(copy);
		state_mark(m, kind, key);
		return;
	}
	m->heap[m->heap_len] = (struct deadline){ when_ms, kind, copy };
	heap_up(m->heap, m->heap_len++);
	arm_deadline_timer(m);
}

int state_init(struct mgr *m)
{
	for (int k = 0; k < K_KINDS; k++) {
		strmap_init(&m->dirty[k].map);
		strmap_init(&m->draining[k].batch.map);
		strmap_init(&m->deadlines[k]);
		strmap_init_borrowed(&m->texts[k]); /* each key is its text's (keyed_text) */
		strmap_init(&m->views[k]);
		strmap_init(&m->fresh[k]);
	}
	for (enum kind k = 0; k < K_KINDS; k++)
		m->compact[k] = (unsigned char)kind_def(k)->compact;
	strmap_init(&m->unsent.map);
	strmap_init(&m->admitted_now.map);
	strmap_init(&m->afs_seen.map);
	records_init(m);
	m->pump_budget_ns = PUMP_BUDGET_NS;
	uv_idle_init(m->loop, &m->pump);
	m->pump.data = m;
	uv_prepare_init(m->loop, &m->turn_prepare); /* observe.c starts it */
	m->turn_prepare.data = m;
	uv_unref((uv_handle_t *)&m->turn_prepare);
	uv_timer_init(m->loop, &m->deadline_timer);
	m->deadline_timer.data = m;
	uv_timer_init(m->loop, &m->cycle_timer);
	m->cycle_timer.data = m;
	uv_timer_init(m->loop, &m->afs_timer); /* fairshare.c starts it */
	m->afs_timer.data = m;
	uv_timer_init(m->loop, &m->front_timer); /* admission.c starts it */
	m->front_timer.data = m;
	return 0;
}

/* The handles are closed by the owner's uv_walk; this frees the memory. */
void state_release(struct mgr *m)
{
	for (int k = 0; k < K_KINDS; k++) {
		keyset_release(&m->dirty[k]);
		keyset_release(&m->draining[k].batch);
		m->draining[k].left = 0;
		strmap_release(&m->deadlines[k], free);
		for (size_t i = 0; i < m->texts[k].cap; i++)
			free(m->texts[k].slots[i].key); /* its text's allocation */
		strmap_release(&m->texts[k], NULL);
		strmap_release(&m->views[k], view_free);
		strmap_release(&m->fresh[k], view_free);
	}
	keyset_release(&m->unsent);
	keyset_release(&m->admitted_now);
	keyset_release(&m->afs_seen);
	for (size_t i = 0; i < m->heap_len; i++)
		free(m->heap[i].key);
	free(m->heap);
	m->heap = NULL;
	m->heap_len = m->heap_cap = 0;
	records_release(m);
}
