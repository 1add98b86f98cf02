/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_replica.c -- a replica's copy of an NF's state regions.  The replica
 * node does not run the NF and does not know its regions' sizes: it keeps
 * what the updates wrote, in 4 KB pages made on first write (a region
 * starts all zero, in the NF as here), found by (region, page) in an
 * open-addressed table.  Records may cover any bytes (an update cut into
 * parts cuts records too), so a write may span pages.  The memory is one
 * arena of the chain's replica_mb, taken at start-up: the data path never
 * allocates.
 */
#include <string.h>

#include <rte_malloc.h>

#include "ftc_priv.h"

int
ftc_store_init(struct ftc_store *s, uint64_t bytes)
{
	memset(s, 0, sizeof(*s));
	s->pages = (uint32_t)(bytes >> FTC_PAGE_SHIFT);
	s->slots = 1;
	while (s->slots < 2u * s->pages)
		s->slots <<= 1;
	s->keys = rte_zmalloc("ftc_store_keys", (size_t)s->slots * sizeof(*s->keys), 64);
	s->at = rte_zmalloc("ftc_store_at", (size_t)s->slots * sizeof(*s->at), 64);
	s->arena = rte_zmalloc("ftc_store_arena", (size_t)s->pages << FTC_PAGE_SHIFT, 64);
	if (s->keys == NULL || s->at == NULL || s->arena == NULL) {
		rte_free(s->keys);
		rte_free(s->at);
		rte_free(s->arena);
		memset(s, 0, sizeof(*s));
		return -1;
	}
	return 0;
}

static inline uint64_t
key_of(uint16_t region, uint32_t page)
{
	return 1 + (((uint64_t)region << 32) | page);
}

static inline uint32_t
hash_of(uint64_t key, uint32_t slots)
{
	return (uint32_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (slots - 1);
}

/* The slot of (region, page): found, or the empty one it would take. */
static uint32_t
find(const struct ftc_store *s, uint64_t key)
{
	uint32_t i = hash_of(key, s->slots);

	while (s->keys[i] != 0 && s->keys[i] != key)
		i = (i + 1) & (s->slots - 1);
	return i;
}

const uint8_t *
ftc_store_page(const struct ftc_store *s, uint16_t region, uint32_t offset)
{
	uint32_t i;

	if (s->slots == 0)
		return NULL;
	i = find(s, key_of(region, offset >> FTC_PAGE_SHIFT));
	return s->keys[i] == 0 ? NULL : s->arena + ((size_t)s->at[i] << FTC_PAGE_SHIFT);
}

int
ftc_store_write(struct ftc_store *s, uint16_t region, uint32_t offset, const uint8_t *b,
		uint32_t len)
{
	if ((uint64_t)offset + len > UINT32_MAX)
		return -1; /* (no region is that large) */
	while (len > 0) {
		const uint32_t page = offset >> FTC_PAGE_SHIFT, in = offset & (FTC_PAGE - 1);
		const uint32_t n = len < FTC_PAGE - in ? len : FTC_PAGE - in;
		const uint64_t key = key_of(region, page);
		uint32_t i = find(s, key);

		if (s->keys[i] == 0) {
			/* (the table has twice the arena's pages: never full first) */
			if (s->used == s->pages)
				return -1;
			s->keys[i] = key;
			s->at[i] = s->used++;
		}
		memcpy(s->arena + ((size_t)s->at[i] << FTC_PAGE_SHIFT) + in, b, n);
		offset += n;
		b += n;
		len -= n;
	}
	return 0;
}

void
ftc_store_clear(struct ftc_store *s)
{
	if (s->slots == 0)
		return;
	memset(s->keys, 0, (size_t)s->slots * sizeof(*s->keys));
	memset(s->arena, 0, (size_t)s->used << FTC_PAGE_SHIFT);
	s->used = 0;
}
