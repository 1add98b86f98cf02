/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_ftc_seq.c -- a replica's in-order application of FTC's logs
 * (ftc/ftc_seq.h): in order, out of order, parts out of order, duplicates,
 * the window's edge, a gap named, a slot too small, parts that disagree,
 * and 200 000 parts of random updates delivered shuffled and duplicated
 * against a model: every update comes out once, in order, whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ftc_seq.h"

static uint64_t mem[1 << 17];

static struct ftc_log
part_of(uint64_t seq, uint8_t part, uint8_t parts, const uint8_t *data, uint32_t len)
{
	return (struct ftc_log){.instance = 1, .part = part, .parts = parts, .len = len,
				.seq = seq, .data = data};
}

/* Pop the ready update: its parts' bytes, concatenated, into `out`. */
static size_t
pop(struct ftc_seq *s, uint64_t *seq, uint8_t *out)
{
	unsigned int parts;
	size_t n = 0;

	if (!ftc_seq_ready(s, seq, &parts))
		return SIZE_MAX;
	for (unsigned int p = 0; p < parts; p++) {
		const uint8_t *d;
		uint32_t len;

		ftc_seq_part(s, p, &d, &len);
		memcpy(out + n, d, len);
		n += len;
	}
	ftc_seq_done(s);
	return n;
}

static void
test_in_and_out_of_order(void **state)
{
	const uint8_t a[] = "aa", b[] = "bbb", c0[] = "c0", c1[] = "c1-";
	struct ftc_seq *s;
	struct ftc_log l;
	uint8_t out[64];
	uint64_t seq;

	(void)state;
	assert_int_equal(ftc_seq_mem_size(0, 64), 0);
	assert_null(ftc_seq_init(mem, 8, 64, 0));
	s = ftc_seq_init(mem, 8, 64, 5);
	assert_non_null(s);
	assert_int_equal(ftc_seq_next(s), 5);
	/* 7 (two parts, the second first), then 6, then 5 */
	l = part_of(7, 1, 2, c1, 3);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_HELD);
	assert_int_equal(ftc_seq_missing(s), 5); /* 5 and 6 lacking, 7 held */
	l = part_of(6, 0, 1, b, 3);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_HELD);
	assert_int_equal(pop(s, &seq, out), SIZE_MAX); /* 5 not there */
	l = part_of(5, 0, 1, a, 2);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_HELD);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_DUP_PART);
	assert_int_equal(pop(s, &seq, out), 2);
	assert_true(seq == 5);
	assert_memory_equal(out, "aa", 2);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_OLD); /* 5 again: applied */
	assert_int_equal(pop(s, &seq, out), 3);
	assert_true(seq == 6);
	assert_int_equal(ftc_seq_missing(s), 7); /* 7's first part lacking */
	assert_int_equal(pop(s, &seq, out), SIZE_MAX);
	l = part_of(7, 0, 3, c0, 2);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_MISMATCH); /* 2 parts, it said */
	l = part_of(7, 0, 2, c0, 2);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_HELD);
	assert_int_equal(pop(s, &seq, out), 5); /* parts in part order */
	assert_memory_equal(out, "c0c1-", 5);
	assert_int_equal(ftc_seq_next(s), 8);
	assert_int_equal(ftc_seq_held(s), 0);
	assert_int_equal(ftc_seq_missing(s), 0);
}

static void
test_window_and_room(void **state)
{
	uint8_t big[100] = {0};
	struct ftc_seq *s;
	struct ftc_log l;

	(void)state;
	s = ftc_seq_init(mem, 4, 64, 1);
	l = part_of(5, 0, 1, big, 1);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_TOO_FAR); /* 1..4 only */
	l = part_of(4, 0, 1, big, 1);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_HELD);
	assert_int_equal(ftc_seq_missing(s), 1);
	l = part_of(2, 0, 1, big, 100);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_NO_ROOM);
	assert_int_equal(ftc_seq_held(s), 1); /* (nothing of 2 kept) */
	l = part_of(3, 0, 2, big, 40);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_HELD);
	l = part_of(3, 1, 2, big, 40);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_NO_ROOM); /* 80 > 64 */
	assert_int_equal(ftc_seq_held(s), 2);
	l = part_of(3, 2, 2, big, 1);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_MISMATCH);
	/* update 3 is stuck half held: forgotten, it is taken again whole */
	assert_int_equal(ftc_seq_missing(s), 1);
	assert_true(ftc_seq_forget(s, 3));
	assert_false(ftc_seq_forget(s, 3));
	assert_false(ftc_seq_forget(s, 9)); /* past the window */
	assert_int_equal(ftc_seq_held(s), 1);
	l = part_of(3, 0, 1, big, 60);
	assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_HELD);
	assert_null(ftc_seq_init(mem, 4, 64, UINT64_MAX)); /* numbers would wrap */
	for (int v = 0; v < FTC_SEQ_VERDICT_MAX; v++)
		assert_string_not_equal(ftc_seq_verdict_str((enum ftc_seq_verdict)v), "?");
}

/* An update in 255 parts, delivered last part first: out in part order. */
static void
test_255_parts(void **state)
{
	static uint8_t bytes[255], out[255];
	struct ftc_seq *s;
	struct ftc_log l;
	uint64_t seq;

	(void)state;
	s = ftc_seq_init(mem, 2, 255, 1);
	for (int p = 254; p >= 0; p--) {
		bytes[p] = (uint8_t)p;
		l = part_of(1, (uint8_t)p, 255, &bytes[p], 1);
		assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_HELD);
		assert_int_equal(ftc_seq_offer(s, &l), FTC_SEQ_DUP_PART);
	}
	assert_int_equal(pop(s, &seq, out), 255);
	assert_memory_equal(out, bytes, 255);
}

/* Random updates (1-4 parts of 0-40 bytes) delivered shuffled within a
 * window, a tenth of the parts twice, parts past the window refused and
 * offered again later: each update comes out once, in order, whole. */
static void
test_random_against_model(void **state)
{
	enum { N = 50000, W = 16, SLOT = 4 * 40 };
	static uint8_t data[N][4][40], out[SLOT];
	static uint8_t nparts[N + 1], plen[N + 1][4];
	static struct { uint32_t seq; uint8_t part; } pend[N * 4 + N];
	struct ftc_seq *s;
	size_t npend = 0, next_new = 1;
	uint64_t expect = 1, seq;
	unsigned int seed = 12345;

	(void)state;
	srand(seed);
	for (uint32_t q = 1; q <= N; q++) {
		nparts[q] = (uint8_t)(1 + rand() % 4);
		for (int p = 0; p < nparts[q]; p++) {
			plen[q][p] = (uint8_t)(rand() % 41);
			for (int b = 0; b < plen[q][p]; b++)
				data[q - 1][p][b] = (uint8_t)rand();
		}
	}
	s = ftc_seq_init(mem, W, SLOT, 1);
	assert_non_null(s);
	while (expect <= N) {
		struct ftc_log l;
		size_t i, n;

		/* keep a pool of pending parts from updates near the front */
		while (next_new <= N && next_new < expect + W + 4) {
			for (int p = 0; p < nparts[next_new]; p++) {
				pend[npend].seq = (uint32_t)next_new;
				pend[npend++].part = (uint8_t)p;
				if (rand() % 10 == 0) { /* twice */
					pend[npend].seq = (uint32_t)next_new;
					pend[npend++].part = (uint8_t)p;
				}
			}
			next_new++;
		}
		i = (size_t)rand() % npend;
		l = part_of(pend[i].seq, pend[i].part, nparts[pend[i].seq],
			    data[pend[i].seq - 1][pend[i].part], plen[pend[i].seq][pend[i].part]);
		switch (ftc_seq_offer(s, &l)) {
		case FTC_SEQ_HELD:
		case FTC_SEQ_OLD:
		case FTC_SEQ_DUP_PART:
			pend[i] = pend[--npend]; /* delivered (or a duplicate: gone) */
			break;
		case FTC_SEQ_TOO_FAR:
			assert_true(l.seq >= expect + W);
			break; /* stays pending: offered again later */
		default:
			fail_msg("update %u part %u: %s", pend[i].seq, pend[i].part,
				 ftc_seq_verdict_str(ftc_seq_offer(s, &l)));
		}
		while ((n = pop(s, &seq, out)) != SIZE_MAX) {
			size_t off = 0;

			assert_true(seq == expect);
			for (int p = 0; p < nparts[seq]; p++) {
				assert_memory_equal(out + off, data[seq - 1][p], plen[seq][p]);
				off += plen[seq][p];
			}
			assert_int_equal(n, off);
			expect++;
		}
	}
	assert_int_equal(ftc_seq_next(s), N + 1);
	assert_int_equal(ftc_seq_held(s), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_in_and_out_of_order),
	    cmocka_unit_test(test_window_and_room),
	    cmocka_unit_test(test_255_parts),
	    cmocka_unit_test(test_random_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
