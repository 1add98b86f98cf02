/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * state_pool.c -- first-fit carving of the state pool (see state_pool.h).
 * Blocks are few (one per NF instance) and allocated at NF start, so a sorted
 * array scanned linearly is all the structure this needs.
 */
#include <errno.h>
#include <string.h>

#include "state_pool.h"

static uint64_t
align_up(uint64_t x)
{
	return (x + MGR_STATE_POOL_ALIGN - 1) & ~(uint64_t)(MGR_STATE_POOL_ALIGN - 1);
}

void
mgr_state_pool_init(struct mgr_state_pool *p, uint64_t size)
{
	memset(p, 0, sizeof(*p));
	p->size = size & ~(uint64_t)(MGR_STATE_POOL_ALIGN - 1);
}

int64_t
mgr_state_pool_alloc(struct mgr_state_pool *p, uint64_t len)
{
	uint64_t start = 0;
	uint32_t i;

	if (len == 0 || len > p->size)
		return len == 0 ? -EINVAL : -ENOMEM;
	if (p->n >= MGR_STATE_POOL_MAX_BLOCKS)
		return -ENOMEM;
	len = align_up(len);
	/* The first gap that fits: before block i, or after the last one. */
	for (i = 0; i <= p->n; i++) {
		uint64_t end = i < p->n ? p->used[i].off : p->size;

		if (end >= start && end - start >= len)
			break;
		if (i < p->n)
			start = align_up(p->used[i].off + p->used[i].len);
	}
	if (i > p->n)
		return -ENOMEM;
	memmove(&p->used[i + 1], &p->used[i], (p->n - i) * sizeof(p->used[0]));
	p->used[i].off = start;
	p->used[i].len = len;
	p->n++;
	return (int64_t)start;
}

int
mgr_state_pool_reserve(struct mgr_state_pool *p, uint64_t off, uint64_t len)
{
	uint32_t i;

	if (len == 0 || (off & (MGR_STATE_POOL_ALIGN - 1)) != 0)
		return -EINVAL;
	len = align_up(len);
	if (off > p->size || len > p->size - off)
		return -ERANGE;
	if (p->n >= MGR_STATE_POOL_MAX_BLOCKS)
		return -ENOMEM;
	for (i = 0; i < p->n && p->used[i].off < off; i++)
		;
	if ((i > 0 && p->used[i - 1].off + p->used[i - 1].len > off) ||
	    (i < p->n && off + len > p->used[i].off))
		return -EBUSY;
	memmove(&p->used[i + 1], &p->used[i], (p->n - i) * sizeof(p->used[0]));
	p->used[i].off = off;
	p->used[i].len = len;
	p->n++;
	return 0;
}

int
mgr_state_pool_free(struct mgr_state_pool *p, uint64_t off)
{
	for (uint32_t i = 0; i < p->n; i++) {
		if (p->used[i].off != off)
			continue;
		memmove(&p->used[i], &p->used[i + 1], (p->n - i - 1) * sizeof(p->used[0]));
		p->n--;
		return 0;
	}
	return -ENOENT;
}

uint64_t
mgr_state_pool_in_use(const struct mgr_state_pool *p)
{
	uint64_t t = 0;

	for (uint32_t i = 0; i < p->n; i++)
		t += p->used[i].len;
	return t;
}
