/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_ftc_ring.c -- the NF -> manager ring of an FTC chain's updates
 * (common/include/onvm_ftc_ring.h): entries come out whole, in order, once;
 * a full ring refuses and never overwrites; many laps of wrapping; and a
 * producer and a consumer on two threads, each entry's bytes checked.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onvm_ftc_ring.h"

static void *
area(size_t data, size_t *len)
{
	void *m = NULL;

	*len = onvm_ftc_ring_area(data);
	assert_int_equal(posix_memalign(&m, 64, *len), 0);
	memset(m, 0xa5, *len);
	return m;
}

/* The bytes entry `seq` carries: its length and content from its number. */
static uint32_t
len_of(uint64_t seq, uint32_t max)
{
	return (uint32_t)((seq * 2654435761u) % max) + 1;
}

static uint8_t
byte_of(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 31 + i * 7);
}

static void
test_basics(void **state)
{
	size_t len;
	void *m = area(4096, &len);
	struct onvm_ftc_ring *r;
	struct onvm_ftc_entry e;
	uint8_t *w;

	(void)state;
	assert_null(onvm_ftc_ring_attach(m, len)); /* not formatted */
	assert_int_equal(onvm_ftc_ring_format(m, 100), -1);
	assert_int_equal(onvm_ftc_ring_format(m, len), 0);
	r = onvm_ftc_ring_attach(m, len);
	assert_non_null(r);
	assert_int_equal(onvm_ftc_ring_max_update(r), 4096 / 4 - ONVM_FTC_ENTRY_HEAD);
	assert_false(onvm_ftc_ring_peek(r, &e));
	assert_null(onvm_ftc_ring_reserve(r, onvm_ftc_ring_max_update(r) + 1)); /* never */
	w = onvm_ftc_ring_reserve(r, 5);
	assert_non_null(w);
	memcpy(w, "hello", 5);
	assert_false(onvm_ftc_ring_peek(r, &e)); /* not published yet */
	onvm_ftc_ring_publish(r, 7, 5);
	assert_true(onvm_ftc_ring_peek(r, &e));
	assert_true(e.seq == 7);
	assert_int_equal(e.len, 5);
	assert_memory_equal(e.records, "hello", 5);
	assert_true(onvm_ftc_ring_peek(r, &e)); /* still there until taken */
	onvm_ftc_ring_take(r);
	assert_false(onvm_ftc_ring_peek(r, &e));
	/* full: refused, and what is in it stays */
	for (uint64_t s = 1;; s++) {
		w = onvm_ftc_ring_reserve(r, 1000);
		if (w == NULL) {
			assert_true(s > 3);
			break;
		}
		memset(w, (int)s, 1000);
		onvm_ftc_ring_publish(r, s, 1000);
	}
	for (uint64_t s = 1; onvm_ftc_ring_peek(r, &e); s++) {
		assert_true(e.seq == s);
		assert_int_equal(e.records[999], (uint8_t)s);
		onvm_ftc_ring_take(r);
	}
	free(m);
}

/* Random sizes over many laps against a model: the FIFO of what was
 * published, whole and in order; a refusal only when it does not fit. */
static void
test_model(void **state)
{
	size_t len;
	void *m = area(8192, &len);
	struct onvm_ftc_ring *r;
	struct onvm_ftc_entry e;
	uint64_t next_put = 1, next_get = 1;
	unsigned int refused = 0;

	(void)state;
	assert_int_equal(onvm_ftc_ring_format(m, len), 0);
	r = onvm_ftc_ring_attach(m, len);
	srand(5);
	for (int step = 0; step < 200000; step++) {
		if (rand() % 2 == 0) {
			uint32_t n = len_of(next_put, onvm_ftc_ring_max_update(r));
			uint8_t *w = onvm_ftc_ring_reserve(r, n);

			if (w == NULL) {
				/* only when what is in it leaves no room */
				assert_true(next_put - next_get > 0);
				refused++;
				continue;
			}
			for (uint32_t i = 0; i < n; i++)
				w[i] = byte_of(next_put, i);
			onvm_ftc_ring_publish(r, next_put, n);
			next_put++;
		} else if (onvm_ftc_ring_peek(r, &e)) {
			assert_true(e.seq == next_get);
			assert_int_equal(e.len, len_of(next_get, onvm_ftc_ring_max_update(r)));
			for (uint32_t i = 0; i < e.len; i++)
				assert_int_equal(e.records[i], byte_of(next_get, i));
			onvm_ftc_ring_take(r);
			next_get++;
		} else {
			assert_true(next_get == next_put);
		}
	}
	assert_true(next_put > 50000); /* many laps of an 8 KB ring */
	assert_true(refused > 0);
	free(m);
}

#define THREAD_ENTRIES 300000
static struct onvm_ftc_ring *shared;

static void *
producer(void *arg)
{
	(void)arg;
	for (uint64_t s = 1; s <= THREAD_ENTRIES; s++) {
		uint32_t n = len_of(s, 300);
		uint8_t *w;

		while ((w = onvm_ftc_ring_reserve(shared, n)) == NULL)
			;
		for (uint32_t i = 0; i < n; i++)
			w[i] = byte_of(s, i);
		onvm_ftc_ring_publish(shared, s, n);
	}
	return NULL;
}

/* Two threads: every entry seen once, in order, its bytes as written
 * (a consumer reading before the producer's release would see old ones). */
static void
test_two_threads(void **state)
{
	size_t len;
	void *m = area(2048, &len);
	struct onvm_ftc_entry e;
	pthread_t t;
	uint64_t next = 1;

	(void)state;
	assert_int_equal(onvm_ftc_ring_format(m, len), 0);
	shared = onvm_ftc_ring_attach(m, len);
	assert_int_equal(pthread_create(&t, NULL, producer, NULL), 0);
	while (next <= THREAD_ENTRIES) {
		if (!onvm_ftc_ring_peek(shared, &e))
			continue;
		assert_true(e.seq == next);
		assert_int_equal(e.len, len_of(next, 300));
		for (uint32_t i = 0; i < e.len; i++)
			assert_int_equal(e.records[i], byte_of(next, i));
		onvm_ftc_ring_take(shared);
		next++;
	}
	pthread_join(t, NULL);
	assert_false(onvm_ftc_ring_peek(shared, &e));
	free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basics),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
