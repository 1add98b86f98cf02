/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_seq.c -- in-order, whole application of one NF instance's updates at
 * a replica (ftc_seq.h).  A ring of `window` slots, slot k holding sequence
 * number next + k's parts: their bytes appended in arrival order into the
 * slot's buffer, each part's place and length recorded, so that the parts
 * come out in part order whatever order they came in.
 */
#include <string.h>

#include "ftc_seq.h"

#define WINDOW_MAX 4096

struct slot {
	uint64_t seq;	  /* 0: empty */
	uint16_t parts;	  /* as the first part received said */
	uint16_t have;	  /* parts received */
	uint32_t used;	  /* bytes of the buffer used */
	uint32_t off[FTC_SEQ_MAX_PARTS];
	uint32_t len[FTC_SEQ_MAX_PARTS];
	uint8_t got[(FTC_SEQ_MAX_PARTS + 7) / 8];
};

struct ftc_seq {
	unsigned int window;
	uint32_t slot_bytes;
	uint64_t next; /* everything below it applied */
	unsigned int head;
	unsigned int held;
	struct slot *slots;
	uint8_t *bytes; /* window x slot_bytes */
};

static const char *const verdicts[FTC_SEQ_VERDICT_MAX] = {
	[FTC_SEQ_HELD] = "held",	     [FTC_SEQ_OLD] = "old",
	[FTC_SEQ_DUP_PART] = "dup_part",     [FTC_SEQ_TOO_FAR] = "too_far",
	[FTC_SEQ_MISMATCH] = "mismatch",     [FTC_SEQ_NO_ROOM] = "no_room",
};

const char *
ftc_seq_verdict_str(enum ftc_seq_verdict v)
{
	return (unsigned int)v < FTC_SEQ_VERDICT_MAX ? verdicts[v] : "?";
}

static size_t
align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

size_t
ftc_seq_mem_size(unsigned int window, uint32_t slot_bytes)
{
	if (window == 0 || window > WINDOW_MAX || slot_bytes == 0)
		return 0;
	return align8(sizeof(struct ftc_seq)) + align8((size_t)window * sizeof(struct slot)) +
	       (size_t)window * slot_bytes;
}

struct ftc_seq *
ftc_seq_init(void *mem, unsigned int window, uint32_t slot_bytes, uint64_t next)
{
	struct ftc_seq *s = mem;
	size_t n = ftc_seq_mem_size(window, slot_bytes);

	if (mem == NULL || n == 0 || next == 0 || next > (UINT64_C(1) << 63))
		return NULL;
	memset(mem, 0, align8(sizeof(*s)) + align8((size_t)window * sizeof(struct slot)));
	s->window = window;
	s->slot_bytes = slot_bytes;
	s->next = next;
	s->slots = (struct slot *)((uint8_t *)mem + align8(sizeof(*s)));
	s->bytes = (uint8_t *)s->slots + align8((size_t)window * sizeof(struct slot));
	return s;
}

static struct slot *
slot_of(const struct ftc_seq *s, uint64_t seq, unsigned int *idx)
{
	unsigned int k = (s->head + (unsigned int)(seq - s->next)) % s->window;

	if (idx != NULL)
		*idx = k;
	return &s->slots[k];
}

enum ftc_seq_verdict
ftc_seq_offer(struct ftc_seq *s, const struct ftc_log *l)
{
	struct slot *sl;
	unsigned int k;

	if (l->parts == 0 || l->part >= l->parts)
		return FTC_SEQ_MISMATCH; /* (ftc_parse() lets none through) */
	if (l->seq < s->next)
		return FTC_SEQ_OLD;
	if (l->seq - s->next >= s->window)
		return FTC_SEQ_TOO_FAR;
	sl = slot_of(s, l->seq, &k);
	if (sl->seq == 0) {
		sl->seq = l->seq;
		sl->parts = l->parts;
		sl->have = 0;
		sl->used = 0;
		memset(sl->got, 0, sizeof(sl->got));
		s->held++;
	} else if (sl->parts != l->parts) {
		return FTC_SEQ_MISMATCH;
	}
	if (sl->got[l->part / 8] & (1u << (l->part % 8)))
		return FTC_SEQ_DUP_PART;
	if (s->slot_bytes - sl->used < l->len) {
		if (sl->have == 0) { /* (nothing of it kept) */
			sl->seq = 0;
			s->held--;
		}
		return FTC_SEQ_NO_ROOM;
	}
	memcpy(s->bytes + (size_t)k * s->slot_bytes + sl->used, l->data, l->len);
	sl->off[l->part] = sl->used;
	sl->len[l->part] = l->len;
	sl->used += l->len;
	sl->got[l->part / 8] |= (uint8_t)(1u << (l->part % 8));
	sl->have++;
	return FTC_SEQ_HELD;
}

bool
ftc_seq_forget(struct ftc_seq *s, uint64_t seq)
{
	struct slot *sl;

	if (seq < s->next || seq - s->next >= s->window)
		return false;
	sl = slot_of(s, seq, NULL);
	if (sl->seq == 0)
		return false;
	sl->seq = 0;
	s->held--;
	return true;
}

bool
ftc_seq_ready(const struct ftc_seq *s, uint64_t *seq, unsigned int *parts)
{
	const struct slot *sl = &s->slots[s->head];

	if (sl->seq != s->next || sl->have != sl->parts)
		return false;
	*seq = sl->seq;
	*parts = sl->parts;
	return true;
}

void
ftc_seq_part(const struct ftc_seq *s, unsigned int p, const uint8_t **data, uint32_t *len)
{
	const struct slot *sl = &s->slots[s->head];

	*data = s->bytes + (size_t)s->head * s->slot_bytes + sl->off[p];
	*len = sl->len[p];
}

void
ftc_seq_done(struct ftc_seq *s)
{
	struct slot *sl = &s->slots[s->head];

	if (sl->seq != s->next || sl->have != sl->parts)
		return; /* (not ready: nothing to move past) */
	sl->seq = 0;
	s->held--;
	s->head = (s->head + 1) % s->window;
	s->next++;
}

uint64_t
ftc_seq_next(const struct ftc_seq *s)
{
	return s->next;
}

uint64_t
ftc_seq_missing(const struct ftc_seq *s)
{
	/* The first update not whole: lacking parts of its own, or none of it
	 * while a later one is held.  (A slot at position i can only hold
	 * next + i.) */
	for (unsigned int i = 0; i < s->window; i++) {
		const struct slot *sl = &s->slots[(s->head + i) % s->window];

		if (sl->seq != 0 && sl->have == sl->parts)
			continue;
		if (sl->seq != 0)
			return s->next + i;
		for (unsigned int j = i + 1; j < s->window; j++)
			if (s->slots[(s->head + j) % s->window].seq != 0)
				return s->next + i;
		return 0;
	}
	return 0;
}

unsigned int
ftc_seq_held(const struct ftc_seq *s)
{
	return s->held;
}
