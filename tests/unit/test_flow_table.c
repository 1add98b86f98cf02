/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_flow_table.c -- unit tests for the per-flow table in a state region
 * (libnf/src/flow_table.c, onvm_flow_table.h).
 *
 * The table lives in a test_state.h region with 64-byte dirty chunks (the
 * smallest), and every test calls test_state_commit_check() after every
 * operation: a write the table forgot to touch leaves the replica different
 * from the canonical copy and fails the test at the operation that did it.
 *
 * Small capacities (16, 32) make collisions, long clusters and clusters that
 * wrap from the last slot to slot 0 the normal case.  Where a test needs a
 * key with a particular home slot it finds one by inserting candidates into
 * an empty scratch table of the same capacity (the slot an entry lands in
 * there is its home), so the test does not copy the table's private hash.
 *
 * The randomised test runs thousands of seeded operations (insert, remove,
 * lookup, write a value, seen, expire with a random budget) against a plain
 * array model and, after each, checks that every key of the model is found
 * with its value, no other key is, and the count agrees -- on 16 and 32
 * slots with 24 and 40 keys, and on 16 slots with 20 keys whose homes are
 * all in slots 13..1, so that removals in clusters wrapping past the last
 * slot are frequent (counted, and required).  Seeds are fixed;
 * ONVM_TEST_SEED=N adds one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "onvm_flow_table.h"
#include "test_state.h"

#define CHUNK 64

/* The NF's value in these tests: 16 bytes, written through the table. */
struct val {
	uint64_t tag;
	uint64_t n;
};

/* ---- fixture -------------------------------------------------------------- */

struct fx {
	struct test_state ts;
	struct onvm_ft ft;
	void *mem;
	size_t len;
	uint32_t cap;
	uint32_t vsize;
};

static void
commit_ok(struct fx *f)
{
	assert_int_equal(test_state_commit_check(&f->ts), 0);
}

/* A state set with one region "ft" sized for the table (plus `extra` bytes),
 * and a second region "other" (foreign memory for the open tests). */
static void
fx_init_ex(struct fx *f, uint32_t cap, uint32_t vsize, size_t extra)
{
	size_t need = onvm_ft_mem_size(cap, vsize);
	struct nf_state_request reqs[] = {
	    {.name = "ft", .size = need + extra, .chunk_size = CHUNK},
	    {.name = "other", .size = 4096, .chunk_size = CHUNK},
	};

	assert_true(need > 0);
	memset(f, 0, sizeof(*f));
	assert_int_equal(test_state_init(&f->ts, reqs, 2), 0);
	f->mem = test_state_region(&f->ts, "ft");
	assert_non_null(f->mem);
	f->len = need + extra;
	f->cap = cap;
	f->vsize = vsize;
}

static void
fx_open(struct fx *f)
{
	char err[256] = "";

	assert_int_equal(onvm_ft_open(&f->ft, &f->ts.set, f->mem, f->len, f->cap, f->vsize, err,
				      sizeof(err)),
			 0);
	commit_ok(f);
}

static void
fx_init(struct fx *f, uint32_t cap)
{
	fx_init_ex(f, cap, sizeof(struct val), 0);
	fx_open(f);
}

static void
fx_fini(struct fx *f)
{
	test_state_fini(&f->ts);
}

/* The standby takes over the block: recover to the last commit, re-open. */
static void
fx_failover(struct fx *f)
{
	char err[256] = "";

	assert_int_equal(test_state_failover(&f->ts), 0);
	f->mem = test_state_region(&f->ts, "ft");
	memset(&f->ft, 0xee, sizeof(f->ft)); /* the old handle is gone */
	assert_int_equal(onvm_ft_open(&f->ft, &f->ts.set, f->mem, f->len, f->cap, f->vsize, err,
				      sizeof(err)),
			 0);
	commit_ok(f);
}

/* Key number i: distinct 5-tuples from the benchmarking range. */
static struct onvm_flow_key
key(uint32_t i)
{
	struct onvm_flow_key k = {
	    .src_ip = 0xc6120000u + i,		  /* 198.18.x.x */
	    .dst_ip = 0xc6130000u + (i * 7919u & 0xffff), /* 198.19.x.x */
	    .sport = (uint16_t)(1024 + i),
	    .dport = 80,
	    .proto = 6,
	};

	return k;
}

static bool
key_equal(const struct onvm_flow_key *a, const struct onvm_flow_key *b)
{
	return a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->sport == b->sport &&
	       a->dport == b->dport && a->proto == b->proto;
}

/* Slot holding `v`, or -1. */
static int
slot_of(const struct onvm_ft *ft, const void *v)
{
	for (uint32_t s = 0; s < onvm_ft_capacity(ft); s++)
		if (onvm_ft_slot_value(ft, s) == v)
			return (int)s;
	return -1;
}

/* The home slot of key(i) in a table of `cap`: where it lands in an empty
 * scratch table (untracked memory, state NULL). */
static int
home_of(uint32_t cap, uint32_t i)
{
	size_t len = onvm_ft_mem_size(cap, 8);
	void *mem = aligned_alloc(64, (len + 63) & ~(size_t)63);
	struct onvm_flow_key k = key(i);
	struct onvm_ft ft;
	char err[256];
	int home;

	assert_non_null(mem);
	memset(mem, 0, len);
	assert_int_equal(onvm_ft_open(&ft, NULL, mem, len, cap, 8, err, sizeof(err)), 0);
	home = slot_of(&ft, onvm_ft_insert(&ft, &k, 0, NULL));
	free(mem);
	return home;
}

/* n key numbers (from `from` on) whose home is `home` in a table of `cap`. */
static void
keys_with_home(uint32_t cap, int home, uint32_t n, uint32_t *out, uint32_t from)
{
	uint32_t got = 0;

	for (uint32_t i = from; got < n; i++) {
		assert_true(i < from + 100000);
		if (home_of(cap, i) == home)
			out[got++] = i;
	}
}

static struct val *
insert(struct fx *f, uint32_t i, uint64_t now, bool *created)
{
	struct onvm_flow_key k = key(i);
	struct val *v = onvm_ft_insert(&f->ft, &k, now, created);

	commit_ok(f);
	return v;
}

/* Insert key(i) and write its value (allowed without another touch). */
static struct val *
insert_tagged(struct fx *f, uint32_t i, uint64_t now)
{
	struct onvm_flow_key k = key(i);
	struct val *v = onvm_ft_insert(&f->ft, &k, now, NULL);

	assert_non_null(v);
	v->tag = 1000 + i;
	v->n = 1;
	commit_ok(f);
	return v;
}

static struct val *
lookup(struct fx *f, uint32_t i)
{
	struct onvm_flow_key k = key(i);

	return onvm_ft_lookup(&f->ft, &k);
}

static void
remove_key(struct fx *f, uint32_t i)
{
	struct val *v = lookup(f, i);

	assert_non_null(v);
	onvm_ft_remove(&f->ft, v);
	commit_ok(f);
}

/* ---- sizes and opening ------------------------------------------------------ */

static void
test_mem_size_rejects_out_of_range_arguments(void **state)
{
	(void)state;
	assert_int_equal(onvm_ft_mem_size(0, 8), 0);
	assert_int_equal(onvm_ft_mem_size(8, 8), 0);	/* below the minimum */
	assert_int_equal(onvm_ft_mem_size(24, 8), 0);	/* not a power of two */
	assert_int_equal(onvm_ft_mem_size(17, 8), 0);
	assert_int_equal(onvm_ft_mem_size(1u << 27, 8), 0); /* above the maximum */
	assert_int_equal(onvm_ft_mem_size(16, ONVM_FT_VALUE_MAX + 1), 0);
	assert_int_equal(onvm_ft_mem_size(16, 0),
			 sizeof(struct onvm_ft_hdr) + 16 * sizeof(struct onvm_ft_entry));
	/* Values are padded to 8 bytes. */
	assert_int_equal(onvm_ft_mem_size(16, 5),
			 sizeof(struct onvm_ft_hdr) + 16 * (sizeof(struct onvm_ft_entry) + 8));
	assert_int_equal(onvm_ft_mem_size(ONVM_FT_CAPACITY_MAX, ONVM_FT_VALUE_MAX),
			 sizeof(struct onvm_ft_hdr) +
			     (size_t)ONVM_FT_CAPACITY_MAX *
				 (sizeof(struct onvm_ft_entry) + ONVM_FT_VALUE_MAX));
}

static void
test_open_formats_fresh_memory(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, 16); /* commit-checked: the header write was touched */
	assert_int_equal(onvm_ft_capacity(&f.ft), 16);
	assert_int_equal(onvm_ft_count(&f.ft), 0);
	assert_int_equal(onvm_ft_stats(&f.ft)->inserts, 0);
	assert_int_equal(onvm_ft_stats(&f.ft)->full, 0);
	for (uint32_t s = 0; s < 16; s++)
		assert_null(onvm_ft_slot_value(&f.ft, s));
	assert_null(onvm_ft_slot_value(&f.ft, 16)); /* beyond the table */
	assert_null(lookup(&f, 1));
	fx_fini(&f);
}

static void
test_open_reattaches_a_table(void **state)
{
	struct onvm_ft again;
	char err[256] = "";
	struct fx f;

	(void)state;
	fx_init(&f, 32);
	for (uint32_t i = 0; i < 10; i++)
		insert_tagged(&f, i, 100 + i);
	assert_int_equal(onvm_ft_open(&again, &f.ts.set, f.mem, f.len, 32, sizeof(struct val), err,
				      sizeof(err)),
			 0);
	commit_ok(&f); /* re-attaching writes nothing */
	assert_int_equal(onvm_ft_count(&again), 10);
	assert_int_equal(onvm_ft_stats(&again)->inserts, 10);
	for (uint32_t i = 0; i < 10; i++) {
		struct onvm_flow_key k = key(i);
		struct val *v = onvm_ft_lookup(&again, &k);

		assert_non_null(v);
		assert_int_equal(v->tag, 1000 + i);
		assert_int_equal(onvm_ft_last_seen(&again, v), 100 + i);
	}
	fx_fini(&f);
}

static void
test_open_rejects_a_table_of_another_shape(void **state)
{
	struct onvm_ft other;
	char err[256];
	struct fx f;

	(void)state;
	/* Room for the larger table too, so only the shape can be wrong. */
	fx_init_ex(&f, 16, sizeof(struct val), onvm_ft_mem_size(64, 64));
	fx_open(&f);
	insert_tagged(&f, 1, 5);
	err[0] = '\0';
	assert_int_equal(onvm_ft_open(&other, &f.ts.set, f.mem, f.len, 32, sizeof(struct val), err,
				      sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "16"));
	err[0] = '\0';
	assert_int_equal(onvm_ft_open(&other, &f.ts.set, f.mem, f.len, 16, 64, err, sizeof(err)),
			 -EBADMSG);
	assert_true(strlen(err) > 0);
	/* Same padded entry size, different value size: still another shape. */
	assert_int_equal(onvm_ft_open(&other, &f.ts.set, f.mem, f.len, 16, sizeof(struct val) - 1,
				      err, sizeof(err)),
			 -EBADMSG);
	commit_ok(&f); /* a refused open writes nothing */
	assert_non_null(lookup(&f, 1));
	fx_fini(&f);
}

static void
test_open_rejects_foreign_memory(void **state)
{
	void *other;
	struct onvm_ft ft;
	char err[256] = "";
	struct fx f;

	(void)state;
	fx_init_ex(&f, 16, sizeof(struct val), 0);
	other = test_state_region(&f.ts, "other");
	assert_int_equal(nf_state_touch_ptr(&f.ts.set, other, 4096), 0);
	memset(other, 0xab, 4096);
	commit_ok(&f);
	assert_int_equal(onvm_ft_open(&ft, &f.ts.set, other, 4096, 16, sizeof(struct val), err,
				      sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "something else"));
	fx_fini(&f);
}

/* A region whose first word happens to be zero but that holds other data is
 * not fresh memory: formatting it would turn its bytes into "used" entries. */
static void
test_open_rejects_nonzero_memory_with_a_zero_first_word(void **state)
{
	struct onvm_ft ft;
	char err[256] = "";
	uint8_t *mem;
	size_t len = onvm_ft_mem_size(16, sizeof(struct val));

	(void)state;
	mem = aligned_alloc(64, (len + 63) & ~(size_t)63);
	assert_non_null(mem);
	memset(mem, 0x5a, len);
	memset(mem, 0, 8);
	assert_int_equal(onvm_ft_open(&ft, NULL, mem, len, 16, sizeof(struct val), err,
				      sizeof(err)),
			 -EBADMSG);
	free(mem);
}

static void
test_open_rejects_bad_arguments(void **state)
{
	struct onvm_ft ft;
	char err[256];
	struct fx f;

	(void)state;
	fx_init_ex(&f, 16, sizeof(struct val), 64);
	err[0] = '\0';
	assert_int_equal(onvm_ft_open(&ft, &f.ts.set, NULL, f.len, 16, 16, err, sizeof(err)),
			 -EINVAL);
	assert_true(strlen(err) > 0);
	assert_int_equal(onvm_ft_open(&ft, &f.ts.set, (uint8_t *)f.mem + 4, f.len - 4, 16, 16, err,
				      sizeof(err)),
			 -EINVAL); /* not 8-aligned */
	assert_int_equal(onvm_ft_open(&ft, &f.ts.set, f.mem, f.len, 24, 16, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(onvm_ft_open(&ft, &f.ts.set, f.mem, f.len, 8, 16, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(onvm_ft_open(&ft, &f.ts.set, f.mem, f.len, 16, ONVM_FT_VALUE_MAX + 1, err,
				      sizeof(err)),
			 -EINVAL);
	err[0] = '\0';
	assert_int_equal(onvm_ft_open(&ft, &f.ts.set, f.mem, onvm_ft_mem_size(16, 16) - 1, 16, 16,
				      err, sizeof(err)),
			 -EINVAL); /* one byte short */
	assert_non_null(strstr(err, "need"));
	/* Nothing was formatted by any refused open. */
	commit_ok(&f);
	assert_int_equal(*(uint64_t *)f.mem, 0);
	fx_fini(&f);
}

/* ---- insert, lookup, remove ---------------------------------------------------- */

static void
test_insert_creates_a_zeroed_value_once(void **state)
{
	struct onvm_flow_key k = key(7), probe;
	bool created = false;
	struct val *v, *again;
	struct fx f;

	(void)state;
	fx_init(&f, 16);
	v = onvm_ft_insert(&f.ft, &k, 1234, &created);
	assert_non_null(v);
	assert_true(created);
	assert_int_equal(((uintptr_t)v) & 7, 0);
	assert_int_equal(v->tag, 0);
	assert_int_equal(v->n, 0);
	v->tag = 77; /* insert touched the entry: no touch needed in this batch */
	commit_ok(&f);
	again = insert(&f, 7, 9999, &created);
	assert_ptr_equal(again, v);
	assert_false(created);
	assert_int_equal(again->tag, 77);
	assert_int_equal(onvm_ft_count(&f.ft), 1);
	assert_int_equal(onvm_ft_stats(&f.ft)->inserts, 1);
	/* An existing key keeps its first time stamp. */
	assert_int_equal(onvm_ft_last_seen(&f.ft, v), 1234);
	assert_true(key_equal(onvm_ft_key(&f.ft, v), &k));
	/* The key's padding is not part of the key and is stored zeroed. */
	probe = k;
	probe.pad[0] = 0xff;
	probe.pad[2] = 0x11;
	assert_ptr_equal(onvm_ft_lookup(&f.ft, &probe), v);
	assert_int_equal(onvm_ft_key(&f.ft, v)->pad[0], 0);
	probe = key(8);
	probe.pad[1] = 3;
	v = onvm_ft_insert(&f.ft, &probe, 5, NULL);
	commit_ok(&f);
	assert_int_equal(onvm_ft_key(&f.ft, v)->pad[1], 0);
	/* A NULL `created` is allowed (used above). */
	fx_fini(&f);
}

static void
test_lookup_tells_keys_apart_by_every_field(void **state)
{
	struct onvm_flow_key base = key(3), k;
	struct fx f;

	(void)state;
	fx_init(&f, 16);
	assert_non_null(onvm_ft_insert(&f.ft, &base, 1, NULL));
	commit_ok(&f);
	for (int field = 0; field < 5; field++) {
		k = base;
		switch (field) {
		case 0: k.src_ip++; break;
		case 1: k.dst_ip++; break;
		case 2: k.sport++; break;
		case 3: k.dport++; break;
		case 4: k.proto = 17; break;
		}
		assert_null(onvm_ft_lookup(&f.ft, &k));
	}
	/* The reverse direction is another flow. */
	k.src_ip = base.dst_ip;
	k.dst_ip = base.src_ip;
	k.sport = base.dport;
	k.dport = base.sport;
	k.proto = base.proto;
	assert_null(onvm_ft_lookup(&f.ft, &k));
	assert_non_null(onvm_ft_lookup(&f.ft, &base));
	fx_fini(&f);
}

static void
test_remove_forgets_only_that_key(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, 32);
	for (uint32_t i = 0; i < 20; i++)
		insert_tagged(&f, i, i);
	remove_key(&f, 5);
	remove_key(&f, 0);
	remove_key(&f, 19);
	assert_int_equal(onvm_ft_count(&f.ft), 17);
	assert_int_equal(onvm_ft_stats(&f.ft)->removes, 3);
	for (uint32_t i = 0; i < 20; i++) {
		struct val *v = lookup(&f, i);

		if (i == 5 || i == 0 || i == 19) {
			assert_null(v);
		} else {
			assert_non_null(v);
			assert_int_equal(v->tag, 1000 + i);
		}
	}
	/* A removed key can come back, with a fresh zeroed value. */
	assert_int_equal(insert(&f, 5, 50, NULL)->tag, 0);
	assert_int_equal(onvm_ft_count(&f.ft), 18);
	fx_fini(&f);
}

static void
test_touch_value_and_seen_cover_later_writes(void **state)
{
	struct val *v;
	struct fx f;

	(void)state;
	fx_init(&f, 16);
	insert_tagged(&f, 2, 10);
	v = lookup(&f, 2);
	onvm_ft_touch_value(&f.ft, v);
	v->n++;
	v->tag = 0xfeed;
	commit_ok(&f);
	onvm_ft_seen(&f.ft, v, 500);
	commit_ok(&f);
	assert_int_equal(onvm_ft_last_seen(&f.ft, v), 500);
	onvm_ft_seen(&f.ft, v, 500); /* same time: nothing to write */
	assert_int_equal(nf_state_dirty_chunks(&f.ts.set), 0);
	commit_ok(&f);
	fx_fini(&f);
}

/* The harness catches what the table must never do: a write without a touch. */
static void
test_commit_check_catches_an_untouched_value_write(void **state)
{
	struct val *v;
	struct fx f;

	(void)state;
	fx_init(&f, 16);
	insert_tagged(&f, 2, 10);
	v = lookup(&f, 2);
	v->n = 42; /* no onvm_ft_touch_value() */
	assert_int_equal(test_state_commit_check(&f.ts), -1);
	fx_fini(&f);
}

/* ---- load limit ------------------------------------------------------------------- */

static void
test_insert_stops_at_three_quarters(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, 16);
	for (uint32_t i = 0; i < 12; i++)
		assert_non_null(insert(&f, i, i, NULL));
	assert_int_equal(onvm_ft_count(&f.ft), 12);
	assert_null(insert(&f, 12, 0, NULL));
	assert_null(insert(&f, 13, 0, NULL));
	assert_int_equal(onvm_ft_stats(&f.ft)->full, 2);
	assert_int_equal(onvm_ft_stats(&f.ft)->inserts, 12);
	assert_int_equal(onvm_ft_count(&f.ft), 12);
	assert_null(lookup(&f, 12));
	/* An existing key is still found (and returned by insert) at the limit. */
	assert_non_null(insert(&f, 3, 0, NULL));
	assert_int_equal(onvm_ft_stats(&f.ft)->full, 2);
	/* Room again after a remove. */
	remove_key(&f, 0);
	assert_non_null(insert(&f, 12, 0, NULL));
	assert_int_equal(onvm_ft_count(&f.ft), 12);
	for (uint32_t i = 1; i <= 12; i++)
		assert_non_null(lookup(&f, i));
	fx_fini(&f);
}

/* ---- backward-shift deletion -------------------------------------------------------- */

/* A cluster that wraps from the last slot to slot 0: three keys at home 15,
 * one at home 0, one at home 1 (slots 15, 0, 1, 2, 3).  Removing any one
 * keeps every other reachable, in every order. */
static void
test_remove_in_a_cluster_that_wraps(void **state)
{
	uint32_t h15[3], h0[1], h1[1], ks[5];

	(void)state;
	keys_with_home(16, 15, 3, h15, 0);
	keys_with_home(16, 0, 1, h0, 0);
	keys_with_home(16, 1, 1, h1, 0);
	ks[0] = h15[0], ks[1] = h15[1], ks[2] = h15[2], ks[3] = h0[0], ks[4] = h1[0];
	for (uint32_t victim = 0; victim < 5; victim++) {
		struct fx f;

		fx_init(&f, 16);
		for (uint32_t j = 0; j < 5; j++)
			insert_tagged(&f, ks[j], j);
		/* The layout the test means to build. */
		assert_int_equal(slot_of(&f.ft, lookup(&f, ks[0])), 15);
		assert_int_equal(slot_of(&f.ft, lookup(&f, ks[1])), 0);
		assert_int_equal(slot_of(&f.ft, lookup(&f, ks[2])), 1);
		assert_int_equal(slot_of(&f.ft, lookup(&f, ks[3])), 2);
		assert_int_equal(slot_of(&f.ft, lookup(&f, ks[4])), 3);
		remove_key(&f, ks[victim]);
		for (uint32_t j = 0; j < 5; j++) {
			struct val *v = lookup(&f, ks[j]);

			if (j == victim) {
				assert_null(v);
				continue;
			}
			assert_non_null(v);
			assert_int_equal(v->tag, 1000 + ks[j]);
		}
		/* Nothing is left stranded beyond an empty slot: the cluster
		 * shrank by exactly one from its end (slot 3). */
		assert_null(onvm_ft_slot_value(&f.ft, 3));
		assert_int_equal(onvm_ft_count(&f.ft), 4);
		/* Remove the rest in the wrap-around order too. */
		for (uint32_t j = 0; j < 5; j++)
			if (j != victim)
				remove_key(&f, ks[j]);
		assert_int_equal(onvm_ft_count(&f.ft), 0);
		for (uint32_t s = 0; s < 16; s++)
			assert_null(onvm_ft_slot_value(&f.ft, s));
		fx_fini(&f);
	}
}

/* An entry at its home slot right after the hole must stay put. */
static void
test_remove_leaves_entries_at_home(void **state)
{
	uint32_t a[2], b[1];
	struct fx f;

	(void)state;
	keys_with_home(16, 4, 2, a, 0);
	keys_with_home(16, 6, 1, b, 0);
	fx_init(&f, 16);
	insert_tagged(&f, a[0], 0); /* slot 4 */
	insert_tagged(&f, a[1], 0); /* slot 5 */
	insert_tagged(&f, b[0], 0); /* slot 6, its home */
	remove_key(&f, a[0]);
	assert_int_equal(slot_of(&f.ft, lookup(&f, a[1])), 4);
	assert_int_equal(slot_of(&f.ft, lookup(&f, b[0])), 6);
	assert_null(onvm_ft_slot_value(&f.ft, 5));
	fx_fini(&f);
}

/* ---- the randomised model check ---------------------------------------------------- */

#define UNIVERSE 48

struct model {
	bool present[UNIVERSE];
	uint64_t tag[UNIVERSE];
	uint64_t last_seen[UNIVERSE];
	uint32_t count;
};

static uint64_t rng_state;

static uint64_t
rnd(void)
{
	/* xorshift64*: reproducible across libcs. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

static uint32_t
rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

struct evict_log {
	uint32_t n;
	uint32_t keys[UNIVERSE + 1];
	uint64_t tags[UNIVERSE + 1];
};

static void
log_evict(void *arg, const struct onvm_flow_key *k, void *value)
{
	struct evict_log *l = arg;
	uint32_t i = k->src_ip - 0xc6120000u;

	assert_true(l->n <= UNIVERSE);
	l->keys[l->n] = i;
	l->tags[l->n] = ((struct val *)value)->tag;
	l->n++;
}

/* Model index j stands for key number model_key[j]. */
static uint32_t model_key[UNIVERSE];

static int
model_index(uint32_t universe, uint32_t keynum)
{
	for (uint32_t j = 0; j < universe; j++)
		if (model_key[j] == keynum)
			return (int)j;
	return -1;
}

static void
model_check(struct fx *f, const struct model *m, uint32_t universe)
{
	uint32_t used = 0;

	assert_int_equal(onvm_ft_count(&f->ft), m->count);
	for (uint32_t j = 0; j < universe; j++) {
		struct val *v = lookup(f, model_key[j]);

		if (!m->present[j]) {
			assert_null(v);
			continue;
		}
		assert_non_null(v);
		assert_int_equal(v->tag, m->tag[j]);
		assert_int_equal(onvm_ft_last_seen(&f->ft, v), m->last_seen[j]);
	}
	for (uint32_t s = 0; s < f->cap; s++)
		used += onvm_ft_slot_value(&f->ft, s) != NULL;
	assert_int_equal(used, m->count);
}

/* True while a cluster runs from the last slot into slot 0. */
static bool
wraps(const struct fx *f)
{
	return onvm_ft_slot_value(&f->ft, f->cap - 1) != NULL &&
	       onvm_ft_slot_value(&f->ft, 0) != NULL;
}

/* `ops` random operations on the keys model_key[0..universe); returns how
 * many removals (remove or expire) happened while a cluster wrapped. */
static uint64_t
run_model(uint64_t seed, uint32_t cap, uint32_t universe, uint32_t ops)
{
	uint64_t now = 1000, inserts = 0, removes = 0, expired = 0, full = 0, wrapped = 0;
	const uint32_t limit = cap - cap / 4;
	struct model m = {0};
	struct fx f;

	assert_true(universe <= UNIVERSE);
	rng_state = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	fx_init(&f, cap);
	for (uint32_t op = 0; op < ops; op++) {
		uint32_t r = rnd_below(100), i = rnd_below(universe), kn = model_key[i];

		now += rnd_below(4);
		if (r < 40) { /* insert, write the value in the same batch */
			bool created;
			struct onvm_flow_key k = key(kn);
			struct val *v = onvm_ft_insert(&f.ft, &k, now, &created);

			if (m.present[i]) {
				assert_non_null(v);
				assert_false(created);
			} else if (m.count >= limit) {
				assert_null(v);
				full++;
			} else {
				assert_non_null(v);
				assert_true(created);
				m.present[i] = true;
				m.count++;
				m.last_seen[i] = now;
				inserts++;
			}
			if (v != NULL) {
				v->tag = rnd();
				m.tag[i] = v->tag;
			}
		} else if (r < 65) { /* remove */
			struct val *v = lookup(&f, kn);

			assert_true((v != NULL) == m.present[i]);
			if (v != NULL) {
				wrapped += wraps(&f);
				onvm_ft_remove(&f.ft, v);
				m.present[i] = false;
				m.count--;
				removes++;
			}
		} else if (r < 80) { /* rewrite a value */
			struct val *v = lookup(&f, kn);

			if (v != NULL) {
				onvm_ft_touch_value(&f.ft, v);
				v->tag = rnd();
				m.tag[i] = v->tag;
			}
		} else if (r < 92) { /* activity */
			struct val *v = lookup(&f, kn);

			if (v != NULL) {
				onvm_ft_seen(&f.ft, v, now);
				m.last_seen[i] = now;
			}
		} else { /* expire with a random idle time and budget */
			uint64_t idle = rnd_below(400);
			uint32_t budget = 1 + rnd_below(cap + cap / 2);
			struct evict_log log = {0};
			bool w = wraps(&f);
			uint32_t n = onvm_ft_expire(&f.ft, now, idle, budget, log_evict, &log);

			assert_int_equal(n, log.n);
			wrapped += w && n > 0;
			for (uint32_t e = 0; e < log.n; e++) {
				int j = model_index(universe, log.keys[e]);

				assert_true(j >= 0);
				assert_true(m.present[j]); /* once per entry */
				assert_true(now - m.last_seen[j] >= idle);
				assert_int_equal(log.tags[e], m.tag[j]);
				m.present[j] = false;
				m.count--;
			}
			expired += n;
		}
		if (test_state_commit_check(&f.ts) != 0)
			fail_msg("seed %llu cap %u: op %u (r %u, key %u) wrote state without a touch",
				 (unsigned long long)seed, cap, op, r, kn);
		model_check(&f, &m, universe);
	}
	assert_int_equal(onvm_ft_stats(&f.ft)->inserts, inserts);
	assert_int_equal(onvm_ft_stats(&f.ft)->removes, removes);
	assert_int_equal(onvm_ft_stats(&f.ft)->expired, expired);
	assert_int_equal(onvm_ft_stats(&f.ft)->full, full);
	/* Every path was exercised. */
	if (!(inserts > 100 && removes > 100 && expired > 10 && full > 10))
		fail_msg("seed %llu cap %u: inserts %llu removes %llu expired %llu full %llu",
			 (unsigned long long)seed, cap, (unsigned long long)inserts,
			 (unsigned long long)removes, (unsigned long long)expired,
			 (unsigned long long)full);
	fx_fini(&f);
	return wrapped;
}

static void
model_keys_identity(uint32_t universe)
{
	for (uint32_t j = 0; j < universe; j++)
		model_key[j] = j;
}

/* Keys that all collide around the end of a 16-slot table: four each with
 * home 13, 14, 15, 0 and 1, so clusters are long and wrap to slot 0. */
static void
model_keys_colliding(void)
{
	static const int homes[5] = {13, 14, 15, 0, 1};
	static uint32_t cached[20];
	static bool have;

	if (!have) {
		for (int h = 0; h < 5; h++)
			keys_with_home(16, homes[h], 4, &cached[4 * h], 0);
		have = true;
	}
	memcpy(model_key, cached, sizeof(cached));
}

static void
run_seed(uint64_t seed, uint32_t ops)
{
	uint64_t w;

	model_keys_identity(24);
	run_model(seed, 16, 24, ops);
	model_keys_identity(40);
	run_model(seed, 32, 40, ops);
	model_keys_colliding();
	w = run_model(seed, 16, 20, ops);
	/* The point of these keys: removals inside a wrapping cluster. */
	if (w < ops / 50)
		fail_msg("seed %llu: only %llu removals in a wrapping cluster", (unsigned long long)seed,
			 (unsigned long long)w);
}

static void
test_random_operations_match_a_model(void **state)
{
	static const uint64_t seeds[] = {1, 2, 3, 0xc0ffee, 20260101};
	const char *env = getenv("ONVM_TEST_SEED");

	(void)state;
	for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
		run_seed(seeds[s], 5000);
	if (env != NULL) {
		uint64_t seed = strtoull(env, NULL, 0);

		printf("flow table model: extra seed %llu\n", (unsigned long long)seed);
		run_seed(seed, 20000);
	}
}

/* ---- expiry ------------------------------------------------------------------------------ */

static struct onvm_ft_hdr *
ft_hdr(struct fx *f)
{
	return f->ft.hdr;
}

static void
test_expire_removes_exactly_the_idle_entries(void **state)
{
	struct evict_log log = {0};
	struct fx f;
	uint32_t n;

	(void)state;
	fx_init(&f, 32);
	/* Key i last seen at time 100 + i; at now 200 with idle 90, keys
	 * with 200 - (100 + i) >= 90, i.e. i <= 10, are idle. */
	for (uint32_t i = 0; i < 20; i++)
		insert_tagged(&f, i, 100 + i);
	/* Key 3 is active again. */
	onvm_ft_seen(&f.ft, lookup(&f, 3), 190);
	commit_ok(&f);
	n = 0;
	for (int pass = 0; pass < 4; pass++) { /* enough budget for a whole sweep */
		n += onvm_ft_expire(&f.ft, 200, 90, 32, log_evict, &log);
		commit_ok(&f);
	}
	assert_int_equal(n, 10);
	assert_int_equal(log.n, 10);
	assert_int_equal(onvm_ft_stats(&f.ft)->expired, 10);
	for (uint32_t i = 0; i < 20; i++) {
		bool idle = i <= 10 && i != 3;
		bool evicted = false;

		for (uint32_t e = 0; e < log.n; e++)
			if (log.keys[e] == i) {
				assert_false(evicted); /* the callback ran once per entry */
				evicted = true;
				assert_int_equal(log.tags[e], 1000 + i); /* before it went */
			}
		assert_true(evicted == idle);
		assert_true((lookup(&f, i) == NULL) == idle);
	}
	/* Time that went backwards (an entry newer than now) never expires. */
	assert_int_equal(onvm_ft_expire(&f.ft, 50, 0, 32, NULL, NULL), 0);
	commit_ok(&f);
	/* idle 0 expires everything seen at or before now; no callback is fine. */
	for (int pass = 0; pass < 4; pass++) {
		onvm_ft_expire(&f.ft, 1000, 0, 32, NULL, NULL);
		commit_ok(&f);
	}
	assert_int_equal(onvm_ft_count(&f.ft), 0);
	fx_fini(&f);
}

/* max_slots at or above the capacity is one whole sweep: every idle entry
 * goes in one call, wherever it sits relative to the cursor. */
static void
test_expire_with_unlimited_budget_sweeps_the_whole_table(void **state)
{
	uint32_t k1[1], k5[1], k9[1], k13[1];
	struct evict_log log = {0};
	struct fx f;

	(void)state;
	keys_with_home(16, 1, 1, k1, 0);
	keys_with_home(16, 5, 1, k5, 0);
	keys_with_home(16, 9, 1, k9, 0);
	keys_with_home(16, 13, 1, k13, 0);
	fx_init(&f, 16);
	insert_tagged(&f, k1[0], 10);
	insert_tagged(&f, k5[0], 10);
	insert_tagged(&f, k9[0], 10);
	insert_tagged(&f, k13[0], 10);
	assert_int_equal(onvm_ft_expire(&f.ft, 100, 50, UINT32_MAX, log_evict, &log), 4);
	commit_ok(&f);
	assert_int_equal(onvm_ft_count(&f.ft), 0);
	fx_fini(&f);
}

/* A small budget sweeps incrementally: each call passes `budget` slots from
 * the cursor on (a removal does not use up budget), and the next call
 * resumes where it stopped. */
static void
test_expire_is_incremental_and_resumes_at_the_cursor(void **state)
{
	uint32_t homes[4] = {2, 6, 10, 14}, ks[4];
	struct fx f;

	(void)state;
	for (int j = 0; j < 4; j++)
		keys_with_home(16, (int)homes[j], 1, &ks[j], 0);
	fx_init(&f, 16);
	for (int j = 0; j < 4; j++)
		insert_tagged(&f, ks[j], 10);
	assert_int_equal(ft_hdr(&f)->sweep_cursor, 0);
	/* Slots 0 and 1: nothing there. */
	assert_int_equal(onvm_ft_expire(&f.ft, 100, 50, 2, NULL, NULL), 0);
	commit_ok(&f);
	assert_int_equal(ft_hdr(&f)->sweep_cursor, 2);
	/* The sweep goes round the table in slot order, entry by entry, and
	 * never removes an entry before the sweep reached its slot. */
	for (int j = 0; j < 4; j++) {
		struct evict_log log = {0};
		uint32_t guard = 0;

		while (log.n == 0) {
			uint32_t c0 = ft_hdr(&f)->sweep_cursor;

			onvm_ft_expire(&f.ft, 100, 50, 1, log_evict, &log);
			commit_ok(&f);
			assert_int_equal(ft_hdr(&f)->sweep_cursor, (c0 + 1) & 15);
			if (log.n != 0)
				assert_int_equal(c0, homes[j]);
			assert_true(++guard < 32);
		}
		assert_int_equal(log.n, 1);
		assert_int_equal(log.keys[0], ks[j]);
		assert_null(lookup(&f, ks[j]));
		for (int later = j + 1; later < 4; later++)
			assert_non_null(lookup(&f, ks[later]));
	}
	assert_int_equal(onvm_ft_count(&f.ft), 0);
	assert_int_equal(onvm_ft_stats(&f.ft)->expired, 4);
	/* The cursor wraps from the last slot to slot 0. */
	for (int n = 0; n < 40; n++) {
		onvm_ft_expire(&f.ft, 100, 50, 1, NULL, NULL);
		commit_ok(&f);
		assert_true(ft_hdr(&f)->sweep_cursor < 16);
	}
	fx_fini(&f);
}

/* Removing an entry may pull an idle one back into the slot just swept (also
 * across the end of the table): it is looked at again and goes too. */
static void
test_expire_catches_entries_shifted_into_the_swept_slot(void **state)
{
	uint32_t h15[3];
	struct evict_log log = {0};
	struct fx f;
	uint32_t removed = 0;

	(void)state;
	keys_with_home(16, 15, 3, h15, 0);
	fx_init(&f, 16);
	for (int j = 0; j < 3; j++)
		insert_tagged(&f, h15[j], 10); /* slots 15, 0, 1 */
	/* Move the cursor to slot 15. */
	for (int n = 0; n < 15; n++) {
		onvm_ft_expire(&f.ft, 100, 1000, 1, NULL, NULL); /* nothing idle enough */
		commit_ok(&f);
	}
	assert_int_equal(ft_hdr(&f)->sweep_cursor, 15);
	/* All three pass through slot 15: one slot of budget removes them all
	 * and moves on to slot 0. */
	removed = onvm_ft_expire(&f.ft, 100, 50, 1, log_evict, &log);
	commit_ok(&f);
	assert_int_equal(ft_hdr(&f)->sweep_cursor, 0);
	assert_int_equal(removed, 3);
	assert_int_equal(log.n, 3);
	assert_int_equal(onvm_ft_count(&f.ft), 0);
	fx_fini(&f);
}

/* ---- canonical keys ------------------------------------------------------------------ */

static void
test_key_canon_is_symmetric(void **state)
{
	(void)state;
	rng_state = 77;
	for (int n = 0; n < 2000; n++) {
		struct onvm_flow_key k = {
		    .src_ip = (uint32_t)rnd(), .dst_ip = (uint32_t)rnd(),
		    .sport = (uint16_t)rnd(), .dport = (uint16_t)rnd(), .proto = (uint8_t)rnd(),
		}, r, ck, cr;
		bool sk, sr;

		if (n % 4 == 1)
			k.dst_ip = k.src_ip; /* same host: the ports decide */
		if (n % 8 == 3)
			k.dst_ip = k.src_ip, k.dport = k.sport; /* fully symmetric */
		r = k;
		r.src_ip = k.dst_ip, r.dst_ip = k.src_ip, r.sport = k.dport, r.dport = k.sport;
		sk = onvm_flow_key_canon(&k, &ck);
		sr = onvm_flow_key_canon(&r, &cr);
		assert_true(key_equal(&ck, &cr));
		assert_int_equal(ck.proto, k.proto);
		/* The lower endpoint first. */
		assert_true(ck.src_ip < ck.dst_ip ||
			    (ck.src_ip == ck.dst_ip && ck.sport <= ck.dport));
		/* Exactly one direction is the swapped one, unless both are equal. */
		if (key_equal(&k, &r))
			assert_false(sk || sr);
		else
			assert_true(sk != sr);
		assert_true(key_equal(&ck, sk ? &r : &k));
	}
}

/* ---- failover ------------------------------------------------------------------------------ */

static void
test_failover_keeps_committed_entries_and_rolls_back_the_rest(void **state)
{
	struct val *v;
	struct fx f;

	(void)state;
	fx_init(&f, 32);
	for (uint32_t i = 0; i < 8; i++)
		insert_tagged(&f, i, 100 + i); /* each committed */
	/* A batch the NF never finished: inserts, a remove, a value write,
	 * activity and an expiry, all touched, none committed. */
	for (uint32_t i = 20; i < 26; i++) {
		struct onvm_flow_key k = key(i);

		v = onvm_ft_insert(&f.ft, &k, 500, NULL);
		assert_non_null(v);
		v->tag = 9;
	}
	onvm_ft_remove(&f.ft, lookup(&f, 2));
	v = lookup(&f, 4);
	onvm_ft_touch_value(&f.ft, v);
	v->tag = 4444;
	onvm_ft_seen(&f.ft, lookup(&f, 5), 900);
	onvm_ft_expire(&f.ft, 1000, 895, 32, NULL, NULL);
	fx_failover(&f);
	/* Exactly the committed table. */
	assert_int_equal(onvm_ft_count(&f.ft), 8);
	assert_int_equal(onvm_ft_stats(&f.ft)->inserts, 8);
	assert_int_equal(onvm_ft_stats(&f.ft)->removes, 0);
	assert_int_equal(onvm_ft_stats(&f.ft)->expired, 0);
	for (uint32_t i = 0; i < 8; i++) {
		v = lookup(&f, i);
		assert_non_null(v);
		assert_int_equal(v->tag, 1000 + i);
		assert_int_equal(onvm_ft_last_seen(&f.ft, v), 100 + i);
	}
	for (uint32_t i = 20; i < 26; i++)
		assert_null(lookup(&f, i));
	assert_int_equal(ft_hdr(&f)->sweep_cursor, 0);
	/* The promoted NF carries on: its own writes commit and survive the
	 * next failover. */
	remove_key(&f, 7);
	insert_tagged(&f, 30, 600);
	fx_failover(&f);
	assert_null(lookup(&f, 7));
	assert_non_null(lookup(&f, 30));
	assert_int_equal(lookup(&f, 30)->tag, 1030);
	assert_int_equal(onvm_ft_count(&f.ft), 8);
	fx_fini(&f);
}

/* ---- moving flows between instances -------------------------------------- */

/* The flows to move in these tests: the odd keys. */
static bool
odd_key(void *arg, const struct onvm_flow_key *k, uint32_t route)
{
	(void)arg;
	(void)route;
	return (k->src_ip & 1) != 0;
}

static uint32_t
value_entry_route(const struct onvm_ft *ft, const void *v)
{
	(void)ft;
	return ((const struct onvm_ft_entry *)v - 1)->route;
}

/* Entries of the routes in the bitmap `arg`. */
static bool
route_in(void *arg, const struct onvm_flow_key *k, uint32_t route)
{
	const uint64_t *set = arg;

	(void)k;
	return route < 128 && (set[route / 64] >> (route % 64) & 1) != 0;
}

/* While a keep filter is set, expiry passes over the entries it selects
 * however idle (libnf keeps a moving flow's), and takes them again once
 * it is cleared. */
static void
test_expire_keeps_what_the_keep_filter_selects(void **state)
{
	struct fx f;
	uint64_t keep[2] = {0};

	(void)state;
	fx_init(&f, 64);
	for (uint32_t i = 0; i < 12; i++) {
		struct onvm_flow_key k = key(i);

		onvm_ft_set_route(1 + i % 2); /* routes 1 and 2 */
		assert_non_null(onvm_ft_insert(&f.ft, &k, 100, NULL));
	}
	onvm_ft_set_route(0);
	commit_ok(&f);
	keep[0] = 1u << 2;
	onvm_ft_set_expire_keep(route_in, keep);
	assert_int_equal(onvm_ft_expire(&f.ft, 1000, 10, 64, NULL, NULL), 6);
	commit_ok(&f);
	assert_int_equal(onvm_ft_count(&f.ft), 6);
	for (uint32_t i = 0; i < 12; i++) {
		struct onvm_flow_key k = key(i);

		assert_int_equal(onvm_ft_lookup(&f.ft, &k) != NULL, i % 2 == 1);
	}
	onvm_ft_set_expire_keep(NULL, NULL);
	assert_int_equal(onvm_ft_expire(&f.ft, 1000, 10, 64, NULL, NULL), 6);
	commit_ok(&f);
	assert_int_equal(onvm_ft_count(&f.ft), 0);
}

/* An entry carries the route current when it was inserted (not the one
 * when it is seen again), a record carries it, the importer keeps it, and
 * a filter selects by it: a move finds a flow by the bucket the manager
 * routed it by, whatever key the NF files it under. */
static void
test_route_stamped_at_insert_travels_and_filters(void **state)
{
	struct fx src, dst;
	uint8_t buf[4096];
	uint64_t want[2] = {0};
	uint32_t cursor = 0, n;
	size_t len;
	enum onvm_ft_import_error err;

	(void)state;
	fx_init(&src, 64);
	fx_init(&dst, 64);
	for (uint32_t i = 0; i < 20; i++) {
		struct onvm_flow_key k = key(i);

		onvm_ft_set_route(i % 4 == 0 ? 0 : 1 + i % 3); /* 0: no packet current */
		assert_non_null(onvm_ft_insert(&src.ft, &k, 100, NULL));
	}
	onvm_ft_set_route(77); /* seen again under another route: no change */
	for (uint32_t i = 0; i < 20; i++) {
		struct onvm_flow_key k = key(i);

		assert_non_null(onvm_ft_insert(&src.ft, &k, 200, NULL));
	}
	onvm_ft_set_route(0);
	commit_ok(&src);
	want[0] = 1u << 2; /* route 2: i % 3 == 1 and i % 4 != 0 */
	len = onvm_ft_export(&src.ft, route_in, want, 300, &cursor, buf, sizeof(buf), &n);
	assert_int_equal(n, 5); /* i = 1, 7, 10, 13, 19 */
	assert_int_equal(onvm_ft_import(&dst.ft, buf, len, 50, &err), 5);
	assert_int_equal(err, ONVM_FT_IMPORT_OK);
	commit_ok(&dst);
	for (uint32_t i = 0; i < 20; i++) {
		struct onvm_flow_key k = key(i);
		bool moved = i % 4 != 0 && i % 3 == 1;
		void *v = onvm_ft_lookup(&dst.ft, &k);

		assert_int_equal(v != NULL, moved);
		if (v != NULL)
			assert_int_equal(value_entry_route(&dst.ft, v), 2);
	}
	/* route 0 (not known) is a route like any other to a filter */
	want[0] = 1u << 0;
	assert_int_equal(onvm_ft_remove_if(&src.ft, route_in, want), 5);
	commit_ok(&src);
	assert_int_equal(onvm_ft_count(&src.ft), 15);
}

/* Export the odd half of a source table in small pieces (the cursor
 * resumes), import it into a destination that already holds an older
 * copy of one flow and whose clock is 10 s ahead, remove it from the
 * source: every moved flow is in the destination with its value, and its
 * times as old as they were, by the destination's clock; and only there;
 * the even ones are in the source, untouched; the counters say so. */
static void
test_export_import_moves_the_selected_flows_with_their_state(void **state)
{
	struct fx src, dst;
	uint8_t buf[4096], piece[3 * (sizeof(struct onvm_ft_record) + sizeof(struct val))];
	size_t used = 0;
	uint32_t cursor = 0, total = 0;
	enum onvm_ft_import_error err;

	(void)state;
	fx_init(&src, 64);
	fx_init(&dst, 64);
	for (uint32_t i = 0; i < 40; i++) {
		struct onvm_flow_key k = key(i);
		struct val *v = onvm_ft_insert(&src.ft, &k, 100, NULL);

		assert_non_null(v);
		onvm_ft_seen(&src.ft, v, 1000 + i);
		v->tag = 0xabc0000u + i;
		v->n = i * 3;
	}
	{ /* the destination's stale copy of flow 1 (odd): overwritten */
		struct onvm_flow_key k = key(1);
		struct val *v = onvm_ft_insert(&dst.ft, &k, 5, NULL);

		v->tag = 0xdead;
	}
	commit_ok(&src);
	commit_ok(&dst);
	while (cursor < onvm_ft_capacity(&src.ft)) {
		uint32_t n;
		size_t got = onvm_ft_export(&src.ft, odd_key, NULL, 2000, &cursor, piece,
					    sizeof(piece), &n);

		assert_true(got <= sizeof(piece) && got == n * onvm_ft_record_size(&src.ft));
		assert_int_equal(onvm_ft_record_size(&src.ft),
				 sizeof(struct onvm_ft_record) + sizeof(struct val));
		assert_true(used + got <= sizeof(buf));
		memcpy(buf + used, piece, got);
		used += got;
		total += n;
	}
	assert_int_equal(total, 20);
	assert_int_equal(onvm_ft_import(&dst.ft, buf, used, 10000 + 2000, &err), 20);
	assert_int_equal(err, ONVM_FT_IMPORT_OK);
	commit_ok(&dst);
	/* (flow 1 was there: 19 inserts and an overwrite, besides the stale one) */
	assert_int_equal(onvm_ft_stats(&dst.ft)->inserts, 1 + 19);
	assert_int_equal(onvm_ft_remove_if(&src.ft, odd_key, NULL), 20);
	commit_ok(&src);
	assert_int_equal(onvm_ft_stats(&src.ft)->removes, 20);
	assert_int_equal(onvm_ft_count(&dst.ft), 20);
	assert_int_equal(onvm_ft_count(&src.ft), 20);
	for (uint32_t i = 0; i < 40; i++) {
		struct onvm_flow_key k = key(i);
		struct fx *has = (i & 1) ? &dst : &src, *not = (i & 1) ? &src : &dst;
		struct val *v = onvm_ft_lookup(&has->ft, &k);

		assert_non_null(v);
		assert_int_equal(v->tag, 0xabc0000u + i);
		assert_int_equal(v->n, i * 3);
		/* seen 1000 - i ago at export, created 1900 ago: on the
		 * destination's clock, 10 000 ahead */
		assert_int_equal(onvm_ft_last_seen(&has->ft, v), ((i & 1) ? 10000 : 0) + 1000 + i);
		assert_int_equal(onvm_ft_created(&has->ft, v), ((i & 1) ? 10000 : 0) + 100);
		assert_null(onvm_ft_lookup(&not->ft, &k));
	}
	fx_fini(&src);
	fx_fini(&dst);
}

/* Records from elsewhere are outside input: each bad one is refused with
 * its reason, the good ones before it kept, nothing after it read. */
static void
test_import_refuses_bad_records_with_a_reason(void **state)
{
	struct fx src, dst, other;
	uint8_t buf[1024], bad[1024];
	uint32_t cursor = 0, n;
	size_t rec = sizeof(struct onvm_ft_record) + sizeof(struct val), len;
	enum onvm_ft_import_error err;
	struct onvm_ft_record r;

	(void)state;
	fx_init(&src, 16);
	fx_init(&dst, 16);
	for (uint32_t i = 0; i < 4; i++) {
		struct onvm_flow_key k = key(i);

		assert_non_null(onvm_ft_insert(&src.ft, &k, 1, NULL));
	}
	len = onvm_ft_export(&src.ft, NULL, NULL, 1, &cursor, buf, sizeof(buf), &n);
	assert_int_equal(n, 4);
	assert_int_equal(len, 4 * rec);
	/* a buffer smaller than a record: nothing, the cursor kept */
	cursor = 0;
	assert_int_equal(onvm_ft_export(&src.ft, NULL, NULL, 1, &cursor, bad, rec - 1, &n), 0);
	assert_int_equal(n, 0);
	assert_true(cursor < onvm_ft_capacity(&src.ft));
	/* cut short: the whole records before the cut imported */
	assert_int_equal(onvm_ft_import(&dst.ft, buf, len - 1, 1, &err), 3);
	assert_int_equal(err, ONVM_FT_IMPORT_SHORT);
	assert_int_equal(onvm_ft_import(&dst.ft, buf, 7, 1, &err), 0);
	assert_int_equal(err, ONVM_FT_IMPORT_SHORT);
	/* the second record's magic, value size, key padding, padding broken */
	for (int what = 0; what < 4; what++) {
		memcpy(bad, buf, len);
		memcpy(&r, bad + rec, sizeof(r));
		if (what == 0)
			r.magic ^= 1;
		else if (what == 1)
			r.value_size += 8;
		else if (what == 2)
			r.key.pad[1] = 1;
		else
			r.reserved = 1;
		memcpy(bad + rec, &r, sizeof(r));
		assert_int_equal(onvm_ft_import(&dst.ft, bad, len, 1, &err), 1);
		assert_int_equal(err, what == 0 ? ONVM_FT_IMPORT_MAGIC
				      : what == 1 ? ONVM_FT_IMPORT_VALUE_SIZE
						  : ONVM_FT_IMPORT_KEY_PAD);
	}
	assert_string_equal(onvm_ft_import_error_str(ONVM_FT_IMPORT_VALUE_SIZE), "value_size");
	assert_string_equal(onvm_ft_import_error_str(ONVM_FT_IMPORT_FULL + 1), "unknown");
	/* another NF's table (8-byte values), and another version of this one
	 * (12-byte values: the same 16 bytes once rounded): refused whole */
	for (uint32_t vsize = 8; vsize <= 12; vsize += 4) {
		fx_init_ex(&other, 16, vsize, 0);
		fx_open(&other);
		assert_int_equal(onvm_ft_import(&other.ft, buf, len, 1, &err), 0);
		assert_int_equal(err, ONVM_FT_IMPORT_VALUE_SIZE);
		assert_int_equal(onvm_ft_count(&other.ft), 0);
		fx_fini(&other);
	}
	fx_fini(&src);
	fx_fini(&dst);
}

/* A destination at its load limit takes what fits and says so. */
static void
test_import_into_a_full_table_stops_and_says_full(void **state)
{
	struct fx src, dst;
	uint8_t buf[4096];
	uint32_t cursor = 0, n;
	size_t len;
	enum onvm_ft_import_error err;

	(void)state;
	fx_init(&src, 32);
	fx_init(&dst, 16); /* 12 entries at most */
	for (uint32_t i = 0; i < 20; i++) {
		struct onvm_flow_key k = key(i);

		assert_non_null(onvm_ft_insert(&src.ft, &k, 1, NULL));
	}
	len = onvm_ft_export(&src.ft, NULL, NULL, 1, &cursor, buf, sizeof(buf), &n);
	assert_int_equal(n, 20);
	assert_int_equal(onvm_ft_import(&dst.ft, buf, len, 1, &err), 12);
	assert_int_equal(err, ONVM_FT_IMPORT_FULL);
	assert_int_equal(onvm_ft_count(&dst.ft), 12);
	assert_int_equal(onvm_ft_stats(&dst.ft)->full, 1);
	/* the failed move's leftovers removed: all of them (a NULL filter) */
	assert_int_equal(onvm_ft_remove_if(&dst.ft, NULL, NULL), 12);
	assert_int_equal(onvm_ft_count(&dst.ft), 0);
	fx_fini(&src);
	fx_fini(&dst);
}

/* remove_if in clusters that wrap past the last slot (homes 13..1 of 16):
 * every selected entry goes, every other stays findable. */
static void
test_remove_if_in_wrapping_clusters(void **state)
{
	struct fx f;
	uint32_t picked[64], np = 0, odd = 0;

	(void)state;
	for (uint32_t i = 0; np < 11 && i < 100000; i++) {
		int h = home_of(16, i);

		if (h >= 13 || h <= 1)
			picked[np++] = i;
	}
	assert_int_equal(np, 11);
	fx_init(&f, 16);
	for (uint32_t j = 0; j < np; j++) {
		struct onvm_flow_key k = key(picked[j]);

		assert_non_null(onvm_ft_insert(&f.ft, &k, 1, NULL));
		odd += picked[j] & 1;
	}
	assert_int_equal(onvm_ft_remove_if(&f.ft, odd_key, NULL), odd);
	commit_ok(&f);
	assert_int_equal(onvm_ft_count(&f.ft), np - odd);
	for (uint32_t j = 0; j < np; j++) {
		struct onvm_flow_key k = key(picked[j]);

		if (picked[j] & 1)
			assert_null(onvm_ft_lookup(&f.ft, &k));
		else
			assert_non_null(onvm_ft_lookup(&f.ft, &k));
	}
	fx_fini(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mem_size_rejects_out_of_range_arguments),
	    cmocka_unit_test(test_open_formats_fresh_memory),
	    cmocka_unit_test(test_open_reattaches_a_table),
	    cmocka_unit_test(test_open_rejects_a_table_of_another_shape),
	    cmocka_unit_test(test_open_rejects_foreign_memory),
	    cmocka_unit_test(test_open_rejects_nonzero_memory_with_a_zero_first_word),
	    cmocka_unit_test(test_open_rejects_bad_arguments),
	    cmocka_unit_test(test_insert_creates_a_zeroed_value_once),
	    cmocka_unit_test(test_lookup_tells_keys_apart_by_every_field),
	    cmocka_unit_test(test_remove_forgets_only_that_key),
	    cmocka_unit_test(test_touch_value_and_seen_cover_later_writes),
	    cmocka_unit_test(test_commit_check_catches_an_untouched_value_write),
	    cmocka_unit_test(test_insert_stops_at_three_quarters),
	    cmocka_unit_test(test_remove_in_a_cluster_that_wraps),
	    cmocka_unit_test(test_remove_leaves_entries_at_home),
	    cmocka_unit_test(test_random_operations_match_a_model),
	    cmocka_unit_test(test_expire_removes_exactly_the_idle_entries),
	    cmocka_unit_test(test_expire_with_unlimited_budget_sweeps_the_whole_table),
	    cmocka_unit_test(test_expire_is_incremental_and_resumes_at_the_cursor),
	    cmocka_unit_test(test_expire_catches_entries_shifted_into_the_swept_slot),
	    cmocka_unit_test(test_key_canon_is_symmetric),
	    cmocka_unit_test(test_failover_keeps_committed_entries_and_rolls_back_the_rest),
	    cmocka_unit_test(test_export_import_moves_the_selected_flows_with_their_state),
	    cmocka_unit_test(test_import_refuses_bad_records_with_a_reason),
	    cmocka_unit_test(test_import_into_a_full_table_stops_and_says_full),
	    cmocka_unit_test(test_remove_if_in_wrapping_clusters),
	    cmocka_unit_test(test_route_stamped_at_insert_travels_and_filters),
	    cmocka_unit_test(test_expire_keeps_what_the_keep_filter_selects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
