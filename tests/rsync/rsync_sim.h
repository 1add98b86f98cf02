/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * A primary, a standby and the link between them, in one process, for the
 * two-phase-commit tests.  Messages really go through rsync_encode() and
 * rsync_decode() (with an HMAC key when sim->auth is set), into per-direction
 * queues where a fault profile drops, duplicates, reorders or delays them.
 * Packets are integers 1, 2, ... cast to pointers; each one's flow and
 * timestamp are kept here so the tests can check what the standby knows
 * against what the primary released.
 */
#ifndef RSYNC_SIM_H
#define RSYNC_SIM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rsync_primary.h"
#include "rsync_standby.h"
#include "rsync_wire.h"

#define SIM_MAX_Q 8192
#define SIM_MAX_PKTS 200000
#define SIM_REGIONS 3
#define SIM_REGION_SIZE 8192
/* The primary's and the standby's run ids (a restarted side gets another). */
#define SIM_RUN_P 0x5052494d00000001ull
#define SIM_RUN_S 0x5354424400000001ull

struct sim_frame {
	uint16_t len;
	uint32_t due; /* delivery step */
	uint8_t bytes[RSYNC_MAX_FRAME];
};

struct sim_queue {
	struct sim_frame *f;
	uint32_t n;
};

/* Per direction: percentages of frames dropped / duplicated / delayed, and
 * whether a delivery may pick any due frame (reorder). */
struct sim_faults {
	uint32_t drop_pct, dup_pct, delay_pct;
	uint32_t delay_steps;
	int reorder;
	int cut; /* link down: everything dropped */
};

enum sim_fate { PKT_NONE = 0, PKT_RELEASED, PKT_DROPPED };

struct sim {
	struct rsync_primary *p;
	struct rsync_standby *s;
	struct rsync_auth *auth_p, *auth_s; /* NULL: no HMAC */
	struct sim_queue to_s, to_p, to_pred;
	struct sim_faults f_to_s, f_to_p;
	uint32_t step;
	uint64_t now;
	uint64_t rng;
	/* packets */
	uint32_t npkts;
	struct rsync_flow flow[SIM_MAX_PKTS + 1];
	uint64_t ts[SIM_MAX_PKTS + 1];
	uint8_t fate[SIM_MAX_PKTS + 1];
	uint32_t release_order[SIM_MAX_PKTS];
	uint32_t nreleased, ndropped;
	int double_fate; /* a packet released/dropped twice */
	/* state of the standby chain */
	uint8_t region[SIM_REGIONS][SIM_REGION_SIZE];
	uint64_t trims_seen, last_trim;
	uint32_t sent_to_s, sent_to_p;
	uint64_t rx_reasons_s[RSYNC_RX_REASON_MAX], rx_reasons_p[RSYNC_RX_REASON_MAX];
	uint64_t decode_fail;
	uint64_t votes_before; /* a test's note of the standby's votes */
};

static inline uint32_t
sim_rand(struct sim *sm)
{
	sm->rng ^= sm->rng << 13;
	sm->rng ^= sm->rng >> 7;
	sm->rng ^= sm->rng << 17;
	return (uint32_t)(sm->rng >> 11);
}

static const uint8_t sim_mac_p[6] = {0x02, 0, 0, 0, 0, 1};
static const uint8_t sim_mac_s[6] = {0x02, 0, 0, 0, 0, 2};

static void
sim_enqueue(struct sim *sm, struct sim_queue *q, const struct sim_faults *f, const uint8_t *b,
	    int len)
{
	int copies = 1;

	if (len <= 0 || f->cut)
		return;
	if (f->drop_pct && sim_rand(sm) % 100 < f->drop_pct)
		return;
	if (f->dup_pct && sim_rand(sm) % 100 < f->dup_pct)
		copies = 2;
	while (copies-- > 0 && q->n < SIM_MAX_Q) {
		struct sim_frame *fr = &q->f[q->n++];

		fr->len = (uint16_t)len;
		memcpy(fr->bytes, b, (size_t)len);
		fr->due = sm->step;
		if (f->delay_pct && sim_rand(sm) % 100 < f->delay_pct)
			fr->due += 1 + sim_rand(sm) % (f->delay_steps ? f->delay_steps : 1);
	}
}

static int
sim_p_send(void *ctx, enum rsync_peer to, const struct rsync_msg *m, const void *payload,
	   size_t len)
{
	struct sim *sm = ctx;
	uint8_t buf[RSYNC_MAX_FRAME];
	int n = rsync_encode(buf, sizeof(buf), sim_mac_s, sim_mac_p, m, payload, len, sm->auth_p);

	if (n < 0)
		abort(); /* the library produced something the codec refuses */
	if (to == RSYNC_PEER_STANDBY) {
		sm->sent_to_s++;
		sim_enqueue(sm, &sm->to_s, &sm->f_to_s, buf, n);
	} else {
		struct rsync_msg d;

		if (rsync_decode(buf, (size_t)n, sm->auth_p, &d) != RSYNC_RX_OK)
			abort();
		if (d.h.type == RSYNC_LOG_TRIM) {
			sm->trims_seen++;
			if (d.u.trim.watermark > sm->last_trim)
				sm->last_trim = d.u.trim.watermark;
		}
	}
	return 0;
}

static void
sim_fate(struct sim *sm, void *const *pkts, uint32_t n, enum sim_fate fate)
{
	for (uint32_t i = 0; i < n; i++) {
		uintptr_t id = (uintptr_t)pkts[i];

		if (id == 0 || id > sm->npkts || sm->fate[id] != PKT_NONE) {
			sm->double_fate++;
			continue;
		}
		sm->fate[id] = (uint8_t)fate;
		if (fate == PKT_RELEASED)
			sm->release_order[sm->nreleased++] = (uint32_t)id;
		else
			sm->ndropped++;
	}
}

static void
sim_release(void *ctx, void *const *pkts, uint32_t n)
{
	sim_fate(ctx, pkts, n, PKT_RELEASED);
}

static void
sim_drop(void *ctx, void *const *pkts, uint32_t n, enum rsync_abort_reason why)
{
	(void)why;
	sim_fate(ctx, pkts, n, PKT_DROPPED);
}

static int
sim_s_send(void *ctx, const struct rsync_msg *m)
{
	struct sim *sm = ctx;
	uint8_t buf[RSYNC_MAX_FRAME];
	int n = rsync_encode(buf, sizeof(buf), sim_mac_p, sim_mac_s, m, NULL, 0, sm->auth_s);

	if (n < 0)
		abort();
	sm->sent_to_p++;
	sim_enqueue(sm, &sm->to_p, &sm->f_to_p, buf, n);
	return 0;
}

static bool
sim_state_ok(void *ctx, uint16_t region, uint64_t offset, uint32_t len)
{
	(void)ctx;
	return region < SIM_REGIONS && offset <= SIM_REGION_SIZE && len <= SIM_REGION_SIZE - offset;
}

static void
sim_apply(void *ctx, uint16_t region, uint64_t offset, const void *data, uint32_t len)
{
	struct sim *sm = ctx;

	memcpy(sm->region[region] + offset, data, len);
}

static const struct rsync_primary_ops sim_p_ops = {sim_p_send, sim_release, sim_drop};
static const struct rsync_standby_ops sim_s_ops = {sim_s_send, sim_state_ok, sim_apply};

static inline struct rsync_primary_cfg
sim_default_pcfg(void)
{
	return (struct rsync_primary_cfg){.chain = 7, .run = SIM_RUN_P, .epoch = 1, .stages = 4,
					  .stage_pkts = 8,
					  /* every region, record headers included */
					  .stage_state_bytes = 3 * SIM_REGION_SIZE + 1024,
					  .max_payload = 512, .close_ns = 50000,
					  .retrans_ns = 100000, .max_tries = 3,
					  .standby_window = 8};
}

static inline struct rsync_standby_cfg
sim_default_scfg(void)
{
	return (struct rsync_standby_cfg){.chain = 7, .run = SIM_RUN_S, .epoch = 1, .window = 16,
					  .max_frags = 256, .txts_capacity = 4096};
}

static struct sim *
sim_new(const struct rsync_primary_cfg *pc, const struct rsync_standby_cfg *sc, uint64_t seed,
	const uint8_t *key, size_t key_len)
{
	struct sim *sm = calloc(1, sizeof(*sm));

	if (sm == NULL)
		abort();
	sm->rng = seed * 0x9e3779b97f4a7c15ull + 1;
	sm->to_s.f = calloc(SIM_MAX_Q, sizeof(struct sim_frame));
	sm->to_p.f = calloc(SIM_MAX_Q, sizeof(struct sim_frame));
	if (key != NULL) {
		sm->auth_p = rsync_auth_new(key, key_len, 1);
		sm->auth_s = rsync_auth_new(key, key_len, 1);
	}
	sm->p = rsync_primary_new(pc, &sim_p_ops, sm, seed);
	sm->s = rsync_standby_new(sc, &sim_s_ops, sm, seed + 1);
	if (sm->to_s.f == NULL || sm->to_p.f == NULL || sm->p == NULL || sm->s == NULL)
		abort();
	return sm;
}

static void
sim_free(struct sim *sm)
{
	rsync_primary_free(sm->p);
	rsync_standby_free(sm->s);
	rsync_auth_free(sm->auth_p);
	rsync_auth_free(sm->auth_s);
	free(sm->to_s.f);
	free(sm->to_p.f);
	free(sm);
}

/* Deliver the frames of `q` that are due (all of them, or with reorder a
 * random due one at a time), to the standby (to_standby) or the primary. */
static void
sim_deliver(struct sim *sm, struct sim_queue *q, int reorder, int to_standby)
{
	for (;;) {
		uint32_t pick = UINT32_MAX, ndue = 0;

		for (uint32_t i = 0; i < q->n; i++) {
			if (q->f[i].due > sm->step)
				continue;
			ndue++;
			if (pick == UINT32_MAX || (reorder && sim_rand(sm) % ndue == 0))
				pick = i;
			if (!reorder)
				break;
		}
		if (pick == UINT32_MAX)
			return;
		struct sim_frame fr = q->f[pick];
		memmove(&q->f[pick], &q->f[pick + 1], (q->n - pick - 1) * sizeof(q->f[0]));
		q->n--;
		struct rsync_msg m;
		enum rsync_rx_reason r =
			rsync_decode(fr.bytes, fr.len, to_standby ? sm->auth_s : sm->auth_p, &m);
		if (r != RSYNC_RX_OK) {
			sm->decode_fail++;
			continue;
		}
		if (to_standby)
			sm->rx_reasons_s[rsync_standby_rx(sm->s, &m, sm->now)]++;
		else
			sm->rx_reasons_p[rsync_primary_rx(sm->p, &m, sm->now)]++;
	}
}

/* One step: deliver what is due both ways, advance the clock, tick. */
static void
sim_step(struct sim *sm, uint64_t dt_ns)
{
	sim_deliver(sm, &sm->to_s, sm->f_to_s.reorder, 1);
	sim_deliver(sm, &sm->to_p, sm->f_to_p.reorder, 0);
	sm->now += dt_ns;
	sm->step++;
	rsync_primary_tick(sm->p, sm->now);
}

/* A new packet of flow `flow_no` (timestamps count up from 1); with
 * `before_cut`, one that waited ahead of a cut's marker
 * (rsync_primary_add_before_cut). */
static int
sim_add_as(struct sim *sm, uint32_t flow_no, bool before_cut)
{
	uint32_t id = sm->npkts + 1;
	int rc;

	if (id > SIM_MAX_PKTS)
		abort();
	memset(&sm->flow[id], 0, sizeof(sm->flow[id]));
	sm->flow[id].src_ip = 0xC6120001u; /* 198.18.0.1 */
	sm->flow[id].dst_ip = 0xC6130000u + flow_no;
	sm->flow[id].sport = (uint16_t)(1000 + flow_no);
	sm->flow[id].dport = 80;
	sm->flow[id].proto = 6;
	sm->ts[id] = id;
	rc = (before_cut ? rsync_primary_add_before_cut
			 : rsync_primary_add)(sm->p, (void *)(uintptr_t)id, &sm->flow[id], id, sm->now);
	if (rc == 0)
		sm->npkts = id;
	return rc;
}

static int
sim_add(struct sim *sm, uint32_t flow_no)
{
	return sim_add_as(sm, flow_no, false);
}

/* Run until nothing is latched or `max_steps` passed. */
static void
sim_drain(struct sim *sm, uint32_t max_steps, uint64_t dt_ns)
{
	for (uint32_t i = 0; i < max_steps; i++) {
		if (rsync_primary_pkts_latched(sm->p) == 0 && sm->to_s.n == 0 && sm->to_p.n == 0)
			return;
		sim_step(sm, dt_ns);
	}
}

#endif /* RSYNC_SIM_H */
