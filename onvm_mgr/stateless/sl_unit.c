/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * sl_unit.c -- a stateless chain's root and exit on the manager (design:
 * docs/design/stateless.md).
 *
 * The root (RX unit) stamps each packet entering the chain with the
 * chain's logical clock and, every `flush_packets` packets or `flush_us`
 * after the first packet of an epoch, injects a marker: the marker's id
 * names the epoch it closes.  Each NF, passing it, sends what it changed
 * to the store as that epoch's version (libnf's nf_store.c) and, once the
 * store acknowledged it, publishes the epoch in its slot (store_closed).
 *
 * The exit (TX unit) holds what leaves the chain, markers included, in
 * order, and releases everything up to a marker once every NF of the chain
 * closed that marker's epoch in the store (the chain's committed epoch).
 * So nothing leaves whose state is not in the store: after a failure the
 * chain restarts from a state that produced every released packet, and a
 * load balancer's released choice is never made again differently.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>
#include <rte_telemetry.h>

#include "mgr.h"
#include "stateless/stateless.h"

#define SL_HOLD_MAX 32768 /* what one chain's exit holds at most */
#define SL_MARKER_ROOM 256 /* of it, kept for markers: a full exit still closes epochs */

struct sl_chain {
	bool on;
	/* RX unit */
	uint64_t clock;	      /* the newest packet's timestamp */
	uint64_t next_marker; /* the next marker's id (epoch) */
	uint32_t since;	      /* packets since the last marker */
	uint64_t first_tsc;   /* the first of them arrived */
	bool started;	      /* its NFs loaded their state: epochs may close */
	uint64_t flush_cycles;
	uint64_t packets_in, markers_in, markers_failed;
	/* TX unit: held entries (packets and markers), in order */
	struct rte_mbuf **q;
	uint16_t *port;
	uint32_t head, n;
	uint64_t *mark_id; /* the markers' ids and their positions (absolute) */
	uint64_t *mark_at;
	uint32_t mhead, mn;
	uint64_t abs_head; /* absolute index of q[head] */
	uint64_t committed;
	uint64_t held_total, released, exit_full, markers_out, markers_full;
};

bool mgr_sl_any;
static struct sl_chain sl[ONVM_MAX_CHAINS];

int
mgr_sl_init(void)
{
	for (int i = 0; i < mgr.cfg.nchains; i++) {
		const struct mgr_chain_cfg *cc = &mgr.cfg.chains[i];
		struct onvm_chain *ch = &mgr.shm->chains[i];
		struct sl_chain *c = &sl[i];

		if (!cc->stateless)
			continue;
		ch->store = cc->store;
		/* This run of the chain, for the store's fence: never 0. */
		do
			ch->sl_token = rte_rand();
		while (ch->sl_token == 0);
		ch->sl_committed = 0;
		__atomic_store_n(&ch->stateless, 1, __ATOMIC_RELEASE);
		c->q = rte_zmalloc("sl_hold", SL_HOLD_MAX * sizeof(*c->q), 0);
		c->port = rte_zmalloc("sl_port", SL_HOLD_MAX * sizeof(*c->port), 0);
		c->mark_id = rte_zmalloc("sl_mid", SL_HOLD_MAX * sizeof(*c->mark_id), 0);
		c->mark_at = rte_zmalloc("sl_mat", SL_HOLD_MAX * sizeof(*c->mark_at), 0);
		if (c->q == NULL || c->port == NULL || c->mark_id == NULL || c->mark_at == NULL) {
			MGR_LOG(ERR, "chain '%s': no memory for its exit queue", cc->name);
			return -ENOMEM;
		}
		c->next_marker = 1;
		c->flush_cycles = (uint64_t)cc->store.flush_us * (rte_get_tsc_hz() / 1000000);
		c->on = true;
		mgr_sl_any = true;
		MGR_LOG(INFO, "chain '%s': stateless, store %s (%s%s, epoch of %u packets or %u us)",
			cc->name, cc->store.addr, cc->store.mode == ONVM_STORE_SYNC ? "sync" : "async",
			cc->store.cache ? ", cache" : "", cc->store.flush_pkts, cc->store.flush_us);
	}
	return 0;
}

/* The slot of the instance of step k of chain `ci`, or NULL. */
static const struct onvm_nf_slot *
step_slot(uint16_t ci, uint16_t k)
{
	const struct onvm_service *svc =
		&mgr.shm->services[mgr.shm->chains[ci].services[k] % ONVM_MAX_SERVICES];
	uint32_t a = __atomic_load_n(&svc->active, __ATOMIC_ACQUIRE) & 1;
	uint16_t inst;

	if (svc->n[a] == 0 || (inst = svc->inst[a][0]) == ONVM_INST_NONE || inst >= ONVM_MAX_NFS)
		return NULL;
	return &mgr.shm->nfs[inst];
}

/* ---- the root (RX unit) ---- */

/* Every NF of the chain warmed up: markers may go, numbered above what
 * the store holds (its recovery point came from an earlier run). */
static bool
chain_started(uint16_t ci, struct sl_chain *c)
{
	uint64_t top = 0;

	if (c->started)
		return true;
	for (uint16_t k = 0; k < mgr.shm->chains[ci].len; k++) {
		const struct onvm_nf_slot *s = step_slot(ci, k);

		if (s == NULL || __atomic_load_n(&s->store.state, __ATOMIC_ACQUIRE) != ONVM_STORE_READY)
			return false;
		top = RTE_MAX(top, __atomic_load_n(&s->store_closed, __ATOMIC_ACQUIRE));
	}
	c->next_marker = RTE_MAX(c->next_marker, top + 1);
	c->started = true;
	return true;
}

void
mgr_sl_ingress(struct onvm_pkt_meta *meta)
{
	struct sl_chain *c;

	if (meta->chain_id >= ONVM_MAX_CHAINS || !(c = &sl[meta->chain_id])->on)
		return;
	meta->ts = ++c->clock;
	c->packets_in++;
	if (c->since++ == 0)
		c->first_tsc = rte_get_tsc_cycles();
}

static void
inject(struct mgr_dp_ctx *ctx, uint16_t ci, struct sl_chain *c)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mgr.pool);
	struct onvm_marker mk = {.cut_id = c->next_marker};
	struct onvm_pkt_meta *meta;
	void *p;

	if (m == NULL || (p = rte_pktmbuf_append(m, sizeof(mk))) == NULL) {
		rte_pktmbuf_free(m);
		c->markers_failed++; /* the next poll tries again */
		return;
	}
	memcpy(p, &mk, sizeof(mk));
	meta = onvm_pkt_meta(m, mgr.dyn_off);
	memset(meta, 0, sizeof(*meta));
	meta->chain_id = ci;
	meta->ts = c->clock;
	meta->flags = ONVM_PKT_F_MARKER;
	meta->action = ONVM_ACTION_NEXT;
	meta->egress_port = ONVM_PORT_UNSET;
	c->next_marker++;
	c->since = 0;
	c->markers_in++;
	mgr_marker_fanout(ctx, m, 0);
}

bool
mgr_sl_marker_due_now(const struct onvm_pkt_meta *meta)
{
	const struct sl_chain *c;

	return meta->chain_id < ONVM_MAX_CHAINS && (c = &sl[meta->chain_id])->on && c->started &&
	       c->since >= mgr.shm->chains[meta->chain_id].store.flush_pkts;
}

void
mgr_sl_marker_now(struct mgr_dp_ctx *ctx, uint16_t ci)
{
	inject(ctx, ci, &sl[ci]);
}

int
mgr_sl_markers(struct mgr_dp_ctx *ctx)
{
	uint64_t now = 0;
	int n = 0;

	for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++) {
		struct sl_chain *c = &sl[ci];

		if (!c->on || !chain_started(ci, c) || c->since == 0)
			continue;
		if (now == 0)
			now = rte_get_tsc_cycles();
		if (c->since >= mgr.shm->chains[ci].store.flush_pkts ||
		    now - c->first_tsc >= c->flush_cycles) {
			inject(ctx, ci, c);
			n++;
		}
	}
	return n;
}

/* ---- the exit (TX unit) ---- */

void
mgr_sl_on_exit(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m)
{
	const struct onvm_pkt_meta *meta = onvm_pkt_meta(m, mgr.dyn_off);
	struct sl_chain *c = &sl[meta->chain_id % ONVM_MAX_CHAINS];
	bool marker = (meta->flags & ONVM_PKT_F_MARKER) != 0;
	uint32_t at;

	RTE_SET_USED(ctx);
	if (c->n >= SL_HOLD_MAX - (marker ? 0 : SL_MARKER_ROOM)) {
		/* Loss, counted; never an unprotected release. */
		if (marker)
			c->markers_full++;
		else
			c->exit_full++;
		rte_pktmbuf_free(m);
		return;
	}
	at = (c->head + c->n) % SL_HOLD_MAX;
	if (marker) {
		struct onvm_marker mk;
		uint32_t mat = (c->mhead + c->mn) % SL_HOLD_MAX;

		memcpy(&mk, rte_pktmbuf_mtod(m, const void *), sizeof(mk));
		c->mark_id[mat] = mk.cut_id;
		c->mark_at[mat] = c->abs_head + c->n;
		c->mn++;
		c->markers_out++;
	} else {
		c->held_total++;
	}
	c->q[at] = m;
	c->port[at] = port;
	c->n++;
}

/* The newest epoch every NF of the chain closed in the store. */
static uint64_t
committed_of(uint16_t ci)
{
	uint64_t low = UINT64_MAX;

	for (uint16_t k = 0; k < mgr.shm->chains[ci].len; k++) {
		const struct onvm_nf_slot *s = step_slot(ci, k);

		if (s == NULL)
			return 0; /* an NF is missing: nothing more is safe */
		low = RTE_MIN(low, __atomic_load_n(&s->store_closed, __ATOMIC_ACQUIRE));
	}
	return low == UINT64_MAX ? 0 : low;
}

int
mgr_sl_tx(struct mgr_dp_ctx *ctx)
{
	int moved = 0;

	for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++) {
		struct sl_chain *c = &sl[ci];
		uint64_t cm;

		if (!c->on || c->mn == 0)
			continue;
		cm = committed_of(ci);
		if (cm > c->committed) {
			c->committed = cm;
			__atomic_store_n(&mgr.shm->chains[ci].sl_committed, cm, __ATOMIC_RELEASE);
		}
		/* Up to and including each marker the store has: released in
		 * order, as far as the ports take them now. */
		while (c->mn > 0 && c->mark_id[c->mhead] <= c->committed) {
			uint64_t upto = c->mark_at[c->mhead];

			while (c->abs_head <= upto) {
				struct rte_mbuf *m = c->q[c->head];
				bool marker = c->abs_head == upto;

				if (marker) {
					rte_pktmbuf_free(m);
				} else if (!mgr_dp_port_try(ctx, m, c->port[c->head])) {
					return moved; /* the port is full: on a later poll */
				} else {
					c->released++;
					moved++;
				}
				c->head = (c->head + 1) % SL_HOLD_MAX;
				c->n--;
				c->abs_head++;
			}
			c->mhead = (c->mhead + 1) % SL_HOLD_MAX;
			c->mn--;
		}
	}
	return moved;
}

void
mgr_sl_drop_held(void)
{
	for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++) {
		struct sl_chain *c = &sl[ci];

		if (!c->on)
			continue;
		if (c->n > 0)
			MGR_LOG(INFO, "chain '%s': %u entries held at its exit dropped at stop",
				mgr.shm->chains[ci].name, c->n);
		while (c->n > 0) {
			rte_pktmbuf_free(c->q[c->head]);
			c->head = (c->head + 1) % SL_HOLD_MAX;
			c->n--;
		}
		c->mn = 0;
	}
}

/* ---- /onvm/store ---- */

static const char *const state_names[] = {"off", "loading", "ready", "down", "stopped"};

static void
add_nf(struct rte_tel_data *o, const struct onvm_nf_slot *s)
{
	const struct onvm_store_stats *st = &s->store;
	uint32_t state = __atomic_load_n(&st->state, __ATOMIC_RELAXED);

	rte_tel_data_add_dict_uint(o, "instance", s->instance_id);
	rte_tel_data_add_dict_uint(o, "service", s->service_id);
	rte_tel_data_add_dict_string(o, "state", state < RTE_DIM(state_names) ? state_names[state] : "?");
	rte_tel_data_add_dict_uint(o, "closed", __atomic_load_n(&s->store_closed, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_uint(o, "updates_sent", st->updates_sent);
	rte_tel_data_add_dict_uint(o, "updates_acked", st->updates_acked);
	rte_tel_data_add_dict_uint(o, "updates_retried", st->updates_retried);
	rte_tel_data_add_dict_uint(o, "versions_refused", st->versions_refused);
	rte_tel_data_add_dict_uint(o, "fenced", st->fenced);
	rte_tel_data_add_dict_uint(o, "lost", st->lost);
	rte_tel_data_add_dict_uint(o, "bad_replies", st->bad_replies);
	rte_tel_data_add_dict_uint(o, "resets", st->resets);
	rte_tel_data_add_dict_uint(o, "connect_fails", st->connect_fails);
	rte_tel_data_add_dict_uint(o, "pipeline_waits", st->pipeline_waits);
	rte_tel_data_add_dict_uint(o, "sync_waits", st->sync_waits);
	rte_tel_data_add_dict_uint(o, "wait_us", st->wait_ns / 1000);
	rte_tel_data_add_dict_uint(o, "outstanding", st->outstanding);
	rte_tel_data_add_dict_uint(o, "bytes_sent", st->bytes_sent);
	rte_tel_data_add_dict_uint(o, "chunks_sent", st->chunks_sent);
	rte_tel_data_add_dict_uint(o, "chunks_dirtied", st->chunks_dirtied);
	rte_tel_data_add_dict_uint(o, "cache_absorbed",
				   st->chunks_dirtied > st->chunks_sent ? st->chunks_dirtied - st->chunks_sent : 0);
	rte_tel_data_add_dict_uint(o, "epochs_closed", st->epochs_closed);
	rte_tel_data_add_dict_uint(o, "loaded_chunks", st->loaded_chunks);
	rte_tel_data_add_dict_uint(o, "load_us", st->load_ns / 1000);
	rte_tel_data_add_dict_uint(o, "recovered_epoch", st->recovered_epoch);
	rte_tel_data_add_dict_uint(o, "gen", st->gen);
}

/* /onvm/store,CHAIN: one stateless chain; without a parameter, the names. */
static int
tel_store(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	if (params == NULL || params[0] == '\0') {
		rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
		for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++)
			if (sl[ci].on)
				rte_tel_data_add_array_string(d, mgr.shm->chains[ci].name);
		return 0;
	}
	for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++) {
		const struct sl_chain *c = &sl[ci];
		const struct onvm_chain *ch = &mgr.shm->chains[ci];

		if (!c->on || strcmp(ch->name, params) != 0)
			continue;
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "chain", ch->name);
		rte_tel_data_add_dict_string(d, "address", ch->store.addr);
		rte_tel_data_add_dict_string(d, "mode", ch->store.mode == ONVM_STORE_SYNC ? "sync" : "async");
		rte_tel_data_add_dict_uint(d, "cache", ch->store.cache);
		rte_tel_data_add_dict_uint(d, "flush_packets", ch->store.flush_pkts);
		rte_tel_data_add_dict_uint(d, "flush_us", ch->store.flush_us);
		rte_tel_data_add_dict_uint(d, "pipeline", ch->store.pipeline);
		rte_tel_data_add_dict_uint(d, "started", c->started);
		rte_tel_data_add_dict_uint(d, "committed", c->committed);
		rte_tel_data_add_dict_uint(d, "packets_in", c->packets_in);
		rte_tel_data_add_dict_uint(d, "markers_in", c->markers_in);
		rte_tel_data_add_dict_uint(d, "markers_failed", c->markers_failed);
		rte_tel_data_add_dict_uint(d, "markers_out", c->markers_out);
		rte_tel_data_add_dict_uint(d, "held_now", c->n);
		rte_tel_data_add_dict_uint(d, "held_total", c->held_total);
		rte_tel_data_add_dict_uint(d, "released", c->released);
		rte_tel_data_add_dict_uint(d, "exit_full", c->exit_full);
		rte_tel_data_add_dict_uint(d, "markers_full", c->markers_full);
		for (uint16_t k = 0; k < ch->len; k++) {
			const struct onvm_nf_slot *s = step_slot(ci, k);
			struct rte_tel_data *o;
			char key[16];

			if (s == NULL || (o = rte_tel_data_alloc()) == NULL)
				continue;
			rte_tel_data_start_dict(o);
			add_nf(o, s);
			snprintf(key, sizeof(key), "nf%u", k);
			rte_tel_data_add_dict_container(d, key, o, 0);
		}
		return 0;
	}
	return -EINVAL;
}

int
mgr_sl_telemetry_init(void)
{
	if (rte_telemetry_register_cmd("/onvm/store", tel_store,
				       "A stateless chain's store: /onvm/store,CHAIN. No parameter: "
				       "the stateless chains' names") != 0) {
		MGR_LOG(ERR, "cannot register /onvm/store");
		return -1;
	}
	return 0;
}
