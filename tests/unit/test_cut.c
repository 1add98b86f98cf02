/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Consistent-cut tracking (onvm_cut.h): what a freeze ships, and that a
 * remote copy built only from shipped cuts equals the NF's state at each
 * cut -- through lost cuts, full logs, wrap-around and damaged records.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "onvm_cut.h"
#include "test_state.h"

#define CHUNK 256
#define R0_SIZE (64 * CHUNK)
#define R1_SIZE (10 * CHUNK + 100) /* not a whole number of chunks */

struct fixture {
	struct test_state ts;
	void *area;
	size_t area_size;
	struct onvm_cut_set nf;	 /* the NF's handle */
	struct onvm_cut_set mgr; /* the manager's */
	uint8_t remote[2][R0_SIZE]; /* what the standby node would hold */
};

static struct fixture *
fixture_new(uint64_t log_bytes)
{
	static const struct nf_state_request reqs[] = {
		{.name = "flows", .size = R0_SIZE, .chunk_size = CHUNK},
		{.name = "counters", .size = R1_SIZE, .chunk_size = CHUNK},
	};
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(test_state_init(&f->ts, reqs, 2), 0);
	f->area_size = onvm_cut_area_size(&f->ts.layout, log_bytes);
	f->area = aligned_alloc(64, (f->area_size + 63) & ~(size_t)63);
	assert_non_null(f->area);
	assert_int_equal(onvm_cut_format(f->area, f->area_size, &f->ts.layout, log_bytes), 0);
	assert_int_equal(onvm_cut_attach(&f->nf, f->area, f->area_size, &f->ts.layout), 0);
	assert_int_equal(onvm_cut_attach(&f->mgr, f->area, f->area_size, &f->ts.layout), 0);
	return f;
}

static void
fixture_free(struct fixture *f)
{
	free(f->area);
	free(f->ts.block);
	free(f);
}

/* The NF writes `val` at `off` of region r (touch first), as a handler would. */
static void
nf_write(struct fixture *f, unsigned int r, uint64_t off, uint8_t val)
{
	uint8_t *p = nf_state_region_ptr(&f->ts.set, r);

	assert_int_equal(nf_state_touch(&f->ts.set, r, off, 1), 0);
	p[off] = val;
}

/* End of batch, as libnf does it: fold the batch into the periods, commit. */
static void
nf_commit(struct fixture *f)
{
	onvm_cut_note_batch(&f->nf, &f->ts.set);
	nf_state_commit(&f->ts.set);
}

/* The manager reads cut `id` and applies it to the remote copy.  Returns the
 * read result that ended it (END, FAILED, LATER or NONE) and the number of
 * data records in *n. */
static enum onvm_cut_read_result
ship(struct fixture *f, uint64_t id, uint32_t *n)
{
	struct onvm_cut_rec rec;
	const uint8_t *data;
	enum onvm_cut_read_result r;
	uint8_t staged[2][R0_SIZE];

	/* a cut is applied whole or not at all */
	memcpy(staged, f->remote, sizeof(staged));
	*n = 0;
	while ((r = onvm_cut_read(&f->mgr, id, &rec, &data)) == ONVM_CUT_READ_DATA) {
		assert_true(rec.offset + rec.len <= sizeof(staged[0]));
		memcpy(staged[rec.region] + rec.offset, data, rec.len);
		onvm_cut_consume(&f->mgr);
		(*n)++;
	}
	if (r == ONVM_CUT_READ_END || r == ONVM_CUT_READ_FAILED)
		onvm_cut_consume(&f->mgr);
	if (r == ONVM_CUT_READ_END)
		memcpy(f->remote, staged, sizeof(staged));
	return r;
}

/* The manager reads cut `id` and never applies it (its stage dropped). */
static void
drop_cut(struct fixture *f, uint64_t id)
{
	while (onvm_cut_read(&f->mgr, id, &(struct onvm_cut_rec){0}, &(const uint8_t *){0}) ==
	       ONVM_CUT_READ_DATA)
		onvm_cut_consume(&f->mgr);
	onvm_cut_consume(&f->mgr);
}

static uint32_t
all_chunks(const struct fixture *f)
{
	return f->nf.hdr->n_chunks[0] + f->nf.hdr->n_chunks[1];
}

static void
assert_remote_equals(struct fixture *f, const uint8_t snap0[R0_SIZE], const uint8_t snap1[R1_SIZE]);

/* The remote copy is the NF's state right now. */
static void
assert_remote_is_current(struct fixture *f)
{
	assert_remote_equals(f, nf_state_region_ptr(&f->ts.set, 0),
			     nf_state_region_ptr(&f->ts.set, 1));
}

static void
assert_remote_equals(struct fixture *f, const uint8_t snap0[R0_SIZE], const uint8_t snap1[R1_SIZE])
{
	assert_memory_equal(f->remote[0], snap0, R0_SIZE);
	assert_memory_equal(f->remote[1], snap1, R1_SIZE);
}

static void
test_freeze_ships_exactly_the_chunks_changed_since_the_base(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1 << 20);
	uint32_t n;

	nf_write(f, 0, 5, 1);		/* chunk 0 */
	nf_write(f, 0, 3 * CHUNK, 2);	/* chunk 3 */
	nf_commit(f);
	nf_write(f, 1, 10 * CHUNK + 50, 3); /* region 1, last (partial) chunk */
	/* the marker arrives mid-batch: the batch's touches so far count */
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 1, 0, 100), 3);
	/* after the marker, same batch: belongs to the next period */
	nf_write(f, 0, 3 * CHUNK + 1, 4);
	nf_commit(f);
	assert_int_equal(ship(f, 1, &n), ONVM_CUT_READ_END);
	assert_int_equal(n, 3);
	assert_int_equal(f->remote[0][5], 1);
	assert_int_equal(f->remote[0][3 * CHUNK], 2);
	assert_int_equal(f->remote[0][3 * CHUNK + 1], 0); /* written after the marker */
	assert_int_equal(f->remote[1][10 * CHUNK + 50], 3);
	/* The next cut over cut 1 ships chunk 3, and region 1's chunk once
	 * more: the batch that straddled the marker is folded into the new
	 * period whole at its commit (which of its chunks were touched again
	 * after the marker is not known; shipping more is always right, less
	 * never). */
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 2, 1, 200), 2);
	assert_int_equal(ship(f, 2, &n), ONVM_CUT_READ_END);
	assert_int_equal(f->remote[0][3 * CHUNK + 1], 4);
	/* nothing changed: an empty cut is still a cut */
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 3, 2, 300), 0);
	assert_int_equal(ship(f, 3, &n), ONVM_CUT_READ_END);
	assert_int_equal(n, 0);
	assert_int_equal(onvm_cut_log_used(&f->mgr), 0);
	fixture_free(f);
}

static void
test_frozen_bytes_are_the_state_at_the_marker_not_later(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1 << 20);
	uint32_t n;

	nf_write(f, 0, 0, 7);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 1, 0, 1), 1);
	nf_write(f, 0, 0, 8); /* the NF goes on before the manager reads */
	nf_commit(f);
	assert_int_equal(ship(f, 1, &n), ONVM_CUT_READ_END);
	assert_int_equal(f->remote[0][0], 7);
	fixture_free(f);
}

static void
test_lost_cut_is_covered_by_a_delta_over_the_older_base(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1 << 20);
	uint32_t n;

	nf_write(f, 0, 10, 1);
	nf_commit(f);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 1, 0, 10), 1);
	assert_int_equal(ship(f, 1, &n), ONVM_CUT_READ_END);
	nf_write(f, 0, 2 * CHUNK, 2);
	nf_commit(f);
	/* cut 2 is frozen but its stage is aborted: never applied remotely */
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 2, 1, 20), 1);
	nf_write(f, 0, 5 * CHUNK, 3);
	nf_commit(f);
	/* cut 3 names base 1 (the last applied): marks are scanned */
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 3, 1, 30), 2);
	assert_int_equal(f->nf.hdr->stats.freeze_scans, 1);
	/* reading cut 3 skips cut 2's records */
	assert_int_equal(ship(f, 3, &n), ONVM_CUT_READ_END);
	assert_int_equal(n, 2);
	assert_true(f->mgr.hdr->skipped_records >= 2);
	assert_remote_is_current(f);
	fixture_free(f);
}

/* An NF that never saw the base (a fresh cut area: the NF was restarted,
 * or state was seen late) cannot know what changed since it: it freezes
 * everything, so a standby whose copy holds anything at all (older bytes,
 * not zeros) ends equal to the state.  A later cut is a delta again. */
static void
test_base_never_seen_here_freezes_everything(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1 << 20);
	uint32_t n, all = all_chunks(f);

	memset(f->remote, 0x5a, sizeof(f->remote)); /* whatever the standby held */
	nf_write(f, 0, 1, 1);
	nf_commit(f);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 2, 1, 5), (int)all);
	assert_int_equal(f->nf.hdr->stats.freeze_full, 1);
	assert_int_equal(ship(f, 2, &n), ONVM_CUT_READ_END);
	assert_int_equal(n, all);
	assert_remote_is_current(f);
	/* then deltas over it */
	nf_write(f, 1, 3 * CHUNK, 7);
	nf_commit(f);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 3, 2, 6), 1);
	assert_int_equal(ship(f, 3, &n), ONVM_CUT_READ_END);
	assert_remote_is_current(f);
	/* a cut id that is not newer than the last one fails */
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 3, 3, 7), -EINVAL);
	assert_int_equal(f->nf.hdr->stats.failed_base, 1);
	fixture_free(f);

	/* The full cut is dropped on its way (too big for a stage, its stage
	 * aborted): the next cut names the chain's old base again, and must
	 * still carry every chunk, not just those dirtied. */
	f = fixture_new(1 << 20);
	memset(f->remote, 0x5a, sizeof(f->remote));
	nf_write(f, 0, 1, 1);
	nf_commit(f);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 5, 4, 5), (int)all);
	drop_cut(f, 5); /* read, never applied */
	nf_write(f, 1, 2 * CHUNK, 9);
	nf_commit(f);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 6, 4, 6), (int)all);
	assert_int_equal(ship(f, 6, &n), ONVM_CUT_READ_END);
	assert_remote_is_current(f);
	fixture_free(f);
}

/* A full cut asked for (a standby resynchronising) by an NF that saw the
 * chain's base: every chunk goes, but the marks keep what changed since the
 * base -- should the full cut be dropped, the next delta over the old base
 * is an ordinary delta, not full again (which could never fit a stage). */
static void
test_full_cut_asked_for_keeps_the_deltas_small(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1 << 20);
	uint32_t n, all = all_chunks(f);

	nf_write(f, 0, 10, 1);
	nf_commit(f);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 1, 0, 10), 1);
	assert_int_equal(ship(f, 1, &n), ONVM_CUT_READ_END);
	memset(f->remote, 0x5a, sizeof(f->remote)); /* the standby lost it all */
	nf_write(f, 0, 3 * CHUNK, 2);
	nf_commit(f);
	/* full, over base 1 (seen here): every chunk */
	assert_int_equal(onvm_cut_freeze_ex(&f->nf, &f->ts.set, 2, 1, 20, true), (int)all);
	assert_int_equal(f->nf.hdr->stats.freeze_full, 1);
	/* dropped on its way: read, never applied */
	drop_cut(f, 2);
	nf_write(f, 1, 2 * CHUNK, 9);
	nf_commit(f);
	/* the next cut, over the old base 1: what changed since 1, no more */
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 3, 1, 30), 2);
	/* asked for again and shipped this time: the copy is the state */
	assert_int_equal(onvm_cut_freeze_ex(&f->nf, &f->ts.set, 4, 3, 40, true), (int)all);
	assert_int_equal(ship(f, 4, &n), ONVM_CUT_READ_END);
	assert_int_equal(n, all);
	assert_remote_is_current(f);
	fixture_free(f);
}

static void
test_full_log_drops_the_whole_cut_never_part_of_it(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(4096); /* 14 chunk records at most */
	uint32_t n;

	for (uint32_t c = 0; c < 20; c++)
		nf_write(f, 0, (uint64_t)c * CHUNK, (uint8_t)(c + 1));
	nf_commit(f);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 1, 0, 1), -ENOSPC);
	assert_int_equal(f->nf.hdr->stats.failed_full, 1);
	assert_int_equal(ship(f, 1, &n), ONVM_CUT_READ_FAILED);
	assert_int_equal(n, 0); /* no data record of the failed cut is visible */
	for (uint32_t c = 0; c < 20; c++)
		assert_int_equal(f->remote[0][c * CHUNK], 0);
	/* the next cut, over the last applied base (0), fails too (20 chunks);
	 * with fewer changes it fits */
	fixture_free(f);
	f = fixture_new(4096);
	for (uint32_t c = 0; c < 20; c++)
		nf_write(f, 0, (uint64_t)c * CHUNK, 1);
	nf_commit(f);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 1, 0, 1), -ENOSPC);
	assert_int_equal(ship(f, 1, &n), ONVM_CUT_READ_FAILED);
	/* shrink what changed since base 0: rewrite chunks to zero is still a
	 * change; instead check that a later cut over base 1 (never shipped)
	 * is refused as a base this NF did see but the standby did not: the
	 * manager names base 0, so the scan includes all 20 chunks again */
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 2, 0, 2), -ENOSPC);
	fixture_free(f);
}

static void
test_reader_waits_for_a_cut_not_frozen_yet_and_reports_a_newer_one(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1 << 16);
	struct onvm_cut_rec rec;
	const uint8_t *data;
	uint32_t n;

	assert_int_equal(onvm_cut_read(&f->mgr, 1, &rec, &data), ONVM_CUT_READ_NONE);
	nf_write(f, 0, 1, 1);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 2, 0, 1), 1);
	/* the manager asks for cut 1, which never reached this NF */
	assert_int_equal(onvm_cut_read(&f->mgr, 1, &rec, &data), ONVM_CUT_READ_LATER);
	assert_int_equal(ship(f, 2, &n), ONVM_CUT_READ_END);
	fixture_free(f);
}

static void
test_damaged_record_fails_the_cut_and_empties_the_log(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1 << 16);
	struct onvm_cut_rec bad;
	uint32_t n;

	nf_write(f, 0, 1, 1);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 1, 0, 1), 1);
	/* a stray write of a dying NF: a data record pointing outside region 0 */
	memcpy(&bad, f->nf.log, sizeof(bad));
	bad.offset = (uint64_t)R0_SIZE;
	memcpy(f->nf.log, &bad, sizeof(bad));
	assert_int_equal(ship(f, 1, &n), ONVM_CUT_READ_FAILED);
	assert_int_equal(onvm_cut_log_used(&f->mgr), 0);
	/* an unknown kind */
	nf_write(f, 0, 2, 2);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 2, 1, 2), 1);
	bad.kind = 9;
	memcpy(f->nf.log + (f->nf.hdr->cons % f->nf.hdr->log_size), &bad, sizeof(bad));
	assert_int_equal(ship(f, 2, &n), ONVM_CUT_READ_FAILED);
	fixture_free(f);
}

static void
test_consume_after_a_dropped_log_keeps_a_newer_cut_whole(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1 << 16);
	struct onvm_cut_rec bad, rec;
	const uint8_t *data;
	uint32_t n;

	nf_write(f, 0, 1, 1);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 1, 0, 1), 1);
	memcpy(&bad, f->nf.log, sizeof(bad));
	bad.offset = (uint64_t)R0_SIZE;
	memcpy(f->nf.log, &bad, sizeof(bad));
	/* The manager reads the damaged log (dropped whole) ... */
	assert_int_equal(onvm_cut_read(&f->mgr, 1, &rec, &data), ONVM_CUT_READ_FAILED);
	/* ... the NF freezes the next cut before the manager consumes ... */
	nf_write(f, 0, 300, 3);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 2, 0, 2), 2);
	/* ... and consuming the FAILED must not eat into cut 2. */
	onvm_cut_consume(&f->mgr);
	assert_int_equal(ship(f, 2, &n), ONVM_CUT_READ_END);
	assert_int_equal(n, 2);
	assert_remote_is_current(f);
	fixture_free(f);
}

static void
test_deaths_between_list_and_mark_never_overflow_the_period_list(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1 << 16);
	struct onvm_cut_hdr *h = f->nf.hdr;
	uint64_t marks1[10];
	uint32_t n;

	memcpy(marks1, f->nf.marks[1], sizeof(marks1));
	/* 64 NFs in turn died after listing chunk 5 and before marking it:
	 * the list is full of it, the chunk still unmarked. */
	for (uint32_t i = 0; i < h->n_chunks[0]; i++) {
		f->nf.plist[0][i] = 5;
		h->plist_n[0] = i + 1;
	}
	nf_write(f, 0, 5 * CHUNK, 7);
	nf_write(f, 0, 9 * CHUNK, 9);
	nf_commit(f);
	assert_true(h->plist_n[0] <= h->n_chunks[0]);
	assert_memory_equal(f->nf.marks[1], marks1, sizeof(marks1)); /* region 1 untouched */
	/* the next cut still ships both chunks */
	assert_true(onvm_cut_freeze(&f->nf, &f->ts.set, 1, 0, 1) >= 2);
	assert_int_equal(ship(f, 1, &n), ONVM_CUT_READ_END);
	assert_remote_is_current(f);
	fixture_free(f);
}

/* Crash injection: the NF dies between any two stores the manager can see
 * (onvm_cut_test_step), its standby attaches the same area and re-runs
 * the batch that did not commit (the marker's freeze included, as libnf's
 * promotion does).  Whatever the step, the manager never waits forever for
 * a cut (every cut reads END or FAILED), and the copy built from the cuts
 * that did arrive equals the NF's state at the last one. */
static jmp_buf death;
static unsigned int steps_seen, die_at;

static void
die_here(const char *what)
{
	(void)what;
	if (++steps_seen == die_at)
		longjmp(death, 1);
}

/* One run; returns the number of steps it went through. */
static unsigned int
run_with_a_death(unsigned int at, unsigned int *deaths)
{
	struct fixture *f = fixture_new(1 << 16);
	uint8_t snap0[R0_SIZE], snap1[R1_SIZE];
	volatile uint64_t applied = 0;
	volatile unsigned int op = 0;
	uint32_t n;

	steps_seen = 0;
	die_at = at;
	onvm_cut_test_step = die_here;
	if (setjmp(death) != 0) {
		/* The standby takes over: a fresh handle on the same area. */
		(*deaths)++;
		onvm_cut_test_step = NULL;
		assert_int_equal(onvm_cut_attach(&f->nf, f->area, f->area_size, &f->ts.layout), 0);
	}
	for (; op < 12; op++) {
		uint64_t cut = op / 2 + 1;

		if (op % 2 == 0) { /* a batch: three chunks, one written twice */
			nf_write(f, 0, (cut * 7 % 64) * CHUNK, (uint8_t)cut);
			nf_write(f, 0, (cut * 13 % 64) * CHUNK + 5, (uint8_t)(cut + 1));
			nf_write(f, 1, (cut % 10) * CHUNK, (uint8_t)(cut + 2));
			nf_write(f, 0, (cut * 7 % 64) * CHUNK + 1, (uint8_t)cut);
			nf_commit(f);
		} else { /* the marker of `cut`, shipped at once */
			enum onvm_cut_read_result r;

			(void)onvm_cut_freeze(&f->nf, &f->ts.set, cut, applied, cut);
			r = ship(f, cut, &n);
			assert_true(r == ONVM_CUT_READ_END || r == ONVM_CUT_READ_FAILED);
			if (r == ONVM_CUT_READ_END) {
				applied = cut;
				memcpy(snap0, nf_state_region_ptr(&f->ts.set, 0), R0_SIZE);
				memcpy(snap1, nf_state_region_ptr(&f->ts.set, 1), R1_SIZE);
			}
		}
	}
	onvm_cut_test_step = NULL;
	/* the cut after the death's arrives whole, over whatever base */
	nf_write(f, 0, 63 * CHUNK, 0x77);
	nf_commit(f);
	assert_true(onvm_cut_freeze(&f->nf, &f->ts.set, 7, applied, 7) >= 1);
	assert_int_equal(ship(f, 7, &n), ONVM_CUT_READ_END);
	assert_remote_is_current(f);
	fixture_free(f);
	return steps_seen;
}

static void
test_nf_death_at_any_step_never_stalls_or_corrupts_the_cuts(void **state)
{
	(void)state;
	unsigned int deaths = 0, total = run_with_a_death(0, &deaths);

	assert_int_equal(deaths, 0);
	assert_true(total > 20);
	for (unsigned int at = 1; at <= total; at++)
		run_with_a_death(at, &deaths);
	assert_int_equal(deaths, total);
	print_message("%u death points\n", total);
}

static void
test_cut_whose_failed_record_does_not_fit_still_reads_failed(void **state)
{
	(void)state;
	/* 15 records of 24 + 256 bytes and an END: 16 bytes left over */
	struct fixture *f = fixture_new(15 * (ONVM_CUT_REC_LEN + CHUNK) + ONVM_CUT_REC_LEN + 16);
	struct onvm_cut_rec rec;
	const uint8_t *data;
	uint32_t n;

	/* Cut 1 fills the log, unread yet. */
	for (uint32_t c = 0; c < 15; c++)
		nf_write(f, 0, (uint64_t)c * CHUNK, 1);
	nf_commit(f);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 1, 0, 1), 15);
	assert_true(f->nf.hdr->log_size - onvm_cut_log_used(&f->mgr) < ONVM_CUT_REC_LEN);
	/* Cut 2 does not fit, nor does its FAILED record. */
	nf_write(f, 0, 20 * CHUNK, 2);
	nf_commit(f);
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 2, 1, 2), -ENOSPC);
	assert_int_equal(ship(f, 1, &n), ONVM_CUT_READ_END);
	/* The manager must not wait for cut 2 for ever. */
	assert_int_equal(onvm_cut_read(&f->mgr, 2, &rec, &data), ONVM_CUT_READ_FAILED);
	assert_int_equal(f->mgr.hdr->lost_cuts, 1);
	/* and cut 3 (over base 1: a scan) carries chunk 20 */
	assert_int_equal(onvm_cut_freeze(&f->nf, &f->ts.set, 3, 1, 3), 1);
	assert_int_equal(ship(f, 3, &n), ONVM_CUT_READ_END);
	assert_int_equal(f->remote[0][20 * CHUNK], 2);
	fixture_free(f);
}

static void
test_random_cuts_rebuild_the_state_exactly(void **state)
{
	(void)state;
	/* a small log (a full rescan, 75 chunks, just fits), so records wrap
	 * around its end many times */
	struct fixture *f = fixture_new(32768);
	static uint8_t snap[2][R0_SIZE];
	uint64_t id = 0, applied = 0;
	uint32_t n, ended = 0, failed = 0;

	srand(12345);
	for (int round = 0; round < 3000; round++) {
		int writes = rand() % 6;

		for (int w = 0; w < writes; w++) {
			unsigned int r = (unsigned int)(rand() % 2);
			uint64_t size = r == 0 ? R0_SIZE : R1_SIZE;

			nf_write(f, r, (uint64_t)rand() % size, (uint8_t)rand());
		}
		if (rand() % 3 == 0)
			nf_commit(f);
		if (rand() % 4 != 0)
			continue;
		/* a marker; one in five of its cuts is lost on the way */
		id++;
		int rc = onvm_cut_freeze(&f->nf, &f->ts.set, id, applied, id);
		bool lost = rand() % 5 == 0;

		if (rc >= 0) {
			memcpy(snap[0], nf_state_region_ptr(&f->ts.set, 0), R0_SIZE);
			memcpy(snap[1], nf_state_region_ptr(&f->ts.set, 1), R1_SIZE);
		}
		if (lost)
			continue; /* its records are skipped when a later cut is read */
		enum onvm_cut_read_result res = ship(f, id, &n);

		if (rc >= 0) {
			assert_int_equal(res, ONVM_CUT_READ_END);
			applied = id;
			ended++;
			assert_memory_equal(f->remote[0], snap[0], R0_SIZE);
			assert_memory_equal(f->remote[1], snap[1], R1_SIZE);
		} else {
			assert_int_equal(res, ONVM_CUT_READ_FAILED);
			failed++;
		}
	}
	print_message("%u cuts applied, %u failed (log full), %lu scans\n", ended, failed,
		      (unsigned long)f->nf.hdr->stats.freeze_scans);
	assert_true(ended > 300);
	assert_true(f->nf.hdr->stats.freeze_scans > 50);
	assert_true(f->nf.hdr->prod > 10 * f->nf.hdr->log_size); /* wrapped many times */
	fixture_free(f);
}

static void
test_area_refuses_another_layout(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1 << 16);
	struct nf_state_layout other = f->ts.layout;
	struct onvm_cut_set c;

	other.regions[0].n_chunks++;
	assert_int_equal(onvm_cut_attach(&c, f->area, f->area_size, &other), -EINVAL);
	assert_int_equal(onvm_cut_format(f->area, 100, &f->ts.layout, 1 << 16), -EINVAL);
	assert_int_equal(onvm_cut_format(f->area, f->area_size, &f->ts.layout, 100), -EINVAL);
	fixture_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_freeze_ships_exactly_the_chunks_changed_since_the_base),
		cmocka_unit_test(test_frozen_bytes_are_the_state_at_the_marker_not_later),
		cmocka_unit_test(test_lost_cut_is_covered_by_a_delta_over_the_older_base),
		cmocka_unit_test(test_base_never_seen_here_freezes_everything),
		cmocka_unit_test(test_full_cut_asked_for_keeps_the_deltas_small),
		cmocka_unit_test(test_full_log_drops_the_whole_cut_never_part_of_it),
		cmocka_unit_test(test_reader_waits_for_a_cut_not_frozen_yet_and_reports_a_newer_one),
		cmocka_unit_test(test_damaged_record_fails_the_cut_and_empties_the_log),
		cmocka_unit_test(test_consume_after_a_dropped_log_keeps_a_newer_cut_whole),
		cmocka_unit_test(test_deaths_between_list_and_mark_never_overflow_the_period_list),
		cmocka_unit_test(test_nf_death_at_any_step_never_stalls_or_corrupts_the_cuts),
		cmocka_unit_test(test_cut_whose_failed_record_does_not_fit_still_reads_failed),
		cmocka_unit_test(test_random_cuts_rebuild_the_state_exactly),
		cmocka_unit_test(test_area_refuses_another_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
