/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * rsync_unit_tel.c -- /onvm/remote for the chains this node is primary or
 * standby of (plog_unit.c adds the predecessor's and calls this).  Counters
 * are plain 64-bit loads: a value may be one packet old.
 */
#include <stdio.h>

#include <rte_ring.h>
#include <rte_telemetry.h>

#include "rsync_unit_priv.h"

static const char *const rs_state_names[] = {"primary", "fenced", "standby", "replaying",
					     "active"};

static void
add_primary_stats(struct rte_tel_data *o, const struct rsync_chain *c,
		  const struct rsync_primary *pri)
{
	const struct rsync_primary_stats *s = rsync_primary_stats(pri);
	struct rte_tel_data *lat = rte_tel_data_alloc();

	rte_tel_data_add_dict_uint(o, "stages_busy", rsync_primary_stages_busy(pri));
	rte_tel_data_add_dict_uint(o, "out_before_cut", rsync_primary_stats(pri)->pkts_before_cut);
	{
		char st[RTE_TEL_MAX_STRING_LEN];

		rsync_primary_describe(pri, st, sizeof(st));
		rte_tel_data_add_dict_string(o, "stages", st);
		rte_tel_data_add_dict_uint(o, "needs_cut", rsync_primary_needs_cut(pri));
		rte_tel_data_add_dict_uint(o, "marker_out", c->marker_out);
		rte_tel_data_add_dict_uint(o, "marker_req", c->marker_req);
		rte_tel_data_add_dict_uint(o, "markers_queued", c->markers_queued);
	}
	rte_tel_data_add_dict_uint(o, "pkts_latched_now", rsync_primary_pkts_latched(pri));
	rte_tel_data_add_dict_uint(o, "stages_closed", s->stages_closed);
	rte_tel_data_add_dict_uint(o, "stages_released", s->stages_released);
	rte_tel_data_add_dict_uint(o, "votes", s->votes);
	rte_tel_data_add_dict_uint(o, "acks", s->acks);
	rte_tel_data_add_dict_uint(o, "commits_sent", s->commits_sent);
	rte_tel_data_add_dict_uint(o, "frags_sent", s->frags_sent);
	rte_tel_data_add_dict_uint(o, "frags_retrans", s->frags_retrans);
	rte_tel_data_add_dict_uint(o, "aborts_no_vote", s->aborts[RSYNC_ABORT_NO_VOTE]);
	rte_tel_data_add_dict_uint(o, "aborts_cascade", s->aborts[RSYNC_ABORT_CASCADE]);
	rte_tel_data_add_dict_uint(o, "aborts_fenced", s->aborts[RSYNC_ABORT_FENCED]);
	rte_tel_data_add_dict_uint(o, "cuts", s->cuts);
	rte_tel_data_add_dict_uint(o, "cuts_stale", s->cuts_stale);
	rte_tel_data_add_dict_uint(o, "cuts_too_old", s->cuts_too_old);
	rte_tel_data_add_dict_uint(o, "cuts_too_big", s->cuts_too_big);
	rte_tel_data_add_dict_uint(o, "cuts_dropped", s->cuts_dropped);
	rte_tel_data_add_dict_uint(o, "trims_sent", s->trims_sent);
	rte_tel_data_add_dict_uint(o, "window_waits", s->window_waits);
	rte_tel_data_add_dict_uint(o, "nd_waits", s->nd_waits);
	rte_tel_data_add_dict_uint(o, "resyncs_asked", s->resyncs_asked);
	rte_tel_data_add_dict_uint(o, "full_cuts", s->full_cuts);
	rte_tel_data_add_dict_uint(o, "full_too_big", c->full_too_big);
	rte_tel_data_add_dict_uint(o, "released_cut_ts", rsync_primary_released_cut_ts(pri));
	rte_tel_data_add_dict_uint(o, "released_cut_id", rsync_primary_released_cut_id(pri));
	rte_tel_data_add_dict_uint(o, "chain_cut_id", rsync_primary_cut_base(pri));
	rte_tel_data_add_dict_uint(o, "nd_seen", c->nd_seen);
	rte_tel_data_add_dict_uint(o, "standby_run", rsync_primary_standby_run(pri));
	rte_tel_data_add_dict_uint(o, "standby_restarts", s->standby_restarts);
	rte_tel_data_add_dict_uint(o, "pred_restarts", s->pred_restarts);
	rte_tel_data_add_dict_uint(o, "unacked_given_up", s->unacked_given_up);
	if (lat != NULL) {
		rte_tel_data_start_array(lat, RTE_TEL_U64_VAL);
		for (int b = 0; b < RSYNC_LAT_BUCKETS; b++)
			rte_tel_data_add_array_uint(lat, s->commit_lat_us[b]);
		rte_tel_data_add_dict_container(o, "commit_lat_us_log2", lat, 0);
	}
}

static void
add_standby_stats(struct rte_tel_data *o, const struct rsync_chain *c)
{
	const struct rsync_standby_stats *s = rsync_standby_stats(c->sby);
	struct rsync_standby_applied a;

	rsync_standby_get_applied(c->sby, &a);
	rte_tel_data_add_dict_uint(o, "staged", rsync_standby_staged(c->sby));
	rte_tel_data_add_dict_uint(o, "votes", s->votes);
	rte_tel_data_add_dict_uint(o, "applied", s->applied);
	rte_tel_data_add_dict_uint(o, "applied_txid", a.txid);
	rte_tel_data_add_dict_uint(o, "applied_cut_ts", a.cut_ts);
	rte_tel_data_add_dict_uint(o, "applied_txts", s->applied_txts);
	rte_tel_data_add_dict_uint(o, "txts_entries", rsync_standby_txts_entries(c->sby));
	rte_tel_data_add_dict_uint(o, "aborted", s->aborted);
	rte_tel_data_add_dict_uint(o, "orphans", s->orphans);
	rte_tel_data_add_dict_uint(o, "takeovers", c->takeovers);
	rte_tel_data_add_dict_uint(o, "takeover_applied", s->takeover_applied);
	/* joining and resynchronising (rsync_standby.h) */
	rte_tel_data_add_dict_uint(o, "state_lost", !rsync_standby_whole(c->sby));
	rte_tel_data_add_dict_uint(o, "joins", s->joins);
	rte_tel_data_add_dict_uint(o, "resync_votes", s->resync_votes);
	rte_tel_data_add_dict_uint(o, "resync_heartbeats", s->resync_hbs);
	rte_tel_data_add_dict_uint(o, "unchecked_refused", s->unchecked_refused);
	rte_tel_data_add_dict_uint(o, "full_applied", s->full_applied);
	rte_tel_data_add_dict_uint(o, "state_skipped", s->state_skipped);
	rte_tel_data_add_dict_uint(o, "takeovers_not_synced", s->takeovers_not_synced);
	rte_tel_data_add_dict_uint(o, "takeover_txid", c->takeover_txid);
	rte_tel_data_add_dict_uint(o, "takeover_presumed_pkts", s->takeover_presumed_pkts);
	/* (ms: a signed int; an offset of more than 24 days is clamped) */
	rte_tel_data_add_dict_int(
		o, "clock_offset_ms",
		(int)RTE_MAX(RTE_MIN(__atomic_load_n(&c->clock_offset, __ATOMIC_RELAXED) / 1000000,
				     (int64_t)INT32_MAX),
			     (int64_t)INT32_MIN));
	rte_tel_data_add_dict_uint(o, "takeover_unreleasable", s->takeover_unreleasable);
	rte_tel_data_add_dict_uint(o, "primary_run", rsync_standby_primary_run(c->sby));
	rte_tel_data_add_dict_uint(o, "primary_restarts", s->primary_restarts);
	rte_tel_data_add_dict_uint(o, "primary_runs_taken_back", s->primary_runs_taken_back);
	rte_tel_data_add_dict_uint(o, "replay_next", c->replay_next);
	rte_tel_data_add_dict_uint(o, "replay_gap_drops", c->replay_gap_drops);
	rte_tel_data_add_dict_uint(o, "replay_held_drops", c->replay_held_drops);
	rte_tel_data_add_dict_uint(o, "replay_lost", c->replay_lost);
	rte_tel_data_add_dict_uint(o, "replay_acks_sent", c->replay_acks_sent);
	rte_tel_data_add_dict_uint(o, "replay_start_ns", c->replay_start_ns);
	rte_tel_data_add_dict_uint(o, "replay_end_ns", c->replay_end_ns);
	rte_tel_data_add_dict_uint(o, "first_in_ns", c->first_in_ns);
	rte_tel_data_add_dict_uint(o, "first_out_ns", c->first_out_ns);
	rte_tel_data_add_dict_uint(o, "out_passed", c->out_passed);
	rte_tel_data_add_dict_uint(o, "out_dup", c->out_dup);
	rte_tel_data_add_dict_uint(o, "out_before_takeover", c->out_before_takeover);
}

/* Every chain this node is primary or standby of into dict `d`, one dict
 * each, keyed by name: its role, then what fill() adds (under the lock
 * mgr_rsync_fini() takes). */
typedef void chain_fill_fn(struct rte_tel_data *o, const struct rsync_chain *c,
			   const struct rsync_primary *pri, int i);

static void
each_chain(struct rte_tel_data *d, chain_fill_fn *fill)
{
	pthread_mutex_lock(&rsync_fini_lock);
	for (int i = 0; i < rsync_nchains; i++) {
		const struct rsync_chain *c = &rsync_chains[i];
		const struct rsync_primary *pri = rsync_pri(c);
		struct rte_tel_data *o = rte_tel_data_alloc();

		if (o == NULL)
			break;
		rte_tel_data_start_dict(o);
		rte_tel_data_add_dict_string(o, "role", pri != NULL ? "primary" : "standby");
		fill(o, c, pri, i);
		rte_tel_data_add_dict_container(d, c->cfg->name, o, 0);
	}
	pthread_mutex_unlock(&rsync_fini_lock);
}

/* /onvm/remote/brief's part: what the node agent reads (the full one
 * starts with it). */
static void
fill_brief(struct rte_tel_data *o, const struct rsync_chain *c, const struct rsync_primary *pri,
	   int i)
{
	(void)i;
	rte_tel_data_add_dict_string(o, "state", rs_state_names[c->state]);
	rte_tel_data_add_dict_uint(o, "epoch", pri != NULL ? rsync_primary_epoch(pri)
							  : rsync_standby_epoch(c->sby));
	rte_tel_data_add_dict_uint(o, "run_id", mgr.remote.run);
	if (pri == NULL) {
		rte_tel_data_add_dict_uint(o, "synced", rsync_standby_synced(c->sby));
		rte_tel_data_add_dict_uint(o, "nfs_parked",
					   __atomic_load_n(&c->nfs_parked, __ATOMIC_RELAXED));
	}
}

static void
fill_full(struct rte_tel_data *o, const struct rsync_chain *c, const struct rsync_primary *pri,
	  int i)
{
	fill_brief(o, c, pri, i);
	/* a standby made primary (re-protection: its predecessor's PROTECT) */
	rte_tel_data_add_dict_uint(o, "promoted_ns", c->promoted_ns);
	rte_tel_data_add_dict_uint(o, "protects_refused", c->protects_refused);
	rte_tel_data_add_dict_uint(o, "id", c->cfg->id);
	rte_tel_data_add_dict_uint(o, "pred_run", c->pred_run);
	rte_tel_data_add_dict_uint(o, "ingress_last_ts", c->last_ts);
	rte_tel_data_add_dict_uint(o, "ingress_admitted", c->admitted);
	rte_tel_data_add_dict_uint(o, "ingress_replayed", c->admitted_replay);
	rte_tel_data_add_dict_uint(o, "ingress_stale", c->stale);
	rte_tel_data_add_dict_uint(o, "ingress_replay_covered", c->replay_covered);
	rte_tel_data_add_dict_uint(o, "ingress_before_takeover", c->before_takeover);
	rte_tel_data_add_dict_uint(o, "ingress_gaps", c->gaps);
	rte_tel_data_add_dict_uint(o, "ingress_new_base", c->ts_new_base);
	rte_tel_data_add_dict_uint(o, "ingress_unstamped", c->bad[PLOG_SHIM_NOT_SHIM]);
	for (int r = PLOG_SHIM_SHORT; r < PLOG_SHIM_REASON_MAX; r++) {
		char key[40];

		snprintf(key, sizeof(key), "ingress_shim_%s",
			 plog_shim_reason_str((enum plog_shim_reason)r));
		rte_tel_data_add_dict_uint(o, key, c->bad[r]);
	}
	rte_tel_data_add_dict_uint(o, "ctl_ring_full", c->ctl_ring_full);
	for (int r = 0; r < RSYNC_RX_REASON_MAX; r++) {
		char key[48];

		snprintf(key, sizeof(key), "ctl_%s",
			 rsync_rx_reason_str((enum rsync_rx_reason)r));
		rte_tel_data_add_dict_uint(o, key, c->ctl_rx[r]);
	}
	rte_tel_data_add_dict_uint(o, "ctrl_sent", c->sent);
	rte_tel_data_add_dict_uint(o, "send_fail", c->send_fail);
	rte_tel_data_add_dict_uint(o, "out_latched", c->out_latched);
	rte_tel_data_add_dict_uint(o, "out_released", c->out_released);
	rte_tel_data_add_dict_uint(o, "out_aborted", c->out_aborted);
	rte_tel_data_add_dict_uint(o, "out_latch_full", c->out_latch_full);
	rte_tel_data_add_dict_uint(o, "out_waiting", c->wait_n);
	rte_tel_data_add_dict_uint(o, "out_unstamped", c->out_unstamped);
	rte_tel_data_add_dict_uint(o, "out_refused", c->out_refused);
	rte_tel_data_add_dict_uint(o, "markers_injected", c->markers_injected);
	rte_tel_data_add_dict_uint(o, "markers_lost", c->markers_lost);
	rte_tel_data_add_dict_uint(o, "markers_dropped",
				  __atomic_load_n(&mgr.remote.markers_dropped[i], __ATOMIC_RELAXED));
	rte_tel_data_add_dict_uint(o, "markers_wait_full", c->markers_wait_full);
	rte_tel_data_add_dict_uint(o, "markers_not_awaited", c->markers_not_awaited);
	rte_tel_data_add_dict_uint(o, "out_cut_room", c->out_cut_room);
	rte_tel_data_add_dict_uint(o, "out_release_waiting",
				   (c->rel != NULL ? rte_ring_count(c->rel) : 0) +
					   (c->rel_head != NULL));
	rte_tel_data_add_dict_uint(o, "out_release_drops", c->out_release_drops);
	rte_tel_data_add_dict_uint(o, "in_unlogged_port", c->in_unlogged_rx);
	rte_tel_data_add_dict_uint(o, "in_unlogged_nf", c->in_unlogged_nf);
	rte_tel_data_add_dict_uint(o, "out_escaped", c->out_escaped);
	rte_tel_data_add_dict_uint(o, "cuts_with_state", c->cuts_state);
	rte_tel_data_add_dict_uint(o, "cuts_nf_failed", c->cuts_nf_failed);
	rte_tel_data_add_dict_uint(o, "cuts_nf_missing", c->cuts_nf_missing);
	rte_tel_data_add_dict_uint(o, "state_bytes_applied", c->state_bytes_applied);
	rte_tel_data_add_dict_uint(o, "state_apply_failed", c->state_apply_failed);
	rte_tel_data_add_dict_uint(o, "layout_mismatch", c->layout_mismatch);
	rte_tel_data_add_dict_uint(o, "state_losses", c->state_losses);
	rte_tel_data_add_dict_uint(o, "takeovers_refused", c->takeovers_refused);
	if (pri != NULL)
		add_primary_stats(o, c, pri);
	else
		add_standby_stats(o, c);
	if (pri != NULL && c->sby != NULL) /* what it took over */
		rte_tel_data_add_dict_uint(o, "takeovers", c->takeovers);
}

void
mgr_rsync_telemetry_brief(struct rte_tel_data *d)
{
	each_chain(d, fill_brief);
}

void
mgr_rsync_telemetry(struct rte_tel_data *d)
{
	each_chain(d, fill_full);
}
