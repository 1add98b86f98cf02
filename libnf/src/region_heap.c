/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * malloc/free inside a state region: see onvm_region_heap.h.
 *
 * Blocks are 2^k bytes (k = 5..30), a 32-byte header followed by the
 * payload.  A freed block goes on its class's free list and is reused as is
 * (no splitting or coalescing: the libraries we serve allocate the same few
 * sizes over and over -- nDPI's flow buffers -- and a state region is sized
 * for the worst case anyway).  The header's links are heap offsets, so the
 * heap means the same thing wherever the region is mapped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "onvm_region_heap.h"

#define RH_MAGIC       UINT64_C(0x4f4e564d52483031) /* "ONVMRH01" */
#define RH_BLOCK_MAGIC 0xb10cu
#define RH_F_LIVE      1u

struct rh_block {
	uint16_t magic;
	uint8_t cls;   /* block size is 1 << (cls + ONVM_RH_MIN_SHIFT) */
	uint8_t flags;
	uint32_t asked; /* payload bytes requested */
	uint64_t next;	/* free list, or owner list when live */
	uint64_t prev;	/* owner list */
	uint64_t owner; /* offset of the struct onvm_rh_owner, 0 = none */
};

_Static_assert(sizeof(struct rh_block) == 32, "block header keeps payloads 16-aligned");

static inline void
rh_touch(struct onvm_rh *h, const void *p, size_t len)
{
	if (h->state != NULL)
		nf_state_touch_ptr(h->state, p, len);
}

static inline struct rh_block *
blk(const struct onvm_rh *h, uint64_t off)
{
	return (struct rh_block *)(h->base + off);
}

static inline uint64_t
class_bytes(unsigned int cls)
{
	return UINT64_C(1) << (cls + ONVM_RH_MIN_SHIFT);
}

/* Heap offset of the first block: just past the header, 64-aligned. */
static inline uint64_t
first_block(void)
{
	return (sizeof(struct onvm_rh_hdr) + 63) & ~UINT64_C(63);
}

int
onvm_rh_open(struct onvm_rh *h, struct nf_state_set *state, void *mem, size_t len, char *err,
	     size_t errlen)
{
	struct onvm_rh_hdr *hdr = mem;

	if (mem == NULL || ((uintptr_t)mem & 63) != 0 || len < first_block() + 4096) {
		snprintf(err, errlen, "region heap: need 64-aligned memory of at least %llu bytes",
			 (unsigned long long)(first_block() + 4096));
		return -EINVAL;
	}
	*h = (struct onvm_rh){.hdr = hdr, .base = mem, .state = state};
	if (hdr->magic == 0) {
		rh_touch(h, hdr, sizeof(*hdr));
		memset(hdr, 0, sizeof(*hdr));
		hdr->size = len;
		hdr->top = first_block();
		hdr->stats.peak_used = hdr->top;
		hdr->magic = RH_MAGIC;
		return 0;
	}
	if (hdr->magic != RH_MAGIC) {
		snprintf(err, errlen, "region heap: memory holds something else");
		return -EBADMSG;
	}
	if (hdr->size != len || hdr->top < first_block() || hdr->top > len) {
		snprintf(err, errlen,
			 "region heap: formatted for %llu bytes (top %llu), region has %zu",
			 (unsigned long long)hdr->size, (unsigned long long)hdr->top, len);
		return -EBADMSG;
	}
	h->attached = true;
	return 0;
}

bool
onvm_rh_was_formatted(const struct onvm_rh *h)
{
	return h->attached;
}

/* A live block's header from a payload pointer, or NULL if p is not one. */
static struct rh_block *
live_block(const struct onvm_rh *h, const void *p)
{
	uint64_t off;
	struct rh_block *b;

	if ((const uint8_t *)p < h->base + first_block() + sizeof(struct rh_block) ||
	    (const uint8_t *)p >= h->base + h->hdr->top)
		return NULL;
	off = (uint64_t)((const uint8_t *)p - h->base) - sizeof(struct rh_block);
	b = blk(h, off);
	if ((off & 15) != 0 || b->magic != RH_BLOCK_MAGIC || !(b->flags & RH_F_LIVE) ||
	    b->cls >= ONVM_RH_CLASSES || off + class_bytes(b->cls) > h->hdr->top)
		return NULL;
	return b;
}

void *
onvm_rh_alloc(struct onvm_rh *h, size_t size)
{
	struct onvm_rh_hdr *hdr = h->hdr;
	unsigned int cls = 0;
	uint64_t off;
	struct rh_block *b;

	while (cls < ONVM_RH_CLASSES && class_bytes(cls) - sizeof(struct rh_block) < size)
		cls++;
	if (cls == ONVM_RH_CLASSES || size > UINT32_MAX)
		goto full;
	off = hdr->free_head[cls];
	if (off != 0) {
		b = blk(h, off);
		rh_touch(h, b, class_bytes(cls));
		rh_touch(h, &hdr->free_head[cls], sizeof(hdr->free_head[cls]));
		hdr->free_head[cls] = b->next;
	} else {
		if (hdr->top + class_bytes(cls) > hdr->size)
			goto full;
		off = hdr->top;
		b = blk(h, off);
		rh_touch(h, b, class_bytes(cls));
		rh_touch(h, &hdr->top, sizeof(hdr->top));
		hdr->top += class_bytes(cls);
	}
	rh_touch(h, &hdr->stats, sizeof(hdr->stats));
	*b = (struct rh_block){.magic = RH_BLOCK_MAGIC, .cls = (uint8_t)cls, .flags = RH_F_LIVE,
			       .asked = (uint32_t)size};
	if (h->owner != NULL) {
		struct onvm_rh_owner *o = h->owner;

		rh_touch(h, o, sizeof(*o));
		b->owner = onvm_rh_off(h, o);
		b->next = o->head;
		if (o->head != 0) {
			rh_touch(h, &blk(h, o->head)->prev, sizeof(uint64_t));
			blk(h, o->head)->prev = off;
		}
		o->head = off;
		o->blocks++;
	}
	hdr->stats.allocs++;
	hdr->stats.live_blocks++;
	hdr->stats.live_bytes += size;
	if (hdr->top > hdr->stats.peak_used)
		hdr->stats.peak_used = hdr->top;
	return b + 1;
full:
	rh_touch(h, &hdr->stats.failed, sizeof(hdr->stats.failed));
	hdr->stats.failed++;
	return NULL;
}

void *
onvm_rh_calloc(struct onvm_rh *h, size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	p = onvm_rh_alloc(h, n * size);
	if (p != NULL)
		memset(p, 0, n * size); /* touched by alloc */
	return p;
}

/* Take block `off` off its owner's list (block and neighbours touched). */
static void
unlink_owned(struct onvm_rh *h, uint64_t off)
{
	struct rh_block *b = blk(h, off);
	struct onvm_rh_owner *o = onvm_rh_ptr(h, b->owner);

	rh_touch(h, b, sizeof(*b));
	if (b->prev != 0) {
		rh_touch(h, &blk(h, b->prev)->next, sizeof(uint64_t));
		blk(h, b->prev)->next = b->next;
	} else {
		rh_touch(h, &o->head, sizeof(o->head));
		o->head = b->next;
	}
	if (b->next != 0) {
		rh_touch(h, &blk(h, b->next)->prev, sizeof(uint64_t));
		blk(h, b->next)->prev = b->prev;
	}
	rh_touch(h, &o->blocks, sizeof(o->blocks));
	o->blocks--;
	b->owner = b->next = b->prev = 0;
}

void
onvm_rh_free(struct onvm_rh *h, void *p)
{
	struct onvm_rh_hdr *hdr = h->hdr;
	struct rh_block *b;
	uint64_t off;

	if (p == NULL)
		return;
	b = live_block(h, p);
	rh_touch(h, &hdr->stats, sizeof(hdr->stats));
	if (b == NULL) {
		hdr->stats.bad_frees++;
		return;
	}
	off = onvm_rh_off(h, b);
	if (b->owner != 0)
		unlink_owned(h, off);
	rh_touch(h, b, sizeof(*b));
	rh_touch(h, &hdr->free_head[b->cls], sizeof(uint64_t));
	hdr->stats.frees++;
	hdr->stats.live_blocks--;
	hdr->stats.live_bytes -= b->asked;
	b->flags = 0;
	b->next = hdr->free_head[b->cls];
	hdr->free_head[b->cls] = off;
}

size_t
onvm_rh_usable(const struct onvm_rh *h, const void *p)
{
	const struct rh_block *b = live_block(h, p);

	return b == NULL ? 0 : class_bytes(b->cls) - sizeof(*b);
}

void
onvm_rh_touch_owner(struct onvm_rh *h, const struct onvm_rh_owner *owner)
{
	for (uint64_t off = owner->head; off != 0; off = blk(h, off)->next)
		rh_touch(h, blk(h, off), class_bytes(blk(h, off)->cls));
}

void
onvm_rh_disown(struct onvm_rh *h, struct onvm_rh_owner *owner)
{
	while (owner->head != 0)
		unlink_owned(h, owner->head);
}

void
onvm_rh_touch_all(struct onvm_rh *h)
{
	rh_touch(h, h->base, h->hdr->top);
}

void
onvm_rh_set_root(struct onvm_rh *h, const void *p)
{
	rh_touch(h, &h->hdr->user_root, sizeof(h->hdr->user_root));
	h->hdr->user_root = onvm_rh_off(h, p);
}

void *
onvm_rh_root(const struct onvm_rh *h)
{
	return onvm_rh_ptr(h, h->hdr->user_root);
}

const struct onvm_rh_stats *
onvm_rh_stats(const struct onvm_rh *h)
{
	return &h->hdr->stats;
}
