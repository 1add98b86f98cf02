/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * telemetry.c -- the node's state as DPDK telemetry commands under /onvm/,
 * readable with dpdk-telemetry.py -f PREFIX (or any client of the
 * dpdk_telemetry.v2 socket).  Values are read without locks from the
 * counters' single writers: each number is exact, a set of numbers is a
 * snapshot taken over a few microseconds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "mgr.h"

static uint64_t
cycles_to_ns(uint64_t cycles)
{
	return (uint64_t)((double)cycles * 1e9 / (double)rte_get_tsc_hz());
}


static int
tel_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "node", mgr.cfg.node_name);
	rte_tel_data_add_dict_string(d, "file_prefix", mgr.file_prefix);
	rte_tel_data_add_dict_string(d, "version", ONVM_VERSION);
	rte_tel_data_add_dict_int(d, "pid", mgr.shm->mgr_pid);
	rte_tel_data_add_dict_uint(d, "uptime_ms", (mgr_now_ns() - mgr.start_ns) / 1000000);
	rte_tel_data_add_dict_uint(d, "run_id", mgr.remote.run);
	rte_tel_data_add_dict_int(d, "ports", mgr.nb_ports);
	rte_tel_data_add_dict_uint(d, "nf_deaths", mgr.nf_deaths);
	rte_tel_data_add_dict_uint(d, "nf_instances_lost", mgr.nf_instances_lost);
	rte_tel_data_add_dict_uint(d, "nf_failovers", mgr.nf_failovers);
	rte_tel_data_add_dict_uint(d, "nf_hung", mgr.nf_hung);
	rte_tel_data_add_dict_uint(d, "nf_start_failures", mgr.nf_start_failures);
	rte_tel_data_add_dict_uint(d, "nf_start_relaunches", mgr.nf_start_relaunches);
	rte_tel_data_add_dict_uint(d, "nf_container_failures", mgr.nf_container_failures);
	rte_tel_data_add_dict_uint(d, "nf_standby_failures", mgr.nf_standby_failures);
	rte_tel_data_add_dict_uint(d, "nf_registrations_refused",
				   __atomic_load_n(&mgr.nf_registrations_refused, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_uint(d, "nf_alloc_refill_failures", UNITS_SUM(alloc_fail));
	rte_tel_data_add_dict_uint(d, "backpressure_holds", UNITS_SUM(backpressure));
	rte_tel_data_add_dict_uint(d, "holds_released_early", UNITS_SUM(hold_expired));
	/* Markers of protected chains between several instances (marker_align.c). */
	rte_tel_data_add_dict_uint(d, "markers_aligned", UNITS_SUM(markers_aligned));
	rte_tel_data_add_dict_uint(d, "align_given_up", UNITS_SUM(align_given_up));
	rte_tel_data_add_dict_uint(d, "markers_stale", UNITS_SUM(markers_stale));
	rte_tel_data_add_dict_uint(d, "markers_refused", UNITS_SUM(markers_refused));
	rte_tel_data_add_dict_uint(d, "align_waits", UNITS_SUM(align_waits));
	rte_tel_data_add_dict_uint(d, "nf_reclaimed_mbufs", mgr.nf_reclaimed_mbufs);
	return 0;
}

/*
 * mbufs the pool holds beyond its size: the backend's count plus every
 * lcore cache, unclamped (rte_mempool_avail_count() clamps at the size).
 * Anything above zero was freed twice.  Known for ring-backed pools (the
 * default); O(RTE_MAX_LCORE), telemetry only.
 */
static uint64_t
pool_overcount(void)
{
	const struct rte_mempool_ops *ops = rte_mempool_get_ops(mgr.pool->ops_index);
	uint64_t n;

	if (strncmp(ops->name, "ring_", 5) != 0)
		return 0;
	n = rte_ring_count((const struct rte_ring *)mgr.pool->pool_data);

	if (mgr.pool->cache_size != 0)
		for (unsigned int lc = 0; lc < RTE_MAX_LCORE; lc++)
			n += mgr.pool->local_cache[lc].len;
	return n > mgr.pool->size ? n - mgr.pool->size : 0;
}

/* mbufs kept ready for NFs that generate packets (their alloc rings). */
static uint64_t
nf_reserved(void)
{
	uint64_t n = 0;

	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++)
		n += rte_ring_count(mgr.shm->nfs[id].alloc_ring);
	return n;
}

static int
tel_pool(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", mgr.pool->name);
	rte_tel_data_add_dict_uint(d, "size", mgr.pool->size);
	rte_tel_data_add_dict_uint(d, "avail", rte_mempool_avail_count(mgr.pool));
	rte_tel_data_add_dict_uint(d, "in_use", rte_mempool_in_use_count(mgr.pool));
	rte_tel_data_add_dict_uint(d, "idle_in_use", mgr.idle_pool_in_use);
	rte_tel_data_add_dict_uint(d, "overcount", pool_overcount());
	rte_tel_data_add_dict_uint(d, "nf_reserved", nf_reserved());
	return 0;
}

static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint16_t p = 0; p < mgr.nb_ports; p++) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		const struct mgr_port_stats *ps = &mgr.port_stats[p];
		struct rte_eth_stats es = {0};

		if (c == NULL)
			return -ENOMEM;
		rte_eth_stats_get(p, &es);
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_string(c, "name", mgr.shm->ports[p].name);
		rte_tel_data_add_dict_uint(c, "rx", ps->rx);
		rte_tel_data_add_dict_uint(c, "rx_bytes", ps->rx_bytes);
		rte_tel_data_add_dict_uint(c, "tx", ps->tx);
		rte_tel_data_add_dict_uint(c, "tx_bytes", ps->tx_bytes);
		rte_tel_data_add_dict_uint(c, "tx_drop", ps->tx_drop);
		rte_tel_data_add_dict_uint(c, "tx_nd", ps->tx_nd);
		rte_tel_data_add_dict_uint(c, "ctrl_rx", ps->ctrl_rx);
		rte_tel_data_add_dict_uint(c, "rx_before_start", ps->rx_before_start);
		rte_tel_data_add_dict_uint(c, "ctrl_tx", ps->ctrl_tx);
		rte_tel_data_add_dict_uint(c, "tx_gap_max_us", cycles_to_ns(ps->tx_gap_max) / 1000);
		rte_tel_data_add_dict_uint(c, "hw_imissed", es.imissed);
		rte_tel_data_add_dict_uint(c, "hw_ierrors", es.ierrors);
		for (int r = 1; r < ONVM_PARSE_REASON_MAX; r++)
			rte_tel_data_add_dict_uint(c, onvm_parse_reason_str(r), ps->parse[r]);
		rte_tel_data_add_dict_container(d, mgr.shm->ports[p].name, c, 0);
	}
	return 0;
}

/* One NF's entry of /onvm/nfs (and all of /onvm/nf,ID) into dict `c`. */
static void
nf_dict(uint16_t id, struct rte_tel_data *c)
{
	const struct onvm_nf_slot *s = &mgr.shm->nfs[id];

	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_string(c, "name", s->name);
	rte_tel_data_add_dict_string(c, "status",
				     mgr_nf_status_str(__atomic_load_n(&s->status,
								       __ATOMIC_RELAXED)));
	rte_tel_data_add_dict_int(c, "service", s->service_id);
	rte_tel_data_add_dict_int(c, "instance", id);
	/* where the service's flows reach it by (router.c): -1, none */
	rte_tel_data_add_dict_int(c, "rank", mgr_service_rank(mgr.shm, s->service_id, id));
	/* (an instance for other nodes' moved flows: no rank here) */
	rte_tel_data_add_dict_int(c, "peer_only", mgr_nf_peer_only(&mgr.nf_priv[id]));
	rte_tel_data_add_dict_uint(c, "generation", s->generation);
	rte_tel_data_add_dict_int(c, "pid", s->pid);
	rte_tel_data_add_dict_int(c, "lcore", s->lcore_id);
	rte_tel_data_add_dict_int(c, "launched", s->launched);
	/* launched with "resiliency": "local" (a hot standby is kept) */
	{
		/* (read once: the control thread may reset the slot meanwhile) */
		int ci = __atomic_load_n(&mgr.nf_priv[id].cfg_index, __ATOMIC_RELAXED);

		rte_tel_data_add_dict_int(c, "local", ci >= 0 && ci < mgr.cfg.nnfs &&
							     mgr.cfg.nfs[ci].local);
	}
	rte_tel_data_add_dict_uint(c, "rx", s->stats.rx);
	rte_tel_data_add_dict_uint(c, "rx_bytes", s->stats.rx_bytes);
	rte_tel_data_add_dict_uint(c, "tx", s->stats.tx);
	rte_tel_data_add_dict_uint(c, "act_drop", s->stats.act_drop);
	rte_tel_data_add_dict_uint(c, "act_next", s->stats.act_next);
	rte_tel_data_add_dict_uint(c, "act_tonf", s->stats.act_tonf);
	rte_tel_data_add_dict_uint(c, "act_out", s->stats.act_out);
	rte_tel_data_add_dict_uint(c, "generated", s->stats.generated);
	rte_tel_data_add_dict_uint(c, "generated_unsent", s->stats.gen_unsent);
	rte_tel_data_add_dict_uint(c, "generate_waits", s->stats.gen_waits);
	rte_tel_data_add_dict_uint(c, "generate_failures", s->stats.gen_fail);
	rte_tel_data_add_dict_uint(c, "alloc_ring_count", rte_ring_count(s->alloc_ring));
	rte_tel_data_add_dict_uint(c, "tx_wait", s->stats.tx_wait);
	rte_tel_data_add_dict_uint(c, "wakeups", s->stats.wakeups);
	rte_tel_data_add_dict_uint(c, "nd_events", s->stats.nd_events);
	rte_tel_data_add_dict_uint(c, "state_bytes", s->state_size);
	rte_tel_data_add_dict_uint(c, "state_seq", s->state_seq);
	rte_tel_data_add_dict_uint(c, "state_chunks_committed", s->state_chunks);
	rte_tel_data_add_dict_uint(c, "state_commits", s->state_commits);
	/* (the total, for a counter: mean x commits is not monotonic) */
	rte_tel_data_add_dict_uint(c, "state_commit_total_ns", cycles_to_ns(s->state_commit_cycles));
	rte_tel_data_add_dict_uint(c, "state_commit_mean_ns",
				  s->state_commits ? cycles_to_ns(s->state_commit_cycles /
								  s->state_commits) : 0);
	rte_tel_data_add_dict_uint(c, "state_commit_max_ns",
				  cycles_to_ns(s->state_commit_max_cycles));
	rte_tel_data_add_dict_uint(c, "bad_touches", s->stats.bad_touches);
	rte_tel_data_add_dict_int(c, "standby_pid",
				  __atomic_load_n(&s->standby_pid, __ATOMIC_RELAXED));
	/* (names written by the control thread at launch, as
	 * sb_last_failure below: read without its lock) */
	if (mgr_nf_in_container(&mgr.nf_priv[id])) {
		rte_tel_data_add_dict_string(c, "container", mgr.nf_priv[id].ctr_name);
		rte_tel_data_add_dict_string(c, "standby_container",
					     mgr.nf_priv[id].sb_ctr_name);
	}
	rte_tel_data_add_dict_int(c, "standby_parked",
				  __atomic_load_n(&s->standby_parked, __ATOMIC_RELAXED));
	/* a protected chain's NF on its standby node, waiting for the takeover */
	rte_tel_data_add_dict_int(c, "remote_parked",
				  __atomic_load_n(&s->remote_park_ack, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_int(c, "standby_lcore",
				  s->standby_lcore == UINT32_MAX ? -1 : (int)s->standby_lcore);
	rte_tel_data_add_dict_uint(c, "standby_failures", s->standby_failures);
	rte_tel_data_add_dict_string(c, "standby_last_failure",
				     mgr.nf_priv[id].sb_last_failure);
	{
		uint64_t now = mgr_now_ns(), retry = mgr.nf_priv[id].sb_retry_ns;

		rte_tel_data_add_dict_uint(c, "standby_retry_in_ms",
					  retry > now ? (retry - now) / 1000000 : 0);
	}
	rte_tel_data_add_dict_uint(c, "failover_refused", s->failover_refused);
	rte_tel_data_add_dict_uint(c, "failovers", s->failovers);
	rte_tel_data_add_dict_uint(c, "failover_wake_ns", s->failover_wake_ns);
	rte_tel_data_add_dict_uint(c, "hung_kills", s->hung_kills);
	rte_tel_data_add_dict_uint(c, "failover_first_pkt_ns", s->failover_first_pkt_ns);
	rte_tel_data_add_dict_uint(c, "failover_wake_to_first_pkt_ns",
				  onvm_nf_failover_ns(s));
	rte_tel_data_add_dict_uint(c, "failover_reemitted", s->failover_reemitted);
	rte_tel_data_add_dict_uint(c, "failover_dropped", s->failover_dropped);
	rte_tel_data_add_dict_uint(c, "failover_reprocessed", s->failover_reprocessed);
	rte_tel_data_add_dict_uint(c, "crash_handoffs", s->crash_handoffs);
	rte_tel_data_add_dict_uint(c, "crash_handoff_ns", s->crash_handoff_ns);
	rte_tel_data_add_dict_uint(c, "crash_signal", s->crash_signal);
	rte_tel_data_add_dict_uint(c, "crash_armed",
				  __atomic_load_n(&s->crash_armed, __ATOMIC_RELAXED));
	/* Consistent-cut markers (remote chains) cross the NF's rings
	 * like packets but are not packets: enqueued, dequeued and tx
	 * count them, rx and the actions do not. */
	rte_tel_data_add_dict_uint(c, "markers", __atomic_load_n(&s->markers, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_uint(c, "cut_chunks", s->cut_chunks);
	rte_tel_data_add_dict_uint(c, "cut_failed", s->cut_failed);
	rte_tel_data_add_dict_uint(c, "bad_markers", s->bad_markers);
	rte_tel_data_add_dict_uint(c, "enqueued", UNITS_SUM(nf_enq[id]));
	rte_tel_data_add_dict_uint(c, "enqueue_drops", UNITS_SUM(nf_enq_drop[id]));
	rte_tel_data_add_dict_uint(c, "dequeued", UNITS_SUM(nf_deq[id]));
	rte_tel_data_add_dict_uint(c, "rx_ring_count", rte_ring_count(s->rx_ring));
	rte_tel_data_add_dict_uint(c, "tx_ring_count", rte_ring_count(s->tx_ring));
	rte_tel_data_add_dict_uint(c, "reclaimed", s->reclaimed);
	rte_tel_data_add_dict_uint(c, "first_pkt_ns", s->first_pkt_ns);
	if (s->first_pkt_ns != 0 && s->launch_ns != 0 && s->launched)
		rte_tel_data_add_dict_uint(c, "start_to_first_pkt_us",
					  (s->first_pkt_ns - s->launch_ns) / 1000);
	rte_tel_data_add_dict_uint(c, "register_ns", s->register_ns); /* CLOCK_MONOTONIC */
	if (s->register_ns != 0 && s->launch_ns != 0 && s->launched)
		rte_tel_data_add_dict_uint(c, "start_to_register_us",
					  (s->register_ns - s->launch_ns) / 1000);
}

/*
 * Every NF in one reply.  DPDK's telemetry reply is at most 16 KB (22.11:
 * an entry that does not fit is left out): about eight NFs.  For more, the
 * ids (/onvm/nf/ids) and one NF per command (/onvm/nf,ID): tools/onvm-exporter.
 */
static int
tel_nfs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct rte_tel_data *c;
		char key[16];

		if (mgr.shm->nfs[id].status == ONVM_NF_FREE)
			continue;
		c = rte_tel_data_alloc();
		if (c == NULL)
			return -ENOMEM;
		nf_dict(id, c);
		snprintf(key, sizeof(key), "%u", id);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	return 0;
}

/* The instance ids of the slots in use. */
static int
tel_nf_ids(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++)
		if (mgr.shm->nfs[id].status != ONVM_NF_FREE)
			rte_tel_data_add_array_int(d, id);
	return 0;
}

/* A command's parameter naming an NF slot in use: 0 and *id, -EINVAL (not a
 * slot) or -ENOENT (free). */
static int
instance_param(const char *params, uint16_t *id)
{
	char *end;
	unsigned long v;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	v = strtoul(params, &end, 10);
	if (*end != '\0' || v >= ONVM_MAX_NFS)
		return -EINVAL;
	if (mgr.shm->nfs[v].status == ONVM_NF_FREE)
		return -ENOENT;
	*id = (uint16_t)v;
	return 0;
}

/* One NF: /onvm/nf,ID (its /onvm/nfs entry). */
static int
tel_nf(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint16_t id;
	int ret = instance_param(params, &id);

	(void)cmd;
	if (ret < 0)
		return ret;
	nf_dict(id, d);
	return 0;
}

static int
tel_chains(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint16_t i = 0; i < ONVM_MAX_CHAINS; i++) {
		const struct onvm_chain *ch = &mgr.shm->chains[i];
		struct rte_tel_data *c;

		if (!ch->used)
			continue;
		c = rte_tel_data_alloc();
		if (c == NULL)
			return -ENOMEM;
		rte_tel_data_start_array(c, RTE_TEL_INT_VAL);
		for (uint16_t k = 0; k < ch->len; k++)
			rte_tel_data_add_array_int(c, ch->services[k]);
		/* Exit encoded as -1 - port, or -1000 for drop: arrays hold one type. */
		rte_tel_data_add_array_int(c, ch->exit_drop ? -1000 : -1 - (int)ch->exit_port);
		rte_tel_data_add_dict_container(d, ch->name, c, 0);
	}
	return 0;
}

static int
tel_rings(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		const struct onvm_nf_slot *s = &mgr.shm->nfs[id];

		if (s->status == ONVM_NF_FREE)
			continue;
		rte_tel_data_add_dict_uint(d, s->rx_ring->name, rte_ring_count(s->rx_ring));
		rte_tel_data_add_dict_uint(d, s->tx_ring->name, rte_ring_count(s->tx_ring));
	}
	for (uint16_t p = 0; p < mgr.nb_ports; p++) {
		const struct rte_ring *r = mgr.shm->ports[p].tx_ring;

		rte_tel_data_add_dict_uint(d, r->name, rte_ring_count(r));
	}
	return 0;
}

static int
tel_drops(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (int r = 0; r < MGR_DROP_REASON_MAX; r++)
		rte_tel_data_add_dict_uint(d, mgr_drop_reason_str(r), UNITS_SUM(drops[r]));
	return 0;
}

static int
tel_rules(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
	for (uint16_t i = 0; i < mgr.shm->nb_rules; i++)
		rte_tel_data_add_array_uint(d, mgr.shm->rules[i].hits);
	return 0;
}

/* Each data lcore's longest pass over its units (us), by lcore id. */
static int
tel_lcores(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int lc;
	char key[16];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	RTE_LCORE_FOREACH(lc) {
		snprintf(key, sizeof(key), "%u", lc);
		rte_tel_data_add_dict_uint(d, key, cycles_to_ns(mgr.lcore_stats[lc].pass_max) / 1000);
	}
	return 0;
}

/* Start measuring every port's longest TX pause and every lcore's longest
 * pass afresh (benchmarks, tests). */
static int
tel_gap_reset(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	unsigned int lc;

	for (uint16_t p = 0; p < mgr.nb_ports; p++)
		__atomic_store_n(&mgr.port_stats[p].tx_gap_reset, 1, __ATOMIC_RELEASE);
	RTE_LCORE_FOREACH(lc)
		__atomic_store_n(&mgr.lcore_stats[lc].gap_reset, 1, __ATOMIC_RELEASE);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "ports", mgr.nb_ports);
	return 0;
}

/* An NF's published counters, read under its sequence lock. */
static int
tel_nf_app(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct onvm_nf_app_stats copy;
	const struct onvm_nf_slot *s;
	uint16_t id;
	int ret = instance_param(params, &id);

	(void)cmd;
	if (ret < 0)
		return ret;
	s = &mgr.shm->nfs[id];
	if (onvm_seq_read(&s->app.seq, &copy, &s->app, sizeof(copy), 1000) < 0)
		return -EBUSY;
	rte_tel_data_start_dict(d);
	for (uint32_t i = 0; i < copy.n && i < ONVM_NF_APP_STATS; i++) {
		copy.name[i][ONVM_NF_APP_STAT_NAME - 1] = '\0';
		rte_tel_data_add_dict_uint(d, copy.name[i], copy.value[i]);
	}
	return 0;
}

int
mgr_telemetry_init(void)
{
	static const struct {
		const char *cmd;
		telemetry_cb cb;
		const char *help;
	} cmds[] = {
		{"/onvm/info", tel_info, "Node summary. No parameters."},
		{"/onvm/pool", tel_pool, "Packet pool size and use. No parameters."},
		{"/onvm/ports", tel_ports, "Per-port counters and parse errors. No parameters."},
		{"/onvm/ports/gap_reset", tel_gap_reset,
		 "Restart every port's tx_gap_max_us and every lcore's longest pass."},
		{"/onvm/lcores", tel_lcores,
		 "Each data lcore's longest pass over its units in us (naps excluded)."},
		{"/onvm/nfs", tel_nfs,
		 "Per-NF state and counters (at most ~8 NFs fit a reply: see /onvm/nf)."},
		{"/onvm/nf/ids", tel_nf_ids, "Instance ids of the NFs. No parameters."},
		{"/onvm/nf", tel_nf, "One NF's state and counters. Parameter: instance id."},
		{"/onvm/chains", tel_chains,
		 "Chains: services then exit (-1-port, or -1000 for drop). No parameters."},
		{"/onvm/rings", tel_rings, "Ring occupancy. No parameters."},
		{"/onvm/drops", tel_drops, "Drops by reason. No parameters."},
		{"/onvm/rules", tel_rules, "Flow rule hit counts, in rule order. No parameters."},
		{"/onvm/nf/app", tel_nf_app,
		 "Counters an NF publishes (e.g. dpi's protocols). Parameter: instance id."},
	};

	for (size_t i = 0; i < RTE_DIM(cmds); i++)
		if (mgr_tel_register(cmds[i].cmd, cmds[i].cb, cmds[i].help) != 0) {
			MGR_LOG(ERR, "cannot register telemetry command %s", cmds[i].cmd);
			return -1;
		}
	return 0;
}
