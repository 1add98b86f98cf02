/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * sl_recover.c -- a stateless chain's set-up, its recovery on the control
 * thread, and /onvm/store (design: docs/design/stateless.md).
 *
 * The unit of recovery is the chain: when one of its NFs dies, the others
 * are killed too, and fresh processes of all of them are launched.  They
 * fence the dead incarnation in the store and load their state at the
 * recovery point E, the newest epoch every NF had closed -- one consistent
 * cut of the whole chain, whichever NF ran ahead -- and the root replays
 * its log after marker E.  Surviving NFs cannot simply go on: each is
 * ahead of E by its own amount, and the replay would make them count the
 * same packets twice.
 *
 *   RUNNING --an NF gone--> DOWN --all gone, relaunch--> STARTING
 *     ^                                                      | every NF loaded
 *     +---- the RX unit, replay done ---- REPLAY <-----------+
 *
 * An NF that cannot start (the store is unreachable) exits; the chain is
 * launched again every second, counted, and the node serves its other
 * chains meanwhile.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>
#include <rte_telemetry.h>

#include "sl_priv.h"

/* A chain whose start failed starts again at once, then after 100 ms,
 * doubling to 1 s while it keeps failing (the store down): a fresh NF
 * killed once costs no wait, an absent store no busy loop. */
#define SL_RETRY_FIRST_NS 100000000ULL
#define SL_RETRY_MAX_NS 1000000000ULL

static void
retry_later(struct sl_chain *c, uint64_t now)
{
	c->retry_ns = now + c->retry_wait_ns;
	c->retry_wait_ns = c->retry_wait_ns == 0 ? SL_RETRY_FIRST_NS
						 : RTE_MIN(2 * c->retry_wait_ns, SL_RETRY_MAX_NS);
}

static int
ring_alloc(struct sl_ring *r, uint32_t cap, void **a, size_t sa, void **b, size_t sb)
{
	*r = (struct sl_ring){.cap = cap};
	*a = rte_zmalloc("sl", (size_t)cap * sa, 0);
	*b = rte_zmalloc("sl", (size_t)cap * sb, 0);
	return *a != NULL && *b != NULL ? 0 : -ENOMEM;
}

static void
new_token(struct onvm_chain *ch)
{
	uint64_t t;

	do
		t = rte_rand();
	while (t == 0);
	__atomic_store_n(&ch->sl_token, t, __ATOMIC_RELEASE);
}

int
mgr_sl_init(void)
{
	for (int i = 0; i < mgr.cfg.nchains; i++) {
		const struct mgr_chain_cfg *cc = &mgr.cfg.chains[i];
		struct onvm_chain *ch = &mgr.shm->chains[i];
		struct sl_chain *c = &mgr_sl[i];
		uint32_t logn = cc->store.log_packets, hold;

		if (!cc->stateless)
			continue;
		ch->store = cc->store;
		new_token(ch);
		ch->sl_committed = 0;
		__atomic_store_n(&ch->stateless, 1, __ATOMIC_RELEASE);
		c->id = (uint16_t)i;
		for (uint16_t k = 0; k < cc->len; k++)
			mgr_sl_service[cc->services[k]] = (uint8_t)(i + 1);
		mgr_sl_in_port[cc->ingress_port] = (uint8_t)(i + 1);
		/* Everything in the chain was logged: the exit holds at most the
		 * log, its markers, and what the NFs generate (a margin). */
		hold = logn + logn / 2 + SL_MARKER_ROOM;
		if (2 * logn + hold > mgr.cfg.nb_mbufs / 2) {
			MGR_LOG(ERR, "chain '%s': its log (%u), a replay's copies and its exit (%u) "
				     "could take %u mbufs, more than half of the node's %u: raise "
				     "pool.mbufs or lower store.log_packets",
				cc->name, logn, hold, 2 * logn + hold, mgr.cfg.nb_mbufs);
			return -ENOSPC;
		}
		if (ring_alloc(&c->hold, hold, (void **)&c->q, sizeof(*c->q), (void **)&c->port,
			       sizeof(*c->port)) < 0 ||
		    ring_alloc(&c->xmk, hold, (void **)&c->xmk_id, sizeof(uint64_t),
			       (void **)&c->xmk_pos, sizeof(uint64_t)) < 0 ||
		    ring_alloc(&c->log, logn, (void **)&c->log_m, sizeof(*c->log_m),
			       (void **)&c->log_ts, sizeof(uint64_t)) < 0 ||
		    ring_alloc(&c->lmk, logn, (void **)&c->lmk_id, sizeof(uint64_t),
			       (void **)&c->lmk_pos, sizeof(uint64_t)) < 0) {
			MGR_LOG(ERR, "chain '%s': no memory for its log and exit queue", cc->name);
			return -ENOMEM;
		}
		c->next_marker = 1;
		c->flush_cycles = (uint64_t)cc->store.flush_us * (rte_get_tsc_hz() / 1000000);
		c->on = true;
		mgr_sl_any = true;
		if (cc->peer_role != 0)
			mgr_sl_peer_init(c, cc);
		MGR_LOG(INFO, "chain '%s': stateless, store %s (%s%s, epoch of %u packets or %u us, "
			      "log of %u)",
			cc->name, cc->store.addr, cc->store.mode == ONVM_STORE_SYNC ? "sync" : "async",
			cc->store.cache ? ", cache" : "", cc->store.flush_pkts, cc->store.flush_us,
			logn);
	}
	return 0;
}

/* ---- the control thread ---- */

static bool
in_chain(uint16_t ci, uint16_t service)
{
	for (uint16_t k = 0; k < mgr.shm->chains[ci].len; k++)
		if (mgr.shm->chains[ci].services[k] == service)
			return true;
	return false;
}

/* How the chain's NFs are: every step has its instance, and how many of
 * them have loaded their state; the chain's slots in use (any state). */
static void
survey(uint16_t ci, bool *whole, uint16_t *ready, uint16_t *used, uint16_t *stopped)
{
	*whole = true;
	*ready = 0;
	*used = 0;
	*stopped = 0;
	for (uint16_t k = 0; k < mgr.shm->chains[ci].len; k++) {
		const struct onvm_nf_slot *s = mgr_sl_step_slot(ci, k);

		if (s == NULL)
			*whole = false;
		else if (__atomic_load_n(&s->store_token, __ATOMIC_ACQUIRE) ==
				 __atomic_load_n(&mgr.shm->chains[ci].sl_token, __ATOMIC_RELAXED) &&
			 __atomic_load_n(&s->store.state, __ATOMIC_ACQUIRE) == ONVM_STORE_READY)
			(*ready)++;
		else if (__atomic_load_n(&s->store.state, __ATOMIC_ACQUIRE) == ONVM_STORE_STOPPED)
			(*stopped)++;
	}
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++)
		if (mgr.shm->nfs[id].status != ONVM_NF_FREE && in_chain(ci, mgr.shm->nfs[id].service_id))
			(*used)++;
}

/* An NF of the chain refused by the store as of a dead incarnation: a
 * newer one FENCEd the chain (another node runs it). */
static bool
fenced_nf(uint16_t ci)
{
	for (uint16_t k = 0; k < mgr.shm->chains[ci].len; k++) {
		const struct onvm_nf_slot *s = mgr_sl_step_slot(ci, k);

		if (s != NULL && __atomic_load_n(&s->store.fenced, __ATOMIC_RELAXED) > 0)
			return true;
	}
	return false;
}

static void
go_down(struct sl_chain *c, const char *why, uint64_t now)
{
	const char *name = mgr.shm->chains[c->id].name;

	MGR_LOG(WARNING, "chain '%s': %s: its NFs %s", name, why,
		c->peer_fenced ? "stop, for good" : "restart from the store");
	c->t_detect = now;
	c->timing_open = true;
	sl_set_state(c, (uint8_t)(SL_RUN(sl_state(c)) + 1), SL_DOWN);
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++)
		if (mgr.shm->nfs[id].status != ONVM_NF_FREE && in_chain(c->id, mgr.shm->nfs[id].service_id))
			mgr_nf_kill(id, "its stateless chain recovers");
}

static void
relaunch(struct sl_chain *c)
{
	struct onvm_chain *ch = &mgr.shm->chains[c->id];

	/* The recovery point: the newest marker the exit released (every NF
	 * closed exactly that epoch; the root's log starts right after it),
	 * or, none released yet, what the NFs loaded at their first start --
	 * and if the chain never ran, none (0): the store's own, as at the
	 * first start.  (Sent as 1 + E; read after the exit saw the chain
	 * down, so no release is still under way.) */
	__atomic_store_n(&ch->sl_recover_epoch,
			 c->first_known ? RTE_MAX(__atomic_load_n(&ch->sl_committed, __ATOMIC_ACQUIRE),
						  c->first_epoch) + 1
					: 0,
			 __ATOMIC_RELEASE);
	new_token(ch);
	for (int i = 0; i < mgr.cfg.nnfs; i++)
		if (in_chain(c->id, mgr.cfg.nfs[i].service) && mgr_nf_launch_cfg(i) < 0)
			MGR_LOG(ERR, "chain '%s': NF '%s' could not be launched again",
				mgr.shm->chains[c->id].name, mgr.cfg.nfs[i].name);
	sl_set_state(c, SL_RUN(sl_state(c)), SL_STARTING);
}

int
mgr_sl_ctl(void)
{
	uint64_t now = mgr_now_ns();
	int next_ms = 100;

	MGR_ASSERT_CTL_LOCKED();
	if (mgr.shm->shutting_down)
		return next_ms;
	for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++) {
		struct sl_chain *c = &mgr_sl[ci];
		uint16_t len = mgr.shm->chains[ci].len, ready, used, stopped;
		bool whole;
		uint32_t st;

		if (!c->on)
			continue;
		survey(ci, &whole, &ready, &used, &stopped);
		/* A primary behind a predecessor that failed the chain over to
		 * its spare (a newer epoch heard, or its NFs fenced in the
		 * store): it runs the chain no more -- its NFs stopped, never
		 * relaunched here, or it would fence the spare and load a state
		 * older than what the spare released. */
		if (c->peer_role == MGR_SL_PEER_PRIMARY && !c->peer_fenced &&
		    (__atomic_load_n(&c->peer_superseded, __ATOMIC_ACQUIRE) || fenced_nf(ci))) {
			/* (read by the RX and TX units: their HEARTBEATs, lacks) */
			__atomic_store_n(&c->peer_fenced, true, __ATOMIC_RELEASE);
			go_down(c, "another node runs the chain now (failed over)", now);
		}
		if (c->peer_fenced)
			continue;
		st = sl_state(c);
		c->launched |= used > 0; /* (the node launches them after this thread starts) */
		switch (SL_PHASE(st)) {
		case SL_RUNNING:
			if (c->timing_open && c->t_replayed == 0) {
				c->t_replayed = now;
				c->timing_open = false;
				MGR_LOG(INFO, "chain '%s' recovered: detected -> NFs gone %" PRIu64
					      " us -> state loaded %" PRIu64 " us -> replay done %" PRIu64
					      " us",
					mgr.shm->chains[ci].name, (c->t_down - c->t_detect) / 1000,
					(c->t_started - c->t_down) / 1000,
					(c->t_replayed - c->t_started) / 1000);
			}
			if (whole && ready == len) {
				if (!c->first_known) {
					/* (all loaded the same E: one FENCE token) */
					c->first_epoch = mgr_sl_step_slot(ci, 0)->store.recovered_epoch;
					c->first_known = true;
				}
				c->armed = true;
			} else if (c->armed && (!whole || stopped > 0)) {
				c->recoveries++;
				c->t_down = c->t_started = c->t_replayed = 0;
				go_down(c, !whole ? "an NF died"
						  : "an NF's store stopped taking its updates (fenced)",
					now);
				next_ms = 1;
			} else if (!c->armed && c->launched && used < len) {
				/* Its first start failed (the store down?): again,
				 * a second from now. */
				c->start_retries++;
				retry_later(c, now);
				go_down(c, "its NFs could not start", now);
				next_ms = 1;
			}
			break;
		case SL_DOWN:
			next_ms = 1;
			if (used > 0 || now < c->retry_ns)
				break; /* the dead ones' slots still being reclaimed */
			if (__atomic_load_n(&c->tx_seen, __ATOMIC_ACQUIRE) != st)
				break; /* the exit may still be releasing */
			c->t_down = now;
			relaunch(c);
			break;
		case SL_STARTING:
			next_ms = 1;
			if (whole && ready == len) {
				uint64_t e = UINT64_MAX;

				for (uint16_t k = 0; k < len; k++)
					e = RTE_MIN(e, mgr_sl_step_slot(ci, k)->store.recovered_epoch);
				c->replay_epoch = e;
				c->t_started = now;
				c->armed = true;
				c->first_known = true; /* (a known E from here on) */
				c->first_epoch = RTE_MAX(c->first_epoch, e);
				c->retry_wait_ns = 0; /* started: the next failure retries at once */
				sl_set_state(c, SL_RUN(st), SL_REPLAY);
			} else if (used < len || stopped > 0) {
				/* One died starting (the store down?): all of them
				 * again, a second from now. */
				c->start_retries++;
				retry_later(c, now);
				go_down(c, "an NF died while the chain restarted", now);
			}
			break;
		case SL_REPLAY:
			next_ms = 1;
			if (!whole || stopped > 0) {
				c->start_retries++;
				go_down(c, "an NF died during the replay", now);
			}
			break;
		}
	}
	return next_ms;
}

/* ---- /onvm/store ---- */

static const char *const state_names[] = {"off", "loading", "ready", "down", "stopped"};
static const char *const phase_names[] = {"running", "down", "starting", "replay"};

static void
add_nf(struct rte_tel_data *o, const struct onvm_nf_slot *s)
{
	const struct onvm_store_stats *st = &s->store;
	uint32_t state = __atomic_load_n(&st->state, __ATOMIC_RELAXED);

	rte_tel_data_add_dict_uint(o, "instance", s->instance_id);
	rte_tel_data_add_dict_uint(o, "service", s->service_id);
	rte_tel_data_add_dict_uint(o, "pid", (uint64_t)s->pid);
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
	rte_tel_data_add_dict_uint(o, "cache_absorbed", st->chunks_dirtied > st->chunks_sent
								 ? st->chunks_dirtied - st->chunks_sent
								 : 0);
	rte_tel_data_add_dict_uint(o, "epochs_closed", st->epochs_closed);
	rte_tel_data_add_dict_uint(o, "loaded_chunks", st->loaded_chunks);
	rte_tel_data_add_dict_uint(o, "load_us", st->load_ns / 1000);
	rte_tel_data_add_dict_uint(o, "recovered_epoch", st->recovered_epoch);
	rte_tel_data_add_dict_uint(o, "recovered_ts", st->recovered_ts);
	rte_tel_data_add_dict_uint(o, "gen", st->gen);
}

static void
add_chain(struct rte_tel_data *d, uint16_t ci)
{
	const struct sl_chain *c = &mgr_sl[ci];
	const struct onvm_chain *ch = &mgr.shm->chains[ci];
	uint32_t st = sl_state(c), phase = SL_PHASE(st);

	rte_tel_data_add_dict_string(d, "chain", ch->name);
	rte_tel_data_add_dict_string(d, "address", ch->store.addr);
	rte_tel_data_add_dict_string(d, "mode", ch->store.mode == ONVM_STORE_SYNC ? "sync" : "async");
	rte_tel_data_add_dict_uint(d, "cache", ch->store.cache);
	rte_tel_data_add_dict_uint(d, "flush_packets", ch->store.flush_pkts);
	rte_tel_data_add_dict_uint(d, "flush_us", ch->store.flush_us);
	rte_tel_data_add_dict_uint(d, "pipeline", ch->store.pipeline);
	rte_tel_data_add_dict_string(d, "phase", phase < RTE_DIM(phase_names) ? phase_names[phase] : "?");
	rte_tel_data_add_dict_uint(d, "run", SL_RUN(st));
	rte_tel_data_add_dict_uint(d, "started", c->started);
	rte_tel_data_add_dict_uint(d, "committed", c->committed);
	rte_tel_data_add_dict_uint(d, "sl_committed",
				   __atomic_load_n(&mgr.shm->chains[ci].sl_committed, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_uint(d, "packets_in", c->packets_in);
	rte_tel_data_add_dict_uint(d, "markers_in", c->markers_in);
	rte_tel_data_add_dict_uint(d, "markers_failed", c->markers_failed);
	rte_tel_data_add_dict_uint(d, "nudges", c->nudges);
	rte_tel_data_add_dict_uint(d, "log_now", c->log.n);
	rte_tel_data_add_dict_uint(d, "log_full", c->log_full);
	rte_tel_data_add_dict_uint(d, "log_copy_fail", c->log_copy_fail);
	rte_tel_data_add_dict_uint(d, "foreign_in", c->foreign_in);
	rte_tel_data_add_dict_uint(d, "logged_held", c->logged_held);
	rte_tel_data_add_dict_uint(d, "ring_waits", c->ring_waits);
	rte_tel_data_add_dict_uint(d, "crossing", c->crossing);
	rte_tel_data_add_dict_uint(d, "skipped", c->skipped);
	rte_tel_data_add_dict_uint(d, "markers_out", c->markers_out);
	rte_tel_data_add_dict_uint(d, "held_now", c->hold.n);
	rte_tel_data_add_dict_uint(d, "held_total", c->held_total);
	rte_tel_data_add_dict_uint(d, "released", c->released);
	rte_tel_data_add_dict_uint(d, "exit_full", c->exit_full);
	rte_tel_data_add_dict_uint(d, "markers_full", c->markers_full);
	rte_tel_data_add_dict_uint(d, "recoveries", c->recoveries);
	rte_tel_data_add_dict_uint(d, "start_retries", c->start_retries);
	rte_tel_data_add_dict_uint(d, "replayed", c->replayed);
	rte_tel_data_add_dict_uint(d, "replay_runs", c->replay_runs);
	rte_tel_data_add_dict_uint(d, "replay_rerouted", c->replay_rerouted);
	rte_tel_data_add_dict_uint(d, "replay_epoch", c->replay_epoch);
	rte_tel_data_add_dict_uint(d, "recover_epoch", mgr.shm->chains[ci].sl_recover_epoch
						       ? mgr.shm->chains[ci].sl_recover_epoch - 1 : 0);
	rte_tel_data_add_dict_uint(d, "recovery_dropped", c->recovery_dropped);
	rte_tel_data_add_dict_uint(d, "stale_dropped", c->stale_dropped);
	rte_tel_data_add_dict_uint(d, "dup_suppressed", c->dup_suppressed);
	if (c->t_replayed != 0) {
		rte_tel_data_add_dict_uint(d, "last_down_us", (c->t_down - c->t_detect) / 1000);
		rte_tel_data_add_dict_uint(d, "last_load_us", (c->t_started - c->t_down) / 1000);
		rte_tel_data_add_dict_uint(d, "last_replay_us", (c->t_replayed - c->t_started) / 1000);
	}
	if (c->peer_role != 0)
		mgr_sl_peer_telemetry(d, c);
	for (uint16_t k = 0; k < ch->len; k++) {
		const struct onvm_nf_slot *s = mgr_sl_step_slot(ci, k);
		struct rte_tel_data *o;
		char key[16];

		if (s == NULL || (o = rte_tel_data_alloc()) == NULL)
			continue;
		rte_tel_data_start_dict(o);
		add_nf(o, s);
		snprintf(key, sizeof(key), "nf%u", k);
		rte_tel_data_add_dict_container(d, key, o, 0);
	}
}

/* /onvm/store,CHAIN: one stateless chain; without a parameter, the names. */
static int
tel_store(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	if (params == NULL || params[0] == '\0') {
		rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
		for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++)
			if (mgr_sl[ci].on)
				rte_tel_data_add_array_string(d, mgr.shm->chains[ci].name);
		return 0;
	}
	for (uint16_t ci = 0; ci < ONVM_MAX_CHAINS; ci++)
		if (mgr_sl[ci].on && strcmp(mgr.shm->chains[ci].name, params) == 0) {
			rte_tel_data_start_dict(d);
			add_chain(d, ci);
			return 0;
		}
	return -EINVAL;
}

int
mgr_sl_telemetry_init(void)
{
	if (mgr_tel_register("/onvm/store", tel_store,
				       "A stateless chain's store: /onvm/store,CHAIN. No parameter: "
				       "the stateless chains' names") != 0) {
		MGR_LOG(ERR, "cannot register /onvm/store");
		return -1;
	}
	return 0;
}
