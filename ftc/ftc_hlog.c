/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_hlog.c -- the head's log of updates not yet committed (ftc_hlog.h).
 * Updates are encoded once, as a log's records, into a byte ring; an
 * update's bytes never wrap around the ring's end (a gap is left at the
 * end instead), so ftc_hlog_get() gives one contiguous piece.  An index
 * ring of (offset, length) per update, oldest first, finds them by
 * sequence number in O(1).
 */
#include <string.h>

#include "ftc_hlog.h"
#include "onvm_wire.h"

#define UPDATES_MAX 65536

struct entry {
	uint32_t off, len;
};

struct ftc_hlog {
	unsigned int cap;	 /* updates */
	uint32_t size;		 /* ring bytes */
	uint64_t oldest;	 /* the sequence number of entries[head] */
	unsigned int head, n;	 /* the index ring */
	uint32_t start, used;	 /* the byte ring: the oldest's offset, bytes taken (gaps too) */
	struct entry *entries;
	uint8_t *ring;
};

static size_t
align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

size_t
ftc_hlog_mem_size(unsigned int updates, uint32_t bytes)
{
	if (updates == 0 || updates > UPDATES_MAX || bytes == 0)
		return 0;
	return align8(sizeof(struct ftc_hlog)) + align8((size_t)updates * sizeof(struct entry)) +
	       bytes;
}

struct ftc_hlog *
ftc_hlog_init(void *mem, unsigned int updates, uint32_t bytes, uint64_t first)
{
	struct ftc_hlog *h = mem;

	if (mem == NULL || ftc_hlog_mem_size(updates, bytes) == 0 || first == 0 ||
	    first > (UINT64_C(1) << 63))
		return NULL;
	memset(h, 0, sizeof(*h));
	h->cap = updates;
	h->size = bytes;
	h->oldest = first;
	h->entries = (struct entry *)((uint8_t *)mem + align8(sizeof(*h)));
	h->ring = (uint8_t *)h->entries + align8((size_t)updates * sizeof(struct entry));
	return h;
}

/* Where `len` bytes go at the ring's tail (skipping to its start when they
 * would wrap), or -1 if there is no room. */
static int64_t
place(const struct ftc_hlog *h, uint32_t len, uint32_t *skip)
{
	uint32_t tail = (uint32_t)(((uint64_t)h->start + h->used) % h->size);
	uint32_t free_bytes = h->size - h->used;

	*skip = 0;
	if (h->n == 0)
		return len <= h->size ? 0 : -1;
	/* (a full ring takes nothing, not even an update of no bytes: two
	 * entries at one offset would be a lap apart) */
	if (free_bytes < len || free_bytes == 0)
		return -1;
	if (tail >= h->start) {
		/* free: [tail, size) then [0, start) */
		if (h->size - tail >= len)
			return tail;
		*skip = h->size - tail; /* the end left unused */
		return h->start >= len ? 0 : -1;
	}
	/* free: [tail, start) */
	return h->start - tail >= len ? (int64_t)tail : -1;
}

uint64_t
ftc_hlog_append(struct ftc_hlog *h, const struct ftc_record_in *recs, unsigned int n)
{
	uint64_t len = 0;
	uint32_t skip, pos;
	int64_t at;
	struct entry *e;

	if (n == 0)
		return 0; /* (no update: nothing to number) */
	for (unsigned int i = 0; i < n; i++) {
		if (recs[i].len == 0 || recs[i].len > FTC_RECORD_MAX)
			return 0; /* the wire could not carry it */
		len += FTC_RECORD_HEAD_LEN + recs[i].len;
	}
	if (h->n == h->cap || len > UINT32_MAX || h->oldest + h->n >= (UINT64_C(1) << 63))
		return 0;
	at = place(h, (uint32_t)len, &skip);
	if (at < 0)
		return 0;
	if (h->n == 0)
		h->start = (uint32_t)at;
	pos = (uint32_t)at;
	for (unsigned int i = 0; i < n; i++) {
		onvm_put_be16(h->ring + pos, recs[i].region);
		onvm_put_be16(h->ring + pos + 2, recs[i].len);
		onvm_put_be32(h->ring + pos + 4, recs[i].offset);
		if (recs[i].len > 0)
			memcpy(h->ring + pos + FTC_RECORD_HEAD_LEN, recs[i].bytes, recs[i].len);
		pos += FTC_RECORD_HEAD_LEN + recs[i].len;
	}
	e = &h->entries[(h->head + h->n) % h->cap];
	e->off = (uint32_t)at;
	e->len = (uint32_t)len;
	h->used += skip + (uint32_t)len;
	h->n++;
	return h->oldest + h->n - 1;
}

uint64_t
ftc_hlog_append_encoded(struct ftc_hlog *h, const uint8_t *data, uint32_t len)
{
	const struct ftc_log l = {.part = 0, .parts = 1, .len = len, .seq = 1, .data = data};
	struct ftc_record r;
	uint32_t pos = 0, skip;
	int64_t at;
	struct entry *e;

	if (len == 0)
		return 0;
	/* whole records of 1 .. FTC_RECORD_MAX bytes, filling it exactly */
	while (pos < len) {
		if (len - pos < FTC_RECORD_HEAD_LEN)
			return 0;
		if (!ftc_record_next(&l, &pos, &r) || r.len == 0 || r.len > FTC_RECORD_MAX)
			return 0;
	}
	if (pos != len)
		return 0;
	if (h->n == h->cap || h->oldest + h->n >= (UINT64_C(1) << 63))
		return 0;
	at = place(h, len, &skip);
	if (at < 0)
		return 0;
	if (h->n == 0)
		h->start = (uint32_t)at;
	memcpy(h->ring + at, data, len);
	e = &h->entries[(h->head + h->n) % h->cap];
	e->off = (uint32_t)at;
	e->len = len;
	h->used += skip + len;
	h->n++;
	return h->oldest + h->n - 1;
}

bool
ftc_hlog_get(const struct ftc_hlog *h, uint64_t seq, const uint8_t **data, uint32_t *len)
{
	const struct entry *e;

	if (seq < h->oldest || seq - h->oldest >= h->n)
		return false;
	e = &h->entries[(h->head + (unsigned int)(seq - h->oldest)) % h->cap];
	*data = h->ring + e->off;
	*len = e->len;
	return true;
}

int
ftc_hlog_commit(struct ftc_hlog *h, uint64_t seq)
{
	int gone = 0;

	if (seq >= h->oldest + h->n)
		return -1; /* an update never made */
	while (h->n > 0 && h->oldest <= seq) {
		uint32_t next_start;

		h->head = (h->head + 1) % h->cap;
		h->n--;
		h->oldest++;
		gone++;
		if (h->n == 0) {
			h->used = 0;
			h->start = 0;
			continue;
		}
		/* what the oldest took, and the skipped end before the next */
		next_start = h->entries[h->head].off;
		h->used -= (uint32_t)(((uint64_t)next_start + h->size - h->start) % h->size);
		h->start = next_start;
	}
	return gone;
}

uint64_t
ftc_hlog_oldest(const struct ftc_hlog *h)
{
	return h->n > 0 ? h->oldest : 0;
}

uint64_t
ftc_hlog_next(const struct ftc_hlog *h)
{
	return h->oldest + h->n;
}

unsigned int
ftc_hlog_count(const struct ftc_hlog *h)
{
	return h->n;
}

uint32_t
ftc_hlog_bytes(const struct ftc_hlog *h)
{
	return h->used;
}
