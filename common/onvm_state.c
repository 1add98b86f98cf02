/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_state.c -- state regions, dirty tracking and the batch commit protocol.
 *
 * The block handed to us is laid out as
 *
 *   header | per region: dirty bitmap, dirty list | canonical regions | replicas
 *
 * and holds no pointers.  Touch appends a chunk to its region's dirty list
 * the first time it is marked in a batch (the bitmap only answers "already
 * listed?" in O(1)), so commit and recovery visit the dirty chunks and
 * nothing else: their cost does not depend on the region's size.
 *
 * Invariant: between batches every chunk of a canonical region equals its
 * replica.  During a batch a chunk may differ only if it is in the dirty
 * list, because the NF touches before it writes.  Commit of batch `seq`:
 *
 *   C1  commit_seq = seq (release)            <- the commit point
 *   C2  replica <- canonical, each listed chunk
 *   C3  replica_seq = seq (release)
 *   C4  clear the listed bits, then empty the lists
 *
 * Recovery (by the standby, after the NF died):
 *
 *   R1  if commit_seq == replica_seq + 1: replica <- canonical for each
 *       listed chunk, then replica_seq = commit_seq
 *   R2  canonical <- replica, each listed chunk
 *   R3  clear all dirty bits and lists
 *
 * Why a crash anywhere is safe: the standby sees every store the dead NF
 * executed and none it did not, so only program order matters; fences keep
 * the compiler (and weakly ordered CPUs) from moving stores across C1 and C3.
 * Died before C1: the replica still holds the previous batch and R2 undoes
 * the listed chunks.  Died at or after C1: the NF had finished processing and
 * commit runs synchronously in its thread, so the listed canonical chunks are
 * frozen and hold exactly the new batch -- they ARE the redo log -- and R1
 * finishes C2 from them however far it got; R2 then copies equal bytes.
 * Recovery reads canonical in R1 only before publishing replica_seq and
 * writes it in R2 only after, so a standby that dies inside recovery can be
 * replaced by one that simply runs it again.
 *
 * Why no separate redo log: a log would triple the memory (canonical, log,
 * replica) and copy every dirty byte twice plus a checksum, to protect a copy
 * of data that is already stable in canonical during the commit.  Its one
 * extra use -- letting the NF go on writing canonical while a commit is still
 * being applied (asynchronous commit) -- the spec's ordering (process ->
 * commit -> emit) does not need.  A checksum would guard against torn
 * writes, which process death does not cause.  What a dying NF's stray
 * writes can hit is checked instead: sequence numbers that cannot both be
 * right make recovery fail, and a dirty list with an impossible count or
 * index makes recovery restore the whole region (correct by the invariant,
 * only slower).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_branch_prediction.h>
#include <rte_bitops.h> /* rte_is_power_of_2(): in rte_common.h before DPDK 23.11 */

#include "onvm_state.h"

#define STATE_MAGIC	 UINT64_C(0x4e46535441544531) /* "NFSTATE1" */
#define STATE_VERSION	 1
#define STATE_PAGE_ALIGN 4096 /* canonical regions start page aligned for the NF */

static void __attribute__((format(printf, 3, 4)))
set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Keeps the compiler from moving memory accesses across it.  Enough for the
 * crash argument (program order); commit uses real fences where another
 * process may be reading concurrently. */
static inline void
compiler_barrier(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void
step(struct nf_state_set *set, enum nf_state_step s, uint32_t k)
{
	if (unlikely(set->step_hook != NULL))
		set->step_hook(set->step_arg, s, k);
}

/* ---- layout ---------------------------------------------------------- */

static bool
name_ok(const char *name, char *err, size_t errlen, unsigned int i)
{
	size_t len;

	if (name == NULL || name[0] == '\0') {
		set_err(err, errlen, "state region %u: empty name", i);
		return false;
	}
	len = strnlen(name, NF_STATE_NAME_SIZE);
	if (len >= NF_STATE_NAME_SIZE) {
		set_err(err, errlen, "state region %u: name '%.*s...' longer than %d characters", i,
			NF_STATE_NAME_SIZE - 1, name, NF_STATE_NAME_SIZE - 1);
		return false;
	}
	for (size_t j = 0; j < len; j++) {
		char c = name[j];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-')) {
			set_err(err, errlen,
				"state region '%s': bad character at %zu (use A-Z a-z 0-9 _ . -)",
				name, j);
			return false;
		}
	}
	return true;
}

int
nf_state_layout_compute(struct nf_state_layout *out, const struct nf_state_request *reqs,
			unsigned int n, char *err, size_t errlen)
{
	uint64_t off;

	if (out == NULL || (reqs == NULL && n > 0)) {
		set_err(err, errlen, "state layout: NULL argument");
		return -EINVAL;
	}
	/* Zeroed, padding included, so attach can memcmp two layouts. */
	memset(out, 0, sizeof(*out));
	if (n == 0) {
		set_err(err, errlen, "state layout: no regions declared");
		return -EINVAL;
	}
	if (n > NF_STATE_MAX_REGIONS) {
		set_err(err, errlen, "state layout: %u regions declared, at most %d allowed", n,
			NF_STATE_MAX_REGIONS);
		return -E2BIG;
	}

	for (unsigned int i = 0; i < n; i++) {
		const struct nf_state_request *q = &reqs[i];
		struct nf_state_region_layout *r = &out->regions[i];
		uint32_t chunk = q->chunk_size != 0 ? q->chunk_size : NF_STATE_CHUNK_DEFAULT;

		if (!name_ok(q->name, err, errlen, i))
			return -EINVAL;
		for (unsigned int j = 0; j < i; j++) {
			if (strcmp(out->regions[j].name, q->name) == 0) {
				set_err(err, errlen,
					"state region '%s': declared twice (regions %u and %u)",
					q->name, j, i);
				return -EEXIST;
			}
		}
		if (q->size == 0) {
			set_err(err, errlen, "state region '%s': size 0 (must be 1..%" PRIu64 ")",
				q->name, NF_STATE_REGION_MAX);
			return -EINVAL;
		}
		if ((uint64_t)q->size > NF_STATE_REGION_MAX) {
			set_err(err, errlen,
				"state region '%s': size %zu too large (at most %" PRIu64 ")",
				q->name, q->size, NF_STATE_REGION_MAX);
			return -E2BIG;
		}
		if (!rte_is_power_of_2(chunk) || chunk < NF_STATE_CHUNK_MIN ||
		    chunk > NF_STATE_CHUNK_MAX) {
			set_err(err, errlen,
				"state region '%s': chunk size %u must be a power of two in %d..%u",
				q->name, chunk, NF_STATE_CHUNK_MIN, NF_STATE_CHUNK_MAX);
			return -EINVAL;
		}
		memcpy(r->name, q->name, strlen(q->name) + 1);
		r->size = q->size;
		r->chunk_size = chunk;
		r->chunk_shift = (uint32_t)__builtin_ctz(chunk);
		r->block_size = RTE_ALIGN_CEIL(r->size, (uint64_t)chunk);
		r->n_chunks = (uint32_t)(r->block_size >> r->chunk_shift);
		r->bitmap_words = (r->n_chunks + 63) / 64;
	}
	out->n_regions = n;

	/* Small metadata first, then the big blocks; all cache-line aligned,
	 * the NF's regions page aligned. */
	off = RTE_ALIGN_CEIL(sizeof(struct nf_state_hdr), RTE_CACHE_LINE_SIZE);
	for (unsigned int i = 0; i < n; i++) {
		struct nf_state_region_layout *r = &out->regions[i];

		r->bitmap_off = off;
		off = RTE_ALIGN_CEIL(off + (uint64_t)r->bitmap_words * 8, RTE_CACHE_LINE_SIZE);
		r->list_off = off;
		off = RTE_ALIGN_CEIL(off + (uint64_t)r->n_chunks * 4, RTE_CACHE_LINE_SIZE);
	}
	for (unsigned int i = 0; i < n; i++) {
		off = RTE_ALIGN_CEIL(off, STATE_PAGE_ALIGN);
		out->regions[i].canon_off = off;
		off += out->regions[i].block_size;
	}
	for (unsigned int i = 0; i < n; i++) {
		off = RTE_ALIGN_CEIL(off, STATE_PAGE_ALIGN);
		out->regions[i].replica_off = off;
		off += out->regions[i].block_size;
	}
	out->total_size = RTE_ALIGN_CEIL(off, STATE_PAGE_ALIGN);
	return 0;
}

/* ---- block set-up ---------------------------------------------------- */

static int
check_block(const void *base, size_t size, const struct nf_state_layout *layout, char *err,
	    size_t errlen)
{
	if (base == NULL || layout == NULL) {
		set_err(err, errlen, "state block: NULL argument");
		return -EINVAL;
	}
	if (((uintptr_t)base & (NF_STATE_BLOCK_ALIGN - 1)) != 0) {
		set_err(err, errlen, "state block: base %p not aligned to %d bytes", base,
			NF_STATE_BLOCK_ALIGN);
		return -EINVAL;
	}
	if (layout->n_regions == 0 || layout->n_regions > NF_STATE_MAX_REGIONS) {
		set_err(err, errlen, "state block: layout has %u regions", layout->n_regions);
		return -EINVAL;
	}
	if ((uint64_t)size < layout->total_size) {
		set_err(err, errlen, "state block: %zu bytes, layout needs %" PRIu64, size,
			layout->total_size);
		return -EINVAL;
	}
	return 0;
}

int
nf_state_format(void *base, size_t size, const struct nf_state_layout *layout, char *err,
		size_t errlen)
{
	struct nf_state_hdr *h = base;
	int rc = check_block(base, size, layout, err, errlen);

	if (rc != 0)
		return rc;
	/* Canonical and replica must start equal (the invariant); zero is the
	 * state an NF expects of fresh memory. */
	memset(base, 0, layout->total_size);
	h->version = STATE_VERSION;
	h->hdr_size = sizeof(*h);
	h->layout = *layout;
	/* Last: a half-formatted block is never attachable. */
	__atomic_store_n(&h->magic, STATE_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

int
nf_state_attach(struct nf_state_set *set, void *base, size_t size,
		const struct nf_state_layout *layout, char *err, size_t errlen)
{
	struct nf_state_hdr *h = base;
	int rc;

	if (set == NULL) {
		set_err(err, errlen, "state attach: NULL handle");
		return -EINVAL;
	}
	rc = check_block(base, size, layout, err, errlen);
	if (rc != 0)
		return rc;
	if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != STATE_MAGIC ||
	    h->version != STATE_VERSION || h->hdr_size != sizeof(*h)) {
		set_err(err, errlen, "state block: not formatted (or other version)");
		return -EINVAL;
	}
	if (memcmp(&h->layout, layout, sizeof(*layout)) != 0) {
		set_err(err, errlen,
			"state block: formatted for other region declarations than this NF's");
		return -EINVAL;
	}

	memset(set, 0, sizeof(*set));
	set->hdr = h;
	set->base = base;
	set->layout = *layout;
	set->n_regions = layout->n_regions;
	set->seq = __atomic_load_n(&h->replica_seq, __ATOMIC_ACQUIRE);
	for (unsigned int i = 0; i < set->n_regions; i++) {
		const struct nf_state_region_layout *l = &set->layout.regions[i];
		struct nf_state_region *r = &set->regions[i];

		r->canon = set->base + l->canon_off;
		r->replica = set->base + l->replica_off;
		r->bitmap = (uint64_t *)(set->base + l->bitmap_off);
		r->list = (uint32_t *)(set->base + l->list_off);
		r->dirty_n = &h->dirty_n[i];
		r->size = l->size;
		r->block_size = l->block_size;
		r->chunk_size = l->chunk_size;
		r->chunk_shift = l->chunk_shift;
		r->n_chunks = l->n_chunks;
		r->bitmap_words = l->bitmap_words;
	}
	return 0;
}

/* ---- access ---------------------------------------------------------- */

int
nf_state_region_find(const struct nf_state_set *set, const char *name)
{
	for (unsigned int i = 0; i < set->n_regions; i++)
		if (strcmp(set->layout.regions[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

void *
nf_state_region_ptr(const struct nf_state_set *set, unsigned int region)
{
	return region < set->n_regions ? set->regions[region].canon : NULL;
}

const void *
nf_state_replica_ptr(const struct nf_state_set *set, unsigned int region)
{
	return region < set->n_regions ? set->regions[region].replica : NULL;
}

uint64_t
nf_state_region_size(const struct nf_state_set *set, unsigned int region)
{
	return region < set->n_regions ? set->regions[region].size : 0;
}

uint64_t
nf_state_seq(const struct nf_state_set *set)
{
	return set->seq;
}

const struct nf_state_stats *
nf_state_stats(const struct nf_state_set *set)
{
	return &set->stats;
}

void
nf_state_set_step_hook(struct nf_state_set *set, nf_state_step_fn *fn, void *arg)
{
	set->step_hook = fn;
	set->step_arg = arg;
}

uint32_t
nf_state_dirty_chunks(const struct nf_state_set *set)
{
	uint32_t n = 0;

	for (unsigned int i = 0; i < set->n_regions; i++)
		n += *set->regions[i].dirty_n;
	return n;
}

const uint32_t *
nf_state_dirty_list(const struct nf_state_set *set, unsigned int region, uint32_t *n)
{
	if (region >= set->n_regions) {
		*n = 0;
		return NULL;
	}
	*n = *set->regions[region].dirty_n;
	return set->regions[region].list;
}

uint32_t
nf_state_chunk_size(const struct nf_state_set *set, unsigned int region)
{
	return region < set->n_regions ? set->regions[region].chunk_size : 0;
}

uint32_t
nf_state_chunks(const struct nf_state_set *set, unsigned int region)
{
	return region < set->n_regions ? set->regions[region].n_chunks : 0;
}

/* ---- dirty tracking (fast path) -------------------------------------- */

static inline void
mark_chunks(struct nf_state_region *r, uint32_t first, uint32_t last)
{
	uint32_t n = *r->dirty_n;

	for (uint32_t c = first; c <= last; c++) {
		uint64_t *w = &r->bitmap[c >> 6];
		uint64_t bit = UINT64_C(1) << (c & 63);

		if (*w & bit)
			continue;
		/* List before bit: "bit set => listed" holds at every instruction,
		 * so the bit test above never hides an unlisted chunk. */
		r->list[n++] = c;
		*r->dirty_n = n;
		compiler_barrier();
		*w |= bit;
	}
	/* The NF's write to the chunk comes after this returns; it must not be
	 * moved before the list entry that lets recovery undo it. */
	compiler_barrier();
}

int
nf_state_touch(struct nf_state_set *set, unsigned int region, size_t offset, size_t len)
{
	struct nf_state_region *r;

	if (unlikely(region >= set->n_regions))
		return -EINVAL;
	r = &set->regions[region];
	if (unlikely((uint64_t)offset > r->size || (uint64_t)len > r->size - offset))
		return -ERANGE;
	if (len == 0)
		return 0;
	mark_chunks(r, (uint32_t)(offset >> r->chunk_shift),
		    (uint32_t)((offset + len - 1) >> r->chunk_shift));
	return 0;
}

int
nf_state_write_both(struct nf_state_set *set, unsigned int region, size_t offset,
		    const void *data, size_t len)
{
	struct nf_state_region *r;

	if (region >= set->n_regions)
		return -EINVAL;
	r = &set->regions[region];
	if ((uint64_t)offset > r->size || (uint64_t)len > r->size - offset)
		return -ERANGE;
	memcpy(r->canon + offset, data, len);
	memcpy(r->replica + offset, data, len);
	return 0;
}

int
nf_state_touch_ptr(struct nf_state_set *set, const void *ptr, size_t len)
{
	uintptr_t p = (uintptr_t)ptr;

	for (unsigned int i = 0; i < set->n_regions; i++) {
		uintptr_t lo = (uintptr_t)set->regions[i].canon;

		if (p >= lo && p - lo < set->regions[i].size)
			return nf_state_touch(set, i, p - lo, len);
	}
	return -EFAULT;
}

/* ---- commit ---------------------------------------------------------- */

uint64_t
nf_state_commit(struct nf_state_set *set)
{
	struct nf_state_hdr *h = set->hdr;
	uint64_t seq = set->seq + 1;
	uint32_t copied = 0;

	/* C1, the commit point.  Release: the batch's canonical writes and list
	 * entries are before it; the fence keeps C2's stores after it. */
	__atomic_store_n(&h->commit_seq, seq, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	step(set, NF_STATE_STEP_COMMIT_PUBLISHED, 0);

	/* C2 */
	for (unsigned int i = 0; i < set->n_regions; i++) {
		struct nf_state_region *r = &set->regions[i];
		uint32_t n = *r->dirty_n;

		for (uint32_t j = 0; j < n; j++) {
			uint64_t off = (uint64_t)r->list[j] << r->chunk_shift;

			memcpy(r->replica + off, r->canon + off, r->chunk_size);
			step(set, NF_STATE_STEP_CHUNK_COPIED, ++copied);
		}
		set->stats.commit_list_entries += n;
		set->stats.bytes_committed += (uint64_t)n * r->chunk_size;
	}

	/* C3 */
	__atomic_store_n(&h->replica_seq, seq, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	step(set, NF_STATE_STEP_REPLICA_PUBLISHED, 0);

	/* C4: bits first, so "bit set => listed" holds at every instruction.
	 * (Recovery also clears every bit; this keeps the invariant local.) */
	for (unsigned int i = 0; i < set->n_regions; i++) {
		struct nf_state_region *r = &set->regions[i];
		uint32_t n = *r->dirty_n;

		for (uint32_t j = 0; j < n; j++) {
			uint32_t c = r->list[j];

			r->bitmap[c >> 6] &= ~(UINT64_C(1) << (c & 63));
		}
		set->stats.commit_bitmap_words += n;
		set->stats.commit_list_entries += n;
		compiler_barrier();
		step(set, NF_STATE_STEP_BITS_CLEARED, i);
		*r->dirty_n = 0;
		compiler_barrier();
		step(set, NF_STATE_STEP_LIST_CLEARED, i);
	}

	set->seq = seq;
	set->stats.commits++;
	set->stats.chunks_committed += copied;
	if (copied > set->stats.max_batch_chunks)
		set->stats.max_batch_chunks = copied;
	return seq;
}

/* ---- recovery -------------------------------------------------------- */

/* A dirty list the dead NF left behind is trusted only if every entry can be
 * a chunk of the region; otherwise recovery works on the whole region. */
static bool
list_valid(const struct nf_state_region *r)
{
	uint32_t n = *r->dirty_n;

	if (n > r->n_chunks)
		return false;
	for (uint32_t j = 0; j < n; j++)
		if (r->list[j] >= r->n_chunks)
			return false;
	return true;
}

/* Copy the region's listed chunks (all of it if the list is corrupt) from
 * one copy to the other. */
static uint32_t
copy_listed(struct nf_state_set *set, unsigned int region, bool valid, bool forward, uint32_t *done)
{
	struct nf_state_region *r = &set->regions[region];
	enum nf_state_step s =
	    forward ? NF_STATE_STEP_RECOVER_FORWARD_CHUNK : NF_STATE_STEP_RECOVER_BACK_CHUNK;
	uint8_t *dst = forward ? r->replica : r->canon;
	const uint8_t *src = forward ? r->canon : r->replica;
	uint32_t n;

	if (!valid) {
		memcpy(dst, src, r->block_size);
		set->stats.full_region_restores++;
		step(set, s, ++*done);
		return r->n_chunks;
	}
	n = *r->dirty_n;
	for (uint32_t j = 0; j < n; j++) {
		uint64_t off = (uint64_t)r->list[j] << r->chunk_shift;

		memcpy(dst + off, src + off, r->chunk_size);
		step(set, s, ++*done);
	}
	return n;
}

int
nf_state_recover(struct nf_state_set *set, uint64_t *seq, char *err, size_t errlen)
{
	struct nf_state_hdr *h = set->hdr;
	uint64_t cseq = __atomic_load_n(&h->commit_seq, __ATOMIC_ACQUIRE);
	uint64_t rseq = __atomic_load_n(&h->replica_seq, __ATOMIC_ACQUIRE);
	bool valid[NF_STATE_MAX_REGIONS];
	uint32_t done = 0;

	if (cseq != rseq && cseq != rseq + 1) {
		set_err(err, errlen,
			"state block: commit seq %" PRIu64 " and replica seq %" PRIu64
			" cannot both be right; state is corrupt",
			cseq, rseq);
		return -EIO;
	}
	for (unsigned int i = 0; i < set->n_regions; i++)
		valid[i] = list_valid(&set->regions[i]);

	/* R1: the batch reached its commit point; canonical's listed chunks
	 * hold it.  Finish copying them to the replica. */
	if (cseq == rseq + 1) {
		for (unsigned int i = 0; i < set->n_regions; i++)
			set->stats.chunks_rolled_forward +=
			    copy_listed(set, i, valid[i], true, &done);
		__atomic_store_n(&h->replica_seq, cseq, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		step(set, NF_STATE_STEP_RECOVER_REPLICA_PUBLISHED, 0);
	}

	/* R2: undo whatever the dead NF wrote after its last commit point. */
	done = 0;
	for (unsigned int i = 0; i < set->n_regions; i++)
		set->stats.chunks_rolled_back += copy_listed(set, i, valid[i], false, &done);

	/* R3: the whole bitmap, not just the listed bits: a bit without a list
	 * entry (a stray write of the dying NF) would hide its chunk from every
	 * later batch.  Touch itself never leaves one (it lists first). */
	for (unsigned int i = 0; i < set->n_regions; i++) {
		struct nf_state_region *r = &set->regions[i];

		compiler_barrier();
		memset(r->bitmap, 0, (size_t)r->bitmap_words * 8);
		compiler_barrier();
		*r->dirty_n = 0;
		compiler_barrier();
		step(set, NF_STATE_STEP_RECOVER_REGION_CLEARED, i);
	}

	set->seq = cseq;
	set->stats.recoveries++;
	if (seq != NULL)
		*seq = cseq;
	return 0;
}
