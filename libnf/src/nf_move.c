/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_move.c -- flow migration, the NF's part (the protocol: struct
 * onvm_move in onvm_common.h; the manager's part: onvm_mgr/elastic/).
 *
 * The NF itself does nothing: libnf finds its flow tables in its state
 * regions (onvm_ft_attach), exports and frees the moving buckets' entries
 * at src, imports them at dst, runs the NF's packet handler on the copies
 * with their ND decisions replayed from src's log and their output
 * dropped, and holds dst's first new packet of the buckets until src's
 * last output is on its way.
 *
 * Every wait here is dst waiting for src -- src never waits for dst -- and
 * every wait ends when the move fails (the manager's time-out, an NF gone)
 * or after MOVE_WAIT_NS: before the flip a wait that runs out fails the
 * move (src keeps the flows), after it dst goes on.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_memzone.h>
#include <rte_pause.h>

#include "onvm_flow_table.h"

#include "nf_private.h"

/* The manager fails a move not flipped in 3 s (move_ctl.c), which ends
 * every wait here; this bound is for a manager gone meanwhile. */
#define MOVE_WAIT_NS (10000ull * 1000 * 1000)

/* Test hook: ONVM_MOVE_FAULT=import_delay_ms:N -- dst holds a move N ms
 * at its IN marker before it looks for the export (heartbeating), so a
 * test can kill it in the middle of a move. */
static int64_t import_delay_ms = -1;

static void
fault_import_delay(struct nf_ctx *nf)
{
	if (import_delay_ms < 0) {
		const char *f = getenv("ONVM_MOVE_FAULT");
		unsigned int ms;

		import_delay_ms = 0;
		if (f != NULL && sscanf(f, "import_delay_ms:%u", &ms) == 1) {
			import_delay_ms = ms;
			NF_LOG(WARNING, "fault injection: a move's import waits %u ms", ms);
		}
	}
	for (int64_t t = 0; t < import_delay_ms && !nf_stopping(nf); t++) {
		nfl_heartbeat(nf);
		usleep(1000);
	}
}

enum move_role { ROLE_NONE = 0, ROLE_SRC, ROLE_DST };

/* This NF's view of a move it takes part in, by slot.  What must survive
 * the process (a local standby promoted after the flip) is in the shared
 * record too, and a context made afresh starts from there. */
struct nfl_move {
	uint32_t gen;	  /* the move's (shm gen), 0: none */
	uint8_t role;	  /* enum move_role */
	bool exported;	  /* src: START handled */
	bool imported;	  /* dst: the state is in */
	bool end_ok;	  /* dst: src's END is out: its new packets may go */
	uint8_t publish;  /* PUB_*: shared progress due once the batch commits */
	uint32_t seen_pending; /* dst: tagged packets done with in this batch */
	struct onvm_move_xfer *xfer;
};

#define PUB_EXPORTED 0x1
#define PUB_IMPORTED 0x2
#define PUB_FREED 0x4
#define PUB_SEEN 0x8

static struct nfl_move moves[ONVM_MAX_MOVES];

/* An entry's bucket: the one its first packet was routed by, or, made
 * outside a packet handler, its key's (the manager hashes the same way). */
static bool
entry_moves(void *arg, const struct onvm_flow_key *key, uint32_t route)
{
	const struct onvm_move *mv = arg;

	if (route != 0)
		return onvm_bucket_in(mv->buckets, route - 1);
	return onvm_bucket_in(mv->buckets, ONVM_FLOW_BUCKET(onvm_flow_key_hash(key)));
}

/* Fail the move unless it was flipped (then dst owns the flows). */
static void
move_fail(struct onvm_move *mv, enum onvm_move_fail why)
{
	uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);
	uint8_t none = ONVM_MOVE_OK;

	if (st == ONVM_MOVE_FREE || st >= ONVM_MOVE_FLIPPING)
		return;
	/* the first reason given is the one (before the state says FAILED,
	 * so whoever sees FAILED sees a reason) */
	__atomic_compare_exchange_n(&mv->fail, &none, (uint8_t)why, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	while (st != ONVM_MOVE_FREE && st < ONVM_MOVE_FLIPPING)
		if (__atomic_compare_exchange_n(&mv->state, &st, ONVM_MOVE_FAILED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			NF_LOG(WARNING, "a move (gen %u) failed here: reason %d", mv->gen, why);
			return;
		}
}

/* Expiry keeps the entries of buckets moving to or from this NF: src's
 * from its export to END, dst's from the import until the move is over
 * (onvm_ft_set_expire_keep). */
static bool
entry_frozen(void *arg, const struct onvm_flow_key *key, uint32_t route)
{
	struct nf_ctx *nf = arg;

	for (uint32_t live = nf->moves_live; live != 0; live &= live - 1) {
		uint32_t slot = (uint32_t)__builtin_ctz(live);
		const struct nfl_move *c = &moves[slot];

		if ((c->role == ROLE_SRC && c->exported) || (c->role == ROLE_DST && c->imported))
			if (entry_moves(&nf->shm->moves[slot], key, route))
				return true;
	}
	return false;
}

static struct nfl_move *
ctx_of(struct nf_ctx *nf, uint32_t slot, uint32_t gen8)
{
	struct onvm_move *mv;
	struct nfl_move *c;

	if (slot >= ONVM_MAX_MOVES)
		return NULL;
	mv = &nf->shm->moves[slot];
	c = &moves[slot];
	if (c->gen != 0 && c->gen == __atomic_load_n(&mv->gen, __ATOMIC_ACQUIRE) &&
	    (c->gen & 0xff) == gen8)
		return c;
	if ((mv->gen & 0xff) != gen8 ||
	    __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE) == ONVM_MOVE_FREE)
		return NULL;
	if (mv->src == nf->instance_id)
		c->role = ROLE_SRC;
	else if (mv->dst == nf->instance_id)
		c->role = ROLE_DST;
	else
		return NULL;
	if (c->xfer == NULL) {
		char name[RTE_MEMZONE_NAMESIZE];
		const struct rte_memzone *mz;

		snprintf(name, sizeof(name), ONVM_MOVE_MZ_FMT, slot);
		mz = rte_memzone_lookup(name);
		if (mz == NULL)
			return NULL;
		c->xfer = mz->addr;
	}
	c->gen = mv->gen;
	c->exported = __atomic_load_n(&mv->src_exported, __ATOMIC_ACQUIRE) != 0;
	c->imported = __atomic_load_n(&mv->dst_imported, __ATOMIC_ACQUIRE) != 0;
	c->end_ok = __atomic_load_n(&mv->end_out, __ATOMIC_ACQUIRE) != 0;
	c->publish = 0;
	c->seen_pending = 0;
	if (nf->moves_live == 0)
		onvm_ft_set_expire_keep(entry_frozen, nf);
	nf->moves_live |= 1u << slot;
	return c;
}

static void
ctx_drop(struct nf_ctx *nf, uint32_t slot)
{
	if (moves[slot].publish != 0)
		return; /* (after the commit: nfl_move_committed drops it) */
	moves[slot].gen = 0;
	moves[slot].role = ROLE_NONE;
	nf->moves_live &= ~(1u << slot);
	if (nf->moves_live == 0)
		onvm_ft_set_expire_keep(NULL, NULL);
}

bool
nf_is_reprocessing(const struct nf_ctx *nf)
{
	return nf->move_cur != NULL;
}

void
nfl_move_adopt(struct nf_ctx *nf)
{
	/* A standby promoted in the middle of a move carries on from the
	 * shared record (its process never saw the markers before). */
	for (uint32_t slot = 0; slot < ONVM_MAX_MOVES; slot++) {
		const struct onvm_move *mv = &nf->shm->moves[slot];
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

		if (st != ONVM_MOVE_FREE && st != ONVM_MOVE_DONE && st != ONVM_MOVE_FAILED &&
		    (mv->src == nf->instance_id || mv->dst == nf->instance_id))
			(void)ctx_of(nf, slot, mv->gen & 0xff);
	}
}

/* The batch that made progress on a move has committed (a standby would
 * carry on from here): say so to the manager and the other NF. */
void
nfl_move_committed(struct nf_ctx *nf)
{
	for (uint32_t live = nf->moves_live; live != 0; live &= live - 1) {
		uint32_t slot = (uint32_t)__builtin_ctz(live);
		struct nfl_move *c = &moves[slot];
		struct onvm_move *mv = &nf->shm->moves[slot];
		uint8_t pub = c->publish;

		if (pub == 0)
			continue;
		c->publish = 0;
		if (mv->gen != c->gen) {
			c->seen_pending = 0;
			ctx_drop(nf, slot);
			continue;
		}
		if (pub & PUB_EXPORTED) {
			uint32_t st = ONVM_MOVE_STARTED;

			mv->t_exported = nfl_mono_ns();
			__atomic_store_n(&mv->src_exported, 1, __ATOMIC_RELEASE);
			__atomic_compare_exchange_n(&mv->state, &st, ONVM_MOVE_EXPORTED, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		}
		if (pub & PUB_IMPORTED) {
			uint32_t st = ONVM_MOVE_EXPORTED;

			mv->t_imported = nfl_mono_ns();
			__atomic_store_n(&mv->dst_imported, 1, __ATOMIC_RELEASE);
			if (!__atomic_compare_exchange_n(&mv->state, &st, ONVM_MOVE_IMPORTED, false,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				/* failed meanwhile: the poll frees what came in */
				__atomic_store_n(&mv->dst_imported, 0, __ATOMIC_RELEASE);
		}
		if (pub & PUB_SEEN) {
			__atomic_store_n(&mv->dst_seen, mv->dst_seen + c->seen_pending,
					 __ATOMIC_RELEASE);
			c->seen_pending = 0;
		}
		if (pub & PUB_FREED) {
			__atomic_store_n(&mv->src_freed, 1, __ATOMIC_RELEASE);
			ctx_drop(nf, slot);
		}
	}
	nf->move_pending = false;
}

/* Wait (spinning briefly, then sleeping 50 us at a time: src may need
 * our CPU) until `cond` holds, the move
 * failed, src is gone, or MOVE_WAIT_NS passed; the time goes to
 * dst_waits_ns. */
#define WAIT_FOR(nf, mv, cond)                                                              \
	({                                                                                  \
		uint64_t t0_ = nfl_mono_ns(), now_ = t0_;                                   \
		unsigned int spins_ = 0;                                                    \
		nfl_rt_leave(nf); /* (src may be on this CPU at normal priority) */          \
		/* (entry backpressure does not wait for a ring we are not    \
		 * draining meanwhile) */                                       \
		__atomic_store_n(&nf->slot->move_waiting, 1, __ATOMIC_RELEASE);               \
		while (!(cond) &&                                                           \
		       __atomic_load_n(&(mv)->state, __ATOMIC_ACQUIRE) != ONVM_MOVE_FAILED && \
		       !__atomic_load_n(&(mv)->src_gone, __ATOMIC_ACQUIRE) &&               \
		       now_ - t0_ < MOVE_WAIT_NS) {                                         \
			if (++spins_ < 64)                                                  \
				rte_pause();                                                \
			else if (spins_ < 128)                                              \
				sched_yield();                                              \
			else /* (a yield keeps the CPU from a src of equal weight) */       \
				usleep(50);                                                 \
			nfl_heartbeat(nf);                                                  \
			now_ = nfl_mono_ns();                                               \
		}                                                                           \
		__atomic_store_n(&nf->slot->move_waiting, 0, __ATOMIC_RELEASE);               \
		(mv)->dst_waits_ns += now_ - t0_;                                           \
		(cond);                                                                     \
	})

/* The flow tables among the NF's state regions, attached. */
static uint32_t
tables(struct nf_ctx *nf, struct onvm_ft *ft, uint32_t *region)
{
	uint32_t n = 0;

	if (!nf->has_state)
		return 0;
	for (uint32_t r = 0; r < nf->state.n_regions; r++)
		if (onvm_ft_attach(&ft[n], &nf->state, nf_state_region_ptr(&nf->state, r),
				   nf->state.regions[r].size) == 0)
			region[n++] = r;
	return n;
}

static int
tag_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Did src handle `tag` before its export (so the state holds it)? */
static bool
included(const struct onvm_move_xfer *x, uint64_t tag)
{
	uint32_t lo = 0, hi = RTE_MIN(x->n_included, (uint32_t)ONVM_MOVE_INCLUDED_MAX);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (x->included[mid] == tag)
			return true;
		if (x->included[mid] < tag)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* src at START: the buckets' entries, as they are after every packet
 * before the marker, into the move's memzone. */
static void
export_state(struct nf_ctx *nf, struct onvm_move *mv, struct nfl_move *c)
{
	struct onvm_ft ft[NF_STATE_MAX_REGIONS];
	uint32_t region[NF_STATE_MAX_REGIONS], n = tables(nf, ft, region);
	uint64_t now = nf_clock_ns(), used = 0, flows = 0, held = 0;
	uint8_t *out = c->xfer->data;

	for (uint32_t i = 0; i < n; i++) {
		struct onvm_move_section sec = {
			.region = region[i],
			.capacity = onvm_ft_capacity(&ft[i]),
			.value_size = ft[i].hdr->value_size, /* exactly: dst may format it */
		};
		uint32_t cursor = 0, nrec = 0;
		size_t got;

		held += onvm_ft_count(&ft[i]);
		if (ONVM_MOVE_XFER_MAX - used < sizeof(sec)) {
			move_fail(mv, ONVM_MOVE_FAIL_EXPORT);
			return;
		}
		got = onvm_ft_export(&ft[i], entry_moves, mv, now, &cursor,
				     out + used + sizeof(sec), ONVM_MOVE_XFER_MAX - used - sizeof(sec),
				     &nrec);
		if (cursor <= ft[i].mask) {
			move_fail(mv, ONVM_MOVE_FAIL_EXPORT);
			return;
		}
		sec.nrec = nrec;
		sec.bytes = got;
		memcpy(out + used, &sec, sizeof(sec));
		used += sizeof(sec) + got;
		flows += nrec;
	}
	c->xfer->len = used;
	if (c->xfer->n_included > ONVM_MOVE_INCLUDED_MAX) {
		move_fail(mv, ONVM_MOVE_FAIL_EXPORT);
		return;
	}
	qsort(c->xfer->included, c->xfer->n_included, sizeof(c->xfer->included[0]), tag_cmp);
	mv->exported_flows = flows;
	mv->exported_bytes = used;
	mv->src_flows = held;
	c->exported = true;
	/* EXPORTED once this batch commits: dst imports the state as of the
	 * marker, and src's packets after it are logged for dst from now */
	c->publish |= PUB_EXPORTED;
	nf->move_pending = true;
}

/* Remove the buckets' entries from every table (src at END; dst after a
 * failed move). */
static uint64_t
free_state(struct nf_ctx *nf, struct onvm_move *mv)
{
	struct onvm_ft ft[NF_STATE_MAX_REGIONS];
	uint32_t region[NF_STATE_MAX_REGIONS], n = tables(nf, ft, region);
	uint64_t freed = 0;

	for (uint32_t i = 0; i < n; i++)
		freed += onvm_ft_remove_if(&ft[i], entry_moves, mv);
	return freed;
}

/* dst at IN: wait for src's export, then take it in. */
static void
import_state(struct nf_ctx *nf, struct onvm_move *mv, struct nfl_move *c)
{
	const uint8_t *in = c->xfer->data;
	uint64_t at = 0, len, flows = 0, now;
	bool ready;

	fault_import_delay(nf);
	if (mv->method == ONVM_MOVE_BUFFER)
		/* src's output before START routed on: dst's first output of
		 * the buckets cannot overtake it */
		ready = WAIT_FOR(nf, mv, __atomic_load_n(&mv->start_out, __ATOMIC_ACQUIRE) &&
						 __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE) >=
							 ONVM_MOVE_EXPORTED);
	else
		ready = WAIT_FOR(nf, mv, __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE) >=
						 ONVM_MOVE_EXPORTED);
	if (!ready) {
		move_fail(mv, ONVM_MOVE_FAIL_WAIT);
		return;
	}
	len = RTE_MIN(c->xfer->len, (uint64_t)ONVM_MOVE_XFER_MAX); /* (shared memory) */
	now = nf_clock_ns();
	while (at < len) {
		struct onvm_move_section sec;
		enum onvm_ft_import_error err = ONVM_FT_IMPORT_OK;
		struct onvm_ft ft;
		char why[160];
		void *mem;
		uint32_t got;

		if (len - at < sizeof(sec))
			break;
		memcpy(&sec, in + at, sizeof(sec));
		at += sizeof(sec);
		if (sec.region >= nf->state.n_regions || sec.bytes > len - at) {
			move_fail(mv, ONVM_MOVE_FAIL_IMPORT);
			NF_LOG(ERR, "move: a section for region %u of %" PRIu64 " bytes: not ours",
			       sec.region, sec.bytes);
			return;
		}
		mem = nf_state_region_ptr(&nf->state, sec.region);
		/* A table dst has not formatted yet (no packet of its own so
		 * far) is formatted with src's shape: the same NF's. */
		if (onvm_ft_attach(&ft, &nf->state, mem, nf->state.regions[sec.region].size) < 0 &&
		    onvm_ft_open(&ft, &nf->state, mem, nf->state.regions[sec.region].size,
				 sec.capacity, sec.value_size, why, sizeof(why)) < 0) {
			move_fail(mv, ONVM_MOVE_FAIL_IMPORT);
			NF_LOG(ERR, "move: region %u: %s", sec.region, why);
			return;
		}
		got = onvm_ft_import(&ft, in + at, sec.bytes, now, &err);
		flows += got;
		if (err != ONVM_FT_IMPORT_OK) {
			move_fail(mv, ONVM_MOVE_FAIL_IMPORT);
			NF_LOG(ERR, "move: region %u: record %u refused (%s)", sec.region, got,
			       onvm_ft_import_error_str(err));
			free_state(nf, mv);
			return;
		}
		at += sec.bytes;
	}
	mv->imported_flows = flows;
	c->imported = true;
	/* IMPORTED (the manager may flip) only once the state is committed:
	 * a standby promoted later has it */
	c->publish |= PUB_IMPORTED;
	nf->move_pending = true;
}

void
nfl_move_marker(struct nf_ctx *nf, const struct onvm_marker *mk)
{
	uint32_t slot = ONVM_MOVE_TAG_SLOT(mk->cut_id);
	struct nfl_move *c = ctx_of(nf, slot, ONVM_MOVE_TAG_GEN(mk->cut_id));
	struct onvm_move *mv;

	if (c == NULL)
		return; /* a move over or not ours: stale */
	mv = &nf->shm->moves[slot];
	if (!nf->slot->movable) {
		/* (the manager refuses such a move: a guard) */
		move_fail(mv, ONVM_MOVE_FAIL_NF);
		ctx_drop(nf, slot);
		return;
	}
	if (__atomic_load_n(&mv->state, __ATOMIC_ACQUIRE) == ONVM_MOVE_FAILED)
		return; /* (the poll drops the context) */
	switch (mk->base_id) {
	case ONVM_MOVE_MK_START:
		if (c->role == ROLE_SRC && !c->exported)
			export_state(nf, mv, c);
		break;
	case ONVM_MOVE_MK_IN:
		if (c->role == ROLE_DST && !c->imported)
			import_state(nf, mv, c);
		break;
	case ONVM_MOVE_MK_END:
		if (c->role == ROLE_SRC) {
			/* Every packet of the buckets src will ever get is
			 * behind it: its copy of their state dies here. */
			mv->freed_flows = free_state(nf, mv);
			c->publish |= PUB_FREED;
			nf->move_pending = true;
		}
		break;
	default:
		break;
	}
}

/* dst is done with one more tagged packet: counted in the shared record
 * once its batch commits (a standby of dst taking over before that would
 * have the packet again: the manager must not call the move done yet). */
static inline void
dst_seen(struct nf_ctx *nf, const struct onvm_move *mv)
{
	struct nfl_move *c = &moves[mv - nf->shm->moves];

	c->seen_pending++;
	c->publish |= PUB_SEEN;
	nf->move_pending = true;
}

/* A copy at dst: run the handler on it, or skip it (src had it before
 * the export, or the move failed).  Its ND values come from src's log
 * entry for it, waited for only if the handler draws one
 * (nfl_move_log_entry): dst need not wait for src otherwise. */
static bool
copy_begin(struct nf_ctx *nf, struct onvm_pkt_meta *meta)
{
	uint64_t tag = meta->ts;
	uint32_t slot = ONVM_MOVE_TAG_SLOT(tag);
	struct nfl_move *c = ctx_of(nf, slot, ONVM_MOVE_TAG_GEN(tag));
	struct onvm_move *mv;

	nf->slot->stats.move_copies++;
	if (c == NULL || c->role != ROLE_DST)
		return false;
	mv = &nf->shm->moves[slot];
	if (!c->imported || __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE) == ONVM_MOVE_FAILED) {
		dst_seen(nf, mv);
		return false;
	}
	if (included(c->xfer, tag)) {
		mv->skipped_included++;
		dst_seen(nf, mv);
		return false;
	}
	nf->move_replay = NULL;
	nf->move_replay_fetched = false;
	nf->move_log_fetch = nfl_move_log_entry;
	nf->move_replay_tag = tag;
	nf->move_replay_xfer = c->xfer;
	nf->move_replay_i = 0;
	nf->move_cur = mv;
	nf->move_cur_gen = c->gen;
	return true;
}

const struct onvm_move_log_entry *
nfl_move_log_entry(struct nf_ctx *nf)
{
	struct onvm_move *mv = nf->move_cur;
	uint64_t tag = nf->move_replay_tag;
	const struct onvm_move_log_entry *e =
		&nf->move_replay_xfer->log[ONVM_MOVE_TAG_SEQ(tag) & (ONVM_MOVE_LOG_SIZE - 1)];

	if (!WAIT_FOR(nf, mv, __atomic_load_n(&e->tag, __ATOMIC_ACQUIRE) >= tag) ||
	    mv->gen != nf->move_cur_gen) {
		/* src never handled it (in time): before the flip the move
		 * cannot be trusted; after it, src is gone or stuck (the
		 * value is drawn afresh, counted: nd_short) */
		if (mv->gen == nf->move_cur_gen)
			move_fail(mv, __atomic_load_n(&mv->src_gone, __ATOMIC_ACQUIRE)
					      ? ONVM_MOVE_FAIL_SRC_GONE
					      : ONVM_MOVE_FAIL_WAIT);
		return NULL;
	}
	if (__atomic_load_n(&e->tag, __ATOMIC_ACQUIRE) != tag) {
		move_fail(mv, ONVM_MOVE_FAIL_LOG); /* overwritten: dst fell too far behind */
		return NULL;
	}
	/* (DROPPED: src never had it, and the manager failed the move) */
	return (e->flags & ONVM_MOVE_LOG_DROPPED) ? NULL : e;
}

/* A tagged packet at src: log what the export does not hold. */
static void
src_begin(struct nf_ctx *nf, struct onvm_pkt_meta *meta)
{
	uint64_t tag = meta->ts;
	uint32_t slot = ONVM_MOVE_TAG_SLOT(tag);
	struct nfl_move *c = ctx_of(nf, slot, ONVM_MOVE_TAG_GEN(tag));
	struct onvm_move *mv;
	struct onvm_move_log_entry *e;
	uint64_t seq = ONVM_MOVE_TAG_SEQ(tag);

	if (c == NULL || c->role != ROLE_SRC)
		return;
	mv = &nf->shm->moves[slot];
	if (__atomic_load_n(&mv->state, __ATOMIC_ACQUIRE) == ONVM_MOVE_FAILED)
		return;
	/* dst has not had the copy that used this entry last: it would read
	 * ours instead */
	if (seq > __atomic_load_n(&mv->dst_seen, __ATOMIC_ACQUIRE) + ONVM_MOVE_LOG_SIZE) {
		move_fail(mv, ONVM_MOVE_FAIL_LOG);
		return;
	}
	if (!c->exported) {
		/* before START: its effect will be in the export */
		if (c->xfer->n_included < ONVM_MOVE_INCLUDED_MAX)
			c->xfer->included[c->xfer->n_included] = tag;
		c->xfer->n_included++; /* (over the max: the export fails) */
	}
	e = &c->xfer->log[seq & (ONVM_MOVE_LOG_SIZE - 1)];
	e->flags = c->exported ? 0 : ONVM_MOVE_LOG_INCLUDED;
	e->n_nd = 0;
	nf->move_rec = e;
	nf->move_rec_tag = tag;
}

/* Buffering's packet at dst (sent to it instead of src): processed once
 * the state is in; a failed move's are lost (counted). */
static bool
buffered_begin(struct nf_ctx *nf, struct onvm_pkt_meta *meta)
{
	uint32_t slot = ONVM_MOVE_TAG_SLOT(meta->ts);
	struct nfl_move *c = ctx_of(nf, slot, ONVM_MOVE_TAG_GEN(meta->ts));
	struct onvm_move *mv;

	if (c == NULL || c->role != ROLE_DST)
		return true; /* not ours to judge */
	mv = &nf->shm->moves[slot];
	dst_seen(nf, mv);
	if (!c->imported || __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE) == ONVM_MOVE_FAILED) {
		mv->dst_dropped++;
		return false;
	}
	return true;
}

bool
nfl_move_pkt_begin(struct nf_ctx *nf, struct rte_mbuf *m, struct onvm_pkt_meta *meta)
{
	(void)m;
	if (ONVM_MOVE_TAG_IS(meta->ts)) {
		const struct onvm_move *mv =
			&nf->shm->moves[ONVM_MOVE_TAG_SLOT(meta->ts) % ONVM_MAX_MOVES];

		if (meta->flags & ONVM_PKT_F_MOVE_COPY)
			return copy_begin(nf, meta);
		if (mv->src == nf->instance_id) {
			src_begin(nf, meta);
			return true;
		}
		return buffered_begin(nf, meta);
	}
	/* A new packet of buckets moved here: not before src's last one of
	 * them is out (REPROCESS; buffering waited at IN). */
	for (uint32_t live = nf->moves_live; live != 0; live &= live - 1) {
		uint32_t slot = (uint32_t)__builtin_ctz(live);
		struct nfl_move *c = &moves[slot];
		struct onvm_move *mv = &nf->shm->moves[slot];

		/* (buffering: src has had none of them since START, whose
		 * output dst waited for at IN) */
		if (c->role != ROLE_DST || c->end_ok || !c->imported ||
		    mv->method == ONVM_MOVE_BUFFER ||
		    !onvm_bucket_in(mv->buckets, ONVM_FLOW_BUCKET(meta->flow_hash)))
			continue;
		if (!WAIT_FOR(nf, mv, __atomic_load_n(&mv->end_out, __ATOMIC_ACQUIRE) != 0))
			/* src gone or stuck: its last output may come after
			 * ours -- said */
			__atomic_store_n(&mv->lossy, 1, __ATOMIC_RELEASE);
		c->end_ok = true;
	}
	return true;
}

void
nfl_move_pkt_end(struct nf_ctx *nf, struct onvm_pkt_meta *meta)
{
	if (nf->move_rec != NULL) {
		/* (tag last: dst reads the entry once it sees its tag) */
		__atomic_store_n(&nf->move_rec->tag, nf->move_rec_tag, __ATOMIC_RELEASE);
		nf->move_rec = NULL;
	}
	if (nf->move_cur != NULL) {
		struct onvm_move *mv = nf->move_cur;

		/* Reprocessed: the state caught up; the output is src's. */
		meta->action = ONVM_ACTION_DROP;
		if (mv->gen == nf->move_cur_gen) {
			mv->reprocessed++;
			dst_seen(nf, mv);
		}
		nf->move_cur = NULL;
		nf->move_replay = NULL;
		nf->move_replay_xfer = NULL;
	}
}

void
nfl_move_poll(struct nf_ctx *nf)
{
	for (uint32_t live = nf->moves_live; live != 0; live &= live - 1) {
		uint32_t slot = (uint32_t)__builtin_ctz(live);
		struct nfl_move *c = &moves[slot];
		struct onvm_move *mv = &nf->shm->moves[slot];
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

		if (mv->gen != c->gen) {
			ctx_drop(nf, slot);
			continue;
		}
		if (st == ONVM_MOVE_FAILED) {
			/* dst: nothing of a failed move stays (src keeps its
			 * flows); copies still queued are skipped.  Not when
			 * src died: its buckets may now be routed here, and
			 * what came in is the best state there is. */
			if (c->role == ROLE_DST && c->imported &&
			    __atomic_load_n(&mv->fail, __ATOMIC_ACQUIRE) != ONVM_MOVE_FAIL_SRC_GONE) {
				free_state(nf, mv);
				c->imported = false;
			}
			/* (a copy still queued makes a context again, and is
			 * skipped: nothing imported) */
			ctx_drop(nf, slot);
		} else if (st == ONVM_MOVE_DONE) {
			ctx_drop(nf, slot);
		}
	}
}
