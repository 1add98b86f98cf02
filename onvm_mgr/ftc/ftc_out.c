/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_out.c -- what leaves this node of an FTC chain, on the TX unit.
 *
 * The queue out (`oq`) holds log parts for the next node in the order they
 * must arrive: the logs this node carries, and its NF's own updates, taken
 * from the NF's ring into the head's log (kept until held f + 1 times)
 * and cut into parts that fit a frame (ftc_parts.h).  A packet leaving
 * takes as many of them as fit beside it, and every held and need entry
 * known -- its own NF's need being the update the NF published last,
 * at or above the one the packet's batch made (nf_ftc.c).  A log part
 * that does not fit goes ahead of the packet on a propagating frame: an
 * update is never behind a packet that depends on it.  When no packet
 * goes, what waits goes on propagating frames `propagate_us` after it
 * came: release never waits on future traffic longer than that.  An
 * update not held within `retrans_us` is sent again (the replicas' gap
 * request is the held vector that stops short of it).
 *
 * The last node (the egress) holds each packet, with the needs it came
 * with, until the held vector covers them, releases in order, and sends
 * the held vector back to the forwarder on the feedback link whenever it
 * grew (and again whenever a retransmission shows a head still waits).
 */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "dataplane/dataplane.h"
#include "ftc_parts.h"
#include "ftc_priv.h"
#include "onvm_wire.h"

#define OQ_ALIGN(x) (((x) + 7u) & ~(uint64_t)7u)
#define OQ_SKIP UINT32_MAX
#define FB_MIN_US 20 /* feedback frames at most this often */

/* ---- the queue out ---- */

static inline uint64_t
oq_item_len(uint32_t len)
{
	return OQ_ALIGN(sizeof(struct ftc_out_log) + len);
}

bool
ftc_oq_push(struct ftc_node *n, uint16_t instance, uint8_t part, uint8_t parts, uint64_t seq,
	    const uint8_t *data, uint32_t len)
{
	const uint64_t need = oq_item_len(len);
	const uint64_t idx = n->oq_tail % n->oq_size;
	uint64_t skip = 0;
	struct ftc_out_log *h;

	if (idx + need > n->oq_size)
		skip = n->oq_size - idx;
	if (n->oq_size - (n->oq_tail - n->oq_head) < skip + need)
		return false;
	if (skip > 0) {
		h = (struct ftc_out_log *)(n->oq + idx);
		h->len = OQ_SKIP;
	}
	h = (struct ftc_out_log *)(n->oq + (n->oq_tail + skip) % n->oq_size);
	*h = (struct ftc_out_log){.instance = instance, .part = part, .parts = parts,
				  .len = len, .seq = seq, .tsc = rte_rdtsc()};
	memcpy(h + 1, data, len);
	n->oq_tail += skip + need;
	if (n->pending_tsc == 0)
		n->pending_tsc = h->tsc;
	return true;
}

static struct ftc_out_log *
oq_peek(struct ftc_node *n)
{
	while (n->oq_head != n->oq_tail) {
		const uint64_t idx = n->oq_head % n->oq_size;
		struct ftc_out_log *h = (struct ftc_out_log *)(n->oq + idx);

		if (h->len != OQ_SKIP)
			return h;
		n->oq_head += n->oq_size - idx;
	}
	return NULL;
}

static void
oq_pop(struct ftc_node *n, const struct ftc_out_log *h)
{
	n->oq_head += oq_item_len(h->len);
}

static uint64_t
oq_free(const struct ftc_node *n)
{
	return n->oq_size - (n->oq_tail - n->oq_head);
}

/* ---- the head: the NF's updates ---- */

static struct onvm_nf_slot *
nf_slot(struct ftc_node *n)
{
	int id = mgr_service_pick(mgr.shm, n->service, 0);
	struct onvm_nf_slot *s;

	if (id < 0)
		return NULL;
	s = &mgr.shm->nfs[id];
	/* (the block may go with a dead NF: looked at before every use) */
	if (__atomic_load_n(&s->state_mz[0], __ATOMIC_ACQUIRE) == '\0' || s->ftc_size == 0)
		return NULL;
	if (n->nf_ring == NULL || n->nf_slot != id || n->nf_gen != s->generation) {
		n->nf_ring = onvm_ftc_ring_attach(mgr.state_seg.base + s->ftc_off, s->ftc_size);
		n->nf_slot = (uint16_t)id;
		n->nf_gen = s->generation;
	}
	return n->nf_ring != NULL ? s : NULL;
}

/* Queue every part of kept update `seq`; false if the queue had no room
 * for all of them (nothing queued then). */
bool
ftc_queue_update(struct ftc_node *n, uint64_t seq)
{
	const uint8_t *d;
	uint32_t len;
	unsigned int parts;

	if (!ftc_hlog_get(n->hlog, seq, &d, &len))
		return true; /* held already */
	parts = ftc_parts_count(d, len, n->part_budget);
	if (parts == 0) {
		/* (mgr_ftc_state_check() keeps every update within 255 parts) */
		n->c.uncut++;
		return false;
	}
	if (oq_free(n) < (uint64_t)parts * oq_item_len(n->part_budget) + 64)
		return false;
	for (unsigned int k = 0; k < parts; k++) {
		int pl = ftc_part_build(d, len, n->part_budget, k, n->part_buf);

		if (pl < 0 || !ftc_oq_push(n, n->own, (uint8_t)k, (uint8_t)parts, seq, n->part_buf,
					   (uint32_t)pl))
			return false; /* (room was checked) */
		n->c.own_parts++;
	}
	n->sent_tsc[seq % n->cfg->log_updates] = rte_rdtsc();
	return true;
}

/* The NF's new updates into the head's log and the queue out. */
static void
pull_own(struct ftc_node *n)
{
	struct onvm_ftc_entry e;

	if (nf_slot(n) == NULL)
		return;
	while (onvm_ftc_ring_peek(n->nf_ring, &e)) {
		uint64_t seq;

		/* room for its parts first: an update logged is an update queued */
		if (oq_free(n) < 2 * (uint64_t)e.len + 64 * 256 + 4096)
			return;
		seq = ftc_hlog_append_encoded(n->hlog, e.records, e.len);
		if (seq == 0) {
			n->c.own_log_full++; /* the NF waits on its ring meanwhile */
			return;
		}
		if (seq != e.seq) /* (the NF numbers them as the log does) */
			MGR_LOG(ERR, "FTC: the NF's update %" PRIu64 " logged as %" PRIu64, e.seq,
				seq);
		onvm_ftc_ring_take(n->nf_ring);
		n->c.own_updates++;
		n->c.own_bytes += e.len;
		/* a whole-state update supersedes what the log keeps (every
		 * replica jumps to it): a retransmission starts from it */
		if (e.len >= 2 && onvm_get_be16(e.records) == ONVM_FTC_RESET_REGION &&
		    ftc_hlog_oldest(n->hlog) < seq) {
			n->c.forgot += seq - ftc_hlog_oldest(n->hlog);
			ftc_hlog_commit(n->hlog, seq - 1);
		}
		if (ftc_queue_update(n, seq))
			n->own_sent = seq;
	}
}

/* The held vector moved for this node's NF: prune.  The oldest update
 * sent `retrans_us` ago and not held since: sent again, with the ones
 * after it that are as old, as many as a replica's window takes (the
 * replicas apply in order: what is past the window they drop).  Each
 * round without progress waits twice as long, up to 64 times: a group
 * member that is down is not flooded while it is replaced. */
static int
head_timers(struct ftc_node *n, uint64_t now)
{
	const uint64_t held = n->held[n->own];
	uint64_t last, oldest;
	int work = 0;

	if (held >= ftc_hlog_next(n->hlog)) {
		/* held past what this head made: another incarnation's */
		if (held != n->held_ahead_seen) {
			n->held_ahead_seen = held;
			n->c.held_ahead++;
		}
		return 0;
	}
	if (ftc_hlog_oldest(n->hlog) != 0 && held >= ftc_hlog_oldest(n->hlog)) {
		ftc_hlog_commit(n->hlog, held);
		n->retrans_backoff = 0;
		work++;
	}
	if (ftc_hlog_count(n->hlog) == 0)
		return work;
	oldest = ftc_hlog_oldest(n->hlog);
	last = RTE_MIN(RTE_MIN(n->own_sent, ftc_hlog_next(n->hlog) - 1),
		       oldest + n->cfg->window - 1);
	if (oldest > last ||
	    now - n->sent_tsc[oldest % n->cfg->log_updates] < n->retrans_cycles << n->retrans_backoff)
		return work;
	n->c.retransmits++;
	if (n->retrans_backoff < 6)
		n->retrans_backoff++;
	for (uint64_t s = oldest; s <= last; s++) {
		if (!ftc_queue_update(n, s))
			break;
		n->c.retrans_parts++;
	}
	return work + 1;
}

/* ---- frames out ---- */

/* The held and need entries a frame carries (need only with a packet). */
static unsigned int
vectors(struct ftc_node *n, bool packet, uint64_t own_need, struct ftc_commit *c)
{
	unsigned int k = 0;

	for (uint16_t i = 0; i < n->n_inst; i++)
		if (n->held[i] > 0)
			c[k++] = (struct ftc_commit){.instance = i, .kind = FTC_HELD,
						     .seq = n->held[i]};
	for (uint16_t i = 0; i < n->n_inst; i++) {
		const struct ftc_void *v = ftc_last_void(n, i);

		if (v != NULL)
			c[k++] = (struct ftc_commit){.instance = i, .kind = FTC_VOID,
						     .span = v->span, .seq = v->seq};
	}
	/* to the next member of each group this node is inside of */
	for (unsigned int j = 0; j < n->n_rep; j++)
		if (!n->rep[j].tail)
			c[k++] = (struct ftc_commit){.instance = n->rep[j].instance,
						     .kind = FTC_APPLIED,
						     .seq = ftc_group_applied(&n->rep[j])};
	if (!packet)
		return k;
	for (uint16_t i = 0; i < n->n_inst; i++) {
		uint64_t need = n->need[i];

		if (n->head && i == n->own && own_need > need)
			need = own_need;
		if (need > 0)
			c[k++] = (struct ftc_commit){.instance = i, .kind = FTC_NEED, .seq = need};
	}
	return k;
}

/* The FTC header and section for these logs and entries at `w` (the
 * frame's byte 12, after the MACs); returns the bytes written. */
static uint32_t
put_header(uint8_t *w, uint8_t flags, uint16_t inner, struct ftc_out_log *const *logs,
	   unsigned int n_logs, const struct ftc_commit *c, unsigned int n_c)
{
	uint32_t pos = FTC_HEAD_LEN, sec = 0;

	for (unsigned int k = 0; k < n_logs; k++)
		sec += FTC_LOG_HEAD_LEN + logs[k]->len;
	sec += n_c * FTC_COMMIT_LEN;
	ftc_put_head(w, flags, inner, (uint16_t)sec, n_logs, n_c);
	for (unsigned int k = 0; k < n_logs; k++) {
		const struct ftc_out_log *l = logs[k];

		ftc_put_log_head(w + pos, l->instance, l->part, l->parts, l->len, l->seq);
		memcpy(w + pos + FTC_LOG_HEAD_LEN, l + 1, l->len);
		pos += FTC_LOG_HEAD_LEN + l->len;
	}
	for (unsigned int k = 0; k < n_c; k++) {
		ftc_put_commit(w + pos, &c[k]);
		pos += FTC_COMMIT_LEN;
	}
	return pos;
}

/* Logs from the queue's head that fit in `room` bytes of section. */
static unsigned int
pick_logs(struct ftc_node *n, uint32_t room, struct ftc_out_log **logs)
{
	unsigned int k = 0;
	uint64_t at = n->oq_head;

	/* (oq_peek() skips the end's filler; the rest are walked in place) */
	if (oq_peek(n) == NULL)
		return 0;
	at = n->oq_head;
	while (k < FTC_MAX_LOGS && at != n->oq_tail) {
		struct ftc_out_log *h = (struct ftc_out_log *)(n->oq + at % n->oq_size);

		if (h->len == OQ_SKIP) {
			at += n->oq_size - at % n->oq_size;
			continue;
		}
		if (FTC_LOG_HEAD_LEN + h->len > room)
			break;
		room -= FTC_LOG_HEAD_LEN + h->len;
		logs[k++] = h;
		at += oq_item_len(h->len);
	}
	return k;
}

static void
pop_logs(struct ftc_node *n, struct ftc_out_log *const *logs, unsigned int k)
{
	for (unsigned int i = 0; i < k; i++) {
		oq_peek(n); /* (past a filler) */
		oq_pop(n, logs[i]);
	}
}

static void
frame_sent(struct ftc_node *n)
{
	n->held_dirty = false;
	n->pending_tsc = oq_peek(n) != NULL ? oq_peek(n)->tsc : 0;
}

/* A frame of the node's own for `port` (a propagating or state frame):
 * its MACs written -- to everyone (nothing on these links reads them),
 * from the port; NULL, counted, if the pool is empty. */
uint8_t *
ftc_frame_new(struct ftc_node *n, uint16_t port, struct rte_mbuf **mp)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mgr.pool);
	struct rte_ether_addr src;
	uint8_t *f;

	*mp = m;
	if (m == NULL) {
		n->c.out_no_mbuf++;
		return NULL;
	}
	f = rte_pktmbuf_mtod(m, uint8_t *);
	memset(f, 0xff, 6);
	rte_eth_macaddr_get(port, &src);
	memcpy(f + 6, src.addr_bytes, 6);
	return f;
}

/* The frame `len` bytes long (padded to Ethernet's minimum: both parsers
 * ignore padding where a frame may have it), to `port`. */
void
ftc_frame_send(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint32_t len, uint16_t port)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);

	if (len < RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN) {
		memset(f + len, 0, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN - len);
		len = RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	mgr_dp_to_port(ctx, m, port);
}

/* A propagating frame to `port`: queued logs that fit and the held
 * vector.  False if no mbuf. */
static bool
send_propagating(struct mgr_dp_ctx *ctx, struct ftc_node *n, uint16_t port)
{
	struct ftc_commit c[4 * FTC_INST_MAX];
	struct ftc_out_log *logs[FTC_MAX_LOGS];
	unsigned int nc = vectors(n, false, 0, c), nl;
	struct rte_mbuf *m;
	uint8_t *f = ftc_frame_new(n, port, &m);

	if (f == NULL)
		return false;
	nl = port == n->out_port ? pick_logs(n, n->frame_max - FTC_MAC_LEN - FTC_HEAD_LEN -
							    nc * FTC_COMMIT_LEN,
					       logs)
				 : 0;
	if (nl == 0 && port == n->out_port && oq_peek(n) != NULL) {
		/* a carried part no frame of this node takes (the node before
		 * cut it for a larger MTU): dropped, counted -- its head sends
		 * it again, and a matching configuration cuts it to fit */
		n->c.carry_full++;
		oq_pop(n, oq_peek(n));
	}
	ftc_frame_send(ctx, m,
		       FTC_MAC_LEN + put_header(f + FTC_MAC_LEN, FTC_F_PROPAGATE, 0, logs, nl, c, nc),
		       port);
	pop_logs(n, logs, nl);
	if (port == n->out_port) {
		n->c.out_propagating++;
		frame_sent(n);
	}
	return true;
}

/* `m` to the next node with what fits beside it. */
static void
send_packet(struct mgr_dp_ctx *ctx, struct ftc_node *n, struct rte_mbuf *m)
{
	struct ftc_commit c[4 * FTC_INST_MAX];
	struct ftc_out_log *logs[FTC_MAX_LOGS];
	uint64_t own_need = 0;
	const uint32_t plen = rte_pktmbuf_pkt_len(m);
	unsigned int nc, nl;
	uint32_t fixed, room, sec, total;
	uint16_t inner;
	uint8_t *f;

	if (n->head) {
		struct onvm_nf_slot *s = nf_slot(n);

		/* read before the updates are pulled: they cover it */
		if (s != NULL)
			own_need = __atomic_load_n(&s->ftc_seq, __ATOMIC_ACQUIRE);
		pull_own(n);
	}
	nc = vectors(n, true, own_need, c);
	fixed = plen + FTC_HEAD_LEN - 2 + nc * FTC_COMMIT_LEN;
	if (plen < FTC_MAC_LEN + 2 || fixed > n->frame_max) {
		n->c.out_too_big++; /* (the link's MTU leaves no room for the header) */
		rte_pktmbuf_free(m);
		return;
	}
	/* logs that do not fit beside it go ahead of it */
	for (;;) {
		struct ftc_out_log *h = oq_peek(n);

		if (h == NULL || FTC_LOG_HEAD_LEN + h->len <= n->frame_max - fixed)
			break;
		if (!send_propagating(ctx, n, n->out_port))
			break;
	}
	room = n->frame_max - fixed;
	nl = pick_logs(n, room, logs);
	sec = nc * FTC_COMMIT_LEN;
	for (unsigned int k = 0; k < nl; k++)
		sec += FTC_LOG_HEAD_LEN + logs[k]->len;
	total = plen + FTC_HEAD_LEN - 2 + sec;
	if (m->nb_segs == 1 && rte_pktmbuf_headroom(m) >= total - plen) {
		/* in place: the MACs move to the new front, the payload stays */
		uint8_t *old = rte_pktmbuf_mtod(m, uint8_t *);

		inner = onvm_get_be16(old + FTC_MAC_LEN);
		f = (uint8_t *)rte_pktmbuf_prepend(m, (uint16_t)(total - plen));
		memmove(f, old, FTC_MAC_LEN);
		put_header(f + FTC_MAC_LEN, 0, inner, logs, nl, c, nc);
	} else {
		struct rte_mbuf *h = rte_pktmbuf_alloc(mgr.pool);
		uint8_t hdr[FTC_MAC_LEN + 2];
		const uint8_t *p;

		if (h == NULL) {
			n->c.out_no_mbuf++;
			rte_pktmbuf_free(m);
			return;
		}
		p = rte_pktmbuf_read(m, 0, sizeof(hdr), hdr);
		inner = onvm_get_be16(p + FTC_MAC_LEN);
		f = rte_pktmbuf_mtod(h, uint8_t *);
		memcpy(f, p, FTC_MAC_LEN);
		put_header(f + FTC_MAC_LEN, 0, inner, logs, nl, c, nc);
		p = rte_pktmbuf_read(m, FTC_MAC_LEN + 2, plen - FTC_MAC_LEN - 2,
				     f + (total - plen) + FTC_MAC_LEN + 2);
		if (p != f + (total - plen) + FTC_MAC_LEN + 2)
			memcpy(f + (total - plen) + FTC_MAC_LEN + 2, p, plen - FTC_MAC_LEN - 2);
		h->data_len = (uint16_t)total;
		h->pkt_len = total;
		rte_pktmbuf_free(m);
		m = h;
		n->c.out_copied++;
	}
	pop_logs(n, logs, nl);
	n->c.out_packets++;
	n->c.out_piggybacked_logs += nl;
	mgr_dp_to_port(ctx, m, n->out_port);
	frame_sent(n);
}

/* ---- the egress ---- */

static void
hold_packet(struct ftc_node *n, struct rte_mbuf *m)
{
	struct ftc_held_pkt *h;

	if (n->hold_n == n->hold_cap) {
		n->c.hold_full++; /* (the buffer is sized for the held window) */
		rte_pktmbuf_free(m);
		return;
	}
	h = &n->hold[(n->hold_head + n->hold_n) % n->hold_cap];
	h->m = m;
	h->tsc = rte_rdtsc();
	memcpy(h->need, n->need, sizeof(h->need));
	n->hold_n++;
	n->c.held_packets_in++;
	if (n->hold_n > n->c.held_max)
		n->c.held_max = n->hold_n;
}

/* A need of a number a recovery made void: an update lost with the dead
 * incarnation (ftc_recover.c). */
static bool
voided(const struct ftc_node *n, const uint64_t *need)
{
	for (uint16_t i = 0; i < n->n_inst; i++)
		for (unsigned int k = 0; k < RTE_MIN(n->n_voids[i], (unsigned int)FTC_VOIDS); k++) {
			const struct ftc_void *v = &n->voids[i][k];

			if (need[i] > v->seq && need[i] <= v->seq + v->span * FTC_VOID_SPAN)
				return true;
		}
	return false;
}

static bool
covered(const struct ftc_node *n, const uint64_t *need)
{
	if (unlikely(n->unsafe_early_release))
		return true; /* the tests' mutation: proves the oracle would see it */
	for (uint16_t i = 0; i < n->n_inst; i++)
		if (need[i] > n->held[i])
			return false;
	return true;
}

static int
release(struct mgr_dp_ctx *ctx, struct ftc_node *n, uint64_t now)
{
	int work = 0;

	while (n->hold_n > 0) {
		struct ftc_held_pkt *h = &n->hold[n->hold_head];
		uint64_t w;

		if (unlikely(voided(n, h->need))) {
			n->c.void_dropped++;
			rte_pktmbuf_free(h->m);
			n->hold_head = (n->hold_head + 1) % n->hold_cap;
			n->hold_n--;
			work++;
			continue;
		}
		if (!covered(n, h->need))
			break;
		if (!mgr_dp_port_try(ctx, h->m, n->out_port))
			break;
		w = now - h->tsc;
		n->c.release_wait_cycles += w;
		if (w > n->c.release_wait_max)
			n->c.release_wait_max = w;
		n->c.released++;
		n->hold_head = (n->hold_head + 1) % n->hold_cap;
		n->hold_n--;
		work++;
	}
	return work;
}

void
mgr_ftc_on_exit(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m)
{
	struct ftc_node *n = &mgr_ftc_node;

	RTE_SET_USED(port);
	if (n->egress)
		hold_packet(n, m);
	else
		send_packet(ctx, n, m);
}

int
ftc_out_poll(struct mgr_dp_ctx *ctx)
{
	struct ftc_node *n = &mgr_ftc_node;
	const uint64_t now = rte_rdtsc();
	int work = 0;

	work += ftc_recover_poll(ctx, n, now);
	if (n->head && !n->recovering) {
		pull_own(n);
		work += head_timers(n, now);
	}
	if (n->egress) {
		work += release(ctx, n, now);
		/* the held vector back to the forwarder */
		if (n->held_dirty && now - n->fb_last_tsc >= n->hz / 1000000 * FB_MIN_US &&
		    send_propagating(ctx, n, (uint16_t)n->fb_port)) {
			n->held_dirty = false;
			n->fb_last_tsc = now;
			n->c.feedback_tx++;
			work++;
		}
		return work;
	}
	/* what waited for a packet long enough goes on its own */
	if (n->pending_tsc == 0 && n->held_dirty)
		n->pending_tsc = now;
	if ((n->held_dirty || oq_peek(n) != NULL) && n->pending_tsc != 0 &&
	    now - n->pending_tsc >= n->propagate_cycles) {
		do {
			if (!send_propagating(ctx, n, n->out_port))
				break;
			work++;
		} while (oq_peek(n) != NULL);
	}
	return work;
}
