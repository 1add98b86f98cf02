/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_ftc.c -- an NF of an FTC chain (docs/design/ftc.md): each batch that
 * dirtied state becomes one update, numbered 1, 2, ..., that the manager
 * piggybacks on the chain's packets to the next f nodes.  The update is
 * the dirty chunks' bytes as they are at the batch's end, in FTC's record
 * encoding (ftc/include/ftc_wire.h), written to the ring the manager laid
 * next to the state block (onvm_ftc_ring.h).  No NF changes: the chunks are
 * those the NF touched, as for local resiliency's commit.
 *
 * The sequence number is published in the slot before the batch's outputs
 * leave, so the manager, seeing an output, knows an update at or above the
 * one the output depends on.  A full ring makes the NF wait: the manager
 * takes updates out only as fast as its log has room, which is how a chain
 * whose replicas do not confirm slows down instead of losing updates.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>

#include "nf_private.h"

/* FTC's record: region (16), length (16), offset (32), bytes -- big endian.
 * A chunk longer than a record can say goes as several. */
#define REC_HEAD 8
#define REC_MAX 32768u

int
nfl_ftc_attach(struct nf_ctx *nf)
{
	struct onvm_nf_slot *s = nf->slot;

	if (s->ftc_size == 0)
		return 0;
	if (!nf->has_state) {
		NF_LOG(ERR, "%s: in an FTC chain but declares no state", nf->name);
		return -EINVAL;
	}
	if (s->ftc_off > nf->seg.size || s->ftc_size > nf->seg.size - s->ftc_off ||
	    (nf->ftc = onvm_ftc_ring_attach(nf->seg.base + s->ftc_off, s->ftc_size)) == NULL) {
		NF_LOG(ERR, "%s: the FTC ring is not formatted", nf->name);
		return -EINVAL;
	}
	nf->ftc_seq = __atomic_load_n(&s->ftc_seq, __ATOMIC_ACQUIRE);
	NF_LOG(INFO, "%s: FTC updates from %" PRIu64 " on, at most %u bytes each", nf->name,
	       nf->ftc_seq + 1, onvm_ftc_ring_max_update(nf->ftc));
	return 0;
}

bool
nfl_ftc_full_due(const struct nf_ctx *nf)
{
	return nf->ftc != NULL &&
	       __atomic_load_n(&nf->slot->ftc_full_req, __ATOMIC_ACQUIRE) != nf->ftc_full_done;
}

void
nfl_ftc_unparked(struct nf_ctx *nf)
{
	if (nf->ftc != NULL)
		nf->ftc_seq = __atomic_load_n(&nf->slot->ftc_seq, __ATOMIC_ACQUIRE);
}

static bool
chunk_zero(const uint8_t *b, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/* At the start of a batch's commit: a whole-state update asked for makes
 * every chunk that is not all zero dirty (a replica clears its copy
 * first: zero chunks need not go), and at least one, so that there is an
 * update to carry the reset. */
void
nfl_ftc_batch_start_commit(struct nf_ctx *nf)
{
	bool any = false;

	if (!nfl_ftc_full_due(nf))
		return;
	nf->ftc_full_done = __atomic_load_n(&nf->slot->ftc_full_req, __ATOMIC_ACQUIRE);
	for (unsigned int r = 0; r < nf->state.n_regions; r++) {
		const uint32_t cs = nf_state_chunk_size(&nf->state, r);
		const uint64_t size = nf_state_region_size(&nf->state, r);
		const uint8_t *canon = nf_state_region_ptr(&nf->state, r);

		for (uint64_t off = 0; off < size; off += cs) {
			uint64_t len = RTE_MIN((uint64_t)cs, size - off);

			if (!chunk_zero(canon + off, len)) {
				nf_state_touch(&nf->state, r, off, len);
				any = true;
			}
		}
	}
	if (!any)
		nf_state_touch(&nf->state, 0, 0, 1);
	nf->ftc_full = true;
}

/* Bytes of records the batch's dirty chunks make. */
static uint64_t
update_len(const struct nf_ctx *nf)
{
	uint64_t len = 0;

	for (unsigned int r = 0; r < nf->state.n_regions; r++) {
		const uint32_t cs = nf_state_chunk_size(&nf->state, r);
		const uint64_t size = nf_state_region_size(&nf->state, r);
		uint32_t n;
		const uint32_t *list = nf_state_dirty_list(&nf->state, r, &n);

		for (uint32_t i = 0; i < n; i++) {
			uint64_t off = (uint64_t)list[i] * cs;
			uint64_t clen = RTE_MIN((uint64_t)cs, size - off);

			len += clen + REC_HEAD * ((clen + REC_MAX - 1) / REC_MAX);
		}
	}
	return len;
}

static uint8_t *
put_records(const struct nf_ctx *nf, uint8_t *w)
{
	for (unsigned int r = 0; r < nf->state.n_regions; r++) {
		const uint32_t cs = nf_state_chunk_size(&nf->state, r);
		const uint64_t size = nf_state_region_size(&nf->state, r);
		const uint8_t *canon = nf_state_region_ptr(&nf->state, r);
		uint32_t n;
		const uint32_t *list = nf_state_dirty_list(&nf->state, r, &n);

		for (uint32_t i = 0; i < n; i++) {
			uint64_t off = (uint64_t)list[i] * cs;
			uint64_t end = off + RTE_MIN((uint64_t)cs, size - off);

			for (; off < end; off += REC_MAX) {
				uint16_t len = (uint16_t)RTE_MIN((uint64_t)REC_MAX, end - off);
				uint16_t be16;
				uint32_t be32;

				be16 = rte_cpu_to_be_16((uint16_t)r);
				memcpy(w, &be16, 2);
				be16 = rte_cpu_to_be_16(len);
				memcpy(w + 2, &be16, 2);
				be32 = rte_cpu_to_be_32((uint32_t)off);
				memcpy(w + 4, &be32, 4);
				memcpy(w + REC_HEAD, canon + off, len);
				w += REC_HEAD + len;
			}
		}
	}
	return w;
}

/* The batch's dirty chunks as the NF's next update, published before its
 * outputs leave.  False if the node stopped while the NF waited for room:
 * no update was made, so the outputs must not leave. */
bool
nfl_ftc_batch_end(struct nf_ctx *nf)
{
	struct onvm_nf_slot *s = nf->slot;
	const uint64_t reset = nf->ftc_full ? REC_HEAD + 1 : 0;
	const uint64_t len = update_len(nf) + reset;
	bool waited = false;
	uint8_t *w;

	if (len == 0)
		return true;
	if (len > onvm_ftc_ring_max_update(nf->ftc)) {
		/* Replicating part of a batch would give a replica a state no
		 * execution had: the NF stops, loudly, rather than go on with
		 * replicas it cannot keep. */
		NF_LOG(ERR, "%s: a batch dirtied %" PRIu64 " bytes, more than one FTC update "
			    "holds (%u): raise the chain's log_kb",
		       nf->name, len, onvm_ftc_ring_max_update(nf->ftc));
		abort();
	}
	while ((w = onvm_ftc_ring_reserve(nf->ftc, (uint32_t)len)) == NULL) {
		if (!waited) {
			waited = true;
			s->ftc_ring_waits++;
			nfl_rt_leave(nf);
		}
		if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED) || nf->stop)
			return false; /* the node is going: nothing will take it */
		/* Alive, only waiting (the replicas confirm nothing while a
		 * group member is down): the manager must not take the NF for
		 * hung. */
		nfl_heartbeat(nf);
		usleep(50);
	}
	if (reset > 0) { /* the replicas clear their copy first */
		const uint16_t region = rte_cpu_to_be_16(ONVM_FTC_RESET_REGION), one =
								       rte_cpu_to_be_16(1);
		const uint32_t zero = 0;

		memcpy(w, &region, 2);
		memcpy(w + 2, &one, 2);
		memcpy(w + 4, &zero, 4);
		w[REC_HEAD] = 1;
		nf->ftc_full = false;
		s->ftc_full_updates++;
	}
	put_records(nf, w + reset);
	onvm_ftc_ring_publish(nf->ftc, ++nf->ftc_seq, (uint32_t)len);
	s->ftc_updates++;
	s->ftc_bytes += len;
	__atomic_store_n(&s->ftc_seq, nf->ftc_seq, __ATOMIC_RELEASE);
	return true;
}
