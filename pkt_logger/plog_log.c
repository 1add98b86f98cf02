/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The predecessor's per-port packet log (contract in plog_log.h).
 *
 * A byte ring of records.  Each record is a 16-byte header -- timestamp,
 * frame length, kind -- and the frame padded to 8 bytes, and never wraps:
 * when the room left before the end of the buffer is too small, a SKIP
 * record (or, below a header's size, nothing) fills it and the record starts
 * at offset 0.  head/tail are absolute byte positions, so "full" and
 * "empty" are never ambiguous and a cursor is checked against head_seq.
 *
 * The invariant the whole design rests on: an entry leaves the log only by
 * plog_log_trim() (a checkpoint covers it).  Appends that do not fit are
 * refused and counted; nothing is evicted to make room.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plog_log.h"

enum { REC_DATA = 1, REC_SKIP = 2 };

struct rec_hdr {
	uint64_t ts;
	uint32_t len;
	uint32_t kind;
};
_Static_assert(sizeof(struct rec_hdr) == PLOG_LOG_REC_HDR, "record header is 16 bytes");

static inline uint64_t
pad8(uint64_t n)
{
	return (n + 7) & ~UINT64_C(7);
}

static inline struct rec_hdr *
rec_at(const struct plog_log *log, uint64_t pos)
{
	return (struct rec_hdr *)(log->mem + pos % log->size);
}

/* Skip the filler at `pos` (a SKIP record, or a remainder below a header):
 * the position of the next real record, or `pos` itself. */
static uint64_t
skip_filler(const struct plog_log *log, uint64_t pos, uint64_t end)
{
	uint64_t off = pos % log->size;

	if (pos >= end)
		return pos;
	if (log->size - off < PLOG_LOG_REC_HDR || rec_at(log, pos)->kind == REC_SKIP)
		return pos + (log->size - off);
	return pos;
}

int
plog_log_init(struct plog_log *log, void *mem, size_t size, uint32_t max_pkts)
{
	size &= ~(size_t)7;
	if (mem == NULL || ((uintptr_t)mem & 7) != 0 || max_pkts == 0 || size < 64)
		return -EINVAL;
	memset(log, 0, sizeof(*log));
	log->mem = mem;
	log->size = size;
	log->max_pkts = max_pkts;
	return 0;
}

uint32_t
plog_log_pkts(const struct plog_log *log)
{
	return (uint32_t)(log->tail_seq - log->head_seq);
}

uint64_t
plog_log_bytes(const struct plog_log *log)
{
	return log->frame_bytes;
}

uint64_t
plog_log_oldest_ts(const struct plog_log *log)
{
	uint64_t pos;

	if (log->tail_seq == log->head_seq)
		return 0;
	pos = skip_filler(log, log->head, log->tail);
	return rec_at(log, pos)->ts;
}

int
plog_log_append(struct plog_log *log, uint64_t ts, const void *frame, uint32_t len)
{
	uint64_t need = PLOG_LOG_REC_HDR + pad8(len), pos = log->tail, off, filler = 0;
	struct rec_hdr *h;

	if (len == 0 || len > PLOG_LOG_MAX_FRAME || need > log->size) {
		log->stats.refused_len++;
		return -EINVAL;
	}
	if (ts <= log->last_ts) {
		log->stats.refused_order++;
		return -ERANGE;
	}
	if (plog_log_pkts(log) >= log->max_pkts) {
		log->stats.refused_full_pkts++;
		return -ENOSPC;
	}
	off = pos % log->size;
	if (log->size - off < need) {
		filler = log->size - off; /* the record starts over at offset 0 */
		if (log->head_seq == log->tail_seq) {
			/* Empty: no reader needs the filler, so the next lap starts
			 * here.  Without this, a frame larger than both the room
			 * before the end and the tail's offset would be refused by
			 * an empty log, for ever (nothing left to trim). */
			pos += filler;
			filler = 0;
			log->head = log->tail = pos;
		}
	}
	if (pos + filler + need - log->head > log->size) {
		log->stats.refused_full_bytes++;
		return -ENOSPC;
	}
	if (filler >= PLOG_LOG_REC_HDR) {
		h = rec_at(log, pos);
		h->ts = 0;
		h->len = 0;
		h->kind = REC_SKIP;
	}
	pos += filler;
	h = rec_at(log, pos);
	h->ts = ts;
	h->len = len;
	h->kind = REC_DATA;
	memcpy(h + 1, frame, len);
	log->tail = pos + need;
	log->tail_seq++;
	log->last_ts = ts;
	log->frame_bytes += len;
	log->stats.appended++;
	log->stats.appended_bytes += len;
	if (plog_log_pkts(log) > log->stats.hwm_pkts)
		log->stats.hwm_pkts = plog_log_pkts(log);
	if (log->tail - log->head > log->stats.hwm_bytes)
		log->stats.hwm_bytes = log->tail - log->head;
	return 0;
}

uint32_t
plog_log_trim(struct plog_log *log, uint64_t watermark)
{
	uint32_t n = 0;

	if (watermark <= log->trimmed_to)
		return 0;
	log->trimmed_to = watermark;
	while (log->head_seq < log->tail_seq) {
		uint64_t pos = skip_filler(log, log->head, log->tail);
		struct rec_hdr *h = rec_at(log, pos);

		if (h->ts > watermark)
			break;
		log->frame_bytes -= h->len;
		log->stats.trimmed_bytes += h->len;
		log->head = pos + PLOG_LOG_REC_HDR + pad8(h->len);
		log->head_seq++;
		n++;
	}
	if (log->head_seq == log->tail_seq)
		log->head = log->tail; /* also past a trailing filler */
	log->stats.trimmed += n;
	return n;
}

void
plog_log_seek(const struct plog_log *log, struct plog_cursor *c, uint64_t after_ts)
{
	c->seq = log->head_seq;
	c->pos = log->head;
	while (c->seq < log->tail_seq) {
		uint64_t pos = skip_filler(log, c->pos, log->tail);
		const struct rec_hdr *h = rec_at(log, pos);

		if (h->ts > after_ts) {
			c->pos = pos;
			return;
		}
		c->pos = pos + PLOG_LOG_REC_HDR + pad8(h->len);
		c->seq++;
	}
}

void
plog_log_seek_end(const struct plog_log *log, struct plog_cursor *c)
{
	c->seq = log->tail_seq;
	c->pos = log->tail;
}

int
plog_log_peek(struct plog_log *log, struct plog_cursor *c, struct plog_entry *e)
{
	struct plog_cursor tmp = *c;
	uint64_t reads = log->stats.read;
	int r = plog_log_read(log, &tmp, e);

	log->stats.read = reads;
	if (c->seq < log->head_seq) { /* the same catch-up read() would do */
		c->seq = log->head_seq;
		c->pos = log->head;
	}
	return r;
}

int
plog_log_read(struct plog_log *log, struct plog_cursor *c, struct plog_entry *e)
{
	const struct rec_hdr *h;
	uint64_t pos;

	if (c->seq <= log->head_seq) {
		/* Trimmed under the cursor: go on from the oldest entry left.  At
		 * the oldest entry itself the head is its position too, and the
		 * only one still right after an empty log started a new lap. */
		c->seq = log->head_seq;
		c->pos = log->head;
	}
	if (c->seq >= log->tail_seq)
		return 0;
	pos = skip_filler(log, c->pos, log->tail);
	h = rec_at(log, pos);
	e->ts = h->ts;
	e->seq = c->seq;
	e->frame = (const uint8_t *)(h + 1);
	e->len = h->len;
	c->pos = pos + PLOG_LOG_REC_HDR + pad8(h->len);
	c->seq++;
	log->stats.read++;
	return 1;
}

/* ---- pcapng (https://datatracker.ietf.org/doc/draft-ietf-opsawg-pcapng/) ---- */

struct pcapng_out {
	int (*write)(void *ctx, const void *buf, size_t len);
	void *ctx;
	int err;
};

static void
out(struct pcapng_out *o, const void *buf, size_t len)
{
	if (o->err == 0 && len > 0 && o->write(o->ctx, buf, len) != 0)
		o->err = -1;
}

static void
out32(struct pcapng_out *o, uint32_t v)
{
	out(o, &v, sizeof(v)); /* host byte order: the SHB's magic says which */
}

static void
out16(struct pcapng_out *o, uint16_t v)
{
	out(o, &v, sizeof(v));
}

static void
out_pad(struct pcapng_out *o, size_t len)
{
	static const uint8_t zero[4];

	out(o, zero, (4 - len % 4) % 4);
}

/* An option: code, length, value padded to 4. */
static void
out_opt(struct pcapng_out *o, uint16_t code, const void *val, uint16_t len)
{
	out16(o, code);
	out16(o, len);
	out(o, val, len);
	out_pad(o, len);
}

static inline uint32_t
pad4(uint32_t n)
{
	return (n + 3) & ~3u;
}

int
plog_log_write_pcapng(const struct plog_log *log, const char *if_name,
		      int (*write)(void *ctx, const void *buf, size_t len), void *ctx)
{
	struct pcapng_out o = {.write = write, .ctx = ctx};
	uint16_t name_len = (uint16_t)(if_name != NULL ? strnlen(if_name, 64) : 0);
	uint32_t idb_len = 20 + (name_len ? 4 + pad4(name_len) : 0) + 4;
	uint64_t pos = log->head;

	/* Section Header Block: type, length, byte-order magic, version 1.0,
	 * section length unknown (-1), no options. */
	out32(&o, 0x0A0D0D0A);
	out32(&o, 28);
	out32(&o, 0x1A2B3C4D);
	out16(&o, 1);
	out16(&o, 0);
	out32(&o, 0xFFFFFFFF);
	out32(&o, 0xFFFFFFFF);
	out32(&o, 28);
	/* Interface Description Block: Ethernet, no snap limit, if_name. */
	out32(&o, 0x00000001);
	out32(&o, idb_len);
	out16(&o, 1);
	out16(&o, 0);
	out32(&o, 0);
	if (name_len > 0)
		out_opt(&o, 2, if_name, name_len);
	out32(&o, 0); /* opt_endofopt */
	out32(&o, idb_len);
	/* One Enhanced Packet Block per entry, oldest first. */
	for (uint64_t seq = log->head_seq; seq < log->tail_seq && o.err == 0; seq++) {
		char comment[32];
		const struct rec_hdr *h;
		uint16_t clen;
		uint32_t blen;

		pos = skip_filler(log, pos, log->tail);
		h = rec_at(log, pos);
		clen = (uint16_t)snprintf(comment, sizeof(comment), "ts=%llu",
					  (unsigned long long)h->ts);
		blen = 28 + pad4(h->len) + 4 + pad4(clen) + 4 + 4;
		out32(&o, 0x00000006);
		out32(&o, blen);
		out32(&o, 0);			    /* interface 0 */
		out32(&o, (uint32_t)(h->ts >> 32)); /* timestamp: the logical one */
		out32(&o, (uint32_t)h->ts);
		out32(&o, h->len); /* captured */
		out32(&o, h->len); /* original */
		out(&o, h + 1, h->len);
		out_pad(&o, h->len);
		out_opt(&o, 1, comment, clen);
		out32(&o, 0); /* opt_endofopt */
		out32(&o, blen);
		pos += PLOG_LOG_REC_HDR + pad8(h->len);
	}
	return o.err;
}
