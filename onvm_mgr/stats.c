/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * stats.c -- periodic console statistics: rates since the last print and
 * totals, per port, per NF, and drops by reason.  Printed from the main
 * lcore's housekeeping, never from a data unit.
 */
#include <stdio.h>

#include "mgr.h"

static struct {
	uint64_t port_rx[ONVM_MAX_PORTS], port_tx[ONVM_MAX_PORTS];
	uint64_t nf_rx[ONVM_MAX_NFS], nf_tx[ONVM_MAX_NFS];
} last;

static double
rate(uint64_t now, uint64_t *prev, double s)
{
	double r = s > 0 ? (double)(now - *prev) / s : 0;

	*prev = now;
	return r;
}

void
mgr_stats_print(double s)
{
	uint64_t drops = 0;

	printf("\n--- %s: ports ------------------------------------------------------\n",
	       mgr.cfg.node_name);
	for (uint16_t p = 0; p < mgr.nb_ports; p++) {
		const struct mgr_port_stats *ps = &mgr.port_stats[p];
		uint64_t bad = 0;

		for (int r = ONVM_PARSE_TRUNC_L3; r < ONVM_PARSE_REASON_MAX; r++)
			bad += ps->parse[r];
		bad += ps->parse[ONVM_PARSE_TRUNC_L2];
		printf("port %u %-10s rx %10" PRIu64 " (%9.0f pps) tx %10" PRIu64
		       " (%9.0f pps) tx_drop %" PRIu64 " non_ip %" PRIu64 " malformed %" PRIu64
		       "\n",
		       p, mgr.shm->ports[p].name, ps->rx, rate(ps->rx, &last.port_rx[p], s), ps->tx,
		       rate(ps->tx, &last.port_tx[p], s), ps->tx_drop,
		       ps->parse[ONVM_PARSE_NOT_IPV4], bad);
	}
	printf("--- NFs -----------------------------------------------------------------\n");
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		const struct onvm_nf_slot *sl = &mgr.shm->nfs[id];
		uint64_t enq_drop;

		if (sl->status == ONVM_NF_FREE)
			continue;
		enq_drop = UNITS_SUM(nf_enq_drop[id]);
		printf("nf %2u %-14s svc %2u %-8s rx %10" PRIu64 " (%9.0f pps) tx %10" PRIu64
		       " drop %" PRIu64 " ring_full %" PRIu64 " q %u/%u\n",
		       id, sl->name, sl->service_id, mgr_nf_status_str(sl->status), sl->stats.rx,
		       rate(sl->stats.rx, &last.nf_rx[id], s), sl->stats.tx, sl->stats.act_drop,
		       enq_drop, rte_ring_count(sl->rx_ring), rte_ring_count(sl->tx_ring));
		if (sl->failovers > 0 || sl->standby_pid != 0)
			printf("      standby %s, failovers %" PRIu64 " (last: woke -> first packet "
			       "%.1f us; re-emitted %" PRIu64 ", dropped %" PRIu64 "), hung kills %" PRIu64
			       "\n",
			       sl->standby_parked ? "parked" : sl->standby_pid ? "starting" : "none",
			       sl->failovers,
			       (double)onvm_nf_failover_ns(sl) / 1e3,
			       sl->failover_reemitted, sl->failover_dropped, sl->hung_kills);
	}
	mgr_bfd_stats_print();
	printf("--- drops:");
	for (int r = 0; r < MGR_DROP_REASON_MAX; r++) {
		uint64_t v = UNITS_SUM(drops[r]);

		drops += v;
		if (v != 0)
			printf(" %s=%" PRIu64, mgr_drop_reason_str(r), v);
	}
	printf(" (total %" PRIu64 ")  pool in use %u/%u  nf deaths %" PRIu64 " failovers %" PRIu64
	       " hung %" PRIu64 "\n",
	       drops, rte_mempool_in_use_count(mgr.pool), mgr.pool->size, mgr.nf_deaths,
	       mgr.nf_failovers, mgr.nf_hung);
	fflush(stdout);
}
