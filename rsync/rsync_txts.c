/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * TxTs table: linear probing over a power-of-two array, at most 3/4 full so
 * a probe for an absent key ends quickly.  Deletion (garbage collection)
 * shifts the following entries of the cluster back instead of leaving
 * tombstones, so lookups never slow down as flows come and go.
 */
#include <errno.h>
#include <string.h>

#include "rsync_txts.h"

/* A 64-bit finaliser (xor-shift / multiply rounds): every key bit reaches
 * every hash bit, so the low bits used as the index are well spread. */
static inline uint64_t
txts_mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return x;
}

static inline uint32_t
txts_home(const struct rsync_txts *t, const struct rsync_flow *f)
{
	uint64_t w0 = (uint64_t)f->src_ip << 32 | f->dst_ip;
	uint64_t w1 = (uint64_t)f->sport << 24 | (uint64_t)f->dport << 8 | f->proto;

	return (uint32_t)(txts_mix(txts_mix(w0 ^ t->seed) ^ w1) & t->mask);
}

static inline bool
txts_key_eq(const struct rsync_flow *a, const struct rsync_flow *b)
{
	return a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->sport == b->sport &&
	       a->dport == b->dport && a->proto == b->proto;
}

size_t
rsync_txts_mem_size(uint32_t capacity, bool ordered)
{
	size_t sz = (size_t)capacity * sizeof(struct rsync_txts_slot);

	if (ordered)
		sz += (size_t)capacity * sizeof(uint32_t);
	return sz;
}

int
rsync_txts_init(struct rsync_txts *t, void *mem, uint32_t capacity, bool ordered, uint64_t seed)
{
	if (capacity < 4 || (capacity & (capacity - 1)) != 0 || mem == NULL)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->slots = mem;
	t->mask = capacity - 1;
	t->max_n = capacity / 4 * 3;
	t->seed = seed;
	if (ordered)
		t->order = (uint32_t *)(t->slots + capacity);
	memset(t->slots, 0, (size_t)capacity * sizeof(*t->slots));
	return 0;
}

int
rsync_txts_raise(struct rsync_txts *t, const struct rsync_flow *flow, uint64_t ts)
{
	uint32_t i = txts_home(t, flow);
	uint64_t probes = 1;

	if (ts == 0)
		return -EINVAL;
	for (;; i = (i + 1) & t->mask, probes++) {
		struct rsync_txts_slot *s = &t->slots[i];

		if (s->ts == 0)
			break;
		if (txts_key_eq(&s->key, flow)) {
			if (ts > s->ts) {
				s->ts = ts;
				t->stats.raised++;
			}
			return 0;
		}
	}
	if (t->n >= t->max_n) {
		t->stats.full++;
		return -ENOSPC;
	}
	t->slots[i].key = *flow;
	memset(t->slots[i].key.pad, 0, sizeof(t->slots[i].key.pad));
	t->slots[i].ts = ts;
	if (t->order != NULL)
		t->order[t->n] = i;
	t->n++;
	t->stats.raised++;
	t->stats.inserted++;
	if (probes > t->stats.probes_max)
		t->stats.probes_max = probes;
	return 0;
}

uint64_t
rsync_txts_get(const struct rsync_txts *t, const struct rsync_flow *flow)
{
	for (uint32_t i = txts_home(t, flow);; i = (i + 1) & t->mask) {
		const struct rsync_txts_slot *s = &t->slots[i];

		if (s->ts == 0)
			return 0;
		if (txts_key_eq(&s->key, flow))
			return s->ts;
	}
}

/* Empty slot `hole` and pull back every later entry of its cluster that may
 * legally sit there (its home is not cyclically inside (hole, j]). */
static void
txts_delete_at(struct rsync_txts *t, uint32_t hole)
{
	uint32_t j = hole;

	for (;;) {
		j = (j + 1) & t->mask;
		if (t->slots[j].ts == 0)
			break;
		uint32_t home = txts_home(t, &t->slots[j].key);
		/* distance from home to j vs from hole to j, both cyclic */
		if (((j - home) & t->mask) >= ((j - hole) & t->mask)) {
			t->slots[hole] = t->slots[j];
			hole = j;
		}
	}
	t->slots[hole].ts = 0;
	t->n--;
}

uint32_t
rsync_txts_gc(struct rsync_txts *t, uint64_t watermark)
{
	uint32_t removed = 0;

	if (t->order != NULL)
		return 0;
	/* A deletion may pull an entry from a later slot into slot i (or, at
	 * the wrap, into slots already passed: those were kept and are kept
	 * again), so slot i is examined again after each deletion. */
	for (uint32_t i = 0; i <= t->mask;) {
		if (t->slots[i].ts != 0 && t->slots[i].ts <= watermark) {
			txts_delete_at(t, i);
			removed++;
			continue;
		}
		i++;
	}
	t->stats.gc_removed += removed;
	return removed;
}

void
rsync_txts_clear(struct rsync_txts *t)
{
	if (t->order != NULL) {
		for (uint32_t k = 0; k < t->n; k++)
			t->slots[t->order[k]].ts = 0;
	} else {
		memset(t->slots, 0, ((size_t)t->mask + 1) * sizeof(*t->slots));
	}
	t->n = 0;
}

const struct rsync_txts_slot *
rsync_txts_at(const struct rsync_txts *t, uint32_t i)
{
	if (t->order == NULL || i >= t->n)
		return NULL;
	return &t->slots[t->order[i]];
}
