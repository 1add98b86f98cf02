/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_plog.c -- libFuzzer target for the packet logger (pkt_logger/).
 *
 * The input is used two ways:
 *   1. as a received frame: plog_shim_parse() must give a known reason, and
 *      accept only what the layout in plog_shim.h allows.  An accepted frame
 *      is popped and pushed back with what parse read and must come out byte
 *      for byte as it went in; set_flags changes the flags byte and nothing
 *      else.  Any frame of an Ethernet header or more is pushed into
 *      prepended room and must parse back with what was given and pop back to
 *      itself; a frame already shimmed is refused and left untouched.
 *   2. as a script for a small log (byte 0: packet bound and buffer size;
 *      then 3-byte records: append, trim, replay from a point, a long-lived
 *      cursor, a refused append, a pcapng dump), checked against a model
 *      after every step: every entry appended and not trimmed is read back
 *      whole and in order, nothing is skipped, an entry leaves only by a trim,
 *      the counts and statistics are the model's, both bounds hold, and a
 *      refusal for want of room happens only when room is really short.
 *
 * Frames are windows into one pseudo-random pattern (an entry's window starts
 * at its timestamp modulo a prime), so checking a 64 KB entry is a memcmp,
 * not a loop.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plog_log.h"
#include "plog_shim.h"

#include "fuzz_check.h"
#include "test_blob.h"

#define MAXOPS	  1024
#define PAT_SHIFT 251
#define SHIM_MAX  4096

/* ---- the shim ---------------------------------------------------------------- */

static void
check_shim(const uint8_t *data, size_t size)
{
	static uint8_t buf[SHIM_MAX + PLOG_SHIM_LEN], copy[SHIM_MAX + PLOG_SHIM_LEN];
	struct plog_shim sh, again;
	enum plog_shim_reason r;

	if (size > SHIM_MAX)
		size = SHIM_MAX;
	r = plog_shim_parse(data, size, &sh);
	CHECK((unsigned int)r < PLOG_SHIM_REASON_MAX);
	CHECK(strcmp(plog_shim_reason_str(r), "unknown") != 0);
	if (r == PLOG_SHIM_OK) {
		CHECK(size >= PLOG_ETH_LEN + PLOG_SHIM_LEN);
		CHECK(data[12] == 0x88 && data[13] == 0xb5);
		CHECK(sh.version == PLOG_SHIM_VERSION && (sh.flags & ~PLOG_SHIM_F_KNOWN) == 0);
		CHECK(sh.ts != 0 && sh.inner_type != PLOG_ETHERTYPE);
		/* set_flags touches the flags byte only */
		memcpy(buf, data, size);
		CHECK(plog_shim_set_flags(buf, size, sh.flags ^ PLOG_SHIM_F_REPLAY) == 0);
		CHECK(buf[15] == (sh.flags ^ PLOG_SHIM_F_REPLAY));
		CHECK(memcmp(buf, data, 15) == 0 && memcmp(buf + 16, data + 16, size - 16) == 0);
		CHECK(plog_shim_set_flags(buf, size, sh.flags) == 0);
		/* pop, then push what parse read: the same frame */
		CHECK(plog_shim_pop(buf, size) == 0);
		CHECK(memcmp(buf + PLOG_SHIM_LEN + PLOG_ETH_LEN,
			     data + PLOG_ETH_LEN + PLOG_SHIM_LEN,
			     size - PLOG_ETH_LEN - PLOG_SHIM_LEN) == 0);
		CHECK(plog_shim_push(buf, size, sh.ts, sh.flags) == 0);
		CHECK(memcmp(buf, data, size) == 0);
	} else {
		/* a refused frame is never changed by pop or set_flags */
		memcpy(buf, data, size);
		CHECK(plog_shim_pop(buf, size) == -1);
		CHECK(plog_shim_set_flags(buf, size, PLOG_SHIM_F_REPLAY) == -1);
		CHECK(memcmp(buf, data, size) == 0);
	}
	if (size >= PLOG_ETH_LEN) {
		uint16_t type = (uint16_t)(data[12] << 8 | data[13]);
		uint64_t ts = size >= 8 ? 1 + (data[size - 1] | (uint64_t)data[0] << 56) : 42;

		memset(buf, 0, PLOG_SHIM_LEN);
		memcpy(buf + PLOG_SHIM_LEN, data, size);
		memcpy(copy, buf, size + PLOG_SHIM_LEN);
		if (plog_shim_push(buf, size + PLOG_SHIM_LEN, ts, PLOG_SHIM_F_REPLAY) == 0) {
			CHECK(type != PLOG_ETHERTYPE);
			CHECK(plog_shim_parse(buf, size + PLOG_SHIM_LEN, &again) == PLOG_SHIM_OK);
			CHECK(again.ts == ts && again.inner_type == type);
			CHECK(again.flags == PLOG_SHIM_F_REPLAY);
			CHECK(plog_shim_pop(buf, size + PLOG_SHIM_LEN) == 0);
			CHECK(memcmp(buf + PLOG_SHIM_LEN, data, size) == 0);
		} else {
			CHECK(type == PLOG_ETHERTYPE);
			CHECK(memcmp(buf, copy, size + PLOG_SHIM_LEN) == 0);
		}
	}
}

/* ---- the log ----------------------------------------------------------------- */

static uint8_t pattern[PLOG_LOG_MAX_FRAME + PAT_SHIFT];

static const uint8_t *
frame_of(uint64_t ts)
{
	return pattern + ts % PAT_SHIFT;
}

static uint64_t
rec(uint32_t len)
{
	return PLOG_LOG_REC_HDR + ((len + 7u) & ~7u);
}

/* The model: entries held are [first, end) of ts_of/len_of. */
struct model {
	uint64_t ts_of[MAXOPS];
	uint32_t len_of[MAXOPS];
	uint32_t first, end;
	uint64_t bytes, last_ts, wm, trimmed, refused_room, refused_order, refused_len;
	uint64_t live_last; /* the long-lived cursor's last entry */
};

static void
check_entry(const struct plog_log *log, const struct plog_entry *e, const struct model *m,
	    uint32_t i)
{
	CHECK(i < m->end && e->ts == m->ts_of[i] && e->len == m->len_of[i]);
	CHECK(e->frame >= log->mem && e->frame + e->len <= log->mem + log->size);
	CHECK(memcmp(e->frame, frame_of(e->ts), e->len) == 0);
}

/* The first held entry after `ts`. */
static uint32_t
after(const struct model *m, uint64_t ts)
{
	uint32_t i = m->first;

	while (i < m->end && m->ts_of[i] <= ts)
		i++;
	return i;
}

static void
op_append(struct plog_log *log, struct model *m, uint8_t gap, uint16_t arg)
{
	uint32_t held = m->end - m->first;
	uint32_t len =
	    1 + (uint32_t)(arg % (log->size < PLOG_LOG_MAX_FRAME ? log->size : PLOG_LOG_MAX_FRAME));
	uint64_t ts = m->last_ts + 1 + gap % 4, used = log->tail - log->head;
	int rc;

	if (m->end == MAXOPS)
		return;
	rc = plog_log_append(log, ts, frame_of(ts), len);
	if (rec(len) > log->size) {
		CHECK(rc == -EINVAL);
		m->refused_len++;
		return;
	}
	if (rc == 0) {
		CHECK(held < log->max_pkts && used + rec(len) <= log->size);
		m->ts_of[m->end] = ts;
		m->len_of[m->end] = len;
		m->end++;
		m->bytes += len;
		m->last_ts = ts;
		return;
	}
	/* a bound was reached: at worst need - 8 bytes before the end are lost */
	CHECK(rc == -ENOSPC);
	CHECK(held == log->max_pkts || (held > 0 && used + 2 * rec(len) - 8 > log->size));
	m->refused_room++;
}

static void
op_trim(struct plog_log *log, struct model *m, uint16_t arg)
{
	uint64_t wm;
	uint32_t expect = 0;

	if (arg & 0x8000) {
		/* an old or repeated LOG_TRIM: nothing changes */
		wm = m->wm > 0 ? arg % (m->wm + 1) : 0;
	} else {
		/* a checkpoint covers only what was sent */
		wm = m->wm + arg % 16;
		if (wm > m->last_ts)
			wm = m->last_ts;
	}
	if (wm > m->wm) {
		while (m->first < m->end && m->ts_of[m->first] <= wm) {
			m->bytes -= m->len_of[m->first];
			m->first++;
			expect++;
		}
		m->wm = wm;
	}
	CHECK(plog_log_trim(log, wm) == expect);
	m->trimmed += expect;
}

static void
op_replay(struct plog_log *log, const struct model *m, uint16_t arg)
{
	struct plog_cursor c;
	struct plog_entry e;
	uint64_t from = (arg & 0x8000) ? arg % 64 : m->wm + arg % 8, prev = 0;
	uint32_t i = after(m, from);

	plog_log_seek(log, &c, from);
	while (plog_log_read(log, &c, &e) == 1) {
		check_entry(log, &e, m, i);
		CHECK(e.ts > prev && e.ts > from);
		prev = e.ts;
		i++;
	}
	CHECK(i == m->end); /* nothing skipped */
}

static void
op_live(struct plog_log *log, struct plog_cursor *live, struct model *m, uint16_t arg)
{
	for (int k = 0; k < 1 + arg % 4; k++) {
		struct plog_entry e, peeked;
		uint32_t i = after(m, m->live_last);
		uint64_t reads = log->stats.read;

		if (i == m->end) {
			CHECK(plog_log_peek(log, live, &peeked) == 0);
			CHECK(plog_log_read(log, live, &e) == 0);
			return;
		}
		CHECK(plog_log_peek(log, live, &peeked) == 1);
		CHECK(log->stats.read == reads);
		CHECK(plog_log_read(log, live, &e) == 1);
		CHECK(peeked.ts == e.ts && peeked.frame == e.frame && peeked.len == e.len);
		check_entry(log, &e, m, i);
		m->live_last = e.ts;
	}
}

static void
op_refused(struct plog_log *log, struct model *m, uint16_t arg)
{
	struct plog_log before = *log;
	static uint8_t big[PLOG_LOG_MAX_FRAME + 1];

	if ((arg & 1) == 0) {
		uint64_t ts = m->last_ts - (arg >> 1) % (m->last_ts + 1);

		CHECK(plog_log_append(log, ts, big, 1 + arg % 64) == -ERANGE);
		m->refused_order++;
	} else {
		uint32_t len = (arg & 2) ? 0 : PLOG_LOG_MAX_FRAME + 1 + (arg >> 2);

		CHECK(plog_log_append(log, m->last_ts + 1, big, len) == -EINVAL);
		m->refused_len++;
	}
	CHECK(log->head == before.head && log->tail == before.tail);
	CHECK(log->tail_seq == before.tail_seq && log->last_ts == before.last_ts);
}

/* Dump as pcapng and walk it: one EPB per entry held, oldest first. */
static void
op_dump(struct plog_log *log, const struct model *m, uint16_t arg)
{
	static uint8_t out[(PLOG_LOG_REC_HDR + PLOG_LOG_MAX_FRAME + 1) * 2 + MAXOPS * 64 + 256];
	struct blob b = {out, 0, sizeof(out)};
	size_t off;
	uint32_t i = m->first;

	CHECK(plog_log_write_pcapng(log, "fuzz", blob_write, &b) == 0);
	if (arg & 1) {
		/* a writer that stops before the end: the dump fails */
		struct blob short_b = {out, 0, (size_t)(arg >> 1) % b.n};

		CHECK(plog_log_write_pcapng(log, "fuzz", blob_write, &short_b) == -1);
		CHECK(short_b.n <= short_b.cap);
		b.n = 0;
		CHECK(plog_log_write_pcapng(log, "fuzz", blob_write, &b) == 0);
	}
	CHECK(b.n >= 28 + 32 && rd32(out) == 0x0A0D0D0A && rd32(out + 4) == 28);
	off = 28;
	CHECK(rd32(out + off) == 1 && rd32(out + off + 4) == 32);
	off += rd32(out + off + 4);
	while (off < b.n) {
		const uint8_t *p = out + off;
		uint32_t blen = rd32(p + 4), cap = rd32(p + 20);
		uint64_t ts = (uint64_t)rd32(p + 12) << 32 | rd32(p + 16);

		CHECK(rd32(p) == 6 && blen % 4 == 0 && blen <= b.n - off);
		CHECK(rd32(p + blen - 4) == blen && rd32(p + 24) == cap);
		CHECK(i < m->end && ts == m->ts_of[i] && cap == m->len_of[i]);
		CHECK(memcmp(p + 28, frame_of(ts), cap) == 0);
		off += blen;
		i++;
	}
	CHECK(off == b.n && i == m->end);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* two records of the longest frame; smaller buffers wrap sooner */
	static const uint32_t sizes[4] = {(PLOG_LOG_REC_HDR + PLOG_LOG_MAX_FRAME + 1) * 2, 8192,
					  1024, 256};
	static uint64_t mem[(PLOG_LOG_REC_HDR + PLOG_LOG_MAX_FRAME + 1) * 2 / 8];
	static struct model m;
	static bool have_pattern;
	struct plog_log log;
	struct plog_cursor live;

	if (!have_pattern) {
		uint64_t x = 0x9e3779b97f4a7c15ull;

		for (size_t i = 0; i < sizeof(pattern); i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			pattern[i] = (uint8_t)(x >> 24);
		}
		have_pattern = true;
	}
	check_shim(data, size);
	if (size == 0)
		return 0;
	memset(&m, 0, sizeof(m));
	CHECK(plog_log_init(&log, mem, sizes[(data[0] >> 4) & 3], 1 + (data[0] & 15)) == 0);
	plog_log_seek(&log, &live, 0);
	for (size_t i = 1; i + 2 < size; i += 3) {
		uint16_t arg = (uint16_t)(data[i + 1] << 8 | data[i + 2]);

		switch (data[i] & 7) {
		case 0:
		case 1:
		case 2:
			op_append(&log, &m, (uint8_t)(data[i] >> 3), arg);
			break;
		case 3:
			op_trim(&log, &m, arg);
			break;
		case 4:
			op_replay(&log, &m, arg);
			break;
		case 5:
			op_live(&log, &live, &m, arg);
			break;
		case 6:
			op_refused(&log, &m, arg);
			break;
		default:
			op_dump(&log, &m, arg);
			break;
		}
		CHECK(plog_log_pkts(&log) == m.end - m.first &&
		      plog_log_pkts(&log) <= log.max_pkts);
		CHECK(plog_log_bytes(&log) == m.bytes);
		CHECK(plog_log_oldest_ts(&log) == (m.first < m.end ? m.ts_of[m.first] : 0));
		CHECK(log.tail - log.head <= log.size);
		CHECK(log.stats.appended == m.end && log.stats.trimmed == m.trimmed);
		CHECK(log.stats.refused_full_pkts + log.stats.refused_full_bytes == m.refused_room);
		CHECK(log.stats.refused_order == m.refused_order);
		CHECK(log.stats.refused_len == m.refused_len);
		CHECK(log.stats.hwm_pkts >= m.end - m.first && log.stats.hwm_pkts <= log.max_pkts);
		CHECK(log.stats.hwm_bytes >= log.tail - log.head &&
		      log.stats.hwm_bytes <= log.size);
	}
	return 0;
}
