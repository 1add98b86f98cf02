/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_state_core.c -- unit tests for libnf's state regions, dirty tracking
 * and crash-atomic batch commit (libnf/src/state_core.c).
 *
 * The "shared block" is ordinary aligned heap memory.  A crash is simulated
 * with the module's step hook: it longjmps out of nf_state_commit() (or
 * nf_state_recover()) right after a chosen step, leaving the block exactly as
 * a process killed at that instruction would.  The "standby" then attaches a
 * fresh handle to the same block and recovers; the test compares every
 * canonical region and replica with snapshots of the state before and after
 * the batch, byte for byte.
 *
 * Crash tests use two regions with different chunk sizes and partial last
 * chunks ("flows": 10000 bytes in 1 KB chunks, "stats": 300 bytes in 64-byte
 * chunks), so a batch spans both and the commit point must cover both.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "onvm_state.h"

#define MIB (UINT64_C(1) << 20)

/* ---- fixture ---------------------------------------------------------- */

struct fx {
	struct nf_state_layout layout;
	struct nf_state_set set; /* the active NF */
	uint8_t *mem;
	size_t size;
};

static void
fx_init(struct fx *f, const struct nf_state_request *reqs, unsigned int n)
{
	char err[256] = "";

	assert_int_equal(nf_state_layout_compute(&f->layout, reqs, n, err, sizeof(err)), 0);
	f->size = f->layout.total_size;
	f->mem = aligned_alloc(4096, f->size);
	assert_non_null(f->mem);
	memset(f->mem, 0xa5, f->size); /* format must not rely on zeroed memory */
	assert_int_equal(nf_state_format(f->mem, f->size, &f->layout, err, sizeof(err)), 0);
	assert_int_equal(nf_state_attach(&f->set, f->mem, f->size, &f->layout, err, sizeof(err)),
			 0);
}

static void
fx_fini(struct fx *f)
{
	free(f->mem);
}

/* A new process attaching to the block: what the standby does. */
static void
fx_standby(struct fx *f, struct nf_state_set *sb)
{
	char err[256] = "";

	assert_int_equal(nf_state_attach(sb, f->mem, f->size, &f->layout, err, sizeof(err)), 0);
}

static struct nf_state_hdr *
hdr(struct fx *f)
{
	return (struct nf_state_hdr *)f->mem;
}

/* What an NF does: touch, then write. */
static void
nf_write(struct nf_state_set *s, unsigned int region, size_t off, size_t len, uint8_t v)
{
	assert_int_equal(nf_state_touch(s, region, off, len), 0);
	memset((uint8_t *)nf_state_region_ptr(s, region) + off, v, len);
}

/* A byte pattern that differs per batch, region and position. */
static void
nf_write_pattern(struct nf_state_set *s, unsigned int region, size_t off, size_t len,
		 unsigned int batch)
{
	uint8_t *p = (uint8_t *)nf_state_region_ptr(s, region) + off;

	assert_int_equal(nf_state_touch(s, region, off, len), 0);
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(batch * 31 + region * 7 + (off + i) * 13);
}

struct snap {
	unsigned int n;
	uint8_t *r[NF_STATE_MAX_REGIONS];
	uint64_t size[NF_STATE_MAX_REGIONS];
};

static void
snap_take(struct snap *sn, const struct nf_state_set *s)
{
	sn->n = s->n_regions;
	for (unsigned int i = 0; i < sn->n; i++) {
		sn->size[i] = nf_state_region_size(s, i);
		sn->r[i] = malloc(sn->size[i]);
		assert_non_null(sn->r[i]);
		memcpy(sn->r[i], nf_state_region_ptr(s, i), sn->size[i]);
	}
}

static void
snap_free(struct snap *sn)
{
	for (unsigned int i = 0; i < sn->n; i++)
		free(sn->r[i]);
}

/* canonical == replica == snapshot, every region, every byte. */
static void
assert_state(const struct nf_state_set *s, const struct snap *sn)
{
	for (unsigned int i = 0; i < sn->n; i++) {
		assert_memory_equal(nf_state_region_ptr(s, i), sn->r[i], sn->size[i]);
		assert_memory_equal(nf_state_replica_ptr(s, i), sn->r[i], sn->size[i]);
	}
}

static void
assert_listed(const struct nf_state_set *s, unsigned int region, const uint32_t *chunks, uint32_t n)
{
	const struct nf_state_region *r = &s->regions[region];

	assert_int_equal(*r->dirty_n, n);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(r->list[i], chunks[i]);
		assert_true(r->bitmap[chunks[i] / 64] & (UINT64_C(1) << (chunks[i] % 64)));
	}
}

static void
assert_clean(const struct nf_state_set *s)
{
	assert_int_equal(nf_state_dirty_chunks(s), 0);
	for (unsigned int i = 0; i < s->n_regions; i++)
		for (uint32_t w = 0; w < s->regions[i].bitmap_words; w++)
			assert_true(s->regions[i].bitmap[w] == 0);
}

/* ---- crash simulation -------------------------------------------------- */

static jmp_buf crash_env;
static unsigned int crash_countdown; /* crash at this hook call; 0 = never */
static unsigned int hook_calls;

static void
crash_hook(void *arg, enum nf_state_step step, uint32_t k)
{
	(void)arg;
	(void)step;
	(void)k;
	hook_calls++;
	if (crash_countdown != 0 && --crash_countdown == 0)
		longjmp(crash_env, 1);
}

/* Commit, "dying" right after the at-th step (0: never).  True if it died. */
static bool
commit_crashing(struct nf_state_set *s, unsigned int at)
{
	hook_calls = 0;
	crash_countdown = at;
	nf_state_set_step_hook(s, crash_hook, NULL);
	if (setjmp(crash_env) != 0)
		return true;
	nf_state_commit(s);
	nf_state_set_step_hook(s, NULL, NULL);
	return false;
}

static bool
recover_crashing(struct nf_state_set *s, unsigned int at)
{
	hook_calls = 0;
	crash_countdown = at;
	nf_state_set_step_hook(s, crash_hook, NULL);
	if (setjmp(crash_env) != 0)
		return true;
	assert_int_equal(nf_state_recover(s, NULL, NULL, 0), 0);
	nf_state_set_step_hook(s, NULL, NULL);
	return false;
}

/*
 * The two-region scenario: batch 1 fills both regions and commits (the "old"
 * state, seq 1); batch 2 rewrites a few chunks of each, including both last
 * partial chunks and a write spanning two chunks (the "new" state), and is
 * left uncommitted for the caller to commit or crash.
 */
static const struct nf_state_request two_regions[] = {
    {.name = "flows", .size = 10000},
    {.name = "stats", .size = 300, .chunk_size = 64},
};

static void
scenario(struct fx *f, struct snap *old_s, struct snap *new_s)
{
	fx_init(f, two_regions, 2);
	nf_write_pattern(&f->set, 0, 0, 10000, 1);
	nf_write_pattern(&f->set, 1, 0, 300, 1);
	assert_int_equal(nf_state_commit(&f->set), 1);
	snap_take(old_s, &f->set);

	nf_write_pattern(&f->set, 0, 1000, 100, 2); /* chunks 0 and 1 */
	nf_write_pattern(&f->set, 0, 9990, 10, 2);  /* last, partial chunk 9 */
	nf_write_pattern(&f->set, 0, 5000, 1, 2);   /* chunk 4 */
	nf_write_pattern(&f->set, 1, 299, 1, 2);    /* last, partial chunk 4 */
	nf_write_pattern(&f->set, 1, 70, 4, 2);	    /* chunk 1 */
	snap_take(new_s, &f->set);
}

/* Dry run: how many hook calls a commit (or recovery) of the scenario makes. */
static unsigned int
count_commit_steps(void)
{
	struct fx f;
	struct snap o, n;
	unsigned int calls;

	scenario(&f, &o, &n);
	assert_false(commit_crashing(&f.set, 0));
	calls = hook_calls;
	snap_free(&o);
	snap_free(&n);
	fx_fini(&f);
	return calls;
}

/* ---- layout ------------------------------------------------------------- */

static int
layout_err(const struct nf_state_request *reqs, unsigned int n, char *err, size_t errlen)
{
	struct nf_state_layout l;

	err[0] = '\0';
	return nf_state_layout_compute(&l, reqs, n, err, errlen);
}

static void
test_layout_places_blocks_disjoint_and_aligned(void **state)
{
	(void)state;
	struct nf_state_layout l;
	char err[256];
	const struct nf_state_request reqs[] = {
	    {.name = "a", .size = 1},
	    {.name = "b", .size = 5000, .chunk_size = 4096},
	    {.name = "c", .size = 64 * MIB, .chunk_size = 64},
	};
	struct {
		uint64_t off, len;
	} blocks[12];
	unsigned int nb = 0;

	assert_int_equal(nf_state_layout_compute(&l, reqs, 3, err, sizeof(err)), 0);
	assert_int_equal(l.n_regions, 3);
	for (unsigned int i = 0; i < 3; i++) {
		const struct nf_state_region_layout *r = &l.regions[i];

		assert_string_equal(r->name, reqs[i].name);
		assert_int_equal(r->size, reqs[i].size);
		assert_int_equal(r->block_size % r->chunk_size, 0);
		assert_true(r->block_size >= r->size && r->block_size - r->size < r->chunk_size);
		assert_int_equal(r->n_chunks, r->block_size / r->chunk_size);
		assert_int_equal(r->bitmap_words, (r->n_chunks + 63) / 64);
		assert_int_equal(r->canon_off % 4096, 0);
		assert_int_equal(r->replica_off % 4096, 0);
		assert_int_equal(r->bitmap_off % 64, 0);
		assert_int_equal(r->list_off % 64, 0);
		blocks[nb].off = r->canon_off;
		blocks[nb++].len = r->block_size;
		blocks[nb].off = r->replica_off;
		blocks[nb++].len = r->block_size;
		blocks[nb].off = r->bitmap_off;
		blocks[nb++].len = r->bitmap_words * 8ULL;
		blocks[nb].off = r->list_off;
		blocks[nb++].len = r->n_chunks * 4ULL;
	}
	assert_int_equal(l.regions[2].n_chunks, 1u << 20);
	for (unsigned int i = 0; i < nb; i++) {
		assert_true(blocks[i].off >= sizeof(struct nf_state_hdr));
		assert_true(blocks[i].off + blocks[i].len <= l.total_size);
		for (unsigned int j = 0; j < i; j++)
			assert_true(blocks[i].off + blocks[i].len <= blocks[j].off ||
				    blocks[j].off + blocks[j].len <= blocks[i].off);
	}
}

static void
test_layout_defaults_chunk_to_1k(void **state)
{
	(void)state;
	struct nf_state_layout l;
	const struct nf_state_request r = {.name = "dpi", .size = 4 * MIB};

	assert_int_equal(nf_state_layout_compute(&l, &r, 1, NULL, 0), 0);
	assert_int_equal(l.regions[0].chunk_size, 1024);
	assert_int_equal(l.regions[0].n_chunks, 4096);
}

static void
test_layout_is_deterministic(void **state)
{
	(void)state;
	struct nf_state_layout a, b;

	assert_int_equal(nf_state_layout_compute(&a, two_regions, 2, NULL, 0), 0);
	assert_int_equal(nf_state_layout_compute(&b, two_regions, 2, NULL, 0), 0);
	assert_memory_equal(&a, &b, sizeof(a));
}

static void
test_layout_rejects_zero_size(void **state)
{
	(void)state;
	char err[256];
	const struct nf_state_request r = {.name = "flows", .size = 0};

	assert_int_equal(layout_err(&r, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'flows'"));
	assert_non_null(strstr(err, "size 0"));
}

static void
test_layout_accepts_1_byte_and_1_gib(void **state)
{
	(void)state;
	struct nf_state_layout l;
	const struct nf_state_request r[] = {
	    {.name = "tiny", .size = 1},
	    {.name = "huge", .size = 1 << 30, .chunk_size = 64},
	};

	assert_int_equal(nf_state_layout_compute(&l, r, 2, NULL, 0), 0);
	assert_int_equal(l.regions[0].n_chunks, 1);
	assert_int_equal(l.regions[1].n_chunks, 1u << 24);
	assert_true(l.total_size > 2 * (UINT64_C(1) << 30));
}

static void
test_layout_rejects_region_over_1_gib(void **state)
{
	(void)state;
	char err[256];
	const struct nf_state_request r = {.name = "huge", .size = (1 << 30) + 1};

	assert_int_equal(layout_err(&r, 1, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "'huge'"));
	assert_non_null(strstr(err, "too large"));
}

static void
test_layout_rejects_bad_chunk_sizes(void **state)
{
	(void)state;
	char err[256];
	const uint32_t bad[] = {32, 100, 1000, 3 << 10, 2u << 20};

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct nf_state_request r = {.name = "x", .size = 4096, .chunk_size = bad[i]};

		assert_int_equal(layout_err(&r, 1, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "chunk size"));
	}
	for (uint32_t c = 64; c <= (1u << 20); c <<= 1) {
		const struct nf_state_request r = {.name = "x", .size = 4096, .chunk_size = c};

		assert_int_equal(layout_err(&r, 1, err, sizeof(err)), 0);
	}
}

static void
test_layout_rejects_duplicate_names(void **state)
{
	(void)state;
	char err[256];
	const struct nf_state_request r[] = {
	    {.name = "flows", .size = 10},
	    {.name = "stats", .size = 10},
	    {.name = "flows", .size = 20},
	};

	assert_int_equal(layout_err(r, 3, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "'flows'"));
	assert_non_null(strstr(err, "twice"));
}

static void
test_layout_rejects_more_than_16_regions(void **state)
{
	(void)state;
	char err[256];
	char names[17][8];
	struct nf_state_request r[17];

	for (unsigned int i = 0; i < 17; i++) {
		snprintf(names[i], sizeof(names[i]), "r%u", i);
		r[i] = (struct nf_state_request){.name = names[i], .size = 100};
	}
	assert_int_equal(layout_err(r, 16, err, sizeof(err)), 0);
	assert_int_equal(layout_err(r, 17, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "17 regions"));
}

static void
test_layout_rejects_bad_names(void **state)
{
	(void)state;
	char err[256];
	const char *bad[] = {NULL, "", "has space", "slash/", "abcdefghijklmnopqrstuvwxyz012345"};
	const char *ok31 = "abcdefghijklmnopqrstuvwxyz01234";

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct nf_state_request r = {.name = bad[i], .size = 10};

		assert_int_equal(layout_err(&r, 1, err, sizeof(err)), -EINVAL);
		assert_true(err[0] != '\0');
	}
	const struct nf_state_request r = {.name = ok31, .size = 10};

	assert_int_equal(layout_err(&r, 1, err, sizeof(err)), 0);
}

static void
test_layout_rejects_no_regions(void **state)
{
	(void)state;
	char err[256];

	assert_int_equal(layout_err(NULL, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no regions"));
}

/* ---- block set-up ---------------------------------------------------------- */

static void
test_format_rejects_small_or_misaligned_block(void **state)
{
	(void)state;
	struct nf_state_layout l;
	char err[256];
	uint8_t *mem;

	assert_int_equal(nf_state_layout_compute(&l, two_regions, 2, NULL, 0), 0);
	mem = aligned_alloc(4096, l.total_size + 4096);
	assert_non_null(mem);
	assert_int_equal(nf_state_format(mem, l.total_size - 1, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs"));
	assert_int_equal(nf_state_format(mem + 8, l.total_size, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "aligned"));
	assert_int_equal(nf_state_format(mem + 64, l.total_size, &l, err, sizeof(err)), 0);
	free(mem);
}

static void
test_attach_rejects_unformatted_block(void **state)
{
	(void)state;
	struct nf_state_layout l;
	struct nf_state_set s;
	char err[256];
	uint8_t *mem;

	assert_int_equal(nf_state_layout_compute(&l, two_regions, 2, NULL, 0), 0);
	mem = aligned_alloc(4096, l.total_size);
	assert_non_null(mem);
	memset(mem, 0, l.total_size);
	assert_int_equal(nf_state_attach(&s, mem, l.total_size, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not formatted"));
	free(mem);
}

static void
test_attach_rejects_other_declarations(void **state)
{
	(void)state;
	struct fx f;
	struct nf_state_layout other;
	struct nf_state_set s;
	char err[256];
	const struct nf_state_request r[] = {
	    {.name = "flows", .size = 10000, .chunk_size = 512},
	    {.name = "stats", .size = 300, .chunk_size = 64},
	};

	fx_init(&f, two_regions, 2);
	assert_int_equal(nf_state_layout_compute(&other, r, 2, NULL, 0), 0);
	assert_true(other.total_size <= f.size);
	assert_int_equal(nf_state_attach(&s, f.mem, f.size, &other, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "other region declarations"));
	fx_fini(&f);
}

static void
test_format_zeroes_regions_and_starts_at_seq_0(void **state)
{
	(void)state;
	struct fx f;
	static const uint8_t zero[10000];

	fx_init(&f, two_regions, 2);
	assert_int_equal(nf_state_seq(&f.set), 0);
	assert_memory_equal(nf_state_region_ptr(&f.set, 0), zero, 10000);
	assert_memory_equal(nf_state_replica_ptr(&f.set, 0), zero, 10000);
	assert_memory_equal(nf_state_region_ptr(&f.set, 1), zero, 300);
	assert_clean(&f.set);
	fx_fini(&f);
}

static void
test_region_find_by_name(void **state)
{
	(void)state;
	struct fx f;

	fx_init(&f, two_regions, 2);
	assert_int_equal(nf_state_region_find(&f.set, "flows"), 0);
	assert_int_equal(nf_state_region_find(&f.set, "stats"), 1);
	assert_int_equal(nf_state_region_find(&f.set, "nope"), -ENOENT);
	assert_null(nf_state_region_ptr(&f.set, 2));
	fx_fini(&f);
}

/* ---- touch ------------------------------------------------------------------ */

/* One region of 4000 bytes in 1 KB chunks: chunks 0..3, the last 928 bytes. */
static const struct nf_state_request one_region = {.name = "t", .size = 4000};

static void
test_touch_offset_0_marks_first_chunk(void **state)
{
	(void)state;
	struct fx f;
	const uint32_t want[] = {0};

	fx_init(&f, &one_region, 1);
	assert_int_equal(nf_state_touch(&f.set, 0, 0, 1), 0);
	assert_listed(&f.set, 0, want, 1);
	fx_fini(&f);
}

static void
test_touch_last_byte_marks_last_chunk(void **state)
{
	(void)state;
	struct fx f;
	const uint32_t want[] = {3};

	fx_init(&f, &one_region, 1);
	assert_int_equal(nf_state_touch(&f.set, 0, 3999, 1), 0);
	assert_listed(&f.set, 0, want, 1);
	fx_fini(&f);
}

static void
test_touch_spanning_chunks_marks_each(void **state)
{
	(void)state;
	struct fx f;
	const uint32_t want[] = {0, 1, 2, 3};

	fx_init(&f, &one_region, 1);
	assert_int_equal(nf_state_touch(&f.set, 0, 1023, 2), 0);    /* 0 and 1 */
	assert_int_equal(nf_state_touch(&f.set, 0, 2048, 1024), 0); /* exactly 2 */
	assert_int_equal(nf_state_touch(&f.set, 0, 3000, 1000), 0); /* 2 and 3 */
	assert_listed(&f.set, 0, want, 4);
	fx_fini(&f);
}

static void
test_touch_whole_region_marks_every_chunk(void **state)
{
	(void)state;
	struct fx f;
	const uint32_t want[] = {0, 1, 2, 3};

	fx_init(&f, &one_region, 1);
	assert_int_equal(nf_state_touch(&f.set, 0, 0, 4000), 0);
	assert_listed(&f.set, 0, want, 4);
	fx_fini(&f);
}

static void
test_touch_len_0_marks_nothing(void **state)
{
	(void)state;
	struct fx f;

	fx_init(&f, &one_region, 1);
	assert_int_equal(nf_state_touch(&f.set, 0, 0, 0), 0);
	assert_int_equal(nf_state_touch(&f.set, 0, 2000, 0), 0);
	assert_int_equal(nf_state_touch(&f.set, 0, 4000, 0), 0);
	assert_clean(&f.set);
	fx_fini(&f);
}

static void
test_touch_out_of_range_fails_and_marks_nothing(void **state)
{
	(void)state;
	struct fx f;

	fx_init(&f, &one_region, 1);
	assert_int_equal(nf_state_touch(&f.set, 0, 4000, 1), -ERANGE);
	assert_int_equal(nf_state_touch(&f.set, 0, 3999, 2), -ERANGE);
	assert_int_equal(nf_state_touch(&f.set, 0, 4001, 0), -ERANGE);
	assert_int_equal(nf_state_touch(&f.set, 0, SIZE_MAX, 2), -ERANGE); /* wraps */
	assert_int_equal(nf_state_touch(&f.set, 0, 1, SIZE_MAX), -ERANGE);
	assert_int_equal(nf_state_touch(&f.set, 1, 0, 1), -EINVAL);
	assert_clean(&f.set);
	fx_fini(&f);
}

static void
test_touch_twice_lists_chunk_once(void **state)
{
	(void)state;
	struct fx f;
	const uint32_t want[] = {2, 0};

	fx_init(&f, &one_region, 1);
	assert_int_equal(nf_state_touch(&f.set, 0, 2100, 8), 0);
	assert_int_equal(nf_state_touch(&f.set, 0, 2200, 8), 0);
	assert_int_equal(nf_state_touch(&f.set, 0, 10, 1), 0);
	assert_int_equal(nf_state_touch(&f.set, 0, 2100, 8), 0);
	assert_listed(&f.set, 0, want, 2);
	assert_int_equal(nf_state_dirty_chunks(&f.set), 2);
	fx_fini(&f);
}

static void
test_touch_ptr_finds_the_region(void **state)
{
	(void)state;
	struct fx f;
	uint8_t *stats;
	int foreign;
	const uint32_t want[] = {4};

	fx_init(&f, two_regions, 2);
	stats = nf_state_region_ptr(&f.set, 1);
	assert_int_equal(nf_state_touch_ptr(&f.set, stats + 299, 1), 0);
	assert_listed(&f.set, 1, want, 1);
	assert_int_equal(*f.set.regions[0].dirty_n, 0);
	assert_int_equal(nf_state_touch_ptr(&f.set, stats + 299, 2), -ERANGE);
	assert_int_equal(nf_state_touch_ptr(&f.set, stats + 300, 1), -EFAULT);
	assert_int_equal(nf_state_touch_ptr(&f.set, &foreign, sizeof(foreign)), -EFAULT);
	fx_fini(&f);
}

/* ---- commit ----------------------------------------------------------------- */

static void
test_commit_copies_exactly_the_dirty_chunks(void **state)
{
	(void)state;
	struct fx f;
	const uint8_t *rep;
	uint8_t *can;

	fx_init(&f, &one_region, 1);
	can = nf_state_region_ptr(&f.set, 0);
	rep = nf_state_replica_ptr(&f.set, 0);
	nf_write(&f.set, 0, 1030, 4, 0x11);  /* chunk 1 */
	nf_write(&f.set, 0, 3990, 10, 0x33); /* chunk 3 */
	nf_state_commit(&f.set);

	assert_memory_equal(rep + 1024, can + 1024, 1024);
	assert_memory_equal(rep + 3072, can + 3072, 928);
	for (size_t i = 0; i < 4000; i++)
		if (i < 1024 || (i >= 2048 && i < 3072))
			assert_int_equal(rep[i], 0);
	assert_int_equal(nf_state_stats(&f.set)->chunks_committed, 2);
	assert_int_equal(nf_state_stats(&f.set)->bytes_committed, 2048);
	fx_fini(&f);
}

static void
test_commit_clears_dirty_state(void **state)
{
	(void)state;
	struct fx f;
	const uint32_t want[] = {1};

	fx_init(&f, two_regions, 2);
	nf_write(&f.set, 0, 0, 10000, 1);
	nf_write(&f.set, 1, 0, 300, 2);
	nf_state_commit(&f.set);
	assert_clean(&f.set);
	/* and the next batch starts from nothing */
	nf_write(&f.set, 0, 1500, 1, 3);
	assert_listed(&f.set, 0, want, 1);
	assert_int_equal(nf_state_dirty_chunks(&f.set), 1);
	fx_fini(&f);
}

/* Contract: bytes written without a touch are the NF's bug; they are not
 * committed (and not rolled back on failover either). */
static void
test_untouched_writes_are_not_committed(void **state)
{
	(void)state;
	struct fx f;
	uint8_t *can;
	const uint8_t *rep;

	fx_init(&f, &one_region, 1);
	can = nf_state_region_ptr(&f.set, 0);
	rep = nf_state_replica_ptr(&f.set, 0);
	can[2500] = 0x77; /* no touch */
	nf_write(&f.set, 0, 10, 1, 0x55);
	nf_state_commit(&f.set);
	assert_int_equal(rep[10], 0x55);
	assert_int_equal(rep[2500], 0);
	fx_fini(&f);
}

static void
test_commit_advances_sequence_even_when_clean(void **state)
{
	(void)state;
	struct fx f;
	struct nf_state_set sb;

	fx_init(&f, &one_region, 1);
	nf_write(&f.set, 0, 0, 1, 1);
	assert_int_equal(nf_state_commit(&f.set), 1);
	assert_int_equal(nf_state_commit(&f.set), 2); /* nothing dirty */
	nf_write(&f.set, 0, 0, 1, 2);
	assert_int_equal(nf_state_commit(&f.set), 3);
	assert_int_equal(nf_state_seq(&f.set), 3);
	assert_int_equal(hdr(&f)->commit_seq, 3);
	assert_int_equal(hdr(&f)->replica_seq, 3);
	fx_standby(&f, &sb);
	assert_int_equal(nf_state_seq(&sb), 3);
	assert_int_equal(nf_state_stats(&f.set)->commits, 3);
	fx_fini(&f);
}

/* 64 MB in 1 KB chunks is 65536 chunks (1024 bitmap words); a batch dirtying
 * 3 of them must cost commit 3 bitmap words, the same as in a 4 KB region. */
static void
test_commit_work_does_not_grow_with_region_size(void **state)
{
	(void)state;
	struct fx big, small;
	const struct nf_state_request rb = {.name = "dpi", .size = 64 * MIB};
	const struct nf_state_request rs = {.name = "dpi", .size = 4096};
	const struct nf_state_stats *sb, *ss;

	fx_init(&big, &rb, 1);
	assert_int_equal(big.set.regions[0].n_chunks, 65536);
	nf_write(&big.set, 0, 0, 8, 1);
	nf_write(&big.set, 0, 32 * MIB + 5, 8, 2);
	nf_write(&big.set, 0, 64 * MIB - 1, 1, 3);
	nf_state_commit(&big.set);

	fx_init(&small, &rs, 1);
	nf_write(&small.set, 0, 0, 8, 1);
	nf_write(&small.set, 0, 2048, 8, 2);
	nf_write(&small.set, 0, 4095, 1, 3);
	nf_state_commit(&small.set);

	sb = nf_state_stats(&big.set);
	ss = nf_state_stats(&small.set);
	assert_int_equal(sb->chunks_committed, 3);
	assert_int_equal(sb->bytes_committed, 3 * 1024);
	assert_int_equal(sb->commit_bitmap_words, 3);
	assert_int_equal(sb->commit_bitmap_words, ss->commit_bitmap_words);
	assert_int_equal(sb->commit_list_entries, ss->commit_list_entries);
	assert_true(sb->commit_list_entries <= 2 * 3);
	assert_memory_equal(nf_state_replica_ptr(&big.set, 0), nf_state_region_ptr(&big.set, 0),
			    64 * MIB);
	assert_clean(&big.set);
	fx_fini(&big);
	fx_fini(&small);
}

/* ---- failover --------------------------------------------------------------- */

static void
test_recover_after_crash_during_processing_restores_previous_batch(void **state)
{
	(void)state;
	struct fx f;
	struct snap o, n;
	struct nf_state_set sb;
	uint64_t seq = 99;

	scenario(&f, &o, &n);
	/* died mid-batch: no commit call at all */
	fx_standby(&f, &sb);
	assert_int_equal(nf_state_recover(&sb, &seq, NULL, 0), 0);
	assert_int_equal(seq, 1);
	assert_state(&sb, &o);
	assert_clean(&sb);
	snap_free(&o);
	snap_free(&n);
	fx_fini(&f);
}

/* Every step of commit is after its commit point (C1), so a crash right
 * after any of them -- including after each single chunk copy -- must
 * recover to the new batch, and never to a mix. */
static void
test_recover_after_crash_at_every_commit_step_yields_new_batch(void **state)
{
	(void)state;
	unsigned int steps = count_commit_steps();

	/* C1 + 6 chunk copies (4 + 2) + C3 + 2 regions x 2 clear steps */
	assert_int_equal(steps, 1 + 6 + 1 + 4);
	for (unsigned int at = 1; at <= steps + 1; at++) {
		struct fx f;
		struct snap o, n;
		struct nf_state_set sb;
		uint64_t seq = 0;

		scenario(&f, &o, &n);
		assert_int_equal(commit_crashing(&f.set, at), at <= steps);
		fx_standby(&f, &sb);
		assert_int_equal(nf_state_recover(&sb, &seq, NULL, 0), 0);
		assert_int_equal(seq, 2);
		assert_state(&sb, &n);
		assert_clean(&sb);
		snap_free(&o);
		snap_free(&n);
		fx_fini(&f);
	}
}

/* The standby may die inside recovery too; the next one just runs it again. */
static void
test_recover_after_crash_inside_recovery_converges(void **state)
{
	(void)state;
	unsigned int csteps = count_commit_steps();

	/* commit crash point 0 = died during processing (old batch) */
	for (unsigned int cat = 0; cat <= csteps; cat++) {
		for (unsigned int rat = 1;; rat++) {
			struct fx f;
			struct snap o, n;
			struct nf_state_set sb1, sb2;
			bool died;
			uint64_t seq = 0;

			scenario(&f, &o, &n);
			if (cat > 0)
				assert_true(commit_crashing(&f.set, cat));
			fx_standby(&f, &sb1);
			died = recover_crashing(&sb1, rat);
			fx_standby(&f, &sb2);
			assert_int_equal(nf_state_recover(&sb2, &seq, NULL, 0), 0);
			assert_int_equal(seq, cat == 0 ? 1 : 2);
			assert_state(&sb2, cat == 0 ? &o : &n);
			assert_clean(&sb2);
			snap_free(&o);
			snap_free(&n);
			fx_fini(&f);
			if (!died)
				break;
		}
	}
}

static void
test_recover_is_idempotent(void **state)
{
	(void)state;
	const unsigned int points[] = {0, 1, 5};

	for (unsigned int p = 0; p < 3; p++) {
		struct fx f;
		struct snap o, n;
		struct nf_state_set sb;
		uint8_t *copy;
		uint64_t s1 = 0, s2 = 0;

		scenario(&f, &o, &n);
		if (points[p] > 0)
			assert_true(commit_crashing(&f.set, points[p]));
		fx_standby(&f, &sb);
		assert_int_equal(nf_state_recover(&sb, &s1, NULL, 0), 0);
		copy = malloc(f.size);
		assert_non_null(copy);
		memcpy(copy, f.mem, f.size);
		assert_int_equal(nf_state_recover(&sb, &s2, NULL, 0), 0);
		assert_int_equal(s1, s2);
		assert_memory_equal(copy, f.mem, f.size);
		free(copy);
		snap_free(&o);
		snap_free(&n);
		fx_fini(&f);
	}
}

static void
test_recover_on_clean_block_changes_nothing(void **state)
{
	(void)state;
	struct fx f;
	struct snap s;
	struct nf_state_set sb;
	uint64_t seq = 9;

	fx_init(&f, two_regions, 2);
	nf_write_pattern(&f.set, 0, 0, 10000, 1);
	nf_state_commit(&f.set);
	snap_take(&s, &f.set);
	fx_standby(&f, &sb);
	assert_int_equal(nf_state_recover(&sb, &seq, NULL, 0), 0);
	assert_int_equal(seq, 1);
	assert_state(&sb, &s);
	assert_int_equal(nf_state_stats(&sb)->chunks_rolled_back, 0);
	assert_int_equal(nf_state_stats(&sb)->chunks_rolled_forward, 0);
	snap_free(&s);
	fx_fini(&f);
}

/* Crash mid-copy after the first region's chunks are in its replica but none
 * of the second's: the commit point covers both regions. */
static void
test_multiple_regions_commit_atomically(void **state)
{
	(void)state;
	struct fx f;
	struct snap o, n;
	struct nf_state_set sb;
	uint64_t seq = 0;

	scenario(&f, &o, &n);
	/* hook calls: C1, then region 0's 4 chunk copies */
	assert_true(commit_crashing(&f.set, 1 + 4));
	assert_memory_equal(nf_state_replica_ptr(&f.set, 0), n.r[0], 10000);
	assert_memory_equal(nf_state_replica_ptr(&f.set, 1), o.r[1], 300);
	fx_standby(&f, &sb);
	assert_int_equal(nf_state_recover(&sb, &seq, NULL, 0), 0);
	assert_int_equal(seq, 2);
	assert_state(&sb, &n);
	snap_free(&o);
	snap_free(&n);
	fx_fini(&f);
}

static void
test_recover_rejects_impossible_sequence_numbers(void **state)
{
	(void)state;
	struct fx f;
	struct snap o, n;
	struct nf_state_set sb;
	char err[256] = "";

	scenario(&f, &o, &n);
	hdr(&f)->commit_seq = 5; /* replica_seq is 1 */
	fx_standby(&f, &sb);
	assert_int_equal(nf_state_recover(&sb, NULL, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "corrupt"));
	hdr(&f)->commit_seq = 0;
	assert_int_equal(nf_state_recover(&sb, NULL, err, sizeof(err)), -EIO);
	snap_free(&o);
	snap_free(&n);
	fx_fini(&f);
}

/* A dirty list with an impossible count or index cannot be trusted; the whole
 * region is restored instead, which the invariant makes correct. */
static void
test_recover_with_corrupt_dirty_list_restores_whole_region(void **state)
{
	(void)state;

	for (int forward = 0; forward <= 1; forward++) {
		for (int bad_count = 0; bad_count <= 1; bad_count++) {
			struct fx f;
			struct snap o, n;
			struct nf_state_set sb;
			uint64_t seq = 0;

			scenario(&f, &o, &n);
			if (forward) /* died right after the commit point */
				assert_true(commit_crashing(&f.set, 1));
			if (bad_count)
				hdr(&f)->dirty_n[0] = f.set.regions[0].n_chunks + 1;
			else
				f.set.regions[0].list[1] = 1000000;
			fx_standby(&f, &sb);
			assert_int_equal(nf_state_recover(&sb, &seq, NULL, 0), 0);
			assert_int_equal(seq, forward ? 2 : 1);
			assert_state(&sb, forward ? &n : &o);
			assert_int_equal(nf_state_stats(&sb)->full_region_restores,
					 forward ? 2 : 1);
			snap_free(&o);
			snap_free(&n);
			fx_fini(&f);
		}
	}
}

/* A stray write of the dying NF can leave a dirty bit without a list entry;
 * recovery clears all bits, so the standby's touches of that chunk count. */
static void
test_recover_clears_stale_dirty_bits(void **state)
{
	(void)state;
	struct fx f;
	struct nf_state_set sb;
	const uint32_t want[] = {7};

	fx_init(&f, two_regions, 2);
	f.set.regions[0].bitmap[0] |= UINT64_C(1) << 7;
	fx_standby(&f, &sb);
	assert_int_equal(nf_state_recover(&sb, NULL, NULL, 0), 0);
	nf_write(&sb, 0, 7 * 1024, 1, 1);
	assert_listed(&sb, 0, want, 1);
	fx_fini(&f);
}

/* After promotion the standby is the active NF: it commits on from the
 * recovered sequence, and survives a second failure the same way. */
static void
test_promoted_standby_commits_and_survives_second_failure(void **state)
{
	(void)state;
	struct fx f;
	struct snap o, n, s3;
	struct nf_state_set sb, sb2;
	uint64_t seq = 0;

	scenario(&f, &o, &n);
	assert_true(commit_crashing(&f.set, 3)); /* new batch committed: seq 2 */
	fx_standby(&f, &sb);
	assert_int_equal(nf_state_recover(&sb, &seq, NULL, 0), 0);
	assert_int_equal(seq, 2);

	nf_write_pattern(&sb, 1, 0, 300, 3);
	assert_int_equal(nf_state_commit(&sb), 3);
	snap_take(&s3, &sb);
	nf_write_pattern(&sb, 0, 4000, 3000, 4); /* dies before committing */

	fx_standby(&f, &sb2);
	assert_int_equal(nf_state_recover(&sb2, &seq, NULL, 0), 0);
	assert_int_equal(seq, 3);
	assert_state(&sb2, &s3);
	snap_free(&o);
	snap_free(&n);
	snap_free(&s3);
	fx_fini(&f);
}

/* Another process writes committed state into a block whose NF is parked
 * (remote resiliency's standby node): canonical and replica alike, and the
 * sequence numbers do not move -- so the NF, which attached at sequence 0
 * and runs its first batch after the takeover, still knows which of its
 * batches committed.  Its batch dying uncommitted then rolls back to the
 * written state (not re-emitted as committed), and one dying mid-commit
 * recovers. */
static void
test_write_both_leaves_the_owners_sequence_alone(void **state)
{
	(void)state;
	struct fx f;
	struct nf_state_set mgr_view, sb, sb2;
	struct snap applied;
	uint8_t bytes[3000];
	uint64_t seq = 99;

	fx_init(&f, two_regions, 2); /* f.set: the parked NF, sequence 0 */
	fx_standby(&f, &mgr_view);
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(nf_state_write_both(&mgr_view, 0, 100, bytes, sizeof(bytes)), 0);
	assert_int_equal(nf_state_write_both(&mgr_view, 1, 0, bytes, 64), 0);
	assert_int_equal(nf_state_write_both(&mgr_view, 1, nf_state_region_size(&mgr_view, 1), bytes,
						 1),
			 -ERANGE);
	assert_int_equal(hdr(&f)->commit_seq, 0);
	assert_int_equal(hdr(&f)->replica_seq, 0);
	snap_take(&applied, &f.set);
	assert_state(&f.set, &applied);
	/* the NF's first batch after the takeover dies before its commit */
	nf_write_pattern(&f.set, 0, 0, 500, 1);
	fx_standby(&f, &sb);
	assert_int_equal(nf_state_recover(&sb, &seq, NULL, 0), 0);
	assert_int_equal(seq, 0); /* not committed: its outputs are not emitted */
	assert_state(&sb, &applied);
	/* ... and a batch that dies inside its commit recovers too */
	nf_write_pattern(&sb, 1, 0, 300, 2);
	assert_true(commit_crashing(&sb, 2));
	fx_standby(&f, &sb2);
	assert_int_equal(nf_state_recover(&sb2, &seq, NULL, 0), 0);
	snap_free(&applied);
	fx_fini(&f);
}

/* Absolute pointers inside a region stay valid: the standby works on the
 * same canonical memory, restored in place. */
struct node {
	struct node *next;
	uint32_t val;
};

static uint32_t
list_sum(const struct node *head, unsigned int *len)
{
	uint32_t sum = 0;

	*len = 0;
	for (const struct node *p = head; p != NULL; p = p->next) {
		sum += p->val;
		(*len)++;
	}
	return sum;
}

static void
push(struct nf_state_set *s, struct node **head, struct node *nd, uint32_t val)
{
	assert_int_equal(nf_state_touch_ptr(s, nd, sizeof(*nd)), 0);
	assert_int_equal(nf_state_touch_ptr(s, head, sizeof(*head)), 0);
	nd->val = val;
	nd->next = *head;
	*head = nd;
}

static void
test_pointer_rich_state_survives_failover(void **state)
{
	(void)state;
	const struct nf_state_request r = {.name = "nodes", .size = 64 * 1024, .chunk_size = 256};

	for (unsigned int crash_at = 0; crash_at <= 1; crash_at++) {
		struct fx f;
		struct nf_state_set sb;
		struct node **head, *pool;
		unsigned int len;

		fx_init(&f, &r, 1);
		head = nf_state_region_ptr(&f.set, 0);
		pool = (struct node *)(head + 8);
		for (uint32_t i = 0; i < 100; i++) /* scattered over many chunks */
			push(&f.set, head, &pool[(i * 37) % 2000], i + 1);
		nf_state_commit(&f.set);
		for (uint32_t i = 0; i < 50; i++)
			push(&f.set, head, &pool[2000 + i * 41], 1000);
		if (crash_at > 0) /* after the commit point */
			assert_true(commit_crashing(&f.set, crash_at + 3));

		fx_standby(&f, &sb);
		assert_int_equal(nf_state_recover(&sb, NULL, NULL, 0), 0);
		assert_ptr_equal(nf_state_region_ptr(&sb, 0), head);
		if (crash_at == 0) {
			assert_int_equal(list_sum(*head, &len), 5050);
			assert_int_equal(len, 100);
		} else {
			assert_int_equal(list_sum(*head, &len), 5050 + 50 * 1000);
			assert_int_equal(len, 150);
		}
		fx_fini(&f);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout_places_blocks_disjoint_and_aligned),
	    cmocka_unit_test(test_layout_defaults_chunk_to_1k),
	    cmocka_unit_test(test_layout_is_deterministic),
	    cmocka_unit_test(test_layout_rejects_zero_size),
	    cmocka_unit_test(test_layout_accepts_1_byte_and_1_gib),
	    cmocka_unit_test(test_layout_rejects_region_over_1_gib),
	    cmocka_unit_test(test_layout_rejects_bad_chunk_sizes),
	    cmocka_unit_test(test_layout_rejects_duplicate_names),
	    cmocka_unit_test(test_layout_rejects_more_than_16_regions),
	    cmocka_unit_test(test_layout_rejects_bad_names),
	    cmocka_unit_test(test_layout_rejects_no_regions),
	    cmocka_unit_test(test_format_rejects_small_or_misaligned_block),
	    cmocka_unit_test(test_attach_rejects_unformatted_block),
	    cmocka_unit_test(test_attach_rejects_other_declarations),
	    cmocka_unit_test(test_format_zeroes_regions_and_starts_at_seq_0),
	    cmocka_unit_test(test_region_find_by_name),
	    cmocka_unit_test(test_touch_offset_0_marks_first_chunk),
	    cmocka_unit_test(test_touch_last_byte_marks_last_chunk),
	    cmocka_unit_test(test_touch_spanning_chunks_marks_each),
	    cmocka_unit_test(test_touch_whole_region_marks_every_chunk),
	    cmocka_unit_test(test_touch_len_0_marks_nothing),
	    cmocka_unit_test(test_touch_out_of_range_fails_and_marks_nothing),
	    cmocka_unit_test(test_touch_twice_lists_chunk_once),
	    cmocka_unit_test(test_touch_ptr_finds_the_region),
	    cmocka_unit_test(test_commit_copies_exactly_the_dirty_chunks),
	    cmocka_unit_test(test_commit_clears_dirty_state),
	    cmocka_unit_test(test_untouched_writes_are_not_committed),
	    cmocka_unit_test(test_commit_advances_sequence_even_when_clean),
	    cmocka_unit_test(test_commit_work_does_not_grow_with_region_size),
	    cmocka_unit_test(test_recover_after_crash_during_processing_restores_previous_batch),
	    cmocka_unit_test(test_recover_after_crash_at_every_commit_step_yields_new_batch),
	    cmocka_unit_test(test_recover_after_crash_inside_recovery_converges),
	    cmocka_unit_test(test_recover_is_idempotent),
	    cmocka_unit_test(test_recover_on_clean_block_changes_nothing),
	    cmocka_unit_test(test_multiple_regions_commit_atomically),
	    cmocka_unit_test(test_recover_rejects_impossible_sequence_numbers),
	    cmocka_unit_test(test_recover_with_corrupt_dirty_list_restores_whole_region),
	    cmocka_unit_test(test_recover_clears_stale_dirty_bits),
	    cmocka_unit_test(test_promoted_standby_commits_and_survives_second_failure),
	    cmocka_unit_test(test_pointer_rich_state_survives_failover),
	    cmocka_unit_test(test_write_both_leaves_the_owners_sequence_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
