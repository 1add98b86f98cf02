/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Per-flow table in a state region: see onvm_flow_table.h.
 *
 * Linear probing keeps a flow's probe sequence in a few adjacent cache lines;
 * backward-shift deletion keeps every remaining entry reachable from its home
 * slot without tombstones.  Each slot that changes is touched before it is
 * written, so a crash anywhere leaves the replica at the last batch and the
 * canonical copy restorable to it (the state layer's contract).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "onvm_flow_table.h"

#define FT_MAGIC UINT64_C(0x4f4e564d46543031) /* "ONVMFT01" */

/* The route of entries inserted now (onvm_ft_set_route): per thread, as
 * an NF's handlers run on one. */
static __thread uint32_t cur_route;

void
onvm_ft_set_route(uint32_t route)
{
	cur_route = route;
}

/* onvm_ft_set_expire_keep(), per thread as well. */
static __thread onvm_ft_filter_fn *expire_keep;
static __thread void *expire_keep_arg;

void
onvm_ft_set_expire_keep(onvm_ft_filter_fn *keep, void *arg)
{
	expire_keep = keep;
	expire_keep_arg = arg;
}

static inline void
ft_touch(struct onvm_ft *ft, const void *p, size_t len)
{
	if (ft->state != NULL)
		nf_state_touch_ptr(ft->state, p, len);
}

static inline struct onvm_ft_entry *
slot_entry(const struct onvm_ft *ft, uint32_t slot)
{
	return (struct onvm_ft_entry *)(ft->slots + (size_t)slot * ft->entry_size);
}

static inline void *
entry_value(struct onvm_ft_entry *e)
{
	return e + 1;
}

static inline struct onvm_ft_entry *
value_entry(const void *value)
{
	return (struct onvm_ft_entry *)value - 1;
}

static inline uint32_t
entry_slot(const struct onvm_ft *ft, const struct onvm_ft_entry *e)
{
	return (uint32_t)(((const uint8_t *)e - ft->slots) / ft->entry_size);
}

/* A 64-bit mix (splitmix64's finaliser) of the directional 5-tuple. */
static uint32_t
key_home(const struct onvm_ft *ft, const struct onvm_flow_key *k)
{
	uint64_t h = ((uint64_t)k->src_ip << 32 | k->dst_ip) ^
		     (((uint64_t)k->sport << 48 | (uint64_t)k->dport << 32 | k->proto) *
		      UINT64_C(0x9e3779b97f4a7c15));

	h ^= h >> 30;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	h ^= h >> 27;
	h *= UINT64_C(0x94d049bb133111eb);
	h ^= h >> 31;
	return (uint32_t)h & ft->mask;
}

static inline bool
key_eq(const struct onvm_flow_key *a, const struct onvm_flow_key *b)
{
	return a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->sport == b->sport &&
	       a->dport == b->dport && a->proto == b->proto;
}

static uint32_t
entry_size_for(uint32_t value_size)
{
	return (uint32_t)(sizeof(struct onvm_ft_entry) + ((value_size + 7u) & ~7u));
}

size_t
onvm_ft_mem_size(uint32_t capacity, uint32_t value_size)
{
	if (capacity < ONVM_FT_CAPACITY_MIN || capacity > ONVM_FT_CAPACITY_MAX ||
	    (capacity & (capacity - 1)) != 0 || value_size > ONVM_FT_VALUE_MAX)
		return 0;
	return sizeof(struct onvm_ft_hdr) + (size_t)capacity * entry_size_for(value_size);
}

int
onvm_ft_open(struct onvm_ft *ft, struct nf_state_set *state, void *mem, size_t len,
	     uint32_t capacity, uint32_t value_size, char *err, size_t errlen)
{
	size_t need = onvm_ft_mem_size(capacity, value_size);
	struct onvm_ft_hdr *h = mem;

	if (need == 0 || mem == NULL || ((uintptr_t)mem & 7) != 0) {
		snprintf(err, errlen, "flow table: capacity %u (a power of two %u..%u) or value size %u (<= %u) out of range",
			 capacity, ONVM_FT_CAPACITY_MIN, ONVM_FT_CAPACITY_MAX, value_size,
			 ONVM_FT_VALUE_MAX);
		return -EINVAL;
	}
	if (len < need) {
		snprintf(err, errlen, "flow table: %u entries need %zu bytes, have %zu", capacity,
			 need, len);
		return -EINVAL;
	}
	*ft = (struct onvm_ft){
		.hdr = h,
		.slots = (uint8_t *)(h + 1),
		.mask = capacity - 1,
		.entry_size = entry_size_for(value_size),
		.state = state,
	};
	if (h->magic == 0) {
		/* Fresh region (state regions start zeroed): the entries are
		 * already empty, only the header needs writing.  Memory that is
		 * not all zero is not fresh: its bytes would read as entries. */
		const uint64_t *w = mem;

		for (size_t i = 0; i < need / sizeof(*w); i++)
			if (w[i] != 0) {
				snprintf(err, errlen,
					 "flow table: memory holds something else (not zeroed, no table header)");
				return -EBADMSG;
			}
		ft_touch(ft, h, sizeof(*h));
		*h = (struct onvm_ft_hdr){
			.capacity = capacity,
			.value_size = value_size,
			.entry_size = ft->entry_size,
		};
		h->magic = FT_MAGIC;
		return 0;
	}
	if (h->magic != FT_MAGIC) {
		snprintf(err, errlen, "flow table: memory holds something else (magic %#llx)",
			 (unsigned long long)h->magic);
		return -EBADMSG;
	}
	if (h->capacity != capacity || h->value_size != value_size ||
	    h->entry_size != ft->entry_size || h->count > capacity ||
	    h->sweep_cursor > ft->mask) {
		snprintf(err, errlen,
			 "flow table: found %u entries of %u bytes, asked for %u of %u (same arguments as the NF that created it?)",
			 h->capacity, h->value_size, capacity, value_size);
		return -EBADMSG;
	}
	return 0;
}

int
onvm_ft_attach(struct onvm_ft *ft, struct nf_state_set *state, void *mem, size_t len)
{
	const struct onvm_ft_hdr *h = mem;
	char err[160];

	if (mem == NULL || ((uintptr_t)mem & 7) != 0 || len < sizeof(*h) || h->magic != FT_MAGIC)
		return -EBADMSG;
	return onvm_ft_open(ft, state, mem, len, h->capacity, h->value_size, err, sizeof(err)) == 0
		       ? 0
		       : -EBADMSG;
}

void *
onvm_ft_lookup(const struct onvm_ft *ft, const struct onvm_flow_key *key)
{
	uint32_t i = key_home(ft, key);

	for (;;) {
		struct onvm_ft_entry *e = slot_entry(ft, i);

		if (!e->used)
			return NULL;
		if (key_eq(&e->key, key))
			return entry_value(e);
		i = (i + 1) & ft->mask;
	}
}

void *
onvm_ft_insert(struct onvm_ft *ft, const struct onvm_flow_key *key, uint64_t now_ns, bool *created)
{
	uint32_t i = key_home(ft, key);
	struct onvm_ft_entry *e;

	if (created != NULL)
		*created = false;
	/* The load limit guarantees an empty slot, so the probe ends. */
	for (;; i = (i + 1) & ft->mask) {
		e = slot_entry(ft, i);
		if (!e->used)
			break;
		if (key_eq(&e->key, key)) {
			ft_touch(ft, e, ft->entry_size);
			return entry_value(e);
		}
	}
	if (ft->hdr->count >= (ft->mask + 1) - (ft->mask + 1) / 4) {
		ft_touch(ft, &ft->hdr->stats.full, sizeof(ft->hdr->stats.full));
		ft->hdr->stats.full++;
		return NULL;
	}
	ft_touch(ft, e, ft->entry_size);
	ft_touch(ft, ft->hdr, sizeof(*ft->hdr));
	memset(e, 0, ft->entry_size);
	e->key = *key;
	e->key.pad[0] = e->key.pad[1] = e->key.pad[2] = 0;
	e->last_seen_ns = now_ns;
	e->created_ns = now_ns;
	e->used = 1;
	e->route = cur_route;
	ft->hdr->count++;
	ft->hdr->stats.inserts++;
	if (created != NULL)
		*created = true;
	return entry_value(e);
}

void
onvm_ft_touch_value(struct onvm_ft *ft, const void *value)
{
	ft_touch(ft, value, ft->entry_size - sizeof(struct onvm_ft_entry));
}

void
onvm_ft_seen(struct onvm_ft *ft, void *value, uint64_t now_ns)
{
	struct onvm_ft_entry *e = value_entry(value);

	if (e->last_seen_ns == now_ns)
		return;
	ft_touch(ft, &e->last_seen_ns, sizeof(e->last_seen_ns));
	e->last_seen_ns = now_ns;
}

/* Empty slot i and pull later entries of the cluster back into the hole
 * whenever their home slot does not lie (cyclically) in (hole, j]. */
static void
remove_slot(struct onvm_ft *ft, uint32_t i)
{
	uint32_t hole = i, j = i;

	for (;;) {
		struct onvm_ft_entry *e;
		uint32_t home;

		j = (j + 1) & ft->mask;
		e = slot_entry(ft, j);
		if (!e->used)
			break;
		home = key_home(ft, &e->key);
		/* Stays if home is in (hole, j] cyclically. */
		if (hole <= j ? (home > hole && home <= j) : (home > hole || home <= j))
			continue;
		ft_touch(ft, slot_entry(ft, hole), ft->entry_size);
		memcpy(slot_entry(ft, hole), e, ft->entry_size);
		hole = j;
	}
	ft_touch(ft, slot_entry(ft, hole), ft->entry_size);
	memset(slot_entry(ft, hole), 0, ft->entry_size);
	ft_touch(ft, ft->hdr, sizeof(*ft->hdr));
	ft->hdr->count--;
}

void
onvm_ft_remove(struct onvm_ft *ft, void *value)
{
	remove_slot(ft, entry_slot(ft, value_entry(value)));
	ft->hdr->stats.removes++; /* header touched by remove_slot() */
}

uint32_t
onvm_ft_expire(struct onvm_ft *ft, uint64_t now_ns, uint64_t idle_ns, uint32_t max_slots,
	       onvm_ft_evict_fn *fn, void *arg)
{
	uint32_t i = ft->hdr->sweep_cursor, removed = 0;

	if (max_slots > ft->mask + 1)
		max_slots = ft->mask + 1;
	/* n counts slots passed; a removal stays on its slot (at most count
	 * times), so a budget of the capacity is one whole sweep. */
	for (uint32_t n = 0; n < max_slots;) {
		struct onvm_ft_entry *e = slot_entry(ft, i);

		if (e->used && now_ns >= e->last_seen_ns && now_ns - e->last_seen_ns >= idle_ns &&
		    (expire_keep == NULL || !expire_keep(expire_keep_arg, &e->key, e->route))) {
			if (fn != NULL)
				fn(arg, &e->key, entry_value(e));
			remove_slot(ft, i);
			ft->hdr->stats.expired++;
			removed++;
			/* Backward shift may have moved an unseen entry into
			 * slot i: look at it again. */
			continue;
		}
		i = (i + 1) & ft->mask;
		n++;
	}
	if (ft->hdr->sweep_cursor != i) {
		ft_touch(ft, &ft->hdr->sweep_cursor, sizeof(ft->hdr->sweep_cursor));
		ft->hdr->sweep_cursor = i;
	}
	return removed;
}

void *
onvm_ft_slot_value(const struct onvm_ft *ft, uint32_t slot)
{
	struct onvm_ft_entry *e;

	if (slot > ft->mask)
		return NULL;
	e = slot_entry(ft, slot);
	return e->used ? entry_value(e) : NULL;
}

const struct onvm_flow_key *
onvm_ft_key(const struct onvm_ft *ft, const void *value)
{
	(void)ft;
	return &value_entry(value)->key;
}

uint64_t
onvm_ft_last_seen(const struct onvm_ft *ft, const void *value)
{
	(void)ft;
	return value_entry(value)->last_seen_ns;
}

/* ---- moving flows between instances ------------------------------------- */

size_t
onvm_ft_record_size(const struct onvm_ft *ft)
{
	return sizeof(struct onvm_ft_record) + (ft->entry_size - sizeof(struct onvm_ft_entry));
}

static uint64_t
age(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : 0; /* (a clock read before it was set) */
}

size_t
onvm_ft_export(const struct onvm_ft *ft, onvm_ft_filter_fn *want, void *arg, uint64_t now_ns,
	       uint32_t *cursor, void *buf, size_t len, uint32_t *nrec)
{
	size_t rec_size = onvm_ft_record_size(ft), value_len = rec_size - sizeof(struct onvm_ft_record);
	size_t used = 0;
	uint32_t i = *cursor, n = 0;

	for (; i <= ft->mask; i++) {
		struct onvm_ft_entry *e = slot_entry(ft, i);
		struct onvm_ft_record r;

		if (!e->used || (want != NULL && !want(arg, &e->key, e->route)))
			continue;
		if (len - used < rec_size)
			break; /* (resumed from this slot) */
		memset(&r, 0, sizeof(r));
		r.key = e->key;
		r.idle_ns = age(now_ns, e->last_seen_ns);
		r.age_ns = age(now_ns, e->created_ns);
		r.value_size = ft->hdr->value_size;
		r.magic = ONVM_FT_RECORD_MAGIC;
		r.route = e->route;
		memcpy((uint8_t *)buf + used, &r, sizeof(r));
		memcpy((uint8_t *)buf + used + sizeof(r), entry_value(e), value_len);
		used += rec_size;
		n++;
	}
	*cursor = i;
	if (nrec != NULL)
		*nrec = n;
	return used;
}

static const char *const import_errors[] = {
	[ONVM_FT_IMPORT_OK] = "ok",
	[ONVM_FT_IMPORT_SHORT] = "short",
	[ONVM_FT_IMPORT_MAGIC] = "magic",
	[ONVM_FT_IMPORT_VALUE_SIZE] = "value_size",
	[ONVM_FT_IMPORT_KEY_PAD] = "key_pad",
	[ONVM_FT_IMPORT_FULL] = "full",
};

const char *
onvm_ft_import_error_str(enum onvm_ft_import_error e)
{
	return (unsigned int)e < sizeof(import_errors) / sizeof(import_errors[0]) ? import_errors[e]
										   : "unknown";
}

uint32_t
onvm_ft_import(struct onvm_ft *ft, const void *buf, size_t len, uint64_t now_ns,
	       enum onvm_ft_import_error *error)
{
	size_t rec_size = onvm_ft_record_size(ft), value_len = rec_size - sizeof(struct onvm_ft_record);
	size_t at = 0;
	enum onvm_ft_import_error err = ONVM_FT_IMPORT_OK;
	uint32_t n = 0;

	while (at < len) {
		struct onvm_ft_record r;
		struct onvm_ft_entry *e;
		void *value;

		if (len - at < sizeof(r)) {
			err = ONVM_FT_IMPORT_SHORT;
			break;
		}
		memcpy(&r, (const uint8_t *)buf + at, sizeof(r));
		if (r.magic != ONVM_FT_RECORD_MAGIC) {
			err = ONVM_FT_IMPORT_MAGIC;
			break;
		}
		/* (exactly: a value grown within its 8-byte rounding is
		 * another version of it all the same) */
		if (r.value_size != ft->hdr->value_size) {
			err = ONVM_FT_IMPORT_VALUE_SIZE;
			break;
		}
		if (len - at < rec_size) {
			err = ONVM_FT_IMPORT_SHORT;
			break;
		}
		if (r.key.pad[0] | r.key.pad[1] | r.key.pad[2] | r.reserved) {
			err = ONVM_FT_IMPORT_KEY_PAD;
			break;
		}
		value = onvm_ft_insert(ft, &r.key, now_ns, NULL);
		if (value == NULL) {
			err = ONVM_FT_IMPORT_FULL;
			break;
		}
		/* (insert touched the whole entry) */
		e = value_entry(value);
		e->last_seen_ns = r.idle_ns <= now_ns ? now_ns - r.idle_ns : 0;
		e->created_ns = r.age_ns <= now_ns ? now_ns - r.age_ns : 0;
		e->route = r.route;
		memcpy(value, (const uint8_t *)buf + at + sizeof(r), value_len);
		at += rec_size;
		n++;
	}
	if (error != NULL)
		*error = err;
	return n;
}

uint32_t
onvm_ft_remove_if(struct onvm_ft *ft, onvm_ft_filter_fn *want, void *arg)
{
	uint32_t removed = 0;

	for (uint32_t i = 0; i <= ft->mask;) {
		struct onvm_ft_entry *e = slot_entry(ft, i);

		if (e->used && (want == NULL || want(arg, &e->key, e->route))) {
			remove_slot(ft, i);
			ft->hdr->stats.removes++; /* (header touched by remove_slot) */
			removed++;
			/* Backward shift may have moved another entry into
			 * slot i: look at it again. */
			continue;
		}
		i++;
	}
	return removed;
}

uint64_t
onvm_ft_created(const struct onvm_ft *ft, const void *value)
{
	(void)ft;
	return value_entry(value)->created_ns;
}
