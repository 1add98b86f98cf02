/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_cut.c -- chunk periods, freezing a cut into the cut log, reading it
 * back (contract in onvm_cut.h).
 *
 * Area layout (offsets from its base, no pointers):
 *   header | per region: marks (u64 per chunk), period list (u32 per chunk) | log
 *
 * The log is written by one process and read by another, both of which can
 * be killed at any instruction.  The producer writes records past `prod`
 * (where the consumer never reads) and publishes them with one release
 * store; the consumer reads below `prod` and frees with a release store of
 * `cons`, which the producer reads with acquire before reusing the space.
 * A killed producer leaves unpublished bytes that the next freeze simply
 * overwrites; a killed consumer leaves records that the next reader reads
 * again.  Records written by a process that went wrong are checked before
 * use: a record that is not one the producer could have written ends the
 * reading of that log (FAILED, counted) instead of sending garbage.
 */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>

#include "onvm_cut.h"

#define CUT_MAGIC  UINT64_C(0x4f4e564d43555431) /* "ONVMCUT1" */
#define CUT_LOG_MIN 4096

onvm_cut_step_fn *onvm_cut_test_step;

/* Between two stores another process may see: tests die here. */
static inline void
step(const char *what)
{
	if (unlikely(onvm_cut_test_step != NULL))
		onvm_cut_test_step(what);
}

static inline uint64_t
pad8(uint64_t n)
{
	return (n + 7) & ~UINT64_C(7);
}

static uint64_t
layout_offsets(const struct nf_state_layout *l, uint64_t log_bytes, struct onvm_cut_hdr *h)
{
	uint64_t off = RTE_ALIGN_CEIL(sizeof(struct onvm_cut_hdr), 64);

	for (uint32_t r = 0; r < l->n_regions; r++) {
		if (h != NULL) {
			h->marks_off[r] = off;
			h->n_chunks[r] = l->regions[r].n_chunks;
			h->chunk_size[r] = l->regions[r].chunk_size;
		}
		off += (uint64_t)l->regions[r].n_chunks * sizeof(uint64_t);
		if (h != NULL)
			h->plist_off[r] = off;
		off = pad8(off + (uint64_t)l->regions[r].n_chunks * sizeof(uint32_t));
	}
	off = RTE_ALIGN_CEIL(off, 64);
	if (h != NULL) {
		h->log_off = off;
		h->log_size = pad8(log_bytes);
	}
	return off + pad8(log_bytes);
}

size_t
onvm_cut_area_size(const struct nf_state_layout *layout, uint64_t log_bytes)
{
	return layout_offsets(layout, log_bytes, NULL);
}

int
onvm_cut_format(void *area, size_t size, const struct nf_state_layout *layout, uint64_t log_bytes)
{
	struct onvm_cut_hdr *h = area;

	if (area == NULL || log_bytes < CUT_LOG_MIN || size < onvm_cut_area_size(layout, log_bytes))
		return -EINVAL;
	memset(area, 0, onvm_cut_area_size(layout, log_bytes) - pad8(log_bytes));
	h->n_regions = layout->n_regions;
	layout_offsets(layout, log_bytes, h);
	__atomic_store_n(&h->magic, CUT_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

int
onvm_cut_attach(struct onvm_cut_set *c, void *area, size_t size,
		const struct nf_state_layout *layout)
{
	struct onvm_cut_hdr *h = area;
	uint8_t *base = area;

	memset(c, 0, sizeof(*c));
	if (area == NULL || size < sizeof(*h) ||
	    __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != CUT_MAGIC ||
	    h->n_regions != layout->n_regions || h->log_off + h->log_size > size)
		return -EINVAL;
	for (uint32_t r = 0; r < h->n_regions; r++) {
		if (h->n_chunks[r] != layout->regions[r].n_chunks ||
		    h->chunk_size[r] != layout->regions[r].chunk_size)
			return -EINVAL;
		c->marks[r] = (uint64_t *)(base + h->marks_off[r]);
		c->plist[r] = (uint32_t *)(base + h->plist_off[r]);
	}
	c->hdr = h;
	c->log = base + h->log_off;
	c->n_regions = h->n_regions;
	return 0;
}

void
onvm_cut_note_batch(struct onvm_cut_set *c, const struct nf_state_set *state)
{
	struct onvm_cut_hdr *h = c->hdr;
	uint64_t cur = h->last_marker + 1;

	for (uint32_t r = 0; r < c->n_regions; r++) {
		uint32_t n, pn = h->plist_n[r];
		const uint32_t *list = nf_state_dirty_list(state, r, &n);

		for (uint32_t i = 0; i < n; i++) {
			uint32_t ch = list[i];

			if (ch >= h->n_chunks[r] || c->marks[r][ch] == cur)
				continue;
			/* Listed before marked, as the state's own dirty list:
			 * a death in between lists a chunk twice (a record
			 * twice in the next freeze: harmless), never zero times.
			 * Deaths can repeat that until the list is full: then
			 * the period is found by scanning the marks instead. */
			if (pn < h->n_chunks[r]) {
				c->plist[r][pn++] = ch;
				h->plist_n[r] = pn;
			} else {
				h->plist_full = 1;
			}
			step("note: listed");
			c->marks[r][ch] = cur;
		}
	}
}

/* Append a record at *pos if it fits below `limit` (the consumer's position
 * plus the ring size); false if not.  Inserts a SKIP filler when the record
 * would cross the end of the ring. */
static bool
put_record(struct onvm_cut_set *c, uint64_t *pos, uint64_t limit, const struct onvm_cut_rec *rec,
	   const void *data)
{
	uint64_t size = c->hdr->log_size, need = ONVM_CUT_REC_LEN + pad8(rec->len);
	uint64_t off = *pos % size;

	if (need > size)
		return false;
	if (size - off < need) {
		/* Fill to the end; a remainder under a header is implicit. */
		if (*pos + (size - off) + need > limit)
			return false;
		if (size - off >= ONVM_CUT_REC_LEN) {
			struct onvm_cut_rec skip = {.cut_id = rec->cut_id, .kind = ONVM_CUT_SKIP};

			memcpy(c->log + off, &skip, sizeof(skip));
		}
		*pos += size - off;
		off = 0;
	}
	if (*pos + need > limit)
		return false;
	memcpy(c->log + off, rec, sizeof(*rec));
	if (rec->len > 0)
		memcpy(c->log + off + ONVM_CUT_REC_LEN, data, rec->len);
	*pos += need;
	return true;
}

static int
publish_failed(struct onvm_cut_set *c, uint64_t start, uint64_t limit, uint64_t cut_id,
	       uint64_t cut_ts)
{
	struct onvm_cut_rec rec = {.cut_id = cut_id, .kind = ONVM_CUT_FAILED, .offset = cut_ts};
	uint64_t pos = start;

	if (put_record(c, &pos, limit, &rec, NULL))
		__atomic_store_n(&c->hdr->prod, pos, __ATOMIC_RELEASE);
	step("failed: published");
	return 0;
}

/* A new period begins: after this, what is dirtied belongs to the cut after
 * `cut_id`.  Done before the cut is published, so a reader that sees the
 * cut sees the period moved on, and one that finds no record of a cut this
 * NF has moved past knows it is lost (onvm_cut_read()). */
static void
new_period(struct onvm_cut_hdr *h, uint64_t cut_id)
{
	__atomic_store_n(&h->last_marker, cut_id, __ATOMIC_RELEASE);
	step("period: last_marker");
	memset(h->plist_n, 0, sizeof(h->plist_n));
	h->plist_full = 0;
	step("period: list emptied");
}

/* Freeze chunk `ch` of region `r`; false when the log is full. */
static bool
freeze_chunk(struct onvm_cut_set *c, const struct nf_state_set *state, uint32_t r, uint32_t ch,
	     uint64_t cut_id, uint64_t *pos, uint64_t limit)
{
	uint32_t cs = c->hdr->chunk_size[r];
	struct onvm_cut_rec rec = {.cut_id = cut_id, .region = (uint16_t)r, .kind = ONVM_CUT_DATA,
				   .len = cs, .offset = (uint64_t)ch * cs};
	const uint8_t *canon = nf_state_region_ptr(state, r);

	if (!put_record(c, pos, limit, &rec, canon + rec.offset))
		return false;
	c->hdr->stats.chunks_frozen++;
	c->hdr->stats.bytes_frozen += cs;
	return true;
}

int
onvm_cut_freeze(struct onvm_cut_set *c, const struct nf_state_set *state, uint64_t cut_id,
		uint64_t base_id, uint64_t cut_ts)
{
	return onvm_cut_freeze_ex(c, state, cut_id, base_id, cut_ts, false);
}

int
onvm_cut_freeze_ex(struct onvm_cut_set *c, const struct nf_state_set *state, uint64_t cut_id,
		   uint64_t base_id, uint64_t cut_ts, bool full)
{
	struct onvm_cut_hdr *h = c->hdr;
	uint64_t start = h->prod, pos = start;
	uint64_t limit = __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) + h->log_size;
	struct onvm_cut_rec end = {.cut_id = cut_id, .kind = ONVM_CUT_END, .offset = cut_ts};
	bool scan, all, unseen;
	int n = 0;

	onvm_cut_note_batch(c, state);
	if (cut_id <= h->last_marker) {
		h->stats.failed_base++;
		publish_failed(c, start, limit, cut_id, cut_ts);
		return -EINVAL;
	}
	/* A base this NF never saw: everything (never-dirtied chunks too);
	 * so for a full cut asked for (a standby resynchronising). */
	unseen = base_id > h->last_marker;
	all = unseen || full;
	/* The usual case: the base is the last marker seen here, and what
	 * changed since is exactly the period list.  After lost cuts, every
	 * chunk dirtied after the base: marks above base + 1 - 1. */
	scan = base_id < h->last_marker || h->plist_full;
	for (uint32_t r = 0; r < c->n_regions && !scan; r++)
		scan = h->plist_n[r] > h->n_chunks[r]; /* a stray write: trust the marks */
	for (uint32_t r = 0; r < c->n_regions; r++) {
		if (scan || all) {
			for (uint32_t ch = 0; ch < h->n_chunks[r]; ch++) {
				if (!all && c->marks[r][ch] <= base_id)
					continue;
				if (!freeze_chunk(c, state, r, ch, cut_id, &pos, limit))
					goto full;
				/* Until a cut at or after this one is the chain's
				 * base, every chunk counts as changed: should this
				 * cut be dropped, the next (over the old base)
				 * must still carry them all.  Not for a full cut
				 * asked for by an NF that saw the base: its marks
				 * still say what changed since, and a dropped
				 * full cut must not make every later delta full. */
				if (unseen && c->marks[r][ch] < cut_id)
					c->marks[r][ch] = cut_id;
				n++;
			}
		} else {
			for (uint32_t i = 0; i < h->plist_n[r]; i++) {
				uint32_t ch = c->plist[r][i];

				if (ch >= h->n_chunks[r])
					continue;
				if (!freeze_chunk(c, state, r, ch, cut_id, &pos, limit))
					goto full;
				n++;
			}
		}
	}
	if (!put_record(c, &pos, limit, &end, NULL))
		goto full;
	step("freeze: records written");
	/* The chunks just frozen keep their (older) marks. */
	new_period(h, cut_id);
	__atomic_store_n(&h->prod, pos, __ATOMIC_RELEASE);
	step("freeze: published");
	h->stats.freezes++;
	h->stats.freeze_scans += scan && !all;
	h->stats.freeze_full += all;
	return n;
full:
	h->stats.failed_full++;
	/* The next cut (over an older base) rescans. */
	new_period(h, cut_id);
	publish_failed(c, start, limit, cut_id, cut_ts);
	return -ENOSPC;
}

enum onvm_cut_read_result
onvm_cut_read(struct onvm_cut_set *c, uint64_t cut_id, struct onvm_cut_rec *rec,
	      const uint8_t **data)
{
	struct onvm_cut_hdr *h = c->hdr;
	uint64_t size = h->log_size;

	c->has_next = false;
	for (;;) {
		uint64_t prod = __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE);
		uint64_t cons = h->cons, off = cons % size;

		if (cons == prod) {
			/* Nothing of cut_id, and the NF is past it: the cut
			 * (or its FAILED record, which did not fit) is lost. */
			if (__atomic_load_n(&h->last_marker, __ATOMIC_ACQUIRE) >= cut_id &&
			    __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE) == prod) {
				memset(rec, 0, sizeof(*rec));
				rec->cut_id = cut_id;
				rec->kind = ONVM_CUT_FAILED;
				h->lost_cuts++;
				return ONVM_CUT_READ_FAILED;
			}
			return ONVM_CUT_READ_NONE;
		}
		if (prod - cons > size)
			goto corrupt;
		if (size - off < ONVM_CUT_REC_LEN) {
			__atomic_store_n(&h->cons, cons + (size - off), __ATOMIC_RELEASE);
			continue;
		}
		memcpy(rec, c->log + off, sizeof(*rec));
		if (rec->kind == ONVM_CUT_SKIP) {
			__atomic_store_n(&h->cons, cons + (size - off), __ATOMIC_RELEASE);
			continue;
		}
		if (rec->kind < ONVM_CUT_DATA || rec->kind > ONVM_CUT_FAILED ||
		    (rec->kind != ONVM_CUT_DATA && rec->len != 0) ||
		    ONVM_CUT_REC_LEN + pad8(rec->len) > prod - cons ||
		    ONVM_CUT_REC_LEN + pad8(rec->len) > size - off)
			goto corrupt;
		if (rec->kind == ONVM_CUT_DATA &&
		    (rec->region >= c->n_regions ||
		     rec->offset > (uint64_t)h->n_chunks[rec->region] * h->chunk_size[rec->region] ||
		     rec->len > (uint64_t)h->n_chunks[rec->region] * h->chunk_size[rec->region] -
					rec->offset))
			goto corrupt;
		if (rec->cut_id < cut_id) {
			/* An abandoned cut's record: no one will ask for it. */
			h->skipped_records++;
			__atomic_store_n(&h->cons, cons + ONVM_CUT_REC_LEN + pad8(rec->len),
					 __ATOMIC_RELEASE);
			continue;
		}
		if (rec->cut_id > cut_id)
			return ONVM_CUT_READ_LATER;
		*data = c->log + off + ONVM_CUT_REC_LEN;
		c->next_cons = cons + ONVM_CUT_REC_LEN + pad8(rec->len);
		c->has_next = true;
		return rec->kind == ONVM_CUT_DATA  ? ONVM_CUT_READ_DATA
		       : rec->kind == ONVM_CUT_END ? ONVM_CUT_READ_END
						   : ONVM_CUT_READ_FAILED;
	}
corrupt:
	/* Nothing in this log can be trusted up to prod: drop it all. */
	h->skipped_records++;
	__atomic_store_n(&h->cons, __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	memset(rec, 0, sizeof(*rec));
	rec->cut_id = cut_id;
	rec->kind = ONVM_CUT_FAILED;
	return ONVM_CUT_READ_FAILED;
}

void
onvm_cut_consume(struct onvm_cut_set *c)
{
	/* Where the record read last ends, remembered by the reader: not
	 * derived from cons and prod, which the producer moves meanwhile (a
	 * FAILED for a log dropped whole has no record to step over). */
	if (!c->has_next)
		return;
	__atomic_store_n(&c->hdr->cons, c->next_cons, __ATOMIC_RELEASE);
	c->has_next = false;
}

uint64_t
onvm_cut_log_used(const struct onvm_cut_set *c)
{
	return __atomic_load_n(&c->hdr->prod, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&c->hdr->cons, __ATOMIC_ACQUIRE);
}
