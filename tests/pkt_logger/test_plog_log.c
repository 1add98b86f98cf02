/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The predecessor's packet log (plog_log.h), behaviour by behaviour: bounded
 * in packets and in bytes, a full log refuses the new packet and never evicts
 * one that is not trimmed, timestamps strictly increase, a trim removes
 * exactly what its watermark covers, cursors replay in order across the end
 * of the buffer and survive trims, the statistics count what happened, and
 * the pcapng dump is what a reader (this file's, then tshark's) expects.  A
 * reference model (an array) checks thousands of random operations.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "plog_log.h"
#include "test_blob.h"

#define LOG_BYTES (128 * 1024) /* holds a PLOG_LOG_MAX_FRAME record */

static uint64_t mem[LOG_BYTES / 8];

/* The bytes of the frame logged with `ts`: any mix-up of two entries, or a
 * frame cut or shifted, shows. */
static void
frame_of(uint8_t *f, uint32_t len, uint64_t ts)
{
	for (uint32_t i = 0; i < len; i++)
		f[i] = (uint8_t)(ts * 31 + i * 7 + (i >> 8));
}

static void
append_ok(struct plog_log *log, uint64_t ts, uint32_t len)
{
	static uint8_t f[PLOG_LOG_MAX_FRAME];

	frame_of(f, len, ts);
	assert_int_equal(plog_log_append(log, ts, f, len), 0);
}

/* Read the next entry and check it is `ts`'s frame of `len` bytes, inside
 * the buffer (a record never wraps around its end). */
static void
read_expect(struct plog_log *log, struct plog_cursor *c, uint64_t ts, uint32_t len)
{
	static uint8_t want[PLOG_LOG_MAX_FRAME];
	struct plog_entry e;

	assert_int_equal(plog_log_read(log, c, &e), 1);
	assert_int_equal(e.ts, ts);
	assert_int_equal(e.len, len);
	assert_true(e.frame >= log->mem && e.frame + e.len <= log->mem + log->size);
	frame_of(want, len, ts);
	assert_memory_equal(e.frame, want, len);
}

/* Record bytes of a frame: header plus the frame padded to 8. */
static uint64_t
rec(uint32_t len)
{
	return PLOG_LOG_REC_HDR + ((len + 7u) & ~7u);
}

static void
test_init_refuses_bad_arguments(void **state)
{
	(void)state;
	struct plog_log log;

	assert_int_equal(plog_log_init(&log, NULL, sizeof(mem), 10), -EINVAL);
	assert_int_equal(plog_log_init(&log, (uint8_t *)mem + 4, 1024, 10), -EINVAL);
	assert_int_equal(plog_log_init(&log, mem, 63, 10), -EINVAL);
	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 0), -EINVAL);
	assert_int_equal(plog_log_init(&log, mem, 64, 1), 0);
	assert_int_equal(plog_log_init(&log, mem, 71, 1), 0);
	assert_int_equal(log.size, 64); /* rounded down to a multiple of 8 */
}

static void
test_new_log_is_empty(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;
	static const struct plog_log_stats zero;

	memset(&log, 0xa5, sizeof(log));
	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 10), 0);
	assert_int_equal(plog_log_pkts(&log), 0);
	assert_int_equal(plog_log_bytes(&log), 0);
	assert_int_equal(plog_log_oldest_ts(&log), 0);
	assert_memory_equal(&log.stats, &zero, sizeof(zero));
	plog_log_seek(&log, &c, 0);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
}

static void
test_append_then_read_returns_the_frame_exactly(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 10), 0);
	append_ok(&log, 1, 60);
	append_ok(&log, 2, 1);
	append_ok(&log, 5, 1514);
	plog_log_seek(&log, &c, 0);
	read_expect(&log, &c, 1, 60);
	read_expect(&log, &c, 2, 1);
	read_expect(&log, &c, 5, 1514);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	assert_int_equal(plog_log_pkts(&log), 3);
	assert_int_equal(plog_log_bytes(&log), 60 + 1 + 1514);
}

static void
test_log_full_refuses_new_packet_never_evicts(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	uint8_t f[100] = {0};

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 10), 0);
	for (uint64_t ts = 1; ts <= 10; ts++)
		append_ok(&log, ts, 100);
	assert_int_equal(plog_log_append(&log, 11, f, sizeof(f)), -ENOSPC);
	assert_int_equal(plog_log_append(&log, 12, f, sizeof(f)), -ENOSPC);
	assert_int_equal(log.stats.refused_full_pkts, 2);
	assert_int_equal(log.stats.refused_full_bytes, 0);
	assert_int_equal(log.stats.appended, 10);
	assert_int_equal(plog_log_pkts(&log), 10);
	plog_log_seek(&log, &c, 0);
	for (uint64_t ts = 1; ts <= 10; ts++)
		read_expect(&log, &c, ts, 100); /* the oldest are all still there */
}

static void
test_byte_bound_refuses_new_packet_never_evicts(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	uint8_t f[500] = {0};

	/* 4096 bytes hold 7 records of 520 (16 + 504) bytes, not 8 */
	assert_int_equal(plog_log_init(&log, mem, 4096, 1000), 0);
	for (uint64_t ts = 1; ts <= 7; ts++)
		append_ok(&log, ts, 500);
	assert_int_equal(plog_log_append(&log, 8, f, sizeof(f)), -ENOSPC);
	assert_int_equal(log.stats.refused_full_bytes, 1);
	assert_int_equal(log.stats.refused_full_pkts, 0);
	assert_int_equal(plog_log_pkts(&log), 7);
	assert_int_equal(plog_log_bytes(&log), 7 * 500);
	plog_log_seek(&log, &c, 0);
	for (uint64_t ts = 1; ts <= 7; ts++)
		read_expect(&log, &c, ts, 500);
	/* a smaller frame that fits before the end is still taken */
	append_ok(&log, 8, 400);
	read_expect(&log, &c, 8, 400);
}

static void
test_trim_makes_room_for_new_packets(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	uint8_t f[500] = {0};

	assert_int_equal(plog_log_init(&log, mem, 4096, 1000), 0);
	for (uint64_t ts = 1; ts <= 7; ts++)
		append_ok(&log, ts, 500);
	assert_int_equal(plog_log_append(&log, 8, f, sizeof(f)), -ENOSPC);
	assert_int_equal(plog_log_trim(&log, 1), 1);
	append_ok(&log, 8, 500); /* at the start of the buffer */
	plog_log_seek(&log, &c, 0);
	for (uint64_t ts = 2; ts <= 8; ts++)
		read_expect(&log, &c, ts, 500);
	/* and by packets */
	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 2), 0);
	append_ok(&log, 1, 10);
	append_ok(&log, 2, 10);
	assert_int_equal(plog_log_append(&log, 3, f, 10), -ENOSPC);
	assert_int_equal(plog_log_trim(&log, 1), 1);
	append_ok(&log, 3, 10);
}

static void
test_append_refuses_timestamp_not_above_the_last(void **state)
{
	(void)state;
	struct plog_log log;
	uint8_t f[8] = {0};

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	assert_int_equal(plog_log_append(&log, 0, f, sizeof(f)), -ERANGE); /* 0 is "none" */
	append_ok(&log, 5, 8);
	assert_int_equal(plog_log_append(&log, 5, f, sizeof(f)), -ERANGE);
	assert_int_equal(plog_log_append(&log, 4, f, sizeof(f)), -ERANGE);
	/* the newest timestamp ever appended counts, not the newest held */
	assert_int_equal(plog_log_trim(&log, 5), 1);
	assert_int_equal(plog_log_append(&log, 5, f, sizeof(f)), -ERANGE);
	assert_int_equal(log.stats.refused_order, 4);
	assert_int_equal(log.stats.appended, 1);
	assert_int_equal(plog_log_pkts(&log), 0);
	append_ok(&log, 6, 8);
}

static void
test_append_refuses_bad_length(void **state)
{
	(void)state;
	struct plog_log log;
	static uint8_t big[PLOG_LOG_MAX_FRAME + 1];

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	assert_int_equal(plog_log_append(&log, 1, big, 0), -EINVAL);
	assert_int_equal(plog_log_append(&log, 1, big, PLOG_LOG_MAX_FRAME + 1), -EINVAL);
	assert_int_equal(log.stats.refused_len, 2);
	append_ok(&log, 1, PLOG_LOG_MAX_FRAME);
	/* a frame this buffer could never hold is refused, not waited for */
	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	assert_int_equal(plog_log_append(&log, 1, big, 1024 - PLOG_LOG_REC_HDR + 1), -EINVAL);
	assert_int_equal(log.stats.refused_len, 1);
	assert_int_equal(log.stats.refused_full_bytes, 0);
	append_ok(&log, 1, 1024 - PLOG_LOG_REC_HDR);
	assert_int_equal(plog_log_pkts(&log), 1);
}

/* Nothing is left to trim in an empty log, so it must never refuse for want
 * of room, wherever the previous records ended. */
static void
test_empty_log_takes_any_frame_the_buffer_can_hold(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;

	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	plog_log_seek(&log, &c, 0);
	append_ok(&log, 1, 496); /* ends in the middle of the buffer */
	read_expect(&log, &c, 1, 496);
	assert_int_equal(plog_log_trim(&log, 1), 1);
	append_ok(&log, 2, 1024 - PLOG_LOG_REC_HDR);	   /* the whole buffer */
	read_expect(&log, &c, 2, 1024 - PLOG_LOG_REC_HDR); /* the cursor left at the end */
	assert_int_equal(plog_log_trim(&log, 2), 1);
	append_ok(&log, 3, 496);
	assert_int_equal(plog_log_trim(&log, 3), 1);
	append_ok(&log, 4, 600); /* more than the room left and than the offset */
	read_expect(&log, &c, 4, 600);
	assert_int_equal(log.stats.refused_full_bytes, 0);
}

static void
test_records_never_wrap_across_the_end(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;
	const uint8_t *base = (const uint8_t *)mem;

	/* 24 bytes left at the end: a skip record fills them */
	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	append_ok(&log, 1, 184);			   /* 200 bytes */
	append_ok(&log, 2, 1000 - 200 - PLOG_LOG_REC_HDR); /* up to offset 1000 */
	assert_int_equal(plog_log_trim(&log, 1), 1);
	append_ok(&log, 3, 17); /* needs 40 */
	plog_log_seek(&log, &c, 2);
	assert_int_equal(plog_log_read(&log, &c, &e), 1);
	assert_int_equal(e.ts, 3);
	assert_ptr_equal(e.frame, base + PLOG_LOG_REC_HDR); /* started over at offset 0 */
	plog_log_seek(&log, &c, 0);
	read_expect(&log, &c, 2, 1000 - 200 - PLOG_LOG_REC_HDR);
	read_expect(&log, &c, 3, 17);

	/* 8 bytes left at the end, less than a record header */
	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	append_ok(&log, 1, 504);			   /* 520 bytes */
	append_ok(&log, 2, 1016 - 520 - PLOG_LOG_REC_HDR); /* up to offset 1016 */
	assert_int_equal(plog_log_trim(&log, 1), 1);
	append_ok(&log, 3, 1);
	plog_log_seek(&log, &c, 2);
	assert_int_equal(plog_log_read(&log, &c, &e), 1);
	assert_int_equal(e.ts, 3);
	assert_ptr_equal(e.frame, base + PLOG_LOG_REC_HDR);
	plog_log_seek(&log, &c, 0);
	read_expect(&log, &c, 2, 1016 - 520 - PLOG_LOG_REC_HDR);
	read_expect(&log, &c, 3, 1);
}

static void
test_seek_and_read_across_the_wrap(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;

	/* 4 records of 216 bytes, 2 trimmed, 2 more: the 5th starts over */
	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	for (uint64_t ts = 1; ts <= 4; ts++)
		append_ok(&log, ts, 200);
	assert_int_equal(plog_log_trim(&log, 2), 2);
	append_ok(&log, 5, 200);
	append_ok(&log, 6, 200);
	assert_int_equal(log.tail - log.head, 1024); /* the whole ring in use */
	plog_log_seek(&log, &c, 0);
	for (uint64_t ts = 3; ts <= 6; ts++)
		read_expect(&log, &c, ts, 200);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	plog_log_seek(&log, &c, 4);
	read_expect(&log, &c, 5, 200);
	read_expect(&log, &c, 6, 200);
	plog_log_seek(&log, &c, 5);
	read_expect(&log, &c, 6, 200);
	assert_int_equal(plog_log_oldest_ts(&log), 3);
}

static void
test_seek_places_the_cursor_after_the_given_timestamp(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 10; ts <= 100; ts += 10)
		append_ok(&log, ts, 64);
	plog_log_seek(&log, &c, 0);
	read_expect(&log, &c, 10, 64);
	plog_log_seek(&log, &c, 10);
	read_expect(&log, &c, 20, 64);
	plog_log_seek(&log, &c, 15);
	read_expect(&log, &c, 20, 64);
	plog_log_seek(&log, &c, 99);
	read_expect(&log, &c, 100, 64);
	plog_log_seek(&log, &c, 100);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	plog_log_seek(&log, &c, 1000);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	/* below the oldest entry left: the oldest */
	plog_log_trim(&log, 40);
	plog_log_seek(&log, &c, 20);
	read_expect(&log, &c, 50, 64);
}

static void
test_read_at_the_end_returns_entries_appended_later(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	plog_log_seek(&log, &c, 0);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	append_ok(&log, 1, 70);
	read_expect(&log, &c, 1, 70);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	append_ok(&log, 2, 71);
	append_ok(&log, 3, 72);
	read_expect(&log, &c, 2, 71);
	read_expect(&log, &c, 3, 72);
	assert_int_equal(log.stats.read, 3);
}

/* plog_log_seek_end() before an append points at the entry appended: also
 * when that entry starts over at offset 0 (a skip record, a remainder below
 * a header, an empty log's new lap) and when trims move the head. */
static void
test_seek_end_reads_the_next_entry_appended(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;

	/* plain: in the middle of a log */
	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	append_ok(&log, 1, 60);
	plog_log_seek_end(&log, &c);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	append_ok(&log, 2, 61);
	append_ok(&log, 3, 62);
	read_expect(&log, &c, 2, 61);
	read_expect(&log, &c, 3, 62);

	/* the entry after the cursor starts over behind a skip record */
	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	append_ok(&log, 1, 184);
	append_ok(&log, 2, 1000 - 200 - PLOG_LOG_REC_HDR);
	assert_int_equal(plog_log_trim(&log, 1), 1);
	plog_log_seek_end(&log, &c);
	append_ok(&log, 3, 17);
	read_expect(&log, &c, 3, 17);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);

	/* ... behind a remainder shorter than a header */
	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	append_ok(&log, 1, 504);
	append_ok(&log, 2, 1016 - 520 - PLOG_LOG_REC_HDR);
	assert_int_equal(plog_log_trim(&log, 1), 1);
	plog_log_seek_end(&log, &c);
	append_ok(&log, 3, 1);
	read_expect(&log, &c, 3, 1);

	/* an empty log whose next entry starts a new lap */
	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	append_ok(&log, 1, 600);
	assert_int_equal(plog_log_trim(&log, 1), 1);
	plog_log_seek_end(&log, &c);
	append_ok(&log, 2, 700); /* does not fit before the end */
	read_expect(&log, &c, 2, 700);

	/* entries before the cursor trimmed: it keeps its place */
	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	append_ok(&log, 1, 64);
	append_ok(&log, 2, 64);
	plog_log_seek_end(&log, &c);
	append_ok(&log, 3, 64);
	assert_int_equal(plog_log_trim(&log, 2), 2);
	read_expect(&log, &c, 3, 64);
}

static void
test_cursor_behind_trim_moves_to_oldest(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 1; ts <= 10; ts++)
		append_ok(&log, ts, 32);
	plog_log_seek(&log, &c, 2); /* the replay starts after ts 2 */
	read_expect(&log, &c, 3, 32);
	assert_int_equal(plog_log_trim(&log, 6), 6);
	read_expect(&log, &c, 7, 32);
	/* new input while replaying is read after the rest */
	append_ok(&log, 11, 32);
	for (uint64_t ts = 8; ts <= 11; ts++)
		read_expect(&log, &c, ts, 32);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	/* a cursor at the end when everything is trimmed stays at the end */
	assert_int_equal(plog_log_trim(&log, 11), 5);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	append_ok(&log, 12, 32);
	read_expect(&log, &c, 12, 32);
}

static void
test_cursor_ahead_of_a_trim_keeps_its_place(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 1; ts <= 10; ts++)
		append_ok(&log, ts, 40);
	plog_log_seek(&log, &c, 0);
	for (uint64_t ts = 1; ts <= 5; ts++)
		read_expect(&log, &c, ts, 40);
	assert_int_equal(plog_log_trim(&log, 3), 3);
	read_expect(&log, &c, 6, 40);
}

static void
test_peek_returns_the_next_entry_without_taking_it(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	plog_log_seek(&log, &c, 0);
	assert_int_equal(plog_log_peek(&log, &c, &e), 0);
	for (uint64_t ts = 1; ts <= 4; ts++)
		append_ok(&log, ts, 50);
	assert_int_equal(plog_log_peek(&log, &c, &e), 1);
	assert_int_equal(e.ts, 1);
	assert_int_equal(plog_log_peek(&log, &c, &e), 1);
	assert_int_equal(e.ts, 1);
	assert_int_equal(log.stats.read, 0);
	read_expect(&log, &c, 1, 50);
	/* behind a trim it shows the oldest entry left, as read would */
	plog_log_trim(&log, 2);
	assert_int_equal(plog_log_peek(&log, &c, &e), 1);
	assert_int_equal(e.ts, 3);
	read_expect(&log, &c, 3, 50);
	read_expect(&log, &c, 4, 50);
	assert_int_equal(plog_log_peek(&log, &c, &e), 0);
	assert_int_equal(log.stats.read, 3);
}

static void
test_trim_removes_only_entries_at_or_below_watermark(void **state)
{
	(void)state;
	struct plog_log log;

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 10; ts <= 100; ts += 10)
		append_ok(&log, ts, 64);
	assert_int_equal(plog_log_trim(&log, 35), 3); /* 10, 20, 30 */
	assert_int_equal(plog_log_oldest_ts(&log), 40);
	assert_int_equal(plog_log_trim(&log, 39), 0);
	assert_int_equal(plog_log_trim(&log, 40), 1); /* at the watermark: covered */
	assert_int_equal(plog_log_oldest_ts(&log), 50);
	assert_int_equal(plog_log_pkts(&log), 6);
	assert_int_equal(plog_log_bytes(&log), 6 * 64);
	assert_int_equal(plog_log_trim(&log, 1000), 6);
	assert_int_equal(plog_log_pkts(&log), 0);
	assert_int_equal(plog_log_bytes(&log), 0);
	assert_int_equal(plog_log_oldest_ts(&log), 0);
	assert_int_equal(plog_log_trim(&log, 2000), 0); /* an empty log */
}

static void
test_trim_with_an_older_watermark_changes_nothing(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 1; ts <= 10; ts++)
		append_ok(&log, ts, 20);
	assert_int_equal(plog_log_trim(&log, 5), 5);
	assert_int_equal(plog_log_trim(&log, 5), 0);
	assert_int_equal(plog_log_trim(&log, 3), 0);
	assert_int_equal(plog_log_trim(&log, 0), 0);
	assert_int_equal(log.trimmed_to, 5);
	assert_int_equal(plog_log_pkts(&log), 5);
	plog_log_seek(&log, &c, 0);
	for (uint64_t ts = 6; ts <= 10; ts++)
		read_expect(&log, &c, ts, 20);
}

static void
test_stats_count_appends_trims_reads_and_high_water_marks(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;
	uint8_t f[16] = {0};

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 3), 0);
	append_ok(&log, 1, 10);
	append_ok(&log, 2, 20);
	append_ok(&log, 3, 30);
	assert_int_equal(plog_log_append(&log, 4, f, 16), -ENOSPC);
	assert_int_equal(plog_log_append(&log, 3, f, 16), -ERANGE);
	assert_int_equal(plog_log_append(&log, 4, f, 0), -EINVAL);
	assert_int_equal(plog_log_trim(&log, 2), 2);
	append_ok(&log, 4, 8);
	plog_log_seek(&log, &c, 0);
	assert_int_equal(plog_log_read(&log, &c, &e), 1);
	assert_int_equal(plog_log_peek(&log, &c, &e), 1);
	assert_int_equal(plog_log_read(&log, &c, &e), 1);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);

	assert_int_equal(log.stats.appended, 4);
	assert_int_equal(log.stats.appended_bytes, 10 + 20 + 30 + 8);
	assert_int_equal(log.stats.trimmed, 2);
	assert_int_equal(log.stats.trimmed_bytes, 10 + 20);
	assert_int_equal(log.stats.refused_full_pkts, 1);
	assert_int_equal(log.stats.refused_full_bytes, 0);
	assert_int_equal(log.stats.refused_order, 1);
	assert_int_equal(log.stats.refused_len, 1);
	assert_int_equal(log.stats.read, 2);
	assert_int_equal(log.stats.hwm_pkts, 3);
	assert_int_equal(log.stats.hwm_bytes, rec(10) + rec(20) + rec(30));
	/* frame bytes only, without record headers and padding */
	assert_int_equal(plog_log_pkts(&log), 2);
	assert_int_equal(plog_log_bytes(&log), 30 + 8);
}

/* splitmix64: the same sequence on every platform, unlike rand(). */
static uint64_t
next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The model: the entries held, oldest first, as an array window. */
struct model {
	uint64_t ts[4096];
	uint32_t len[4096];
	uint32_t first, end; /* held: [first, end) */
	uint64_t bytes;
};

/* Random appends (gaps in timestamps, sizes up to 3/4 of the buffer), trims,
 * replays from a random point, and a long-lived cursor read a little at a
 * time across trims: whatever is appended and not trimmed comes back, whole
 * and in order, and the log's counts always equal the model's, across
 * thousands of wrap-arounds of a small buffer. */
static void
test_random_operations_match_a_reference_model(void **state)
{
	(void)state;
	enum { OPS = 100000, SIZE = 20000, MAXPKTS = 48 };
	static struct model m;
	static uint8_t f[SIZE];
	struct plog_log log;
	struct plog_cursor live, c;
	struct plog_entry e;
	uint64_t seed = 2026, ts = 0, wm = 0, live_last = 0, trimmed = 0;
	uint32_t refused = 0, wrapped_reads = 0, empty_laps = 0;

	memset(&m, 0, sizeof(m));
	assert_int_equal(plog_log_init(&log, mem, SIZE, MAXPKTS), 0);
	plog_log_seek(&log, &live, 0);
	for (int op = 0; op < OPS; op++) {
		uint64_t r = next_rand(&seed);
		uint32_t kind = (uint32_t)(r % 100);

		if (kind < 60) { /* append */
			uint32_t len = (r >> 8) % 16 == 0 ? 1 + (uint32_t)(r >> 16) % (SIZE * 3 / 4)
							  : 1 + (uint32_t)(r >> 16) % 1600;
			uint64_t need = rec(len), used = log.tail - log.head;
			uint32_t held = m.end - m.first;
			int rc;

			ts += 1 + (r >> 40) % 3;
			empty_laps += held == 0 && SIZE - log.tail % SIZE < need;
			frame_of(f, len, ts);
			rc = plog_log_append(&log, ts, f, len);
			if (rc == 0) {
				assert_true(held < MAXPKTS && used + need <= SIZE);
				m.ts[m.end % 4096] = ts;
				m.len[m.end % 4096] = len;
				m.end++;
				m.bytes += len;
			} else {
				/* refused only when a bound is really reached: at
				 * worst a filler of need - 8 bytes is wasted */
				assert_int_equal(rc, -ENOSPC);
				assert_true(held == MAXPKTS ||
					    (held > 0 && used + 2 * need - 8 > SIZE));
				refused++;
			}
		} else if (kind < 80) { /* trim: a checkpoint covers only what was sent */
			uint32_t expect = 0;

			/* phases that fill the log, keep it half full, drain it */
			wm += (r >> 8) % (op / 2000 % 3 == 0 ? 6 : op / 2000 % 3 == 1 ? 16 : 40);
			if (wm > ts)
				wm = ts;
			while (m.first < m.end && m.ts[m.first % 4096] <= wm) {
				m.bytes -= m.len[m.first % 4096];
				m.first++;
				expect++;
			}
			assert_int_equal(plog_log_trim(&log, wm), expect);
			trimmed += expect;
		} else if (kind < 95) { /* the long-lived cursor reads a few */
			for (uint32_t k = (uint32_t)(r >> 8) % 6; k > 0; k--) {
				uint32_t i = m.first;

				while (i < m.end && m.ts[i % 4096] <= live_last)
					i++;
				if (i == m.end) {
					assert_int_equal(plog_log_read(&log, &live, &e), 0);
					break;
				}
				read_expect(&log, &live, m.ts[i % 4096], m.len[i % 4096]);
				live_last = m.ts[i % 4096];
			}
		} else { /* a replay from a point at or after the watermark */
			uint64_t from = wm + (r >> 8) % 8;
			uint32_t i = m.first;
			uint64_t prev_pos = 0;

			plog_log_seek(&log, &c, from);
			while (i < m.end && m.ts[i % 4096] <= from)
				i++;
			for (; i < m.end; i++) {
				const uint8_t *p;

				read_expect(&log, &c, m.ts[i % 4096], m.len[i % 4096]);
				p = log.mem + (c.pos - rec(m.len[i % 4096])) % log.size;
				wrapped_reads += (uint64_t)(p - log.mem) < prev_pos;
				prev_pos = (uint64_t)(p - log.mem);
			}
			assert_int_equal(plog_log_read(&log, &c, &e), 0);
		}
		assert_int_equal(plog_log_pkts(&log), m.end - m.first);
		assert_int_equal(plog_log_bytes(&log), m.bytes);
		assert_int_equal(plog_log_oldest_ts(&log),
				 m.first < m.end ? m.ts[m.first % 4096] : 0);
		assert_true(log.tail - log.head <= SIZE);
		assert_int_equal(log.stats.appended, m.end);
		assert_int_equal(log.stats.trimmed, trimmed);
		assert_int_equal(log.stats.refused_full_pkts + log.stats.refused_full_bytes,
				 refused);
	}
	/* the run went where it should: both bounds, many laps, wrapped replays */
	assert_true(log.stats.refused_full_pkts > 100);
	assert_true(log.stats.refused_full_bytes > 100);
	assert_true(log.tail / SIZE > 1000);
	assert_true(wrapped_reads > 100);
	assert_true(empty_laps > 50); /* an empty log whose tail was near the end */
	assert_int_equal(log.stats.hwm_pkts, MAXPKTS);
}

/* ---- pcapng ---------------------------------------------------------------- */

static uint16_t
rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* One EPB as the reader below takes it apart. */
struct epb {
	uint64_t ts;
	uint32_t len;
	const uint8_t *data;
	char comment[32];
};

/* Walk a dump: the section header, the interface (named `if_name`), then
 * EPBs, every block checked (lengths, trailing length, padding, options);
 * returns the number of EPBs. */
static int
walk_pcapng(const uint8_t *p, size_t n, const char *if_name, struct epb *out, int max)
{
	size_t off, name_len = strlen(if_name);
	uint32_t blen;
	int k = 0;

	/* Section Header Block */
	assert_true(n >= 28);
	assert_int_equal(rd32(p), 0x0A0D0D0A);
	assert_int_equal(rd32(p + 4), 28);
	assert_int_equal(rd32(p + 8), 0x1A2B3C4D);
	assert_int_equal(rd16(p + 12), 1); /* version 1.0 */
	assert_int_equal(rd16(p + 14), 0);
	assert_int_equal(rd32(p + 16), 0xFFFFFFFF); /* section length unknown */
	assert_int_equal(rd32(p + 20), 0xFFFFFFFF);
	assert_int_equal(rd32(p + 24), 28);
	off = 28;
	/* Interface Description Block: Ethernet, if_name, end of options */
	blen = rd32(p + off + 4);
	assert_int_equal(rd32(p + off), 1);
	assert_int_equal(blen, 20 + 4 + ((name_len + 3) & ~(size_t)3) + 4);
	assert_int_equal(rd16(p + off + 8), 1); /* LINKTYPE_ETHERNET */
	assert_int_equal(rd16(p + off + 10), 0);
	assert_true(rd32(p + off + 12) == 0 || rd32(p + off + 12) == 65535);
	assert_int_equal(rd16(p + off + 16), 2); /* if_name */
	assert_int_equal(rd16(p + off + 18), name_len);
	assert_memory_equal(p + off + 20, if_name, name_len);
	for (size_t i = name_len; i % 4 != 0; i++)
		assert_int_equal(p[off + 20 + i], 0);
	assert_int_equal(rd32(p + off + blen - 8), 0); /* opt_endofopt */
	assert_int_equal(rd32(p + off + blen - 4), blen);
	off += blen;
	/* Enhanced Packet Blocks */
	while (off < n) {
		const uint8_t *b = p + off;
		uint32_t cap, padded, clen;

		assert_true(n - off >= 32);
		blen = rd32(b + 4);
		assert_int_equal(rd32(b), 6);
		assert_true(blen % 4 == 0 && blen <= n - off);
		assert_int_equal(rd32(b + blen - 4), blen);
		assert_int_equal(rd32(b + 8), 0); /* interface 0 */
		cap = rd32(b + 20);
		assert_int_equal(rd32(b + 24), cap); /* original length = captured */
		padded = (cap + 3) & ~3u;
		for (uint32_t i = cap; i < padded; i++)
			assert_int_equal(b[28 + i], 0);
		assert_int_equal(rd16(b + 28 + padded), 1); /* opt_comment */
		clen = rd16(b + 28 + padded + 2);
		assert_true(clen > 3 && clen < sizeof(out[k].comment));
		assert_int_equal(blen, 28 + padded + 4 + ((clen + 3) & ~3u) + 4 + 4);
		assert_int_equal(rd32(b + blen - 8), 0); /* opt_endofopt */
		assert_true(k < max);
		out[k].ts = (uint64_t)rd32(b + 12) << 32 | rd32(b + 16);
		out[k].len = cap;
		out[k].data = b + 28;
		memcpy(out[k].comment, b + 28 + padded + 4, clen);
		out[k].comment[clen] = '\0';
		k++;
		off += blen;
	}
	assert_int_equal(off, n);
	return k;
}

static void
test_pcapng_of_an_empty_log_has_only_the_headers(void **state)
{
	(void)state;
	struct plog_log log;
	static uint8_t out[1024];
	struct blob b = {out, 0, sizeof(out), 0, 0};
	struct epb epbs[1];

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 10), 0);
	assert_int_equal(plog_log_write_pcapng(&log, "port0", &blob_write, &b), 0);
	assert_int_equal(walk_pcapng(out, b.n, "port0", epbs, 1), 0);
	assert_int_equal(b.n, 28 + 20 + 4 + 8 + 4);
}

static void
test_pcapng_has_one_block_per_entry_oldest_first(void **state)
{
	(void)state;
	struct plog_log log;
	static uint8_t out[64 * 1024];
	struct blob b = {out, 0, sizeof(out), 0, 0};
	struct epb epbs[16];
	uint8_t f[300];

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 1; ts <= 9; ts++)
		append_ok(&log, ts, 60 + (uint32_t)ts); /* every padding 0..3 */
	plog_log_trim(&log, 3);
	assert_int_equal(plog_log_write_pcapng(&log, "to_primary", &blob_write, &b), 0);
	assert_int_equal(walk_pcapng(out, b.n, "to_primary", epbs, 16), 6);
	for (int k = 0; k < 6; k++) {
		char want[32];

		assert_int_equal(epbs[k].ts, 4 + k);
		assert_int_equal(epbs[k].len, 64 + k);
		frame_of(f, epbs[k].len, epbs[k].ts);
		assert_memory_equal(epbs[k].data, f, epbs[k].len);
		snprintf(want, sizeof(want), "ts=%d", 4 + k);
		assert_string_equal(epbs[k].comment, want);
	}
}

static void
test_pcapng_timestamp_is_the_logical_one_in_both_halves(void **state)
{
	(void)state;
	struct plog_log log;
	static uint8_t out[4096];
	struct blob b = {out, 0, sizeof(out), 0, 0};
	struct epb epbs[4];

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	append_ok(&log, 0x123456789ull, 60);
	append_ok(&log, UINT64_MAX, 61);
	assert_int_equal(plog_log_write_pcapng(&log, "p", &blob_write, &b), 0);
	assert_int_equal(walk_pcapng(out, b.n, "p", epbs, 4), 2);
	assert_int_equal(rd32(epbs[0].data - 16), 0x1);	       /* high */
	assert_int_equal(rd32(epbs[0].data - 12), 0x23456789); /* low */
	assert_true(epbs[1].ts == UINT64_MAX);
	assert_string_equal(epbs[0].comment, "ts=4886718345");
	assert_string_equal(epbs[1].comment, "ts=18446744073709551615");
}

static void
test_pcapng_dump_of_a_wrapped_log_is_in_order(void **state)
{
	(void)state;
	struct plog_log log;
	static uint8_t out[8192];
	struct blob b = {out, 0, sizeof(out), 0, 0};
	struct epb epbs[8];
	uint8_t f[200];

	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	for (uint64_t ts = 1; ts <= 4; ts++)
		append_ok(&log, ts, 200);
	plog_log_trim(&log, 2);
	append_ok(&log, 5, 200);
	append_ok(&log, 6, 199);
	assert_int_equal(plog_log_write_pcapng(&log, "eth1", &blob_write, &b), 0);
	assert_int_equal(walk_pcapng(out, b.n, "eth1", epbs, 8), 4);
	for (int k = 0; k < 4; k++) {
		assert_int_equal(epbs[k].ts, 3 + k);
		frame_of(f, epbs[k].len, epbs[k].ts);
		assert_memory_equal(epbs[k].data, f, epbs[k].len);
	}
	assert_int_equal(epbs[3].len, 199);
}

/* A writer that fails at any byte stops the dump: -1, and no more writes. */
static void
test_pcapng_stops_when_write_fails(void **state)
{
	(void)state;
	struct plog_log log;
	static uint8_t out[4096];
	struct blob b = {out, 0, sizeof(out), 0, 0};
	size_t total;

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 1; ts <= 3; ts++)
		append_ok(&log, ts, 61);
	assert_int_equal(plog_log_write_pcapng(&log, "p", &blob_write, &b), 0);
	total = b.n;
	for (size_t cap = 0; cap < total; cap++) {
		b = (struct blob){out, 0, cap, 0, 0};
		assert_int_equal(plog_log_write_pcapng(&log, "p", &blob_write, &b), -1);
		assert_int_equal(b.calls_after_failure, 0);
	}
}

static void
test_tshark_reads_the_dump(void **state)
{
	(void)state;
	struct plog_log log;
	static uint8_t out[16 * 1024];
	struct blob b = {out, 0, sizeof(out), 0, 0};
	char path[] = "/tmp/plog-test-XXXXXX", cmd[256], lines[8][64];
	FILE *p;
	int fd, n = 0, status;

	if (access("/usr/bin/tshark", X_OK) != 0)
		skip();
	/* a wrapped log, frames of every padding */
	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	for (uint64_t ts = 1; ts <= 4; ts++)
		append_ok(&log, ts * 100, 200);
	plog_log_trim(&log, 200);
	append_ok(&log, 500, 201);
	append_ok(&log, 600, 130);
	append_ok(&log, 700, 35); /* the ring is full to the byte */
	assert_int_equal(plog_log_write_pcapng(&log, "to_primary", &blob_write, &b), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, out, b.n), (ssize_t)b.n);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/tshark -r %s -T fields -E separator=, -e frame.len -e frame.comment "
		 "2>/dev/null",
		 path);
	p = popen(cmd, "r");
	if (p != NULL) {
		while (n < 8 && fgets(lines[n], sizeof(lines[n]), p) != NULL)
			n++;
		status = pclose(p);
	} else {
		status = -1;
	}
	unlink(path);
	assert_int_equal(status, 0);
	assert_int_equal(n, 5);
	assert_string_equal(lines[0], "200,ts=300\n");
	assert_string_equal(lines[1], "200,ts=400\n");
	assert_string_equal(lines[2], "201,ts=500\n");
	assert_string_equal(lines[3], "130,ts=600\n");
	assert_string_equal(lines[4], "35,ts=700\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_refuses_bad_arguments),
		cmocka_unit_test(test_new_log_is_empty),
		cmocka_unit_test(test_append_then_read_returns_the_frame_exactly),
		cmocka_unit_test(test_log_full_refuses_new_packet_never_evicts),
		cmocka_unit_test(test_byte_bound_refuses_new_packet_never_evicts),
		cmocka_unit_test(test_trim_makes_room_for_new_packets),
		cmocka_unit_test(test_append_refuses_timestamp_not_above_the_last),
		cmocka_unit_test(test_append_refuses_bad_length),
		cmocka_unit_test(test_empty_log_takes_any_frame_the_buffer_can_hold),
		cmocka_unit_test(test_records_never_wrap_across_the_end),
		cmocka_unit_test(test_seek_and_read_across_the_wrap),
		cmocka_unit_test(test_seek_places_the_cursor_after_the_given_timestamp),
		cmocka_unit_test(test_read_at_the_end_returns_entries_appended_later),
		cmocka_unit_test(test_seek_end_reads_the_next_entry_appended),
		cmocka_unit_test(test_cursor_behind_trim_moves_to_oldest),
		cmocka_unit_test(test_cursor_ahead_of_a_trim_keeps_its_place),
		cmocka_unit_test(test_peek_returns_the_next_entry_without_taking_it),
		cmocka_unit_test(test_trim_removes_only_entries_at_or_below_watermark),
		cmocka_unit_test(test_trim_with_an_older_watermark_changes_nothing),
		cmocka_unit_test(test_stats_count_appends_trims_reads_and_high_water_marks),
		cmocka_unit_test(test_random_operations_match_a_reference_model),
		cmocka_unit_test(test_pcapng_of_an_empty_log_has_only_the_headers),
		cmocka_unit_test(test_pcapng_has_one_block_per_entry_oldest_first),
		cmocka_unit_test(test_pcapng_timestamp_is_the_logical_one_in_both_halves),
		cmocka_unit_test(test_pcapng_dump_of_a_wrapped_log_is_in_order),
		cmocka_unit_test(test_pcapng_stops_when_write_fails),
		cmocka_unit_test(test_tshark_reads_the_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
