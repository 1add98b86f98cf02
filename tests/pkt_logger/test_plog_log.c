/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* The predecessor's packet log (plog_log.h): bounded, never evicts what is
 * not trimmed, replays in order, dumps as pcapng. */
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

#define LOG_BYTES (64 * 1024)

static uint64_t mem[LOG_BYTES / 8];

static void
frame_of(uint8_t *f, uint32_t len, uint64_t ts)
{
	for (uint32_t i = 0; i < len; i++)
		f[i] = (uint8_t)(ts * 31 + i);
}

static void
test_full_log_refuses_new_packets_and_never_evicts(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;
	uint8_t f[1500];
	uint64_t ts = 0;

	/* by packets */
	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 10), 0);
	for (int i = 0; i < 10; i++) {
		frame_of(f, 100, ++ts);
		assert_int_equal(plog_log_append(&log, ts, f, 100), 0);
	}
	assert_int_equal(plog_log_append(&log, ++ts, f, 100), -ENOSPC);
	assert_int_equal(log.stats.refused_full_pkts, 1);
	plog_log_seek(&log, &c, 0);
	for (uint64_t want = 1; want <= 10; want++) {
		assert_int_equal(plog_log_read(&log, &c, &e), 1);
		assert_int_equal(e.ts, want); /* the oldest are still there */
	}
	/* by bytes */
	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 1000000), 0);
	ts = 0;
	while (plog_log_append(&log, ++ts, f, sizeof(f)) == 0)
		;
	assert_int_equal(log.stats.refused_full_bytes, 1);
	assert_true(plog_log_pkts(&log) >= (LOG_BYTES / (1500 + 16)) - 1);
	assert_int_equal(plog_log_oldest_ts(&log), 1);
	/* trimming makes room again */
	assert_int_equal(plog_log_trim(&log, 3), 3);
	assert_int_equal(plog_log_append(&log, ts, f, sizeof(f)), 0);
}

static void
test_trim_removes_only_entries_at_or_below_the_watermark(void **state)
{
	(void)state;
	struct plog_log log;
	uint8_t f[64] = {0};

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 10; ts <= 100; ts += 10)
		assert_int_equal(plog_log_append(&log, ts, f, sizeof(f)), 0);
	assert_int_equal(plog_log_trim(&log, 35), 3);
	assert_int_equal(plog_log_oldest_ts(&log), 40);
	assert_int_equal(plog_log_trim(&log, 30), 0); /* an older watermark */
	assert_int_equal(plog_log_trim(&log, 40), 1);
	assert_int_equal(plog_log_pkts(&log), 6);
	assert_int_equal(plog_log_bytes(&log), 6 * sizeof(f));
	assert_int_equal(plog_log_trim(&log, 1000), 6);
	assert_int_equal(plog_log_pkts(&log), 0);
	assert_int_equal(plog_log_oldest_ts(&log), 0);
	assert_int_equal(log.stats.trimmed, 10);
}

static void
test_appends_out_of_order_or_of_bad_length_are_refused(void **state)
{
	(void)state;
	struct plog_log log;
	uint8_t f[8] = {0};
	static uint8_t big[PLOG_LOG_MAX_FRAME + 1];

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	assert_int_equal(plog_log_append(&log, 5, f, sizeof(f)), 0);
	assert_int_equal(plog_log_append(&log, 5, f, sizeof(f)), -ERANGE);
	assert_int_equal(plog_log_append(&log, 4, f, sizeof(f)), -ERANGE);
	assert_int_equal(plog_log_append(&log, 6, f, 0), -EINVAL);
	assert_int_equal(plog_log_append(&log, 6, big, sizeof(big)), -EINVAL);
	assert_int_equal(log.stats.refused_order, 2);
	assert_int_equal(log.stats.refused_len, 2);
	assert_int_equal(plog_log_pkts(&log), 1);
	assert_int_equal(plog_log_init(&log, mem, 32, 100), -EINVAL); /* too small for any */
	/* a frame the buffer could never hold is refused, not waited for */
	assert_int_equal(plog_log_init(&log, mem, 1024, 100), 0);
	assert_int_equal(plog_log_append(&log, 1, big, 1024 - PLOG_LOG_REC_HDR + 1), -EINVAL);
	assert_int_equal(plog_log_append(&log, 1, big, 1024 - PLOG_LOG_REC_HDR), 0);
	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 0), -EINVAL);
}

static void
test_cursor_left_behind_by_a_trim_moves_to_the_oldest(void **state)
{
	(void)state;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;
	uint8_t f[32] = {0};

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 1; ts <= 10; ts++)
		assert_int_equal(plog_log_append(&log, ts, f, sizeof(f)), 0);
	plog_log_seek(&log, &c, 2); /* the replay starts after ts 2 */
	assert_int_equal(plog_log_read(&log, &c, &e), 1);
	assert_int_equal(e.ts, 3);
	plog_log_trim(&log, 6);
	assert_int_equal(plog_log_read(&log, &c, &e), 1);
	assert_int_equal(e.ts, 7);
	/* new input while replaying is read after the rest */
	assert_int_equal(plog_log_append(&log, 11, f, sizeof(f)), 0);
	/* peek shows what read returns, without taking it */
	assert_int_equal(plog_log_peek(&log, &c, &e), 1);
	assert_int_equal(e.ts, 8);
	assert_int_equal(plog_log_peek(&log, &c, &e), 1);
	assert_int_equal(e.ts, 8);
	for (uint64_t want = 8; want <= 11; want++) {
		assert_int_equal(plog_log_read(&log, &c, &e), 1);
		assert_int_equal(e.ts, want);
	}
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
	plog_log_seek(&log, &c, 100);
	assert_int_equal(plog_log_read(&log, &c, &e), 0);
}

/* Random appends, trims and replays against an array: whatever is neither
 * trimmed nor refused comes back, whole and in order, across thousands of
 * wrap-arounds of a small buffer. */
static void
test_random_operations_match_a_reference_model(void **state)
{
	(void)state;
	enum { N = 40000 };
	static uint32_t len_of[N + 1];
	static uint8_t present[N + 1];
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;
	uint8_t f[2000], want[2000];
	uint64_t ts = 0, trimmed = 0;
	uint32_t refused = 0;

	srand(99);
	assert_int_equal(plog_log_init(&log, mem, 20000, 64), 0);
	while (ts < N) {
		int op = rand() % 10;

		if (op < 7) {
			uint32_t len = 1 + (uint32_t)rand() % 1999;

			ts++;
			frame_of(f, len, ts);
			int rc = plog_log_append(&log, ts, f, len);

			if (rc == 0) {
				len_of[ts] = len;
				present[ts] = 1;
			} else {
				assert_int_equal(rc, -ENOSPC);
				refused++;
			}
		} else if (op < 9) {
			/* a checkpoint covers only packets already sent */
			uint64_t wm = trimmed + (uint64_t)rand() % 20;
			uint32_t expect = 0;

			if (wm > ts)
				wm = ts;
			if (wm <= trimmed)
				continue;
			for (uint64_t t = trimmed + 1; t <= wm && t <= ts; t++)
				if (present[t]) {
					present[t] = 0;
					expect++;
				}
			assert_int_equal(plog_log_trim(&log, wm), expect);
			trimmed = wm;
		} else {
			uint64_t from = trimmed + (uint64_t)rand() % 10, prev = 0;

			plog_log_seek(&log, &c, from);
			while (plog_log_read(&log, &c, &e) == 1) {
				assert_true(e.ts > from && e.ts > prev && present[e.ts]);
				assert_int_equal(e.len, len_of[e.ts]);
				frame_of(want, e.len, e.ts);
				assert_memory_equal(e.frame, want, e.len);
				prev = e.ts;
			}
			/* nothing present after `from` was skipped */
			for (uint64_t t = from + 1; t <= ts; t++)
				if (present[t])
					assert_true(t <= prev);
		}
		if (rand() % 64 == 0) {
			uint32_t held = 0;

			for (uint64_t t = trimmed + 1; t <= ts; t++)
				held += present[t];
			assert_int_equal(plog_log_pkts(&log), held);
		}
	}
	assert_true(refused > 100);			   /* the bounds were reached */
	assert_true(log.tail > 50 * log.size);		   /* and the ring wrapped a lot */
	assert_int_equal(log.stats.appended, N - refused); /* nothing else was lost */
}

/* A pcapng reader just big enough to check the dump. */
struct blob {
	uint8_t *p;
	size_t n, cap;
};

static int
blob_write(void *ctx, const void *buf, size_t len)
{
	struct blob *b = ctx;

	if (b->n + len > b->cap)
		return -1;
	memcpy(b->p + b->n, buf, len);
	b->n += len;
	return 0;
}

static uint32_t
rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void
test_pcapng_dump_holds_every_entry_oldest_first(void **state)
{
	(void)state;
	struct plog_log log;
	uint8_t f[300];
	static uint8_t out[64 * 1024];
	struct blob b = {out, 0, sizeof(out)};
	size_t off;
	uint64_t want_ts = 4;

	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 1; ts <= 9; ts++) {
		frame_of(f, 60 + (uint32_t)ts, ts);
		assert_int_equal(plog_log_append(&log, ts, f, 60 + (uint32_t)ts), 0);
	}
	plog_log_trim(&log, 3);
	assert_int_equal(plog_log_write_pcapng(&log, "to_primary", blob_write, &b), 0);
	/* SHB */
	assert_int_equal(rd32(out), 0x0A0D0D0A);
	assert_int_equal(rd32(out + 8), 0x1A2B3C4D);
	off = rd32(out + 4);
	/* IDB, linktype Ethernet */
	assert_int_equal(rd32(out + off), 1);
	assert_int_equal(out[off + 8], 1);
	off += rd32(out + off + 4);
	while (off < b.n) {
		uint32_t type = rd32(out + off), blen = rd32(out + off + 4);
		uint32_t cap = rd32(out + off + 20);
		uint64_t ts = (uint64_t)rd32(out + off + 12) << 32 | rd32(out + off + 16);
		char comment[32];

		assert_int_equal(type, 6);
		assert_int_equal(rd32(out + off + blen - 4), blen); /* trailing length */
		assert_int_equal(ts, want_ts);
		assert_int_equal(cap, 60 + ts);
		frame_of(f, cap, ts);
		assert_memory_equal(out + off + 28, f, cap);
		snprintf(comment, sizeof(comment), "ts=%llu", (unsigned long long)ts);
		assert_memory_equal(out + off + 28 + ((cap + 3) & ~3u) + 4, comment, strlen(comment));
		want_ts++;
		off += blen;
	}
	assert_int_equal(want_ts, 10);
	assert_int_equal(off, b.n);
	/* a writer that fails stops the dump */
	b.cap = 100;
	b.n = 0;
	assert_int_equal(plog_log_write_pcapng(&log, "x", blob_write, &b), -1);
}

static void
test_tshark_reads_the_dump(void **state)
{
	(void)state;
	struct plog_log log;
	uint8_t f[64];
	static uint8_t out[16 * 1024];
	struct blob b = {out, 0, sizeof(out)};
	char path[] = "/tmp/plog-test-XXXXXX", cmd[256], line[64];
	FILE *p;
	int fd, n = 0;

	if (access("/usr/bin/tshark", X_OK) != 0)
		skip();
	assert_int_equal(plog_log_init(&log, mem, sizeof(mem), 100), 0);
	for (uint64_t ts = 1; ts <= 5; ts++) {
		frame_of(f, sizeof(f), ts);
		assert_int_equal(plog_log_append(&log, ts * 100, f, sizeof(f)), 0);
	}
	assert_int_equal(plog_log_write_pcapng(&log, "to_primary", blob_write, &b), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, out, b.n), (ssize_t)b.n);
	close(fd);
	snprintf(cmd, sizeof(cmd), "/usr/bin/tshark -r %s -T fields -e frame.comment 2>/dev/null",
		 path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p) != NULL) {
		char want[32];

		n++;
		snprintf(want, sizeof(want), "ts=%d\n", n * 100);
		assert_string_equal(line, want);
	}
	assert_int_equal(pclose(p), 0);
	unlink(path);
	assert_int_equal(n, 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_log_refuses_new_packets_and_never_evicts),
		cmocka_unit_test(test_trim_removes_only_entries_at_or_below_the_watermark),
		cmocka_unit_test(test_appends_out_of_order_or_of_bad_length_are_refused),
		cmocka_unit_test(test_cursor_left_behind_by_a_trim_moves_to_the_oldest),
		cmocka_unit_test(test_random_operations_match_a_reference_model),
		cmocka_unit_test(test_pcapng_dump_holds_every_entry_oldest_first),
		cmocka_unit_test(test_tshark_reads_the_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
