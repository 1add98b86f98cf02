/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_node.c -- this node's part of an FTC chain: set up from the config
 * (its role: forwarder, head of an NF, replica of the f NFs before it,
 * egress), the NF's update ring's size for the state pool, the hand-over
 * from the RX unit, and /onvm/ftc.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "ftc_priv.h"
#include "nf/nf.h"
#include "onvm_state.h"
#include "ftc_xfer.h"

bool mgr_ftc_any;
uint8_t mgr_ftc_in_port[ONVM_MAX_PORTS];
uint8_t mgr_ftc_exit_port[ONVM_MAX_PORTS];
struct ftc_node mgr_ftc_node;

/* The largest update an NF hands over: a quarter of its ring. */
static uint32_t
max_update(const struct mgr_ftc_cfg *fc)
{
	return (uint32_t)(((uint64_t)fc->log_kb * 1024) / 4);
}

uint64_t
mgr_ftc_ring_bytes(uint16_t service)
{
	const struct ftc_node *n = &mgr_ftc_node;

	if (!n->on || !n->head || service != n->service)
		return 0;
	return onvm_ftc_ring_area((size_t)n->cfg->log_kb * 1024);
}

int
mgr_ftc_state_check(uint16_t service, const struct nf_state_layout *layout, char *why,
		    size_t whylen)
{
	const struct ftc_node *n = &mgr_ftc_node;
	uint64_t whole = 8 + 1, pages = 0, max;

	if (!n->on || !n->head || service != n->service)
		return 0; /* (not an FTC node: n->cfg is NULL) */
	/* the NF's ring holds updates of up to a quarter of its bytes, and an
	 * update goes in at most 255 parts */
	max = RTE_MIN((uint64_t)n->cfg->log_kb * 256 - ONVM_FTC_ENTRY_HEAD,
		      255ull * (n->part_budget - 2 * FTC_RECORD_HEAD_LEN));
	for (uint32_t r = 0; r < layout->n_regions; r++) {
		const struct nf_state_region_layout *g = &layout->regions[r];

		/* every chunk a record (a longer one several), or every page in
		 * a recovery's whole update, after the reset */
		whole += g->size + 8 * ((uint64_t)g->n_chunks + g->size / FTC_PAGE + 2);
		pages += (g->size + FTC_PAGE - 1) / FTC_PAGE;
	}
	if (whole > max) {
		snprintf(why, whylen,
			 "FTC: the NF's whole state as one update (%" PRIu64 " bytes) exceeds "
			 "what an update may be (%" PRIu64 ": log_kb / 4, and 255 frames of the "
			 "mtu): raise log_kb or mtu",
			 whole, max);
		return -E2BIG;
	}
	if (pages * FTC_PAGE > (uint64_t)n->cfg->replica_mb << 20) {
		snprintf(why, whylen,
			 "FTC: the NF's state (%" PRIu64 " KB in pages) exceeds a replica's "
			 "replica_mb (%u MB)",
			 pages * FTC_PAGE / 1024, n->cfg->replica_mb);
		return -E2BIG;
	}
	return 0;
}

static int
setup_replicas(struct ftc_node *n)
{
	const struct mgr_ftc_cfg *fc = n->cfg;
	/* a whole update, with the heads of the records its parts cut */
	const uint32_t slot = max_update(fc) + 255 * FTC_RECORD_HEAD_LEN;

	for (int i = (int)fc->position - fc->f; i < (int)fc->position; i++) {
		struct ftc_replica *r;
		size_t sz;
		void *mem;

		if (i < 0 || i >= fc->nf_nodes)
			continue;
		r = &n->rep[n->n_rep++];
		r->instance = (uint16_t)i;
		r->tail = i + fc->f == fc->position;
		r->first = i + 1 == fc->position;
		sz = ftc_seq_mem_size(fc->window, slot);
		mem = sz > 0 ? rte_zmalloc("ftc_seq", sz, 64) : NULL;
		r->seq = mem != NULL ? ftc_seq_init(mem, fc->window, slot, 1) : NULL;
		r->seq_mem = mem;
		r->seq_slot = slot;
		r->synced = true;
		if (r->seq == NULL ||
		    ftc_store_init(&r->store, (uint64_t)fc->replica_mb << 20) < 0) {
			MGR_LOG(ERR, "FTC chain %u: no memory for the replica of NF %d (a window "
				     "of %u updates of %u bytes, %u MB of state)",
				fc->id, i, fc->window, slot, fc->replica_mb);
			return -ENOMEM;
		}
	}
	return 0;
}

static int
setup_head(struct ftc_node *n)
{
	const struct mgr_ftc_cfg *fc = n->cfg;
	const uint32_t bytes = fc->log_kb * 1024;
	size_t sz = ftc_hlog_mem_size(fc->log_updates, bytes);
	void *mem = sz > 0 ? rte_zmalloc("ftc_hlog", sz, 64) : NULL;

	n->hlog = mem != NULL ? ftc_hlog_init(mem, fc->log_updates, bytes, 1) : NULL;
	n->part_buf = rte_zmalloc("ftc_part", n->part_budget, 64);
	n->sent_tsc = rte_zmalloc("ftc_sent", (size_t)fc->log_updates * sizeof(uint64_t), 64);
	if (n->hlog == NULL || n->part_buf == NULL || n->sent_tsc == NULL) {
		MGR_LOG(ERR, "FTC chain %u: no memory for the head's log (%u KB)", fc->id,
			fc->log_kb);
		return -ENOMEM;
	}
	return 0;
}

/* A port carrying the chain's frames must take frames of `mtu`.  On a
 * kernel interface (af_packet, af_xdp) the interface's MTU decides: a
 * warning if it is below (the PMD claims 1518-byte frames at most, yet
 * takes what the interface lets through).  Otherwise the port's MTU is
 * raised if it is below (a NIC is configured for 1500 bytes); a device
 * with none to set (net_null, net_ring) takes any size. */
static void
port_mtu_at_least(uint16_t port, uint32_t mtu, unsigned int chain)
{
	const uint32_t kernel = mgr_port_iface_mtu(port);
	uint16_t cur = 0;
	int ret;

	if (kernel > 0) {
		if (kernel < mtu)
			MGR_LOG(WARNING, "FTC chain %u: port '%s' is on an interface of MTU %u, "
					 "below the chain's mtu %u: longer frames are lost",
				chain, mgr.shm->ports[port].name, kernel, mtu);
		return;
	}
	if (rte_eth_dev_get_mtu(port, &cur) == 0 && cur >= mtu)
		return;
	ret = rte_eth_dev_set_mtu(port, (uint16_t)mtu);
	if (ret == 0)
		MGR_LOG(INFO, "FTC chain %u: port '%s' MTU %u -> %u", chain,
			mgr.shm->ports[port].name, cur, mtu);
	else if (ret != -ENOTSUP)
		MGR_LOG(WARNING, "FTC chain %u: port '%s' keeps its MTU of %u, below the chain's "
				 "mtu %u (%s): longer frames may be lost",
			chain, mgr.shm->ports[port].name, cur, mtu, rte_strerror(-ret));
}

int
mgr_ftc_init(void)
{
	struct ftc_node *n = &mgr_ftc_node;
	char name[RTE_RING_NAMESIZE];

	for (int i = 0; i < mgr.cfg.nchains; i++) {
		const struct mgr_chain_cfg *cc = &mgr.cfg.chains[i];
		const struct mgr_ftc_cfg *fc = &cc->ftc;
		uint32_t room;

		if (!cc->is_ftc)
			continue;
		n->cfg = fc;
		n->chain = i;
		n->in_port = (uint16_t)cc->ingress_port;
		n->out_port = (uint16_t)cc->exit_port;
		n->fb_port = fc->feedback_port;
		n->forwarder = fc->position == 0;
		n->egress = fc->position == fc->nf_nodes + fc->f - 1;
		n->head = fc->position < fc->nf_nodes;
		n->n_inst = fc->nf_nodes;
		n->own = fc->position;
		n->service = n->head ? cc->services[0] : 0;
		n->hz = rte_get_tsc_hz();
		n->propagate_cycles = (uint64_t)fc->propagate_us * n->hz / 1000000;
		n->retrans_cycles = (uint64_t)fc->retrans_us * n->hz / 1000000;
		room = RTE_MIN(fc->mtu + 14u, FTC_FRAME_ROOM);
		n->frame_max = room;
		/* A part goes alone on a propagating frame, beside the held,
		 * void and applied entries at most. */
		if (room < FTC_MAC_LEN + FTC_HEAD_LEN + FTC_LOG_HEAD_LEN +
				   3u * fc->nf_nodes * FTC_COMMIT_LEN + 256) {
			MGR_LOG(ERR, "FTC chain %u: an mtu of %u leaves no room for the logs beside "
				     "%u NFs' entries: raise it",
				fc->id, fc->mtu, fc->nf_nodes);
			return -EINVAL;
		}
		n->part_budget = room - FTC_MAC_LEN - FTC_HEAD_LEN - FTC_LOG_HEAD_LEN -
				 3 * fc->nf_nodes * FTC_COMMIT_LEN;
		/* the chain's links carry FTC's frames: the packet and more
		 * (the forwarder's input and the egress's output are plain) */
		if (!n->forwarder)
			port_mtu_at_least(n->in_port, fc->mtu, fc->id);
		if (!n->egress)
			port_mtu_at_least(n->out_port, fc->mtu, fc->id);
		if (n->fb_port >= 0)
			port_mtu_at_least((uint16_t)n->fb_port, fc->mtu, fc->id);
		snprintf(name, sizeof(name), "ftc_in_%u", fc->id);
		n->in_ring = rte_ring_create(name, FTC_IN_RING, rte_socket_id(),
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
		n->oq_size = (uint64_t)fc->log_kb * 1024 * 2;
		n->oq = rte_zmalloc("ftc_oq", n->oq_size, 64);
		if (n->in_ring == NULL || n->oq == NULL) {
			MGR_LOG(ERR, "FTC chain %u: no memory for its queues", fc->id);
			return -ENOMEM;
		}
		if (setup_replicas(n) < 0 || (n->head && setup_head(n) < 0) ||
		    ftc_recover_init(n) < 0)
			return -ENOMEM;
		if (n->state_port >= 0)
			mgr_ftc_in_port[n->state_port] = 1;
		if (n->egress) {
			n->hold_cap = fc->hold_packets;
			n->hold = rte_zmalloc("ftc_hold", (size_t)n->hold_cap * sizeof(*n->hold), 64);
			if (n->hold == NULL) {
				MGR_LOG(ERR, "FTC chain %u: no memory for the egress buffer",
					fc->id);
				return -ENOMEM;
			}
		}
		if (!n->forwarder)
			mgr_ftc_in_port[n->in_port] = 1;
		if (n->forwarder)
			mgr_ftc_in_port[n->fb_port] = 1;
		mgr_ftc_exit_port[n->out_port] = 1;
		if (n->egress && getenv("ONVM_FTC_UNSAFE_EARLY_RELEASE") != NULL) {
			n->unsafe_early_release = true;
			MGR_LOG(WARNING, "FTC chain %u: ONVM_FTC_UNSAFE_EARLY_RELEASE: packets leave "
					 "before their updates are held (a test's mutation)",
				fc->id);
		}
		n->on = true;
		mgr_ftc_any = true;
		MGR_LOG(INFO, "chain '%s': FTC chain %u, node %u of %u (f = %u)%s%s%s, frames of "
			      "at most %u bytes",
			cc->name, fc->id, fc->position, fc->nf_nodes + fc->f, fc->f,
			n->forwarder ? ", the forwarder" : "", n->head ? ", an NF's head" : "",
			n->egress ? ", the egress" : "", n->frame_max);
	}
	return 0;
}

bool
mgr_ftc_rx(uint16_t port, struct rte_mbuf *m)
{
	struct ftc_node *n = &mgr_ftc_node;

	RTE_SET_USED(port);
	if (rte_ring_sp_enqueue(n->in_ring, m) != 0) {
		/* (the RX unit's counter: the TX unit owns the others) */
		__atomic_fetch_add(&n->c.in_full, 1, __ATOMIC_RELAXED);
		rte_pktmbuf_free(m);
	}
	return true;
}

int
mgr_ftc_tx(struct mgr_dp_ctx *ctx)
{
	return ftc_in_poll(ctx) + ftc_out_poll(ctx);
}

void
mgr_ftc_drop_held(void)
{
	struct ftc_node *n = &mgr_ftc_node;
	struct rte_mbuf *m;

	if (!n->on)
		return;
	while (n->hold_n > 0) {
		rte_pktmbuf_free(n->hold[n->hold_head].m);
		n->hold_head = (n->hold_head + 1) % n->hold_cap;
		n->hold_n--;
	}
	while (rte_ring_sc_dequeue(n->in_ring, (void **)&m) == 0)
		rte_pktmbuf_free(m);
}

/* ---- /onvm/ftc ---- */

#define U(d, k, v) rte_tel_data_add_dict_uint(d, k, v)

static int
tel_ftc(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct ftc_node *n = &mgr_ftc_node;
	const struct ftc_counters *c = &n->c;
	struct rte_tel_data *held, *need, *bad, *reps;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	if (!n->on)
		return 0;
	U(d, "id", n->cfg->id);
	U(d, "f", n->cfg->f);
	U(d, "position", n->cfg->position);
	U(d, "nf_nodes", n->cfg->nf_nodes);
	rte_tel_data_add_dict_string(d, "role", n->forwarder ? "forwarder" : n->egress ? "egress"
						: n->head ? "head" : "replica");
	held = rte_tel_data_alloc();
	need = rte_tel_data_alloc();
	bad = rte_tel_data_alloc();
	reps = rte_tel_data_alloc();
	if (held == NULL || need == NULL || bad == NULL || reps == NULL) {
		rte_tel_data_free(held);
		rte_tel_data_free(need);
		rte_tel_data_free(bad);
		rte_tel_data_free(reps);
		return -ENOMEM;
	}
	rte_tel_data_start_array(held, RTE_TEL_U64_VAL);
	rte_tel_data_start_array(need, RTE_TEL_U64_VAL);
	for (unsigned int i = 0; i < n->n_inst; i++) {
		rte_tel_data_add_array_uint(held, __atomic_load_n(&n->held[i], __ATOMIC_RELAXED));
		rte_tel_data_add_array_uint(need, __atomic_load_n(&n->need[i], __ATOMIC_RELAXED));
	}
	rte_tel_data_add_dict_container(d, "held", held, 0);
	rte_tel_data_add_dict_container(d, "need", need, 0);
	rte_tel_data_start_dict(bad);
	for (int r = FTC_SHORT; r < FTC_REASON_MAX; r++)
		rte_tel_data_add_dict_uint(bad, ftc_reason_str((enum ftc_reason)r), c->in_bad[r]);
	rte_tel_data_add_dict_container(d, "in_bad", bad, 0);
	/* replicas: instance, applied, verdicts, pages */
	rte_tel_data_start_array(reps, RTE_TEL_U64_VAL);
	for (unsigned int k = 0; k < n->n_rep; k++) {
		const struct ftc_replica *r = &n->rep[k];

		rte_tel_data_add_array_uint(reps, r->instance);
		rte_tel_data_add_array_uint(reps, r->applied_updates);
	}
	rte_tel_data_add_dict_container(d, "replicas", reps, 0);
	for (unsigned int k = 0; k < n->n_rep; k++) {
		const struct ftc_replica *r = &n->rep[k];
		char key[64];

		snprintf(key, sizeof(key), "replica%u_applied_bytes", r->instance);
		U(d, key, r->applied_bytes);
		snprintf(key, sizeof(key), "replica%u_pages", r->instance);
		U(d, key, r->store.used);
		snprintf(key, sizeof(key), "replica%u_store_full", r->instance);
		U(d, key, r->store_full);
		for (int v = FTC_SEQ_OLD; v < FTC_SEQ_VERDICT_MAX; v++) {
			snprintf(key, sizeof(key), "replica%u_%s", r->instance,
				 ftc_seq_verdict_str((enum ftc_seq_verdict)v));
			U(d, key, r->verdicts[v]);
		}
	}
	U(d, "in_frames", c->in_frames);
	U(d, "in_propagating", c->in_propagating);
	U(d, "in_full", __atomic_load_n(&c->in_full, __ATOMIC_RELAXED));
	U(d, "in_plain", c->in_plain);
	U(d, "in_bad_resets", c->in_bad_resets);
	for (int r = FTC_XFER_NOT_XFER; r < FTC_XFER_REASON_MAX; r++) {
		char key[48];

		snprintf(key, sizeof(key), "xfer_%s", ftc_xfer_reason_str((enum ftc_xfer_reason)r));
		U(d, key, c->xfer_bad[r]);
	}
	U(d, "xfer_stale", c->xfer_stale);
	U(d, "xfer_forged", c->xfer_forged);
	U(d, "in_foreign_logs", c->in_foreign_logs);
	U(d, "logs_carried", c->logs_carried);
	U(d, "carry_full", c->carry_full);
	U(d, "own_updates", c->own_updates);
	U(d, "own_bytes", c->own_bytes);
	U(d, "own_parts", c->own_parts);
	U(d, "own_log_full", c->own_log_full);
	U(d, "own_log_updates", n->hlog != NULL ? ftc_hlog_count(n->hlog) : 0);
	U(d, "retransmits", c->retransmits);
	U(d, "uncut", c->uncut);
	U(d, "retrans_parts", c->retrans_parts);
	U(d, "held_ahead", c->held_ahead);
	U(d, "out_packets", c->out_packets);
	U(d, "out_piggybacked_logs", c->out_piggybacked_logs);
	U(d, "out_propagating", c->out_propagating);
	U(d, "out_too_big", c->out_too_big);
	U(d, "out_copied", c->out_copied);
	U(d, "out_no_mbuf", c->out_no_mbuf);
	U(d, "held_packets_in", c->held_packets_in);
	U(d, "held_packets", n->hold_n);
	U(d, "held_max", c->held_max);
	U(d, "released", c->released);
	U(d, "hold_full", c->hold_full);
	U(d, "release_wait_us", n->hz ? c->release_wait_cycles * 1000000 / n->hz : 0);
	U(d, "release_wait_max_us", n->hz ? c->release_wait_max * 1000000 / n->hz : 0);
	U(d, "feedback_tx", c->feedback_tx);
	U(d, "feedback_rx", c->feedback_rx);
	U(d, "void_dropped", c->void_dropped);
	for (unsigned int i = 0; i < n->n_inst; i++) {
		char key[32];

		const struct ftc_void *v = ftc_last_void(n, i);

		snprintf(key, sizeof(key), "void%u", i);
		U(d, key, v != NULL ? v->seq : 0);
	}
	/* recovery */
	rte_tel_data_add_dict_string(d, "phase", !n->cfg->recover ? "running"
						 : n->recovering ? "fetching"
						 : "running");
	U(d, "recovering_drops", c->recovering_drops);
	U(d, "fetch_tries", c->fetch_tries);
	U(d, "pieces_in", c->pieces_in);
	U(d, "pieces_out", c->pieces_out);
	U(d, "fetch_answers", c->fetch_answers);
	U(d, "resync_in", c->resync_in);
	U(d, "resync_out", c->resync_out);
	U(d, "full_asked", c->full_asked);
	U(d, "forgot", c->forgot);
	U(d, "xfer_other", c->xfer_other);
	U(d, "loaded_seq", n->loaded_seq);
	U(d, "fetch_us", n->fetched_ns > n->start_ns ? (n->fetched_ns - n->start_ns) / 1000 : 0);
	U(d, "load_us", n->ready_ns > n->start_ns ? (n->ready_ns - n->start_ns) / 1000 : 0);
	for (unsigned int k = 0; k < n->n_rep; k++) {
		char key[48];

		snprintf(key, sizeof(key), "replica%u_synced", n->rep[k].instance);
		U(d, key, n->rep[k].synced);
		snprintf(key, sizeof(key), "replica%u_resets", n->rep[k].instance);
		U(d, key, n->rep[k].resets);
		snprintf(key, sizeof(key), "replica%u_unsynced_logs", n->rep[k].instance);
		U(d, key, n->rep[k].unsynced_logs);
		snprintf(key, sizeof(key), "replica%u_applied", n->rep[k].instance);
		U(d, key, n->rep[k].applied_updates);
		snprintf(key, sizeof(key), "replica%u_group_applied", n->rep[k].instance);
		U(d, key, ftc_group_applied(&n->rep[k]));
		snprintf(key, sizeof(key), "replica%u_fenced_logs", n->rep[k].instance);
		U(d, key, n->rep[k].fenced_logs);
	}
	return 0;
}

/* ---- /onvm/ftc/digest: a replica's copy against its NF's state ----
 *
 * Both sides hash every 4 KB page of each region that is not all zero
 * (region, page number, bytes; the last page of a region zero-filled past
 * its end) and add the hashes up: the same pages, the same sum, whatever
 * order they are found in.  Read at rest (the TX unit writes replicas
 * meanwhile): a digest while updates flow may be torn. */

static uint64_t
page_hash(uint16_t region, uint32_t page, const uint8_t *b, uint32_t len)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	h = (h ^ region) * UINT64_C(0x100000001b3);
	h = (h ^ page) * UINT64_C(0x100000001b3);
	for (uint32_t i = 0; i < FTC_PAGE; i++)
		h = (h ^ (i < len ? b[i] : 0)) * UINT64_C(0x100000001b3);
	return h;
}

static bool
all_zero(const uint8_t *b, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (b[i] != 0)
			return false;
	return true;
}

static void
add_digest(struct rte_tel_data *d, const char *key, uint64_t sum, uint64_t pages)
{
	struct rte_tel_data *o = rte_tel_data_alloc();
	char hex[20];

	if (o == NULL)
		return;
	rte_tel_data_start_dict(o);
	snprintf(hex, sizeof(hex), "%016" PRIx64, sum);
	rte_tel_data_add_dict_string(o, "digest", hex);
	rte_tel_data_add_dict_uint(o, "pages", pages);
	rte_tel_data_add_dict_container(d, key, o, 0);
}

static void
own_digest(const struct ftc_node *n, struct rte_tel_data *d)
{
	struct nf_state_layout layout;
	const struct onvm_nf_slot *s;
	uint64_t sum = 0, pages = 0;
	char err[128];
	int id;

	id = mgr_service_pick(mgr.shm, n->service, 0);
	if (id < 0)
		return;
	s = &mgr.shm->nfs[id];
	if (__atomic_load_n(&s->state_mz[0], __ATOMIC_ACQUIRE) == '\0' ||
	    mgr_nf_state_layout(s, &layout, err, sizeof(err)) < 0)
		return;
	for (uint32_t r = 0; r < layout.n_regions; r++) {
		const uint8_t *canon = mgr.state_seg.base + s->state_off + layout.regions[r].canon_off;
		const uint64_t size = layout.regions[r].size;

		for (uint64_t off = 0; off < size; off += FTC_PAGE) {
			uint32_t len = (uint32_t)RTE_MIN((uint64_t)FTC_PAGE, size - off);

			if (all_zero(canon + off, len))
				continue;
			sum += page_hash((uint16_t)r, (uint32_t)(off >> FTC_PAGE_SHIFT), canon + off,
					 len);
			pages++;
		}
	}
	add_digest(d, "own", sum, pages);
}

static void
replica_digest(const struct ftc_replica *r, struct rte_tel_data *d)
{
	const struct ftc_store *st = &r->store;
	uint64_t sum = 0, pages = 0;
	char key[32];

	for (uint32_t i = 0; i < st->slots; i++) {
		const uint64_t k = __atomic_load_n(&st->keys[i], __ATOMIC_ACQUIRE);
		const uint8_t *b;

		if (k == 0)
			continue;
		b = st->arena + ((size_t)st->at[i] << FTC_PAGE_SHIFT);
		if (all_zero(b, FTC_PAGE))
			continue;
		sum += page_hash((uint16_t)((k - 1) >> 32), (uint32_t)(k - 1), b, FTC_PAGE);
		pages++;
	}
	snprintf(key, sizeof(key), "replica%u", r->instance);
	add_digest(d, key, sum, pages);
}

static int
tel_digest(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct ftc_node *n = &mgr_ftc_node;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	if (!n->on)
		return 0;
	if (n->head)
		own_digest(n, d);
	for (unsigned int k = 0; k < n->n_rep; k++)
		replica_digest(&n->rep[k], d);
	return 0;
}

int
mgr_ftc_telemetry_init(void)
{
	if (mgr_tel_register("/onvm/ftc/digest", tel_digest,
				       "Digests of this node's NF's state and of its replicas "
				       "(compare at rest)") != 0) {
		MGR_LOG(ERR, "cannot register /onvm/ftc/digest");
		return -1;
	}
	if (mgr_tel_register("/onvm/ftc", tel_ftc,
				       "This node's part of its FTC chain: role, the held and need "
				       "vectors, replicas, counters") != 0) {
		MGR_LOG(ERR, "cannot register /onvm/ftc");
		return -1;
	}
	return 0;
}
