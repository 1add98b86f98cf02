/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_ftc_hlog.c -- the head's log of FTC updates (ftc/ftc_hlog.h): kept
 * until committed, got back as a log's records byte for byte, refused when
 * full in updates or bytes (nothing kept), a commit dropping what it
 * covers, and 300 000 random appends, commits and gets against a model
 * over many laps of the byte ring.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ftc_hlog.h"

static uint64_t mem[1 << 15];

static void
test_basics(void **state)
{
	static const uint8_t a[] = {1, 2, 3, 4}, b[] = {5};
	const struct ftc_record_in r[] = {{.region = 1, .len = 4, .offset = 64, .bytes = a},
					  {.region = 2, .len = 1, .offset = 0, .bytes = b}};
	struct ftc_hlog *h;
	const uint8_t *d;
	uint32_t len, pos = 0;
	struct ftc_log l;
	struct ftc_record rec;

	(void)state;
	assert_int_equal(ftc_hlog_mem_size(0, 10), 0);
	assert_null(ftc_hlog_init(mem, 4, 64, 0));
	h = ftc_hlog_init(mem, 2, 64, 10);
	assert_non_null(h);
	assert_true(ftc_hlog_append(h, r, 2) == 10);
	assert_true(ftc_hlog_get(h, 10, &d, &len));
	assert_int_equal(len, 8 + 4 + 8 + 1);
	l = (struct ftc_log){.data = d, .len = len};
	assert_true(ftc_record_next(&l, &pos, &rec));
	assert_int_equal(rec.region, 1);
	assert_int_equal(rec.offset, 64);
	assert_memory_equal(rec.bytes, a, 4);
	assert_true(ftc_record_next(&l, &pos, &rec));
	assert_int_equal(rec.region, 2);
	assert_false(ftc_record_next(&l, &pos, &rec));
	assert_true(ftc_hlog_append(h, r, 1) == 11);
	assert_true(ftc_hlog_append(h, r, 1) == 0); /* 2 updates at most */
	assert_int_equal(ftc_hlog_commit(h, 10), 1);
	assert_false(ftc_hlog_get(h, 10, &d, &len));
	assert_true(ftc_hlog_get(h, 11, &d, &len));
	assert_int_equal(ftc_hlog_commit(h, 9), 0); /* an older commit: nothing */
	/* 64 bytes: 12 used; 60 more do not fit, nothing kept */
	{
		static uint8_t big[52];
		const struct ftc_record_in rb = {.region = 0, .len = 52, .offset = 0, .bytes = big};

		assert_true(ftc_hlog_append(h, &rb, 1) == 0);
		assert_int_equal(ftc_hlog_count(h), 1);
		assert_int_equal(ftc_hlog_commit(h, 11), 1);
		assert_true(ftc_hlog_append(h, &rb, 1) == 12); /* an empty log takes it */
	}
	/* a commit of an update never made (from the wire): refused */
	assert_int_equal(ftc_hlog_commit(h, 20), -1);
	assert_int_equal(ftc_hlog_count(h), 1);
	assert_true(ftc_hlog_next(h) == 13);
	assert_int_equal(ftc_hlog_commit(h, UINT64_MAX), -1);
	assert_int_equal(ftc_hlog_commit(h, 12), 1);
	assert_true(ftc_hlog_oldest(h) == 0 && ftc_hlog_next(h) == 13);
	/* what the wire cannot carry is not kept: no record, a record of 0 */
	{
		const struct ftc_record_in r0 = {.region = 0, .len = 0, .offset = 0, .bytes = a};

		assert_true(ftc_hlog_append(h, r, 0) == 0);
		assert_true(ftc_hlog_append(h, &r0, 1) == 0);
		assert_int_equal(ftc_hlog_count(h), 0);
	}
	assert_null(ftc_hlog_init(mem, 2, 64, UINT64_MAX)); /* numbers would wrap */
}

/* Random appends (0-3 records of 0-60 bytes), commits and gets against a
 * model: what is kept is exactly what was appended and not committed,
 * byte for byte; a refusal happens only when the log is really full. */
/* Records already encoded (as an NF hands them over): kept byte for byte,
 * what is not whole records refused with nothing kept. */
static void
test_encoded(void **state)
{
	static const uint8_t a[] = {1, 2, 3, 4}, b[] = {5};
	const struct ftc_record_in r[] = {{.region = 1, .len = 4, .offset = 64, .bytes = a},
					  {.region = 2, .len = 1, .offset = 0, .bytes = b}};
	static uint64_t m2[1024];
	struct ftc_hlog *h = ftc_hlog_init(mem, 8, 256, 1), *g = ftc_hlog_init(m2, 8, 256, 1);
	const uint8_t *d, *e;
	uint32_t len, elen;
	uint8_t enc[64];

	(void)state;
	assert_true(ftc_hlog_append(h, r, 2) == 1);
	assert_true(ftc_hlog_get(h, 1, &d, &len));
	memcpy(enc, d, len);
	assert_true(ftc_hlog_append_encoded(g, enc, len) == 1);
	assert_true(ftc_hlog_get(g, 1, &e, &elen));
	assert_int_equal(elen, len);
	assert_memory_equal(e, d, len);
	/* cut inside a record's head, inside its bytes, a record of 0: refused */
	assert_true(ftc_hlog_append_encoded(g, enc, 4) == 0);
	assert_true(ftc_hlog_append_encoded(g, enc, len - 1) == 0);
	assert_true(ftc_hlog_append_encoded(g, enc, 0) == 0);
	enc[2] = 0;
	enc[3] = 0;
	assert_true(ftc_hlog_append_encoded(g, enc, len) == 0);
	assert_int_equal(ftc_hlog_count(g), 1);
	assert_true(ftc_hlog_next(g) == 2);
}

static void
test_random_against_model(void **state)
{
	enum { CAP = 32, BYTES = 1024, OPS = 300000, MAXU = 3 * (8 + 60) };
	static uint8_t pat[4096];
	static struct { uint64_t seq; uint32_t len; uint16_t lens[3]; uint16_t offs[3]; int n; }
		model[CAP];
	int mn = 0; /* model entries, oldest first */
	struct ftc_hlog *h;
	uint64_t next = 1;
	uint32_t model_bytes = 0;
	int refused = 0;

	(void)state;
	srand(7);
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)rand();
	h = ftc_hlog_init(mem, CAP, BYTES, 1);
	for (int op = 0; op < OPS; op++) {
		int what = rand() % 20;

		if (what < 12) { /* append (more than commits: the log fills) */
			struct ftc_record_in r[3];
			int n = 1 + rand() % 3;
			uint32_t len = 0;
			uint64_t got;

			for (int i = 0; i < n; i++) {
				r[i] = (struct ftc_record_in){.region = (uint16_t)i,
							      .len = (uint16_t)(1 + rand() % 60),
							      .offset = (uint32_t)(rand() % 3000)};
				r[i].bytes = pat + r[i].offset;
				len += 8 + r[i].len;
			}
			got = ftc_hlog_append(h, r, (unsigned int)n);
			if (got == 0) {
				/* refused: full in updates, or bytes really short
				 * -- the ring may leave less than an update's
				 * length unused at its end (MAXU) */
				assert_true(mn == CAP || BYTES - model_bytes < len + MAXU ||
					    model_bytes == BYTES);
				refused++;
				continue;
			}
			assert_true(got == next);
			model[mn].seq = next++;
			model[mn].len = len;
			model[mn].n = n;
			for (int i = 0; i < n; i++) {
				model[mn].lens[i] = r[i].len;
				model[mn].offs[i] = (uint16_t)r[i].offset;
			}
			mn++;
			model_bytes += len;
		} else if (what < 15) { /* commit some */
			int k = mn > 0 ? rand() % (mn + 1) : 0;
			uint64_t upto = k > 0 ? model[k - 1].seq : (mn > 0 ? model[0].seq - 1 : next - 1);

			assert_int_equal(ftc_hlog_commit(h, upto), k);
			assert_int_equal(ftc_hlog_commit(h, next), -1); /* never made */
			for (int i = 0; i < k; i++)
				model_bytes -= model[i].len;
			memmove(model, model + k, sizeof(model[0]) * (size_t)(mn - k));
			mn -= k;
		} else { /* get each kept, and the one before */
			for (int i = 0; i < mn; i++) {
				const uint8_t *d;
				uint32_t len, pos = 0;
				struct ftc_log l;
				struct ftc_record rec;

				assert_true(ftc_hlog_get(h, model[i].seq, &d, &len));
				assert_int_equal(len, model[i].len);
				l = (struct ftc_log){.data = d, .len = len};
				for (int j = 0; j < model[i].n; j++) {
					assert_true(ftc_record_next(&l, &pos, &rec));
					assert_int_equal(rec.len, model[i].lens[j]);
					assert_memory_equal(rec.bytes, pat + model[i].offs[j], rec.len);
				}
				assert_false(ftc_record_next(&l, &pos, &rec));
			}
			if (mn > 0) {
				const uint8_t *d;
				uint32_t len;

				assert_false(ftc_hlog_get(h, model[0].seq - 1, &d, &len));
			}
		}
		assert_int_equal(ftc_hlog_count(h), mn);
		assert_true(ftc_hlog_bytes(h) <= BYTES);
		assert_true(ftc_hlog_bytes(h) >= model_bytes &&
			    ftc_hlog_bytes(h) < model_bytes + MAXU + 1);
	}
	assert_true(refused > 1000); /* (the full log was exercised) */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basics),
	    cmocka_unit_test(test_encoded),
	    cmocka_unit_test(test_random_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
