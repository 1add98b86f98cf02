/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_ftc_ring.c -- the NF -> manager ring of an FTC chain's updates
 * (onvm_ftc_ring.h).  `prod` and `cons` count bytes ever written and
 * taken; an entry's place is its count modulo the size.  The producer
 * writes an entry, then stores prod (release); the consumer loads prod
 * (acquire) before it reads an entry, and stores cons (release) after, so
 * the producer reuses nothing still being read.
 */
#include <string.h>

#include "onvm_ftc_ring.h"

#define ALIGN16(x) (((x) + 15u) & ~(uint64_t)15u)
#define SKIP_LEN UINT32_MAX

size_t
onvm_ftc_ring_area(size_t data_bytes)
{
	return sizeof(struct onvm_ftc_ring) + ALIGN16(data_bytes);
}

int
onvm_ftc_ring_format(void *mem, size_t area)
{
	struct onvm_ftc_ring *r = mem;

	if (area < sizeof(*r) + 4 * 64)
		return -1;
	memset(r, 0, sizeof(*r));
	r->size = (area - sizeof(*r)) & ~(uint64_t)15u;
	__atomic_store_n(&r->magic, ONVM_FTC_RING_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

struct onvm_ftc_ring *
onvm_ftc_ring_attach(void *mem, size_t area)
{
	struct onvm_ftc_ring *r = mem;

	if (mem == NULL || area < sizeof(*r) ||
	    __atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) != ONVM_FTC_RING_MAGIC ||
	    r->size == 0 || r->size % 16 != 0 || r->size > area - sizeof(*r))
		return NULL;
	return r;
}

uint32_t
onvm_ftc_ring_max_update(const struct onvm_ftc_ring *r)
{
	uint64_t q = r->size / 4;

	return q > ONVM_FTC_ENTRY_HEAD ? (uint32_t)(q - ONVM_FTC_ENTRY_HEAD) : 0;
}

static inline void
put_head(uint8_t *at, uint32_t len, uint64_t seq)
{
	const uint32_t zero = 0;

	memcpy(at, &len, 4);
	memcpy(at + 4, &zero, 4);
	memcpy(at + 8, &seq, 8);
}

uint8_t *
onvm_ftc_ring_reserve(struct onvm_ftc_ring *r, uint32_t len)
{
	const uint64_t need = ONVM_FTC_ENTRY_HEAD + ALIGN16(len);
	const uint64_t prod = r->prod; /* the producer's own */
	const uint64_t cons = __atomic_load_n(&r->cons, __ATOMIC_ACQUIRE);
	const uint64_t idx = prod % r->size;
	uint64_t skip = 0;

	if (len > onvm_ftc_ring_max_update(r))
		return NULL;
	if (idx + need > r->size)
		skip = r->size - idx; /* never wrap: fill the end first */
	if (r->size - (prod - cons) < skip + need)
		return NULL;
	if (skip > 0)
		put_head(r->data + idx, SKIP_LEN, 0);
	r->prod_next = prod + skip + need;
	return r->data + (prod + skip) % r->size + ONVM_FTC_ENTRY_HEAD;
}

void
onvm_ftc_ring_publish(struct onvm_ftc_ring *r, uint64_t seq, uint32_t len)
{
	const uint64_t end = r->prod_next;
	const uint64_t at = end - ONVM_FTC_ENTRY_HEAD - ALIGN16(len);

	put_head(r->data + at % r->size, len, seq);
	__atomic_store_n(&r->prod, end, __ATOMIC_RELEASE);
}

bool
onvm_ftc_ring_peek(struct onvm_ftc_ring *r, struct onvm_ftc_entry *e)
{
	for (;;) {
		const uint64_t cons = r->cons; /* the consumer's own */
		const uint64_t prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);
		const uint64_t idx = cons % r->size;
		uint32_t len;

		if (cons == prod)
			return false;
		memcpy(&len, r->data + idx, 4);
		if (len == SKIP_LEN) {
			__atomic_store_n(&r->cons, cons + (r->size - idx), __ATOMIC_RELEASE);
			continue;
		}
		memcpy(&e->seq, r->data + idx + 8, 8);
		e->len = len;
		e->records = r->data + idx + ONVM_FTC_ENTRY_HEAD;
		return true;
	}
}

void
onvm_ftc_ring_take(struct onvm_ftc_ring *r)
{
	const uint64_t cons = r->cons;
	uint32_t len;

	memcpy(&len, r->data + cons % r->size, 4);
	__atomic_store_n(&r->cons, cons + ONVM_FTC_ENTRY_HEAD + ALIGN16(len), __ATOMIC_RELEASE);
}
